"""What every experiment shares: options, the benchmark, the pipeline run, the pre-training
set, evaluation helpers, result tables and MLflow.

Working folder of an experiment (``--out``, default ``runs/experiments/full`` or
``runs/experiments/small``)::

    OUT/bench/         HowToBench build (built on first use; --bench to use another)
    OUT/run/           the pipeline run over the benchmark (grounding on): every stage resumes
    OUT/run-noground/  Table 7 only: extraction again with extraction.ground.enabled=false
    OUT/pretrain/      the synthetic pre-training set (built on first use; --pretrain)
    OUT/models/        rankers fitted by Table 5 and the ablation
    OUT/<experiment>/  per-experiment outputs (TREC runs, plots)
    OUT/mlflow.db      MLflow tracking store (--tracking-uri to change)

Result tables go to ``experiments/results/<name>[-small].md`` and ``.json``
(``--results`` to change).

Labels (``qrels.txt``, ``labels/pages.jsonl`` of the build) are read only
here, for evaluation; they never reach the pipeline, whose run directory
holds queries, search results, pages and what the stages made of them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

import numpy as np

from verirank_core.config import RunConfig
from verirank_core.errors import ConfigError, StoreError, VerirankError

__all__ = [
    "METRICS", "FEATURE_GROUPS", "RESULTS_DIR", "Setup", "base_parser", "prepare", "ensure_bench",
    "pipeline_config", "run_pipeline", "ensure_pretrain", "load_feature_table", "load_training_data",
    "read_page_labels", "bench_qrels", "ordered_run", "baseline_run", "fit_ranker",
    "md_table", "fmt", "write_result", "run_facts", "Tracker", "tracked", "log", "entry_point",
]

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "experiments" / "results"
#: the metrics of the paper's Table 5
METRICS: tuple[str, ...] = ("MRR", "P@1", "P@5", "NDCG@5")
#: the paper's feature groups (Q4 ablation)
FEATURE_GROUPS: dict[str, tuple[str, ...]] = {
    "F1-F3 query/page": ("F1", "F2", "F3"),
    "F4 judge": ("F4",),
    "F5-F8 action terms": ("F5", "F6", "F7", "F8"),
    "F9-F12 visible UI": ("F9", "F10", "F11", "F12"),
    "F13-F16 distilled UI": ("F13", "F14", "F15", "F16"),
    "F17-F18 positions": ("F17", "F18"),
}
EXPERIMENT_NAME = "verirank-experiments"
#: which code made each stage of a run (git sha + uncommitted files when the stage started)
_CODE_FILE = "experiment-code.json"


def log(message: str) -> None:
    """One progress line on stderr."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- options --------------------------------------------------------------------------------


