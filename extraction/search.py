"""Search backends: where the original ranking of each query comes from.

* :class:`SerpFileBackend` reads a stored ranking (``serp.jsonl``-style file):
  the evaluation baseline, fully offline.
* :class:`BraveBackend` calls the Brave Search web API over HTTP.

:func:`run_search` runs a backend over the queries and appends the results to
``serp.jsonl``, resumably. File formats are in docs/fetching.md.
"""

from __future__ import annotations

import html
import json
import logging
import os
import re
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Callable, ClassVar, Iterable, Mapping, Optional

import requests

from extraction.config import SearchConfig
from extraction.politeness import RETRYABLE_STATUSES, TokenBucket, retry_delay
from extraction.records import Query, RejectedLine, SearchResult
from verirank.errors import ConfigError, SchemaError, SearchError
from verirank.records import Record
from verirank.store import JsonlAppender

__all__ = [
    "SearchBackend", "SerpFileBackend", "BraveBackend", "make_backend", "run_search",
    "SearchDone", "done_path_for",
]

log = logging.getLogger(__name__)


class SearchBackend(ABC):
    #: registry name, as in ``extraction.search.backend``
    name: str = ""

    @abstractmethod
    def search(self, query: Query, top_n: int) -> list[SearchResult]:
        """The first ``top_n`` results for ``query``, ranks 1..n; [] when there are none."""


# --- stored rankings -----------------------------------------------------------


class SerpFileBackend(SearchBackend):
    """Results read from a JSONL file of ``{"qid","rank","url","title","snippet"}`` lines.

    The whole file is validated on construction. By default a bad line
    fails before any work starts; with ``lenient=True`` it is kept in
    :attr:`rejected` (a :class:`RejectedLine` with the reason) and the other
    lines are used.

    A stored ranking is not cut: :meth:`search` returns every row of the
    query, and the fetch stage marks rows ranked below ``top_n`` as
    ``beyond_top_n`` instead of fetching them (docs/fetching.md).
    """

    name = "serp-file"
    cuts_at_top_n = False

    def __init__(self, path: Path | str, lenient: bool = False):
        self.path = Path(path)
        self.rejected: list[RejectedLine] = []
        #: (qid, rank) -> line number in the file
        self._lines: dict[tuple, int] = {}
        self._by_qid = _load_serp_file(self.path, self.rejected if lenient else None, self._lines)

    def search(self, query: Query, top_n: int) -> list[SearchResult]:
        return [r.model_copy() for r in self._by_qid.get(query.qid, [])]

    def unknown_qids(self, known: Iterable[str]) -> list[RejectedLine]:
        """A record for every row whose qid is not among ``known`` (those rows are never searched)."""
        known = set(known)
        return [
            RejectedLine(source="serp", line=self._lines[r.key()], status="unknown_qid", qid=r.qid,
                         rank=r.rank, url=r.url, reason=f"qid {r.qid!r} is not in the queries file")
            for qid, rows in self._by_qid.items() if qid not in known for r in rows
        ]

    @property
    def qids(self) -> list[str]:
        return list(self._by_qid)


def _load_serp_file(path: Path, rejected: Optional[list[RejectedLine]] = None,
                    seen: Optional[dict[tuple, int]] = None) -> dict[str, list[SearchResult]]:
    if not path.is_file():
        raise SchemaError(f"{path}: search results file not found")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SchemaError(f"{path}: not valid UTF-8 ({exc.reason})") from exc
    by_qid: dict[str, list[SearchResult]] = {}
    seen = {} if seen is None else seen
    url_seen: dict[tuple[str, str], int] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            result = _parse_serp_line(line, where)
            key = (result.qid, result.rank)
            if key in seen:
                raise SchemaError(
                    f"{where}: duplicate rank {result.rank} for qid {result.qid!r} "
                    f"(first on line {seen[key]})"
                )
            if rejected is not None and (result.qid, result.url) in url_seen:
                # pages are keyed by (qid, url): a second listing would have no record of its own
                raise SchemaError(f"{where}: duplicate url for qid {result.qid!r} "
                                  f"(first on line {url_seen[result.qid, result.url]})")
        except SchemaError as exc:
            if rejected is None:
                raise
            rejected.append(_rejected_serp_line(lineno, line, where, str(exc)))
            continue
        seen[key] = url_seen[result.qid, result.url] = lineno
        by_qid.setdefault(result.qid, []).append(result)
    for results in by_qid.values():
        results.sort(key=lambda r: r.rank)
    return by_qid


