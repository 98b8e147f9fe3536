"""The shell of the simulated phone: runs command lines against a ``Device``.

Each supported command mimics what the real Android tool prints (``uiautomator
dump`` with its historic "hierchary" typo, ``wm size``, ``dumpsys window``...)
because clients such as adbutils parse that text.  Output goes to an ``emit(fd,
data)`` callback as it is produced (fd 1 = stdout, 2 = stderr), so a service can
stream it or frame it (shell_v2).  Device calls are serialised by one lock: a
real phone also handles one input event at a time.  With a
:class:`~phonesim.latency.Latency`, a command first waits as long as it takes on
a phone, outside that lock: a phone runs a ``screencap`` while a dump is going.
"""

from __future__ import annotations

import io
import logging
import struct
import threading
import time
import zlib
from dataclasses import dataclass
from typing import Callable, Optional

from phonesim.adbproto.shellparse import STATUS_MARK, Pipeline, ShellSyntaxError, SimpleCommand, parse
from phonesim.adbproto.vfs import VfsError, VirtualFS
from phonesim.latency import Latency
from verirank_core.device import Device, DeviceInfo
from verirank_core.errors import AppNotInstalled, DeviceError

log = logging.getLogger(__name__)

Emit = Callable[[int, bytes], None]

SHELL = "/system/bin/sh"
DEFAULT_DUMP_PATH = "/sdcard/window_dump.xml"
#: an ``input swipe`` that stays on one point for at least this long is a long press
LONG_PRESS_MS = 500
NOT_FOUND_STATUS = 127

KEYCODES = {
    "HOME": 3, "BACK": 4, "DPAD_UP": 19, "DPAD_DOWN": 20, "DPAD_LEFT": 21, "DPAD_RIGHT": 22,
    "DPAD_CENTER": 23, "VOLUME_UP": 24, "VOLUME_DOWN": 25, "POWER": 26, "CAMERA": 27,
    "TAB": 61, "SPACE": 62, "ENTER": 66, "DEL": 67, "MENU": 82, "SEARCH": 84, "ESCAPE": 111,
    "FORWARD_DEL": 112, "MOVE_HOME": 122, "MOVE_END": 123, "VOLUME_MUTE": 164,
    "APP_SWITCH": 187, "SLEEP": 223, "WAKEUP": 224,
}
#: the keys the Device interface can press
DEVICE_KEYS = {3: "home", 4: "back", 66: "enter", 82: "menu"}
INPUT_SOURCES = {
    "keyboard", "mouse", "joystick", "touchnavigation", "touchpad", "trackball", "stylus",
    "dpad", "gesture", "touchscreen", "gamepad", "rotaryencoder",
}


class _Exit(Exception):
    def __init__(self, status: int):
        self.status = status


@dataclass
class _IO:
    """Where one simple command reads and writes."""

    stdin: bytes
    out: Callable[[bytes], None]
    err: Callable[[bytes], None]


