"""The static How-to site: where pages are stored, and a small loopback server for it.

Every page URL ``https://HOST/PATH?QUERY`` is stored at ``site/HOST/PATH``
(``index.html`` for a path ending in ``/``; a query string becomes a
``__QUERY.html`` suffix). ``serve_site`` serves the folder on 127.0.0.1 only:

* ``GET /HOST/PATH?QUERY``           a page, by its URL without the scheme;
* ``GET http://HOST/PATH`` (proxy)   the same, when the server is used as an HTTP proxy;
* ``GET /``                          an index of every stored page.

The pipeline does not need the server: the builder also pre-fills the run's
page cache (``cache/pages``), so ``verirank fetch`` finds every page offline.
"""

from __future__ import annotations

import html
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Optional
from urllib.parse import quote, unquote, urlsplit

from verirank_core.errors import StoreError
from verirank_core.store import atomic_write_bytes

__all__ = ["site_path", "write_page", "SiteServer", "serve_site"]


def site_path(url: str) -> Path:
    """Where ``url`` lives under ``site/`` (a relative path; never escapes the folder)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if not host or host.startswith("."):
        raise StoreError(f"cannot store {url!r}: it has no host")
    segments = [unquote(s) for s in parts.path.split("/") if s]
    if any(s in (".", "..") or "\\" in s for s in segments):
        raise StoreError(f"cannot store {url!r}: '.' and '..' are not allowed in page paths")
    if not segments or parts.path.endswith("/"):
        segments.append("index.html")
    if parts.query:
        segments[-1] += "__" + quote(parts.query, safe="=&") + ".html"
    return Path(host, *segments)


def write_page(site_dir: Path, url: str, body: bytes) -> Path:
    target = Path(site_dir) / site_path(url)
    atomic_write_bytes(target, body)
    return target


class _Handler(BaseHTTPRequestHandler):
    site_dir: Path
    server_version = "HowToBenchSite/1.0"

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        raw = self.path
        if raw.startswith(("http://", "https://")):
            parts = urlsplit(raw)
            url = f"https://{parts.netloc}{parts.path or '/'}" + (f"?{parts.query}" if parts.query else "")
        elif raw in ("/", "/index.html"):
            self._send(200, self._index().encode("utf-8"))
            return
        else:
            url = "https://" + raw.lstrip("/")
        try:
            target = self.site_dir / site_path(url)
        except StoreError:
            self._send(404, b"<h1>Not found</h1>")
            return
        if not target.is_file():
            self._send(404, b"<h1>Not found</h1>")
            return
        self._send(200, target.read_bytes())

    def _index(self) -> str:
        items = []
        for path in sorted(p for p in self.site_dir.rglob("*") if p.is_file()):
            rel = path.relative_to(self.site_dir).as_posix()
            items.append(f"<li><a href=\"/{html.escape(rel)}\">{html.escape(rel)}</a></li>")
        return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>HowToBench site</title></head><body>"
                f"<h1>HowToBench site</h1><p>{len(items)} pages</p><ul>" + "".join(items) + "</ul></body></html>")

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
        pass


class SiteServer:
    """A threaded static server for ``site_dir`` on 127.0.0.1 (context manager)."""

    def __init__(self, site_dir: Path | str, port: int = 0):
        site_dir = Path(site_dir)
        if not site_dir.is_dir():
            raise StoreError(f"{site_dir} is not a directory (expected the site/ folder of a HowToBench build)")
        handler = type("Handler", (_Handler,), {"site_dir": site_dir})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._thread: Optional[threading.Thread] = None

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url_for(self, page_url: str) -> str:
        """The loopback address of a page URL."""
        parts = urlsplit(page_url)
        return f"{self.base_url}/{parts.netloc}{parts.path}" + (f"?{parts.query}" if parts.query else "")

    def start(self) -> "SiteServer":
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "SiteServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_site(site_dir: Path | str, port: int) -> None:
    """Serve until interrupted (``verirank howtobench serve``)."""
    server = SiteServer(site_dir, port)
    try:
        server.httpd.serve_forever()
    finally:
        server.httpd.server_close()
