"""The baseline rankings (original order, F4 only, F4-first); they live in
:mod:`ranking.models.baselines` so they share the estimator registry."""

from ranking.metrics import oracle_run
from ranking.models.baselines import ColumnScore, F4First, OriginalOrder, original_ranks

__all__ = ["OriginalOrder", "ColumnScore", "F4First", "original_ranks", "oracle_run"]
