"""``verirank demo``: the whole pipeline on the bundled HowToBench subset, in one command.

What it does, stage by stage (each writes plain files into the output folder
``OUT``, default ``runs/demo``):

===========  ==============================================================================
inputs       copy the benchmark's queries, original ranking and qrels into ``OUT/input/``
             (optionally a few queries only) and ``OUT/qrels.txt``
search       ``OUT/queries.jsonl``, ``OUT/serp.jsonl`` (the original order)
fetch        the real fetcher over the build's pre-filled page cache (``DATA/cache/pages``):
             the page URLs stay as published (``https://HOST/...``) and every one is a
             cache hit, so no request is sent
extract      heuristic extractor + grounding -> ``OUT/extraction.jsonl``
execute      two simulator devices in parallel; each query's ``world`` picks
             ``sim:<world>`` -> ``OUT/execution.jsonl``, ``OUT/trajectories/``
features     F1-F18 (+ the qrels label, joined afterwards) -> ``OUT/features.parquet``
model        train the ranker on the synthetic pre-training set (zero-shot: no
             benchmark query is used), or load the bundled one (``--no-train``)
rerank       ``OUT/reranked.jsonl``, ``OUT/reranked.trec``
evaluate     Oracle, Original order, F4-only and the ranker against the qrels, with
             paired significance tests, logged to MLflow -> ``OUT/summary.json``, ``OUT/runs/``
report       ``OUT/report.html`` + ``OUT/assets/``
===========  ==============================================================================

Re-running the same command reuses every finished stage (``OUT/demo.json``
records them); a stage interrupted halfway resumes where it stopped. A stage
runs again when an earlier stage ran again or its own inputs changed (e.g.
``--no-train`` after a trained run redoes model, rerank, evaluate and report).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from extraction.records import Page, Query, SearchResult
from verirank.config import RunConfig
from verirank.errors import ConfigError, StoreError
from verirank.store import JsonlAppender, RunDir, atomic_write_json, read_json, read_jsonl, write_jsonl

__all__ = [
    "ROOT", "SMALL_DATA", "FULL_DATA", "BUNDLED_MODEL", "PRETRAIN_DATA", "DEFAULT_OUT", "STAGES",
    "DemoOptions", "DemoResult", "run_demo", "select_queries", "format_summary", "model_label",
]

ROOT = Path(__file__).resolve().parent.parent
#: the committed --small HowToBench subset (12 queries x 10 pages over 4 worlds)
SMALL_DATA = ROOT / "datasets" / "howtobench" / "small"
#: the full build (`verirank bench build`), not committed
FULL_DATA = ROOT / "datasets" / "howtobench" / "build"
#: the bundled pre-trained ranker and the pre-training features it was trained on
BUNDLED_MODEL = ROOT / "datasets" / "models" / "lr-pretrain"
PRETRAIN_DATA = ROOT / "datasets" / "models" / "pretrain-features"
DEFAULT_OUT = Path("runs/demo")
STATE_FILE = "demo.json"
#: the metrics of the terminal table (summary.json holds every configured metric)
TABLE_METRICS = ("MRR", "P@1", "P@5", "NDCG@5")
BASELINE = "Original order"

Progress = Callable[..., Any]


@dataclass
class DemoOptions:
    """What ``verirank demo`` was asked to do."""

    out: Path = DEFAULT_OUT
    #: a HowToBench folder: queries.jsonl, serp.jsonl, qrels.txt, site/
    data: Path = SMALL_DATA
    #: train on the pre-training set (True) or load ``model_dir`` (False)
    train: bool = True
    model_dir: Path = BUNDLED_MODEL
    #: folder with train/features.parquet and valid/features.parquet
    pretrain: Path = PRETRAIN_DATA
    #: MLflow tracking URI; None = sqlite database in OUT
    tracking_uri: Optional[str] = None
    #: simulator devices run in parallel
    devices: int = 2
    #: use only this many queries (spread over the worlds); None = all
    max_queries: Optional[int] = None
    report: bool = True


@dataclass
class DemoResult:
    out: Path
    summary: dict[str, Any]
    #: stage -> "ran" or "reused"
    stages: dict[str, str] = field(default_factory=dict)
    report: Optional[Path] = None


@dataclass
class _Ctx:
    """What every stage function gets."""

    options: DemoOptions
    config: RunConfig
    run: RunDir
    progress: Progress
    echo: Callable[[str], None]
    #: filled by the model stage for rerank
    ranker: Any = None

    @property
    def out(self) -> Path:
        return self.run.path

    @property
    def tracking_uri(self) -> str:
        return self.options.tracking_uri or f"sqlite:///{(self.out / 'mlflow.db').resolve()}"


# --- choosing the inputs ------------------------------------------------------------------

def select_queries(queries: list[Query], n: Optional[int]) -> list[Query]:
    """The first ``n`` queries taken round-robin over worlds (all when ``n`` is None).

    A quick demo then still shows every app instead of ``n`` questions about one.
    """
    if n is None or n >= len(queries):
        return list(queries)
    if n < 1:
        raise ConfigError(f"--queries must be at least 1 (got {n})")
    by_world: dict[str, list[Query]] = {}
    for q in queries:
        by_world.setdefault(str((q.model_extra or {}).get("world")), []).append(q)
    picked: list[Query] = []
    while len(picked) < n:
        for group in by_world.values():
            if group and len(picked) < n:
                picked.append(group.pop(0))
    chosen = {q.qid for q in picked}
    return [q for q in queries if q.qid in chosen]  # keep file order


def _check_data(data: Path) -> None:
    missing = [name for name in ("queries.jsonl", "serp.jsonl", "qrels.txt", "cache/pages")
               if not (data / name).exists()]
    if missing:
        hint = ("build it with `verirank bench build`" if data == FULL_DATA
                else "build one with `verirank bench build --small --out DIR` and pass it")
        raise StoreError(f"{data} is not a HowToBench folder (missing {', '.join(missing)}); {hint}")


def _stage_inputs(ctx: _Ctx) -> dict[str, Any]:
    """OUT/input/{queries,serp}.jsonl and OUT/qrels.txt for the chosen queries."""
    from extraction.queries import load_queries
    from ranking.metrics import read_qrels, write_qrels

    data = ctx.options.data
    _check_data(data)
    queries = select_queries(load_queries(data / "queries.jsonl"), ctx.options.max_queries)
    keep = {q.qid for q in queries}
    top_n = ctx.config.extraction.search.top_n
    serp = [r for r in read_jsonl(data / "serp.jsonl", SearchResult) if r.qid in keep and r.rank <= top_n]
    pool = {(r.qid, r.url) for r in serp}
    # judged pages outside the candidate pool would make the oracle unreachable by any reranking
    qrels = {q: {u: g for u, g in docs.items() if (q, u) in pool}
             for q, docs in read_qrels(data / "qrels.txt").items() if q in keep}
    write_jsonl(ctx.out / "input" / "queries.jsonl", queries)
    write_jsonl(ctx.out / "input" / "serp.jsonl", serp)
    write_qrels(ctx.out / "qrels.txt", qrels)
    return {"queries": len(queries), "results": len(serp),
            "relevant": sum(g > 0 for docs in qrels.values() for g in docs.values())}


# --- stage 1 --------------------------------------------------------------------------------

def _stage_search(ctx: _Ctx) -> dict[str, Any]:
    from extraction.pipeline import search_stage

    return search_stage(ctx.run, ctx.config, ctx.out / "input" / "queries.jsonl", ctx.out / "input" / "serp.jsonl")


def _stage_fetch(ctx: _Ctx) -> dict[str, Any]:
    from extraction.fetch import Fetcher
    from extraction.pagecache import PageCache

    results = read_jsonl(ctx.out / "serp.jsonl", SearchResult)
    fetch_cfg = ctx.config.extraction.fetch
    ctx.run.start_stage("fetch", ctx.config.to_manifest())
    bar = ctx.progress(total=len(results), desc="fetch", unit="page")
    try:
        fetcher = Fetcher(fetch_cfg, PageCache.for_run(ctx.out, fetch_cfg.cache_dir))
        with JsonlAppender(ctx.out / "pages.jsonl", Page) as appender:
            counts = fetcher.fetch_all(results, appender, progress=bar.update)
    finally:
        bar.close()
    ctx.run.finish_stage("fetch", counts)
    return counts


def _stage_extract(ctx: _Ctx) -> dict[str, Any]:
    from extraction.pipeline import extract_stage

    pages = read_jsonl(ctx.out / "pages.jsonl", Page)
    bar = ctx.progress(total=len(pages), desc="extract", unit="page")
    try:
        return extract_stage(ctx.run, ctx.config, bar.update)
    finally:
        bar.close()


# --- stage 2 --------------------------------------------------------------------------------

def _stage_execute(ctx: _Ctx) -> dict[str, Any]:
    from execution.runner import execute_run

    queries = read_jsonl(ctx.out / "queries.jsonl", Query)
    worlds = [w for q in queries if (w := (q.model_extra or {}).get("world"))]
    if not worlds:
        raise ConfigError(f"{ctx.options.data}/queries.jsonl names no `world`: the demo needs simulator worlds")
    cfg = ctx.config.model_copy(deep=True)
    # every worker starts on some world and re-opens its simulator on each page's own world
    cfg.execution.devices = [f"sim:{worlds[0]}"] * ctx.options.devices
    cfg.execution.route_by_world = True
    if ctx.options.report:
        cfg.execution.screenshots = "every_step"  # the report shows every step's screen
    return execute_run(ctx.out, cfg, progress=ctx.progress)


# --- stage 3 --------------------------------------------------------------------------------

def _stage_features(ctx: _Ctx) -> dict[str, Any]:
    from ranking.features import attach_labels, build_feature_table, write_feature_files
    from ranking.metrics import read_qrels

    ctx.run.start_stage("features", ctx.config.to_manifest())
    table = build_feature_table(
        ctx.out, ctx.config,
        progress=lambda it, total: ctx.progress(it, total=total, desc="features", unit="page"))
    # labels are joined after the features are computed: they never enter a feature
    table = attach_labels(table, read_qrels(ctx.out / "qrels.txt"))
    write_feature_files(ctx.out, table)
    counts = {"pages": len(table), "queries": int(table["qid"].nunique()),
              "verified": int(table["verified"].sum()), "labelled_relevant": int((table["label"] > 0).sum())}
    ctx.run.finish_stage("features", counts)
    return counts


def model_label(name: str) -> str:
    """How the terminal table names a model: ``lr`` -> ``LR``."""
    return {"lr": "LR", "lambdamart": "LambdaMART", "tmlp-lambdaloss": "TMLP (LambdaLoss)",
            "tmlp-neuralndcg": "TMLP (NeuralNDCG)"}.get(name, name)


def _pretrain_files(pretrain: Path) -> tuple[Path, Path]:
    train, valid = pretrain / "train" / "features.parquet", pretrain / "valid" / "features.parquet"
    for path in (train, valid):
        if not path.is_file():
            raise StoreError(f"{path} not found: the pre-training features are missing (see "
                             "datasets/models/README.md to rebuild them with `verirank bench pretrain`)")
    return train, valid


def _file_digest(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _model_fingerprint(options: DemoOptions, config: RunConfig) -> str:
    if options.train:
        return f"train:{config.ranking.model}:{config.ranking.seed}:{_file_digest(list(_pretrain_files(options.pretrain)))}"
    return f"bundled:{options.model_dir.resolve()}:{_file_digest([options.model_dir / 'ranker.json'])}"


def _stage_model(ctx: _Ctx) -> dict[str, Any]:
    from ranking.models import load_ranker

    if not ctx.options.train:
        if not (ctx.options.model_dir / "ranker.json").is_file():
            raise StoreError(f"{ctx.options.model_dir} holds no saved ranker (ranker.json)")
        ctx.ranker = load_ranker(ctx.options.model_dir)
        return {"source": "bundled", "path": str(ctx.options.model_dir), "model": ctx.ranker.name}

    from ranking.experiment import train

    rc = ctx.config.ranking
    train_path, valid_path = _pretrain_files(ctx.options.pretrain)
    outcome = train(train_path, rc.model, ctx.out / "model", train_cfg=rc.train, eval_cfg=rc.evaluate,
                    seed=rc.seed, valid_path=valid_path, config=ctx.config.to_manifest(),
                    tracking_uri=ctx.tracking_uri, experiment=rc.experiment, run_name=f"demo-train-{rc.model}")
    ctx.ranker = outcome.model
    return {"source": "trained", "path": str(ctx.out / "model"), "model": outcome.model.name,
            "train_data": str(train_path), "seconds": round(outcome.seconds, 3),
            "valid": outcome.valid.mean if outcome.valid else None, "mlflow_run_id": outcome.run_id}


def _ranker_for(ctx: _Ctx) -> Any:
    """The ranker of this run: from the model stage, or loaded back when that stage was reused."""
    if ctx.ranker is None:
        from ranking.models import load_ranker

        ctx.ranker = load_ranker(ctx.out / "model" if ctx.options.train else ctx.options.model_dir)
    return ctx.ranker


def _stage_rerank(ctx: _Ctx) -> dict[str, Any]:
    from ranking.rerank import rerank_run

    ctx.run.start_stage("rerank", ctx.config.to_manifest())
    items = rerank_run(ctx.out, ctx.config, _ranker_for(ctx))
    counts = {"pages": len(items), "queries": len({it.qid for it in items}),
              "verified": sum(it.verified for it in items),
              "moved": sum(1 for it in items if it.rank != it.original_rank)}
    ctx.run.finish_stage("rerank", counts)
    return counts


def _write_system_runs(ctx: _Ctx) -> dict[str, Path]:
    """TREC runs of the compared systems in OUT/runs/ (the ranker's is OUT/reranked.trec)."""
    from execution.records import ExecutionResult
    from ranking.export import ranked_items, write_trec
    from ranking.metrics import oracle_run, read_qrels, write_trec_run
    from ranking.rerank import rerank
    from verirank.store import read_parquet

    runs = ctx.out / "runs"
    serp = read_jsonl(ctx.out / "serp.jsonl", SearchResult)
    per_query: dict[str, list[SearchResult]] = {}
    for r in serp:
        per_query.setdefault(r.qid, []).append(r)
    original = {q: {r.url: float(len(rs) - r.rank + 1) for r in rs} for q, rs in per_query.items()}
    write_trec_run(runs / "original.trec", original, tag="original")

    # F4-only: the same verified-first order as the ranker, scored by the judge's F4 alone
    table = read_parquet(ctx.out / "features.parquet")
    executions = {r.key(): r for r in read_jsonl(ctx.out / "execution.jsonl", ExecutionResult)}
    f4 = rerank(table, table["F4"].to_numpy(dtype=float), ctx.config.ranking.rerank.order)
    write_trec(runs / "f4.trec", ranked_items(f4, executions), tag="f4-only")

    write_trec_run(runs / "oracle.trec", oracle_run(read_qrels(ctx.out / "qrels.txt")), tag="oracle")
    return {"Oracle": runs / "oracle.trec", BASELINE: runs / "original.trec", "F4-only": runs / "f4.trec"}


def _stage_evaluate(ctx: _Ctx) -> dict[str, Any]:
    """Score every system like `verirank evaluate --baseline original.trec` does, and track it."""
    from ranking.experiment import evaluate_runs

    rc = ctx.config.ranking
    name = model_label(_ranker_for(ctx).name)
    systems = _write_system_runs(ctx)
    systems[name] = ctx.out / "reranked.trec"
    qrels = ctx.out / "qrels.txt"
    ctx.run.start_stage("evaluate", ctx.config.to_manifest())
    rows, per_query, answerable = [], {}, 0
    for system, path in systems.items():
        report = evaluate_runs(path, qrels, baseline_path=systems[BASELINE], eval_cfg=rc.evaluate, seed=rc.seed,
                               tracking_uri=ctx.tracking_uri, experiment=rc.experiment,
                               run_name=f"demo-{system.lower().replace(' ', '-')}")
        tests = {t.metric: t for t in report.tests}
        rows.append({
            "system": system, "run": path.relative_to(ctx.out).as_posix(),
            "mean": report.result.mean, "mean_answerable": report.result.mean_answerable,
            "p_ttest": {m: t.p_ttest for m, t in tests.items()} if system != BASELINE else {},
            "p_permutation": {m: t.p_permutation for m, t in tests.items()} if system != BASELINE else {},
            "mlflow_run_id": report.run_id,
            "note": "upper bound, uses the judgements" if system == "Oracle" else "",
        })
        per_query[system] = report.result.per_query
        answerable = len(report.result.answerable)
    state = _read_state(ctx.out)
    model = state.get("stages", {}).get("model", {}).get("counts", {})
    summary = {
        "dataset": str(ctx.options.data), "n_queries": len(per_query[BASELINE]),
        "n_answerable": answerable,
        "metrics": list(rc.evaluate.metrics), "baseline": BASELINE, "system": name,
        "model": {**model, "description": _model_description(name, model)},
        "tracking_uri": ctx.tracking_uri, "experiment": rc.experiment,
        "rows": rows, "per_query": per_query,
    }
    atomic_write_json(ctx.out / "summary.json", summary)
    ctx.run.finish_stage("evaluate", {"systems": list(systems)})
    return {"systems": len(rows)}


def _model_description(name: str, model: dict[str, Any]) -> str:
    if model.get("source") == "trained":
        return f"{name} trained on the synthetic pre-training set (zero-shot)"
    return f"{name} loaded from {model.get('path', 'the bundled model')}"


def _stage_report(ctx: _Ctx) -> dict[str, Any]:
    from verirank.report import build_report

    path = build_report(ctx.out, ctx.out / "report.html", title="verirank demo report", progress=ctx.progress)
    return {"report": str(path)}


#: (name, function) in pipeline order; each returns its counts
STAGES: list[tuple[str, Callable[[_Ctx], dict[str, Any]]]] = [
    ("inputs", _stage_inputs),
    ("search", _stage_search),
    ("fetch", _stage_fetch),
    ("extract", _stage_extract),
    ("execute", _stage_execute),
    ("features", _stage_features),
    ("model", _stage_model),
    ("rerank", _stage_rerank),
    ("evaluate", _stage_evaluate),
    ("report", _stage_report),
]


# --- resuming -------------------------------------------------------------------------------

def _read_state(out: Path) -> dict[str, Any]:
    path = out / STATE_FILE
    return read_json(path) if path.exists() else {}


#: stages whose records are only ever appended: their settings cannot change in the same folder
APPEND_ONLY = ("inputs", "search", "fetch", "extract", "execute")


def _digest(*sections: Any) -> str:
    """A short hash of config sections (pydantic models or plain values)."""
    parts = [s.model_dump(mode="json") if hasattr(s, "model_dump") else s for s in sections]
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def _fingerprints(options: DemoOptions, config: RunConfig) -> dict[str, str]:
    """What each stage depends on besides the stages before it."""
    ex, rk = config.extraction, config.ranking
    execution = config.execution.model_dump(mode="json", exclude={"devices", "executor", "ray_address",
                                                                  "ray_num_cpus"})
    return {
        "inputs": json.dumps({"data": str(options.data.resolve()), "queries": options.max_queries,
                              "top_n": ex.search.top_n}, sort_keys=True),
        "search": _digest(ex.search),
        "fetch": _digest(ex.fetch.model_dump(mode="json", exclude={"cache_dir"})),
        "extract": _digest(ex.clean, ex.extract, ex.ground, config.llm if ex.extract.extractor == "llm" else None),
        "execute": _digest(execution, config.llm if "llm" in (config.execution.predictor, config.execution.judge)
                           else None),
        "features": _digest(rk.features, rk.verified),
        "model": _model_fingerprint(options, config),
        "rerank": _digest(rk.verified, rk.rerank),
        "evaluate": _digest(rk.evaluate, rk.seed, rk.experiment, options.tracking_uri),
    }


def _check_append_only(state: dict[str, Any], prints: dict[str, str], out: Path) -> None:
    """Refuse settings that differ from the records an append-only stage already wrote."""
    for name in APPEND_ONLY:
        done = state.get("stages", {}).get(name)
        if done and done.get("fingerprint") != prints[name]:
            what = (f"other inputs ({json.loads(done['fingerprint'])})" if name == "inputs"
                    else f"other {name} settings")
            raise ConfigError(f"{out} holds a demo of {what}; its records cannot be mixed with new ones: "
                              f"give another --out, or --fresh to start over")


# --- the whole demo ---------------------------------------------------------------------------

def _null_progress(iterable: Any = None, total: Optional[int] = None, desc: str = "", unit: str = "it") -> Any:
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, unit=unit, disable=True)


