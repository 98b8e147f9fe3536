"""Serve any :class:`~verirank_core.device.Device` as a network ADB device.

``adb connect 127.0.0.1:PORT`` then lists the device, and ``adb shell``,
``adb exec-out``, ``adb pull``/``push`` and adbutils (hence ``AdbDevice``) drive
it exactly as they would drive a phone over Wi-Fi debugging.  Typical use::

    with AdbDeviceServer(SimDevice.open("android13-settings")) as server:
        subprocess.run(["adb", "connect", server.address])
        ...

The protocol layers live in ``phonesim/adbproto/``: packet framing
(``message``), one thread per host connection (``transport``), streams with
flow control (``stream``), the ``shell``/``exec`` services (``shellv2``), file
transfer (``sync``), the in-memory file system (``vfs``) and the command
interpreter (``commands``).  See docs/adb.md for what is supported.
"""

from __future__ import annotations

import logging
import socket
import threading
from typing import Callable, Optional

from phonesim.adbproto.commands import DeviceShell
from phonesim.adbproto.message import MAX_PAYLOAD
from phonesim.adbproto.shellv2 import parse_service, serve_shell
from phonesim.adbproto.sync import serve_sync
from phonesim.adbproto.transport import ServiceHandler, Transport
from phonesim.adbproto.vfs import VirtualFS
from phonesim.latency import Latency
from verirank_core.device import Device
from verirank_core.errors import DeviceError, VerirankError

__all__ = ["AdbDeviceServer", "serve_forever", "DEFAULT_FEATURES"]

log = logging.getLogger(__name__)

#: Features we advertise in the banner.  Each one changes what the host sends:
#: ``shell_v2`` makes ``adb shell`` use framed stdout/stderr/exit packets (so the
#: exit status reaches the host); ``stat_v2`` makes ``adb pull``/``push`` use
#: STA2/LST2.  We deliberately do NOT advertise ``cmd``/``abb`` (package manager
#: binder shortcuts), ``ls_v2``, ``sendrecv_v2`` (compressed transfers) or
#: ``delayed_ack`` (windowed flow control), so hosts fall back to what we implement.
DEFAULT_FEATURES = ("shell_v2", "stat_v2")

_ROOT_REPLY = b"adbd cannot run as root in production builds\n"