def base_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """The options every experiment takes."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--small", action="store_true",
                   help="the small benchmark (12 queries x 10 pages over 4 worlds): a few minutes")
    p.add_argument("--out", type=Path, default=None,
                   help="working folder (default runs/experiments/full or runs/experiments/small)")
    p.add_argument("--bench", type=Path, default=None,
                   help="a HowToBench build to use (default OUT/bench, built when missing)")
    p.add_argument("--pretrain", type=Path, default=None,
                   help="a pre-training set from `verirank howtobench pretrain` (default OUT/pretrain, built when missing)")
    p.add_argument("--results", type=Path, default=RESULTS_DIR, help="where the result tables go")
    p.add_argument("--tracking-uri", default=None, help="MLflow tracking URI (default sqlite:///OUT/mlflow.db)")
    p.add_argument("--devices", type=int, default=2, help="simulators run in parallel (default 2)")
    p.add_argument("--seed", type=int, default=0, help="benchmark and pre-training set seed")
    p.add_argument("--config", "-c", type=Path, action="append", default=[], help="YAML config file(s)")
    p.add_argument("--set", "-s", dest="sets", action="append", default=[],
                   help="override one setting, e.g. --set execution.max_steps=20 (repeatable)")
    # smaller subsets (tests): task definitions, pages per query, pre-training tasks
    p.add_argument("--tasks", type=Path, default=None, help=argparse.SUPPRESS)
    p.add_argument("--pages-per-query", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--pretrain-tasks", type=int, default=None, help=argparse.SUPPRESS)
    return p


def add_output_args(ap: argparse.ArgumentParser, results: Path, name: str) -> None:
    """Where the tables go and which settings run: the options of the real-text experiments."""
    ap.add_argument("--results", type=Path, default=results, help="where the result tables go")
    ap.add_argument("--name", default=name, help="result file stem")
    ap.add_argument("--config", "-c", type=Path, action="append", default=[], help="YAML config file(s)")
    ap.add_argument("--set", "-s", dest="sets", action="append", default=[], help="override one setting")


@dataclass
class Setup:
    """Resolved options of one experiment invocation."""

    args: argparse.Namespace
    config: RunConfig
    out: Path
    bench: Path
    pretrain: Path
    results: Path
    tracking_uri: str

    @property
    def size(self) -> str:
        return "small" if self.args.small else "full"

    @property
    def run_dir(self) -> Path:
        return self.out / "run"

    def result_name(self, name: str) -> str:
        """``table5`` (full benchmark) or ``table5-small``."""
        return f"{name}-small" if self.args.small else name


def prepare(args: argparse.Namespace) -> Setup:
    """Resolve the config and the folders named by the options."""
    from verirank.commands._common import resolve_config, setup_env

    setup_env()
    if args.devices < 1:
        raise ConfigError(f"--devices must be at least 1, got {args.devices}")
    config = resolve_config(args.config, args.sets)
    out = Path(args.out or Path("runs") / "experiments" / ("small" if args.small else "full"))
    out.mkdir(parents=True, exist_ok=True)
    uri = args.tracking_uri or f"sqlite:///{(out / 'mlflow.db').resolve()}"
    return Setup(args=args, config=config, out=out, bench=Path(args.bench or out / "bench"),
                 pretrain=Path(args.pretrain or out / "pretrain"), results=Path(args.results), tracking_uri=uri)


# --- the benchmark --------------------------------------------------------------------------


def ensure_bench(setup: Setup) -> Path:
    """The HowToBench build of this experiment; built (seconds to a minute) when missing."""
    from verirank_core.store import read_json

    bench, args = setup.bench, setup.args
    summary_path = bench / "howtobench.json"
    if summary_path.exists():
        summary = read_json(summary_path)
        if args.bench is None and bool(summary.get("small")) != bool(args.small):
            raise ConfigError(
                f"{bench} holds the {'small' if summary.get('small') else 'full'} benchmark but this run asked "
                f"for the {setup.size} one; use another --out or pass --bench explicitly")
        for name in ("queries.jsonl", "serp.jsonl", "qrels.txt", "labels/pages.jsonl"):
            if not (bench / name).exists():
                raise StoreError(f"{bench} is an incomplete HowToBench build: {name} is missing; rebuild it")
        return bench
    if args.bench is not None:
        raise StoreError(f"{bench} is not a HowToBench build (no howtobench.json); "
                         "build one with `verirank howtobench build --out DIR`")
    from howtobench.build import build_benchmark
    from howtobench.tasks import TASKS_DIR

    log(f"building HowToBench ({setup.size}) into {bench}")
    report = build_benchmark(bench, small=args.small, seed=args.seed, tasks_dir=args.tasks or TASKS_DIR,
                             pages_per_query=args.pages_per_query)
    log(f"benchmark: {report.queries} queries, {report.pages} pages, {report.relevant} relevant")
    return bench


def bench_qrels(bench: Path) -> dict[str, dict[str, int]]:
    """The benchmark's TREC qrels (labels: evaluation only)."""
    from ranking.metrics import read_qrels

    return read_qrels(bench / "qrels.txt")


