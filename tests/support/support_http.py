"""A real HTTP server on 127.0.0.1 for tests and benchmarks.

It serves a directory of static files and/or programmable routes, runs in a
daemon thread on a free port, and records what it saw::

    from support_http import Reply, serve, redirect, NEVER

    routes = {
        "/ok": Reply(body=b"<html>hi</html>", headers={"Content-Type": "text/html"}),
        "/flaky": [Reply(status=429, headers={"Retry-After": "0"}), Reply(body=b"ok")],
        "/loop": redirect("/loop"),
        "/hang": NEVER,                       # accepts the connection, never answers
        "/big": Reply(body=lambda: (b"x" * 65536 for _ in range(800))),   # streamed
        "/echo": lambda req: Reply(body=req.query.get("q", "").encode()),
    }
    with serve(routes=routes, static_dir=tmp_path) as srv:
        url = srv.url("/ok")
        ...
        assert srv.hits("/flaky") == 2
        assert srv.max_in_flight <= 2

A route value is one of

* a :class:`Reply` (served every time);
* a list of replies, served in turn, the last one repeating;
* a callable ``(Request) -> Reply``;
* :data:`NEVER`: the TCP connection is accepted and nothing is ever sent.

``Reply.body`` is bytes, or a zero-argument callable returning an iterable of
byte chunks (a fresh generator per request, so nothing big is allocated).
Bytes bodies get a ``Content-Length``; streamed ones are close-delimited.
``delay_s`` waits before the status line, ``chunk_delay_s`` between chunks.
Routes match the path without its query string; other paths fall back to
``static_dir`` (if given) and then to 404.
"""

from __future__ import annotations

import mimetypes
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Union
from urllib.parse import parse_qsl, urlsplit

__all__ = ["Reply", "Request", "NEVER", "serve", "redirect", "HTTPTestServer"]


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    #: bytes, or a callable returning an iterable of byte chunks (streamed)
    body: Union[bytes, Callable[[], Iterable[bytes]]] = b""
    #: seconds to wait before sending anything
    delay_s: float = 0.0
    #: seconds to wait between two streamed chunks
    chunk_delay_s: float = 0.0


@dataclass
class Request:
    method: str
    #: path without the query string
    path: str
    #: query parameters (first value of each name)
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes = b""
    #: time.monotonic() when the request arrived
    at: float = 0.0


class _Never:
    def __repr__(self) -> str:
        return "NEVER"


#: route value: accept the connection and never send a byte
NEVER = _Never()

Route = Union[Reply, list, Callable[[Request], Reply], _Never]


def redirect(location: str, status: int = 302) -> Reply:
    """A redirect reply to ``location`` (absolute or relative)."""
    return Reply(status=status, headers={"Location": location})


class HTTPTestServer:
    """The running server; use :func:`serve` to start one."""

    def __init__(self, routes: Optional[dict[str, Route]] = None, static_dir: Optional[Path] = None):
        self.routes: dict[str, Route] = dict(routes or {})
        self.static_dir = Path(static_dir) if static_dir else None
        #: every request received, in arrival order
        self.requests: list[Request] = []
        self.in_flight = 0
        #: the largest number of requests received and not yet answered at the same time (a request
        #: stops counting when its answer starts to go out: the client cannot have it before then, so
        #: a client that waits for answers is never seen with more than it sends)
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._turns: dict[str, int] = {}
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        # a short poll interval makes stop() quick
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="support-http", daemon=True)

    # -- public helpers ---------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/") -> str:
        return self.base_url + (path if path.startswith("/") else "/" + path)

    def hits(self, path: Optional[str] = None) -> int:
        """How many requests arrived (for ``path``, or in total)."""
        with self._lock:
            return sum(1 for r in self.requests if path is None or r.path == path)

    def start(self) -> "HTTPTestServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # releases NEVER handlers and streaming loops
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> "HTTPTestServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- used by the handler ----------------------------------------------

    def _resolve(self, req: Request) -> Union[Reply, _Never, None]:
        route = self.routes.get(req.path)
        if route is None:
            return None
        if isinstance(route, list):
            with self._lock:
                turn = self._turns.get(req.path, 0)
                self._turns[req.path] = turn + 1
            return route[min(turn, len(route) - 1)]
        if isinstance(route, (Reply, _Never)):
            return route
        return route(req)

    def _static(self, path: str) -> Optional[Reply]:
        if self.static_dir is None:
            return None
        target = (self.static_dir / path.lstrip("/")).resolve()
        root = self.static_dir.resolve()
        if root not in target.parents and target != root:
            return None
        if target.is_dir():
            target = target / "index.html"
        if not target.is_file():
            return None
        ctype = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if ctype.startswith("text/"):
            ctype += "; charset=utf-8"
        return Reply(headers={"Content-Type": ctype}, body=target.read_bytes())


def _make_handler(server: HTTPTestServer) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # one request per connection: simple and close-delimited

        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def do_GET(self) -> None:
            self._handle()

        def do_HEAD(self) -> None:
            self._handle()

        def do_POST(self) -> None:
            self._handle()

        def _handle(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            req = Request(
                method=self.command,
                path=parts.path,
                query=dict(parse_qsl(parts.query, keep_blank_values=True)),
                headers={k: v for k, v in self.headers.items()},
                body=self.rfile.read(length) if length else b"",
                at=time.monotonic(),
            )
            with server._lock:
                server.requests.append(req)
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
            self._counted = True
            try:
                reply = server._resolve(req)
                if reply is None:
                    reply = server._static(req.path) or Reply(status=404, body=b"not found")
                if isinstance(reply, _Never):
                    server._stopping.wait()
                    return
                self._send(reply)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client hung up (a size cap or a timeout): expected
            finally:
                self._answered()

        def _answered(self) -> None:
            """The request no longer counts as in flight (once)."""
            if getattr(self, "_counted", False):
                self._counted = False
                with server._lock:
                    server.in_flight -= 1

        def _send(self, reply: Reply) -> None:
            if reply.delay_s and server._stopping.wait(reply.delay_s):
                return
            self._answered()
            self.send_response(reply.status)
            headers = dict(reply.headers)
            if isinstance(reply.body, (bytes, bytearray)):
                headers.setdefault("Content-Length", str(len(reply.body)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            if self.command == "HEAD":
                return
            if isinstance(reply.body, (bytes, bytearray)):
                self.wfile.write(reply.body)
                return
            for chunk in reply.body():
                if server._stopping.is_set():
                    return
                self.wfile.write(chunk)
                self.wfile.flush()
                if reply.chunk_delay_s and server._stopping.wait(reply.chunk_delay_s):
                    return

    return Handler


def serve(routes: Optional[dict[str, Route]] = None, static_dir: Optional[Path] = None) -> HTTPTestServer:
    """A started-on-enter server: ``with serve(routes, static_dir) as srv: srv.url("/x")``."""
    return HTTPTestServer(routes=routes, static_dir=static_dir)
