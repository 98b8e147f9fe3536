"""The adb server a device talks to: where it listens, the adb program, and a client that never spawns one.

adb's own rules pick the address; adbutils would quietly start a stray server on the default port when
a connection fails, so a local server is started explicitly (``adb -P PORT start-server``) and a missing
remote one is an error naming the command to run over there.
"""

from __future__ import annotations

import functools
import logging
import os
import socket
import subprocess
import threading
from typing import Optional

from verirank_core.errors import DeviceError

__all__ = ["DEFAULT_ADB_PORT", "LOCAL_HOSTS", "server_address", "adb_binary", "ensure_adb_server", "adb_client"]

log = logging.getLogger(__name__)


def _adbutils():
    import adbutils

    return adbutils


DEFAULT_ADB_PORT = 5037
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
#: one server start at a time in this process (several device slots open at once)
_server_start = threading.Lock()


def server_address(host: Optional[str] = None, port: Optional[int] = None) -> tuple[str, int]:
    """Where the adb server listens, by adb's own rules: the values given, else
    ``$ANDROID_ADB_SERVER_ADDRESS`` / ``$ANDROID_ADB_SERVER_PORT``, else 127.0.0.1:5037."""
    host = host or os.environ.get("ANDROID_ADB_SERVER_ADDRESS") or "127.0.0.1"
    if port is None:
        text = os.environ.get("ANDROID_ADB_SERVER_PORT", "").strip()
        if not text:
            port = DEFAULT_ADB_PORT
        elif text.isdigit() and 0 < int(text) < 65536:
            port = int(text)
        else:
            raise DeviceError(f"$ANDROID_ADB_SERVER_PORT must be a port number, got {text!r}")
    return host, int(port)


def adb_binary() -> str:
    """The adb program: ``$ADBUTILS_ADB_PATH``, else ``adb`` on the PATH (a user's platform-tools),
    else the copy bundled with adbutils. A user's own adb comes first because adb clients of
    different versions restart each other's server."""
    try:
        return _adbutils().adb_path()
    except Exception as exc:  # adbutils.AdbError when it finds none
        raise DeviceError(f"no adb program found ({exc}); install Android platform-tools "
                          "(`apt-get install adb`) or put adb on the PATH") from exc


def _listening(host: str, port: int) -> Optional[OSError]:
    """None when something accepts connections at host:port, else the connection error."""
    try:
        socket.create_connection((host, port), timeout=3).close()
        return None
    except OSError as exc:
        return exc


def ensure_adb_server(host: str, port: int, *, start: bool = True, timeout: float = 30.0) -> None:
    """Make sure an adb server listens at ``host:port``, starting a local one if allowed.

    adb starts servers only on this machine and refuses ``-H`` with ``start-server``
    ("cannot start server on remote host"), so a local server is started as
    ``adb -P PORT start-server`` and a missing remote one is an error that names
    the command to run over there.
    """
    error = _listening(host, port)
    if error is None:
        return
    if host not in LOCAL_HOSTS:
        raise DeviceError(
            f"no adb server at {host}:{port} ({error}). adb cannot start a server on another machine: "
            f"run `adb -a -P {port} nodaemon server` on {host} (-a: listen on every interface), "
            f"or set execution.adb.adb_host to 127.0.0.1 to use a server on this one")
    if not start:
        raise DeviceError(f"no adb server at {host}:{port} ({error}); start one with `adb -P {port} start-server`")
    with _server_start:
        if _listening(host, port) is None:  # another slot started it meanwhile
            return
        command = [adb_binary(), "-P", str(port), "start-server"]
        # the port is on the command line; a remote address in the environment would make adb refuse
        env = {k: v for k, v in os.environ.items() if k not in ("ANDROID_ADB_SERVER_ADDRESS", "ADB_SERVER_SOCKET")}
        try:
            done = subprocess.run(command, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL, env=env)
        except (OSError, subprocess.SubprocessError) as exc:
            raise DeviceError(f"`adb -P {port} start-server` failed: {type(exc).__name__}: {exc}") from exc
        output = (done.stdout + done.stderr).decode("utf-8", "replace").strip()
        if done.returncode != 0 or _listening(host, port) is not None:
            raise DeviceError(f"`adb -P {port} start-server` exited {done.returncode} and no server listens "
                              f"at {host}:{port}: {output}")
        log.info("started an adb server on port %d: %s", port, output)


def adb_client(host: str = "127.0.0.1", port: int = 5037, timeout: Optional[float] = 30.0):
    """An ``adbutils.AdbClient`` for ``host:port`` that never spawns an adb server on its own.

    adbutils quietly runs ``adb start-server`` (on the *default* port) when a
    connection fails; for a client bound to a non-default port that would leave
    a stray server behind and still fail.  We start the server explicitly instead.
    """
    return _client_class()(host, port, socket_timeout=timeout)


@functools.lru_cache(maxsize=1)
def _client_class():
    adbutils = _adbutils()
    from adbutils._adb import AdbConnection

    class _Connection(AdbConnection):
        def _safe_connect(self):  # noqa: D401 - adbutils hook
            return self._create_socket()

        def close(self) -> None:
            # adbutils sleeps 10 ms after shutting down the write side, on every command; the
            # reply has been read by then, so the socket is closed at once
            sock = self._AdbConnection__conn
            if sock is not None:
                self._AdbConnection__conn = None
                sock.close()

    class _Client(adbutils.AdbClient):
        _version: Optional[int] = None

        def make_connection(self, timeout: Optional[float] = None):
            conn = _Connection(self.host, self.port)
            if timeout:
                conn.conn.settimeout(timeout)
            return conn

        def server_version(self) -> int:
            # adbutils asks it before every command on a device (a second connection each time);
            # a server restarted by the same adb binary has the same version
            if self._version is None:
                self._version = super().server_version()
            return self._version

    return _Client