def run_demo(options: DemoOptions, config: RunConfig, *, progress: Optional[Progress] = None,
             echo: Callable[[str], None] = print) -> DemoResult:
    """Run (or resume) every stage into ``options.out``; returns the evaluation summary.

    ``progress`` is a tqdm-like factory ``progress(iterable=None, total=, desc=, unit=)``.
    """
    if options.devices < 1:
        raise ConfigError(f"--devices must be at least 1 (got {options.devices})")
    if not options.report:
        stages = [s for s in STAGES if s[0] != "report"]
    else:
        stages = list(STAGES)
    run = RunDir(options.out).ensure()
    # a HowToBench build ships its pages in a pre-filled page cache: fetch and extract read it
    config = config.model_copy(deep=True)
    config.extraction.fetch.cache_dir = str((options.data / "cache" / "pages").resolve())
    ctx = _Ctx(options=options, config=config, run=run, progress=progress or _null_progress, echo=echo)
    state = _read_state(run.path)
    prints = _fingerprints(options, config)
    _check_append_only(state, prints, run.path)
    state.setdefault("stages", {})
    state["options"] = {"data": str(options.data), "train": options.train, "max_queries": options.max_queries,
                        "devices": options.devices, "tracking_uri": ctx.tracking_uri}

    done: dict[str, str] = {}
    rerun = False
    for name, stage in stages:
        previous = state["stages"].get(name, {})
        fingerprint = prints.get(name, "")
        if not rerun and previous.get("finished") and previous.get("fingerprint") == fingerprint:
            done[name] = "reused"
            echo(f"{name}: reused ({_short_counts(previous.get('counts', {}))})")
            continue
        rerun = True
        # mark the stage unfinished first, so an interruption cannot leave it looking done
        state["stages"][name] = {"fingerprint": fingerprint, "finished": False}
        atomic_write_json(run.path / STATE_FILE, state)
        wall, cpu = time.perf_counter(), time.process_time()
        counts = stage(ctx)
        state["stages"][name] = {
            "fingerprint": fingerprint, "finished": True, "counts": counts,
            "seconds": round(time.perf_counter() - wall, 2), "cpu_seconds": round(time.process_time() - cpu, 2),
        }
        atomic_write_json(run.path / STATE_FILE, state)
        done[name] = "ran"
        echo(f"{name}: {_short_counts(counts)} ({state['stages'][name]['seconds']:.1f}s)")

    summary = read_json(run.path / "summary.json")
    summary["timings"] = {n: {k: s.get(k) for k in ("seconds", "cpu_seconds")}
                          for n, s in state["stages"].items() if n in done}
    report = run.path / "report.html" if options.report else None
    return DemoResult(out=run.path, summary=summary, stages=done, report=report)


