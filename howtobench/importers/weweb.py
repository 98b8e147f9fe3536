"""Import the paper's How-to WeWeb dataset into a run directory.

The dataset is not public, so this loader defines the layout a holder of the
data arranges it into (``WEWEB``)::

    WEWEB/queries.tsv     qid <TAB> query [<TAB> app [<TAB> device]]   (an optional header line
                          starting with "qid" is skipped)
    WEWEB/results.jsonl   one search result per line:
                          {"qid", "rank", "url", "title"?, "snippet"?, "html"?}
                          "html" is the saved page, relative to WEWEB (missing = not saved)
    WEWEB/labels.tsv      qid <TAB> url <TAB> label   (0/1; TREC "qid 0 url label" lines also accepted)
    WEWEB/pages/...       the saved HTML files

``import_weweb(WEWEB, RUN)`` writes ``RUN/queries.jsonl``, ``RUN/serp.jsonl``,
``RUN/pages.jsonl`` (every saved page as a fetched page) with the bodies in the
run's page cache ``RUN/cache/pages``, and ``RUN/qrels.txt``. ``verirank
extract RUN`` then runs with no network. Every problem names the file and line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from extraction.pagecache import PageCache
from verirank_core.extraction_records import FetchStatus, Page, Query, SearchResult
from howtobench.qrels import write_qrels
from verirank_core.errors import SchemaError, StoreError
from verirank_core.store import write_jsonl

__all__ = ["import_weweb", "read_weweb_queries", "read_weweb_results", "read_weweb_labels"]


def _lines(path: Path) -> list[tuple[int, str]]:
    if not path.is_file():
        raise StoreError(f"{path} not found (a How-to WeWeb folder holds queries.tsv, results.jsonl, labels.tsv)")
    return [(n, line.rstrip("\r\n")) for n, line in enumerate(path.read_text("utf-8").splitlines(), start=1)
            if line.strip()]


def read_weweb_queries(path: Path) -> list[Query]:
    out, seen = [], set()
    for n, line in _lines(path):
        cols = line.split("\t")
        if n == 1 and cols[0].strip().lower() == "qid":
            continue
        if len(cols) < 2 or not cols[0].strip() or not cols[1].strip():
            raise SchemaError(f"{path}:{n}: expected 'qid<TAB>query[<TAB>app[<TAB>device]]', got {line!r}")
        qid = cols[0].strip()
        if qid in seen:
            raise SchemaError(f"{path}:{n}: qid {qid!r} appears twice")
        seen.add(qid)
        out.append(Query(qid=qid, query=cols[1].strip(), app=(cols[2].strip() or None) if len(cols) > 2 else None,
                         device=(cols[3].strip() or None) if len(cols) > 3 else None))
    return out


def read_weweb_results(path: Path) -> list[dict[str, Any]]:
    out = []
    for n, line in _lines(path):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SchemaError(f"{path}:{n}: not valid JSON ({exc.msg})") from exc
        if not isinstance(row, dict):
            raise SchemaError(f"{path}:{n}: a result is a JSON object")
        missing = [k for k in ("qid", "rank", "url") if k not in row]
        if missing:
            raise SchemaError(f"{path}:{n}: result lacks {', '.join(missing)}")
        row["_line"] = n
        out.append(row)
    return out


def read_weweb_labels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for n, line in _lines(path):
        cols = line.split("\t") if "\t" in line else line.split()
        if len(cols) == 4:  # TREC qrels
            cols = [cols[0], cols[2], cols[3]]
        if len(cols) != 3:
            raise SchemaError(f"{path}:{n}: expected 'qid<TAB>url<TAB>label', got {line!r}")
        if n == 1 and cols[2].strip().lower() == "label":
            continue
        try:
            grade = int(cols[2])
        except ValueError:
            raise SchemaError(f"{path}:{n}: label {cols[2]!r} is not an integer") from None
        out.setdefault(cols[0].strip(), {})[cols[1].strip()] = grade
    return out


def import_weweb(src: Path | str, run: Path | str) -> dict[str, int]:
    """Convert a How-to WeWeb folder into run directory ``run``; returns counts."""
    src, run = Path(src), Path(run)
    queries = read_weweb_queries(src / "queries.tsv")
    known = {q.qid for q in queries}
    results = read_weweb_results(src / "results.jsonl")
    labels = read_weweb_labels(src / "labels.tsv")
    cache = PageCache(run / "cache" / "pages")
    serp, pages, seen = [], [], set()
    for row in sorted(results, key=lambda r: (str(r["qid"]), int(r["rank"]))):
        where = f"{src / 'results.jsonl'}:{row['_line']}"
        qid = str(row["qid"])
        if qid not in known:
            raise SchemaError(f"{where}: qid {qid!r} is not in queries.tsv")
        if (qid, row["url"]) in seen:
            raise SchemaError(f"{where}: ({qid}, {row['url']}) appears twice")
        seen.add((qid, row["url"]))
        result = SearchResult.parse({"qid": qid, "rank": row["rank"], "url": row["url"],
                                     "title": row.get("title") or "", "snippet": row.get("snippet") or ""}, where)
        serp.append(result)
        pages.append(_page(result, row.get("html"), src, cache, where))
    unknown = [(q, u) for q, urls in labels.items() for u in urls if (q, u) not in seen]
    if unknown:
        q, u = unknown[0]
        raise SchemaError(f"{src / 'labels.tsv'}: label for ({q}, {u}) which is not in results.jsonl "
                          f"({len(unknown)} such labels)")
    run.mkdir(parents=True, exist_ok=True)
    write_jsonl(run / "queries.jsonl", queries)
    write_jsonl(run / "serp.jsonl", serp)
    write_jsonl(run / "pages.jsonl", pages)
    write_qrels(run / "qrels.txt", [(r.qid, r.url, labels.get(r.qid, {}).get(r.url, 0)) for r in serp])
    return {"queries": len(queries), "results": len(serp), "pages_saved": sum(p.usable for p in pages),
            "relevant": sum(1 for q in labels.values() for g in q.values() if g > 0)}


def _page(result: SearchResult, html_rel: Any, src: Path, cache: PageCache, where: str) -> Page:
    base = {"qid": result.qid, "url": result.url, "rank": result.rank, "title": result.title}
    if not html_rel:
        return Page(**base, status=FetchStatus.EMPTY, reason="the dataset has no saved HTML for this result")
    path = (src / str(html_rel)).resolve()
    if src.resolve() not in path.parents:
        raise SchemaError(f"{where}: html path {html_rel!r} points outside {src}")
    if not path.is_file():
        raise SchemaError(f"{where}: saved page {html_rel!r} not found under {src}")
    body = path.read_bytes()
    sha = cache.put(body)
    meta = {"content_type": "text/html; charset=utf-8", "encoding": "utf-8", "final_url": result.url,
            "http_status": 200, "truncated": False}
    cache.remember(result.url, sha, meta)
    return Page(**base, status=FetchStatus.OK, final_url=result.url, http_status=200,
                content_type=meta["content_type"], encoding="utf-8", n_bytes=len(body), body_sha256=sha,
                from_cache=True)
