"""Pairwise logistic regression (RankNet with a linear scorer).

For every pair of rows of one query with different labels, the model sees
``x_i - x_j`` labelled 1 when row i is more relevant. Half of the pairs are
flipped (``x_j - x_i``, label 0) so the two classes are balanced. A
logistic regression without intercept learns ``w``; the score is ``w . x``,
so scoring needs no pairs and is independent of the other rows.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Optional

import numpy as np

from ranking.models.base import EvalSet, Ranker
from ranking.models.data import query_slates
from verirank_core.errors import RankingError
from verirank_core.json_types import JSONObject

__all__ = ["PairwiseLR", "pairwise_differences"]


def pairwise_differences(
    X: np.ndarray, y: np.ndarray, groups: np.ndarray, max_pairs_per_query: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Balanced pair differences and labels (see module docstring)."""
    rng = np.random.default_rng(seed)
    diffs, labels = [], []
    for rows in query_slates(groups):
        i, j = np.triu_indices(len(rows), k=1)
        keep = y[rows[i]] != y[rows[j]]
        i, j = rows[i[keep]], rows[j[keep]]
        if len(i) > max_pairs_per_query:
            pick = np.sort(rng.choice(len(i), size=max_pairs_per_query, replace=False))
            i, j = i[pick], j[pick]
        diffs.append(X[i] - X[j])
        labels.append((y[i] > y[j]).astype(np.int64))
    if not diffs or sum(len(d) for d in diffs) == 0:
        raise RankingError("no query has two rows with different labels: nothing to learn from")
    D = np.concatenate(diffs)
    t = np.concatenate(labels)
    # flip a seeded half so both classes are equally frequent
    flip = rng.permutation(len(t))[: len(t) // 2]
    t_pos = t.copy()
    t_pos[flip] = 1 - t_pos[flip]
    D[flip] = -D[flip]
    return D, t_pos


@dataclasses.dataclass(eq=False)
class PairwiseLR(Ranker):
    """Linear ranker trained on pairwise differences with logistic loss.

    Parameters: ``C`` inverse L2 strength; ``max_pairs_per_query`` caps pairs
    per query (seeded sample); ``max_iter`` of lbfgs; ``seed``.
    Attributes after fit: ``coef_`` (one weight per feature), ``n_pairs_``.
    """

    name = "lr"

    C: float = 1.0
    max_pairs_per_query: int = 5000
    max_iter: int = 2000
    seed: int = 42

    def _fit(self, X: np.ndarray, y: np.ndarray, groups: np.ndarray, eval_set: Optional[EvalSet]) -> None:
        from sklearn.linear_model import LogisticRegression

        D, t = pairwise_differences(X, y, groups, self.max_pairs_per_query, self.seed)
        if len(np.unique(t)) < 2:
            raise RankingError("pairwise data has a single class (only one usable pair)")
        clf = LogisticRegression(C=self.C, fit_intercept=False, max_iter=self.max_iter,
                                 random_state=self.seed)
        clf.fit(D, t)
        self.coef_ = clf.coef_[0].astype(np.float64)
        self.n_pairs_ = int(len(t))
        self.history_ = [{"pairs": float(self.n_pairs_), "pair_accuracy": float(clf.score(D, t))}]
        if eval_set is not None:
            from ranking.models.evaluation import ndcg_at

            Xv, yv, gv = eval_set
            self.history_[0]["valid_ndcg@5"] = ndcg_at(Xv @ self.coef_, yv, gv, 5)

    def _predict(self, X: np.ndarray, groups: np.ndarray) -> np.ndarray:
        return X @ self.coef_

    def feature_importance(self) -> Optional[dict[str, float]]:
        self._check_fitted()
        return dict(zip(self.feature_names_, self.coef_.tolist()))

    def _state(self, path: Path) -> JSONObject:
        return {"coef": self.coef_.tolist(), "n_pairs": self.n_pairs_}

    def _restore(self, path: Path, state: JSONObject) -> None:
        self.coef_ = np.asarray(state["coef"], dtype=np.float64)
        self.n_pairs_ = int(state["n_pairs"])
