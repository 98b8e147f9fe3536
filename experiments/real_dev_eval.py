"""Stage 2 on real language: does the agent verify the real help-site texts that work on the OnePlus phone?

    python -m experiments.real_dev_eval [--dev DIR] [--tasks dA01,dA02] [--no-ablations] [--verbose]
    python -m experiments.real_dev_eval --chain [--out DIR]      # the whole chain on the plain rendering

Input: ``../shared/real-dev/`` (20 tasks, 185 real instruction texts from real help sites, labelled by
reading them on the real OnePlus Settings app; see its README). Each text's steps are fed to the agent as
a page would hand them on: its labelled instruction sentences (``steps``), or all its ``sentences`` when
it has none. The labels (``works_on_device``) are read here only, to score; the agent and the judge see
the steps, the query and the device, nothing else.

Every text runs through the real agent (``run_episode``, heuristic predictor) on
``sim:imported/oneplus-settings-android11`` and the heuristic judge, as in
``experiments/verification_eval.py`` (whose measuring code this reuses). Reported per system: judge
recall and precision of F4 = 1 on working texts, overall and per task; the gap to the oracle closed on
P@1 and NDCG@5 (original order = the seeded shuffle of ``render_plain.py``); where each missed working
text went; mean F4 on non-working texts; deviations by kind.

``--chain`` measures the whole product instead: ``render_plain.py`` of the real-dev folder writes one
plain ``<ol>`` page per text, a real HTTP server on 127.0.0.1 serves them, and the pipeline's own stages
(search, fetch, extract, execute on ``sim:WORLD``, features, rerank with the bundled ranker) run over them
as ``verirank run`` would. The figures then come from ``execution.jsonl`` (F4) and ``reranked.jsonl``.

Results: ``experiments/results/real_dev_eval.md`` / ``.json`` (``real_dev_chain.*`` with ``--chain``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from pathlib import Path
from typing import Any, Optional

from experiments.common import add_output_args
from experiments.verification_eval import _f, run_systems, summarise

ROOT = Path(__file__).resolve().parent.parent
DEV_DIR = Path(os.environ.get("VERIRANK_SHARED", ROOT.parent / "shared")) / "real-dev"
RESULTS_DIR = ROOT / "experiments" / "results"
NAME = "real_dev_eval"
WORLD = "imported/oneplus-settings-android11"
TARGETS = {"recall": 0.85, "precision": 0.95, "gap_P@1": 0.90, "gap_NDCG@5": 0.90}
#: system -> the agent settings it turns off (``execution.agent``; the judge follows ``use_knowledge``)
SYSTEMS: dict[str, dict[str, bool]] = {
    "full": {},
    "no_cards": {"use_knowledge": False},
    "no_reflection": {"use_reflection": False},
    "no_lookahead": {"use_lookahead": False},
    "no_dry_run": {"use_dry_run": False},
}


def make_system(config: Any, **off: bool) -> tuple[Any, Any]:
    """The heuristic predictor and judge with some of the agent's abilities turned off."""
    from execution.judge import HeuristicJudge
    from execution.predict.heuristic import HeuristicPredictor

    agent = config.execution.agent.model_copy(update=off, deep=True)
    if not agent.use_knowledge:  # no cards for the judge either
        agent.judge = agent.judge.model_copy(update={"use_knowledge": False})
    return HeuristicPredictor.from_config(agent.heuristic, agent=agent), HeuristicJudge.from_config(agent)


def load_pages(dev: Path, only: Optional[set[str]] = None) -> list[dict[str, Any]]:
    """One row per text in the SERP order of ``render_plain.py`` (a seeded shuffle per task)."""
    tasks = [json.loads(line) for line in (dev / "tasks.jsonl").read_text("utf-8").splitlines() if line.strip()]
    texts = [json.loads(line) for line in (dev / "pages.jsonl").read_text("utf-8").splitlines() if line.strip()]
    pages: list[dict[str, Any]] = []
    for task in tasks:
        if only and task["qid"] not in only:
            continue
        mine = [p for p in texts if p["qid"] == task["qid"]]
        random.Random(f"real-dev-{task['qid']}").shuffle(mine)
        for rank, p in enumerate(mine, 1):
            pages.append({"qid": task["qid"], "query": task["query"], "doc": p["pid"], "rank": rank,
                          "kind": p["variant"], "works": bool(p["works_on_device"]),
                          "steps": list(p["steps"] or p["sentences"])})
    return pages


# --- the whole chain ------------------------------------------------------------------------------


