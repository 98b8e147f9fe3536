"""A worker's replies go back several to a message while pages are fast, and at once when a page is
slow or the worker has nothing left to run (execution.process_slot.ReplyBatches, on a real pipe)."""

from __future__ import annotations

import multiprocessing
import threading

from execution.process_slot import ReplyBatches


def _pipe() -> tuple:
    parent, child = multiprocessing.Pipe()
    return parent, ReplyBatches(child)


def _messages(parent) -> list:
    out = []
    while parent.poll(0.05):
        out.append(parent.recv())
    return out


def test_fast_pages_are_answered_in_batches_and_the_last_ones_when_nothing_is_left() -> None:
    parent, batches = _pipe()
    batches.max_wait_s = 60.0  # a busy machine must not split the batch by the clock
    got: list = []

    def parent_side() -> None:  # sends six pages, reads replies until it has six, then says stop
        parent.send([("job", str(i)) for i in range(6)])
        while sum(len(replies) for _, replies in got) < 6:
            got.append(parent.recv())
        parent.send(None)

    thread = threading.Thread(target=parent_side)
    thread.start()
    while batches.take():  # the worker's loop
        job = batches.jobs.popleft()
        batches.add(("ok", job[1]), took_s=0.001)
    thread.join(10)
    # six fast pages: a full batch of four, then the two left once the worker had no page to run
    assert got == [("batch", [("ok", "0"), ("ok", "1"), ("ok", "2"), ("ok", "3")]),
                   ("batch", [("ok", "4"), ("ok", "5")])]


def test_a_slow_page_is_answered_at_once_with_what_was_held() -> None:
    parent, batches = _pipe()
    parent.send([("job", "fast"), ("job", "slow"), ("job", "next")])
    assert batches.take()
    batches.add(("ok", batches.jobs.popleft()[1]), took_s=0.001)
    assert _messages(parent) == []  # held: another page is waiting
    batches.add(("device_error", batches.jobs.popleft()[1]), took_s=2.0)
    assert _messages(parent) == [("batch", [("ok", "fast"), ("device_error", "slow")])]


def test_the_parent_going_away_ends_the_worker() -> None:
    parent, batches = _pipe()
    parent.close()
    try:
        batches.take()
    except EOFError:
        return
    raise AssertionError("a worker whose parent is gone must stop")
