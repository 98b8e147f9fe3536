"""Run every extracted page on a pool of devices, resumably.

``execute_run(run_dir, config)`` reads ``DIR/extraction.jsonl`` and writes
``DIR/execution.jsonl`` (one :class:`ExecutionResult` per page) and
``DIR/trajectories/<qid>/<page_id>/trajectory.json``.

How the pool behaves:

* one worker per device spec in ``execution.devices`` (repeat a spec to run
  several simulators of the same world);
* a page whose query names a ``world`` is run on ``sim:<world>``: a sim
  worker re-opens its simulator on that world (cheap), an adb worker takes
  any page;
* a device that fails mid-trajectory (``DeviceError``, or a trajectory that
  stopped with ``device_error``) is closed and re-opened, and the page goes
  back to the queue to be tried on another worker, up to ``max_attempts``;
* each finished page is appended as one whole line, so a run killed halfway
  resumes where it stopped with no page lost or duplicated.

Executors: ``threads`` (default) or ``ray`` for users who outgrow one machine.
"""

from __future__ import annotations

import hashlib
import queue
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from execution.records import ExecutionResult, ExecutionStatus, StopReason, Trajectory
from extraction.records import Extraction, Query
from verirank.errors import DeviceError, ExecutionError
from verirank.store import JsonlAppender, RunDir, read_jsonl

__all__ = ["Job", "plan_jobs", "page_id", "execute_run", "run_job"]


def page_id(url: str) -> str:
    """A short, stable folder name for a page."""
    return hashlib.sha1(url.encode("utf-8")).hexdigest()[:12]


@dataclass
class Job:
    qid: str
    url: str
    rank: int
    query: str
    instructions: list[str]
    app: Optional[str] = None
    world: Optional[str] = None
    attempts: int = 0
    failures: list[str] = field(default_factory=list)
    #: ids of the device slots this page already failed on
    avoid: set[int] = field(default_factory=set)

    @property
    def key(self) -> tuple[str, str]:
        return (self.qid, self.url)

    def traj_rel(self) -> str:
        return f"trajectories/{self.qid}/{page_id(self.url)}"


def _package(app: Optional[str]) -> Optional[str]:
    """``Query.app`` may be a package (``com.android.settings``) or a name (``Settings``).

    Only a package can be launched; a name is left to the page's own "Open ..." step.
    """
    if app and "." in app and " " not in app:
        return app
    return None


def plan_jobs(
    extractions: list[Extraction], queries: dict[str, Query]
) -> tuple[list[Job], list[ExecutionResult]]:
    """Split pages into jobs to run and results that need no device (no steps)."""
    jobs: list[Job] = []
    skipped: list[ExecutionResult] = []
    for ex in extractions:
        q = queries.get(ex.qid)
        if not ex.has_steps:
            skipped.append(
                ExecutionResult(
                    qid=ex.qid, url=ex.url, rank=ex.rank, status=ExecutionStatus.SKIPPED,
                    reason=f"no steps to execute (extraction status {ex.status.value}"
                    + (f": {ex.reason}" if ex.reason else "") + ")",
                    stop_reason=StopReason.NO_INSTRUCTIONS,
                )
            )
            continue
        extra = (q.model_extra or {}) if q is not None else {}
        jobs.append(
            Job(
                qid=ex.qid, url=ex.url, rank=ex.rank,
                query=q.query if q else ex.query,
                instructions=[s.text for s in ex.steps],
                app=_package(q.app if q else None) or extra.get("package"),
                world=extra.get("world"),
            )
        )
    return jobs, skipped


# --- one page on one device ----------------------------------------------------

@dataclass
class StageParts:
    """What a worker needs besides a device; built once per worker."""

    predictor: Any
    judge: Any
    safety: Any = None
    proxy: Any = None


def build_parts(config: Any, llm_client: Any = None) -> StageParts:
    """Predictor, judge, safety policy and proxy from the execution config."""
    from execution.judge import make_judge
    from execution.predict import make_predictor
    from execution.proxy import ExecutionProxy
    from execution.safety import SafetyPolicy

    return StageParts(
        predictor=make_predictor(config.execution, llm_client=llm_client),
        judge=make_judge(config.execution, llm_client=llm_client),
        safety=SafetyPolicy.from_config(config.execution),
        proxy=ExecutionProxy.from_config(config.execution),
    )


