"""Run every extracted page on a pool of devices, resumably.

``execute_run(run_dir, config)`` reads ``DIR/extraction.jsonl`` and writes
``DIR/execution.jsonl`` (one :class:`ExecutionResult` per page),
``DIR/trajectories.jsonl`` (one :class:`Trajectory` per page run on a device;
``verirank_core/trajectories.py``) and the screens they name in ``DIR/screens/``.

How the pool behaves:

* one worker per device spec in ``execution.devices`` (repeat a spec to run
  several simulators of the same world);
* a page whose query names a ``world`` is run on ``sim:<world>``: a sim
  worker re-opens its simulator on that world (cheap), an adb worker takes
  any page;
* a device that fails mid-trajectory (``DeviceError``, or a trajectory that
  stopped with ``device_error``) is closed and re-opened, and the page goes
  back to the queue to be tried on another worker, up to ``max_attempts``;
* each finished page is appended as one whole line (its trajectory first,
  then its row), so a run killed halfway resumes where it stopped with no
  page lost or duplicated;
* a slot serialises its pages' lines itself (:class:`PageOutput`): the
  process that records them only writes bytes, and its CPU a page is taken
  from the same cores the workers run on.

Executors (``execution.executor``): every one schedules pages in :func:`run_pool`
and builds its device, predictor, judge and LLM client with :func:`build_slot`;
they differ only in where a slot lives. ``threads`` (adb devices wait on I/O),
``processes`` (one process per device: simulators are CPU-bound), ``ray`` (one
actor per device), and ``auto`` (the default: processes for several ``sim:``
devices, threads otherwise).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import queue
import threading
import time
from collections import deque
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterator, Optional

from verirank_core.execution_records import ExecutionResult, ExecutionStatus, StopReason, Trajectory
from verirank_core.extraction_records import Extraction, Query
from verirank_core.errors import DeviceError, ExecutionError, SchemaError, StoreError
from verirank_core.config import RunConfig
from verirank_core.store import JsonlAppender, LineLog, RunDir, json_line, read_jsonl
from verirank_core.trajectories import TRAJECTORIES_FILE, RunTrajectories
from verirank_core.vector_cache import cache_path_for
from execution.screen_store import SCREENS_DIR, ScreenStore

__all__ = ["Job", "PageOutput", "plan_jobs", "page_id", "execute_run", "run_job", "build_slot", "build_parts",
           "choose_executor", "run_pool", "ExecuteStage", "warm_up_workers", "ResumeCheck"]

log = logging.getLogger(__name__)


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


@dataclass(frozen=True)
class PageOutput:
    """A finished page as the slot that ran it serialised it: its line of execution.jsonl and,
    when it ran on a device, its line of trajectories.jsonl.

    Serialised where the page ran, so that the process recording pages only
    writes bytes: with worker processes, the recorder shares the workers' cores.
    """

    key: tuple[str, str]
    status: ExecutionStatus
    row: bytes
    trajectory: Optional[bytes] = None

    @classmethod
    def of(cls, result: ExecutionResult, trajectory: Optional[Trajectory] = None) -> "PageOutput":
        # a trajectory is 10-30 kB: pydantic's own JSON writer takes a quarter of the time of
        # model_dump + json.dumps (0.04 against 0.16 ms), a tenth of a simulated page
        line = trajectory.model_dump_json().encode("utf-8") + b"\n" if trajectory is not None else None
        return cls((result.qid, result.url), result.status, json_line(result), line)

    def result(self) -> ExecutionResult:
        """The row as a record (for callers that want more than the bytes)."""
        return ExecutionResult.parse(json.loads(self.row))


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


def llm_client_for(config: RunConfig, llm_client: Any = None) -> Any:
    """The LLM client the predictor or judge needs: ``llm_client``, else one built from ``config.llm``.

    Built where it is used (in a worker process too), so the client and its key are never
    pickled: the key is read from the environment variable named by ``llm.api_key_env``.
    """
    if config.execution.predictor != "llm" and config.execution.judge != "llm":
        return None
    if llm_client is not None:
        return llm_client
    from verirank_core.llm import LLMClient

    return LLMClient.from_config(config.llm)


def build_parts(config: RunConfig, llm_client: Any = None) -> StageParts:
    """Predictor, judge, safety policy and proxy from the execution config."""
    from execution.judge import make_judge
    from execution.predict import make_predictor
    from execution.proxy import ExecutionProxy
    from execution.safety import SafetyPolicy

    client = llm_client_for(config, llm_client)
    return StageParts(
        predictor=make_predictor(config.execution, llm_client=client),
        judge=make_judge(config.execution, llm_client=client),
        safety=SafetyPolicy.from_config(config.execution),
        proxy=ExecutionProxy.from_config(config.execution),
    )


def isolates(config: RunConfig, spec: str) -> bool:
    """Whether pages on ``spec`` get their settings restored (``execution.isolation``)."""
    mode = config.execution.isolation
    return mode == "on" or (mode == "auto" and spec.startswith("adb:"))


def run_job(job: Job, device: Any, parts: StageParts, run_dir: Path, config: RunConfig,
            screens: Optional[ScreenStore] = None) -> PageOutput:
    """Run one page on one device and judge it. Raises DeviceError on device failure.

    Returns the page's row and trajectory, for the caller to append to the
    run's execution.jsonl and trajectories.jsonl. ``screens``: the slot's
    store of the run's screen files (default: a new one on ``run_dir``).

    With isolation on, the device's settings are recorded before the page and
    restored after it, so the next page finds the device as this one did.
    """
    from execution.agent import run_episode

    started = time.perf_counter()
    before = device.snapshot_settings() if isolates(config, device.spec) else None
    traj: Trajectory = run_episode(
        job.instructions, parts.predictor, device,
        qid=job.qid, url=job.url, app=job.app,
        max_steps=config.execution.max_steps,
        # screens go to the store, named relative to the run directory, where trajectories.jsonl is
        out_dir=run_dir if config.execution.save_screens else None, trajectory_file=False,
        safety=parts.safety, proxy=parts.proxy, query=job.query,
        cycle_repeats=config.execution.agent.cycle_repeats,
        extra_context=extra_context(config),
        screenshots=config.execution.screenshot_mode(), screenshot_scale=config.execution.screenshot_scale,
        # one file per distinct screen, shared by the run's pages
        screens=screens if screens is not None else ScreenStore(run_dir / SCREENS_DIR),
    )
    # after a device error too: a phone that failed one command may still take `settings put`
    unrestored = restore_settings(device, before, config, job.url) if before is not None else []
    if traj.stop_reason == StopReason.DEVICE_ERROR:
        error = DeviceError(f"{device.spec}: device failed during {job.url}: {traj.stop_detail}"
                            + (f"; settings not restored: {', '.join(unrestored)}" if unrestored else ""))
        # the slot puts them back when it opens the device again (DeviceSlot)
        error.settings_owed = before if unrestored else None  # type: ignore[attr-defined]
        raise error
    verdict = parts.judge.judge(traj, run_dir)
    actions = traj.steps
    result = ExecutionResult(
        qid=job.qid, url=job.url, rank=job.rank, status=ExecutionStatus.EXECUTED,
        reason=traj.stop_detail,
        device=device.spec, world=traj.world, device_serial=traj.device_serial, device_model=traj.device_model,
        app=traj.app, app_version=traj.app_version, os_version=traj.os_version,
        n_instructions=len(job.instructions),
        n_actions=sum(1 for s in actions if s.ok),
        n_failed_actions=sum(1 for s in actions if not s.ok),
        n_deviations=sum(1 for s in actions if s.deviation),
        deviation_kinds=dict(traj.deviations),
        stop_reason=traj.stop_reason, settings_unrestored=unrestored,
        f4=float(verdict.score), judge=verdict.name, judge_detail=list(verdict.detail),
        goal_met_before=getattr(verdict, "goal_met_before", None),
        trajectory=TRAJECTORIES_FILE,
        attempts=job.attempts,
        elapsed_s=round(time.perf_counter() - started, 3),
    )
    return PageOutput.of(result, traj)


def restore_settings(device: Any, before: Any, config: RunConfig, url: str) -> list[str]:
    """Put back the settings a page changed (isolation); the ``NS/KEY`` names that could not be,
    or one line saying why none could (the device is gone)."""
    try:
        report = device.restore_settings(before, tuple(config.execution.isolation_ignore))
    except DeviceError as exc:
        log.warning("%s: could not restore the settings after %s: %s", device.spec, url, exc)
        return [f"all (the device did not answer: {exc})"[:500]]
    if report.failed:
        log.warning("%s: could not restore %s after %s", device.spec, ", ".join(report.failed), url)
    return list(report.failed)


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


def extra_context(config: RunConfig) -> dict[str, Any]:
    """Credentials for the predictor, read from the environment at run time."""
    creds = {name: os.environ[var] for name, var in config.execution.credentials_env.items() if var in os.environ}
    return {"credentials": creds} if creds else {}


def device_opener(config: RunConfig) -> Callable[[str], Any]:
    """open_device with the configured adb options for ``adb:`` specs."""
    from execution.devices import open_device

    adb = config.execution.adb

    def open_(spec: str) -> Any:
        if spec.startswith("adb:"):
            return open_device(
                spec, adb_host=adb.adb_host, adb_port=adb.adb_port, reset=adb.reset,
                snapshot_name=adb.snapshot_name, dump_retries=adb.dump_retries, timeout=adb.timeout_s,
                skip_unchanged_dumps=adb.skip_unchanged_dumps,
            )
        return open_device(spec)

    return open_


def _failed(job: Job) -> PageOutput:
    return PageOutput.of(ExecutionResult(
        qid=job.qid, url=job.url, rank=job.rank, status=ExecutionStatus.DEVICE_FAILED,
        reason="; ".join(job.failures)[-2000:], attempts=job.attempts,
        stop_reason=StopReason.DEVICE_ERROR,
    ))


# --- device slots: where pages run ------------------------------------------------

def spec_for(base_spec: str, job: Job, route_by_world: bool) -> str:
    """The device a page runs on: a sim slot follows the page's world, an adb slot never switches."""
    if base_spec.startswith("sim:") and route_by_world and job.world:
        return f"sim:{job.world}"
    return base_spec


