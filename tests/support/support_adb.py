"""Helpers for tests that need a real adb server talking to our ADB device server.

``AdbHostServer`` runs the adbutils-bundled ``adb`` binary as ``adb -P PORT
nodaemon server`` on a free port: a child process we own, so teardown can
always stop it (``kill-server``, then a kill if it lingers), and no server is
ever left on the default port 5037.  USB, mDNS and emulator scanning are turned
off so the server only sees the devices we ``adb connect``.

``adb_host`` is a module-scoped pytest fixture, registered for every test
module by ``tests/conftest.py`` (``pytest_plugins``).  It skips the module
with a clear reason only when no adb binary can run on this machine.

``AdbServerLeftToTheProduct`` is the opposite: an environment where no adb
server runs yet (``ANDROID_ADB_SERVER_PORT`` names a free private port), for
tests of the path a fresh machine takes, where the code under test must start
the server itself; whatever server it starts is stopped at the end.

``StubPhone`` is a scripted ``Device`` for protocol-level tests that must not
depend on the simulator: a screen with one text field, a toggle and an app
switcher, recording every call.
"""

from __future__ import annotations

import atexit
import io
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Optional

import pytest

from verirank_core.device import AppInfo, Device, DeviceInfo

ADB_ENV = {"ADB_MDNS": "0", "ADB_USB": "0", "ADB_EMU": "0", "ADB_LIBUSB": "0"}
_LIVE: list = []  # AdbHostServer and AdbServerLeftToTheProduct: anything with stop()


def find_adb() -> tuple[Optional[str], str]:
    """(path, "") of a runnable adb binary, or (None, why not)."""
    try:
        import adbutils

        path = adbutils.adb_path()
    except Exception as exc:  # adbutils without its bundled binary
        return None, f"adbutils has no adb binary: {exc}"
    try:
        done = subprocess.run([path, "version"], capture_output=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"{path} cannot run: {exc}"
    if done.returncode != 0:
        return None, f"`{path} version` exited {done.returncode}"
    return path, ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, timeout: float = 20.0, interval: float = 0.05, what: str = "condition"):
    """Poll ``predicate`` until it returns a truthy value; fail the test on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


class AdbHostServer:
    """One private adb server process on a free port."""

    def __init__(self, adb: str, workdir: Path):
        self.adb = adb
        self.port = free_port()
        self.workdir = workdir
        self.env = dict(os.environ, ANDROID_USER_HOME=str(workdir), **ADB_ENV)
        self.env.pop("ANDROID_SERIAL", None)
        self.log_path = workdir / "adb-server.log"
        self.proc: Optional[subprocess.Popen] = None

    def start(self) -> "AdbHostServer":
        log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [self.adb, "-P", str(self.port), "nodaemon", "server"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=self.env,
            start_new_session=True,
        )
        log.close()
        _LIVE.append(self)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"adb server exited with {self.proc.returncode}: {self.log_tail()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"adb server did not listen on {self.port}: {self.log_tail()}")

    def log_tail(self, n: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def run(self, *args: str, timeout: float = 30, input: Optional[bytes] = None) -> subprocess.CompletedProcess:
        """Run ``adb -P PORT ARGS`` (stdin closed unless ``input`` is given)."""
        return subprocess.run(
            [self.adb, "-P", str(self.port), *args], capture_output=True, timeout=timeout, env=self.env,
            input=input, stdin=None if input is not None else subprocess.DEVNULL,
        )

    def devices(self) -> dict[str, str]:
        """serial -> state, from ``adb devices``."""
        out = self.run("devices").stdout.decode()
        rows = [line.split("\t") for line in out.splitlines()[1:] if "\t" in line]
        return {serial: state for serial, state in rows}

    def connect(self, address: str, timeout: float = 20) -> None:
        """``adb connect`` and wait until the device is online."""
        done = self.run("connect", address)
        assert b"connected to" in done.stdout, (done.stdout, done.stderr)
        wait_until(lambda: self.devices().get(address) == "device", timeout, what=f"{address} online")

    def disconnect(self, address: str) -> None:
        self.run("disconnect", address)

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                self.run("kill-server", timeout=10)
            except subprocess.SubprocessError:
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self in _LIVE:
            _LIVE.remove(self)
        self.proc = None


class AdbServerLeftToTheProduct:
    """No adb server yet: a free private port, for the code under test to start one on.

    ``env`` is what a fresh machine's shell would hold plus ``ANDROID_ADB_SERVER_PORT``
    (so the product, like adb itself, uses that port and never touches 5037), a
    private ``ANDROID_USER_HOME`` and no USB/mDNS/emulator scanning. ``stop()``
    ends the server the product started there (``adb kill-server``, then its pid,
    found by the private port, if it lingers).
    """

    def __init__(self, adb: str, workdir: Path):
        self.adb = adb
        self.port = free_port()
        self.workdir = workdir
        self.env = {"ANDROID_ADB_SERVER_PORT": str(self.port), "ANDROID_USER_HOME": str(workdir), **ADB_ENV}
        _LIVE.append(self)

    def listening(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
            return True
        except OSError:
            return False

    def run(self, *args: str, timeout: float = 30) -> subprocess.CompletedProcess:
        return subprocess.run([self.adb, "-P", str(self.port), *args], capture_output=True, timeout=timeout,
                              env=dict(os.environ, **self.env), stdin=subprocess.DEVNULL)

    def kill_server(self) -> None:
        """Stop the server on our port, as a user's `adb kill-server` would; wait until it is gone."""
        if self.listening():
            try:
                self.run("kill-server", timeout=10)
            except subprocess.SubprocessError:
                pass
        deadline = time.monotonic() + 10
        while self.listening() and time.monotonic() < deadline:
            time.sleep(0.05)
        for pid in self._server_pids():  # still there: end it by its id
            try:
                os.kill(pid, 9)
            except OSError:
                pass

    def _server_pids(self) -> list[int]:
        """Pids of adb servers on our private port (``adb -L tcp:PORT fork-server server``)."""
        pids = []
        for entry in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                argv = entry.read_bytes().split(b"\0")
            except OSError:
                continue
            if argv and argv[0].endswith(b"adb") and f"tcp:{self.port}".encode() in argv and b"server" in argv:
                pids.append(int(entry.parent.name))
        return pids

    def stop(self) -> None:
        self.kill_server()
        if self in _LIVE:
            _LIVE.remove(self)


