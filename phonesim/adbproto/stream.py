"""One logical ADB stream, as a service sees it: a blocking byte pipe.

The transport feeds the host's WRTE payloads in with :meth:`Stream.feed` and
tells the stream when the host acknowledged our last WRTE (:meth:`on_okay`).
Services call :meth:`read`, :meth:`read_exact` and :meth:`write`; ``write``
splits data into packets no larger than the negotiated payload and waits for
the host's OKAY after each one (ADB allows one unacknowledged WRTE per stream).
"""

from __future__ import annotations

import threading
from typing import Callable

from verirank_core.errors import DeviceError


class StreamClosed(DeviceError):
    """The host closed the stream (or the whole connection went away)."""


class Stream:
    def __init__(
        self,
        local_id: int,
        remote_id: int,
        service: str,
        send_write: Callable[[int, int, bytes], None],
        send_close: Callable[[int, int], None],
        max_payload: int,
        write_timeout: float,
    ):
        self.local_id = local_id
        self.remote_id = remote_id
        self.service = service
        self._send_write = send_write
        self._send_close = send_close
        self._max_payload = max_payload
        self._write_timeout = write_timeout
        self._cond = threading.Condition()
        self._inbox = bytearray()
        self._remote_closed = False
        self._closed = False
        self._can_write = True  # the OKAY answering OPEN grants the first write

    # -- called by the transport ---------------------------------------------------
    def feed(self, data: bytes) -> None:
        with self._cond:
            self._inbox += data
            self._cond.notify_all()

    def on_okay(self) -> None:
        with self._cond:
            self._can_write = True
            self._cond.notify_all()

    def on_remote_close(self) -> None:
        with self._cond:
            self._remote_closed = True
            self._cond.notify_all()

    # -- called by services --------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self._closed or self._remote_closed

    def read(self, n: int, timeout: float | None = None) -> bytes:
        """Up to ``n`` bytes; ``b""`` once the host closed and the inbox is empty."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._inbox or self._remote_closed or self._closed,
                                       timeout):
                raise StreamClosed(f"no data on stream {self.service!r} within {timeout}s")
            chunk = bytes(self._inbox[:n])
            del self._inbox[:n]
            return chunk

    def read_exact(self, n: int, timeout: float | None = None) -> bytes:
        """Exactly ``n`` bytes or :class:`StreamClosed`."""
        parts = []
        remaining = n
        while remaining:
            chunk = self.read(remaining, timeout)
            if not chunk:
                raise StreamClosed(f"stream {self.service!r} closed after {n - remaining} of {n} bytes")
            parts.append(chunk)
            remaining -= len(chunk)
        return b"".join(parts)

    def write(self, data: bytes) -> None:
        """Send ``data`` as one or more WRTE packets, honouring flow control."""
        view = memoryview(data)
        for start in range(0, len(view), self._max_payload):
            with self._cond:
                ok = self._cond.wait_for(
                    lambda: self._can_write or self._remote_closed or self._closed,
                    self._write_timeout,
                )
                if self._remote_closed or self._closed:
                    raise StreamClosed(f"stream {self.service!r} is closed")
                if not ok:
                    raise StreamClosed(
                        f"host did not acknowledge a write on {self.service!r} within "
                        f"{self._write_timeout}s")
                self._can_write = False
            self._send_write(self.local_id, self.remote_id, bytes(view[start:start + self._max_payload]))

    def close(self) -> None:
        """Close our side once; tells the host unless it already closed the stream."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            tell_host = not self._remote_closed
            self._cond.notify_all()
        if tell_host:
            self._send_close(self.local_id, self.remote_id)
