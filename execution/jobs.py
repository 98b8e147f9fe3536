"""Pages as jobs, and one job run on one device.

:func:`plan_jobs` turns the extracted pages into :class:`Job` s (pages with
steps) and ``skipped`` rows (pages without). :func:`run_job` runs one job on
one device with the worker's :class:`StageParts` and returns the finished page
as a :class:`PageOutput`: its line of ``execution.jsonl`` and of
``trajectories.jsonl``, serialised where the page ran.

Everything here runs wherever a device slot lives: a thread of the stage's
process, a worker process or a Ray actor (``execution/slots.py``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ContextManager, Optional

from verirank_core.config import RunConfig
from verirank_core.device import Device, SettingsSnapshot
from verirank_core.errors import DeviceError
from verirank_core.execution_records import ExecutionResult, ExecutionStatus, StopReason, Trajectory
from verirank_core.extraction_records import Extraction, Query
from verirank_core.store import json_line
from verirank_core.trajectories import TRAJECTORIES_FILE
from verirank_core.vector_cache import cache_path_for
from execution.screen_store import SCREENS_DIR, ScreenStore

if TYPE_CHECKING:
    from verirank_core.llm import LLMClient
    from execution.agent import EpisodeConfig
    from execution.judge import Judge
    from execution.predict.base import ActionPredictor
    from execution.proxy import ExecutionProxy
    from execution.safety import SafetyPolicy

__all__ = ["Job", "PageOutput", "StageParts", "page_id", "plan_jobs", "build_parts", "llm_client_for",
           "run_job", "failed_page", "run_vectors"]

log = logging.getLogger(__name__)


def page_id(url: str) -> str:
    """A short, stable folder name for a page."""
    return hashlib.sha1(url.encode("utf-8")).hexdigest()[:12]


@dataclass
class Job:
    """One page to run: its steps, where it runs, and how its attempts went so far."""

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


# --- planning --------------------------------------------------------------------

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


# --- what a worker needs besides a device ------------------------------------------

@dataclass
class StageParts:
    """What a worker needs besides a device; built once per worker."""

    predictor: ActionPredictor
    judge: Judge
    safety: Optional[SafetyPolicy] = None
    proxy: Optional[ExecutionProxy] = None


def llm_client_for(config: RunConfig, llm_client: Optional[LLMClient] = None) -> Optional[LLMClient]:
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


def build_parts(config: RunConfig, llm_client: Optional[LLMClient] = None) -> StageParts:
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


def run_vectors(config: RunConfig, run_dir: Path | str) -> ContextManager[None]:
    """This process's encoder reads and adds vectors in the run's vector cache while the block runs:
    the workers of a run share it, so a label is embedded once per run, not once per worker."""
    from verirank_core.embed import disk_cache

    return disk_cache(cache_path_for(run_dir, config.execution.vector_cache),
                      config.execution.vector_cache_max_texts)


# --- one page on one device ----------------------------------------------------------

class PageDeviceError(DeviceError):
    """The device failed during a page; ``settings_owed`` are the settings it left changed
    (isolation), for the slot to put back when it opens the device again."""

    def __init__(self, message: str, settings_owed: Optional[SettingsSnapshot] = None):
        super().__init__(message)
        self.settings_owed = settings_owed


def isolates(config: RunConfig, device: Device) -> bool:
    """Whether pages on ``device`` get their settings restored (``execution.isolation``)."""
    mode = config.execution.isolation
    return mode == "on" or (mode == "auto" and device.kind == "adb")


def run_job(job: Job, device: Device, parts: StageParts, run_dir: Path, config: RunConfig,
            screens: Optional[ScreenStore] = None, episode: Optional[EpisodeConfig] = None) -> PageOutput:
    """Run one page on one device and judge it. Raises DeviceError on device failure.

    Returns the page's row and trajectory, for the caller to append to the
    run's execution.jsonl and trajectories.jsonl. ``screens``: the slot's
    store of the run's screen files (default: a new one on ``run_dir``);
    ``episode``: the slot's episode settings (default: built from ``config``).

    With isolation on, the device's settings are recorded before the page and
    restored after it, so the next page finds the device as this one did.
    """
    from execution.agent import EpisodeConfig, run_episode

    started = time.perf_counter()
    before = device.snapshot_settings() if isolates(config, device) else None
    traj: Trajectory = run_episode(
        job.instructions, parts.predictor, device,
        episode if episode is not None else EpisodeConfig.from_execution(config.execution),
        qid=job.qid, url=job.url, app=job.app, query=job.query, safety=parts.safety, proxy=parts.proxy,
        # screens go to the store (one file per distinct screen, shared by the run's pages), named
        # relative to the run directory, where trajectories.jsonl is
        out_dir=run_dir if config.execution.save_screens else None,
        screens=screens if screens is not None else ScreenStore(run_dir / SCREENS_DIR),
    )
    # after a device error too: a phone that failed one command may still take `settings put`
    unrestored = restore_settings(device, before, config, job.url) if before is not None else []
    if traj.stop_reason == StopReason.DEVICE_ERROR:
        raise PageDeviceError(
            f"{device.spec}: device failed during {job.url}: {traj.stop_detail}"
            + (f"; settings not restored: {', '.join(unrestored)}" if unrestored else ""),
            settings_owed=before if unrestored else None)
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
        goal_met_before=verdict.goal_met_before,
        trajectory=TRAJECTORIES_FILE,
        attempts=job.attempts,
        elapsed_s=round(time.perf_counter() - started, 3),
    )
    return PageOutput.of(result, traj)


def restore_settings(device: Device, before: SettingsSnapshot, config: RunConfig, url: str) -> list[str]:
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


def failed_page(job: Job) -> PageOutput:
    """The row of a page no device could run within ``execution.max_attempts``."""
    return PageOutput.of(ExecutionResult(
        qid=job.qid, url=job.url, rank=job.rank, status=ExecutionStatus.DEVICE_FAILED,
        reason="; ".join(job.failures)[-2000:], attempts=job.attempts,
        stop_reason=StopReason.DEVICE_ERROR,
    ))