def run_job(job: Job, device: Any, parts: StageParts, run_dir: Path, config: Any) -> ExecutionResult:
    """Run one page on one device and judge it. Raises DeviceError on device failure."""
    from execution.agent import run_episode

    out_dir = run_dir / job.traj_rel()
    if out_dir.exists():  # leftovers of a failed attempt
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    traj: Trajectory = run_episode(
        job.instructions, parts.predictor, device,
        qid=job.qid, url=job.url, app=job.app,
        max_steps=config.execution.max_steps,
        out_dir=out_dir if config.execution.save_screens else None,
        safety=parts.safety, proxy=parts.proxy, query=job.query,
        cycle_repeats=config.execution.agent.cycle_repeats,
        extra_context=extra_context(config),
    )
    if traj.stop_reason == StopReason.DEVICE_ERROR:
        raise DeviceError(f"{device.spec}: device failed during {job.url}: {traj.stop_detail}")
    if not config.execution.save_screens:
        from execution.agent import save_trajectory

        save_trajectory(out_dir, traj)
    verdict = parts.judge.judge(traj, out_dir)
    actions = traj.steps
    return ExecutionResult(
        qid=job.qid, url=job.url, rank=job.rank, status=ExecutionStatus.EXECUTED,
        reason=traj.stop_detail,
        device=device.spec, world=traj.world, app_version=traj.app_version,
        os_version=traj.os_version,
        n_instructions=len(job.instructions),
        n_actions=sum(1 for s in actions if s.ok),
        n_failed_actions=sum(1 for s in actions if not s.ok),
        n_deviations=sum(1 for s in actions if s.deviation),
        deviation_kinds=dict(traj.deviations),
        stop_reason=traj.stop_reason,
        f4=float(verdict.score), judge=verdict.name, judge_detail=list(verdict.detail),
        trajectory=f"{job.traj_rel()}/trajectory.json",
        attempts=job.attempts,
        elapsed_s=round(time.perf_counter() - started, 3),
    )


def extra_context(config: Any) -> dict[str, Any]:
    """Credentials for the predictor, read from the environment at run time."""
    import os

    creds = {name: os.environ[var] for name, var in config.execution.credentials_env.items() if var in os.environ}
    return {"credentials": creds} if creds else {}


def device_opener(config: Any) -> Callable[[str], Any]:
    """open_device with the configured adb options for ``adb:`` specs."""
    from execution.device import open_device

    adb = config.execution.adb

    def open_(spec: str) -> Any:
        if spec.startswith("adb:"):
            return open_device(
                spec, adb_host=adb.adb_host, adb_port=adb.adb_port, reset=adb.reset,
                snapshot_name=adb.snapshot_name, dump_retries=adb.dump_retries, timeout=adb.timeout_s,
            )
        return open_device(spec)

    return open_


def _failed(job: Job) -> ExecutionResult:
    return ExecutionResult(
        qid=job.qid, url=job.url, rank=job.rank, status=ExecutionStatus.DEVICE_FAILED,
        reason="; ".join(job.failures)[-2000:], attempts=job.attempts,
        stop_reason=StopReason.DEVICE_ERROR,
    )


# --- the thread pool -----------------------------------------------------------

class _Worker:
    """One device slot. A sim slot may switch worlds; an adb slot never does."""

    def __init__(self, spec: str, opener: Callable[[str], Any]):
        self.base_spec = spec
        self.opener = opener
        self.device: Any = None
        self.spec: Optional[str] = None

    @property
    def is_sim(self) -> bool:
        return self.base_spec.startswith("sim:")

    def spec_for(self, job: Job, route_by_world: bool) -> str:
        if self.is_sim and route_by_world and job.world:
            return f"sim:{job.world}"
        return self.base_spec

    def ensure(self, spec: str) -> Any:
        if self.device is None or self.spec != spec:
            self.drop()
            self.device = self.opener(spec)
            self.spec = spec
        return self.device

    def drop(self) -> None:
        if self.device is not None:
            try:
                self.device.close()
            except Exception:  # closing a dead device must not hide the real error
                pass
        self.device = None
        self.spec = None


def _run_threads(
    jobs: list[Job], config: Any, run_dir: Path, appender: JsonlAppender,
    parts_factory: Callable[[], StageParts], opener: Callable[[str], Any],
    on_done: Callable[[ExecutionResult], None],
) -> None:
    specs = list(config.execution.devices)
    if not specs:
        raise ExecutionError("no devices configured: pass --devices sim:WORLD or adb:SERIAL")
    todo: "queue.Queue[Job]" = queue.Queue()
    for job in jobs:
        todo.put(job)
    pending = [len(jobs)]
    lock = threading.Lock()
    errors: list[BaseException] = []

    def finish(result: ExecutionResult) -> None:
        appender.append(result)
        on_done(result)
        with lock:
            pending[0] -= 1

    def work(slot: _Worker) -> None:
        parts = parts_factory()
        try:
            while True:
                with lock:
                    if pending[0] <= 0:
                        return
                try:
                    job = todo.get(timeout=0.1)
                except queue.Empty:
                    continue
                # a page that failed on this device goes to another one when there is one
                if id(slot) in job.avoid and len(job.avoid) < len(slots):
                    todo.put(job)
                    time.sleep(0.01)
                    continue
                job.attempts += 1
                spec = slot.spec_for(job, config.execution.route_by_world)
                try:
                    device = slot.ensure(spec)
                    result = run_job(job, device, parts, run_dir, config)
                except DeviceError as exc:
                    slot.drop()
                    job.failures.append(f"{spec}: {exc}")
                    job.avoid.add(id(slot))
                    if job.attempts >= config.execution.max_attempts:
                        finish(_failed(job))
                    else:
                        todo.put(job)
                    continue
                finish(result)
        except BaseException as exc:  # a bug: stop the pool, keep what is saved
            errors.append(exc)
            with lock:
                pending[0] = 0
        finally:
            slot.drop()

    slots = [_Worker(spec, opener) for spec in specs]
    threads = [threading.Thread(target=work, args=(s,), daemon=True) for s in slots]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


