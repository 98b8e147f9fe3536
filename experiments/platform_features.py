"""Issue 22: does the page's stated platform and maker help the ranker on real language?

    python -m experiments.platform_features [--run DIR] [--out DIR] [--tasks dA01,...]
                                            [--models lr,lambdamart] [--folds 5] [--seeds 0,1,2]

Input: the whole chain on ``../shared/real-dev/`` (``experiments/real_dev_eval.py --chain``: the plain
rendering served on 127.0.0.1, then search, fetch, extract, execute and features). ``--run DIR`` reuses the
working folder of an earlier ``real_dev_eval --chain --out DIR`` (or of this script); otherwise the chain
runs once into ``--out``. The chain's ``features.parquet`` (the default set, F1-F18) is kept as it is;
``platform_match`` and ``device_match`` are added per page by ``ranking.features.platform_features`` from
the same ``extraction.jsonl``, so both settings share every other column to the bit.

Each learned ranker is trained and tested with leave-queries-out cross-validation (``--folds`` folds of
whole queries; each ``--seeds`` value draws the folds and seeds the model; per-query metrics are averaged
over the seeds), with the default features and with default + platform_match + device_match. A second pair
uses only the features known before execution (F1-F3, F5-F8), where the platform evidence is not drowned
by F4. Both rankings are reported: plain score order and the product's ``verified-first``. Metrics: P@1,
NDCG@5, MRR (``ranking.metrics`` has no MAP), the gap to the oracle closed, and the paired tests of
``ranking.significance.compare`` (with vs without the platform features, paired by query).

The qrels (``works_on_device``) and the texts' labelled ``platform`` are read only to score and to describe
the pages, never as features.

Results: ``experiments/results/platform_features.md`` / ``.json``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from experiments.common import add_output_args
from experiments.real_dev_eval import DEV_DIR, RESULTS_DIR, ROOT

NAME = "platform_features"
PLATFORM = ("platform_match", "device_match")
#: diagnostic, not a product feature: platform_match with the platform named by the extracted steps alone
STEPS_PLATFORM = "steps_platform_match"
#: the features a page has before it is executed (query/page text and action terms)
TEXT_ONLY = ("F1", "F2", "F3", "F5", "F6", "F7", "F8")
METRICS = ("P@1", "NDCG@5", "MRR")
ORDERS = ("score", "verified-first")
DEFAULT_MODELS = ("lr", "lambdamart")

Qrels = Mapping[str, Mapping[str, int]]


def feature_sets(default: Sequence[str]) -> dict[str, list[str]]:
    """The compared column lists: each base set without and with the platform features."""
    base = [f for f in default if f not in PLATFORM]
    text = [f for f in base if f in TEXT_ONLY]
    return {"default": base, "default + platform": base + list(PLATFORM),
            "default + steps platform": base + [STEPS_PLATFORM],
            "text only": text, "text only + platform": text + list(PLATFORM),
            "text only + steps platform": text + [STEPS_PLATFORM]}


#: (without, with) pairs that the significance tests compare
PAIRS = (("default", "default + platform"), ("default", "default + steps platform"),
         ("text only", "text only + platform"), ("text only", "text only + steps platform"))


# --- the table --------------------------------------------------------------------------------------


def doc_id(qid: str, url: str) -> str:
    """The real-dev pid of a rendered page (``.../dA01/t03.html`` -> ``dA01-t03``), as in qrels.txt."""
    return f"{qid}-{url.rsplit('/', 1)[1].removesuffix('.html')}"


def chain_table(run_dir: Path, config: Any, qrels: Qrels) -> Any:
    """The chain's feature table plus platform_match / device_match, the stated platform and maker,
    the execution status, ``doc`` (the pid) and ``label`` (the qrels grade, for evaluation only).

    ``steps_platform_match`` is a diagnostic: the same comparison with the platform the extracted steps
    name (stage 1's vocabulary), leaving out the block heading and page title, which the rendering fills
    with the query."""
    from ranking.features import instruction_texts, load_run_inputs, platform_features
    from verirank_core.platforms import platform_of, stated_match, wanted_platform
    from verirank_core.store import read_parquet

    table = read_parquet(run_dir / "features.parquet")
    queries, extractions, executions = load_run_inputs(run_dir)
    extra: dict[tuple[str, str], dict[str, Any]] = {}
    for ext in extractions:
        query = queries.get(ext.qid)
        if query is None:
            raise ValueError(f"{run_dir}/queries.jsonl has no query {ext.qid!r}")
        done = executions.get(ext.key())
        run_device = config.extraction.extract.device
        pm, dm = platform_features(query, ext, run_device)
        wanted = wanted_platform(query.query, query.device or "", query.app or "", run_device)
        from_steps = platform_of(" ".join(instruction_texts(ext)))
        extra[(ext.qid, ext.url)] = {"platform_match": pm, "device_match": dm,
                                     STEPS_PLATFORM: stated_match(from_steps, wanted),
                                     "steps_platform": from_steps or "none",
                                     "stated_platform": ext.stated_platform or "none",
                                     "stated_device": ext.stated_device or "none",
                                     "status": done.status.value if done else "missing"}
    for column in ("platform_match", "device_match", STEPS_PLATFORM, "steps_platform", "stated_platform",
                   "stated_device", "status"):
        table[column] = [extra[(q, u)][column] for q, u in zip(table["qid"], table["url"])]
    table["doc"] = [doc_id(q, u) for q, u in zip(table["qid"], table["url"])]
    table["label"] = [int(qrels.get(q, {}).get(d, 0)) for q, d in zip(table["qid"], table["doc"])]
    return table


def group_facts(table: Any, column: str) -> dict[str, dict[str, Any]]:
    """Per value of ``column``: pages, working pages (qrels), their share, executed and verified pages."""
    out: dict[str, dict[str, Any]] = {}
    for value, part in table.groupby(column, sort=True):
        working = int((part["label"] > 0).sum())
        out[str(value)] = {"pages": len(part), "working": working, "works_rate": working / len(part),
                           "executed": int((part["status"] == "executed").sum()),
                           "verified": int(part["verified"].sum())}
    return out


def labelled_vs_stated(table: Any, labelled: Mapping[str, str]) -> dict[str, dict[str, int]]:
    """How stage 1's stated platform compares with the platform each text was written for (labels, read
    only to describe stage 1): labelled platform -> stated platform -> pages."""
    out: dict[str, dict[str, int]] = {}
    for doc, stated in zip(table["doc"], table["stated_platform"]):
        row = out.setdefault(labelled.get(doc, "?"), {})
        row[stated] = row.get(stated, 0) + 1
    return dict(sorted(out.items()))


# --- cross-validation -----------------------------------------------------------------------------


def query_folds(qids: Sequence[str], k: int, seed: int) -> list[list[str]]:
    """``k`` disjoint folds of whole queries covering every query (a seeded shuffle, dealt round-robin)."""
    order = sorted(set(qids))
    if not 2 <= k <= len(order):
        raise ValueError(f"{k} folds for {len(order)} queries")
    perm = np.random.default_rng(seed).permutation(len(order))
    return [sorted(order[i] for i in perm[f::k]) for f in range(k)]


def cv_scores(table: Any, features: Sequence[str], model_name: str, folds: Sequence[Sequence[str]],
              config: Any, seed: int) -> tuple[np.ndarray, dict[str, float]]:
    """Out-of-fold scores for every row, and the model's feature importance averaged over the folds."""
    from ranking.experiment import build_model
    from ranking.models.data import frame_to_ltr

    scores = np.zeros(len(table))
    importance: dict[str, float] = {}
    for test_qids in folds:
        test = table["qid"].isin(test_qids).to_numpy()
        train = frame_to_ltr(table[~test], "label", list(features), where="training folds")
        model = build_model(model_name, config.ranking.train, seed)
        model.fit(train.X, train.y, train.qids, feature_names=train.feature_names)
        part = table[test]
        scores[test] = model.predict(part[list(features)].to_numpy(dtype=np.float64),
                                     part["qid"].astype(str).to_numpy(dtype=object), feature_names=list(features))
        for name, value in (model.feature_importance() or {}).items():
            importance[name] = importance.get(name, 0.0) + float(value) / len(folds)
    return scores, importance