def read_page_labels(bench: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """The hidden page sidecar (variant, has_steps, steps, relevant...) by (qid, url)."""
    path = bench / "labels" / "pages.jsonl"
    if not path.exists():
        raise StoreError(f"{path} not found: the experiments need a HowToBench build with its labels/ folder")
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for lineno, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            out[(row["qid"], row["url"])] = row
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise StoreError(f"{path}:{lineno}: not a page label ({exc})") from exc
    return out


# --- the pipeline over the benchmark -----------------------------------------------------------


def pipeline_config(config: RunConfig, bench: Path, devices: int) -> RunConfig:
    """``config`` set up for the benchmark: its pre-filled page cache and ``devices`` simulators."""
    from verirank.demo import sim_execution
    from verirank_core.extraction_records import Query
    from verirank_core.store import read_jsonl

    cfg = config.model_copy(deep=True)
    cfg.extraction.fetch.cache_dir = str((bench / "cache" / "pages").resolve())
    worlds = [(q.model_extra or {}).get("world") for q in read_jsonl(bench / "queries.jsonl", Query)]
    first = next((w for w in worlds if w), None)
    if first is None:
        raise StoreError(f"{bench}/queries.jsonl names no simulator world; the experiments run on sim:<world>")
    return sim_execution(cfg, first, devices)


class _CopiedStage:
    """``search`` or ``fetch`` done by copying another run's output of the same benchmark.

    A variant of stage 1 (Table 7's run without grounding) then does not search
    and fetch again: it starts from the very same pages.
    """

    append_only = True
    requires = ()

    def __init__(self, name: str, source: Path, files: tuple[str, ...]):
        self.name, self.source, self.files = name, Path(source), files

    def fingerprint(self, cfg: RunConfig) -> Any:
        return {"copied_from": self.source.name}

    def __call__(self, run: Any, cfg: RunConfig, progress: Any) -> dict[str, Any]:
        import shutil

        for name in self.files:
            shutil.copyfile(self.source / name, run / name)
        return {"copied_from": str(self.source)}


def _bench_identity(bench: Path) -> dict[str, Any]:
    """What tells one benchmark build from another (part of the search stage's fingerprint)."""
    from verirank_core.store import read_json

    summary = read_json(bench / "howtobench.json")
    return {k: summary.get(k) for k in ("name", "seed", "small", "queries", "pages")}


def pipeline_stages(bench: Path, until: str = "features", copy_pages_from: Optional[Path] = None) -> list[Any]:
    """The pipeline's stages over the benchmark: search -> fetch -> extract [-> execute -> features].

    Fetch is the pipeline's fetcher over the benchmark's page cache
    (``pipeline_config`` points ``extraction.fetch.cache_dir`` at it). The fetcher
    looks in the cache before it resolves a host, so the benchmark's fictional
    hosts (``*.example``) need no exemption; a page missing from the cache still
    fails (connection error), it is never invented. Features carry no labels:
    the experiments join them when they evaluate.
    """
    from execution.stage import ExecuteStage
    from extraction.pipeline import ExtractStage, FetchStage, SearchStage
    from ranking.pipeline import FeaturesStage

    if until not in ("extract", "features"):
        raise ConfigError(f"until must be 'extract' or 'features', got {until!r}")
    if copy_pages_from is not None:
        stages: list[Any] = [_CopiedStage("search", copy_pages_from, ("queries.jsonl", "serp.jsonl")),
                             _CopiedStage("fetch", copy_pages_from, ("pages.jsonl",))]
    else:
        stages = [SearchStage(bench / "queries.jsonl", bench / "serp.jsonl", inputs=_bench_identity(bench)),
                  FetchStage()]
    stages.append(ExtractStage())
    if until == "features":
        stages += [ExecuteStage(), FeaturesStage()]
    return stages


def run_pipeline(bench: Path, run_dir: Path, config: RunConfig, until: str = "features",
                 copy_pages_from: Optional[Path] = None) -> dict[str, Any]:
    """search -> fetch -> extract [-> execute -> features] over the benchmark into ``run_dir``.

    The stages (:func:`pipeline_stages`) go through the pipeline's runner with
    ``reuse``: a finished stage with the same settings is skipped, a stage cut
    short continues where it stopped (its appender skips the pages already
    written), and a folder made with other settings or another benchmark is
    refused. ``config`` comes from :func:`pipeline_config`. Returns the counts
    of the stages that ran.
    """
    from verirank_core.stages import run_stages
    from verirank_core.store import RunDir

    run = RunDir(run_dir).ensure()

    def before(stage: Any) -> None:
        log(f"{stage.name} -> {run.path}")
        _record_code(run.path, stage.name)

    outcomes = run_stages(run, config, pipeline_stages(bench, until, copy_pages_from), pipeline="experiment",
                          progress=_progress_factory(), echo=lambda line: None, reuse=True,
                          hint="use another --out, or delete the folder to start over", before_stage=before)
    return {name: o.counts for name, o in outcomes.items() if o.status == "ran"}


def code_state() -> str:
    """``git SHA`` of the checkout, plus the number of uncommitted tracked files if any."""
    from verirank_core.store import git_sha

    sha, changed = git_sha(), _uncommitted_files()
    return f"git {sha[:10]}" + (f" + {changed} uncommitted file(s)" if changed else "")


def _record_code(folder: Path, stage: str, state: Optional[str] = None) -> None:
    """Remember which code ran ``stage`` of a run (a resumed stage lists every state it ran with)."""
    from verirank_core.store import atomic_write_json, read_json

    path = Path(folder) / _CODE_FILE
    record = read_json(path) if path.exists() else {}
    states = record.setdefault(stage, [])
    state = state or code_state()
    if state not in states:
        states.append(state)
    atomic_write_json(path, record)


def pipeline_code(run_dir: Path) -> dict[str, list[str]]:
    """The code states recorded for each stage of a run (empty for runs made before this was kept)."""
    from verirank_core.store import read_json

    path = Path(run_dir) / _CODE_FILE
    return read_json(path) if path.exists() else {}


def _progress_factory() -> Callable[..., Any]:
    from verirank.commands._common import progress

    return lambda iterable=None, total=None, desc="", unit="it": progress(iterable, total=total, desc=desc, unit=unit)


def load_feature_table(run_dir: Path, qrels: Mapping[str, Mapping[str, int]]) -> Any:
    """``features.parquet`` of a run with the ``label`` column joined from ``qrels``."""
    from ranking.features import attach_labels
    from verirank_core.store import read_parquet

    path = Path(run_dir) / "features.parquet"
    if not path.exists():
        raise StoreError(f"{path} not found: the pipeline run did not reach the features stage")
    table = read_parquet(path)
    # a query missing from the run would silently score 0 for every system
    missing = sorted(set(qrels) - set(table["qid"]))
    if missing:
        raise StoreError(f"{path} lacks {len(missing)} judged queries (e.g. {missing[0]}): the run is incomplete "
                         "or made from another benchmark; run the experiment again to resume")
    return attach_labels(table, qrels)


# --- the pre-training set ------------------------------------------------------------------------


def ensure_pretrain(setup: Setup, config: RunConfig) -> Path:
    """The synthetic pre-training set (``verirank howtobench pretrain``); built when missing.

    Built with the same execution and feature settings as the test run, so
    train and test features mean the same thing.
    """
    from howtobench.pretrain import build_pretrain
    from howtobench.tasks import TASKS_DIR

    folder, args = setup.pretrain, setup.args
    if (folder / "pretrain_stats.json").exists():
        _check_pretrain_settings(folder, config)
        for split in ("train", "valid"):
            if not (folder / split / "features.parquet").exists():
                raise StoreError(f"{folder}/{split}/features.parquet is missing: the pre-training set was built "
                                 "with --no-features; rebuild it")
        return folder
    if folder.exists() and any(folder.iterdir()):
        raise StoreError(f"{folder} holds an unfinished pre-training set (no pretrain_stats.json); "
                         "delete it and run again (it is rebuilt in a few minutes)")
    log(f"building the pre-training set into {folder}")
    state = code_state()
    build_pretrain(folder, config, seed=args.seed, tasks_dir=args.tasks or TASKS_DIR,
                   max_tasks=args.pretrain_tasks, progress=_progress_factory())
    _record_code(folder, "pretrain", state)  # the code when the build started
    return folder


def _feature_settings(config: RunConfig) -> dict[str, Any]:
    """What makes two runs' features mean the same thing: the execute and features stages' fingerprints."""
    from execution.stage import ExecuteStage
    from ranking.pipeline import FeaturesStage

    features = FeaturesStage().fingerprint(config)
    return {"execution": ExecuteStage().fingerprint(config)["execution"], "features": features["features"],
            "verified": features["verified"]}


def _check_pretrain_settings(folder: Path, config: RunConfig) -> None:
    """Train and test features must come from the same execution and feature settings.

    The pre-training set records its config in ``manifest.json`` (stage execute).
    """
    from verirank_core.stages import diff_settings
    from verirank_core.store import RunDir

    stored = RunDir(folder).read_manifest().get("config")
    if not stored:
        return
    try:
        then = _feature_settings(RunConfig.model_validate(stored))
    except Exception:  # written by another verirank version: nothing to compare
        log(f"warning: cannot read the config of {folder}/manifest.json; not checking its settings")
        return
    diff = diff_settings(then, _feature_settings(config))
    if diff:
        raise ConfigError(
            f"the pre-training set {folder} was built with other settings than this run ({'; '.join(diff[:5])}); "
            "train and test features would not mean the same thing: pass --pretrain with a matching set, "
            "or delete it to rebuild")


def load_training_data(pretrain: Path, features: Optional[Sequence[str]] = None) -> tuple[Any, Any]:
    """(train, valid) :class:`LTRData` of the pre-training set, restricted to ``features``."""
    from ranking.models.data import frame_to_ltr
    from verirank_core.store import read_parquet

    parts = []
    for split in ("train", "valid"):
        path = pretrain / split / "features.parquet"
        frame = read_parquet(path)
        if len(frame) == 0:
            parts.append(None)
            continue
        parts.append(frame_to_ltr(frame, "label", features, where=str(path)))
    if parts[0] is None:
        raise StoreError(f"{pretrain}/train holds no rows: the pre-training set is empty")
    return parts[0], parts[1]


def fit_ranker(name: str, train: Any, valid: Any, config: RunConfig) -> Any:
    """A ranker fitted on the pre-training set (validation split for early stopping)."""
    from ranking.experiment import build_model

    model = build_model(name, config.ranking.train, config.ranking.seed)
    eval_set = (valid.X, valid.y, valid.qids) if valid is not None and valid.y.sum() > 0 else None
    return model.fit(train.X, train.y, train.qids, feature_names=train.feature_names, eval_set=eval_set)


# --- runs from scores ------------------------------------------------------------------------------


def ordered_run(table: Any, scores: Sequence[float], order: str) -> dict[str, dict[str, float]]:
    """The run a reranker outputs (:func:`ranking.rerank.rerank`), as a TREC-style run.

    ``score``: every page by score; ``verified-first``: verified pages first by
    score, the rest in original order. Equal scores keep the original order in
    both (:mod:`ranking.order`, not trec_eval's doc-id order).
    """
    from ranking.order import ranked_run
    from ranking.rerank import rerank

    ranked = rerank(table, np.asarray(scores, dtype=np.float64), order)
    return ranked_run(ranked["qid"], ranked["url"], ranked["rank"])


def baseline_run(table: Any, name: str, order: str = "score") -> dict[str, dict[str, float]]:
    """The run of a registered fixed ranker: ``original`` (the search engine's order), ``f4``, ``f4-first``."""
    from ranking.rerank import baseline_ranker, score_with_model

    return ordered_run(table, score_with_model(table, baseline_ranker(name, table)), order)


# --- tables and result files -------------------------------------------------------------------------


def fmt(value: Any, digits: int = 3) -> str:
    """Numbers for tables: fixed digits; None as a dash."""
    if value is None:
        return "–"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return "n/a" if not np.isfinite(value) else f"{float(value):.{digits}f}"
    return str(value)


def md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], numeric_from: int = 1) -> str:
    """A Markdown table; columns from ``numeric_from`` on are right-aligned."""
    align = ["---" if i < numeric_from else "---:" for i in range(len(headers))]
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(align) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(c if isinstance(c, str) else fmt(c) for c in row) + " |")
    return "\n".join(lines) + "\n"