# --- Ray -----------------------------------------------------------------------

def _ray_task(job: Job, spec: str, config_json: dict, run_dir: str) -> dict:
    """Runs inside a Ray worker: open the device, run the page, return the record."""
    from execution.device import open_device
    from verirank.config import RunConfig

    config = RunConfig.model_validate(config_json)
    parts = build_parts(config)
    device = open_device(spec)
    try:
        return run_job(job, device, parts, Path(run_dir), config).to_json_dict()
    finally:
        device.close()


def _run_ray(
    jobs: list[Job], config: Any, run_dir: Path, appender: JsonlAppender,
    on_done: Callable[[ExecutionResult], None],
) -> None:
    import ray

    if not ray.is_initialized():
        if config.execution.ray_address:
            ray.init(address=config.execution.ray_address, ignore_reinit_error=True)
        else:
            ray.init(num_cpus=config.execution.ray_num_cpus, include_dashboard=False,
                     ignore_reinit_error=True, log_to_driver=False)
    remote = ray.remote(max_retries=0)(_ray_task)
    specs = list(config.execution.devices)
    cfg_json = config.to_manifest()
    in_flight: dict[Any, tuple[Job, str]] = {}
    backlog = list(jobs)
    turn = 0

    def submit(job: Job) -> None:
        nonlocal turn
        base = specs[turn % len(specs)]
        turn += 1
        spec = f"sim:{job.world}" if base.startswith("sim:") and job.world and config.execution.route_by_world else base
        job.attempts += 1
        in_flight[remote.remote(job, spec, cfg_json, str(run_dir))] = (job, spec)

    limit = max(1, len(specs))
    while backlog or in_flight:
        while backlog and len(in_flight) < limit:
            submit(backlog.pop(0))
        done, _ = ray.wait(list(in_flight), num_returns=1)
        ref = done[0]
        job, spec = in_flight.pop(ref)
        try:
            result = ExecutionResult.parse(ray.get(ref))
        except Exception as exc:  # RayTaskError wraps DeviceError
            cause = getattr(exc, "cause", exc)
            if not isinstance(cause, DeviceError):
                raise
            job.failures.append(f"{spec}: {cause}")
            if job.attempts >= config.execution.max_attempts:
                result = _failed(job)
            else:
                backlog.append(job)
                continue
        appender.append(result)
        on_done(result)


# --- the stage -----------------------------------------------------------------

def execute_run(
    run_dir: Path | str,
    config: Any,
    *,
    llm_client: Any = None,
    opener: Callable[[str], Any] | None = None,
    parts_factory: Callable[[], StageParts] | None = None,
    progress: Callable[..., Any] | None = None,
) -> dict[str, int]:
    """Stage 2 over a run directory; returns counts by status."""
    run = RunDir(run_dir)
    src = run / "extraction.jsonl"
    if not src.exists():
        raise ExecutionError(f"{src} not found: run `verirank extract {run.path}` first")
    extractions = read_jsonl(src, Extraction)
    queries: dict[str, Query] = {}
    if (run / "queries.jsonl").exists():
        queries = {q.qid: q for q in read_jsonl(run / "queries.jsonl", Query)}
    run.start_stage("execute", config.to_manifest())

    jobs, skipped = plan_jobs(extractions, queries)
    counts: dict[str, int] = {}
    bar = progress(total=len(extractions), desc="execute", unit="page") if progress else None

    def on_done(result: ExecutionResult) -> None:
        counts[result.status.value] = counts.get(result.status.value, 0) + 1
        if bar is not None:
            bar.update(1)

    with JsonlAppender(run / "execution.jsonl", ExecutionResult) as appender:
        already = sum(1 for ex in extractions if appender.done((ex.qid, ex.url)))
        counts["resumed"] = already
        if bar is not None:
            bar.update(already)
        for result in skipped:
            if appender.append(result):
                on_done(result)
        todo = [j for j in jobs if not appender.done(j.key)]
        if config.execution.executor == "ray":
            _run_ray(todo, config, run.path, appender, on_done)
        else:
            _run_threads(
                todo, config, run.path, appender,
                parts_factory or (lambda: build_parts(config, llm_client)),
                opener or device_opener(config), on_done,
            )
    if bar is not None:
        bar.close()
    run.finish_stage("execute", counts)
    return counts
