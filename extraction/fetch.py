"""Fetch search-result pages: the only code of stage 1 that downloads pages.

The :class:`Fetcher` reads top-down: the scheme check, the page cache, then
name resolution and the SSRF guard (extraction/urlguard.py), requests with retries, manual redirects (every hop
checked), a streamed body with a size cap and a wall-clock limit, binary
sniffing and charset detection (extraction/sniff.py), then the page cache.
:meth:`Fetcher.fetch_all` runs a polite thread pool that resumes.

Every outcome for one URL is a :class:`~extraction.records.Page` with a
:class:`~extraction.records.FetchStatus`; the fetcher never raises for a bad
URL. Only a broken page cache (:class:`StoreError`) stops a run.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional
from urllib.parse import urldefrag, urljoin, urlsplit

import requests
import urllib3.exceptions

from extraction.config import FetchConfig
from extraction.pagecache import PageCache
from extraction.politeness import RETRYABLE_STATUSES, HostGate, retry_delay
from extraction.records import FetchStatus, Page, SearchResult
from extraction.sniff import (
    ACCEPTED_MEDIA_TYPES, SNIFF_BYTES, binary_reason, decode_body, detect_encoding, strip_control_bytes,
)
from extraction.urlguard import GuardedAdapter, UrlGuard
from verirank.errors import FetchError, StoreError
from verirank.store import JsonlAppender

__all__ = ["Fetcher", "UrlGuard", "decode_body", "detect_encoding", "read_page_body"]

log = logging.getLogger(__name__)


def read_page_body(page: Page, cache: PageCache) -> bytes:
    """The stored body of ``page``; StoreError when the page has none or it is missing."""
    if not page.body_sha256:
        raise StoreError(f"page {page.url} (qid {page.qid}, status {page.status.value}) has no stored body")
    return cache.get(page.body_sha256)


# --- the fetcher ------------------------------------------------------------------

_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1"
_CHUNK = 65536


class _Failed(FetchError):
    """A fetch outcome other than a body; becomes a Page with this status."""

    def __init__(self, status: FetchStatus, reason: str, http_status: Optional[int] = None,
                 content_type: Optional[str] = None):
        super().__init__(status.value, reason)
        self.http_status = http_status
        self.content_type = content_type


@dataclass
class _Trace:
    """What one fetch did so far (filled in as it goes, reported on the Page)."""

    final_url: str
    attempts: int = 0


@dataclass
class _Body:
    data: bytes
    truncated: bool
    http_status: int
    content_type: Optional[str]


class Fetcher:
    """Downloads the pages of search results into a :class:`PageCache`.

    ``session`` may be given to share connection pools; the fetcher mounts its
    guarded adapters on it (unless ``config.proxy`` is set) and ignores
    environment proxy variables. ``guard`` overrides the SSRF guard built from
    ``config.allow_private_hosts`` (tests use it); ``sleep`` is the pause
    function used between retries.
    """

    def __init__(self, config: FetchConfig, cache: PageCache,
                 session: Optional[requests.Session] = None, *,
                 guard: Optional[UrlGuard] = None,
                 sleep: Callable[[float], None] = time.sleep):
        self.config = config
        self.cache = cache
        self.guard = guard or UrlGuard(allow_private_hosts=config.allow_private_hosts)
        self.gate = HostGate(config.per_host_concurrency, config.per_host_delay_s)
        self._sleep = sleep
        self.session = session or requests.Session()
        self._prepare_session(self.session)

    def _prepare_session(self, session: requests.Session) -> None:
        cfg = self.config
        session.trust_env = False  # no surprise proxies or .netrc credentials from the environment
        session.headers["User-Agent"] = cfg.user_agent
        session.headers["Accept"] = _ACCEPT
        pool = max(cfg.workers, cfg.per_host_concurrency)
        if cfg.proxy:
            # through a proxy the socket's peer is the proxy: only the URL check applies
            session.proxies = {"http": cfg.proxy, "https": cfg.proxy}
            return
        for prefix in ("http://", "https://"):
            session.mount(prefix, GuardedAdapter(self.guard, pool_connections=pool, pool_maxsize=pool,
                                                  max_retries=0))

    # -- one page ------------------------------------------------------------

    def fetch(self, result: SearchResult) -> Page:
        """Fetch one result; every outcome is a Page (never raises, except StoreError)."""
        start = time.monotonic()
        base = {"qid": result.qid, "url": result.url, "rank": result.rank, "title": result.title}
        trace = _Trace(final_url=result.url)
        try:
            self.guard.check_scheme(result.url)
            # a cached page needs no request, so no name resolution: pre-filled caches of
            # made-up hosts (HowToBench) work; a miss is guarded before anything is sent
            cached = self._from_cache(result.url) if self.config.use_cache else None
            if cached is not None:
                return Page(**base, **cached, from_cache=True, elapsed_s=time.monotonic() - start)
            self.guard.check_url(result.url)
            body = self._download(result.url, trace)
            return self._page_from_body(base, result.url, body, trace, start)
        except _Failed as exc:
            return self._failure(base, trace, start, exc.status, exc.reason,
                                 exc.http_status, exc.content_type)
        except FetchError as exc:  # from the guard, before or while connecting
            return self._failure(base, trace, start, exc.status, exc.reason)
        except StoreError:
            raise
        except Exception as exc:  # one odd URL must not stop the run; the reason says what happened
            log.exception("unexpected error fetching %s", result.url)
            return self._failure(base, trace, start, FetchStatus.CONNECTION_ERROR.value,
                                 f"unexpected {type(exc).__name__}: {exc}")

    def _from_cache(self, url: str) -> Optional[dict[str, Any]]:
        hit = self.cache.lookup(url)
        if hit is None:
            return None
        sha, meta = hit
        truncated = bool(meta.get("truncated"))
        removed = int(meta.get("control_bytes_removed") or 0)
        return {
            "status": FetchStatus.TOO_LARGE if truncated else FetchStatus.OK,
            "reason": self._body_reason(truncated, removed),
            "control_bytes_removed": removed,
            "final_url": meta.get("final_url"),
            "http_status": meta.get("http_status"),
            "content_type": meta.get("content_type"),
            "encoding": meta.get("encoding"),
            "n_bytes": self.cache.path(sha).stat().st_size,
            "truncated": truncated,
            "body_sha256": sha,
        }

    def _too_large_reason(self) -> str:
        cap = self.config.max_bytes
        return f"body larger than max_bytes={cap}; the first {cap} bytes were kept"

    def _failure(self, base: dict, trace: _Trace, start: float, status: str, reason: str,
                 http_status: Optional[int] = None, content_type: Optional[str] = None) -> Page:
        return Page(**base, status=FetchStatus(status), reason=reason,
                    final_url=trace.final_url, http_status=http_status, content_type=content_type,
                    attempts=trace.attempts, elapsed_s=time.monotonic() - start)

    def _page_from_body(self, base: dict, url: str, body: _Body, trace: _Trace,
                        start: float) -> Page:
        encoding = detect_encoding(body.data, body.content_type)
        data, removed = strip_control_bytes(body.data, encoding)
        sha = self.cache.put(data)
        meta = {"content_type": body.content_type, "encoding": encoding,
                "final_url": trace.final_url, "http_status": body.http_status,
                "truncated": body.truncated, "control_bytes_removed": removed}
        self.cache.remember(url, sha, meta)
        return Page(
            **base,
            status=FetchStatus.TOO_LARGE if body.truncated else FetchStatus.OK,
            reason=self._body_reason(body.truncated, removed),
            **meta, n_bytes=len(data), body_sha256=sha,
            attempts=trace.attempts, elapsed_s=time.monotonic() - start,
        )

    def _body_reason(self, truncated: bool, removed: int) -> str:
        notes = [self._too_large_reason()] if truncated else []
        if removed:
            notes.append(f"{removed} stray NUL/control byte(s) removed from the text")
        return "; ".join(notes)

    # -- the request loop ------------------------------------------------------

    def _download(self, url: str, trace: _Trace) -> _Body:
        """Follow redirects by hand so every hop passes the guard."""
        visited = [url]
        for _hop in range(self.config.max_redirects + 1):
            if len(visited) > 1:
                self.guard.check_url(url)
            outcome = self._request_with_retries(url, trace)
            if isinstance(outcome, _Body):
                return outcome
            target = urldefrag(urljoin(url, outcome))[0]
            if target in visited:
                loop = " -> ".join(visited[visited.index(target):] + [target])
                raise _Failed(FetchStatus.TOO_MANY_REDIRECTS, f"redirect loop: {loop}")
            visited.append(target)
            trace.final_url = url = target
        raise _Failed(FetchStatus.TOO_MANY_REDIRECTS,
                      f"more than max_redirects={self.config.max_redirects} redirects "
                      f"(last: {visited[-1]})")

    def _request_with_retries(self, url: str, trace: _Trace) -> _Body | str:
        """One hop: a body, or the Location of a redirect. Retries 429/5xx and connection failures."""
        cfg = self.config
        host = (urlsplit(url).hostname or "").lower()
        retry_after: Optional[str] = None
        problem: Optional[_Failed] = None
        for attempt in range(cfg.retries + 1):
            if attempt:
                self._sleep(retry_delay(attempt, cfg.backoff_s, retry_after, cfg.max_retry_after_s))
            retry_after = None
            trace.attempts += 1
            with self.gate.slot(host):
                try:
                    resp = self.session.get(url, stream=True, allow_redirects=False,
                                            timeout=(cfg.connect_timeout_s, cfg.read_timeout_s))
                except requests.exceptions.ConnectTimeout:
                    problem = _Failed(FetchStatus.TIMEOUT,
                                      f"no connection within connect_timeout_s={cfg.connect_timeout_s}")
                    continue
                except requests.exceptions.ReadTimeout:
                    # a server that does not answer is not retried: it would cost another timeout
                    raise _Failed(FetchStatus.TIMEOUT,
                                  f"no answer within read_timeout_s={cfg.read_timeout_s}") from None
                except requests.exceptions.SSLError as exc:
                    raise _Failed(FetchStatus.CONNECTION_ERROR, f"TLS error: {_short(exc)}") from None
                except requests.exceptions.ConnectionError as exc:
                    problem = _Failed(FetchStatus.CONNECTION_ERROR, f"connection failed: {_short(exc)}")
                    continue
                except (requests.exceptions.InvalidURL, requests.exceptions.InvalidSchema,
                        requests.exceptions.MissingSchema, urllib3.exceptions.LocationParseError) as exc:
                    raise _Failed(FetchStatus.INVALID_URL, f"invalid URL: {_short(exc)}") from None
                with resp:
                    status = resp.status_code
                    if status in RETRYABLE_STATUSES:
                        retry_after = resp.headers.get("Retry-After")
                        problem = _Failed(FetchStatus.HTTP_ERROR, f"HTTP {status} {resp.reason or ''}".rstrip(),
                                          http_status=status)
                        continue
                    if status in _REDIRECT_STATUSES:
                        location = resp.headers.get("Location")
                        if not location:
                            raise _Failed(FetchStatus.HTTP_ERROR, f"HTTP {status} redirect without a Location",
                                          http_status=status)
                        return location
                    return self._read_body(resp)
        assert problem is not None  # the loop runs at least once and only falls through on a retryable problem
        raise _Failed(FetchStatus(problem.status), f"{problem.reason} (after {cfg.retries + 1} attempts)",
                      http_status=problem.http_status)

    def _read_body(self, resp: requests.Response) -> _Body:
        """Check status and type, then stream the body up to ``max_bytes`` within ``total_timeout_s``."""
        cfg = self.config
        status = resp.status_code
        content_type = resp.headers.get("Content-Type")
        if not 200 <= status < 300:
            raise _Failed(FetchStatus.HTTP_ERROR, f"HTTP {status} {resp.reason or ''}".rstrip(),
                          http_status=status, content_type=content_type)
        media_type = (content_type or "").split(";", 1)[0].strip().lower()
        if media_type and media_type not in ACCEPTED_MEDIA_TYPES:
            raise _Failed(FetchStatus.NOT_HTML, f"content type {media_type!r} is not HTML or text",
                          http_status=status, content_type=content_type)

        deadline = time.monotonic() + cfg.total_timeout_s
        data = bytearray()
        sniffed = False
        while True:
            if time.monotonic() > deadline:
                raise _Failed(FetchStatus.TIMEOUT,
                              f"body not complete within total_timeout_s={cfg.total_timeout_s} "
                              f"({len(data)} bytes received)", http_status=status, content_type=content_type)
            want = min(_CHUNK, cfg.max_bytes + 1 - len(data))
            try:
                # read1 returns what has arrived, so the deadline is checked even on a slow drip
                chunk = resp.raw.read1(want, decode_content=True)
            except (urllib3.exceptions.ReadTimeoutError, TimeoutError):
                raise _Failed(FetchStatus.TIMEOUT, f"body stalled for read_timeout_s={cfg.read_timeout_s} "
                              f"after {len(data)} bytes", http_status=status,
                              content_type=content_type) from None
            except urllib3.exceptions.DecodeError as exc:
                raise _Failed(FetchStatus.HTTP_ERROR, f"cannot decode the compressed body: {_short(exc)}",
                              http_status=status, content_type=content_type) from None
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                raise _Failed(FetchStatus.CONNECTION_ERROR,
                              f"connection broken after {len(data)} bytes: {_short(exc)}",
                              http_status=status, content_type=content_type) from None
            data += chunk
            if not sniffed and (len(data) >= SNIFF_BYTES or not chunk):
                sniffed = True
                why = binary_reason(bytes(data[:SNIFF_BYTES]))
                if why:
                    raise _Failed(FetchStatus.NOT_HTML, why, http_status=status, content_type=content_type)
            if not chunk or len(data) > cfg.max_bytes:
                break
        if not data:
            raise _Failed(FetchStatus.EMPTY, "the server sent an empty body",
                          http_status=status, content_type=content_type)
        truncated = len(data) > cfg.max_bytes
        return _Body(bytes(data[: cfg.max_bytes]), truncated, status, content_type)

    # -- many pages ---------------------------------------------------------------

    def fetch_all(self, results: Iterable[SearchResult], appender: JsonlAppender,
                  progress: Optional[Callable[[int], Any]] = None,
                  top_n: Optional[int] = None) -> dict[str, int]:
        """Fetch every result not yet in ``appender``, ``workers`` at a time.

        Each Page is appended as soon as it is done, so an interrupted run
        resumes where it stopped. A URL listed twice for one query is fetched
        once (the better rank wins). A result after the first ``top_n`` of its
        query is not fetched: it gets a Page with status ``beyond_top_n``. ``progress(1)``
        is called per page. Returns counts: results, skipped (already
        stored), duplicates, fetched, from_cache, and one count per status.
        """
        counts: dict[str, int] = {"results": 0, "skipped": 0, "duplicates": 0,
                                  "fetched": 0, "from_cache": 0}
        beyond: list[SearchResult] = []
        todo: list[SearchResult] = []
        seen: set[tuple[str, str]] = set()
        position: dict[str, int] = {}  # per query: place of the result in its ranking
        for result in sorted(results, key=lambda r: (r.qid, r.rank)):
            counts["results"] += 1
            position[result.qid] = place = position.get(result.qid, 0) + 1
            key = (result.qid, result.url)
            if key in seen:
                counts["duplicates"] += 1
            elif appender.done(key):
                counts["skipped"] += 1
                seen.add(key)
            else:
                seen.add(key)
                (beyond if top_n is not None and place > top_n else todo).append(result)
        for result in beyond:
            appender.append(Page(qid=result.qid, url=result.url, rank=result.rank, title=result.title,
                                 status=FetchStatus.BEYOND_TOP_N,
                                 reason=f"result {result.rank} of its query is below "
                                        f"extraction.search.top_n={top_n}; not fetched"))
            counts[FetchStatus.BEYOND_TOP_N.value] = counts.get(FetchStatus.BEYOND_TOP_N.value, 0) + 1
            if progress:
                progress(1)

        def work(result: SearchResult) -> Page:
            page = self.fetch(result)
            appender.append(page)
            return page

        with ThreadPoolExecutor(max_workers=self.config.workers, thread_name_prefix="fetch") as pool:
            futures = [pool.submit(work, r) for r in _interleave_hosts(todo)]
            try:
                for future in as_completed(futures):
                    page = future.result()
                    counts["fetched"] += 1
                    counts["from_cache"] += page.from_cache
                    counts[page.status.value] = counts.get(page.status.value, 0) + 1
                    if progress:
                        progress(1)
            except BaseException:
                for future in futures:
                    future.cancel()  # pages in flight still finish and are saved
                raise
        return counts


def _interleave_hosts(results: list[SearchResult]) -> list[SearchResult]:
    """Round-robin over hosts, so workers are not all parked behind one host's limit."""
    by_host: dict[str, list[SearchResult]] = {}
    for result in results:
        try:
            host = (urlsplit(result.url).hostname or "").lower()
        except ValueError:
            host = ""
        by_host.setdefault(host, []).append(result)
    queues = list(by_host.values())
    out: list[SearchResult] = []
    for i in range(max((len(q) for q in queues), default=0)):
        out.extend(q[i] for q in queues if i < len(q))
    return out


def _short(exc: BaseException, limit: int = 200) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."
