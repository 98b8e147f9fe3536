"""UI-map ablation: the agent with and without the app's UI map, on the real-app worlds.

    python -m experiments.uimap_ablation [--small] [--out DIR]

Benchmark: HowToBench built from the real-app task files
(``datasets/howtobench/tasks/real-*.yaml``: the OnePlus Settings APK
world and the DroidTask UTG worlds), 10 pages per query; ``--small`` keeps the
first phrasing of each task, the full run every phrasing. ``--bench DIR``
uses another HowToBench build instead (e.g. the main one).

Stage 1 (search, fetch, extract) runs once; then, for each arm
(``execution.agent.use_ui_map`` false / true), every page is executed on a
fresh simulator of its world, judged, and turned into features. After each
episode the world's goal is read (LABELS, this file only) to measure what the
agent really achieved.

Reported per arm:

* **execution success**: share of executed pages whose episode left the goal
  true, overall and split by the page's qrels label (relevant = a literal
  replay of its steps reaches the goal; a non-relevant page that "succeeds"
  was repaired or worked around);
* **repairs**: pages with a UI-map move (rationale ``ui-map route: ...``), and
  mean deviations per executed page;
* **judge agreement**: how often "F4 = 1" agrees with the goal being reached,
  and with the qrels label;
* **ranking**: MRR, P@1, P@5, NDCG@5 of the original order, F4 only, and a
  pairwise LR (5-fold cross-validation over queries, ``ranking.rerank.order``)
  on F1-F18 with and without the deviation feature ``n_deviations_norm``.

Writes ``experiments/results/uimap_ablation[-small].md`` and ``.json``.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any, Optional

import numpy as np

from experiments.common import (
    METRICS, base_parser, bench_qrels, entry_point, fit_ranker, fmt, log, md_table, ordered_run,
    baseline_run, pipeline_config, prepare, run_facts, run_pipeline, tracked, write_result,
)
from verirank_core.config import RunConfig
from verirank_core.resources import TASKS_DIR

NAME = "uimap_ablation"
#: the task files of the real-app worlds sit beside the others as ``real-*.yaml``
REAL_TASKS_DIR = TASKS_DIR
TASK_GLOB = "real-*.yaml"
ARMS: tuple[tuple[str, bool], ...] = (("without map", False), ("with map", True))
PAGES_PER_QUERY = 10
FOLDS = 5
PAPER = tuple(f"F{i}" for i in range(1, 19))
DEVIATION = "n_deviations_norm"
MAP_PREFIX = "ui-map route"


# --- the benchmark of the real-app tasks ------------------------------------------------------


def write_task_subset(out: Path, small: bool) -> Path:
    """Copies of the real-app task files in ``out`` (``small``: first phrasing of each task)."""
    import yaml

    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.yaml"):
        old.unlink()
    files = sorted(REAL_TASKS_DIR.glob(TASK_GLOB))
    if not files:
        from verirank_core.errors import StoreError

        raise StoreError(f"no {TASK_GLOB} task files in {REAL_TASKS_DIR}")
    for f in files:
        doc = yaml.safe_load(f.read_text("utf-8"))
        if small:
            for task in doc["tasks"]:
                task["queries"] = task["queries"][:1]
        (out / f.name).write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), "utf-8")
    return out


def ensure_real_bench(folder: Path, small: bool, seed: int) -> Path:
    """The HowToBench build of the real-app tasks (built when missing)."""
    from howtobench.build import build_benchmark

    if (folder / "howtobench.json").exists():
        return folder
    tasks = write_task_subset(folder.parent / "tasks", small)
    log(f"building the real-app HowToBench into {folder}")
    report = build_benchmark(folder, small=False, seed=seed, tasks_dir=tasks, pages_per_query=PAGES_PER_QUERY)
    log(f"benchmark: {report.queries} queries, {report.pages} pages, {report.relevant} relevant")
    return folder


def read_goals(bench: Path) -> dict[str, tuple[str, str]]:
    """qid -> (world spec, goal) from the hidden labels (evaluation only).

    The build records a world by its name (``utg-notes``); imported worlds open
    by their path under datasets/worlds (``imported/utg-notes``).
    """
    import json

    from phonesim.world import list_worlds

    bundled = set(list_worlds())
    out = {}
    for line in (bench / "labels" / "queries.jsonl").read_text("utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            world = row["world"] if row["world"] in bundled else f"imported/{row['world']}"
            out[row["qid"]] = (world, row["goal"])
    return out


# --- one arm ----------------------------------------------------------------------------------


def arm_config(config: RunConfig, use_map: bool) -> RunConfig:
    cfg = config.model_copy(deep=True)
    cfg.execution.agent.use_ui_map = use_map
    cfg.ranking.features.names = [*PAPER, DEVIATION]
    return cfg


class _GoalExecuteStage:
    """``execute`` on one simulator per world, recording whether each page's goal was reached.

    The pipeline's execute stage swapped for one that also writes the labels
    (``outcomes.jsonl``); the goal is read after the episode, never by the agent
    or the judge.
    """

    name = "execute"
    append_only = True
    requires = ("queries.jsonl", "extraction.jsonl")

    def __init__(self, goals: dict[str, tuple[str, str]]):
        self.goals = goals

    def fingerprint(self, cfg: RunConfig) -> Any:
        from execution.stage import ExecuteStage

        return ExecuteStage().fingerprint(cfg)

    def __call__(self, run: Any, config: RunConfig, progress: Any) -> dict[str, Any]:
        from verirank_core.execution_records import ExecutionResult, ExecutionStatus, StopReason
        from execution.jobs import build_parts, plan_jobs, run_job
        from phonesim.device import SimDevice
        from verirank_core.extraction_records import Extraction, Query
        from verirank_core.store import JsonlAppender, LineLog, read_jsonl
        from verirank_core.errors import DeviceError
        from verirank_core.records import Record
        from verirank_core.trajectories import TRAJECTORIES_FILE

        goals, arm_dir = self.goals, run.path
        extractions = read_jsonl(run / "extraction.jsonl", Extraction)
        queries = {q.qid: q for q in read_jsonl(run / "queries.jsonl", Query)}
        jobs, skipped = plan_jobs(extractions, queries)
        parts = build_parts(config)
        devices: dict[str, Any] = {}

        class Outcome(Record):
            key_fields = ("qid", "url")
            qid: str
            url: str
            goal_reached: bool

        with JsonlAppender(run / "execution.jsonl", ExecutionResult) as results, \
                LineLog(run / TRAJECTORIES_FILE) as trajectories, \
                JsonlAppender(run / "outcomes.jsonl", Outcome) as outcomes:
            for result in skipped:
                results.append(result)
            todo = [j for j in jobs if not results.done(j.key)]
            log(f"{arm_dir.name}: {len(todo)} pages to execute ({len(jobs) - len(todo)} done before)")
            for i, job in enumerate(todo, 1):
                world, goal = goals[job.qid]
                if world not in devices:
                    devices[world] = SimDevice.open(world)
                device = devices[world]
                job.attempts = 1
                try:
                    page = run_job(job, device, parts, run.path, config)
                except DeviceError as exc:
                    # e.g. the page launches an app the world does not have: the simulator refuses it as a
                    # device failure; the pool would retry elsewhere and give up, so record that at once
                    devices.pop(world).close()
                    outcomes.append(Outcome(qid=job.qid, url=job.url, goal_reached=False))
                    results.append(ExecutionResult(qid=job.qid, url=job.url, rank=job.rank,
                                                   status=ExecutionStatus.DEVICE_FAILED, reason=str(exc)[-500:],
                                                   stop_reason=StopReason.DEVICE_ERROR, attempts=1))
                    continue
                # the label: read after the episode, never by the agent or the judge
                outcomes.append(Outcome(qid=job.qid, url=job.url,
                                        goal_reached=device.simulator.goal_satisfied(goal)))
                if page.trajectory is not None:
                    trajectories.append(page.trajectory)
                results.append_line(page.key, page.row)
                if i % 25 == 0:
                    log(f"{arm_dir.name}: {i}/{len(todo)}")
        for device in devices.values():
            device.close()
        return {"pages": len(extractions)}


def run_arm(stage1: Path, arm_dir: Path, config: RunConfig, goals: dict[str, tuple[str, str]]) -> Path:
    """Execute every page of ``stage1`` into ``arm_dir`` (resumable), recording goal outcomes; then features."""
    from ranking.pipeline import FeaturesStage
    from verirank_core.stages import run_stages
    from verirank_core.store import RunDir

    run = RunDir(arm_dir).ensure()
    for name in ("queries.jsonl", "serp.jsonl", "pages.jsonl", "extraction.jsonl"):
        if not (run / name).exists():
            shutil.copyfile(stage1 / name, run / name)
    run_stages(run, config, [_GoalExecuteStage(goals), FeaturesStage()], pipeline="experiment",
               echo=lambda line: None, reuse=True, hint="use another --out, or delete the folder to start over")
    return run.path


# --- measures -----------------------------------------------------------------------------------


def execution_measures(arm_dir: Path, qrels: dict) -> dict[str, Any]:
    """Success, repairs and judge agreement of one arm (see the module docstring)."""
    import json

    from verirank_core.execution_records import ExecutionResult, ExecutionStatus
    from verirank_core.store import read_jsonl
    from verirank_core.trajectories import RunTrajectories

    reached = {}
    for line in (arm_dir / "outcomes.jsonl").read_text("utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            reached[(row["qid"], row["url"])] = bool(row["goal_reached"])
    rows = [r for r in read_jsonl(arm_dir / "execution.jsonl", ExecutionResult) if r.status == ExecutionStatus.EXECUTED]
    n = len(rows)
    relevant = [r for r in rows if qrels.get(r.qid, {}).get(r.url, 0) > 0]
    other = [r for r in rows if qrels.get(r.qid, {}).get(r.url, 0) <= 0]
    repaired = 0
    trajectories = RunTrajectories(arm_dir)
    for r in rows:
        traj = trajectories.load(r)
        repaired += any(s.deviation and s.action.rationale.startswith(MAP_PREFIX) for s in traj.steps)

    def share(items: list, pred) -> Optional[float]:
        return sum(1 for x in items if pred(x)) / len(items) if items else None

    complete = {r.key(): r.f4 >= 1.0 for r in rows}
    return {
        "executed_pages": n,
        "success": share(rows, lambda r: reached[r.key()]),
        "success_relevant": share(relevant, lambda r: reached[r.key()]),
        "success_not_relevant": share(other, lambda r: reached[r.key()]),
        "relevant_pages": len(relevant),
        "repaired_pages": repaired,
        "mean_deviations": float(np.mean([r.n_deviations for r in rows])) if rows else None,
        "judge_vs_goal": share(rows, lambda r: complete[r.key()] == reached[r.key()]),
        "judge_vs_qrels": share(rows, lambda r: complete[r.key()] == (qrels.get(r.qid, {}).get(r.url, 0) > 0)),
        "f4_1_but_goal_missed": sum(1 for r in rows if complete[r.key()] and not reached[r.key()]),
        "goal_reached_but_f4_below_1": sum(1 for r in rows if reached[r.key()] and not complete[r.key()]),
    }


def cross_validated_scores(table: Any, features: list[str], config: RunConfig, seed: int) -> np.ndarray:
    """LR scores for every row, each query scored by a model fitted on the other folds."""
    from ranking.models.data import frame_to_ltr

    qids = sorted(set(table["qid"]))
    random.Random(seed).shuffle(qids)
    folds = [set(qids[i::FOLDS]) for i in range(FOLDS)]
    scores = np.zeros(len(table))
    for held in folds:
        if not held:
            continue
        train_rows = table[~table["qid"].isin(held)]
        test_mask = table["qid"].isin(held).to_numpy()
        train = frame_to_ltr(train_rows, "label", features, where="cross-validation fold")
        if train.y.sum() == 0:
            continue  # nothing to learn from: those queries keep score 0 (original order)
        model = fit_ranker("lr", train, None, config)
        test = frame_to_ltr(table[test_mask], "label", features, where="cross-validation fold")
        # frame_to_ltr orders rows by query then rank: map the scores back by (qid, url)
        predicted = dict(zip(zip(test.qids, test.docs), model.predict(test.X, test.qids)))
        scores[test_mask] = [predicted[(q, u)] for q, u in zip(table[test_mask]["qid"], table[test_mask]["url"])]
    return scores


def ranking_measures(table: Any, qrels: dict, config: RunConfig, seed: int) -> dict[str, Any]:
    from ranking.metrics import evaluate, oracle_run

    order = config.ranking.rerank.order
    judged = set(table["qid"])
    runs = {
        "Oracle": {q: d for q, d in oracle_run(qrels).items() if q in judged},
        "Original order": baseline_run(table, "original"),
        "F4 only": baseline_run(table, "f4"),
        "LR (F1-F18)": ordered_run(table, cross_validated_scores(table, list(PAPER), config, seed), order),
        "LR (F1-F18 + deviations)": ordered_run(
            table, cross_validated_scores(table, [*PAPER, DEVIATION], config, seed), order),
    }
    return {name: evaluate(run, qrels, METRICS).mean for name, run in runs.items()}


def deviation_weight(table: Any, config: RunConfig) -> Optional[float]:
    """The LR weight of ``n_deviations_norm`` fitted on every query (its sign is what matters)."""
    from ranking.models.data import frame_to_ltr

    data = frame_to_ltr(table, "label", [*PAPER, DEVIATION], where="ablation table")
    if data.y.sum() == 0:
        return None
    model = fit_ranker("lr", data, None, config)
    weights = model.feature_importance() or {}
    return weights.get(DEVIATION)


# --- the experiment -----------------------------------------------------------------------------


def run(argv: Optional[list[str]] = None) -> dict[str, Any]:
    from ranking.features import attach_labels
    from verirank_core.store import read_parquet

    args = base_parser("python -m experiments.uimap_ablation", __doc__.split("\n\n")[0]).parse_args(argv)
    setup = prepare(args)
    folder = setup.out / "uimap"
    bench = Path(args.bench) if args.bench else ensure_real_bench(folder / "bench", args.small, args.seed)
    qrels = bench_qrels(bench)
    goals = read_goals(bench)
    base = pipeline_config(setup.config, bench, 1)
    stage1 = folder / "stage1"
    run_pipeline(bench, stage1, arm_config(base, False), until="extract")

    measures: dict[str, Any] = {}
    for label, use_map in ARMS:
        cfg = arm_config(base, use_map)
        arm_dir = run_arm(stage1, folder / ("map" if use_map else "nomap"), cfg, goals)
        table = attach_labels(read_parquet(arm_dir / "features.parquet"), qrels)
        measures[label] = {
            "execution": execution_measures(arm_dir, qrels),
            "ranking": ranking_measures(table, qrels, cfg, args.seed),
            "deviation_weight": deviation_weight(table, cfg),
            "pages": len(table), "queries": int(table["qid"].nunique()), "relevant": int((table["label"] > 0).sum()),
        }

    facts = run_facts(setup, bench)
    shown = f"OUT/{bench.relative_to(setup.out)}" if bench.is_relative_to(setup.out) else str(bench)
    markdown = format_report(measures, facts, shown, args.small)
    data = {"experiment": NAME, "size": setup.size, **facts, "arms": measures}
    with tracked(setup, NAME, {"bench": str(bench)}) as tracker:
        for label, m in measures.items():
            prefix = "map." if label == "with map" else "nomap."
            tracker.metrics({k: v for k, v in m["execution"].items() if isinstance(v, (int, float))}, prefix=prefix)
            for system, values in m["ranking"].items():
                tracker.metrics(values, prefix=f"{prefix}{system.replace(' ', '_')}.")
        paths = write_result(setup, NAME, markdown, {**data, "mlflow_run_id": tracker.run_id})
        tracker.artifacts(list(paths.values()))
    return {**data, "paths": paths}


def _pct(x: Optional[float]) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def format_report(measures: dict[str, Any], facts: dict[str, Any], bench: str, small: bool) -> str:
    arms = list(measures)
    first = measures[arms[0]]
    ex_rows = []
    for key, title in (("executed_pages", "pages executed"), ("success", "execution success (goal reached)"),
                       ("success_relevant", "  on relevant pages"), ("success_not_relevant", "  on non-relevant pages"),
                       ("repaired_pages", "pages with a UI-map repair"), ("mean_deviations", "deviations per page"),
                       ("judge_vs_goal", "judge agreement: F4 = 1 vs goal reached"),
                       ("judge_vs_qrels", "judge agreement: F4 = 1 vs qrels label"),
                       ("f4_1_but_goal_missed", "F4 = 1 but goal missed"),
                       ("goal_reached_but_f4_below_1", "goal reached but F4 < 1")):
        cells = []
        for arm in arms:
            v = measures[arm]["execution"][key]
            cells.append(_pct(v) if key.startswith(("success", "judge")) else fmt(v, 2))
        ex_rows.append([title, *cells])
    rank_rows = []
    for system in first["ranking"]:
        for arm in arms:
            rank_rows.append([f"{system}, {arm}", *(measures[arm]["ranking"][system][m] for m in METRICS)])
    weights = ", ".join(f"{arm}: {fmt(measures[arm]['deviation_weight'])}" for arm in arms)
    return "\n".join([
        f"# UI-map ablation on the real-app worlds ({'small' if small else 'full'})",
        "",
        f"Benchmark `{bench}`: {first['queries']} queries, {first['pages']} pages ({first['relevant']} relevant by "
        f"literal replay); worlds {', '.join(facts['benchmark'].get('worlds') or []) or 'n/a'}. "
        f"Predictor `{facts['predictor']}`, judge `{facts['judge']}`. Only `execution.agent.use_ui_map` differs "
        "between the arms; stage 1 (extraction) is shared.",
        "",
        "## Execution",
        "",
        md_table(["", *arms], ex_rows),
        "Execution success reads the world's goal after each episode (labels, this experiment only). A relevant page "
        "is one whose steps, followed literally, reach the goal; success on a non-relevant page means the agent "
        "repaired or worked around its steps.",
        "",
        "## Ranking",
        "",
        md_table(["System, arm", *METRICS], rank_rows),
        f"LR: pairwise logistic regression, {FOLDS}-fold cross-validation over queries (each query ranked by a model "
        "that never saw it), ordered "
        f"`verified-first`/`score` per `ranking.rerank.order`. Weight of `{DEVIATION}` when fitted on all queries: "
        f"{weights}.",
        "",
        f"git {facts['git_sha'][:10]}; {facts['date']}.",
        "",
    ])


main = entry_point(run)

if __name__ == "__main__":
    raise SystemExit(main())
