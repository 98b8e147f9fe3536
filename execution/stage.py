"""Stage 2, ``execute``: run every extracted page on a pool of devices, resumably.

``execute_run(run_dir, config)`` reads ``DIR/extraction.jsonl`` and writes
``DIR/execution.jsonl`` (one :class:`ExecutionResult` per page),
``DIR/trajectories.jsonl`` (one :class:`Trajectory` per page run on a device;
``verirank_core/trajectories.py``) and the screens they name in ``DIR/screens/``.
Read top-down, it is the whole stage:

1. plan: pages with steps become jobs, the others are recorded as skipped
   (``execution/jobs.py``);
2. resume: pages whose rows, trajectories and screens survived are not run
   again (:class:`ResumeCheck`);
3. reuse: pages an earlier run verified unchanged on a device like these are
   recorded from the verdict cache (``execution/verdict_cache.py``);
4. run the rest: :func:`~execution.executors.choose_executor` picks threads,
   processes or Ray, and :func:`~execution.pool.run_pool` schedules the pages on
   one slot per device (``execution/slots.py``), each page run by
   :func:`~execution.jobs.run_job` (the agent loop, then the judge).

Each finished page is appended as one whole line (its trajectory first, then
its row), so a run killed halfway resumes where it stopped with no page lost
or duplicated. :class:`ExecuteStage` is the stage object the one runner
(``verirank_core/stages.py``) runs.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional

from verirank_core.config import RunConfig
from verirank_core.errors import SchemaError, StoreError
from verirank_core.execution_records import ExecutionResult, ExecutionStatus
from verirank_core.extraction_records import Extraction, Query
from verirank_core.stages import Counts, Progress, digest, require
from verirank_core.store import JsonlAppender, LineLog, RunDir, read_jsonl
from verirank_core.trajectories import TRAJECTORIES_FILE, RunTrajectories
from execution.executors import choose_executor, slot_factory, warm_up_workers
from execution.farm import farm_config, is_farm
from execution.jobs import PageOutput, StageParts, plan_jobs, run_vectors
from execution.pool import run_pool, spec_for
from execution.slots import Opener, device_opener

if TYPE_CHECKING:
    from verirank_core.llm import LLMClient

__all__ = ["ExecuteStage", "execute_run", "ResumeCheck"]

#: what stage 2 reads from the run directory (checked with the one "run `verirank Y` first" message)
REQUIRES = ("extraction.jsonl",)


def execute_run(
    run_dir: Path | str,
    config: RunConfig,
    *,
    llm_client: Optional[LLMClient] = None,
    opener: Optional[Opener] = None,
    parts_factory: Optional[Callable[[], StageParts]] = None,
    progress: Optional[Progress] = None,
) -> dict[str, int]:
    """Stage 2 over a run directory; returns counts by status."""
    run = RunDir(run_dir)
    require(run, REQUIRES)  # for callers that skip the runner (tests, benchmarks, library users)
    farm = is_farm(config.execution.devices)
    config = farm_config(config)  # [farm]: the devices the Ray cluster advertises
    extractions = read_jsonl(run / "extraction.jsonl", Extraction)
    queries: dict[str, Query] = {}
    if (run / "queries.jsonl").exists():
        queries = {q.qid: q for q in read_jsonl(run / "queries.jsonl", Query)}

    jobs, skipped = plan_jobs(extractions, queries)
    counts: dict[str, int] = {}
    bar = progress(total=len(extractions), desc="execute", unit="page") if progress else None

    def on_done(status: ExecutionStatus) -> None:
        counts[status.value] = counts.get(status.value, 0) + 1
        if bar is not None:
            bar.update(1)

    # a row counts as done only if its trajectory and screens survived; trajectories are appended
    # before their rows, so every stored row's trajectory was written (the last second may be lost)
    with JsonlAppender(run / "execution.jsonl", ExecutionResult, keep=ResumeCheck(run.path)) as appender, \
            LineLog(run / TRAJECTORIES_FILE) as trajectories:
        already = sum(1 for ex in extractions if appender.done((ex.qid, ex.url)))
        counts["resumed"] = already
        if bar is not None:
            bar.update(already)
        for result in skipped:
            if appender.append(result):
                on_done(result.status)
        todo = [j for j in jobs if not appender.done(j.key)]
        # pages verified by an earlier run, unchanged, on a device like these: recorded from the
        # verdict cache, run on no device (execution/verdict_cache.py)
        from execution.verdict_cache import VerdictReuse

        # a farm's phones are reached from their own hosts only, so this process cannot ask what they are
        verdicts = None if farm else VerdictReuse.open(
            run.path, config, opener=opener or device_opener(config), route=spec_for,
            injected=parts_factory is not None or llm_client is not None)
        if verdicts is not None:
            reused, todo = verdicts.take(todo)
            for page in (PageOutput.of(*verdict) for verdict in reused):
                trajectories.append(page.trajectory)
                if appender.append_line(page.key, page.row):
                    on_done(page.status)
            counts["reused"] = len(reused)
        executor = choose_executor(config, injected=opener is not None or parts_factory is not None,
                                   pages=len(todo))
        make_slot = slot_factory(executor, config, run.path, llm_client=llm_client, opener=opener,
                                 parts_factory=parts_factory)
        finished = threading.Lock()

        def finish(page: PageOutput) -> None:
            with finished:  # slots finish concurrently; counts and the bar are not thread-safe
                if appender.done(page.key):
                    return
                if page.trajectory is not None:
                    trajectories.append(page.trajectory)
                if appender.append_line(page.key, page.row):
                    on_done(page.status)

        if todo:
            # pages run in this process only with threads; workers and actors open the cache themselves
            here = run_vectors(config, run.path) if executor == "threads" else nullcontext()
            with _collector_ignores_what_is_loaded(), here:
                run_pool(todo, config, make_slot, finish)
    if bar is not None:
        bar.close()
    if verdicts is not None:  # the pages run now, for the runs to come
        verdicts.store(todo)
        verdicts.close()
    return counts


class ResumeCheck:
    """Whether a stored row's trajectory survived, with the screen files it names.

    Neither trajectories.jsonl's last second nor the screens are fsynced, so
    a power cut can lose them after the row was saved; such a row is dropped
    when the stage resumes, and its page runs again. One check serves every
    row of a resume: the trajectories file is scanned once, and a screen
    shared by many pages is looked for once. A ``device_failed`` row is
    dropped too: its page runs again when the stage resumes.
    """

    def __init__(self, run_dir: Path | str):
        self.trajectories = RunTrajectories(run_dir)
        self.present: set[str] = set()

    def __call__(self, result: ExecutionResult) -> bool:
        if result.status == ExecutionStatus.DEVICE_FAILED:
            return False  # no device could run the page then (a phone unplugged, adb gone): try again
        if not result.trajectory:
            return True
        try:
            data = self.trajectories.data(result)
            names = [data.get("final_xml"), data.get("final_screenshot")]
            for step in data.get("steps") or []:
                names += [step.get("xml"), step.get("screenshot")]
        except (StoreError, SchemaError, AttributeError):
            return False
        folder = self.trajectories.folder_of(result)
        for name in dict.fromkeys(names):
            if not isinstance(name, str):
                continue
            file = os.path.normpath(folder / name)
            if file not in self.present:
                if not os.path.isfile(file):
                    return False
                self.present.add(file)
        return True


@contextmanager
def _collector_ignores_what_is_loaded() -> Iterator[None]:
    """Hide the objects that exist now (torch, transformers, the world...) from the garbage collector
    while pages run here: a full collection walks them all, a quarter of a second each time.
    Worker processes do the same for good (``gc.freeze`` in ``execution.worker_preload``)."""
    import gc

    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


class ExecuteStage:
    """``execute``: stage 2 as the runner (:mod:`verirank_core.stages`) runs it; see :func:`execute_run`."""

    name = "execute"
    append_only = True
    requires = REQUIRES

    def __init__(self, llm_client: Optional[LLMClient] = None, opener: Optional[Opener] = None):
        self.llm_client, self.opener = llm_client, opener

    def fingerprint(self, cfg: RunConfig) -> Any:
        # how many devices, which executor, how often to retry and which caches change the speed,
        # not the records
        execution = cfg.execution.model_dump(mode="json", exclude={
            "devices", "executor", "process_min_pages", "ray_address", "ray_num_cpus", "max_attempts",
            "vector_cache", "vector_cache_max_texts", "verdict_cache", "reuse", "verdict_max_age_days"})
        uses_llm = "llm" in (cfg.execution.predictor, cfg.execution.judge)
        return {"execution": execution, "llm": digest(cfg.llm) if uses_llm else None}

    def warm_up(self, cfg: RunConfig) -> None:
        warm_up_workers(cfg, injected=self.opener is not None)

    def __call__(self, run: RunDir, cfg: RunConfig, progress: Progress) -> Counts:
        # the LLM client is built where it is used (build_slot), in a worker process too
        return execute_run(run.path, cfg, llm_client=self.llm_client, opener=self.opener, progress=progress)