def mean_result(results: Sequence[Any]) -> Any:
    """One EvalResult whose per-query values are the means over ``results`` (the seeds)."""
    from ranking.metrics import EvalResult

    first = results[0]
    per_query = {q: {m: float(np.mean([r.per_query[q][m] for r in results])) for m in first.metrics}
                 for q in first.per_query}
    return EvalResult(metrics=first.metrics, per_query=per_query, answerable=list(first.answerable))


def gap_closed(system: Mapping[str, float], original: Mapping[str, float],
               oracle: Mapping[str, float]) -> dict[str, Optional[float]]:
    return {m: ((system[m] - original[m]) / (oracle[m] - original[m]) if oracle[m] > original[m] else None)
            for m in system}


def measure(table: Any, config: Any, models: Sequence[str], n_folds: int = 5,
            seeds: Sequence[int] = (0, 1, 2), default: Optional[Sequence[str]] = None) -> dict[str, Any]:
    """Every (model, feature set, order) under leave-queries-out CV, the baselines and the paired tests.

    ``table`` needs qid, doc, rank, verified, label and the feature columns; ``default`` is the default
    feature set (``ranking.features.names``)."""
    from experiments.common import baseline_run, ordered_run
    from ranking.metrics import evaluate, oracle_run
    from ranking.significance import compare

    ev = table.assign(url=table["doc"]).reset_index(drop=True)  # runs name pages by pid
    qrels = {str(q): {} for q in ev["qid"]}
    for q, d, y in zip(ev["qid"], ev["doc"], ev["label"]):
        qrels[str(q)][str(d)] = int(y)
    sets = feature_sets(default or config.ranking.features.names)
    baselines = {"original": evaluate(baseline_run(ev, "original"), qrels, METRICS),
                 "f4": evaluate(baseline_run(ev, "f4"), qrels, METRICS),
                 "oracle": evaluate(oracle_run(qrels), qrels, METRICS)}
    original, oracle = baselines["original"].mean, baselines["oracle"].mean
    results: dict[tuple[str, str, str], Any] = {}
    importance: dict[tuple[str, str], dict[str, float]] = {}
    for model_name in models:
        for label, features in sets.items():
            per_order: dict[str, list[Any]] = {o: [] for o in ORDERS}
            weights: dict[str, float] = {}
            for seed in seeds:
                folds = query_folds(list(ev["qid"].astype(str)), n_folds, seed)
                scores, imp = cv_scores(ev, features, model_name, folds, config, seed)
                for order in ORDERS:
                    per_order[order].append(evaluate(ordered_run(ev, scores, order), qrels, METRICS))
                for name, value in imp.items():
                    weights[name] = weights.get(name, 0.0) + value / len(seeds)
            importance[(model_name, label)] = weights
            for order in ORDERS:
                results[(model_name, label, order)] = mean_result(per_order[order])
    rows = [{"model": m, "features": f, "order": o, "columns": sets[f], "mean": r.mean,
             "gap_closed": gap_closed(r.mean, original, oracle),
             "platform_importance": {p: importance[(m, f)].get(p) for p in (*PLATFORM, STEPS_PLATFORM)
                                     if p in sets[f]},
             "per_query": r.per_query}
            for (m, f, o), r in results.items()]
    tests = []
    for model_name in models:
        for without, with_ in PAIRS:
            for order in ORDERS:
                found = compare(results[(model_name, with_, order)], results[(model_name, without, order)],
                                METRICS, n_resamples=config.ranking.evaluate.n_resamples, seed=config.ranking.seed)
                tests.append({"model": model_name, "system": with_, "baseline": without, "order": order,
                              "tests": [t.to_dict() for t in found]})
    return {"feature_sets": sets, "folds": n_folds, "seeds": list(seeds), "models": list(models),
            "baselines": {k: v.mean for k, v in baselines.items()}, "rows": rows, "significance": tests,
            "queries": len(qrels), "answerable": len(baselines["oracle"].answerable)}


