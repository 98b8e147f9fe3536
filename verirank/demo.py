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
execute      two simulator devices in parallel; each page runs on its query's ``world``
             -> ``OUT/execution.jsonl``, ``OUT/trajectories.jsonl``
features     F1-F18 (+ the qrels label, joined afterwards) -> ``OUT/features.parquet``
model        train the ranker on the synthetic pre-training set (zero-shot: no
             benchmark query is used), or load the bundled one (``--no-train``)
rerank       ``OUT/reranked.jsonl``, ``OUT/reranked.trec``
evaluate     Oracle, Original order, F4-only and the ranker against the qrels, with
             paired significance tests, logged to MLflow -> ``OUT/summary.json``, ``OUT/runs/``
report       ``OUT/report.html`` + ``OUT/assets/``
===========  ==============================================================================

The stages are stage objects run by the one runner
(:func:`verirank_core.stages.run_stages`); search, fetch, extract, execute, features
and rerank are the pipeline's own stages. What the demo changes is in the config,
resolved once before any stage starts (:func:`demo_config`), so ``OUT/manifest.json``
logs what ran: fetch reads the build's pre-filled page cache, execute runs on
simulators that open each query's world (every step's screenshot kept when a
report is written). Features attach the qrels labels.
Re-running the same command reuses every finished stage (``OUT/manifest.json``
logs them with a fingerprint of their settings); a stage interrupted halfway
resumes where it stopped. A stage runs again when an earlier stage ran again
or its own inputs changed (e.g. ``--no-train`` after a trained run redoes
model, rerank, evaluate and report).
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from verirank_core.extraction_records import Query, SearchResult
from verirank_core.config import RunConfig
from verirank_core.errors import ConfigError, StoreError
from verirank_core.resources import BUNDLED_MODEL, FULL_BENCH, PRETRAIN_FEATURES, SMALL_BENCH
from verirank_core.json_types import JSONObject, JSONValue
from verirank_core.stages import Counts, Progress, Stage, digest, last_entry, null_progress, run_stages
from verirank_core.store import RunDir, atomic_write_json, read_json, read_jsonl, write_jsonl

__all__ = [
    "DEFAULT_OUT", "STAGES", "DemoOptions", "DemoResult", "demo_config", "sim_execution", "demo_stages", "run_demo",
    "select_queries", "format_summary", "model_label",
]

DEFAULT_OUT = Path("runs/demo")
#: the name of the demo's runs in the stage log of OUT/manifest.json
PIPELINE = "demo"
#: the metrics of the terminal table (summary.json holds every configured metric)
TABLE_METRICS = ("MRR", "P@1", "P@5", "NDCG@5")
BASELINE = "Original order"


@dataclass
class DemoOptions:
    """What ``verirank demo`` was asked to do."""

    out: Path = DEFAULT_OUT
    #: a HowToBench folder: queries.jsonl, serp.jsonl, qrels.txt, cache/pages/ (default: the bundled subset)
    data: Path = SMALL_BENCH
    #: train on the pre-training set (True) or load ``model_dir`` (False)
    train: bool = True
    model_dir: Path = BUNDLED_MODEL
    #: folder with train/features.parquet and valid/features.parquet
    pretrain: Path = PRETRAIN_FEATURES
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
    summary: JSONObject
    #: stage -> "ran" or "reused"
    stages: dict[str, str] = field(default_factory=dict)
    report: Optional[Path] = None


def _tracking_uri(options: DemoOptions) -> str:
    return options.tracking_uri or f"sqlite:///{(Path(options.out) / 'mlflow.db').resolve()}"


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
        hint = ("build it with `verirank howtobench build`" if data == FULL_BENCH
                else "build one with `verirank howtobench build --small --out DIR` and pass it")
        raise StoreError(f"{data} is not a HowToBench folder (missing {', '.join(missing)}); {hint}")