class OneAtATime:
    """The slot protocol of :func:`run_pool` for a slot that runs a page when it is collected.

    A slot takes up to ``depth`` pages with ``submit(job, spec)`` and hands
    back the oldest one's :class:`PageOutput` with ``collect()`` (which raises
    ``DeviceError`` when the device failed on it). ``dropped()`` says whether
    the pages submitted after a failed one were lost with the device and must
    be queued again; a slot that runs one page at a time never loses any.
    """

    depth = 1

    def __init__(self) -> None:
        self._submitted: deque[tuple[Job, str]] = deque()

    def submit(self, job: Job, spec: str) -> None:
        self._submitted.append((job, spec))

    def collect(self) -> PageOutput:
        job, spec = self._submitted.popleft()
        return self.run(job, spec)

    def dropped(self) -> bool:
        return False

    def run(self, job: Job, spec: str) -> PageOutput:
        raise NotImplementedError


class DeviceSlot(OneAtATime):
    """One device and the parts that drive it, in this process.

    The device is opened on first use and re-opened on another world (sim) or
    after a failure; ``run`` raises ``DeviceError`` when the device failed.
    """

    def __init__(self, config: RunConfig, run_dir: Path, opener: Callable[[str], Any], parts: StageParts):
        super().__init__()
        self.config = config
        self.run_dir = Path(run_dir)
        self.opener = opener
        self.parts = parts
        self.device: Any = None
        self.spec: Optional[str] = None
        self.screens = ScreenStore(self.run_dir / SCREENS_DIR)
        #: spec -> the settings a page left changed when its device failed; restored on reopening
        self.settings_owed: dict[str, Any] = {}

    def run(self, job: Job, spec: str) -> PageOutput:
        try:
            if self.device is None or self.spec != spec:
                self.close()
                self.device = self.opener(spec)
                self.spec = spec
                if spec in self.settings_owed:  # a DeviceError here keeps them owed
                    report = self.device.restore_settings(self.settings_owed[spec],
                                                          tuple(self.config.execution.isolation_ignore))
                    del self.settings_owed[spec]
                    if report.failed:
                        log.warning("%s: could not restore %s after a failed page", spec, ", ".join(report.failed))
            return run_job(job, self.device, self.parts, self.run_dir, self.config, self.screens)
        except DeviceError as exc:
            owed = getattr(exc, "settings_owed", None)
            if owed is not None and spec not in self.settings_owed:  # the oldest snapshot is the clean one
                self.settings_owed[spec] = owed
            self.close()
            raise

    def close(self) -> None:
        if self.device is not None:
            try:
                self.device.close()
            except Exception:  # closing a dead device must not hide the real error
                pass
        self.device = None
        self.spec = None


