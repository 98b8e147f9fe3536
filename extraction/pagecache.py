"""A content-addressed disk cache of page bodies, plus a URL index.

Layout under ``root`` (default ``<run>/cache/pages``)::

    root/3f/3fa9...e1.body          a body, named by the sha256 of its bytes
    root/urls/9c/9c41...07.json     what fetching one URL gave (one file per URL)

A URL entry is ``{"url", "sha256", "meta": {content_type, encoding, final_url,
http_status, truncated}}`` (plus ``control_bytes_removed`` when the fetcher
removed any); the file name is the sha256 of the URL. Every file
is written atomically, so a killed run leaves either a whole entry or none,
and several runs may share one cache directory.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Optional

from verirank.errors import StoreError
from verirank.store import atomic_write_bytes, atomic_write_json

__all__ = ["PageCache", "META_FIELDS"]

#: the fields kept per URL in the index
META_FIELDS = ("content_type", "encoding", "final_url", "http_status", "truncated")
#: kept only when set, so entries of pages without stray control bytes stay as they were
OPTIONAL_META_FIELDS = ("control_bytes_removed",)

_SHA = re.compile(r"^[0-9a-f]{64}$")


class PageCache:
    """Bodies by sha256, and the last successful fetch of each URL."""

    def __init__(self, root: Path | str):
        self.root = Path(root)

    @classmethod
    def for_run(cls, run_dir: Path | str, cache_dir: str) -> "PageCache":
        """The cache named by ``extraction.fetch.cache_dir``: relative paths are under the run."""
        path = Path(cache_dir).expanduser()
        return cls(path if path.is_absolute() else Path(run_dir) / path)

    # -- bodies ------------------------------------------------------------

    def path(self, sha: str) -> Path:
        """Where the body named ``sha`` lives (whether or not it exists)."""
        if not _SHA.match(sha or ""):
            raise StoreError(f"not a sha256 hex digest: {sha!r}")
        return self.root / sha[:2] / f"{sha}.body"

    def has(self, sha: str) -> bool:
        return self.path(sha).is_file()

    def put(self, body: bytes) -> str:
        """Store ``body`` (once) and return its sha256 hex digest."""
        sha = hashlib.sha256(body).hexdigest()
        target = self.path(sha)
        if not target.is_file():
            try:
                atomic_write_bytes(target, body)
            except OSError as exc:
                raise StoreError(f"cannot write page body to {target}: {exc}") from exc
        return sha

    def get(self, sha: str) -> bytes:
        """The body named ``sha``; StoreError if it is missing or damaged."""
        target = self.path(sha)
        try:
            body = target.read_bytes()
        except FileNotFoundError:
            raise StoreError(f"page body {sha} is not in the cache at {self.root}") from None
        except OSError as exc:
            raise StoreError(f"cannot read page body {target}: {exc}") from exc
        if hashlib.sha256(body).hexdigest() != sha:
            raise StoreError(f"page body {target} is damaged (its sha256 does not match its name)")
        return body

    # -- URL index ---------------------------------------------------------

    def _url_entry_path(self, url: str) -> Path:
        digest = hashlib.sha256(url.encode("utf-8")).hexdigest()
        return self.root / "urls" / digest[:2] / f"{digest}.json"

    def remember(self, url: str, sha: str, meta: dict[str, Any]) -> None:
        """Record that fetching ``url`` gave the body ``sha`` (already ``put``)."""
        if not self.has(sha):
            raise StoreError(f"cannot remember {url}: body {sha} is not in the cache")
        kept = {k: meta.get(k) for k in META_FIELDS}
        kept.update({k: meta[k] for k in OPTIONAL_META_FIELDS if meta.get(k)})
        entry = {"url": url, "sha256": sha, "meta": kept}
        try:
            atomic_write_json(self._url_entry_path(url), entry)
        except OSError as exc:
            raise StoreError(f"cannot write the cache entry for {url}: {exc}") from exc

    def lookup(self, url: str) -> Optional[tuple[str, dict[str, Any]]]:
        """``(sha, meta)`` of the last fetch of ``url`` whose body is still cached, else None.

        A damaged or foreign entry counts as a miss: the page is fetched again.
        """
        path = self._url_entry_path(url)
        try:
            entry = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("url") != url:
            return None
        sha = entry.get("sha256")
        meta = entry.get("meta")
        if not isinstance(sha, str) or not _SHA.match(sha) or not isinstance(meta, dict):
            return None
        if not self.has(sha):
            return None
        return sha, meta