class InputsStage:
    """``inputs``: OUT/input/{queries,serp}.jsonl and OUT/qrels.txt for the chosen queries."""

    name = "inputs"
    append_only = True
    requires = ()

    def __init__(self, options: DemoOptions):
        self.options = options

    def fingerprint(self, cfg: RunConfig) -> JSONValue:
        return {"data": str(self.options.data.resolve()), "queries": self.options.max_queries,
                "top_n": cfg.extraction.search.top_n}

    def __call__(self, run: RunDir, cfg: RunConfig, progress: Progress) -> Counts:
        from extraction.queries import load_queries
        from ranking.metrics import read_qrels, write_qrels

        data, out = self.options.data, run.path
        _check_data(data)
        queries = select_queries(load_queries(data / "queries.jsonl"), self.options.max_queries)
        keep = {q.qid for q in queries}
        top_n = cfg.extraction.search.top_n
        serp = [r for r in read_jsonl(data / "serp.jsonl", SearchResult) if r.qid in keep and r.rank <= top_n]
        pool = {(r.qid, r.url) for r in serp}
        # judged pages outside the candidate pool would make the oracle unreachable by any reranking
        qrels = {q: {u: g for u, g in docs.items() if (q, u) in pool}
                 for q, docs in read_qrels(data / "qrels.txt").items() if q in keep}
        write_jsonl(out / "input" / "queries.jsonl", queries)
        write_jsonl(out / "input" / "serp.jsonl", serp)
        write_qrels(out / "qrels.txt", qrels)
        return {"queries": len(queries), "results": len(serp),
                "relevant": sum(g > 0 for docs in qrels.values() for g in docs.values())}


def sim_execution(cfg: RunConfig, world: str, devices: int, every_step: bool = False) -> RunConfig:
    """``cfg`` with stage 2 on ``devices`` simulators: each starts on ``world`` and re-opens its
    simulator on each page's own query world; ``every_step`` keeps every step's screenshot."""
    cfg = cfg.model_copy(deep=True)
    cfg.execution.devices = [f"sim:{world}"] * devices
    cfg.execution.route_by_world = True
    if every_step:
        cfg.execution.screenshots = "every_step"  # the report shows every step's screen
    return cfg


def demo_config(options: DemoOptions, config: RunConfig) -> RunConfig:
    """The config every stage of the demo runs with, so that the stage log records what ran.

    A HowToBench build ships its pages in a pre-filled page cache (fetch and extract
    read it), and its queries name the simulator world their pages run on.
    """
    from extraction.queries import load_queries

    if options.devices < 1:
        raise ConfigError(f"--devices must be at least 1 (got {options.devices})")
    _check_data(options.data)
    cfg = config.model_copy(deep=True)
    cfg.extraction.fetch.cache_dir = str((options.data / "cache" / "pages").resolve())
    queries = select_queries(load_queries(options.data / "queries.jsonl"), options.max_queries)
    worlds = [w for q in queries if (w := (q.model_extra or {}).get("world"))]
    if not worlds:
        raise ConfigError(f"{options.data}/queries.jsonl names no `world`: the demo needs simulator worlds")
    return sim_execution(cfg, worlds[0], options.devices, every_step=options.report)


class SimExecuteStage:
    """``execute``: the pipeline's stage 2 (the simulators are in the config, see :func:`demo_config`),
    which knows before the run how many pages the benchmark holds."""

    name = "execute"
    append_only = True
    requires = ("extraction.jsonl",)

    def __init__(self, data: Path):
        self.data = data

    def fingerprint(self, cfg: RunConfig) -> JSONValue:
        from execution.stage import ExecuteStage

        return ExecuteStage().fingerprint(cfg)

    def warm_up(self, cfg: RunConfig) -> None:
        """Start stage 2's worker processes' fork server now, unless the benchmark has too few
        results for stage 2 to use processes."""
        from execution.executors import warm_up_workers

        serp = self.data / "serp.jsonl"
        results = sum(1 for line in serp.open(encoding="utf-8") if line.strip()) if serp.is_file() else None
        warm_up_workers(cfg, max_pages=results)

    def __call__(self, run: RunDir, cfg: RunConfig, progress: Progress) -> Counts:
        from execution.stage import ExecuteStage

        return ExecuteStage()(run, cfg, progress)


def model_label(name: str) -> str:
    """How the terminal table names a model: ``lr`` -> ``LR``."""
    return {"lr": "LR", "lambdamart": "LambdaMART", "tmlp-lambdaloss": "TMLP (LambdaLoss)",
            "tmlp-neuralndcg": "TMLP (NeuralNDCG)"}.get(name, name)


def _pretrain_files(pretrain: Path) -> tuple[Path, Path]:
    train, valid = pretrain / "train" / "features.parquet", pretrain / "valid" / "features.parquet"
    for path in (train, valid):
        if not path.is_file():
            raise StoreError(f"{path} not found: the pre-training features are missing (see "
                             "datasets/models/README.md to rebuild them with `verirank howtobench pretrain`)")
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