def build_slot(
    config: RunConfig, run_dir: Path | str, *, llm_client: Any = None,
    opener: Callable[[str], Any] | None = None, parts_factory: Callable[[], StageParts] | None = None,
) -> DeviceSlot:
    """THE one place where a worker gets its device opener, predictor, judge and LLM client.

    Threads call it in this process; worker processes and Ray actors call it
    in theirs, from the config alone (``opener``/``parts_factory``/``llm_client``
    are in-process injections for tests and library users).
    """
    parts = parts_factory() if parts_factory is not None else build_parts(config, llm_client)
    return DeviceSlot(config, Path(run_dir), opener or device_opener(config), parts)


def one_thread_per_process() -> None:
    """Keep a worker process's math libraries on one thread: the pool already fills the cores.

    Several processes that each start an OpenMP pool as wide as the machine
    oversubscribe it, and their spinning threads slow every page severalfold.
    """
    import sys

    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def _slot_process(conn: Any, config_json: dict, run_dir: str) -> None:
    """A worker process: build a slot from the config, then run the pages the parent sends."""
    import gc
    import traceback

    from verirank_core.config import RunConfig

    one_thread_per_process()
    slot = None
    held = ExitStack()
    try:
        config = RunConfig.model_validate(config_json)
        slot = build_slot(config, run_dir)
        held.enter_context(_run_vectors(config, run_dir))
        gc.freeze()  # what the slot loaded lives as long as the worker: keep collections small
        conn.send(("ready", None))
        batches = _ReplyBatches(conn)
        while batches.take():
            job, spec = batches.jobs.popleft()
            started = time.perf_counter()
            try:
                reply = ("ok", slot.run(job, spec))
            except DeviceError as exc:
                reply = ("device_error", str(exc))
            except Exception:
                reply = ("error", traceback.format_exc())
            batches.add(reply, time.perf_counter() - started)
    except (EOFError, OSError, BrokenPipeError):  # the parent is gone
        return
    except Exception:
        try:
            conn.send(("error", traceback.format_exc()))
        except (OSError, BrokenPipeError):
            pass
    finally:
        if slot is not None:
            slot.close()
        held.close()


