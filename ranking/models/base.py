"""The estimator contract every ranker follows, and the registry of rankers.

A ranker is a dataclass whose fields are its hyperparameters: the generated
``__init__`` only stores them (sklearn style). ``fit`` validates its input,
learns, and sets attributes ending in ``_``; ``predict`` raises
:class:`NotFittedError` before that. Subclasses implement ``_fit``,
``_predict``, ``_state`` and ``_restore``; the base class does validation,
column alignment by feature name, and saving/loading.

Saved model layout (a directory)::

    MODEL_DIR/ranker.json   name, hyperparameters, feature names, learned JSON state
    MODEL_DIR/...           model-specific files (weights.pt, booster.txt)
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from pathlib import Path
from typing import ClassVar, Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike

from verirank_core.errors import ConfigError, NotFittedError, SchemaError, StoreError
from verirank_core.json_types import JSONObject
from verirank_core.registry import Registry
from verirank_core.store import atomic_write_json

__all__ = ["Ranker", "EvalSet", "make_model", "model_names", "load_ranker", "RANKER_FILE"]

RANKER_FILE = "ranker.json"
FORMAT_VERSION = 1

#: (X, y, groups) of a validation set used for early stopping
EvalSet = tuple[np.ndarray, np.ndarray, np.ndarray]


@dataclasses.dataclass(eq=False)
class Ranker:
    """Base class: score rows so that better documents of a query score higher."""

    #: registry name (``lr``, ``lambdamart`` ...); TMLP derives it from its loss
    name: ClassVar[str] = ""
    #: True when a row's score depends on the other rows of its query
    listwise: ClassVar[bool] = False

    # --- hyperparameters -------------------------------------------------------

    def get_params(self) -> dict[str, object]:
        """The hyperparameters (the dataclass fields) as a plain dict."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def set_params(self, **params: object) -> "Ranker":
        valid = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(params) - valid)
        if unknown:
            raise ConfigError(f"{self.name}: unknown hyperparameter(s) {unknown}; valid: {sorted(valid)}")
        for key, value in params.items():
            setattr(self, key, value)
        return self

    def clone(self) -> "Ranker":
        """A new unfitted ranker with the same hyperparameters."""
        return type(self)(**self.get_params())

    # --- fit / predict ----------------------------------------------------------

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        groups: np.ndarray,
        *,
        feature_names: Optional[Sequence[str]] = None,
        eval_set: Optional[EvalSet] = None,
    ) -> "Ranker":
        """Learn from rows ``X`` with relevance ``y``; ``groups`` is each row's query id.

        ``eval_set=(X_valid, y_valid, groups_valid)`` enables early stopping
        for models that support it (same columns as ``X``).
        """
        X, y, groups = _check_xyg(X, y, groups, "training data")
        names = list(feature_names) if feature_names is not None else [f"f{i + 1}" for i in range(X.shape[1])]
        if len(names) != X.shape[1]:
            raise SchemaError(f"{len(names)} feature names for {X.shape[1]} columns")
        if len(set(names)) != len(names):
            raise SchemaError("feature names are not unique")
        if eval_set is not None:
            Xv, yv, gv = _check_xyg(*eval_set, "validation data")
            if Xv.shape[1] != X.shape[1]:
                raise SchemaError(f"validation data has {Xv.shape[1]} columns, training data {X.shape[1]}")
            eval_set = (Xv, yv, gv)
        self.feature_names_ = names
        self.n_features_ = X.shape[1]
        self.history_: list[dict[str, float]] = []
        self._fit(X, y, groups, eval_set)
        self.fitted_ = True
        return self

    def predict(
        self,
        X: np.ndarray,
        groups: Optional[np.ndarray] = None,
        *,
        feature_names: Optional[Sequence[str]] = None,
    ) -> np.ndarray:
        """Scores for the rows of ``X`` (higher = better), as float64.

        Pass ``groups`` (query id per row): listwise models score each query's
        rows together (without it all rows are one query). ``feature_names``
        lets the columns come in any order; they are matched by name.
        """
        self._check_fitted()
        X = self._align(np.asarray(X, dtype=np.float64), feature_names)
        if groups is None:
            groups = np.zeros(len(X), dtype=np.int64)
        groups = np.asarray(groups)
        if len(groups) != len(X):
            raise SchemaError(f"groups has {len(groups)} entries for {len(X)} rows")
        if len(X) == 0:
            return np.zeros(0, dtype=np.float64)
        return np.asarray(self._predict(X, groups), dtype=np.float64).reshape(-1)

    def feature_importance(self) -> Optional[dict[str, float]]:
        """Model-native importance per feature name, or None (use permutation importance)."""
        return None

    # --- save / load ------------------------------------------------------------

    def save(self, path: Path | str) -> Path:
        """Write the fitted model into directory ``path`` (created if needed)."""
        self._check_fitted()
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        state = self._state(path)
        atomic_write_json(path / RANKER_FILE, {
            "format_version": FORMAT_VERSION,
            "name": self.name,
            "params": _jsonable(self.get_params()),
            "feature_names": self.feature_names_,
            "history": self.history_,
            "state": state,
        })
        return path

    @classmethod
    def load(cls, path: Path | str) -> "Ranker":
        """Load a model saved by :meth:`save` (any registered ranker)."""
        model = load_ranker(path)
        if not isinstance(model, cls):
            raise SchemaError(f"{path} holds a {type(model).__name__}, not a {cls.__name__}")
        return model

    # --- to implement -------------------------------------------------------------

    def _fit(self, X: np.ndarray, y: np.ndarray, groups: np.ndarray, eval_set: Optional[EvalSet]) -> None:
        raise NotImplementedError

    def _predict(self, X: np.ndarray, groups: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _state(self, path: Path) -> JSONObject:
        """Write model files into ``path``; return the JSON part of the learned state."""
        raise NotImplementedError

    def _restore(self, path: Path, state: JSONObject) -> None:
        """Inverse of :meth:`_state`: set the learned attributes."""
        raise NotImplementedError

    # --- helpers ------------------------------------------------------------------

    def _check_fitted(self) -> None:
        if not getattr(self, "fitted_", False):
            raise NotFittedError(f"{self.name or type(self).__name__}: call fit() before predict() or save()")

    def _align(self, X: np.ndarray, feature_names: Optional[Sequence[str]]) -> np.ndarray:
        if X.ndim != 2:
            raise SchemaError(f"X must be 2-dimensional, got shape {X.shape}")
        if feature_names is None:
            if X.shape[1] != self.n_features_:
                raise SchemaError(f"X has {X.shape[1]} columns; the model was fitted on {self.n_features_}")
        else:
            names = list(feature_names)
            if len(names) != X.shape[1]:
                raise SchemaError(f"{len(names)} feature names for {X.shape[1]} columns")
            if names != self.feature_names_:
                missing = [n for n in self.feature_names_ if n not in names]
                if missing:
                    raise SchemaError(f"features missing at predict time: {missing[:10]}")
                position = {n: i for i, n in enumerate(names)}
                X = X[:, [position[n] for n in self.feature_names_]]
        if not np.all(np.isfinite(X)):
            raise SchemaError("X contains NaN or infinity")
        # one memory layout, so the same rows always give bit-identical scores
        return np.ascontiguousarray(X)


def _check_xyg(X: ArrayLike, y: ArrayLike, groups: ArrayLike, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    groups = np.asarray(groups)
    if X.ndim != 2:
        raise SchemaError(f"{what}: X must be 2-dimensional, got shape {X.shape}")
    if not (len(X) == len(y) == len(groups)):
        raise SchemaError(f"{what}: X has {len(X)} rows, y {len(y)}, groups {len(groups)}")
    if len(X) == 0:
        raise SchemaError(f"{what}: no rows")
    if not np.all(np.isfinite(X)):
        raise SchemaError(f"{what}: X contains NaN or infinity")
    if not np.all(np.isfinite(y)) or np.any(y < 0):
        raise SchemaError(f"{what}: labels must be finite and >= 0")
    return X, y, groups


def _jsonable(value: object) -> object:
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    return value


# --- registry -------------------------------------------------------------------------

# name -> ("module:Class", fixed params); classes are imported on first use so
# that listing models or loading a linear model never imports torch.
_REGISTRY: Registry[tuple[str, dict[str, object]]] = Registry("model", {
    "lr": ("ranking.models.pairwise_lr:PairwiseLR", {}),
    "lambdamart": ("ranking.models.lambdamart:LambdaMART", {}),
    "tmlp-lambdaloss": ("ranking.models.tmlp:TMLPRanker", {"loss": "lambdaloss"}),
    "tmlp-neuralndcg": ("ranking.models.tmlp:TMLPRanker", {"loss": "neuralndcg"}),
    "original": ("ranking.models.baselines:OriginalOrder", {}),
    "f4": ("ranking.models.baselines:ColumnScore", {}),
    "f4-first": ("ranking.models.baselines:F4First", {}),
})

#: models that learn from labels (the rest are fixed baselines)
LEARNED_MODELS = ("lr", "tmlp-lambdaloss", "tmlp-neuralndcg", "lambdamart")


def model_names() -> list[str]:
    """Every registered ranker name."""
    return list(_REGISTRY)


def _resolve(name: str) -> tuple[type[Ranker], dict[str, object]]:
    target, fixed = _REGISTRY.lookup(name)
    module_name, class_name = target.split(":")
    return getattr(importlib.import_module(module_name), class_name), dict(fixed)


def make_model(name: str, **params: object) -> Ranker:
    """A new unfitted ranker by registry name; unknown names/params raise ConfigError."""
    cls, fixed = _resolve(name)
    valid = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(params) - valid)
    if unknown:
        raise ConfigError(f"model {name!r}: unknown hyperparameter(s) {unknown}; valid: {sorted(valid)}")
    clash = {k for k in params if k in fixed and params[k] != fixed[k]}
    if clash:
        raise ConfigError(f"model {name!r} fixes {sorted(clash)}; choose another model name instead")
    return cls(**{**params, **fixed})


def load_ranker(path: Path | str) -> Ranker:
    """Load any ranker saved with :meth:`Ranker.save` from its directory."""
    path = Path(path)
    meta_path = path / RANKER_FILE
    if not meta_path.exists():
        raise StoreError(f"{path} is not a saved model (no {RANKER_FILE})")
    try:
        meta = json.loads(meta_path.read_text("utf-8"))
    except json.JSONDecodeError as exc:
        raise SchemaError(f"{meta_path}: not valid JSON ({exc})") from exc
    for key in ("name", "params", "feature_names", "state"):
        if key not in meta:
            raise SchemaError(f"{meta_path}: missing field {key!r}")
    if meta.get("format_version") != FORMAT_VERSION:
        raise SchemaError(f"{meta_path}: unsupported format_version {meta.get('format_version')!r}")
    cls, _ = _resolve(meta["name"])  # only registered classes are ever instantiated
    model = cls(**meta["params"])
    model.feature_names_ = list(meta["feature_names"])
    model.n_features_ = len(model.feature_names_)
    model.history_ = list(meta.get("history", []))
    model._restore(path, meta["state"])
    model.fitted_ = True
    return model
