"""LambdaMART: gradient-boosted trees with the LambdaRank objective (LightGBM).

Training is deterministic: ``deterministic=True``, ``force_row_wise=True``,
a fixed thread count and a fixed seed give identical trees on every run.
With an ``eval_set`` the number of trees is chosen by early stopping on the
validation NDCG@``eval_at`` (LightGBM's own NDCG: gain 2^label - 1); only the
trees up to the best iteration are kept.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Optional

import numpy as np

from ranking.models.base import EvalSet, Ranker
from ranking.models.data import query_slates
from verirank_core.json_types import JSONObject

__all__ = ["LambdaMART"]

_BOOSTER_FILE = "booster.txt"


def _contiguous(X: np.ndarray, y: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Rows reordered so each query is contiguous, plus LightGBM's group sizes."""
    slates = query_slates(groups)
    order = np.concatenate(slates)
    return X[order], y[order], [len(s) for s in slates]


def _eval_data(X: np.ndarray, y: np.ndarray) -> dict[str, object]:
    """Validation data in the form this LightGBM takes (``eval_X/eval_y`` since 4.6)."""
    import inspect

    import lightgbm as lgb

    if "eval_X" in inspect.signature(lgb.LGBMRanker.fit).parameters:
        return {"eval_X": (X,), "eval_y": (y,)}
    return {"eval_set": [(X, y)]}


@dataclasses.dataclass(eq=False)
class LambdaMART(Ranker):
    """LightGBM ``LGBMRanker(objective="lambdarank")``.

    Parameters mirror LightGBM's: ``n_estimators``, ``learning_rate``,
    ``num_leaves``, ``min_child_samples``; ``early_stopping_rounds`` applies
    only when ``fit`` gets an ``eval_set``; ``eval_at`` is the NDCG cutoff of
    early stopping; ``num_threads`` and ``seed`` make training repeatable.
    Attributes after fit: ``booster_`` (a ``lightgbm.Booster``), ``best_iteration_``.
    """

    name = "lambdamart"

    n_estimators: int = 100
    learning_rate: float = 0.1
    num_leaves: int = 31
    min_child_samples: int = 20
    early_stopping_rounds: Optional[int] = 20
    eval_at: int = 5
    num_threads: int = 1
    seed: int = 42

    def _fit(self, X: np.ndarray, y: np.ndarray, groups: np.ndarray, eval_set: Optional[EvalSet]) -> None:
        import lightgbm as lgb

        Xs, ys, sizes = _contiguous(X, y, groups)
        ranker = lgb.LGBMRanker(
            objective="lambdarank",
            n_estimators=self.n_estimators,
            learning_rate=self.learning_rate,
            num_leaves=self.num_leaves,
            min_child_samples=self.min_child_samples,
            random_state=self.seed,
            n_jobs=self.num_threads,
            deterministic=True,
            force_row_wise=True,
            verbose=-1,
        )
        callbacks = []
        if eval_set is not None:
            Xv, yv, sizes_v = _contiguous(*eval_set)
            watch, name = (Xv, yv, sizes_v), "valid"
            if self.early_stopping_rounds:
                callbacks.append(lgb.early_stopping(self.early_stopping_rounds, first_metric_only=True,
                                                    verbose=False))
        else:
            # no validation data: record the training curve instead
            watch, name = (Xs, ys, sizes), "train"
        ranker.fit(Xs, ys, group=sizes, eval_at=[self.eval_at], eval_names=[name],
                   eval_group=[watch[2]], callbacks=callbacks, **_eval_data(watch[0], watch[1]))

        self.best_iteration_ = int(ranker.best_iteration_ or ranker.n_estimators_)
        # keep only the trees up to the best iteration, so predict == predict after load
        self.booster_ = lgb.Booster(model_str=ranker.booster_.model_to_string(num_iteration=self.best_iteration_))
        self.history_ = []
        for split, curves in ranker.evals_result_.items():
            for metric, values in curves.items():
                for step, value in enumerate(values):
                    if len(self.history_) <= step:
                        self.history_.append({})
                    self.history_[step][f"{split}_{metric}"] = float(value)

    def _predict(self, X: np.ndarray, groups: np.ndarray) -> np.ndarray:
        return self.booster_.predict(X, num_threads=self.num_threads)

    def feature_importance(self) -> Optional[dict[str, float]]:
        self._check_fitted()
        gains = self.booster_.feature_importance(importance_type="gain")
        return dict(zip(self.feature_names_, (float(g) for g in gains)))

    def _state(self, path: Path) -> JSONObject:
        self.booster_.save_model(str(path / _BOOSTER_FILE))
        return {"booster_file": _BOOSTER_FILE, "best_iteration": self.best_iteration_}

    def _restore(self, path: Path, state: JSONObject) -> None:
        import lightgbm as lgb

        self.booster_ = lgb.Booster(model_file=str(path / state["booster_file"]))
        self.best_iteration_ = int(state["best_iteration"])