def _short_counts(counts: dict[str, Any]) -> str:
    shown = [f"{k}={v}" for k, v in counts.items()
             if (isinstance(v, (int, float)) and not isinstance(v, bool)) or (isinstance(v, str) and len(v) <= 24)]
    return ", ".join(shown[:8]) or "done"


# --- the terminal table ----------------------------------------------------------------------

def format_summary(summary: dict[str, Any], metrics: tuple[str, ...] = TABLE_METRICS) -> str:
    """The Table 5-style table: systems x metrics, and the p-value of MRR against the original order.

    ``*`` marks a metric whose paired randomisation test against the original
    order gives p < 0.05.
    """
    metrics = tuple(m for m in metrics if m in summary.get("metrics", metrics))
    p_metric = metrics[0] if metrics else "MRR"
    header = ["system", *metrics, f"p vs original ({p_metric})"]
    lines = []
    for row in summary["rows"]:
        cells = [row["system"]]
        for m in metrics:
            p = row.get("p_permutation", {}).get(m)
            cells.append(f"{row['mean'][m]:.4f}" + ("*" if p is not None and p < 0.05 else " "))
        p = row.get("p_permutation", {}).get(p_metric)
        cells.append("–" if p is None else f"{p:.4f}")
        lines.append(cells)
    widths = [max(len(str(r[i])) for r in [header, *lines]) for i in range(len(header))]
    out = ["  ".join(str(h).ljust(w) if i == 0 else str(h).rjust(w) for i, (h, w) in enumerate(zip(header, widths)))]
    out.append("  ".join("-" * w for w in widths))
    for cells in lines:
        out.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))))
    out.append(f"{summary['n_queries']} queries ({summary.get('n_answerable', '?')} with a relevant page); "
               "p: paired randomisation test against the original order; * p < 0.05")
    return "\n".join(out)


def reset_outputs(out: Path) -> None:
    """Delete a demo folder's outputs (used by ``--fresh``); refuses folders that are not demo runs."""
    if not out.exists():
        return
    if not (out / STATE_FILE).exists():
        raise StoreError(f"{out} is not a demo folder (no {STATE_FILE}); refusing to delete it")
    shutil.rmtree(out)