# --- report ---------------------------------------------------------------------------------------


def markdown(report: Mapping[str, Any]) -> str:
    from experiments.common import fmt, md_table

    res, facts = report["ranking"], report["facts"]
    base = res["baselines"]
    lines = [
        "# Platform features on real language (`../shared/real-dev/`, issue 22)", "",
        f"{facts['pages']} real texts for {res['queries']} queries ({res['answerable']} with a working text), "
        f"whole chain on the plain rendering (`render_plain.py`), device `sim:{facts['world']}`. Rankers trained "
        f"and tested by leave-queries-out CV: {res['folds']} folds of whole queries, seeds {res['seeds']} "
        "(folds and model), per-query metrics averaged over the seeds; default hyperparameters, nothing tuned.",
        "", "## What stage 1 states", "",
        md_table(["stated platform", "pages", "working", "works rate", "executed", "verified"],
                 [[k, v["pages"], v["working"], v["works_rate"], v["executed"], v["verified"]]
                  for k, v in facts["by_stated_platform"].items()]),
        md_table(["stated maker", "pages", "working", "works rate", "executed", "verified"],
                 [[k, v["pages"], v["working"], v["works_rate"], v["executed"], v["verified"]]
                  for k, v in facts["by_stated_device"].items()]),
        md_table(["platform_match", "pages", "working", "works rate"],
                 [[k, v["pages"], v["working"], v["works_rate"]] for k, v in facts["by_platform_match"].items()]),
        "Diagnostic: the platform the extracted steps name by themselves (no heading, no title):", "",
        md_table(["steps name", "pages", "working", "works rate", "executed", "verified"],
                 [[k, v["pages"], v["working"], v["works_rate"], v["executed"], v["verified"]]
                  for k, v in facts["by_steps_platform"].items()]),
        "Labelled platform of the text (pages.jsonl, read only here) against the stated one:", "",
        md_table(["written for", *facts["stated_values"]],
                 [[k, *[v.get(s, 0) for s in facts["stated_values"]]] for k, v in facts["labelled_vs_stated"].items()]),
        "## Ranking", "",
        f"Baselines: original order {_means(base['original'])}; F4 alone {_means(base['f4'])}; "
        f"oracle {_means(base['oracle'])}.", "",
    ]
    table_rows = [[r["model"], r["features"], r["order"], *[r["mean"][m] for m in METRICS],
                   fmt(r["gap_closed"]["P@1"]), fmt(r["gap_closed"]["NDCG@5"]),
                   ", ".join(f"{k} {fmt(v)}" for k, v in r["platform_importance"].items()) or "–"]
                  for r in res["rows"]]
    lines.append(md_table(["model", "features", "order", *METRICS, "gap P@1", "gap NDCG@5",
                           "platform weight/gain"], table_rows, numeric_from=3))
    lines += ["Paired by query, with the platform features against without (Δ, p t-test / p permutation):", ""]
    sig_rows = []
    for s in res["significance"]:
        cells = [f"{t['delta']:+.3f} ({fmt(t['p_ttest'])} / {fmt(t['p_permutation'])})" for t in s["tests"]]
        sig_rows.append([s["model"], f"{s['system']} vs {s['baseline']}", s["order"], *cells])
    lines.append(md_table(["model", "comparison", "order", *[f"Δ {m}" for m in METRICS]], sig_rows, numeric_from=3))
    lines += ["## Caveats", "", *[f"- {c}" for c in report["caveats"]], "",
              f"Code: {facts['git_sha']} ({facts['date']}); run: `{facts['run']}`; "
              f"command: `{facts['command']}`.", ""]
    return "\n".join(lines)