def write_result(setup: Setup, name: str, markdown: str, data: Mapping[str, Any]) -> dict[str, Path]:
    """Write ``RESULTS/<name>[-small].md`` and ``.json``; returns both paths."""
    from verirank_core.store import atomic_write_json, atomic_write_text

    stem = setup.result_name(name)
    paths = {"md": setup.results / f"{stem}.md", "json": setup.results / f"{stem}.json"}
    atomic_write_text(paths["md"], markdown)
    atomic_write_json(paths["json"], _jsonable(dict(data)))
    log(f"wrote {paths['md']}")
    return paths


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    return value


def run_facts(setup: Setup, bench: Path, folders: Sequence[Path] = ()) -> dict[str, Any]:
    """What a result was computed from (written into every result file).

    ``code`` names the code that evaluated and the code that ran the pipeline
    stages of ``OUT/run`` and of ``folders`` (e.g. the pre-training set).
    """
    from verirank_core.store import git_sha, read_json

    summary = read_json(bench / "howtobench.json")
    stages = {}
    for folder in (setup.run_dir, *folders):
        for stage, states in pipeline_code(folder).items():
            stages[f"{Path(folder).name}/{stage}"] = states
    evaluation = code_state()
    pipeline = sorted({s for states in stages.values() for s in states})
    return {
        "benchmark": {k: summary.get(k) for k in ("name", "seed", "queries", "pages", "relevant", "worlds")},
        "git_sha": git_sha(),
        "uncommitted_files": _uncommitted_files(),
        "pipeline_code": stages,
        "code": f"evaluation {evaluation}" + (f"; pipeline run {', '.join(pipeline)}" if pipeline else ""),
        "predictor": setup.config.execution.predictor,
        "judge": setup.config.execution.judge,
        "extractor": setup.config.extraction.extract.extractor,
        "date": time.strftime("%Y-%m-%d"),
    }