def _model_dir(options: DemoOptions) -> Path:
    """Where the ranker of this run is saved: OUT/model when trained, else the bundled one."""
    return Path(options.out) / "model" if options.train else options.model_dir


class ModelStage:
    """``model``: train the ranker on the synthetic pre-training set, or check the bundled one."""

    name = "model"
    append_only = False
    requires = ()

    def __init__(self, options: DemoOptions):
        self.options = options

    def fingerprint(self, cfg: RunConfig) -> JSONValue:
        return _model_fingerprint(self.options, cfg)

    def __call__(self, run: RunDir, cfg: RunConfig, progress: Progress) -> Counts:
        from ranking.models import load_ranker

        options = self.options
        if not options.train:
            if not (options.model_dir / "ranker.json").is_file():
                raise StoreError(f"{options.model_dir} holds no saved ranker (ranker.json)")
            return {"source": "bundled", "path": str(options.model_dir), "model": load_ranker(options.model_dir).name}

        from ranking.experiment import train

        rc = cfg.ranking
        train_path, valid_path = _pretrain_files(options.pretrain)
        outcome = train(train_path, rc.model, run / "model", train_cfg=rc.train, eval_cfg=rc.evaluate,
                        seed=rc.seed, valid_path=valid_path, config=cfg.to_manifest(),
                        tracking_uri=_tracking_uri(options), experiment=rc.experiment,
                        run_name=f"demo-train-{rc.model}")
        return {"source": "trained", "path": str(run / "model"), "model": outcome.model.name,
                "train_data": str(train_path), "seconds": round(outcome.seconds, 3),
                "valid": outcome.valid.mean if outcome.valid else None, "mlflow_run_id": outcome.run_id}


def _write_system_runs(out: Path, cfg: RunConfig) -> dict[str, Path]:
    """TREC runs of the compared systems in OUT/runs/ (the ranker's is OUT/reranked.trec).

    The original order and F4-only are the registered fixed rankers ``original``
    and ``f4``, ordered and written like the ranker's run: F4-only with the same
    verified-first order as the ranker, the original order by its own score alone.
    """
    from verirank_core.execution_records import ExecutionResult
    from ranking.export import ranked_items, write_trec
    from ranking.metrics import oracle_run, read_qrels, write_trec_run
    from ranking.rerank import baseline_ranker, rerank, score_with_model
    from verirank_core.store import read_parquet

    runs = out / "runs"
    table = read_parquet(out / "features.parquet")
    executions = {r.key(): r for r in read_jsonl(out / "execution.jsonl", ExecutionResult)}
    for name, order, tag in (("original", "score", "original"), ("f4", cfg.ranking.rerank.order, "f4-only")):
        ranked = rerank(table, score_with_model(table, baseline_ranker(name, table)), order)
        write_trec(runs / f"{name}.trec", ranked_items(ranked, executions), tag=tag)
    write_trec_run(runs / "oracle.trec", oracle_run(read_qrels(out / "qrels.txt")), tag="oracle")
    return {"Oracle": runs / "oracle.trec", BASELINE: runs / "original.trec", "F4-only": runs / "f4.trec"}


class EvaluateStage:
    """``evaluate``: score every system like `verirank evaluate --baseline original.trec` does, and track it."""

    name = "evaluate"
    append_only = False
    requires = ("features.parquet", "execution.jsonl", "reranked.jsonl")

    def __init__(self, options: DemoOptions):
        self.options = options

    def fingerprint(self, cfg: RunConfig) -> JSONValue:
        rk = cfg.ranking
        return digest(rk.evaluate, rk.seed, rk.experiment, self.options.tracking_uri)

    def __call__(self, run: RunDir, cfg: RunConfig, progress: Progress) -> Counts:
        from ranking.experiment import evaluate_runs
        from ranking.models import load_ranker

        rc, out, tracking_uri = cfg.ranking, run.path, _tracking_uri(self.options)
        name = model_label(load_ranker(_model_dir(self.options)).name)
        systems = _write_system_runs(out, cfg)
        systems[name] = out / "reranked.trec"
        qrels = out / "qrels.txt"
        rows, per_query, answerable = [], {}, 0
        for system, path in systems.items():
            report = evaluate_runs(path, qrels, baseline_path=systems[BASELINE], eval_cfg=rc.evaluate, seed=rc.seed,
                                   tracking_uri=tracking_uri, experiment=rc.experiment,
                                   run_name=f"demo-{system.lower().replace(' ', '-')}")
            tests = {t.metric: t for t in report.tests}
            rows.append({
                "system": system, "run": path.relative_to(out).as_posix(),
                "mean": report.result.mean, "mean_answerable": report.result.mean_answerable,
                "p_ttest": {m: t.p_ttest for m, t in tests.items()} if system != BASELINE else {},
                "p_permutation": {m: t.p_permutation for m, t in tests.items()} if system != BASELINE else {},
                "mlflow_run_id": report.run_id,
                "note": "upper bound, uses the judgements" if system == "Oracle" else "",
            })
            per_query[system] = report.result.per_query
            answerable = len(report.result.answerable)
        model = last_entry(run, "model").get("counts", {})
        summary = {
            "dataset": str(self.options.data), "n_queries": len(per_query[BASELINE]),
            "n_answerable": answerable,
            "metrics": list(rc.evaluate.metrics), "baseline": BASELINE, "system": name,
            "model": {**model, "description": _model_description(name, model)},
            "tracking_uri": tracking_uri, "experiment": rc.experiment,
            "rows": rows, "per_query": per_query,
        }
        atomic_write_json(out / "summary.json", summary)
        return {"systems": len(rows)}


