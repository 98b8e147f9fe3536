"""Score arrays -> metrics, and permutation importance, for any ranker."""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ranking.metrics import DEFAULT_METRICS, EvalResult, evaluate, qrels_from_labels, run_from_scores
from ranking.svmlight import default_doc_ids

__all__ = ["evaluate_scores", "ndcg_at", "permutation_importance"]


def evaluate_scores(
    scores: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray,
    docs: Optional[np.ndarray] = None,
    metrics: Sequence[str] = DEFAULT_METRICS,
    gain: str = "linear",
) -> EvalResult:
    """Evaluate row scores against row labels (doc ids default to d0, d1 ... per query)."""
    groups = np.asarray([str(g) for g in groups], dtype=object)
    docs = default_doc_ids(groups) if docs is None else docs
    run = run_from_scores(groups, docs, scores)
    qrels = qrels_from_labels(groups, docs, y)
    return evaluate(run, qrels, metrics, gain=gain)


def ndcg_at(scores: np.ndarray, y: np.ndarray, groups: np.ndarray, k: int = 5, gain: str = "exp") -> float:
    """Mean NDCG@k over all queries; the validation metric of early stopping."""
    name = f"NDCG@{k}"
    return evaluate_scores(scores, y, groups, metrics=(name,), gain=gain).mean[name]


def permutation_importance(
    model: "object",
    X: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray,
    k: int = 5,
    seed: int = 0,
    max_features: Optional[int] = None,
) -> dict[str, float]:
    """Drop in mean NDCG@k when one feature column is shuffled across rows.

    Works for any fitted ranker (needed for TMLP, which has no native
    importance). ``max_features`` limits the work to the first N columns
    that vary, for wide data.
    """
    rng = np.random.default_rng(seed)
    base = ndcg_at(model.predict(X, groups), y, groups, k)  # type: ignore[attr-defined]
    names: list[str] = list(model.feature_names_)  # type: ignore[attr-defined]
    varying = [j for j in range(X.shape[1]) if np.ptp(X[:, j]) > 0]
    if max_features is not None:
        varying = varying[:max_features]
    out = {name: 0.0 for name in names}
    for j in varying:
        shuffled = X.copy()
        shuffled[:, j] = X[rng.permutation(len(X)), j]
        out[names[j]] = base - ndcg_at(model.predict(shuffled, groups), y, groups, k)  # type: ignore[attr-defined]
    return out
