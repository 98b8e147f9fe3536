"""Read a run directory into the plain objects the HTML report is rendered from.

Only files are read here (no HTML): queries, the original ranking, the
extraction, execution and reranked records, trajectories, and, when present,
the relevance judgements (``qrels.txt``) and the demo's evaluation
(``summary.json``). Every file but ``serp.jsonl`` is optional, so the report
also works on a run that stopped early (it shows what exists).

Relevance judgements are shown as evaluation marks only; they never enter a
ranking.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from verirank_core.execution_records import ExecutionResult, ExecutionStatus, Trajectory
from verirank_core.extraction_records import Extraction, Query, SearchResult
from verirank_core.ranking_records import RankedItem
from verirank_core.errors import SchemaError, StoreError
from verirank_core.json_types import JSONObject
from verirank_core.store import read_json, read_jsonl
from verirank_core.trajectories import RunTrajectories

__all__ = ["PageView", "QueryView", "ReportData", "collect_run", "page_anchor"]


def page_anchor(qid: str, url: str) -> str:
    """A stable HTML id for one (query, page)."""
    return "p-" + hashlib.sha1(f"{qid}\n{url}".encode("utf-8")).hexdigest()[:12]


@dataclass
class PageView:
    """One search result of one query, with everything the pipeline learnt about it."""

    qid: str
    url: str
    title: str
    original_rank: int
    #: rank after reranking (None when the run was not reranked)
    new_rank: Optional[int] = None
    score: Optional[float] = None
    verified: bool = False
    #: e.g. "verified on clock-app v13: 4/4 steps, completed"
    summary: str = ""
    #: qrels grade (None: no judgement available)
    relevance: Optional[int] = None
    extraction: Optional[Extraction] = None
    execution: Optional[ExecutionResult] = None
    trajectory: Optional[Trajectory] = None
    #: the folder the trajectory's screen names are relative to (the run directory, or a page's folder)
    trajectory_dir: Optional[Path] = None
    #: problem reading the trajectory, shown instead of it
    trajectory_error: str = ""

    @property
    def anchor(self) -> str:
        return page_anchor(self.qid, self.url)

    @property
    def moved(self) -> int:
        """Positions gained by reranking (positive = moved up)."""
        return 0 if self.new_rank is None else self.original_rank - self.new_rank


@dataclass
class QueryView:
    query: Query
    #: pages in the original (search engine) order
    original: list[PageView]
    #: pages in the reranked order (empty when the run was not reranked)
    reranked: list[PageView] = field(default_factory=list)
    #: per-query metrics by system name, from summary.json (e.g. {"LR": {"MRR": 1.0}})
    metrics: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def world(self) -> Optional[str]:
        return (self.query.model_extra or {}).get("world")


@dataclass
class ReportData:
    run_dir: Path
    queries: list[QueryView]
    #: the demo's evaluation (summary.json), if any
    summary: Optional[JSONObject] = None
    manifest: JSONObject = field(default_factory=dict)

    def count(self, predicate) -> int:
        return sum(1 for q in self.queries for p in q.original if predicate(p))


def _optional_jsonl(path: Path, record_type: type) -> list:
    return read_jsonl(path, record_type) if path.exists() else []


def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    if not path.exists():
        return {}
    from ranking.metrics import read_qrels

    return read_qrels(path)


def _load_trajectory(trajectories: RunTrajectories, execution: ExecutionResult
                     ) -> tuple[Optional[Trajectory], Optional[Path], str]:
    if not execution.trajectory:
        return None, None, ""
    try:
        return trajectories.load(execution), trajectories.folder_of(execution), ""
    except (StoreError, SchemaError) as exc:
        # one unreadable trajectory must not hide the rest of the report
        return None, trajectories.folder_of(execution), str(exc)


def collect_run(run_dir: Path | str, qrels_path: Optional[Path] = None) -> ReportData:
    """Everything the report shows, read from ``run_dir``.

    ``qrels_path`` defaults to ``run_dir/qrels.txt`` (skipped when absent).
    """
    run_dir = Path(run_dir)
    serp_path = run_dir / "serp.jsonl"
    if not serp_path.exists():
        raise StoreError(f"{serp_path} not found: {run_dir} is not a run directory (run `verirank demo` "
                         "or `verirank run` first)")
    serp = read_jsonl(serp_path, SearchResult)
    queries = {q.qid: q for q in _optional_jsonl(run_dir / "queries.jsonl", Query)}
    extractions = {e.key(): e for e in _optional_jsonl(run_dir / "extraction.jsonl", Extraction)}
    executions = {e.key(): e for e in _optional_jsonl(run_dir / "execution.jsonl", ExecutionResult)}
    ranked = {r.key(): r for r in _optional_jsonl(run_dir / "reranked.jsonl", RankedItem)}
    qrels = _read_qrels(qrels_path or run_dir / "qrels.txt")
    summary = read_json(run_dir / "summary.json") if (run_dir / "summary.json").exists() else None
    manifest = read_json(run_dir / "manifest.json") if (run_dir / "manifest.json").exists() else {}

    trajectories = RunTrajectories(run_dir)
    by_query: dict[str, list[PageView]] = {}
    for hit in sorted(serp, key=lambda r: (r.qid, r.rank)):
        key = (hit.qid, hit.url)
        extraction = extractions.get(key)
        execution = executions.get(key)
        item = ranked.get(key)
        page = PageView(
            qid=hit.qid, url=hit.url, title=(extraction.title if extraction and extraction.title else hit.title),
            original_rank=hit.rank, extraction=extraction, execution=execution,
            relevance=qrels.get(hit.qid, {}).get(hit.url) if qrels else None,
        )
        if item is not None:
            page.new_rank, page.score = item.rank, item.score
            page.verified, page.summary = item.verified, item.summary
        elif execution is not None:
            from ranking.verified import is_verified, summarize

            page.verified = is_verified(execution)
            page.summary = summarize(execution, page.verified)
        else:
            page.summary = "not executed"
        if execution is not None and execution.status == ExecutionStatus.EXECUTED:
            page.trajectory, page.trajectory_dir, page.trajectory_error = _load_trajectory(trajectories, execution)
        by_query.setdefault(hit.qid, []).append(page)

    per_query = (summary or {}).get("per_query", {})
    # systems in the summary table's order (the JSON object itself is stored with sorted keys)
    system_order = [row["system"] for row in (summary or {}).get("rows", [])]
    per_query = {s: per_query[s] for s in system_order + sorted(per_query) if s in per_query}
    # queries in the order of queries.jsonl, then any query only the serp knows
    order = [q for q in queries if q in by_query] + [q for q in by_query if q not in queries]
    views = []
    for qid in order:
        pages = by_query[qid]
        query = queries.get(qid) or Query(qid=qid, query=pages[0].extraction.query if pages[0].extraction else qid)
        reranked = sorted((p for p in pages if p.new_rank is not None), key=lambda p: p.new_rank)
        metrics = {system: rows[qid] for system, rows in per_query.items() if qid in rows}
        views.append(QueryView(query=query, original=pages, reranked=reranked, metrics=metrics))
    return ReportData(run_dir=run_dir, queries=views, summary=summary, manifest=manifest)
