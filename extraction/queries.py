"""Read the input queries of a run.

Two formats are accepted (see docs/fetching.md):

* JSONL (``.jsonl``/``.json``): one object per line,
  ``{"qid": "q1", "query": "how to turn on dark mode", "app": "Settings", "device": "Pixel 7"}``
  (``app`` and ``device`` optional);
* TSV (``.tsv``/``.txt``): ``qid<TAB>query`` per line.

Any other extension is decided by content: a first non-blank line that starts
with ``{`` means JSONL. Files are UTF-8, a byte-order mark is tolerated, blank
lines and lines starting with ``#`` (TSV only) are skipped. Every problem is a
:class:`SchemaError` naming ``file:line``; with a ``rejected`` list, a bad
line is recorded there instead (a :class:`RejectedLine`) and the others load.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator, Optional

from extraction.records import Query, RejectedLine
from verirank.errors import SchemaError

__all__ = ["load_queries"]

_JSONL_SUFFIXES = {".jsonl", ".json", ".ndjson"}
_TSV_SUFFIXES = {".tsv", ".txt"}


def load_queries(path: Path | str, rejected: Optional[list[RejectedLine]] = None) -> list[Query]:
    """Read, validate and return the queries of ``path`` in file order.

    Without ``rejected`` the first bad line raises SchemaError; with it, bad
    lines are appended to it and skipped.
    """
    path = Path(path)
    text = _read_text(path)
    fmt = _detect_format(path, text)
    parse = _parse_jsonl_line if fmt == "jsonl" else _parse_tsv_line

    queries: list[Query] = []
    first_line_of: dict[str, int] = {}
    for lineno, line in _numbered_lines(text):
        where = f"{path}:{lineno}"
        try:
            query = parse(line, where)
            if query is not None and query.qid in first_line_of:
                raise _Duplicate(
                    f"{where}: duplicate qid {query.qid!r} (first seen on line {first_line_of[query.qid]})"
                )
        except SchemaError as exc:
            if rejected is None:
                raise
            status = "duplicate" if isinstance(exc, _Duplicate) else "malformed"
            rejected.append(RejectedLine(source="queries", line=lineno, status=status,
                                         reason=str(exc).removeprefix(f"{where}: "), text=line[:500]))
            continue
        if query is None:
            continue
        first_line_of[query.qid] = lineno
        queries.append(query)
    return queries


class _Duplicate(SchemaError):
    """A well-formed line whose key an earlier line already used."""


def _read_text(path: Path) -> str:
    if not path.is_file():
        raise SchemaError(f"{path}: queries file not found")
    raw = path.read_bytes()
    try:
        # utf-8-sig drops a leading byte-order mark when there is one
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SchemaError(f"{path}:{line}: not valid UTF-8 ({exc.reason})") from exc


def _detect_format(path: Path, text: str) -> str:
    suffix = path.suffix.lower()
    if suffix in _JSONL_SUFFIXES:
        return "jsonl"
    if suffix in _TSV_SUFFIXES:
        return "tsv"
    for _, line in _numbered_lines(text):
        return "jsonl" if line.lstrip().startswith("{") else "tsv"
    return "tsv"


def _numbered_lines(text: str) -> Iterator[tuple[int, str]]:
    """Non-blank lines with their 1-based numbers."""
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield lineno, line


def _parse_jsonl_line(line: str, where: str) -> Query | None:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise SchemaError(f"{where}: not valid JSON ({exc.msg})") from exc
    if not isinstance(data, dict):
        raise SchemaError(f"{where}: expected a JSON object with 'qid' and 'query'")
    missing = [k for k in ("qid", "query") if k not in data]
    if missing:
        raise SchemaError(f"{where}: missing field(s) {', '.join(missing)}")
    # numeric qids are common in TREC-style files; keep them as strings
    if isinstance(data["qid"], int) and not isinstance(data["qid"], bool):
        data["qid"] = str(data["qid"])
    return _validated(data, where)


def _parse_tsv_line(line: str, where: str) -> Query | None:
    if line.lstrip().startswith("#"):
        return None
    if "\t" not in line:
        raise SchemaError(f"{where}: expected 'qid<TAB>query', found no tab")
    qid, query = line.split("\t", 1)
    return _validated({"qid": qid, "query": query}, where)


def _validated(data: dict, where: str) -> Query:
    record = Query.parse(data, where=where)
    record.qid = record.qid.strip()
    record.query = " ".join(record.query.split())
    if not record.qid:
        raise SchemaError(f"{where}: empty qid")
    try:  # a JSON escape can smuggle in a lone surrogate, which no file can hold
        (record.qid + record.query + (record.app or "") + (record.device or "")).encode("utf-8")
    except UnicodeEncodeError:
        raise SchemaError(f"{where}: not valid Unicode (a lone surrogate escape)") from None
    if not record.query:
        raise SchemaError(f"{where}: empty query for qid {record.qid!r}")
    return record
