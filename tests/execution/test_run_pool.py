"""run_pool's scheduling with a slot that holds two pages, as a worker process does.

The slot here is scripted (no device): it runs pages in the order they were
submitted and can be told to "die" on a page, losing the page queued behind
it, as a worker process killed mid-page does. Real worker processes are killed
in ``test_runner_devices.py``.
"""

from __future__ import annotations

from collections import deque

from verirank_core.config import load_config, parse_override
from verirank_core.errors import DeviceError
from verirank_core.execution_records import ExecutionResult, ExecutionStatus
from execution.jobs import Job, PageOutput
from execution.pool import run_pool


class ScriptedPipelinedSlot:
    """Holds up to two pages; dies once on the URL in ``dies_on`` and drops what it held."""

    depth = 2

    def __init__(self, name: str, dies_on: set[str], log: list[tuple[str, str]], leaves: bool = False):
        self.name, self.dies_on, self.log = name, dies_on, log
        self.held: deque[Job] = deque()
        self.lost = False
        self.max_held = 0
        #: dying takes the device away for good, as a farm node leaving the cluster does
        self.leaves = leaves
        self.left = False

    def submit(self, job: Job, spec: str) -> None:
        self.lost = False
        self.held.append(job)
        self.max_held = max(self.max_held, len(self.held))

    def collect(self) -> PageOutput:
        job = self.held.popleft()
        self.log.append((self.name, job.url))
        if job.url in self.dies_on:
            self.dies_on.discard(job.url)
            self.lost = bool(self.held)
            self.held.clear()
            self.left = self.leaves
            raise DeviceError(f"{self.name} died on {job.url}")
        return PageOutput.of(ExecutionResult(qid=job.qid, url=job.url, rank=job.rank,
                                             status=ExecutionStatus.EXECUTED, device=self.name,
                                             attempts=job.attempts))

    def dropped(self) -> bool:
        return self.lost

    def retired(self) -> bool:
        return self.left

    def close(self) -> None:
        pass


def _jobs(n: int) -> list[Job]:
    return [Job(qid="q1", url=f"http://site.test/p{i}", rank=i + 1, query="q", instructions=["Open Settings"])
            for i in range(n)]


def _pool(n_pages: int, dies_on: set[str], *sets: str,
          leaves: tuple[str, ...] = ()) -> tuple[dict[str, ExecutionResult], list, list]:
    config = load_config(overrides=[parse_override(s) for s in
                                    ("execution.devices=[sim:a, sim:b]", "execution.route_by_world=false", *sets)])
    log: list[tuple[str, str]] = []
    slots: list[ScriptedPipelinedSlot] = []
    names = iter(["A", "B"])

    def make_slot() -> ScriptedPipelinedSlot:
        name = next(names)
        slots.append(ScriptedPipelinedSlot(name, dies_on, log, leaves=name in leaves))
        return slots[-1]

    outputs: list[PageOutput] = []
    run_pool(_jobs(n_pages), config, make_slot, outputs.append)
    results = [page.result() for page in outputs]
    by_url = {r.url: r for r in results}
    assert len(by_url) == len(results), "a page was recorded twice"
    return by_url, log, slots


def test_every_page_is_recorded_once_and_slots_are_kept_fed() -> None:
    results, log, slots = _pool(20, set())
    assert set(results) == {f"http://site.test/p{i}" for i in range(20)}
    assert all(r.status == ExecutionStatus.EXECUTED and r.attempts == 1 for r in results.values())
    busy = [slot for slot in slots if sum(1 for name, _ in log if name == slot.name) >= 2]
    assert busy and all(slot.max_held == 2 for slot in busy), "a slot should hold a second page while one runs"


def test_a_page_lost_with_its_device_is_rerun_without_spending_an_attempt() -> None:
    # one attempt per page: the page the device died on is device_failed, but the
    # page queued behind it never ran, so it must still be run elsewhere
    results, log, _ = _pool(12, {"http://site.test/p0"}, "execution.max_attempts=1")
    assert results["http://site.test/p0"].status == ExecutionStatus.DEVICE_FAILED
    assert "died on http://site.test/p0" in results["http://site.test/p0"].reason
    others = {u: r for u, r in results.items() if u != "http://site.test/p0"}
    assert len(others) == 11 and all(r.status == ExecutionStatus.EXECUTED for r in others.values())
    assert all(r.attempts == 1 for r in others.values())


def test_a_failed_page_is_retried_on_the_other_device() -> None:
    results, log, _ = _pool(6, {"http://site.test/p0"}, "execution.max_attempts=2")
    first = results["http://site.test/p0"]
    assert first.status == ExecutionStatus.EXECUTED and first.attempts == 2
    died_on = next(name for name, url in log if url == "http://site.test/p0")
    assert first.device != died_on


def _slot_of(log: list[tuple[str, str]], url: str) -> str:
    return next(name for name, u in log if u == url)


def test_a_device_that_left_takes_no_more_pages_and_its_pages_run_on_the_others() -> None:
    results, log, _ = _pool(16, {"http://site.test/p3"}, "execution.max_attempts=3", leaves=("A", "B"))
    left = _slot_of(log, "http://site.test/p3")
    # the page it died on was re-run on the device that stayed, and so was every page after
    assert set(results) == {f"http://site.test/p{i}" for i in range(16)}
    assert all(r.status == ExecutionStatus.EXECUTED for r in results.values())
    assert results["http://site.test/p3"].device != left
    died_at = next(i for i, (name, url) in enumerate(log) if url == "http://site.test/p3")
    assert not [url for name, url in log[died_at + 1:] if name == left]


def test_when_every_device_left_the_pages_left_are_device_failed_and_none_is_lost() -> None:
    every = {f"http://site.test/p{i}" for i in range(10)}
    results, log, _ = _pool(10, set(every), "execution.max_attempts=3", leaves=("A", "B"))
    assert len(log) == 2  # each device died on its first page and took no other
    assert set(results) == every
    assert all(r.status == ExecutionStatus.DEVICE_FAILED for r in results.values())
    assert all("no device left" in r.reason for r in results.values())
    for _, url in log:  # the pages the devices died on say so too
        assert "died on" in results[url].reason