class _ReplyBatches:
    """A worker's side of its pipe: the pages the parent sent, and the replies not sent yet.

    Replies go back in batches of up to ``size``: the parent then wakes once
    for several pages, not once a page, and it runs on the same cores as the
    workers. Only fast pages are held: a page that took ``max_wait_s`` or more
    (an LLM, a real phone) sends its reply at once, with any held before it,
    and so does a worker with nothing left to run. A held reply waits for at
    most one more page.
    """

    size = 4
    max_wait_s = 0.01

    def __init__(self, conn: Any):
        self.conn = conn
        self.jobs: deque[tuple[Job, str]] = deque()
        self.replies: list[tuple[str, Any]] = []
        self.oldest = 0.0

    def take(self) -> bool:
        """Read the pages the parent sent; with none here, send the held replies and wait for
        some. False when the parent says stop; EOFError when it is gone."""
        while self.conn.poll():
            if not self._read(self.conn.recv()):
                return False
        if not self.jobs:
            self.send()
            if not self._read(self.conn.recv()):
                return False
        return True

    def _read(self, message: Any) -> bool:
        if message is None:
            return False
        self.jobs.extend(message)
        return True

    def add(self, reply: tuple[str, Any], took_s: float) -> None:
        now = time.perf_counter()
        if not self.replies:
            self.oldest = now
        self.replies.append(reply)
        if len(self.replies) >= self.size or took_s >= self.max_wait_s or now - self.oldest >= self.max_wait_s:
            self.send()

    def send(self) -> None:
        if self.replies:
            self.conn.send(("batch", self.replies))
            self.replies = []


