"""Reranked lists as files: JSONL (:class:`RankedItem`), TREC run and CSV.

* ``reranked.jsonl``: one :class:`verirank_core.ranking_records.RankedItem` per page
  (qid, rank, url, title, score, verified, f4, original_rank, summary).
* TREC run: ``qid Q0 docno rank score tag``. The docno is the page URL in
  the reversible encoding of verirank_core/docno.py (an ordinary URL is its own
  docno; one with whitespace or control characters becomes ``pct:...``,
  and so does its qrels line). The score
  column is ``n - rank + 1`` (n = pages of the query, :func:`ranking.order.ranked_run`), *not* the model
  score: TREC tools re-sort by score, and verified-first lists are not
  sorted by model score, so this keeps evaluation on exactly our order.
  The model score is in the JSONL and CSV files.
* CSV: the RankedItem fields as columns, header first, UTF-8.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from verirank_core.execution_records import ExecutionResult
from verirank_core.ranking_records import RankedItem
from ranking.order import ranked_run
from ranking.verified import facts_from_execution, summarize
from verirank_core.errors import ConfigError, StoreError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FORMATS", "CSV_COLUMNS", "ranked_items", "write_trec", "write_ranked_jsonl", "write_csv",
    "read_ranked", "export_items", "export_run",
]

FORMATS: tuple[str, ...] = ("trec", "jsonl", "csv")
CSV_COLUMNS: tuple[str, ...] = (
    "qid", "rank", "url", "title", "score", "verified", "f4", "original_rank", "summary",
)


def ranked_items(reranked: pd.DataFrame, executions: Mapping[tuple, ExecutionResult]) -> list[RankedItem]:
    """RankedItems from a :func:`ranking.rerank.rerank` frame plus the execution records."""
    items = []
    for row in reranked.itertuples(index=False):
        execution = executions.get((row.qid, row.url))
        verified = bool(row.verified)
        items.append(RankedItem(
            qid=str(row.qid), rank=int(row.rank), url=str(row.url), title=str(row.title),
            score=float(row.score), verified=verified, f4=facts_from_execution(execution).f4,
            original_rank=int(row.original_rank), summary=summarize(execution, verified),
        ))
    return items


def _by_query(items: Iterable[RankedItem]) -> dict[str, list[RankedItem]]:
    out: dict[str, list[RankedItem]] = {}
    for item in items:
        out.setdefault(item.qid, []).append(item)
    for qid, rows in out.items():
        rows.sort(key=lambda it: it.rank)
        ranks = [it.rank for it in rows]
        if ranks != list(range(1, len(rows) + 1)):
            raise StoreError(f"query {qid}: ranks {ranks[:10]} are not 1..{len(rows)}")
    return out


def write_trec(path: Path | str, items: Sequence[RankedItem], tag: str = "verirank") -> int:
    """Write a TREC run (score column = n - rank + 1, see module doc); returns the line count."""
    from ranking.metrics import write_trec_run

    if not tag or any(c.isspace() for c in tag):
        raise ConfigError(f"TREC run tag {tag!r} must be non-empty without whitespace")
    rows = [it for query in _by_query(items).values() for it in query]
    run = ranked_run([it.qid for it in rows], [it.url for it in rows], [it.rank for it in rows])
    return write_trec_run(Path(path), run, tag=tag)


def write_ranked_jsonl(path: Path | str, items: Sequence[RankedItem]) -> int:
    from verirank_core.store import write_jsonl

    _by_query(items)
    return write_jsonl(Path(path), items)


def write_csv(path: Path | str, items: Sequence[RankedItem]) -> int:
    from verirank_core.store import atomic_write_text

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(CSV_COLUMNS), lineterminator="\n")
    writer.writeheader()
    for item in items:
        row = item.to_json_dict()
        writer.writerow({c: row.get(c) for c in CSV_COLUMNS})
    atomic_write_text(Path(path), buf.getvalue())
    return len(items)


def read_ranked(path: Path | str) -> list[RankedItem]:
    from verirank_core.store import read_jsonl

    return read_jsonl(Path(path), RankedItem)


def export_items(items: Sequence[RankedItem], fmt: str, out: Path | str, tag: str = "verirank") -> int:
    """Write ``items`` in format ``fmt`` (trec, jsonl or csv); returns the row count."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown export format {fmt!r}; valid: {', '.join(FORMATS)}")
    ordered = sorted(items, key=lambda it: (it.qid, it.rank))
    if fmt == "trec":
        return write_trec(out, ordered, tag=tag)
    if fmt == "jsonl":
        return write_ranked_jsonl(out, ordered)
    _by_query(ordered)
    return write_csv(out, ordered)


def export_run(run_dir: Path | str, fmt: str, out: Path | str, tag: str = "verirank") -> int:
    """Export ``DIR/reranked.jsonl`` as ``fmt`` to ``out``."""
    from verirank_core.stages import require
    from verirank_core.store import RunDir

    require(RunDir(run_dir), ["reranked.jsonl"])
    return export_items(read_ranked(Path(run_dir) / "reranked.jsonl"), fmt, out, tag=tag)