def render_structure(dev: Path, site: Path, structure: str) -> None:
    """Like ``render_plain.py``, in one of stage 1's page structures (``benchmarks/real_dev_pages.py``).

    Pages show a text's sentences in ``structure`` with a real site's furniture; a text the structure
    does not fit (a breadcrumb page needs a menu path) is left out. The SERP keeps the seeded order.
    """
    from benchmarks.real_dev_pages import applies, load_texts, render

    texts = load_texts(dev)
    by_pid = {t.pid: t for t in texts}
    labels = {json.loads(line)["pid"]: json.loads(line) for line in (dev / "pages.jsonl").read_text("utf-8").splitlines()}
    tasks = [json.loads(line) for line in (dev / "tasks.jsonl").read_text("utf-8").splitlines() if line.strip()]
    (site / "site").mkdir(parents=True, exist_ok=True)
    queries, serp, rows = [], [], []
    for task in tasks:
        queries.append(json.dumps({k: task[k] for k in ("qid", "query", "app", "device")}))
        page = load_pages(dev, {task["qid"]})
        rank = 0
        for p in page:
            text = by_pid[p["doc"]]
            if not applies(text, structure):
                continue
            rank += 1
            name = p["doc"].split("-", 1)[1]
            (site / "site" / task["qid"]).mkdir(exist_ok=True)
            (site / "site" / task["qid"] / f"{name}.html").write_text(render(text, structure, texts).html, "utf-8")
            url = f"http://127.0.0.1:PORT/{task['qid']}/{name}.html"
            serp.append(json.dumps({"qid": task["qid"], "rank": rank, "url": url, "title": task["query"],
                                    "snippet": " ".join(text.sentences)[:150]}))
            rows.append(json.dumps({"qid": task["qid"], "url": url, "style": structure,
                                    "works_on_device": labels[p["doc"]]["works_on_device"]}))
    (site / "queries.jsonl").write_text("\n".join(queries) + "\n", "utf-8")
    (site / "serp.jsonl").write_text("\n".join(serp) + "\n", "utf-8")
    (site / "labels.jsonl").write_text("\n".join(rows) + "\n", "utf-8")


def run_chain(dev: Path, out: Path, config: Any, only: Optional[set[str]] = None,
              structure: str = "plain") -> list[dict[str, Any]]:
    """Render, serve and run the pipeline's stages; one row per text (as ``run_pages`` gives).

    ``structure`` is ``plain`` (``render_plain.py``, the headline) or one of ``STRUCTURES``."""
    import subprocess
    import sys

    from extraction.localsite import serve_folder
    from verirank.commands.pipeline import pipeline_stages
    from verirank.commands._common import progress
    from verirank_core.execution_records import ExecutionResult
    from verirank_core.extraction_records import Extraction
    from verirank_core.ranking_records import RankedItem
    from verirank_core.stages import run_stages
    from verirank_core.store import RunDir, read_jsonl

    site = out / "rendered"
    if structure == "plain":
        subprocess.run([sys.executable, str(dev / "render_plain.py"), str(site)], check=True, capture_output=True)
    else:
        render_structure(dev, site, structure)
    labels = {(r["qid"], r["url"]): r for r in map(json.loads, (site / "labels.jsonl").read_text("utf-8").splitlines())}
    cfg = config.model_copy(deep=True)
    cfg.extraction.fetch.allow_private_hosts = True
    cfg.execution.devices = [f"sim:{WORLD}"]
    run = RunDir(out / "run").ensure()
    with serve_folder(site / "site") as base:
        port = base.rsplit(":", 1)[1]
        serp = out / "serp.jsonl"
        kept = [line.replace("PORT", port, 1) for line in (site / "serp.jsonl").read_text("utf-8").splitlines()
                if not only or json.loads(line)["qid"] in only]
        serp.write_text("\n".join(kept) + "\n", encoding="utf-8")
        run_stages(run, cfg, pipeline_stages(site / "queries.jsonl", serp), pipeline="real_dev_chain",
                   progress=progress, echo=lambda line: None)
    extraction = {(e.qid, e.url): e for e in read_jsonl(run.path / "extraction.jsonl", Extraction)}
    execution = {(e.qid, e.url): e for e in read_jsonl(run.path / "execution.jsonl", ExecutionResult)}
    reranked = {(r.qid, r.url): r for r in read_jsonl(run.path / "reranked.jsonl", RankedItem)}
    rows = []
    for line in kept:
        hit = json.loads(line)
        key = (hit["qid"], hit["url"])
        label = labels[(hit["qid"], hit["url"].replace(port, "PORT", 1))]
        ex, done, ranked = extraction.get(key), execution.get(key), reranked.get(key)
        stop = done.stop_reason.value if done and done.stop_reason else (done.status.value if done else "missing")
        if ex is not None and ex.status.value != "ok":
            stop = f"stage 1: {ex.status.value}"
        rows.append({"qid": hit["qid"], "doc": hit["url"].rsplit("/", 1)[1].removesuffix(".html"),
                     "rank": hit["rank"], "kind": structure, "works": bool(label["works_on_device"]),
                     "f4": float(done.f4) if done else 0.0, "stop": stop, "detail": (done.reason if done else "")[:200],
                     "deviations": dict(done.deviation_kinds) if done else {},
                     "n_actions": done.n_actions if done else 0, "terminal": "",
                     "reranked": ranked.rank if ranked else None})
    return rows