#: imported once by the fork server, so that each worker process starts with the stage
#: modules, sentence-transformers (seconds to import) and the MiniLM weights loaded
PRELOAD = ["execution.worker_preload"]


def _process_context() -> Any:
    """``forkserver`` where there is one (workers fork from a clean server with the heavy
    imports done), else ``spawn``. Never plain ``fork``: this process runs threads."""
    import multiprocessing

    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
        return ctx
    return multiprocessing.get_context("spawn")


def warm_up_workers(config: RunConfig, injected: bool = False, max_pages: Optional[int] = None) -> None:
    """Start the fork server now if stage 2 will run in worker processes.

    Its imports take seconds; started before stage 1, they overlap it instead
    of delaying the first page. ``max_pages``: at most that many pages will run
    (when the caller knows), so a short job starts no fork server for nothing.
    """
    try:
        if choose_executor(config, injected, pages=max_pages) != "processes":
            return
    except ExecutionError:
        return  # the stage itself reports it
    ctx = _process_context()
    if ctx.get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


class ProcessSlot:
    """A device slot in its own process: simulators are CPU-bound, so two cores run two.

    Only the config crosses the process boundary; the child builds its parts
    (and LLM client) with :func:`build_slot`. A child that dies counts as a
    failed device: the page goes back to the queue and a new child is started.

    The slot keeps pages in the child's pipe, so the child starts the next page
    while this process records the last one; otherwise each worker would idle
    for a round trip per page, and two workers would not give two times the
    pages. Pages go to the child, and replies come back, several to a message
    once pages prove fast (:class:`_ReplyBatches`): this process then wakes
    once for several pages. It holds ``depth`` pages: 2, or twice a batch
    while the child's replies come in batches.
    """

    def __init__(self, config: RunConfig, run_dir: Path):
        self.config_json = config.to_manifest()
        self.run_dir = str(run_dir)
        self.proc: Any = None
        self.conn: Any = None
        self._submitted: deque[tuple[Job, str]] = deque()
        self._outbox: list[tuple[Job, str]] = []
        self._replies: deque[tuple[str, Any]] = deque()
        self._batched = False
        self._dropped = False

    @property
    def depth(self) -> int:
        return 2 * _ReplyBatches.size if self._batched else 2

    def start(self) -> None:
        """Start the child now (it is started on the first page otherwise).

        A child that died with pages in its pipe is left for ``collect`` to report.
        """
        # is_alive() polls the child (several system calls): only when no page is in its pipe,
        # which holds one while the slot runs at full depth
        if self.proc is not None and not self._submitted and not self.proc.is_alive():
            self.close()
        if self.proc is None:
            self._start()

    def _start(self) -> None:
        ctx = _process_context()
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_slot_process, args=(child, self.config_json, self.run_dir),
                           name="verirank-device", daemon=True)
        try:
            proc.start()
        except Exception as exc:
            parent.close()
            raise ExecutionError(f"cannot start a worker process: {exc}") from exc
        finally:
            child.close()
        self.proc, self.conn = proc, parent
        try:
            self._check(*self._receive("starting"), "starting")
        except DeviceError as exc:
            # a child that dies before it is ready is no device failure: every retry would die too
            # (a script without the `if __name__ == "__main__":` guard, a broken install...)
            raise ExecutionError(f"a worker process could not start: {exc}; use "
                                 "execution.executor=threads to run in this process") from exc

    def _receive(self, what: str) -> tuple[str, Any]:
        try:
            return self.conn.recv()
        except (EOFError, OSError) as exc:
            code = self.proc.exitcode if self.proc is not None else None
            self.close()
            raise DeviceError(f"the worker process died while {what} (exit code {code}): {exc!r}") from exc

    def _check(self, kind: str, payload: Any, what: str) -> Any:
        if kind == "error":
            self.close()
            raise ExecutionError(f"a worker process failed while {what}:\n{payload}")
        if kind == "device_error":
            raise DeviceError(payload)
        return payload

    def submit(self, job: Job, spec: str) -> None:
        """Queue a page for the child; it is sent, with the others queued, when ``collect`` waits."""
        self._dropped = False
        self.start()
        self._submitted.append((job, spec))
        self._outbox.append((job, spec))

    def _send(self) -> None:
        if self._outbox:
            try:
                self.conn.send(self._outbox)
            except (OSError, BrokenPipeError):
                pass  # the child is gone: the receive that follows finds out and says so
            self._outbox = []

    def collect(self) -> PageOutput:
        job, spec = self._submitted.popleft()
        what = f"running {job.url} on {spec}"
        if not self._replies:
            self._send()
            kind, payload = self._receive(what)
            if kind != "batch":  # the child failed outside a page
                self._check(kind, payload, what)
            self._replies.extend(payload)
            self._batched = len(payload) > 1
        return self._check(*self._replies.popleft(), what)

    def dropped(self) -> bool:
        """Whether the pages submitted after the last failed one died with the child."""
        return self._dropped

    def close(self) -> None:
        if self._submitted:
            self._submitted.clear()
            self._dropped = True
        self._outbox, self._replies, self._batched = [], deque(), False
        if self.conn is not None:
            try:
                self.conn.send(None)
            except (OSError, BrokenPipeError):
                pass
        if self.proc is not None and self.proc.pid is not None:
            self.proc.join(10)
            if self.proc.is_alive():
                self.proc.kill()
                self.proc.join(5)
        if self.conn is not None:
            self.conn.close()
        self.proc = self.conn = None


