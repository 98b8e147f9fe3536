"""The device pool: one thread per device spec drives one slot; every executor schedules pages here.

* one slot per device spec in ``execution.devices`` (repeat a spec to run
  several simulators of the same world);
* a page whose query names a ``world`` runs on ``sim:<world>``: a sim slot
  re-opens its simulator on that world (cheap), an adb slot takes any page
  (:func:`spec_for`);
* a page whose device fails (``DeviceError``) goes back to the queue, to a
  slot it has not failed on while there is one, until ``execution.max_attempts``;
  then it is recorded as ``device_failed``;
* a slot that holds pages ahead (a worker process) is kept fed, so it never
  waits for this process; pages it lost with its device are queued again
  with no attempt spent;
* a slot whose device left for good (a farm node that left the Ray cluster,
  ``Slot.retired``) stops; its pages go to the slots that are left, and when
  none is left every page not recorded yet is ``device_failed``.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from typing import Callable, Optional

from verirank_core.config import RunConfig
from verirank_core.errors import DeviceError, ExecutionError
from execution.jobs import Job, PageOutput, failed_page
from execution.slots import Slot

__all__ = ["run_pool", "spec_for"]


def spec_for(base_spec: str, job: Job, route_by_world: bool) -> str:
    """The device a page runs on: a sim slot follows the page's world, an adb slot never switches."""
    if base_spec.startswith("sim:") and route_by_world and job.world:
        return f"sim:{job.world}"
    return base_spec


def _longest_first(jobs: list[Job]) -> list[Job]:
    """Pages with more steps first, within each world (a sim slot re-opens its world for another).

    The last pages to start are then the short ones, so the devices finish close together: on a
    phone a page costs seconds a step, and a long page started last kept one phone busy while the
    others had nothing left (docs/throughput.md, "A farm of phones").
    """
    first_seen = {world: i for i, world in reversed(list(enumerate(j.world for j in jobs)))}
    return sorted(jobs, key=lambda j: (first_seen[j.world], -len(j.instructions)))


class _Pages:
    """The pages not recorded yet, shared by the slots' threads.

    ``pending`` counts pages not finished (running ones too); the pool is done
    when it reaches 0, or when :meth:`stop` is called after a bug.
    """

    def __init__(self, jobs: list[Job], n_slots: int):
        self.todo: queue.Queue[Optional[Job]] = queue.Queue()
        for job in _longest_first(jobs) if n_slots > 1 else jobs:
            self.todo.put(job)
        self.pending = len(jobs)
        self.n_slots = n_slots
        #: the slots still running (a retired slot leaves)
        self.live = set(range(n_slots))
        self.lock = threading.Lock()

    def stop(self) -> None:
        """The pool is done: wake every slot that waits for a page now, not at its next poll."""
        with self.lock:
            self.pending = 0
        for _ in range(self.n_slots):
            self.todo.put(None)

    def finished_one(self) -> None:
        with self.lock:
            self.pending -= 1
            last = self.pending == 0
        if last:
            self.stop()

    def put_back(self, job: Job) -> None:
        self.todo.put(job)

    def retire(self, index: int, finish: Callable[[PageOutput], None]) -> None:
        """Slot ``index`` will take no more pages; with no slot left, every page left is ``device_failed``."""
        with self.lock:
            self.live.discard(index)
            last = not self.live
        if not last:
            return
        while True:
            try:
                job = self.todo.get_nowait()
            except queue.Empty:
                break
            if job is None:
                continue
            job.failures.append("no device left to run it")
            finish(failed_page(job))
            self.finished_one()

    def next_for(self, index: int, wait: bool) -> Optional[Job]:
        """The next page for slot ``index``, or None: the pool is done, or (``wait`` off) none is ready."""
        while True:
            with self.lock:
                if self.pending <= 0:
                    return None
            try:
                # stop() wakes a waiting slot; the timeout is only a safety net
                job = self.todo.get(timeout=1.0) if wait else self.todo.get_nowait()
            except queue.Empty:
                if wait:
                    continue
                return None
            if job is None:
                return None
            # a page that failed on this device goes to another one when there is one
            if index in job.avoid and self.live - job.avoid:
                self.todo.put(job)
                if not wait:
                    return None
                time.sleep(0.01)
                continue
            return job


def _drive(slot: Slot, index: int, base_spec: str, pages: _Pages, config: RunConfig,
           finish: Callable[[PageOutput], None]) -> None:
    """Feed slot ``index`` pages until the pool is done; record each page it hands back."""
    inflight: deque[tuple[Job, str]] = deque()
    while True:
        # keep the slot fed; wait for a page only when it has none
        while len(inflight) < slot.depth:
            job = pages.next_for(index, wait=not inflight)
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
                finish(failed_page(job))
                pages.finished_one()
            else:
                pages.put_back(job)
            if slot.dropped() or slot.retired():  # the pages behind it never ran: no attempt spent
                for lost, _ in inflight:
                    lost.attempts -= 1
                    pages.put_back(lost)
                inflight.clear()
            if slot.retired():
                pages.retire(index, finish)
                return
            continue
        finish(result)
        pages.finished_one()


def run_pool(
    jobs: list[Job], config: RunConfig, make_slot: Callable[[], Slot],
    finish: Callable[[PageOutput], None],
) -> None:
    """Run ``jobs`` on one slot per device spec (see the module docstring); ``finish`` records a page.

    A slot is driven by one thread of this process (the slot itself may live
    in another process). A bug in one thread stops the pool, keeping what was
    recorded, and is raised here.
    """
    specs = list(config.execution.devices)
    if not specs:
        raise ExecutionError("no devices configured: pass --devices sim:WORLD or adb:SERIAL")
    pages = _Pages(jobs, len(specs))
    errors: list[BaseException] = []

    def work(index: int, base_spec: str) -> None:
        slot: Optional[Slot] = None
        try:
            slot = make_slot()
            _drive(slot, index, base_spec, pages, config, finish)
        except BaseException as exc:  # a bug: stop the pool, keep what is saved
            errors.append(exc)
            pages.stop()
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