class AdbDeviceServer:
    """A listening ADB device endpoint for one ``Device``; starts serving at construction.

    ``port=0`` picks a free port (read it back from :attr:`port`).  Only loopback
    is bound unless ``host`` says otherwise: an ADB device without authentication
    is a remote control for whatever it wraps.
    """

    def __init__(
        self,
        device: Device,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        product: str = "verirank_sim",
        features: tuple[str, ...] = DEFAULT_FEATURES,
        max_payload: int = MAX_PAYLOAD,
        write_timeout: float = 60.0,
        latency: Optional[Latency] = None,
    ):
        self.device = device
        #: how long each operation takes, as on a phone (phonesim/latency.py); none by default
        self.latency = latency or Latency()
        self.host = host
        self.product = product
        self.features = tuple(features)
        self.max_payload = max_payload
        self.write_timeout = write_timeout
        self.fs = VirtualFS()
        self.shell = DeviceShell(device, self.fs, product=product, latency=self.latency)
        self._transports: list[Transport] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        if host not in ("127.0.0.1", "localhost", "::1"):
            log.warning("serving an unauthenticated ADB device on %s: anyone who can reach it "
                        "controls the device", host)
        try:
            self._listener = socket.create_server((host, port), reuse_port=False)
        except OSError as exc:
            raise DeviceError(f"cannot listen for adb on {host}:{port}: {exc}") from exc
        self._listener.settimeout(0.2)  # lets the accept loop notice close() promptly
        self.port: int = self._listener.getsockname()[1]
        self.banner = self._make_banner()
        self._accept_thread = threading.Thread(target=self._accept_loop,
                                               name=f"adb-server-{self.port}", daemon=True)
        self._accept_thread.start()

    # -- public -------------------------------------------------------------------
    @property
    def address(self) -> str:
        """``host:port``, what to pass to ``adb connect`` (and the device's adb serial)."""
        return f"{self.host}:{self.port}"

    @property
    def connection_count(self) -> int:
        with self._lock:
            return sum(1 for t in self._transports if t.sock.fileno() != -1)

    def fail_next_dumps(self, count: int, message: str = "ERROR: could not get idle state.") -> None:
        """Make the next ``count`` ``uiautomator dump`` runs fail (``message`` goes to stderr)."""
        self.shell.fail_next_dumps(count, message)

    def drop_connections(self) -> None:
        """Cut every host connection but keep listening (like a Wi-Fi glitch)."""
        with self._lock:
            transports, self._transports = self._transports, []
        for transport in transports:
            transport.shutdown()

    def close(self) -> None:
        """Stop listening, cut every connection and wait for the threads."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._accept_thread.join(5)
        self._listener.close()
        with self._lock:
            transports, self._transports = self._transports, []
        for transport in transports:
            transport.shutdown()
        for transport in transports:
            transport.join(5)

    def __enter__(self) -> "AdbDeviceServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ----------------------------------------------------------------
    def _make_banner(self) -> bytes:
        props = self.shell.properties()
        fields = (
            f"ro.product.name={props['ro.product.name']};"
            f"ro.product.model={props['ro.product.model']};"
            f"ro.product.device={props['ro.product.device']};"
            f"features={','.join(self.features)}"
        )
        return f"device::{fields}".encode()

    def _accept_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                break
            conn.settimeout(None)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            transport = Transport(conn, self.banner, self._resolve, max_payload=self.max_payload,
                                  write_timeout=self.write_timeout)
            with self._lock:
                self._transports = [t for t in self._transports if t.sock.fileno() != -1]
                self._transports.append(transport)
            threading.Thread(target=transport.run, name=f"adb-conn-{self.port}", daemon=True).start()

    def _resolve(self, name: str) -> Optional[ServiceHandler]:
        """Map an OPEN destination to the function serving it (None refuses it)."""
        request = parse_service(name)
        if request is not None:
            if request.v2 and "shell_v2" not in self.features:
                return None
            return lambda stream: serve_shell(stream, self.shell, request)
        if name.rstrip(":") == "sync":
            return lambda stream: serve_sync(stream, self.fs, self.latency)
        if name in ("root:", "unroot:"):
            reply = _ROOT_REPLY if name == "root:" else b"adbd not running as root\n"
            return lambda stream: stream.write(reply)
        # reboot:, remount:, tcpip:, usb:, framebuffer:, tcp:, local*: ... are refused;
        # the host reports "error: closed" to the user.
        log.debug("refusing adb service %r", name)
        return None


def serve_forever(
    device: Device,
    host: str = "127.0.0.1",
    port: int = 0,
    stop_event: Optional[threading.Event] = None,
    ready: Optional[Callable[[int], None]] = None,
    **options: object,
) -> None:
    """Serve ``device`` until ``stop_event`` is set (or Ctrl-C); ``ready(port)`` once listening."""
    stop_event = stop_event or threading.Event()
    with AdbDeviceServer(device, host, port, **options) as server:  # type: ignore[arg-type]
        if ready is not None:
            ready(server.port)
        try:
            while not stop_event.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass



def main(argv: Optional[list[str]] = None) -> int:
    """``python -m phonesim.adb_server sim:WORLD [--port N]``: serve a device until Ctrl-C."""
    import argparse
    import sys

    from phonesim.device import SimDevice

    parser = argparse.ArgumentParser(prog="python -m phonesim.adb_server",
                                     description="Serve a device (normally sim:WORLD) as a network ADB device.")
    parser.add_argument("device", help="device spec, e.g. sim:android13-settings")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback only)")
    parser.add_argument("--port", type=int, default=5555, help="TCP port; 0 picks a free one")
    parser.add_argument("--latency", default="", help="phone-like delays, e.g. dump=1.0,tap=0.3 or phone "
                                                     "(phonesim/latency.py)")
    args = parser.parse_args(argv)
    try:
        latency = Latency.parse(args.latency)
        kind, _, world = args.device.partition(":")
        if kind != "sim" or not world:
            raise DeviceError(f"device spec {args.device!r} must look like sim:WORLD")
        device = SimDevice.open(world)
    except VerirankError as exc:  # unknown world, bad spec, adb device offline...
        print(f"error: {exc}", file=sys.stderr)
        return 2

    def ready(port: int) -> None:
        print(f"serving {args.device} as an ADB device; run: adb connect {args.host}:{port}", flush=True)

    try:
        serve_forever(device, args.host, args.port, ready=ready, latency=latency)
    except DeviceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        device.close()
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
