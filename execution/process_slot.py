"""The ``processes`` executor: a device slot in its own worker process.

Simulators are CPU-bound, so two cores run two. Only the config crosses the
process boundary: the child builds its own :class:`~execution.slots.DeviceSlot`
with :func:`~execution.slots.build_slot` (:func:`_slot_process`). Workers
fork from a fork server that imported the heavy modules once
(``execution/worker_preload.py``; :func:`warm_up_workers` starts it early).

The parent keeps pages in the child's pipe, so the child starts the next page
while the parent records the last one; replies come back several to a message
once pages prove fast (:class:`ReplyBatches`).
"""

from __future__ import annotations

import os
import time
from collections import deque
from contextlib import ExitStack
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any, Optional, Union

from verirank_core.config import RunConfig
from verirank_core.errors import DeviceError, ExecutionError
from execution.jobs import Job, PageOutput, run_vectors
from execution.slots import PageFifo, build_slot

__all__ = ["ProcessSlot", "ReplyBatches", "one_thread_per_process", "process_context", "PRELOAD"]

#: what a worker sends back for one page: ("ok", PageOutput), ("device_error", message) or ("error", traceback)
Reply = tuple[str, Union[PageOutput, str]]

#: imported once by the fork server, so that each worker process starts with the stage
#: modules, sentence-transformers (seconds to import) and the MiniLM weights loaded
PRELOAD = ["execution.worker_preload"]


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


def process_context() -> BaseContext:
    """``forkserver`` where there is one (workers fork from a clean server with the heavy
    imports done), else ``spawn``. Never plain ``fork``: this process runs threads."""
    import multiprocessing

    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
        return ctx
    return multiprocessing.get_context("spawn")


# --- the child -----------------------------------------------------------------------

def _slot_process(conn: Connection, config_json: dict, run_dir: str) -> None:
    """A worker process: build a slot from the config, then run the pages the parent sends."""
    import gc
    import traceback

    one_thread_per_process()
    slot = None
    held = ExitStack()
    try:
        config = RunConfig.model_validate(config_json)
        slot = build_slot(config, run_dir)
        held.enter_context(run_vectors(config, run_dir))
        gc.freeze()  # what the slot loaded lives as long as the worker: keep collections small
        conn.send(("ready", None))
        batches = ReplyBatches(conn)
        while batches.take():
            job, spec = batches.jobs.popleft()
            started = time.perf_counter()
            reply: Reply
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


class ReplyBatches:
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

    def __init__(self, conn: Connection):
        self.conn = conn
        self.jobs: deque[tuple[Job, str]] = deque()
        self.replies: list[Reply] = []
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

    def _read(self, message: Optional[list[tuple[Job, str]]]) -> bool:
        if message is None:
            return False
        self.jobs.extend(message)
        return True

    def add(self, reply: Reply, took_s: float) -> None:
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


# --- the parent ----------------------------------------------------------------------

class ProcessSlot(PageFifo):
    """A device slot in its own process (see the module docstring).

    A child that dies counts as a failed device: the page goes back to the
    queue and a new child is started. The slot holds ``depth`` pages: 2, or
    twice a batch while the child's replies come in batches.
    """

    def __init__(self, config: RunConfig, run_dir: Path):
        super().__init__()
        self.config_json = config.to_manifest()
        self.run_dir = str(run_dir)
        self.proc: Optional[BaseProcess] = None
        self.conn: Optional[Connection] = None
        self._outbox: list[tuple[Job, str]] = []
        self._replies: deque[Reply] = deque()
        self._batched = False

    @property
    def depth(self) -> int:
        return 2 * ReplyBatches.size if self._batched else 2

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
        ctx = process_context()
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
        self.start()
        super().submit(job, spec)
        self._outbox.append((job, spec))

    def _send(self) -> None:
        if self._outbox:
            try:
                self.conn.send(self._outbox)
            except (OSError, BrokenPipeError):
                pass  # the child is gone: the receive that follows finds out and says so
            self._outbox = []

    def outcome(self, job: Job, spec: str) -> PageOutput:
        what = f"running {job.url} on {spec}"
        if not self._replies:
            self._send()
            kind, payload = self._receive(what)
            if kind != "batch":  # the child failed outside a page
                self._check(kind, payload, what)
            self._replies.extend(payload)
            self._batched = len(payload) > 1
        return self._check(*self._replies.popleft(), what)

    def close(self) -> None:
        self.drop()  # the pages in the pipe die with the child
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
