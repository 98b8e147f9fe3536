"""One TCP connection from an adb server to our device, run on its own thread.

The host speaks first with CNXN(version, maxdata, "host::features=...").  We
answer with our own CNXN and the device banner straight away; we never send an
AUTH token, which adb accepts from a TCP device that does not ask for one.
After that the host OPENs streams (one per command), and every packet names a
stream by the pair (sender's id, receiver's id).
"""

from __future__ import annotations

import itertools
import logging
import socket
import threading
from typing import Callable, Optional

from phonesim.adbproto.message import (
    A_AUTH,
    A_CLSE,
    A_CNXN,
    A_OKAY,
    A_OPEN,
    A_STLS,
    A_SYNC,
    A_VERSION,
    A_VERSION_MIN,
    A_WRTE,
    MAX_PAYLOAD,
    Message,
    ProtocolError,
    pack,
    read_message,
)
from phonesim.adbproto.stream import Stream, StreamClosed

log = logging.getLogger(__name__)

#: a service handler runs on its own thread and owns the stream until it returns
ServiceHandler = Callable[[Stream], None]
#: maps a service name ("shell:ls", "sync:") to a handler, or None to refuse it
ServiceResolver = Callable[[str], Optional[ServiceHandler]]


class Transport:
    """Serve one host connection until it closes or :meth:`shutdown` is called."""

    def __init__(
        self,
        sock: socket.socket,
        banner: bytes,
        resolve: ServiceResolver,
        *,
        max_payload: int = MAX_PAYLOAD,
        write_timeout: float = 60.0,
    ):
        self.sock = sock
        self.banner = banner
        self.resolve = resolve
        self.max_payload = max_payload
        self.write_timeout = write_timeout
        self.version = A_VERSION
        self.host_banner = ""
        self._send_lock = threading.Lock()
        self._streams: dict[int, Stream] = {}
        self._streams_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._alive = True
        self._threads: list[threading.Thread] = []

    # -- sending ------------------------------------------------------------------
    def send(self, message: Message) -> None:
        data = pack(message)
        with self._send_lock:
            if not self._alive:
                raise StreamClosed("connection to the host is closed")
            try:
                self.sock.sendall(data)
            except OSError as exc:
                self._alive = False
                raise StreamClosed(f"connection to the host failed: {exc}") from exc

    def _send_write(self, local_id: int, remote_id: int, data: bytes) -> None:
        self.send(Message(A_WRTE, local_id, remote_id, data))

    def _send_close(self, local_id: int, remote_id: int) -> None:
        with self._streams_lock:
            self._streams.pop(local_id, None)
        try:
            self.send(Message(A_CLSE, local_id, remote_id))
        except StreamClosed:
            pass  # the host is gone; nothing to tell

    # -- receiving ----------------------------------------------------------------
    def run(self) -> None:
        """Read packets until the host disconnects; never raises."""
        try:
            while self._alive:
                message = read_message(self.sock)
                if message is None:
                    break
                self._dispatch(message)
        except (OSError, ProtocolError, StreamClosed) as exc:
            if self._alive:
                log.debug("adb connection ended: %s", exc)
        finally:
            self.shutdown()

    def _dispatch(self, m: Message) -> None:
        if m.command == A_CNXN:
            self._on_connect(m)
        elif m.command == A_OPEN:
            self._on_open(m)
        elif m.command == A_OKAY:
            stream = self._stream(m.arg1)
            if stream is not None:
                stream.on_okay()
        elif m.command == A_WRTE:
            stream = self._stream(m.arg1)
            if stream is None:
                # a write for a stream we already closed: tell the host it is gone
                self.send(Message(A_CLSE, 0, m.arg0))
                return
            stream.feed(m.data)
            self.send(Message(A_OKAY, stream.local_id, stream.remote_id))
        elif m.command == A_CLSE:
            with self._streams_lock:
                stream = self._streams.pop(m.arg1, None)
            if stream is not None:
                stream.on_remote_close()
        elif m.command in (A_AUTH, A_STLS, A_SYNC):
            # We never ask for AUTH or TLS, so a host has no reason to send these; ignore.
            log.debug("ignoring %s from host", m.name)

    def _on_connect(self, m: Message) -> None:
        if m.arg0 < A_VERSION_MIN:
            raise ProtocolError(f"host protocol version 0x{m.arg0:08x} is too old")
        self.version = min(m.arg0, A_VERSION)
        if m.arg1:
            self.max_payload = min(self.max_payload, m.arg1)
        self.host_banner = m.data.rstrip(b"\0").decode("utf-8", "replace")
        self.send(Message(A_CNXN, self.version, self.max_payload, self.banner))

    def _on_open(self, m: Message) -> None:
        remote_id = m.arg0
        name = m.data.rstrip(b"\0").decode("utf-8", "replace")
        handler = self.resolve(name) if remote_id else None
        if handler is None:
            # CLSE with local id 0 is how a device refuses an OPEN
            self.send(Message(A_CLSE, 0, remote_id))
            return
        local_id = next(self._ids)
        stream = Stream(local_id, remote_id, name, self._send_write, self._send_close,
                        self.max_payload, self.write_timeout)
        with self._streams_lock:
            self._streams[local_id] = stream
        self.send(Message(A_OKAY, local_id, remote_id))
        thread = threading.Thread(target=self._serve_stream, args=(handler, stream),
                                  name=f"adb-stream-{local_id}", daemon=True)
        self._threads = [t for t in self._threads if t.is_alive()]
        self._threads.append(thread)
        thread.start()

    @staticmethod
    def _serve_stream(handler: ServiceHandler, stream: Stream) -> None:
        try:
            handler(stream)
        except StreamClosed:
            pass  # the host hung up mid-service: normal for cancelled commands
        except Exception:  # a bug in a service must not take the connection down
            log.exception("adb service %r failed", stream.service)
        finally:
            stream.close()

    def _stream(self, local_id: int) -> Optional[Stream]:
        with self._streams_lock:
            return self._streams.get(local_id)

    # -- teardown -----------------------------------------------------------------
    def shutdown(self) -> None:
        """Close the socket and wake every service blocked on a stream."""
        with self._send_lock:
            self._alive = False
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        with self._streams_lock:
            streams = list(self._streams.values())
            self._streams.clear()
        for stream in streams:
            stream.on_remote_close()

    def join(self, timeout: float) -> None:
        for thread in list(self._threads):
            thread.join(timeout)