@atexit.register
def _stop_leftovers() -> None:  # a crashed test run must not leave adb servers behind
    for server in list(_LIVE):
        server.stop()


@pytest.fixture
def no_adb_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """No adb server runs yet, and this process's environment points adb at a free private port."""
    path, why = find_adb()
    if path is None:
        pytest.skip(f"no runnable adb binary: {why}")
    fresh = AdbServerLeftToTheProduct(path, tmp_path / "android-home")
    fresh.workdir.mkdir()
    assert not fresh.listening()
    for name, value in fresh.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("ANDROID_ADB_SERVER_ADDRESS", raising=False)
    monkeypatch.delenv("ANDROID_SERIAL", raising=False)
    try:
        yield fresh
    finally:
        fresh.stop()
        assert not fresh.listening()


@pytest.fixture(scope="module")
def adb_host():
    """A private adb server for one test module; skipped only if adb cannot run here."""
    path, why = find_adb()
    if path is None:
        pytest.skip(f"no runnable adb binary: {why}")
    with tempfile.TemporaryDirectory(prefix="verirank-adb-") as tmp:
        server = AdbHostServer(path, Path(tmp)).start()
        try:
            yield server
        finally:
            server.stop()
            assert server.proc is None


# -- a scripted device for protocol tests ------------------------------------------

def solid_png(size: tuple[int, int], color: tuple[int, int, int]) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, "PNG")
    return buffer.getvalue()


class StubPhone(Device):
    """A scripted phone: Settings with a Wi-Fi toggle and a search field, plus a launcher.

    Taps inside the toggle's bounds flip it; typed text lands in the field; BACK
    or HOME return to the launcher.  Every call is appended to ``calls``.
    """

    WIDTH, HEIGHT = 1080, 2400
    TOGGLE = (900, 300, 1040, 400)  # left, top, right, bottom

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.package = "com.google.android.apps.nexuslauncher"
        self.activity = ".NexusLauncherActivity"
        self.wifi = False
        self.text = ""

    def dump_xml(self) -> str:
        l, t, r, b = self.TOGGLE
        return (
            "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
            f'<hierarchy rotation="0"><node index="0" text="" package="{self.package}" '
            f'class="android.widget.FrameLayout" bounds="[0,0][{self.WIDTH},{self.HEIGHT}]">'
            f'<node index="0" text="{self.text}" resource-id="search" class="android.widget.EditText" '
            f'package="{self.package}" bounds="[0,100][1080,200]" />'
            f'<node index="1" text="Wi‑Fi" checkable="true" checked="{str(self.wifi).lower()}" '
            f'class="android.widget.Switch" package="{self.package}" bounds="[{l},{t}][{r},{b}]" />'
            "</node></hierarchy>"
        )

    def screenshot_png(self) -> bytes:
        return solid_png((self.WIDTH // 10, self.HEIGHT // 10), (0, 160, 0) if self.wifi else (90, 90, 90))

    def screen_size(self) -> tuple[int, int]:
        return self.WIDTH, self.HEIGHT

    def tap(self, x: int, y: int) -> None:
        self.calls.append(("tap", x, y))
        l, t, r, b = self.TOGGLE
        if l <= x <= r and t <= y <= b:
            self.wifi = not self.wifi

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        self.calls.append(("long_press", x, y, duration_ms))

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self.calls.append(("swipe", x1, y1, x2, y2, duration_ms))

    def input_text(self, text: str) -> None:
        self.calls.append(("text", text))
        self.text += text

    def key(self, key) -> None:
        self.calls.append(("key", key))
        if key in ("back", "home"):
            self.package, self.activity = "com.google.android.apps.nexuslauncher", ".NexusLauncherActivity"

    def launch(self, package: str, activity: Optional[str] = None) -> None:
        self.calls.append(("launch", package, activity))
        from verirank_core.errors import DeviceError

        if package != "com.android.settings":
            raise DeviceError(f"no launchable activity in {package}")
        self.package, self.activity = package, activity or ".Settings"

    def current_app(self) -> AppInfo:
        return AppInfo(self.package, self.activity)

    def info(self, packages: tuple[str, ...] = ()) -> DeviceInfo:
        known = {"com.android.settings": "13", "com.google.android.apps.nexuslauncher": "13.0.1"}
        return DeviceInfo("stub-1", "Pixel 7", "Google", "13", "33",
                          {p: known[p] for p in packages if p in known})

    def reset(self, package: Optional[str] = None) -> None:
        self.calls.append(("reset", package))
        self.wifi, self.text = False, ""
        self.key("home")
