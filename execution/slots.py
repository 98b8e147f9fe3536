"""Device slots: where pages run, behind the one :class:`Slot` protocol the pool drives.

A slot takes up to ``depth`` pages with ``submit(job, spec)`` and hands back
the oldest one's :class:`~execution.jobs.PageOutput` with ``collect()``, which
raises ``DeviceError`` when the device failed on it. ``dropped()`` says whether
the pages submitted after a failed one were lost with the device and must be
queued again.

Three slots implement it, one per executor (``execution.executor``):

* :class:`DeviceSlot` (``threads``): the device and its parts in this process;
* ``ProcessSlot`` (``processes``, ``execution/process_slot.py``): a
  :class:`DeviceSlot` in a worker process, fed several pages ahead;
* ``RaySlot`` (``ray``, ``execution/ray_slot.py``): a :class:`DeviceSlot` in a Ray actor.

All keep their submitted pages in :class:`PageFifo`. Every slot builds its
device opener and parts with :func:`build_slot`, in the process it lives in.
"""

from __future__ import annotations

import logging
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional, Protocol

from verirank_core.config import RunConfig
from verirank_core.device import Device, SettingsSnapshot
from verirank_core.errors import DeviceError
from execution.agent import EpisodeConfig
from execution.jobs import Job, PageDeviceError, PageOutput, StageParts, build_parts, run_job
from execution.screen_store import SCREENS_DIR, ScreenStore

if TYPE_CHECKING:
    from verirank_core.llm import LLMClient

__all__ = ["Slot", "PageFifo", "OneAtATime", "DeviceSlot", "Opener", "device_opener", "build_slot"]

log = logging.getLogger(__name__)

#: opens a device from its spec (``sim:WORLD``, ``adb:SERIAL``)
Opener = Callable[[str], Device]


class Slot(Protocol):
    """What :func:`execution.pool.run_pool` drives (see the module docstring)."""

    #: how many pages the slot holds at once
    @property
    def depth(self) -> int: ...

    def submit(self, job: Job, spec: str) -> None: ...

    def collect(self) -> PageOutput: ...

    def dropped(self) -> bool: ...

    #: the device left for good (a farm node left the cluster): feed this slot no more pages
    def retired(self) -> bool: ...

    def close(self) -> None: ...


class PageFifo:
    """The pages a slot was given and has not handed back yet, oldest first.

    A slot that loses its device with pages still held calls :meth:`drop`:
    ``dropped()`` then tells the pool that those pages never ran.
    """

    depth = 1

    def __init__(self) -> None:
        self._submitted: deque[tuple[Job, str]] = deque()
        self._dropped = False

    def submit(self, job: Job, spec: str) -> None:
        self._dropped = False
        self._submitted.append((job, spec))

    def collect(self) -> PageOutput:
        job, spec = self._submitted.popleft()
        return self.outcome(job, spec)

    def outcome(self, job: Job, spec: str) -> PageOutput:
        """The oldest page's output (it was just taken off the queue); DeviceError on a failed device."""
        raise NotImplementedError

    def dropped(self) -> bool:
        return self._dropped

    def retired(self) -> bool:
        return False

    def drop(self) -> None:
        if self._submitted:
            self._submitted.clear()
            self._dropped = True


class OneAtATime(PageFifo):
    """A slot that runs a page when it is collected: it holds one page, so it never loses any."""

    def outcome(self, job: Job, spec: str) -> PageOutput:
        return self.run(job, spec)

    def run(self, job: Job, spec: str) -> PageOutput:
        raise NotImplementedError


class DeviceSlot(OneAtATime):
    """One device and the parts that drive it, in this process.

    The device is opened on first use and re-opened on another world (sim) or
    after a failure; ``run`` raises ``DeviceError`` when the device failed.
    """

    def __init__(self, config: RunConfig, run_dir: Path, opener: Opener, parts: StageParts):
        super().__init__()
        self.config = config
        self.run_dir = Path(run_dir)
        self.opener = opener
        self.parts = parts
        self.device: Optional[Device] = None
        self.spec: Optional[str] = None
        self.screens = ScreenStore(self.run_dir / SCREENS_DIR)
        self.episode = EpisodeConfig.from_execution(config.execution)
        #: spec -> the settings a page left changed when its device failed; restored on reopening
        self.settings_owed: dict[str, SettingsSnapshot] = {}

    def run(self, job: Job, spec: str) -> PageOutput:
        try:
            device = self._device_for(spec)
            return run_job(job, device, self.parts, self.run_dir, self.config, self.screens, self.episode)
        except DeviceError as exc:
            owed = exc.settings_owed if isinstance(exc, PageDeviceError) else None
            if owed is not None and spec not in self.settings_owed:  # the oldest snapshot is the clean one
                self.settings_owed[spec] = owed
            self.close()
            raise

    def _device_for(self, spec: str) -> Device:
        if self.device is not None and self.spec == spec:
            return self.device
        self.close()
        self.device = self.opener(spec)
        self.spec = spec
        if spec in self.settings_owed:  # a DeviceError here keeps them owed
            report = self.device.restore_settings(self.settings_owed[spec],
                                                  tuple(self.config.execution.isolation_ignore))
            del self.settings_owed[spec]
            if report.failed:
                log.warning("%s: could not restore %s after a failed page", spec, ", ".join(report.failed))
        return self.device

    def close(self) -> None:
        if self.device is not None:
            try:
                self.device.close()
            except Exception:  # closing a dead device must not hide the real error
                pass
        self.device = None
        self.spec = None


def device_opener(config: RunConfig) -> Opener:
    """open_device with the configured adb options for ``adb:`` specs."""
    from execution.devices import open_device

    adb = config.execution.adb

    def open_(spec: str) -> Device:
        if spec.startswith("adb:"):
            return open_device(
                spec, adb_host=adb.adb_host, adb_port=adb.adb_port, reset=adb.reset,
                snapshot_name=adb.snapshot_name, dump_retries=adb.dump_retries, timeout=adb.timeout_s,
                skip_unchanged_dumps=adb.skip_unchanged_dumps,
            )
        return open_device(spec)

    return open_


def build_slot(
    config: RunConfig, run_dir: Path | str, *, llm_client: Optional[LLMClient] = None,
    opener: Optional[Opener] = None, parts_factory: Optional[Callable[[], StageParts]] = None,
) -> DeviceSlot:
    """THE one place where a worker gets its device opener, predictor, judge and LLM client.

    Threads call it in this process; worker processes and Ray actors call it
    in theirs, from the config alone (``opener``/``parts_factory``/``llm_client``
    are in-process injections for tests and library users).
    """
    parts = parts_factory() if parts_factory is not None else build_parts(config, llm_client)
    return DeviceSlot(config, Path(run_dir), opener or device_opener(config), parts)
