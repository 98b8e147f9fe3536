"""``verirank sim serve`` as a child process: a simulated phone on the ADB wire, killable like a phone.

``ServedSim(world).start()`` runs ``verirank sim serve WORLD --port 0`` in its own
session and reads the bound port from its first line; ``kill()`` sends SIGKILL
(the phone vanishes mid-command); ``stop()`` is the teardown. Use it with
``support_adb.adb_host`` (a private adb server) and ``adb:`` + ``address``;
``pause()``/``resume()`` freeze the phone (SIGSTOP/SIGCONT) so a test can act
while a run waits on it.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[2]
_READY = re.compile(r" on (?P<host>[\d.]+):(?P<port>\d+);")


def cli_command(*args: str) -> list[str]:
    """``verirank ARGS`` run by this interpreter (so the code under test is the one imported)."""
    return [sys.executable, "-c", "from verirank.cli import app; app()", *args]


def cli_env() -> dict[str, str]:
    path = os.environ.get("PYTHONPATH", "")
    return dict(os.environ, PYTHONPATH=str(REPO) + (os.pathsep + path if path else ""),
                HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")


class ServedSim:
    def __init__(self, world: str):
        self.world = world
        self.proc: Optional[subprocess.Popen] = None
        self.address = ""
        #: the last lines it printed after the first
        self.output: deque[str] = deque(maxlen=200)

    def start(self, timeout: float = 60.0) -> "ServedSim":
        self.proc = subprocess.Popen(
            cli_command("sim", "serve", self.world, "--port", "0"), cwd=REPO, env=cli_env(),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        seen = []
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()  # the first line says where it listens
            if not line:
                break
            seen.append(line)
            match = _READY.search(line)
            if match:
                self.address = f"{match['host']}:{match['port']}"
                # keep reading what it prints, so a full pipe never blocks the phone mid-run
                threading.Thread(target=self._drain, args=(self.proc.stdout,), daemon=True).start()
                return self
        self.stop()
        raise RuntimeError(f"`verirank sim serve {self.world}` did not start: {''.join(seen)[-2000:]}")

    def _drain(self, stream) -> None:
        try:
            for line in stream:
                self.output.append(line)
        except (OSError, ValueError):  # closed at stop()
            pass

    def pause(self) -> None:
        """SIGSTOP: the phone freezes; commands sent to it wait (no clock involved)."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL: the phone is gone, no goodbye on open connections."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGCONT)  # a paused server could not act on SIGTERM
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.proc = None
