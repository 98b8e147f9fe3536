"""Ranking metrics (MRR, P@k, NDCG@k) and TREC run/qrels files.

A *run* maps ``qid -> {doc: score}``; *qrels* map ``qid -> {doc: grade}``
with integer relevance grades (0 = not relevant).

Conventions (chosen to equal ``ir_measures``/``trec_eval`` exactly):

* Ranking: score descending; ties broken by doc id **descending** (plain
  string order), as trec_eval does.
* ``MRR`` (reciprocal rank of the first relevant doc), ``P@k`` (relevant docs
  in the top k divided by k): a doc is relevant when its grade is > 0;
  unjudged docs are not relevant.
* ``NDCG@k``: gain = grade (``gain="linear"``, trec_eval's ``ndcg_cut`` and
  ir_measures' default) or 2^grade - 1 (``gain="exp"``, LightGBM/allRank).
  The ideal DCG is computed from *all* judged docs of the query, retrieved or
  not. Negative grades count as 0.
* A query with no relevant doc scores 0 on every metric; a query in the
  qrels but absent from the run scores 0; a query in the run without qrels
  is skipped (it cannot be judged) and reported in ``skipped``.
* Two averages are reported: ``mean`` over all judged queries (the paper's
  convention, so even the oracle stays below 1 when some queries have no
  relevant page) and ``mean_answerable`` over queries with >= 1 relevant doc.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from verirank.docno import decode_docno, encode_docno
from verirank.errors import ConfigError, SchemaError
from verirank.store import atomic_write_text

__all__ = [
    "Run", "Qrels", "DEFAULT_METRICS", "EvalResult", "rank_docs", "evaluate",
    "query_metric", "read_trec_run", "write_trec_run", "read_qrels", "write_qrels",
    "run_from_scores", "qrels_from_labels", "oracle_run",
]

Run = dict[str, dict[str, float]]
Qrels = dict[str, dict[str, int]]

DEFAULT_METRICS: tuple[str, ...] = ("MRR", "P@1", "P@5", "NDCG@5", "NDCG@10")

_METRIC_RE = re.compile(r"^(MRR|RR|P|NDCG)(?:@(\d+))?$", re.IGNORECASE)


def rank_docs(scores: Mapping[str, float]) -> list[str]:
    """Doc ids best first: score descending, then doc id descending (trec_eval)."""
    return [doc for doc, _ in sorted(scores.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]


def _parse_metric(name: str) -> tuple[str, int | None]:
    match = _METRIC_RE.match(name.strip())
    if not match:
        raise ConfigError(f"unknown metric {name!r}; use MRR, RR@k, P@k or NDCG@k")
    kind, cutoff = match.group(1).upper(), match.group(2)
    k = int(cutoff) if cutoff else None
    if kind == "RR":
        kind = "MRR"
    if kind in ("P", "NDCG") and not k:
        raise ConfigError(f"metric {name!r} needs a cutoff, e.g. {kind}@5")
    if k is not None and k < 1:
        raise ConfigError(f"metric {name!r}: cutoff must be >= 1")
    return kind, k


def _gain(grade: float, gain: str) -> float:
    grade = max(float(grade), 0.0)
    return grade if gain == "linear" else 2.0 ** grade - 1.0


def query_metric(
    name: str, ranking: Sequence[str], judgments: Mapping[str, int], gain: str = "linear"
) -> float:
    """One metric for one query, given its ranked doc ids and its judgments."""
    if gain not in ("linear", "exp"):
        raise ConfigError(f"gain must be 'linear' or 'exp', got {gain!r}")
    kind, k = _parse_metric(name)
    if kind == "MRR":
        top = ranking if k is None else ranking[:k]
        for position, doc in enumerate(top, start=1):
            if judgments.get(doc, 0) > 0:
                return 1.0 / position
        return 0.0
    assert k is not None
    if kind == "P":
        return sum(1 for doc in ranking[:k] if judgments.get(doc, 0) > 0) / k
    # NDCG@k
    dcg = sum(_gain(judgments.get(doc, 0), gain) / math.log2(i + 2) for i, doc in enumerate(ranking[:k]))
    ideal = sorted((_gain(g, gain) for g in judgments.values()), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


@dataclass
class EvalResult:
    """Per-query values and the two averages of a set of metrics."""

    metrics: tuple[str, ...]
    per_query: dict[str, dict[str, float]]
    #: queries with at least one relevant doc
    answerable: list[str]
    #: queries in the run that have no judgments (not scored)
    skipped: list[str] = field(default_factory=list)

    @property
    def mean(self) -> dict[str, float]:
        """Average over every judged query (no relevant doc = 0)."""
        return self._average(list(self.per_query))

    @property
    def mean_answerable(self) -> dict[str, float]:
        """Average over queries with at least one relevant doc."""
        return self._average(self.answerable)

    def _average(self, qids: list[str]) -> dict[str, float]:
        if not qids:
            return {m: 0.0 for m in self.metrics}
        return {m: sum(self.per_query[q][m] for q in qids) / len(qids) for m in self.metrics}

    def values(self, metric: str, qids: Sequence[str] | None = None) -> list[float]:
        """Per-query values of one metric, in ``qids`` order (default: sorted qids)."""
        return [self.per_query[q][metric] for q in (qids if qids is not None else sorted(self.per_query))]

    def to_rows(self) -> list[dict[str, object]]:
        """One dict per query (for CSV): qid, answerable, then each metric."""
        answerable = set(self.answerable)
        return [
            {"qid": q, "answerable": q in answerable, **self.per_query[q]}
            for q in sorted(self.per_query)
        ]

    def summary(self) -> dict[str, object]:
        return {
            "n_queries": len(self.per_query),
            "n_answerable": len(self.answerable),
            "n_skipped": len(self.skipped),
            "mean": self.mean,
            "mean_answerable": self.mean_answerable,
        }


def evaluate(
    run: Run, qrels: Qrels, metrics: Iterable[str] = DEFAULT_METRICS, gain: str = "linear"
) -> EvalResult:
    """Score ``run`` against ``qrels`` on every judged query (see module docstring)."""
    metrics = tuple(metrics)
    for name in metrics:
        _parse_metric(name)
    per_query: dict[str, dict[str, float]] = {}
    answerable = []
    for qid in sorted(qrels):
        judgments = qrels[qid]
        ranking = rank_docs(run.get(qid, {}))
        per_query[qid] = {m: query_metric(m, ranking, judgments, gain) for m in metrics}
        if any(g > 0 for g in judgments.values()):
            answerable.append(qid)
    skipped = sorted(q for q in run if q not in qrels)
    return EvalResult(metrics=metrics, per_query=per_query, answerable=answerable, skipped=skipped)


# --- building runs and qrels from arrays ----------------------------------------


def run_from_scores(qids: Sequence, docs: Sequence, scores: Sequence[float]) -> Run:
    """Group row-wise (qid, doc, score) into a run; duplicate (qid, doc) is an error."""
    run: Run = {}
    for q, d, s in zip(qids, docs, scores, strict=True):
        bucket = run.setdefault(str(q), {})
        if str(d) in bucket:
            raise SchemaError(f"doc {d!r} appears twice in query {q!r}")
        bucket[str(d)] = float(s)
    return run


def qrels_from_labels(qids: Sequence, docs: Sequence, labels: Sequence[float]) -> Qrels:
    """Group row-wise labels into qrels; grades must be whole numbers."""
    qrels: Qrels = {}
    for q, d, y in zip(qids, docs, labels, strict=True):
        if float(y) != int(y):
            raise SchemaError(f"relevance {y!r} of doc {d!r} in query {q!r} is not a whole number")
        qrels.setdefault(str(q), {})[str(d)] = int(y)
    return qrels


def oracle_run(qrels: Qrels) -> Run:
    """The best possible run: judged docs scored by their grade (evaluation only)."""
    return {q: {d: float(g) for d, g in docs.items()} for q, docs in qrels.items()}


# --- TREC files -------------------------------------------------------------------


def read_trec_run(path: Path | str) -> Run:
    """Read ``qid Q0 doc rank score tag`` lines (the rank column is ignored)."""
    path = Path(path)
    if not path.exists():
        raise SchemaError(f"run file {path} does not exist")
    run: Run = {}
    for lineno, raw in enumerate(path.read_text("utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        parts = raw.split()
        if len(parts) != 6:
            raise SchemaError(f"{path}:{lineno}: expected 6 columns 'qid Q0 doc rank score tag', got {len(parts)}")
        qid, _, doc, _, score_text, _ = parts
        qid, doc = decode_docno(qid), decode_docno(doc)
        try:
            score = float(score_text)
        except ValueError:
            raise SchemaError(f"{path}:{lineno}: score {score_text!r} is not a number") from None
        if not math.isfinite(score):
            raise SchemaError(f"{path}:{lineno}: score {score_text!r} is not finite")
        bucket = run.setdefault(qid, {})
        if doc in bucket:
            raise SchemaError(f"{path}:{lineno}: doc {doc!r} appears twice in query {qid!r}")
        bucket[doc] = score
    return run


def write_trec_run(path: Path | str, run: Run, tag: str = "verirank") -> int:
    """Write a run, each query best first; returns the number of lines.

    qids and doc ids go through :func:`verirank.docno.encode_docno`, so any
    URL can be a doc id; :func:`read_trec_run` decodes them.
    """
    lines = []
    for qid in sorted(run):
        for position, doc in enumerate(rank_docs(run[qid]), start=1):
            lines.append(f"{encode_docno(qid)} Q0 {encode_docno(doc)} {position} {run[qid][doc]!r} {tag}\n")
    atomic_write_text(Path(path), "".join(lines))
    return len(lines)


def read_qrels(path: Path | str) -> Qrels:
    """Read ``qid iter doc grade`` lines (TREC qrels)."""
    path = Path(path)
    if not path.exists():
        raise SchemaError(f"qrels file {path} does not exist")
    qrels: Qrels = {}
    for lineno, raw in enumerate(path.read_text("utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        parts = raw.split()
        if len(parts) != 4:
            raise SchemaError(f"{path}:{lineno}: expected 4 columns 'qid 0 doc grade', got {len(parts)}")
        qid, _, doc, grade_text = parts
        qid, doc = decode_docno(qid), decode_docno(doc)
        try:
            grade = int(grade_text)
        except ValueError:
            raise SchemaError(f"{path}:{lineno}: grade {grade_text!r} is not an integer") from None
        bucket = qrels.setdefault(qid, {})
        if doc in bucket:
            raise SchemaError(f"{path}:{lineno}: doc {doc!r} judged twice in query {qid!r}")
        bucket[doc] = grade
    if not qrels:
        raise SchemaError(f"qrels file {path} holds no judgments")
    return qrels


def write_qrels(path: Path | str, qrels: Qrels) -> int:
    """Write TREC qrels (ids encoded as in :func:`write_trec_run`); returns the number of lines."""
    lines = []
    for qid in sorted(qrels):
        for doc in sorted(qrels[qid]):
            lines.append(f"{encode_docno(qid)} 0 {encode_docno(doc)} {int(qrels[qid][doc])}\n")
    atomic_write_text(Path(path), "".join(lines))
    return len(lines)