def _model_description(name: str, model: JSONObject) -> str:
    if model.get("source") == "trained":
        return f"{name} trained on the synthetic pre-training set (zero-shot)"
    return f"{name} loaded from {model.get('path', 'the bundled model')}"


class ReportStage:
    """``report``: OUT/report.html and OUT/assets/."""

    name = "report"
    append_only = False
    requires = ("execution.jsonl", "reranked.jsonl")

    def fingerprint(self, cfg: RunConfig) -> JSONValue:
        return None

    def __call__(self, run: RunDir, cfg: RunConfig, progress: Progress) -> Counts:
        from verirank.report import build_report

        path = build_report(run.path, run / "report.html", title="verirank demo report", progress=progress)
        return {"report": str(path)}


def demo_stages(options: DemoOptions) -> list[Stage]:
    """The demo's stages in order: the pipeline's stages, swapped where the demo differs, plus its own."""
    from extraction.pipeline import ExtractStage, FetchStage, SearchStage
    from ranking.pipeline import FeaturesStage, RerankStage

    out = Path(options.out)
    stages: list[Stage] = [
        InputsStage(options),
        SearchStage(out / "input" / "queries.jsonl", out / "input" / "serp.jsonl"),
        FetchStage(),
        ExtractStage(),
        SimExecuteStage(options.data),
        FeaturesStage(qrels=out / "qrels.txt"),
        ModelStage(options),
        RerankStage(model=_model_dir(options)),
        EvaluateStage(options),
    ]
    if options.report:
        stages.append(ReportStage())
    return stages


#: the names of the demo's stages, in order
STAGES: tuple[str, ...] = ("inputs", "search", "fetch", "extract", "execute", "features", "model", "rerank",
                           "evaluate", "report")


# --- the whole demo ---------------------------------------------------------------------------

def run_demo(options: DemoOptions, config: RunConfig, *, progress: Optional[Progress] = None,
             echo: Callable[[str], None] = print) -> DemoResult:
    """Run (or resume) every stage into ``options.out``; returns the evaluation summary.

    ``progress`` is a tqdm-like factory ``progress(iterable=None, total=, desc=, unit=)``.
    """
    config = demo_config(options, config)
    run = RunDir(options.out).ensure()
    outcomes = run_stages(run, config, demo_stages(options), pipeline=PIPELINE, progress=progress or null_progress,
                          echo=echo, reuse=True, hint="give another --out, or --fresh to start over")
    summary = read_json(run.path / "summary.json")
    summary["timings"] = {name: {k: last_entry(run, name).get(k) for k in ("seconds", "cpu_seconds")}
                          for name in outcomes}
    report = run.path / "report.html" if options.report else None
    return DemoResult(out=run.path, summary=summary, stages={n: o.status for n, o in outcomes.items()},
                      report=report)


# --- the terminal table ----------------------------------------------------------------------

def format_summary(summary: JSONObject, metrics: tuple[str, ...] = TABLE_METRICS) -> str:
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
    stages = RunDir(out).read_manifest().get("stages", []) if (out / "manifest.json").exists() else []
    if not any(entry.get("pipeline") == PIPELINE for entry in stages):
        raise StoreError(f"{out} is not a demo folder (its manifest.json logs no demo stage); refusing to delete it")
    shutil.rmtree(out)
