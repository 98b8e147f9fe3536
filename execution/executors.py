"""Which executor runs the pages, and the slot factory it gives the pool.

``execution.executor`` names one: ``threads`` (:class:`~execution.slots.DeviceSlot`
in this process: adb devices wait on I/O), ``processes``
(:class:`~execution.process_slot.ProcessSlot`, one process per device:
simulators are CPU-bound), ``ray`` (:class:`~execution.ray_slot.RaySlot`, one
actor per device), or ``auto`` (the default: processes for several ``sim:``
devices, threads otherwise). All are :class:`~execution.slots.Slot` s, so
:func:`execution.pool.run_pool` schedules pages the same way for each.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional

from verirank_core.config import RunConfig
from verirank_core.errors import ExecutionError
from execution.jobs import StageParts
from execution.slots import Opener, Slot, build_slot

if TYPE_CHECKING:
    from verirank_core.llm import LLMClient

__all__ = ["choose_executor", "slot_factory", "warm_up_workers"]


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


def slot_factory(
    executor: str, config: RunConfig, run_dir: Path, *, llm_client: Optional[LLMClient] = None,
    opener: Optional[Opener] = None, parts_factory: Optional[Callable[[], StageParts]] = None,
) -> Callable[[], Slot]:
    """How the pool makes one slot per device for ``executor`` (see :func:`choose_executor`)."""
    if executor == "processes":
        from execution.process_slot import ProcessSlot

        return lambda: ProcessSlot(config, run_dir)
    if executor == "ray":
        from execution.farm import init_ray
        from execution.ray_slot import RaySlot

        init_ray(config)
        cpus = min(1.0, config.execution.ray_num_cpus / max(1, len(config.execution.devices)))
        return lambda: RaySlot(config, run_dir, cpus)
    return lambda: build_slot(config, run_dir, llm_client=llm_client, opener=opener, parts_factory=parts_factory)


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
    from execution.process_slot import process_context

    if process_context().get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()
