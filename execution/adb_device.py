"""``AdbDevice``: a real phone or emulator (or the simulator served over ADB).

It talks to the adb server through adbutils (found or started by ``execution/adb_server.py``)
and uses only what every Android device has:
``uiautomator dump`` + ``sync:`` pull for the screen, ``exec-out screencap -p`` for pixels, ``input``
for actions, ``am``/``monkey``/``pm`` for apps, ``getprop``/``dumpsys`` for
versions and focus.  Every failure surfaces as :class:`DeviceError` naming the
serial and the command; every adb call has a timeout, so a vanished device
raises instead of hanging.

With ``skip_unchanged_dumps`` (on in the pipeline: ``execution.adb``), every
``dump_xml`` takes a screenshot *in parallel* with the dump, and:

* the next ``screenshot_png`` before any input returns that screenshot (no
  second ``screencap``): a step that needs both costs about one dump;
* when the screenshot is pixel-identical to one whose dump is *known* (two
  independent dumps of that same screenshot agreed), the dump is not waited
  for: the known XML is returned as soon as the screenshot arrives, and the
  dump still running on the phone is collected before the next command that
  could collide with it. A screen that only looks the same (an invisible
  state change) is the one case this can miss; switch it off then.

What is known is shared by the phones of one build in this process (same
``ro.build.fingerprint`` and model, :class:`ScreenMemory`): in a farm of like
phones a screen one phone dumped twice is known to all of them, instead of
each phone learning every screen for itself.
"""

from __future__ import annotations

import hashlib
import logging
import re
import shlex
import subprocess
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Literal, Optional

from execution.adb_server import LOCAL_HOSTS, adb_binary, adb_client, ensure_adb_server, server_address
from verirank_core.device import AppInfo, Device, DeviceInfo, Key
from verirank_core.isolation import RestoreReport, SettingsSnapshot, restore_over_shell, snapshot_over_shell
from verirank_core.errors import AppNotInstalled, DeviceError

log = logging.getLogger(__name__)

ResetMode = Literal["force-stop", "pm-clear", "snapshot"]

DUMP_PATH = "/sdcard/window_dump.xml"
KEYCODES: dict[str, str] = {"back": "KEYCODE_BACK", "home": "KEYCODE_HOME", "enter": "KEYCODE_ENTER",
                             "menu": "KEYCODE_MENU"}
#: transient ``uiautomator dump`` failures worth retrying (busy UI, window changing)
TRANSIENT_DUMP_ERRORS = ("could not get idle state", "null root node", "ERROR:")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

_FOCUS_RE = re.compile(r"mCurrentFocus=Window\{[^}]*?\s(?P<package>[^\s/}]+)/(?P<activity>[^\s}]+)\}")
_RESUMED_RE = re.compile(
    r"mResumedActivity: ActivityRecord\{[^}]*?\s(?P<package>[^\s/}]+)/(?P<activity>[^\s}]+)[\s}]")
_SIZE_RE = re.compile(r"(Override|Physical) size: (\d+)x(\d+)")
_PROP_RE = re.compile(r"^\[(?P<key>[^\]]+)\]: \[(?P<value>.*)\]\s*$", re.M)
_VERSION_RE = re.compile(r"versionName=(\S+)")


def escape_input_text(text: str) -> str:
    """``text`` as one argument of ``input text`` on the device's shell.

    ``input text`` turns ``%s`` into a space (a raw space would split the
    argument on some Android versions), and the device shell needs the whole
    argument quoted so that ``&;|<>()$`'"\\`` reach ``input`` literally.
    """
    return shlex.quote(text.replace(" ", "%s"))


