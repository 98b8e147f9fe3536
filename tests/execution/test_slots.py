"""The slot protocol every executor shares (execution/slots.py): pages come back oldest first,
and a slot that loses its device with pages held says so until it is given a new page."""

from __future__ import annotations

import pytest

from verirank_core.errors import DeviceError
from verirank_core.execution_records import ExecutionResult, ExecutionStatus
from execution.jobs import Job, PageOutput
from execution.process_slot import ProcessSlot
from execution.ray_slot import RaySlot
from execution.slots import DeviceSlot, OneAtATime, PageFifo


def _job(i: int) -> Job:
    return Job(qid="q1", url=f"http://site.test/p{i}", rank=i + 1, query="q", instructions=["Open Settings"])


class _Scripted(OneAtATime):
    """Runs a page when collected; fails on the URLs in ``fails_on``."""

    def __init__(self, fails_on: set[str]):
        super().__init__()
        self.fails_on, self.ran = fails_on, []

    def run(self, job: Job, spec: str) -> PageOutput:
        self.ran.append((job.url, spec))
        if job.url in self.fails_on:
            raise DeviceError(f"{spec} failed on {job.url}")
        return PageOutput.of(ExecutionResult(qid=job.qid, url=job.url, rank=job.rank,
                                             status=ExecutionStatus.EXECUTED, device=spec))


def test_pages_come_back_in_the_order_they_were_submitted_with_their_spec() -> None:
    slot = _Scripted(set())
    for i in range(3):
        slot.submit(_job(i), f"sim:w{i}")
    assert [slot.collect().result().url for _ in range(3)] == [f"http://site.test/p{i}" for i in range(3)]
    assert slot.ran == [(f"http://site.test/p{i}", f"sim:w{i}") for i in range(3)]
    assert not slot.dropped()


def test_a_failed_page_raises_and_a_slot_that_drops_held_pages_says_so_until_the_next_submit() -> None:
    slot = _Scripted({"http://site.test/p0"})
    slot.submit(_job(0), "sim:w")
    slot.submit(_job(1), "sim:w")
    with pytest.raises(DeviceError, match="failed on http://site.test/p0"):
        slot.collect()
    assert not slot.dropped()  # p1 is still held: nothing was lost
    slot.drop()  # the device went away with p1
    assert slot.dropped()
    with pytest.raises(IndexError):
        slot.collect()  # nothing is held any more
    slot.submit(_job(2), "sim:w")
    assert not slot.dropped() and slot.collect().result().url == "http://site.test/p2"


@pytest.mark.parametrize("cls", [DeviceSlot, ProcessSlot, RaySlot])
def test_every_executor_slot_keeps_its_pages_in_the_one_fifo(cls: type) -> None:
    assert issubclass(cls, PageFifo)
    for name in ("submit", "collect", "dropped", "close", "depth"):
        assert hasattr(cls, name), (cls, name)