class DeviceShell:
    """A tiny ``/system/bin/sh`` whose commands act on ``device`` and ``fs``."""

    def __init__(
        self,
        device: Device,
        fs: Optional[VirtualFS] = None,
        *,
        serial: str = "",
        product: str = "verirank_sim",
        lock: Optional[threading.Lock] = None,
        latency: Optional[Latency] = None,
    ):
        self.device = device
        self.latency = latency or Latency()
        self.fs = fs or VirtualFS()
        self.serial = serial
        self.product = product
        self.lock = lock or threading.Lock()
        self._fail_dumps = 0
        self._fail_message = "ERROR: could not get idle state."
        self._info: Optional[DeviceInfo] = None
        self._settings_table: Optional[_SettingsTable] = None

    # -- test knobs ---------------------------------------------------------------
    def fail_next_dumps(self, count: int, message: str = "ERROR: could not get idle state.") -> None:
        """Make the next ``count`` ``uiautomator dump`` calls fail like a busy phone."""
        with self.lock:
            self._fail_dumps = count
            self._fail_message = message

    @property
    def pending_dump_failures(self) -> int:
        return self._fail_dumps

    # -- running command lines ----------------------------------------------------
    def run(self, line: str, emit: Emit, stdin: bytes = b"", status: int = 0) -> int:
        """Run a command line; return its exit status. ``status`` is the initial ``$?``."""
        return self.execute(line, emit, stdin, status)[0]

    def execute(self, line: str, emit: Emit, stdin: bytes = b"", status: int = 0) -> tuple[int, bool]:
        """Like :meth:`run`, also telling whether the line ran ``exit`` (ends an interactive shell)."""
        try:
            pipelines = parse(line)
        except ShellSyntaxError as exc:
            emit(2, f"{SHELL}: {exc}\n".encode())
            return 2, False
        try:
            for pipeline in pipelines:
                if pipeline.connector == "&&" and status != 0:
                    continue
                if pipeline.connector == "||" and status == 0:
                    continue
                status = self._run_pipeline(pipeline, emit, stdin, status)
                stdin = b""
        except _Exit as done:
            return done.status, True
        return status, False

    def run_captured(self, line: str) -> tuple[bytes, bytes, int]:
        """Run a command line; return (stdout, stderr, status). Handy in tests and tools."""
        out, err = io.BytesIO(), io.BytesIO()
        status = self.run(line, lambda fd, data: (out if fd == 1 else err).write(data))
        return out.getvalue(), err.getvalue(), status

    def _run_pipeline(self, pipeline: Pipeline, emit: Emit, stdin: bytes, status: int) -> int:
        for index, command in enumerate(pipeline.commands):
            last = index == len(pipeline.commands) - 1
            buffer = io.BytesIO()
            out = (lambda data: emit(1, data)) if last else buffer.write
            status = self._run_command(command, out, lambda data: emit(2, data), stdin, status)
            stdin = buffer.getvalue()
        return status

    def _run_command(self, command: SimpleCommand, out, err, stdin: bytes, status: int) -> int:
        expand = lambda word: word.replace(STATUS_MARK, str(status))  # noqa: E731
        argv = [expand(w) for w in command.argv]
        files: list[tuple[str, io.BytesIO, bool]] = []  # redirect targets, written afterwards
        for redirect in command.redirects:
            target = expand(redirect.target)
            if redirect.op == "2>&1":
                err = out
            elif redirect.op == ">&2":
                out = err
            elif redirect.op == "<":
                try:
                    stdin = self.fs.read(target)
                except VfsError as exc:
                    err(f"{SHELL}: can't open {target}: {exc.reason}\n".encode())
                    return 1
            else:
                sink = io.BytesIO()
                if target != "/dev/null":
                    files.append((target, sink, redirect.op.endswith(">>")))
                if redirect.op.startswith("2"):
                    err = sink.write
                else:
                    out = sink.write
        if not argv:
            code = 0
        else:
            code = self._dispatch(argv, _IO(stdin, out, err))
        for target, sink, append in files:
            try:
                self.fs.write(target, sink.getvalue(), append=append)
            except VfsError as exc:
                err(f"{SHELL}: can't create {target}: {exc.reason}\n".encode())
                code = 1
        return code

    def _dispatch(self, argv: list[str], io_: _IO) -> int:
        name = argv[0].rsplit("/", 1)[-1] if argv[0].startswith("/system/bin/") else argv[0]
        attr = "_cmd_" + name.replace("-", "_")
        handler = getattr(self, attr, None) if attr.isidentifier() else None
        if handler is None:
            io_.err(f"{SHELL}: {argv[0]}: inaccessible or not found\n".encode())
            return NOT_FOUND_STATUS
        if name in ("sleep", "exit"):
            return handler(argv[1:], io_)
        delay = self.latency.of_command([name, *argv[1:]])
        if delay:
            time.sleep(delay)  # the phone is busy, not this machine's CPU
        with self.lock:
            try:
                return handler(argv[1:], io_)
            except _Exit:
                raise
            except VfsError as exc:
                io_.err(f"{name}: {exc}\n".encode())
                return 1
            except DeviceError as exc:
                io_.err(f"{name}: {exc}\n".encode())
                return 1
            except Exception as exc:  # a device bug must become output, not a dead stream
                log.exception("simulated command %r failed", argv)
                io_.err(f"{name}: internal error: {type(exc).__name__}: {exc}\n".encode())
                return 1

    # -- helpers ------------------------------------------------------------------
    def info(self) -> DeviceInfo:
        if self._info is None:
            self._info = self.device.info()
        return self._info

    def properties(self) -> dict[str, str]:
        """The ``getprop`` table, from the device's own report."""
        info = self.info()
        manufacturer = info.manufacturer or "Verirank"
        model = info.model or "Simulated Phone"
        release = info.os_version or "13"
        return {
            "ro.build.characteristics": "default",
            "ro.build.fingerprint": f"{manufacturer.lower()}/{self.product}/{self.product}:{release}/"
                                    f"SIM.{info.sdk or '33'}/1:user/release-keys",
            "ro.build.type": "user",
            "ro.build.version.release": release,
            "ro.build.version.sdk": info.sdk or "33",
            "ro.product.brand": manufacturer.lower(),
            "ro.product.cpu.abi": "x86_64",
            "ro.product.device": self.product,
            "ro.product.manufacturer": manufacturer,
            "ro.product.model": model,
            "ro.product.name": self.product,
            "ro.serialno": self.serial or info.serial or "verirank-sim",
            "sys.boot_completed": "1",
        }

    def _focus(self) -> tuple[str, str]:
        app = self.device.current_app()
        activity = app.activity or ".MainActivity"
        return app.package, activity

    @staticmethod
    def _tag(text: str) -> str:
        """A stable 7-hex-digit id, like the object hashes in dumpsys output."""
        return f"{zlib.crc32(text.encode()) & 0xFFFFFFF:07x}"

    @staticmethod
    def _usage(io_: _IO, text: str) -> int:
        io_.err(text.encode())
        return 1

    # -- commands -----------------------------------------------------------------
    def _cmd_true(self, args: list[str], io_: _IO) -> int:
        return 0

    def _cmd_false(self, args: list[str], io_: _IO) -> int:
        return 1

    def _cmd_exit(self, args: list[str], io_: _IO) -> int:
        raise _Exit(int(args[0]) & 0xFF if args and args[0].lstrip("-").isdigit() else 0)

    def _cmd_sleep(self, args: list[str], io_: _IO) -> int:
        try:
            time.sleep(max(0.0, float(args[0])))
        except (IndexError, ValueError):
            return self._usage(io_, "usage: sleep SECONDS\n")
        return 0

    def _cmd_echo(self, args: list[str], io_: _IO) -> int:
        newline = True
        if args and args[0] == "-n":
            newline, args = False, args[1:]
        io_.out((" ".join(args) + ("\n" if newline else "")).encode())
        return 0

    def _cmd_id(self, args: list[str], io_: _IO) -> int:
        io_.out(b"uid=2000(shell) gid=2000(shell) groups=2000(shell) context=u:r:shell:s0\n")
        return 0

    def _cmd_whoami(self, args: list[str], io_: _IO) -> int:
        io_.out(b"shell\n")
        return 0

    def _cmd_reboot(self, args: list[str], io_: _IO) -> int:
        io_.err(b"reboot: Operation not permitted (the simulator cannot reboot)\n")
        return 1

    def _cmd_cat(self, args: list[str], io_: _IO) -> int:
        if not args:
            io_.out(io_.stdin)
            return 0
        status = 0
        for path in args:
            try:
                io_.out(self.fs.read(path))
            except VfsError as exc:
                io_.err(f"cat: {path}: {exc.reason}\n".encode())
                status = 1
        return status

    def _cmd_rm(self, args: list[str], io_: _IO) -> int:
        flags = "".join(a[1:] for a in args if a.startswith("-") and len(a) > 1)
        force, recursive = "f" in flags, "r" in flags or "R" in flags
        status = 0
        for path in (a for a in args if not a.startswith("-") or a == "-"):
            try:
                self.fs.remove(path, recursive=recursive)
            except VfsError as exc:
                if not (force and exc.reason == "No such file or directory"):
                    io_.err(f"rm: {path}: {exc.reason}\n".encode())
                    status = 1
        return status

    def _cmd_ls(self, args: list[str], io_: _IO) -> int:
        paths = [a for a in args if not a.startswith("-")] or ["/"]
        status = 0
        for path in paths:
            entry = self.fs.stat(path)
            if entry is None:
                io_.err(f"ls: {path}: No such file or directory\n".encode())
                status = 1
            elif entry.mode & 0o170000 == 0o100000:
                io_.out(f"{path}\n".encode())
            else:
                io_.out("".join(f"{name}\n" for name, _ in self.fs.listdir(path)).encode())
        return status

    def _cmd_grep(self, args: list[str], io_: _IO) -> int:
        import re

        flags = {a for a in args if a.startswith("-")}
        rest = [a for a in args if not a.startswith("-")]
        if not rest:
            return self._usage(io_, "usage: grep [-iv] PATTERN [FILE...]\n")
        pattern = re.compile(rest[0], re.IGNORECASE if "-i" in flags else 0)
        data = io_.stdin if len(rest) == 1 else b"".join(self.fs.read(p) for p in rest[1:])
        matched = [line for line in data.decode("utf-8", "replace").splitlines(keepends=True)
                   if bool(pattern.search(line)) != ("-v" in flags)]
        io_.out("".join(matched).encode())
        return 0 if matched else 1

    def _cmd_uiautomator(self, args: list[str], io_: _IO) -> int:
        if not args or args[0] != "dump":
            return self._usage(io_, "Usage: uiautomator <subcommand> [options]\n\n"
                                    "Available subcommands:\n\n"
                                    "dump: creates an XML dump of current UI hierarchy\n"
                                    "    dump [--verbose][file]\n")
        paths = [a for a in args[1:] if not a.startswith("--")]
        path = paths[0] if paths else DEFAULT_DUMP_PATH
        if self._fail_dumps > 0:
            # what a phone prints when the UI never goes idle (animations, a busy app)
            self._fail_dumps -= 1
            io_.err((self._fail_message + "\n").encode())
            return 0
        xml = self.device.dump_xml().encode("utf-8")
        if path == "/dev/tty":
            io_.out(xml)
        else:
            self.fs.write(path, xml)
        io_.err(f"UI hierchary dumped to: {path}\n".encode())
        return 0

    def _cmd_screencap(self, args: list[str], io_: _IO) -> int:
        png = "-p" in args
        skip_next = False
        paths = []
        for a in args:
            if skip_next:
                skip_next = False
            elif a == "-d":
                skip_next = True
            elif not a.startswith("-"):
                paths.append(a)
        if paths and paths[0].endswith(".png"):
            png = True
        data = self.device.screenshot_png()
        if not png:
            data = _png_to_raw(data)
        if paths:
            self.fs.write(paths[0], data)
        else:
            io_.out(data)
        return 0

    def _cmd_wm(self, args: list[str], io_: _IO) -> int:
        if args[:1] == ["size"]:
            w, h = self.device.screen_size()
            io_.out(f"Physical size: {w}x{h}\n".encode())
            return 0
        if args[:1] == ["density"]:
            io_.out(b"Physical density: 420\n")
            return 0
        return self._usage(io_, "usage: wm [size|density]\n")

    def _cmd_getprop(self, args: list[str], io_: _IO) -> int:
        props = self.properties()
        if args:
            io_.out((props.get(args[0], args[1] if len(args) > 1 else "") + "\n").encode())
        else:
            io_.out("".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())).encode())
        return 0

    def _cmd_input(self, args: list[str], io_: _IO) -> int:
        if args and args[0] in INPUT_SOURCES:
            args = args[1:]
        if args[:1] == ["-d"]:
            args = args[2:]
        if not args:
            return self._usage(io_, "Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]\n")
        command, rest = args[0], args[1:]
        try:
            if command == "tap" and len(rest) == 2:
                x, y = (int(float(v)) for v in rest)
                self.device.tap(x, y)
                return 0
            if command in ("swipe", "draganddrop") and len(rest) in (4, 5):
                x1, y1, x2, y2 = (int(float(v)) for v in rest[:4])
                duration = int(rest[4]) if len(rest) == 5 else 300
                if (x1, y1) == (x2, y2):
                    if duration >= LONG_PRESS_MS:
                        self.device.long_press(x1, y1, duration)
                    else:
                        self.device.tap(x1, y1)
                else:
                    self.device.swipe(x1, y1, x2, y2, duration)
                return 0
        except ValueError:
            return self._usage(io_, f"Error: Invalid arguments for command: {command}\n")
        if command == "text" and rest:
            # `input text` types its first argument; %s is how callers encode a space
            self.device.input_text(rest[0].replace("%s", " "))
            return 0
        if command == "keyevent" and rest:
            return self._keyevents([a for a in rest if not a.startswith("--")], io_)
        return self._usage(io_, f"Error: Invalid arguments for command: {command}\n"
                                "Usage: input [<source>] <command> [<arg>...]\n"
                                "  text <string>\n  keyevent <key code number or name> ...\n"
                                "  tap <x> <y>\n  swipe <x1> <y1> <x2> <y2> [duration(ms)]\n")

    def _keyevents(self, names: list[str], io_: _IO) -> int:
        codes = []
        for name in names:
            key = name.upper().removeprefix("KEYCODE_")
            code = int(key) if key.isdigit() else KEYCODES.get(key)
            if code is None:
                return self._usage(io_, f"Error: Unknown keycode: {name}\n")
            codes.append(code)
        for code in codes:
            key = DEVICE_KEYS.get(code)
            if key is None:
                io_.err(f"input: keycode {code} is not supported by this simulated device "
                        f"(supported: BACK, HOME, ENTER, MENU)\n".encode())
                return 1
            self.device.key(key)  # type: ignore[arg-type]
        return 0

    def _cmd_cmd(self, args: list[str], io_: _IO) -> int:
        """``cmd statusbar expand-settings|expand-notifications|collapse`` (the only service served)."""
        if args[:1] != ["statusbar"] or len(args) < 2:
            io_.err(f"Can't find service: {args[0] if args else ''}\n".encode())
            return 255
        sub = args[1]
        if sub in ("expand-settings", "expand-notifications"):
            expand = getattr(self.device, "expand_status_bar", None)
            if callable(expand):  # optional capability of the simulated device
                expand()
            else:
                w, h = self.device.screen_size()
                self.device.swipe(w // 2, 1, w // 2, h // 2, 300)
            return 0
        if sub == "collapse":
            collapse = getattr(self.device, "collapse_status_bar", None)
            if callable(collapse):
                collapse()
            else:
                self.device.key("back")
            return 0
        return self._usage(io_, "usage: cmd statusbar [expand-notifications|expand-settings|collapse]\n")

    def _cmd_am(self, args: list[str], io_: _IO) -> int:
        if not args:
            return self._usage(io_, "usage: am [start|force-stop] ...\n")
        sub, rest = args[0], args[1:]
        if sub in ("start", "start-activity"):
            return self._am_start(rest, io_)
        if sub == "force-stop" and rest:
            package = rest[-1]
            force_stop = getattr(self.device, "force_stop", None)
            if callable(force_stop):  # optional capability: drop the app's back stack too
                force_stop(package)
            elif self.device.current_app().package == package:
                # the Device interface cannot kill an app; at least show the launcher,
                # which is what the user of a phone sees after a force-stop
                self.device.key("home")
            return 0
        return self._usage(io_, f"Error: unknown command '{sub}'\n")

    def _am_start(self, args: list[str], io_: _IO) -> int:
        component, action, data, wait = None, None, None, False
        with_value = {"-a", "-c", "-d", "-t", "-f", "--user", "-R", "-P", "--display", "--windowingMode",
                      "--activityType", "-i", "--receiver-permission"}
        with_two = {"-e", "--es", "--ei", "--ez", "--el", "--ef", "--eu", "--ecn", "--eia", "--esa"}
        i = 0
        while i < len(args):
            a = args[i]
            if a == "-n" and i + 1 < len(args):
                component = args[i + 1]
                i += 2
            elif a in with_value:
                if a == "-a" and i + 1 < len(args):
                    action = args[i + 1]
                if a == "-d" and i + 1 < len(args):
                    data = args[i + 1]
                i += 2
            elif a in with_two:
                i += 3
            elif a == "-W":
                wait = True
                i += 1
            elif a.startswith("-"):
                i += 1
            else:
                component = component or (a if "/" in a else None)
                i += 1
        if not component or "/" not in component:
            described = " ".join(p for p in (f"act={action}" if action else "",
                                             f"dat={data}" if data else "") if p)
            io_.err(f"Error: Activity not started, unable to resolve Intent {{ {described} }}\n"
                    f"(the simulator starts activities by component: am start -n PKG/ACTIVITY)\n"
                    .encode())
            return 1
        package, activity = component.split("/", 1)
        io_.out(f"Starting: Intent {{ cmp={package}/{activity} }}\n".encode())
        try:
            launched = self.device.launch(package, activity) is not False  # type: ignore[func-returns-value]
        except DeviceError:
            launched = False
        if not launched:
            io_.err(f"Error: Activity class {{{package}/{activity}}} does not exist.\n".encode())
            return 1
        if wait:
            io_.out(f"Status: ok\nLaunchState: COLD\nActivity: {package}/{activity}\n"
                    f"TotalTime: 0\nWaitTime: 0\nComplete\n".encode())
        return 0

    def _cmd_monkey(self, args: list[str], io_: _IO) -> int:
        package = None
        for i, a in enumerate(args):
            if a == "-p" and i + 1 < len(args):
                package = args[i + 1]
        if package is None:
            return self._usage(io_, "usage: monkey [-p ALLOWED_PACKAGE [-p ALLOWED_PACKAGE] ...] COUNT\n")
        started = time.monotonic()
        try:
            if self.device.launch(package) is False:  # type: ignore[func-returns-value]
                raise AppNotInstalled(f"{package} is not installed")
        except (AppNotInstalled, DeviceError):
            io_.out(b"** No activities found to run, monkey aborted.\n")
            return 251
        ms = int((time.monotonic() - started) * 1000)
        io_.out(f"Events injected: 1\n## Network stats: elapsed time={ms}ms "
                f"(0ms mobile, 0ms wifi, {ms}ms not connected)\n".encode())
        return 0

    def _cmd_pm(self, args: list[str], io_: _IO) -> int:
        sub, rest = (args[0], args[1:]) if args else ("", [])
        if sub == "clear" and rest:
            package = rest[-1]
            self.device.reset(package)
            # pm clear kills the app: the phone shows the launcher afterwards
            if self.device.current_app().package == package:
                self.device.key("home")
            io_.out(b"Success\n")
            return 0
        if sub == "path" and rest:
            package = rest[-1]
            if package not in self.device.info((package,)).app_versions:
                return 1
            io_.out(f"package:/data/app/~~sim/{package}-1/base.apk\n".encode())
            return 0
        return self._usage(io_, "usage: pm [clear|path] PACKAGE\n")

    def _cmd_settings(self, args: list[str], io_: _IO) -> int:
        """``settings [--user U] list|get|put|delete NAMESPACE [KEY [VALUE]]`` like Android's tool."""
        usage = ("usage:  settings [--user <USER_ID> | current] get namespace key\n"
                 "        settings [--user <USER_ID> | current] put namespace key value\n"
                 "        settings [--user <USER_ID> | current] delete namespace key\n"
                 "        settings [--user <USER_ID> | current] list namespace\n"
                 "'namespace' is one of {system, secure, global}, case-insensitive\n")
        if args[:1] == ["--user"]:
            args = args[2:]
        if len(args) < 2:
            return self._usage(io_, usage)
        verb, namespace, rest = args[0], args[1].lower(), args[2:]
        if namespace not in ("system", "secure", "global"):
            return self._usage(io_, f"Invalid namespace '{args[1]}'\n" + usage)
        table = self._settings()
        try:
            if verb == "list" and not rest:
                io_.out("".join(f"{k}={v}\n" for k, v in table.list(namespace).items()).encode())
                return 0
            if verb == "get" and len(rest) == 1:
                value = table.list(namespace).get(rest[0])
                io_.out(f"{'null' if value is None else value}\n".encode())
                return 0
            if verb == "put" and len(rest) >= 2:  # Android also takes [tag] [default]
                table.put(namespace, rest[0], rest[1])
                return 0
            if verb == "delete" and len(rest) == 1:
                io_.out(f"Deleted {table.delete(namespace, rest[0])} rows\n".encode())
                return 0
        except ValueError as exc:  # the simulated setting cannot hold this value
            io_.err(f"Error while running settings {verb} {namespace} {rest[0]}: {exc}\n".encode())
            return 1
        return self._usage(io_, usage)

    def _settings(self) -> "_SettingsTable":
        """The device's own settings when it has them (``SimDevice``), else a table kept by the shell."""
        if self._settings_table is None:
            self._settings_table = _SettingsTable(self.device)
        return self._settings_table

    def _cmd_dumpsys(self, args: list[str], io_: _IO) -> int:
        service = args[0] if args else ""
        if service == "window":
            package, activity = self._focus()
            tag = self._tag(package + activity)
            io_.out(f"WINDOW MANAGER WINDOWS (dumpsys window windows)\n"
                    f"  mCurrentFocus=Window{{{tag} u0 {package}/{activity}}}\n"
                    f"  mFocusedApp=ActivityRecord{{{tag} u0 {package}/{activity} t1}}\n".encode())
            return 0
        if service == "activity":
            package, activity = self._focus()
            tag = self._tag(package + activity)
            if args[1:2] == ["top"]:
                io_.out(f"TASK 1 id=1\n  ACTIVITY {package}/{activity} {tag} pid=1000\n".encode())
            else:
                io_.out(f"ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n"
                        f"    mResumedActivity: ActivityRecord{{{tag} u0 {package}/{activity} t1}}\n"
                        f"  ResumedActivity: ActivityRecord{{{tag} u0 {package}/{activity} t1}}\n".encode())
            return 0
        if service == "package" and len(args) > 1:
            package = args[1]
            version = self.device.info((package,)).app_versions.get(package)
            if version is None:
                io_.out(f"Unable to find package: {package}\n".encode())
                return 0
            code = zlib.crc32(version.encode()) % 100000000
            io_.out(f"Packages:\n  Package [{package}] ({self._tag(package)}):\n"
                    f"    versionCode={code} minSdk=28 targetSdk={self.info().sdk or '33'}\n"
                    f"    versionName={version}\n".encode())
            return 0
        if service == "display":
            w, h = self.device.screen_size()
            io_.out(f"DISPLAY MANAGER (dumpsys display)\n  mViewports=[DisplayViewport{{type=INTERNAL, "
                    f"valid=true, isActive=true, displayId=0, orientation=0, "
                    f"deviceWidth={w}, deviceHeight={h}}}]\n".encode())
            return 0
        io_.out(f"Can't find service: {service}\n".encode())
        return 0


class _SettingsTable:
    """``settings`` storage: the device's ``settings_list/put/delete`` if it has them, else a dict."""

    def __init__(self, device: Device):
        self.device = device
        self.own = all(callable(getattr(device, name, None))
                       for name in ("settings_list", "settings_put", "settings_delete"))
        self.local: dict[str, dict[str, str]] = {"system": {}, "secure": {}, "global": {}}

    def list(self, namespace: str) -> dict[str, str]:
        if self.own:
            return self.device.settings_list(namespace)  # type: ignore[attr-defined]
        return dict(sorted(self.local[namespace].items()))

    def put(self, namespace: str, key: str, value: str) -> None:
        if self.own:
            self.device.settings_put(namespace, key, value)  # type: ignore[attr-defined]
        else:
            self.local[namespace][key] = value

    def delete(self, namespace: str, key: str) -> int:
        if self.own:
            return self.device.settings_delete(namespace, key)  # type: ignore[attr-defined]
        return 1 if self.local[namespace].pop(key, None) is not None else 0


def _png_to_raw(png: bytes) -> bytes:
    """``screencap`` without ``-p``: width, height, format (1 = RGBA_8888), dataspace, pixels."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGBA")
    w, h = image.size
    return struct.pack("<4I", w, h, 1, 0) + image.tobytes()