class ScreenMemory:
    """Screenshot digest -> dump XML: first seen, then known once a second, independent dump agrees.

    One per device build in this process (:func:`screen_memory`), shared by the ``AdbDevice`` of
    every phone of that build.
    """

    def __init__(self, limit: int = 256):
        self.limit = limit
        self._seen: OrderedDict[bytes, str] = OrderedDict()
        self._known: OrderedDict[bytes, str] = OrderedDict()
        self._lock = threading.Lock()

    def known(self, digest: bytes) -> Optional[str]:
        with self._lock:
            xml = self._known.get(digest)
            if xml is not None:
                self._known.move_to_end(digest)
            return xml

    def remember(self, digest: bytes, xml: str) -> None:
        with self._lock:
            if self._seen.get(digest) == xml:
                self._known[digest] = xml
                while len(self._known) > self.limit:
                    self._known.popitem(last=False)
            self._seen[digest] = xml
            self._seen.move_to_end(digest)
            while len(self._seen) > self.limit:
                self._seen.popitem(last=False)


_memories: dict[str, ScreenMemory] = {}
_memories_lock = threading.Lock()


def screen_memory(build: str) -> ScreenMemory:
    """The memory of the phones whose build is ``build`` (fingerprint and model)."""
    with _memories_lock:
        return _memories.setdefault(build, ScreenMemory())


def forget_screens() -> None:
    """Drop every known screen of this process (tests that count skipped dumps start from none)."""
    with _memories_lock:
        _memories.clear()