def _uncommitted_files() -> Optional[int]:
    """How many files of the checkout differ from the commit (None outside a git checkout)."""
    import subprocess

    try:
        out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                             capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return sum(1 for line in out.splitlines() if line.strip())


# --- MLflow ------------------------------------------------------------------------------------


class Tracker:
    """One MLflow run per experiment invocation; nested runs per system."""

    def __init__(self, run_id: str):
        self.run_id = run_id

    def params(self, params: Mapping[str, Any]) -> None:
        from ranking import tracking

        tracking.log_params(params)

    def metrics(self, values: Mapping[str, float], prefix: str = "") -> None:
        import mlflow

        from ranking.tracking import metric_key

        clean = {metric_key(f"{prefix}{k}"): float(v) for k, v in values.items()
                 if v is not None and np.isfinite(float(v))}
        if clean:
            mlflow.log_metrics(clean)

    def system(self, name: str, result: Any, run: Optional[Mapping[str, Any]] = None,
               params: Optional[Mapping[str, Any]] = None) -> None:
        """A nested run for one system: its test metrics, per-query values and TREC run."""
        import mlflow

        from ranking import tracking

        with mlflow.start_run(run_name=name, nested=True, tags={"verirank.kind": "experiment-system"}):
            if params:
                tracking.log_params(params)
            tracking.log_eval(result, "test")
            tracking.log_per_query(result)
            if run is not None:
                tracking.log_run_file(run, name="run.trec", tag=name.replace(" ", "_"))

    def artifacts(self, paths: Sequence[Path]) -> None:
        import mlflow

        for path in paths:
            mlflow.log_artifact(str(path))


@contextlib.contextmanager
def tracked(setup: Setup, name: str, params: Optional[Mapping[str, Any]] = None) -> Iterator[Tracker]:
    """An MLflow run named after the experiment, with its config and options as params."""
    from ranking import tracking

    tracking.configure(setup.tracking_uri, EXPERIMENT_NAME)
    with tracking.start_run("experiment", run_name=setup.result_name(name),
                            tags={"verirank.experiment": name, "verirank.size": setup.size}) as run:
        tracker = Tracker(run.info.run_id)
        tracking.log_config(setup.config.to_manifest())
        tracker.params({"experiment": name, "size": setup.size, "bench": str(setup.bench),
                        "devices": setup.args.devices, **(params or {})})
        yield tracker


# --- entry points ---------------------------------------------------------------------------------


def entry_point(run: Callable[[Optional[list[str]]], Any]) -> Callable[[Optional[list[str]]], int]:
    """``main(argv) -> exit code``: verirank's errors become one line on stderr and exit code 2."""

    def main(argv: Optional[list[str]] = None) -> int:
        try:
            run(argv)
        except VerirankError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("interrupted: finished pages are saved; run the same command again to resume", file=sys.stderr)
            return 130
        return 0

    return main
