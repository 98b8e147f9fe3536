"""Judge agreement: does "F4 = 1" (or F4 >= a threshold) agree with the qrels on executed pages?

    python -m experiments.judge_agreement [--small] [--out DIR]

Runs (or reuses) the pipeline over the benchmark up to execution. For every
executed page the judge's verdict "complete" (F4 >= t) is compared with the
qrels label (relevant = replaying the page's steps reaches the task goal). The
qrels are used here for evaluation only. Reported per threshold: agreement
(accuracy), precision and recall of "complete" for "relevant", Cohen's kappa,
and the confusion counts; a PNG plots agreement, precision and recall against
the threshold. The issue's target: agreement >= 95% at F4 = 1.

Pages never executed (no steps extracted) are not judged; their share is
reported, and an "all pages" row counts them as "not complete".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from experiments.common import (
    base_parser, bench_qrels, ensure_bench, entry_point, fmt, md_table, pipeline_config, prepare, run_facts,
    run_pipeline, tracked, write_result,
)

NAME = "judge_agreement"
#: thresholds of the table: F4 = 1, then looser ones; "> 0" is the verified rule's default
THRESHOLDS: tuple[tuple[str, float, bool], ...] = (
    ("F4 = 1", 1.0, False), ("F4 >= 0.75", 0.75, False), ("F4 >= 0.5", 0.5, False), ("F4 > 0", 0.0, True),
)
TARGET = 0.95


def agreement(pred: Sequence[bool], truth: Sequence[bool]) -> dict[str, Any]:
    """Accuracy, precision, recall, Cohen's kappa and confusion counts of boolean predictions."""
    p, t = np.asarray(pred, dtype=bool), np.asarray(truth, dtype=bool)
    n = len(p)
    tp, fp = int(np.sum(p & t)), int(np.sum(p & ~t))
    fn, tn = int(np.sum(~p & t)), int(np.sum(~p & ~t))
    acc = (tp + tn) / n if n else None
    expected = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n) if n else None
    kappa = None
    if n and expected is not None and abs(1 - expected) > 1e-12:
        kappa = (acc - expected) / (1 - expected)
    return {"n": n, "tp": tp, "fp": fp, "fn": fn, "tn": tn, "agreement": acc,
            "precision": tp / (tp + fp) if tp + fp else None, "recall": tp / (tp + fn) if tp + fn else None,
            "kappa": kappa}


def complete(f4: np.ndarray, threshold: float, strict: bool) -> np.ndarray:
    return f4 > threshold if strict else f4 >= threshold


def judged_pages(run_dir: Path, qrels: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(F4, executed, relevant) for every page of the run's execution.jsonl."""
    from verirank_core.execution_records import ExecutionResult
    from ranking.verified import facts_from_execution
    from verirank_core.store import read_jsonl

    f4, executed, relevant = [], [], []
    for rec in read_jsonl(run_dir / "execution.jsonl", ExecutionResult):
        facts = facts_from_execution(rec)
        f4.append(facts.f4)
        executed.append(facts.executed)
        relevant.append(qrels.get(rec.qid, {}).get(rec.url, 0) > 0)
    return np.asarray(f4, dtype=float), np.asarray(executed, dtype=bool), np.asarray(relevant, dtype=bool)


def curve_png(f4: np.ndarray, truth: np.ndarray, path: Path) -> list[dict[str, Any]]:
    """Agreement, precision and recall of "F4 >= t" for t in 0.05..1; writes the PNG, returns the points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = []
    for t in np.round(np.arange(0.05, 1.0001, 0.05), 2):
        a = agreement(complete(f4, float(t), False), truth)
        points.append({"threshold": float(t), **{k: a[k] for k in ("agreement", "precision", "recall")}})
    fig, ax = plt.subplots(figsize=(6, 3.6))
    xs = [p["threshold"] for p in points]
    for key, style in (("agreement", "-o"), ("precision", "--s"), ("recall", ":^")):
        ax.plot(xs, [np.nan if p[key] is None else p[key] for p in points], style, label=key, markersize=3)
    ax.axhline(TARGET, color="grey", linewidth=0.8, linestyle="--")
    ax.set_xlabel("threshold t (judge says complete when F4 >= t)")
    ax.set_ylim(0, 1.02)
    ax.set_title("Judge vs qrels on executed pages")
    ax.legend(loc="lower left")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return points


def run(argv: Optional[list[str]] = None) -> dict[str, Any]:
    args = base_parser("python -m experiments.judge_agreement", __doc__.split("\n\n")[0]).parse_args(argv)
    setup = prepare(args)
    bench = ensure_bench(setup)
    config = pipeline_config(setup.config, bench, args.devices)
    run_pipeline(bench, setup.run_dir, config)
    f4, executed, relevant = judged_pages(setup.run_dir, bench_qrels(bench))

    rows, table = {}, []
    for title, threshold, strict in THRESHOLDS:
        a = agreement(complete(f4[executed], threshold, strict), relevant[executed])
        rows[title] = a
        table.append([title, a["n"], fmt(a["agreement"]), fmt(a["precision"]), fmt(a["recall"]),
                      fmt(a["kappa"]), a["tp"], a["fp"], a["fn"], a["tn"]])
    everything = agreement(complete(f4, 1.0, False) & executed, relevant)
    table.append(["F4 = 1, all pages (not executed = not complete)", everything["n"],
                  fmt(everything["agreement"]), fmt(everything["precision"]), fmt(everything["recall"]),
                  fmt(everything["kappa"]), everything["tp"], everything["fp"], everything["fn"], everything["tn"]])
    png = setup.results / f"{setup.result_name(NAME)}.png"
    points = curve_png(f4[executed], relevant[executed], png)
    headline = rows["F4 = 1"]["agreement"]
    facts = run_facts(setup, bench)
    missed = int(np.sum(relevant & ~executed))
    markdown = "\n".join([
        f"# Judge agreement with the qrels ({facts['benchmark']['name']})",
        "",
        f"Judge `{facts['judge']}`, predictor `{facts['predictor']}`. {int(executed.sum())} of {len(f4)} pages "
        f"were executed ({int(relevant[executed].sum())} of them relevant); {missed} relevant pages were never "
        "executed (no steps extracted) and are outside the judge's reach.",
        "",
        md_table(["Judge says complete when", "Pages", "Agreement", "Precision", "Recall", "Kappa",
                  "TP", "FP", "FN", "TN"], table),
        f"**Agreement at F4 = 1: {fmt(headline)}** (target >= {TARGET}: "
        f"{'met' if headline is not None and headline >= TARGET else 'not met'}).",
        "",
        f"![agreement vs threshold]({png.name})",
        "",
        f"Code: {facts['code']}; {facts['date']}.",
        "",
    ])
    data = {"experiment": NAME, "size": setup.size, **facts, "thresholds": rows, "all_pages_f4_1": everything,
            "curve": points, "executed": int(executed.sum()), "pages": len(f4),
            "relevant_not_executed": missed, "target": TARGET, "png": str(png)}
    with tracked(setup, NAME) as tracker:
        tracker.metrics({"agreement_f4_1": headline, "kappa_f4_1": rows["F4 = 1"]["kappa"],
                         "agreement_f4_gt_0": rows["F4 > 0"]["agreement"]})
        paths = write_result(setup, NAME, markdown, {**data, "mlflow_run_id": tracker.run_id})
        tracker.artifacts([*paths.values(), png])
    return {**data, "paths": paths}


main = entry_point(run)

if __name__ == "__main__":
    raise SystemExit(main())