class _RayActor:
    """A device slot inside a Ray actor, built from the config like a worker process."""

    def __init__(self, config_json: dict, run_dir: str):
        from verirank_core.config import RunConfig

        config = RunConfig.model_validate(config_json)
        self.slot = build_slot(config, run_dir)
        self.vectors = ExitStack()
        self.vectors.enter_context(_run_vectors(config, run_dir))

    def run(self, job: Job, spec: str) -> PageOutput:
        return self.slot.run(job, spec)

    def close(self) -> None:
        self.slot.close()
        self.vectors.close()


class RaySlot(OneAtATime):
    """A device slot in a Ray actor (for users who outgrow one machine)."""

    def __init__(self, config: RunConfig, run_dir: Path, cpus: float):
        import ray

        super().__init__()
        self.ray = ray
        self.make = lambda: ray.remote(num_cpus=cpus, max_restarts=0)(_RayActor).remote(
            config.to_manifest(), str(run_dir))
        self.actor: Any = None

    def run(self, job: Job, spec: str) -> PageOutput:
        from ray.exceptions import RayActorError, RayTaskError

        if self.actor is None:
            self.actor = self.make()
        try:
            return self.ray.get(self.actor.run.remote(job, spec))
        except RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, DeviceError):
                raise DeviceError(str(cause)) from None
            raise ExecutionError(f"a Ray worker failed on {job.url}: {exc}") from None
        except RayActorError as exc:  # the actor's process died
            self.actor = None
            raise DeviceError(f"{spec}: the Ray actor died: {exc}") from None

    def close(self) -> None:
        if self.actor is not None:
            try:
                self.ray.get(self.actor.close.remote(), timeout=30)
            except Exception:
                pass
            self.ray.kill(self.actor)
            self.actor = None