class AdbDevice(Device):
    """A device reached through an adb server; ``serial`` as ``adb devices`` lists it."""

    def __init__(
        self,
        serial: str,
        *,
        adb_host: Optional[str] = None,
        adb_port: Optional[int] = None,
        dump_retries: int = 3,
        reset: ResetMode = "force-stop",
        snapshot_name: Optional[str] = None,
        app_package: Optional[str] = None,
        connect: bool = True,
        timeout: float = 30.0,
        retry_delay: float = 0.5,
        start_server: bool = True,
        skip_unchanged_dumps: bool = False,
    ):
        if reset not in ("force-stop", "pm-clear", "snapshot"):
            raise DeviceError(f"adb {serial}: unknown reset mode {reset!r}; "
                              "use force-stop, pm-clear or snapshot")
        if reset == "snapshot" and not snapshot_name:
            raise DeviceError(f"adb {serial}: reset='snapshot' needs snapshot_name (an emulator AVD snapshot)")
        self.serial = serial
        self.spec = f"adb:{serial}"
        self.adb_host, self.adb_port = server_address(adb_host, adb_port)
        self.dump_retries = max(0, dump_retries)
        self.reset_mode = reset
        self.snapshot_name = snapshot_name
        self.app_package = app_package
        self.timeout = timeout
        self.retry_delay = retry_delay
        self.skip_unchanged_dumps = skip_unchanged_dumps
        #: counts for benchmarks: dumps sent, dumps answered from a known screen
        self.dumps = 0
        self.skipped_dumps = 0
        self._pool: Optional[ThreadPoolExecutor] = None
        #: a dump left running on the phone after a skip; collected before the next dump
        self._pending_dump: Optional[Future] = None
        #: the screenshot taken with the last dump, valid until the next input
        self._fresh_shot: Optional[bytes] = None
        #: the app ``reset`` just launched, until the next input: launching it again is a no-op on the
        #: phone that costs a second (the agent launches the page's app after every reset)
        self._just_launched: Optional[str] = None
        #: the known screens of this phone's build, found on the first dump (see :class:`ScreenMemory`)
        self._screens: Optional[ScreenMemory] = None
        self._state_lock = threading.Lock()
        self._client = adb_client(self.adb_host, self.adb_port, timeout)
        try:
            ensure_adb_server(self.adb_host, self.adb_port, start=start_server, timeout=timeout)
        except DeviceError as exc:
            raise DeviceError(f"adb {serial}: {exc}") from None
        if connect and _is_network_serial(serial):
            self._connect()
        self._wait_online()
        self._device = self._client.device(serial)
        try:
            # shell_v2 carries exit statuses; without it adbutils appends `; echo X4EXIT:$?`
            self._shell_v2 = "shell_v2" in self._device.get_features().split(",")
        except Exception as exc:
            raise self._error("features", exc) from exc

    # -- connection ---------------------------------------------------------------
    def _connect(self) -> None:
        try:
            reply = self._client.connect(self.serial, timeout=self.timeout)
        except Exception as exc:
            raise self._error("connect", exc) from exc
        if "connected to" not in reply:
            raise DeviceError(f"adb {self.serial}: `adb connect {self.serial}` failed: {reply.strip()}")

    def _wait_online(self) -> None:
        """Wait until the server reports the device as ``device`` (not offline/connecting)."""
        deadline = time.monotonic() + self.timeout
        state = "unknown"
        while time.monotonic() < deadline:
            try:
                rows = {d.serial: d.state for d in self._client.list()}
            except Exception as exc:
                raise self._error("devices", exc) from exc
            state = rows.get(self.serial, "absent")
            if state == "device":
                return
            if state in ("unauthorized",):
                break
            time.sleep(0.05)
        raise DeviceError(f"adb {self.serial}: device is {state!r}, not online"
                          + (" (accept the USB debugging prompt on the phone)" if state == "unauthorized" else ""))

    def _error(self, command: str, exc: BaseException) -> DeviceError:
        return DeviceError(f"adb {self.serial}: `{command}` failed: {type(exc).__name__}: {exc}")

    def _run_adb(self, args: list[str], what: str) -> str:
        """Run the adb binary itself (for what adbutils cannot do, e.g. ``emu``)."""
        where = ["-P", str(self.adb_port)] if self.adb_host in LOCAL_HOSTS else \
            ["-H", self.adb_host, "-P", str(self.adb_port)]
        cmd = [adb_binary(), *where, *args]
        try:
            done = subprocess.run(cmd, capture_output=True, timeout=self.timeout, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError) as exc:
            raise self._error(what, exc) from exc
        output = (done.stdout + done.stderr).decode("utf-8", "replace")
        if done.returncode != 0:
            raise DeviceError(f"adb {self.serial}: `adb {' '.join(args)}` exited {done.returncode}: "
                              f"{output.strip()}")
        return output

    # -- shell plumbing -----------------------------------------------------------
    def shell(self, command: str) -> tuple[int, str]:
        """Run a shell command; (exit status, stdout+stderr). Raises only on transport errors."""
        try:
            result = self._device.shell2(command, timeout=self.timeout, v2=self._shell_v2)
        except Exception as exc:  # adbutils raises AdbError, OSError, EOFError, socket.timeout...
            raise self._error(f"shell {command}", exc) from exc
        return result.returncode, result.output

    def _check(self, command: str) -> str:
        """Run a command that must succeed; its output."""
        status, output = self.shell(command)
        if status != 0:
            raise DeviceError(f"adb {self.serial}: `{command}` exited {status}: {output.strip()}")
        return output

    def exec_out(self, command: str) -> bytes:
        """Binary-clean stdout of a command (``adb exec-out``)."""
        try:
            conn = self._device.open_transport(timeout=self.timeout)
            try:
                conn.send_command("exec:" + command)
                conn.check_okay()
                return conn.read_until_close(encoding=None)
            finally:
                conn.close()
        except Exception as exc:
            raise self._error(f"exec-out {command}", exc) from exc

    # -- Device -------------------------------------------------------------------
    def dump_xml(self) -> str:
        if not self.skip_unchanged_dumps:
            self._invalidate()
            return self._dump_now()
        self._collect_pending()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix=f"adb-{self.serial}")
        shot_job = self._pool.submit(self._screencap)
        dump_job = self._pool.submit(self._dump_now)
        try:
            shot = shot_job.result()
        except DeviceError:
            shot = None  # the dump alone still answers
        digest = hashlib.blake2b(shot, digest_size=16).digest() if shot is not None else None
        with self._state_lock:
            self._fresh_shot = shot
        screens = self._screen_memory()
        known = screens.known(digest) if digest is not None else None
        if known is not None:
            self.skipped_dumps += 1
            self._pending_dump = dump_job
            return known
        xml = dump_job.result()
        if digest is not None:
            screens.remember(digest, xml)
        return xml

    def _screen_memory(self) -> ScreenMemory:
        """The memory shared with the phones of this build; this phone's own if it will not say."""
        if self._screens is None:
            try:
                status, output = self.shell("getprop ro.build.fingerprint; getprop ro.product.model")
            except DeviceError:
                status, output = 1, ""
            build = " ".join(output.split()) if status == 0 else ""
            self._screens = screen_memory(build) if build else ScreenMemory()
        return self._screens

    def _collect_pending(self) -> None:
        """Wait for a dump left running after a skip (two dumps at once make uiautomator fail)."""
        job, self._pending_dump = self._pending_dump, None
        if job is not None:
            try:
                job.result()
            except DeviceError as exc:
                log.info("adb %s: a skipped dump failed afterwards: %s", self.serial, exc)

    def _invalidate(self) -> None:
        """Input was sent: the screenshot taken with the last dump no longer shows the screen."""
        self._fresh_shot = None
        self._just_launched = None

    def _dump_now(self) -> str:
        self.dumps += 1
        command = f"rm -f {DUMP_PATH}; uiautomator dump {DUMP_PATH}"
        last = ""
        for attempt in range(self.dump_retries + 1):
            if attempt:
                time.sleep(self.retry_delay * 2 ** (attempt - 1))
            status, output = self.shell(command)
            last = output.strip()
            if any(err in output for err in TRANSIENT_DUMP_ERRORS) or "dumped to" not in output:
                log.info("adb %s: uiautomator dump attempt %d failed: %s", self.serial, attempt + 1, last)
                continue
            try:
                data = self._device.sync.read_bytes(DUMP_PATH)
            except Exception as exc:
                raise self._error(f"pull {DUMP_PATH}", exc) from exc
            xml = data.decode("utf-8", "replace")
            if xml.lstrip().startswith("<?xml") or xml.lstrip().startswith("<hierarchy"):
                return xml
            last = f"{DUMP_PATH} is not XML: {xml[:80]!r}"
        raise DeviceError(f"adb {self.serial}: `uiautomator dump` failed after "
                          f"{self.dump_retries + 1} attempts: {last}")

    def screenshot_png(self) -> bytes:
        shot = self._fresh_shot
        if shot is not None:
            return shot
        return self._screencap()

    def _screencap(self) -> bytes:
        data = self.exec_out("screencap -p")
        if not data.startswith(PNG_MAGIC):
            raise DeviceError(f"adb {self.serial}: `screencap -p` returned {len(data)} bytes that are "
                              f"not a PNG: {data[:60]!r}")
        return data

    def screen_size(self) -> tuple[int, int]:
        output = self._check("wm size")
        matches = {kind: (int(w), int(h)) for kind, w, h in _SIZE_RE.findall(output)}
        size = matches.get("Override") or matches.get("Physical")
        if size is None:
            raise DeviceError(f"adb {self.serial}: cannot read the screen size from `wm size`: {output!r}")
        return size

    def tap(self, x: int, y: int) -> None:
        self._invalidate()
        self._check(f"input tap {int(x)} {int(y)}")

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        self._invalidate()
        # a swipe that does not move is how `input` spells a long press
        self._check(f"input swipe {int(x)} {int(y)} {int(x)} {int(y)} {int(duration_ms)}")

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self._invalidate()
        self._check(f"input swipe {int(x1)} {int(y1)} {int(x2)} {int(y2)} {int(duration_ms)}")

    def input_text(self, text: str) -> None:
        self._invalidate()
        # `input text` cannot type a newline: type the lines and press ENTER between them
        for index, line in enumerate(text.split("\n")):
            if index:
                self.key("enter")
            if line:
                self._check(f"input text {escape_input_text(line)}")

    def key(self, key: Key) -> None:
        self._invalidate()
        code = KEYCODES.get(key)
        if code is None:
            raise DeviceError(f"adb {self.serial}: unknown key {key!r}; use one of {sorted(KEYCODES)}")
        self._check(f"input keyevent {code}")

    def launch(self, package: str, activity: Optional[str] = None) -> None:
        if activity is None and package == self._just_launched:
            self._just_launched = None
            return
        self._invalidate()
        if activity:
            output = self._check(f"am start -n {shlex.quote(package + '/' + activity)}")
            if "Error" in output:
                raise DeviceError(f"adb {self.serial}: cannot start {package}/{activity}: {output.strip()}")
            return
        status, output = self.shell(
            f"monkey -p {shlex.quote(package)} -c android.intent.category.LAUNCHER 1")
        if "No activities found" in output:  # monkey's word for a missing package
            raise AppNotInstalled(f"adb {self.serial}: {package} is not installed: {output.strip()}")
        if status != 0 or "Events injected: 1" not in output:
            raise DeviceError(f"adb {self.serial}: cannot launch {package}: {output.strip()}")

    def current_app(self) -> AppInfo:
        _, windows = self.shell("dumpsys window windows")
        match = _FOCUS_RE.search(windows)
        if match is None:
            _, activities = self.shell("dumpsys activity activities")
            match = _RESUMED_RE.search(activities)
        if match is None:
            raise DeviceError(f"adb {self.serial}: cannot tell the focused app from dumpsys window/activity")
        return AppInfo(match.group("package"), match.group("activity"))

    def info(self, packages: tuple[str, ...] = ()) -> DeviceInfo:
        props = {m.group("key"): m.group("value") for m in _PROP_RE.finditer(self._check("getprop"))}
        versions: dict[str, str] = {}
        for package in packages:
            _, output = self.shell(f"dumpsys package {shlex.quote(package)}")
            match = _VERSION_RE.search(output)
            if match and match.group(1) != "null":
                versions[package] = match.group(1)
        return DeviceInfo(
            # the phone's own serial; over Wi-Fi debugging the adb serial is only its address
            serial=props.get("ro.serialno") or self.serial,
            model=props.get("ro.product.model", ""),
            manufacturer=props.get("ro.product.manufacturer", ""),
            os_version=props.get("ro.build.version.release", ""),
            sdk=props.get("ro.build.version.sdk", ""),
            app_versions=versions,
        )

    def reset(self, package: Optional[str] = None) -> None:
        """Clean start: restore the snapshot, or force-stop (+ ``pm clear``), HOME, relaunch ``package``."""
        package = package or self.app_package
        self._invalidate()
        self._collect_pending()
        if self.reset_mode == "snapshot":
            self._load_snapshot()  # the snapshot *is* the clean start state
            return
        if package:
            self._check(f"am force-stop {shlex.quote(package)}")
            if self.reset_mode == "pm-clear":
                output = self._check(f"pm clear {shlex.quote(package)}")
                if "Success" not in output:
                    raise DeviceError(f"adb {self.serial}: `pm clear {package}` said: {output.strip()}")
        self.key("home")
        if package:
            self.launch(package)
            self._just_launched = package

    def _load_snapshot(self) -> None:
        """Restore an emulator AVD snapshot through the emulator console (``adb emu``)."""
        output = self._run_adb(["-s", self.serial, "emu", "avd", "snapshot", "load", str(self.snapshot_name)],
                               what=f"emu avd snapshot load {self.snapshot_name}")
        if "KO" in output or "error" in output.lower():
            raise DeviceError(f"adb {self.serial}: snapshot {self.snapshot_name!r} did not load: "
                              f"{output.strip()} (snapshots need an Android emulator)")
        self._wait_online()

    def snapshot_settings(self) -> SettingsSnapshot:
        """``settings list system|secure|global`` (what a page could change that outlives force-stop)."""
        return snapshot_over_shell(self.shell)

    def restore_settings(self, snapshot: SettingsSnapshot, ignore: tuple[str, ...] = ()) -> RestoreReport:
        """``settings put`` every changed value back and ``settings delete`` every added key."""
        return restore_over_shell(self.shell, snapshot, ignore)

    def close(self) -> None:
        """Collect a pending dump and stop the helper threads (adbutils opens one connection per command)."""
        self._collect_pending()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


def _is_network_serial(serial: str) -> bool:
    """``host:port`` serials are network devices that need ``adb connect``."""
    host, sep, port = serial.rpartition(":")
    return bool(sep and host and port.isdigit())
