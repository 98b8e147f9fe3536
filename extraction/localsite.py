"""Serve a folder of HTML pages on 127.0.0.1, for the bundled demo and benchmarks.

The demo's search results point at ``http://127.0.0.1:8765/...``; the
command serves ``datasets/demo/`` there while stage 1 fetches it, so the
main command works offline with no arguments. When the port is taken, a free
one is used and the results file is rewritten into the run directory.
"""

from __future__ import annotations

import functools
import json
import threading
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

from verirank_core.errors import StoreError
from verirank_core.resources import DEMO_DIR
from verirank_core.store import atomic_write_text

__all__ = ["DEMO_DIR", "DEMO_PORT", "serve_folder", "demo_inputs"]

DEMO_PORT = 8765
_DEMO_BASE = f"http://127.0.0.1:{DEMO_PORT}"


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # no access log on the terminal
        pass


@contextmanager
def serve_folder(root: Path, port: int = 0) -> Iterator[str]:
    """Serve ``root`` on 127.0.0.1:``port`` (0 = any free port); yields the base URL."""
    root = Path(root)
    if not root.is_dir():
        raise StoreError(f"cannot serve {root}: not a directory")
    handler = functools.partial(_QuietHandler, directory=str(root))
    try:
        server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise StoreError(f"cannot listen on 127.0.0.1:{port}: {exc}") from exc
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="localsite", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _port_of(serp: Path) -> int | None:
    """The port of the first URL of a rewritten demo results file, if there is one."""
    try:
        first = json.loads(serp.read_text("utf-8").splitlines()[0])
        return int(first["url"].split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
    except (OSError, ValueError, IndexError, KeyError):
        return None


@contextmanager
def demo_inputs(out_dir: Path, demo_dir: Path = DEMO_DIR) -> Iterator[tuple[Path, Path]]:
    """Serve the demo pages and yield ``(queries.jsonl, serp.jsonl)`` pointing at them.

    Prefers port 8765 so the URLs are the ones in ``datasets/demo/serp.jsonl``;
    when it is taken, a free port is used and the URLs are rewritten into
    ``out_dir/demo-serp.jsonl``. A resumed run first tries the port it used
    before, so its URLs (the keys of every record) stay the same.
    """
    queries, serp = demo_dir / "queries.jsonl", demo_dir / "serp.jsonl"
    for path in (queries, serp):
        if not path.is_file():
            raise StoreError(f"the bundled demo data is missing: {path}")
    rewritten = Path(out_dir) / "demo-serp.jsonl"
    ports = [p for p in (_port_of(rewritten) if rewritten.exists() else None, DEMO_PORT) if p] + [0]
    site = base = None
    for port in ports:
        try:
            site = serve_folder(demo_dir, port)
            base = site.__enter__()
            break
        except StoreError:
            if port == 0:
                raise
    try:
        if base != _DEMO_BASE:
            lines = []
            for line in serp.read_text("utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    row["url"] = row["url"].replace(_DEMO_BASE, base, 1)
                    lines.append(json.dumps(row, ensure_ascii=False))
            atomic_write_text(rewritten, "\n".join(lines) + "\n")
            serp = rewritten
        yield queries, serp
    finally:
        site.__exit__(None, None, None)