def _parse_serp_line(line: str, where: str) -> SearchResult:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise SchemaError(f"{where}: not valid JSON ({exc.msg})") from exc
    if isinstance(data, dict) and isinstance(data.get("qid"), int) and not isinstance(data["qid"], bool):
        data["qid"] = str(data["qid"])
    result = SearchResult.parse(data, where=where)
    if not result.url.strip():
        raise SchemaError(f"{where}: empty url")
    try:  # a JSON escape can smuggle in a lone surrogate, which no file can hold
        (result.qid + result.url + result.title + result.snippet).encode("utf-8")
    except UnicodeEncodeError:
        raise SchemaError(f"{where}: not valid Unicode (a lone surrogate escape)") from None
    return result


def _rejected_serp_line(lineno: int, line: str, where: str, reason: str) -> RejectedLine:
    """What is known of a bad SERP line (its qid, rank and url when readable)."""
    try:
        data = json.loads(line)
    except ValueError:
        data = None
    fields = data if isinstance(data, dict) else {}
    qid, rank, url = fields.get("qid"), fields.get("rank"), fields.get("url")
    return RejectedLine(
        source="serp", line=lineno, reason=reason.removeprefix(f"{where}: "), text=line[:500],
        status="duplicate" if reason.startswith(f"{where}: duplicate") else "malformed",
        qid=str(qid) if isinstance(qid, (str, int)) and not isinstance(qid, bool) else None,
        rank=rank if isinstance(rank, int) and not isinstance(rank, bool) else None,
        url=url if isinstance(url, str) else None,
    )


# --- Brave Search web API --------------------------------------------------------


class BraveBackend(SearchBackend):
    """The Brave Search web API (``GET endpoint?q=...&count=N``).

    The API key is read once, here, from the environment variable named by
    ``config.api_key_env``; it is sent only in the ``X-Subscription-Token``
    header and never logged or stored. Requests are spaced by a token bucket
    (``requests_per_second``) and retried on 429/5xx and connection failures.
    """

    name = "brave"
    #: the API returns at most 20 results per request and pages up to offset 9
    PAGE_SIZE: ClassVar[int] = 20
    MAX_OFFSET: ClassVar[int] = 9

    def __init__(self, config: SearchConfig, session: Optional[requests.Session] = None,
                 environ: Optional[Mapping[str, str]] = None,
                 sleep: Optional[Callable[[float], None]] = None):
        environ = os.environ if environ is None else environ
        key = (environ.get(config.api_key_env) or "").strip()
        if not key:
            raise ConfigError(
                f"extraction.search.backend=brave needs an API key in the environment variable "
                f"{config.api_key_env} (set it, or change extraction.search.api_key_env)"
            )
        self.config = config
        self._key = key
        self._session = session or requests.Session()
        self._sleep = sleep or time.sleep
        self._bucket = TokenBucket(config.requests_per_second, sleep=self._sleep)
        #: HTTP requests sent so far (retries included)
        self.requests_sent = 0

    def __repr__(self) -> str:  # never show the key
        return f"BraveBackend(endpoint={self.config.endpoint!r})"

    def search(self, query: Query, top_n: int) -> list[SearchResult]:
        results: list[SearchResult] = []
        seen_urls: set[str] = set()
        offset = 0
        while len(results) < top_n and offset <= self.MAX_OFFSET:
            count = min(self.PAGE_SIZE, top_n - len(results)) if offset == 0 else self.PAGE_SIZE
            items = self._request(query, count=count, offset=offset)
            for item in items:
                url = str(item.get("url") or "").strip()
                if not url or url in seen_urls:
                    continue
                seen_urls.add(url)
                results.append(SearchResult(
                    qid=query.qid, rank=len(results) + 1, url=url,
                    title=_plain_text(item.get("title")),
                    snippet=_plain_text(item.get("description")),
                ))
                if len(results) == top_n:
                    break
            if len(items) < count:
                break  # the engine has no more results
            offset += 1
        return results

    def _request(self, query: Query, count: int, offset: int) -> list[dict]:
        params = {"q": query.query, "count": count}
        if offset:
            params["offset"] = offset
        headers = {"X-Subscription-Token": self._key, "Accept": "application/json"}
        cfg = self.config
        last_problem = ""
        retry_after: Optional[str] = None  # the server's Retry-After from the previous attempt
        for attempt in range(cfg.retries + 1):
            if attempt:
                self._sleep(retry_delay(attempt, cfg.backoff_s, retry_after, cfg.max_retry_after_s))
            retry_after = None
            self._bucket.acquire()
            self.requests_sent += 1
            try:
                resp = self._session.get(cfg.endpoint, params=params, headers=headers,
                                         timeout=cfg.timeout_s)
            except requests.RequestException as exc:
                last_problem = f"{type(exc).__name__}"
                log.warning("search %s: attempt %d failed: %s", query.qid, attempt + 1, last_problem)
                continue
            if resp.status_code in RETRYABLE_STATUSES:
                retry_after = resp.headers.get("Retry-After")
                last_problem = f"HTTP {resp.status_code}"
                log.warning("search %s: attempt %d got %s", query.qid, attempt + 1, last_problem)
                continue
            if resp.status_code != 200:
                raise SearchError(
                    f"brave search for qid {query.qid!r} failed: HTTP {resp.status_code} "
                    f"{resp.reason or ''}".rstrip()
                    + (" (check the API key)" if resp.status_code in (401, 403) else "")
                )
            return _web_results(resp, query.qid)
        raise SearchError(
            f"brave search for qid {query.qid!r} failed after {cfg.retries + 1} attempts "
            f"(last: {last_problem})"
        )