def product_gap(rows: list[dict[str, Any]]) -> dict[str, Optional[float]]:
    """Gap to the oracle closed by the product's own reranked list (``reranked.jsonl``)."""
    from ranking.metrics import evaluate, oracle_run

    qrels: dict[str, dict[str, int]] = {}
    original: dict[str, dict[str, float]] = {}
    product: dict[str, dict[str, float]] = {}
    for r in rows:
        qrels.setdefault(r["qid"], {})[r["doc"]] = int(r["works"])
        original.setdefault(r["qid"], {})[r["doc"]] = -float(r["rank"])
        product.setdefault(r["qid"], {})[r["doc"]] = -float(r["reranked"] or 10_000 + r["rank"])
    metrics = ("P@1", "NDCG@5")
    res = {name: evaluate(run, qrels, metrics).mean
           for name, run in (("original", original), ("product", product), ("oracle", oracle_run(qrels)))}
    gaps: dict[str, Optional[float]] = {}
    for m in metrics:
        span = res["oracle"][m] - res["original"][m]
        gaps[m] = (res["product"][m] - res["original"][m]) / span if span > 0 else None
    return gaps


def per_task(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        b = out.setdefault(r["qid"], {"texts": 0, "working": 0, "verified": 0, "true_verified": 0})
        b["texts"] += 1
        b["working"] += int(r["works"])
        b["verified"] += int(r["f4"] >= 1.0)
        b["true_verified"] += int(r["f4"] >= 1.0 and r["works"])
    return out


def markdown(summaries: dict[str, dict[str, Any]], rows: dict[str, list[dict[str, Any]]], facts: dict[str, Any]) -> str:
    full = summaries.get("full") or next(iter(summaries.values()))
    lines = [
        "# Stage 2 on real help-site texts (`../shared/real-dev/`, OnePlus world)", "",
        f"{full['pages']} real texts for {facts['tasks']} tasks on `sim:{WORLD}`; {full['working']} work on the "
        "device (labelled by reading them on the real app). Steps: each text's labelled instruction sentences. "
        "Agent: heuristic predictor; judge: heuristic. Verified = F4 = 1.", "",
        f"Code: {facts['git_sha']} ({facts['date']}); command: `python -m experiments.real_dev_eval`.", "",
        "| measure | value | target |", "|---|---:|---:|",
        f"| judge recall on working texts | {_f(full['recall'])} ({full['true_verified']}/{full['working']}) "
        f"| ≥ {TARGETS['recall']} |",
        f"| judge precision | {_f(full['precision'])} ({full['true_verified']}/{full['verified']}) "
        f"| ≥ {TARGETS['precision']} |",
        f"| gap to oracle closed, P@1 | {_f(full['gap_closed']['P@1'])} | ≥ {TARGETS['gap_P@1']} |",
        f"| gap to oracle closed, NDCG@5 | {_f(full['gap_closed']['NDCG@5'])} | ≥ {TARGETS['gap_NDCG@5']} |",
        f"| mean F4 on non-working texts | {_f(full['mean_f4_broken'])} | does not rise |", "",
        "Missed working texts by stop: " + (", ".join(f"{k} {v}" for k, v in full["missed_working"].items())
                                           or "none") + ".", "",
        "False verifications: " + (", ".join(full["false_verified"]) or "none") + ".", "",
        "## Ablations", "",
        "| system | recall | precision | mean F4 non-working | gap P@1 | gap NDCG@5 | deviations |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, s in summaries.items():
        devs = ", ".join(f"{k} {v}" for k, v in s["deviations"].items()) or "none"
        lines.append(f"| {name} | {_f(s['recall'])} | {_f(s['precision'])} | {_f(s['mean_f4_broken'])} | "
                     f"{_f(s['gap_closed']['P@1'])} | {_f(s['gap_closed']['NDCG@5'])} | {devs} |")
    lines += ["", "## Per task (full system)", "", "| task | texts | working | verified | of them working |",
              "|---|---:|---:|---:|---:|"]
    for qid, b in sorted(per_task(rows.get("full") or next(iter(rows.values()))).items()):
        lines.append(f"| {qid} | {b['texts']} | {b['working']} | {b['verified']} | {b['true_verified']} |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.real_dev_eval", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dev", type=Path, default=DEV_DIR, help="the real-dev folder (default ../shared/real-dev)")
    ap.add_argument("--tasks", default="", help="comma-separated qids (default: all 20)")
    ap.add_argument("--no-ablations", action="store_true", help="run only the full system")
    ap.add_argument("--verbose", action="store_true", help="print every text whose verdict disagrees with its label")
    ap.add_argument("--chain", action="store_true",
                    help="run the whole pipeline on the plain rendering (render_plain.py) instead of stage 2 alone")
    ap.add_argument("--structure", default="plain",
                    help="with --chain: plain (render_plain.py, the headline) or a page structure of "
                         "benchmarks/real_dev_pages.py (ol, paragraph, step_headings, table, accordion, ...)")
    ap.add_argument("--out", type=Path, default=None,
                    help="working folder of --chain (default: a fresh folder under runs/experiments/real-dev)")
    add_output_args(ap, RESULTS_DIR, NAME)
    args = ap.parse_args(argv)


    from verirank.commands._common import resolve_config, setup_env
    from verirank_core.store import atomic_write_json, atomic_write_text, git_sha

    setup_env()
    config = resolve_config(args.config, args.sets)
    only = {q.strip() for q in args.tasks.split(",") if q.strip()} or None
    pages = load_pages(args.dev, only)
    if args.chain:
        return _main_chain(args, config, pages, only)
    systems = {"full": SYSTEMS["full"]} if args.no_ablations else SYSTEMS
    summaries, rows_by_system = run_systems(config, pages, WORLD, systems, make_system, unit="text")
    facts = {"world": WORLD, "tasks": len({p["qid"] for p in pages}), "git_sha": git_sha(),
             "date": time.strftime("%Y-%m-%d"), "systems": systems}
    if args.verbose:
        _print_disagreements(rows_by_system["full"], pages)
    args.results.mkdir(parents=True, exist_ok=True)
    md = markdown(summaries, rows_by_system, facts)
    atomic_write_text(args.results / f"{args.name}.md", md)
    atomic_write_json(args.results / f"{args.name}.json",
                      {"facts": facts, "summaries": summaries, "pages": rows_by_system})
    print(md)
    return 0


def _print_disagreements(rows: list[dict[str, Any]], pages: list[dict[str, Any]]) -> None:
    steps = {p["doc"]: p["steps"] for p in pages}
    for r in rows:
        if r["works"] != (r["f4"] >= 1.0):
            print(f"--- {r['doc']} works={r['works']} f4={r['f4']:.2f} stop={r['stop']} {r['detail']}")
            for s in steps.get(r["doc"], []):
                print("   |", s)


def _main_chain(args: argparse.Namespace, config: Any, pages: list[dict[str, Any]], only: Optional[set[str]]) -> int:
    from verirank_core.store import atomic_write_json, atomic_write_text, git_sha

    out = args.out or ROOT / "runs" / "experiments" / "real-dev" / time.strftime("chain-%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    rows = run_chain(args.dev, out, config, only, args.structure)
    for r in rows:  # the pid, as stage 2 alone names it
        r["doc"] = f"{r['qid']}-{r['doc']}"
    summary = summarise(rows)
    summary["product_gap_closed"] = product_gap(rows)
    facts = {"world": WORLD, "tasks": len({r["qid"] for r in rows}), "git_sha": git_sha(),
             "date": time.strftime("%Y-%m-%d"), "systems": {"chain": "verirank run on render_plain.py"},
             "run": str(out)}
    if args.verbose:
        _print_disagreements(rows, pages)
    name = args.name if args.name != NAME else "real_dev_chain" + ("" if args.structure == "plain" else
                                                                     f"-{args.structure}")
    md = markdown({"chain": summary}, {"chain": rows}, facts).replace(
        "Steps: each text's labelled instruction sentences.",
        "Whole chain: each text rendered as a page "
        + ("of one `<li>` per labelled step (`render_plain.py`)" if args.structure == "plain" else
           f"of structure `{args.structure}` (its sentences, `benchmarks/real_dev_pages.py`)")
        + ", fetched, extracted and executed by the pipeline.")
    gaps = summary["product_gap_closed"]
    md += (f"\nThe product's reranked list (bundled ranker, `reranked.jsonl`) closes {_f(gaps['P@1'])} of the gap on "
           f"P@1 and {_f(gaps['NDCG@5'])} on NDCG@5.\n")
    args.results.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.results / f"{name}.md", md)
    atomic_write_json(args.results / f"{name}.json", {"facts": facts, "summaries": {"chain": summary}, "pages": rows})
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
