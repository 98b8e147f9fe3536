"""Ranking metrics (MRR, P@k, NDCG@k) and TREC run/qrels files.

A *run* maps ``qid -> {doc: score}``; *qrels* map ``qid -> {doc: grade}``
with integer relevance grades (0 = not relevant).

Per-query values are computed by ``ir_measures`` (``RR``, ``P@k``,
``nDCG@k``); this module is a thin wrapper that names the metrics, scores
every judged query (also those missing from the run) and keeps the paper's
"all queries" mean. Conventions (those of ``ir_measures``/``trec_eval``):

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

from verirank_core.docno import decode_docno, encode_docno
from verirank_core.errors import ConfigError, SchemaError
from verirank_core.store import atomic_write_text

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


def _measure(name: str, gain: str, grades: Iterable[int] = ()) -> "object":
    """The ``ir_measures`` measure of one of our metric names."""
    import ir_measures

    if gain not in ("linear", "exp"):
        raise ConfigError(f"gain must be 'linear' or 'exp', got {gain!r}")
    kind, k = _parse_metric(name)
    if kind == "MRR":
        return ir_measures.RR if k is None else ir_measures.RR @ k
    if kind == "P":
        return ir_measures.P @ k
    if gain == "linear":
        return ir_measures.nDCG @ k
    return ir_measures.nDCG(cutoff=k, gains={g: 2 ** g - 1 for g in sorted(set(grades) | {0})})


def _per_query(run: Run, qrels: Qrels, metrics: Sequence[str], gain: str) -> dict[str, dict[str, float]]:
    """Every metric for every query of ``qrels`` (0 where the run has nothing)."""
    import ir_measures

    # negative grades count as 0 (not relevant, no gain)
    judged = {q: {d: max(int(g), 0) for d, g in docs.items()} for q, docs in qrels.items() if docs}
    grades = {g for docs in judged.values() for g in docs.values()}
    measures = {name: _measure(name, gain, grades) for name in metrics}
    out = {q: {name: 0.0 for name in metrics} for q in qrels}
    # ties are broken here (trec_eval's rule, :func:`rank_docs`): providers of ir_measures differ on them
    scored = {q: {d: float(len(docs) - i) for i, d in enumerate(rank_docs(docs))}
              for q, docs in run.items() if q in judged and docs}
    if not scored:
        return out
    names_of: dict[str, list[str]] = {}
    for name, measure in measures.items():
        names_of.setdefault(str(measure), []).append(name)
    unique = list({str(m): m for m in measures.values()}.values())
    for value in ir_measures.iter_calc(unique, judged, scored):
        for name in names_of.get(str(value.measure), []):
            out[value.query_id][name] = float(value.value)
    return out


def query_metric(
    name: str, ranking: Sequence[str], judgments: Mapping[str, int], gain: str = "linear"
) -> float:
    """One metric for one query, given its ranked doc ids (best first) and its judgments."""
    run = {"q": {doc: float(len(ranking) - i) for i, doc in enumerate(ranking)}}  # keeps the given order
    return _per_query(run, {"q": dict(judgments)}, [name], gain)["q"][name]


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
        _measure(name, gain)
    values = _per_query(run, qrels, metrics, gain)
    per_query = {qid: values[qid] for qid in sorted(qrels)}
    answerable = [qid for qid in sorted(qrels) if any(g > 0 for g in qrels[qid].values())]
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

    qids and doc ids go through :func:`verirank_core.docno.encode_docno`, so any
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