def choose_executor(config: RunConfig, injected: bool = False, pages: Optional[int] = None) -> str:
    """The executor ``execution.executor`` names; ``auto`` = processes for several sim devices,
    unless fewer than ``execution.process_min_pages`` of them are to run.

    Injected openers or parts live in this process, so they need threads. A
    worker process starts with cold caches (label vectors, parsed screens, its
    world), about 0.3 s of work; a simulated page costs 3-30 ms, so a short
    job is done sooner in this process, where they are warm.
    """
    executor = config.execution.executor
    if injected and executor in ("processes", "ray"):
        raise ExecutionError(f"execution.executor={executor} cannot use an opener or parts built in "
                             "this process; use threads, or configure the devices instead")
    if executor != "auto":
        return executor
    specs = list(config.execution.devices)
    if injected or len(specs) < 2 or not all(s.startswith("sim:") for s in specs):
        return "threads"
    if pages is not None and pages < config.execution.process_min_pages:
        return "threads"
    return "processes"


def _init_ray(config: RunConfig) -> None:
    import ray

    if not ray.is_initialized():
        if config.execution.ray_address:
            ray.init(address=config.execution.ray_address, ignore_reinit_error=True)
        else:
            ray.init(num_cpus=config.execution.ray_num_cpus, include_dashboard=False,
                     ignore_reinit_error=True, log_to_driver=False)