def _web_results(resp: requests.Response, qid: str) -> list[dict]:
    try:
        body = resp.json()
    except ValueError as exc:
        raise SearchError(f"brave search for qid {qid!r}: the answer is not JSON") from exc
    web = body.get("web") if isinstance(body, dict) else None
    items = web.get("results", []) if isinstance(web, dict) else []
    if not isinstance(items, list):
        raise SearchError(f"brave search for qid {qid!r}: web.results is not a list")
    return [i for i in items if isinstance(i, dict)]


_TAG = re.compile(r"<[^>]+>")


def _plain_text(value: object) -> str:
    """Brave marks matches with <strong>; keep the text only."""
    if not isinstance(value, str):
        return ""
    return " ".join(html.unescape(_TAG.sub("", value)).split())


# --- choosing and running a backend ----------------------------------------------


def make_backend(config: SearchConfig, serp_path: Optional[Path] = None,
                 lenient: bool = False) -> SearchBackend:
    """The backend named by ``config.backend`` (``lenient``: see :class:`SerpFileBackend`)."""
    if config.backend == "serp-file":
        if serp_path is None:
            raise ConfigError(
                "extraction.search.backend=serp-file needs a search results file (--serp PATH)"
            )
        return SerpFileBackend(serp_path, lenient=lenient)
    if config.backend == "brave":
        return BraveBackend(config)
    raise ConfigError(f"unknown search backend {config.backend!r} (valid: serp-file, brave)")


class SearchDone(Record):
    """Marks a query whose search finished, so a resumed run skips it even with 0 results."""

    key_fields: ClassVar[tuple[str, ...]] = ("qid",)

    qid: str
    n_results: int = 0


def done_path_for(serp_path: Path) -> Path:
    """``serp.jsonl`` -> ``serp.done.jsonl`` (the done-markers next to the results)."""
    serp_path = Path(serp_path)
    return serp_path.with_name(serp_path.stem + ".done.jsonl")


def run_search(queries: Iterable[Query], backend: SearchBackend, top_n: int,
               appender: JsonlAppender, done_path: Optional[Path] = None,
               progress: Optional[Callable[[int], None]] = None) -> dict[str, int]:
    """Search every query not done yet and append its results to ``appender``.

    A query is done when its marker is in ``done_path`` (default: next to the
    appender's file, see :func:`done_path_for`); the marker is written after
    all of the query's results, so a query interrupted halfway is searched
    again and only its missing ranks are appended. ``progress(1)`` is called
    per query. Returns counts: queries, searched, skipped, results, empty and
    beyond_top_n (results ranked below ``top_n``: only a stored ranking has
    them; the fetch stage records them without fetching).
    """
    done_path = done_path or done_path_for(appender.path)
    counts = {"queries": 0, "searched": 0, "skipped": 0, "results": 0, "empty": 0, "beyond_top_n": 0}
    with JsonlAppender(done_path, SearchDone) as done:
        for query in queries:
            counts["queries"] += 1
            if done.done((query.qid,)):
                counts["skipped"] += 1
            else:
                results = backend.search(query, top_n)
                for result in results:
                    appender.append(result)
                done.append(SearchDone(qid=query.qid, n_results=len(results)))
                counts["searched"] += 1
                counts["results"] += len(results)
                counts["empty"] += not results
                counts["beyond_top_n"] += max(0, len(results) - top_n)
            if progress:
                progress(1)
    return counts