def _means(values: Mapping[str, float]) -> str:
    return ", ".join(f"{m} {values[m]:.3f}" for m in METRICS)


def caveats(table: Any) -> list[str]:
    """What limits the reading, from the table itself."""
    out = []
    if table["device_match"].nunique() == 1:
        out.append(f"device_match is {table['device_match'].iloc[0]} on every page: no text names a maker stage 1 "
                   "records, so it carries no information here.")
    answerable = set(table.loc[table["label"] > 0, "qid"])
    varying = sorted(q for q, part in table.groupby("qid") if part["platform_match"].nunique() > 1)
    if not answerable & set(varying):
        out.append(f"platform_match varies within {len(varying)} queries ({', '.join(varying) or 'none'}), none of "
                   "which has a working text: a ranker orders pages within a query, so it cannot learn from it "
                   "and its order of the answerable queries cannot change.")
    works = table["label"] > 0
    if ((table["F4"] >= 1.0) == works).all() if "F4" in table else False:
        out.append("F4 = 1 on exactly the working texts: a ranker with F4 already reaches the oracle, so a "
                   "new feature can only keep it there or hurt.")
    out.append("The plain rendering heads every page with its query (`<h1>How to ... on android</h1>`); stage 1 "
               "reads a block's platform from its heading before its steps (then the page title), so most "
               "iPhone-written texts are stated `android` here, even where the steps say \"iPhone\". Real pages "
               "carry their own headings. `steps_platform_match` (diagnostic) shows what the steps alone say.")
    return out


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.platform_features", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dev", type=Path, default=DEV_DIR, help="the real-dev folder (default ../shared/real-dev)")
    ap.add_argument("--run", type=Path, default=None,
                    help="reuse this chain folder (an earlier `real_dev_eval --chain --out DIR`) instead of running")
    ap.add_argument("--out", type=Path, default=None, help="working folder of a new chain run")
    ap.add_argument("--tasks", default="", help="comma-separated qids (default: all 20)")
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS), help="learned models (default lr,lambdamart)")
    ap.add_argument("--folds", type=int, default=5, help="folds of whole queries (default 5)")
    ap.add_argument("--seeds", default="0,1,2", help="fold/model seeds, averaged (default 0,1,2)")
    add_output_args(ap, RESULTS_DIR, NAME)
    args = ap.parse_args(argv)

    import json
    import sys

    from experiments.real_dev_eval import run_chain
    from ranking.metrics import read_qrels
    from verirank.commands._common import resolve_config, setup_env
    from verirank_core.store import atomic_write_json, atomic_write_text, git_sha

    setup_env()
    config = resolve_config(args.config, args.sets)
    only = {q.strip() for q in args.tasks.split(",") if q.strip()} or None
    folder = args.run
    if folder is None:
        folder = args.out or ROOT / "runs" / "experiments" / "real-dev" / time.strftime("platform-%Y%m%d-%H%M%S")
        run_chain(args.dev, folder, config, only)
    qrels = read_qrels(args.dev / "qrels.txt")
    table = chain_table(folder / "run", config, qrels)
    if only:
        table = table[table["qid"].isin(only)].reset_index(drop=True)
    labelled = {p["pid"]: p["platform"].split()[0] for p in
                map(json.loads, (args.dev / "pages.jsonl").read_text("utf-8").splitlines()) if p}
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    ranking = measure(table, config, models, args.folds, seeds)
    by_match = group_facts(table.assign(pm=table["platform_match"].map(lambda v: f"{v:g}")), "pm")
    facts = {"world": "imported/oneplus-settings-android11", "pages": len(table),
             "by_stated_platform": group_facts(table, "stated_platform"),
             "by_stated_device": group_facts(table, "stated_device"), "by_platform_match": by_match,
             "by_steps_platform": group_facts(table, "steps_platform"),
             "labelled_vs_stated": labelled_vs_stated(table, labelled),
             "stated_values": sorted(table["stated_platform"].unique()),
             "git_sha": git_sha(), "date": time.strftime("%Y-%m-%d"), "run": str(folder),
             "command": "python -m experiments.platform_features " + " ".join(argv if argv is not None else sys.argv[1:])}
    report = {"facts": facts, "ranking": ranking, "caveats": caveats(table)}
    md = markdown(report)
    args.results.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.results / f"{args.name}.md", md)
    atomic_write_json(args.results / f"{args.name}.json", report)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