def run_pool(
    jobs: list[Job], config: RunConfig, make_slot: Callable[[], Any],
    finish: Callable[[PageOutput], None],
) -> None:
    """Run ``jobs`` on one slot per device spec; every executor schedules pages here.

    A slot is driven by one thread of this process (the slot itself may live in
    another process) through the protocol of :class:`OneAtATime`; a slot in a
    worker process holds pages ahead, so it never waits for this process. A page
    whose device fails goes back to the queue, to a slot it has not failed on
    while there is one, until ``max_attempts``; then it is recorded as
    ``device_failed``.
    """
    specs = list(config.execution.devices)
    if not specs:
        raise ExecutionError("no devices configured: pass --devices sim:WORLD or adb:SERIAL")
    todo: "queue.Queue[Optional[Job]]" = queue.Queue()
    for job in jobs:
        todo.put(job)
    pending = [len(jobs)]
    lock = threading.Lock()
    errors: list[BaseException] = []

    def stop() -> None:
        """The pool is done: wake every slot that waits for a page now, not at its next poll."""
        with lock:
            pending[0] = 0
        for _ in specs:
            todo.put(None)

    def done(result: PageOutput) -> None:
        finish(result)
        with lock:
            pending[0] -= 1
            last = pending[0] == 0
        if last:
            stop()

    def next_job(index: int, wait: bool) -> Optional[Job]:
        """The next page for slot ``index``, or None: the pool is done, or (``wait`` off) none is ready."""
        while True:
            with lock:
                if pending[0] <= 0:
                    return None
            try:
                # stop() wakes a waiting slot; the timeout is only a safety net
                job = todo.get(timeout=1.0) if wait else todo.get_nowait()
            except queue.Empty:
                if wait:
                    continue
                return None
            if job is None:
                return None
            # a page that failed on this device goes to another one when there is one
            if index in job.avoid and len(job.avoid) < len(specs):
                todo.put(job)
                if not wait:
                    return None
                time.sleep(0.01)
                continue
            return job

    def work(index: int, base_spec: str) -> None:
        slot = None
        inflight: deque[tuple[Job, str]] = deque()
        try:
            slot = make_slot()
            while True:
                # keep the slot fed; wait for a page only when it has none
                while len(inflight) < slot.depth:
                    job = next_job(index, wait=not inflight)
                    if job is None:
                        break
                    job.attempts += 1
                    spec = spec_for(base_spec, job, config.execution.route_by_world)
                    slot.submit(job, spec)
                    inflight.append((job, spec))
                if not inflight:
                    return
                job, spec = inflight.popleft()
                try:
                    result = slot.collect()
                except DeviceError as exc:
                    job.failures.append(f"{spec}: {exc}")
                    job.avoid.add(index)
                    if job.attempts >= config.execution.max_attempts:
                        done(_failed(job))
                    else:
                        todo.put(job)
                    if slot.dropped():  # the pages behind it never ran: no attempt spent
                        for lost, _ in inflight:
                            lost.attempts -= 1
                            todo.put(lost)
                        inflight.clear()
                    continue
                done(result)
        except BaseException as exc:  # a bug: stop the pool, keep what is saved
            errors.append(exc)
            stop()
        finally:
            if slot is not None:
                slot.close()

    threads = [threading.Thread(target=work, args=(i, spec), daemon=True) for i, spec in enumerate(specs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


# --- the stage -----------------------------------------------------------------

def execute_run(
    run_dir: Path | str,
    config: RunConfig,
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

        verdicts = VerdictReuse.open(run.path, config, opener=opener or device_opener(config), route=spec_for,
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
        if executor == "processes":
            make_slot: Callable[[], Any] = lambda: ProcessSlot(config, run.path)  # noqa: E731
        elif executor == "ray":
            _init_ray(config)
            cpus = min(1.0, config.execution.ray_num_cpus / max(1, len(config.execution.devices)))
            make_slot = lambda: RaySlot(config, run.path, cpus)  # noqa: E731
        else:
            make_slot = lambda: build_slot(  # noqa: E731
                config, run.path, llm_client=llm_client, opener=opener, parts_factory=parts_factory)

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
            here = _run_vectors(config, run.path) if executor == "threads" else nullcontext()
            with _collector_ignores_what_is_loaded(), here:
                run_pool(todo, config, make_slot, finish)
    if bar is not None:
        bar.close()
    if verdicts is not None:  # the pages run now, for the runs to come
        verdicts.store(todo)
        verdicts.close()
    return counts


def _run_vectors(config: RunConfig, run_dir: Path | str) -> ContextManager[None]:
    """This process's encoder reads and adds vectors in the run's vector cache while the block runs:
    the workers of a run share it, so a label is embedded once per run, not once per worker."""
    from verirank_core.embed import disk_cache

    return disk_cache(cache_path_for(run_dir, config.execution.vector_cache),
                      config.execution.vector_cache_max_texts)


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
    requires = ("extraction.jsonl",)

    def __init__(self, llm_client: Any = None, opener: Callable[[str], Any] | None = None):
        self.llm_client, self.opener = llm_client, opener

    def fingerprint(self, cfg: RunConfig) -> Any:
        from verirank_core.stages import digest

        # how many devices, which executor, how often to retry and which caches change the speed,
        # not the records
        execution = cfg.execution.model_dump(mode="json", exclude={
            "devices", "executor", "process_min_pages", "ray_address", "ray_num_cpus", "max_attempts",
            "vector_cache", "vector_cache_max_texts", "verdict_cache", "reuse", "verdict_max_age_days"})
        uses_llm = "llm" in (cfg.execution.predictor, cfg.execution.judge)
        return {"execution": execution, "llm": digest(cfg.llm) if uses_llm else None}

    def warm_up(self, cfg: RunConfig) -> None:
        warm_up_workers(cfg, injected=self.opener is not None)

    def __call__(self, run: RunDir, cfg: RunConfig, progress: Callable[..., Any]) -> dict[str, int]:
        # the LLM client is built where it is used (build_slot), in a worker process too
        return execute_run(run.path, cfg, llm_client=self.llm_client, opener=self.opener, progress=progress)
