"""Fixed rankings to compare learned models against.

They follow the same estimator contract (``fit`` only records the feature
names), so they can be evaluated, saved and tracked like any model.

* ``original`` (:class:`OriginalOrder`): the search engine's order,
  score = -original rank. The rank comes from the ``rank_column`` feature when
  present, else from the row's position within its query (rows are stored
  in original order).
* ``f4`` (:class:`ColumnScore`): score = one feature column (F4, the
  verified-completion feature, by default); ties keep the original order.
* ``f4-first`` (:class:`F4First`): pages with F4 >= ``threshold`` first, each
  part in original order.
* the oracle (score = relevance label) needs the labels, so it is not a
  ranker: use :func:`ranking.metrics.oracle_run` (evaluation only).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Optional

import numpy as np

from ranking.models.base import EvalSet, Ranker
from ranking.models.data import query_slates
from ranking.order import positions
from verirank_core.errors import SchemaError
from verirank_core.json_types import JSONObject

__all__ = ["OriginalOrder", "ColumnScore", "F4First", "original_ranks"]


def original_ranks(X: np.ndarray, groups: np.ndarray, feature_names: list[str], rank_column: str) -> np.ndarray:
    """1-based original rank per row: the ``rank_column`` feature, else row position in its query."""
    if rank_column in feature_names:
        return X[:, feature_names.index(rank_column)].astype(np.float64)
    ranks = np.zeros(len(X), dtype=np.float64)
    for rows in query_slates(groups):
        ranks[rows] = np.arange(1, len(rows) + 1)
    return ranks


def _order_scores(primary: np.ndarray, ranks: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Within each query: ``primary`` descending, then original rank (:mod:`ranking.order`); score = -position."""
    return -positions(groups, primary, ranks).astype(np.float64)


def _column(feature_names: list[str], column: str, who: str) -> int:
    if column not in feature_names:
        raise SchemaError(f"baseline {who} needs feature {column!r}; features are {feature_names[:20]}")
    return feature_names.index(column)


@dataclasses.dataclass(eq=False)
class _Baseline(Ranker):
    def _fit(self, X: np.ndarray, y: np.ndarray, groups: np.ndarray, eval_set: Optional[EvalSet]) -> None:
        self._check_columns()

    def _check_columns(self) -> None:
        """Fail at fit time (not at predict time) when a needed column is absent."""

    def _state(self, path: Path) -> JSONObject:
        return {}

    def _restore(self, path: Path, state: JSONObject) -> None:
        pass


@dataclasses.dataclass(eq=False)
class OriginalOrder(_Baseline):
    """Score = -original rank (see module docstring)."""

    name = "original"
    listwise = True  # the fallback rank depends on the row's position in its query

    rank_column: str = "rank"

    def _predict(self, X: np.ndarray, groups: np.ndarray) -> np.ndarray:
        return -original_ranks(X, groups, self.feature_names_, self.rank_column)


@dataclasses.dataclass(eq=False)
class ColumnScore(_Baseline):
    """Score = one feature column; ties broken by original order."""

    name = "f4"
    listwise = True

    column: str = "F4"
    rank_column: str = "rank"

    def _check_columns(self) -> None:
        _column(self.feature_names_, self.column, self.name)

    def _predict(self, X: np.ndarray, groups: np.ndarray) -> np.ndarray:
        value = X[:, _column(self.feature_names_, self.column, self.name)]
        ranks = original_ranks(X, groups, self.feature_names_, self.rank_column)
        return _order_scores(value, ranks, groups)


@dataclasses.dataclass(eq=False)
class F4First(_Baseline):
    """Pages whose F4 >= ``threshold`` first, then the rest; original order within each part."""

    name = "f4-first"
    listwise = True

    column: str = "F4"
    threshold: float = 1.0
    rank_column: str = "rank"

    def _check_columns(self) -> None:
        _column(self.feature_names_, self.column, self.name)

    def _predict(self, X: np.ndarray, groups: np.ndarray) -> np.ndarray:
        passed = X[:, _column(self.feature_names_, self.column, self.name)] >= self.threshold
        ranks = original_ranks(X, groups, self.feature_names_, self.rank_column)
        return _order_scores(passed.astype(np.float64), ranks, groups)
