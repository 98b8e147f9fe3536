"""Rerank each query's result list: verified pages first, ordered by a model's score.

Semantics of the default order ``verified-first``:

* verified pages come first, by model score descending; equal scores keep
  the original (search engine) order;
* every other page follows, in its original relative order (its score is
  reported but not used);

so reranking never moves an unverified page above a verified one, and never
reorders pages that execution could not vouch for. The ``score`` order ranks
every page by score (ties: original order), i.e. plain learning-to-rank.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional, Protocol

import numpy as np

from ranking.features import feature_columns
from ranking.order import positions
from verirank_core.config import RunConfig
from verirank_core.errors import RankingError, SchemaError, StoreError

if TYPE_CHECKING:
    import pandas as pd

    from ranking.models.base import Ranker
    from verirank_core.ranking_records import RankedItem

__all__ = ["ORDERS", "BASELINES", "rerank", "score_with_model", "baseline_ranker", "model_feature_names", "load_model",
           "rerank_run"]

ORDERS: tuple[str, ...] = ("verified-first", "score")
#: the registered rankers that learn nothing (ranking/models/baselines.py)
BASELINES: tuple[str, ...] = ("original", "f4", "f4-first")


class Scorer(Protocol):
    """What reranking needs of a model: ``predict(X[, groups][, feature_names=])`` -> one score a row.

    A fitted :class:`Ranker` is one; ``feature_names_`` (or ``feature_names``), when present, picks the columns.
    """

    predict: Callable[..., np.ndarray]


def rerank(table: pd.DataFrame, scores: np.ndarray, rule: str = "verified-first") -> pd.DataFrame:
    """A reranked copy of ``table``: one row per page, sorted by qid then new rank.

    Adds ``score`` (the given scores), ``original_rank`` (the table's
    ``rank``) and replaces ``rank`` with the new 1-based rank within the query.
    ``table`` needs columns qid, rank and verified.
    """
    if rule not in ORDERS:
        raise RankingError(f"unknown rerank order {rule!r}; valid: {', '.join(ORDERS)}")
    missing = [c for c in ("qid", "rank", "verified") if c not in table.columns]
    if missing:
        raise SchemaError(f"feature table lacks column(s) {missing}")
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    if len(scores) != len(table):
        raise RankingError(f"{len(scores)} scores for {len(table)} pages")
    if not np.all(np.isfinite(scores)):
        raise RankingError("scores contain NaN or infinity")

    out = table.copy().reset_index(drop=True)
    out["score"] = scores
    out["original_rank"] = out["rank"].astype("int64")
    verified = out["verified"].astype(bool).to_numpy()
    if rule == "verified-first":
        # verified pages by score in tier 0; the rest in tier 1, where only the original rank counts
        tier, key = np.where(verified, 0, 1), np.where(verified, scores, 0.0)
    else:
        tier, key = None, scores
    out["rank"] = positions(out["qid"].to_numpy(), key, out["original_rank"].to_numpy(), tier)
    return out.sort_values(["qid", "rank"], kind="stable").reset_index(drop=True)


def model_feature_names(model: Scorer, table: pd.DataFrame) -> list[str]:
    """The columns the model wants: ``feature_names_`` (fitted rankers), else the table's features."""
    names = getattr(model, "feature_names_", None) or getattr(model, "feature_names", None)
    return list(names) if names else feature_columns(table)


def score_with_model(table: pd.DataFrame, model: Scorer) -> np.ndarray:
    """The model's score per row of ``table`` (float64, same order).

    Columns are passed in the model's ``feature_names_`` order; query ids go
    along as ``groups`` when ``predict`` accepts them (listwise models score a
    query's pages together).
    """
    names = model_feature_names(model, table)
    missing = [n for n in names if n not in table.columns]
    if missing:
        raise SchemaError(
            f"the model needs feature(s) {missing} that the feature table lacks; recompute features "
            f"with --set 'ranking.features.names={names}'"
        )
    X = table[names].to_numpy(dtype=np.float64)
    params = inspect.signature(model.predict).parameters
    kwargs: dict[str, list[str]] = {}
    if "feature_names" in params:
        kwargs["feature_names"] = names
    if "groups" in params:
        scores = model.predict(X, table["qid"].astype(str).to_numpy(dtype=object), **kwargs)
    else:
        scores = model.predict(X, **kwargs)
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    if len(scores) != len(table):
        raise RankingError(f"model returned {len(scores)} scores for {len(table)} rows")
    return scores


def baseline_ranker(name: str, table: pd.DataFrame) -> Ranker:
    """The registered fixed ranker ``name`` (``original``, ``f4``, ``f4-first``), ready to score ``table``.

    They learn nothing: ``fit`` only records the columns, here the table's
    features and its original ``rank``, with no labels (all zero).
    """
    from ranking.models import make_model

    if name not in BASELINES:
        raise RankingError(f"{name!r} is not a fixed ranker; valid: {', '.join(BASELINES)}")
    names = [*feature_columns(table), "rank"]
    X = table[names].to_numpy(dtype=np.float64)
    return make_model(name).fit(X, np.zeros(len(table)), table["qid"].astype(str).to_numpy(dtype=object),
                                feature_names=names)


def load_model(spec: str, tracking_uri: Optional[str] = None) -> Ranker:
    """A fitted ranker from a saved-model directory or an MLflow model URI (``runs:/...``, ``models:/...``).

    MLflow URIs resolve against ``tracking_uri`` (``ranking.tracking_uri``).
    """
    path = Path(spec)
    if path.exists():
        from ranking.models import load_ranker

        return load_ranker(path)
    if ":/" in spec:
        import mlflow

        from ranking import tracking

        if tracking_uri:
            mlflow.set_tracking_uri(tracking_uri)
        return tracking.load_model(spec)
    raise StoreError(f"model {spec!r} is neither a saved-model directory nor an MLflow model URI")


def rerank_run(run_dir: Path | str, config: RunConfig, model: Scorer) -> list[RankedItem]:
    """Rerank a run directory with ``model``; writes ``reranked.jsonl`` and ``reranked.trec``.

    Reads ``features.parquet`` and ``execution.jsonl``. The ``verified``
    column is recomputed from the execution records under the *current*
    ``ranking.verified`` settings, so a rule can be changed without
    recomputing features. Returns the RankedItems written.
    """
    from verirank_core.execution_records import ExecutionResult
    from ranking.export import ranked_items, write_ranked_jsonl, write_trec
    from ranking.verified import verified_map
    from verirank_core.store import read_jsonl, read_parquet

    run_dir = Path(run_dir)
    # the runner has checked that both exist (RerankStage.requires)
    table = read_parquet(run_dir / "features.parquet")
    executions = {r.key(): r for r in read_jsonl(run_dir / "execution.jsonl", ExecutionResult)}
    keys = list(zip(table["qid"], table["url"]))
    verified = verified_map(executions, keys, config.ranking.verified)
    table["verified"] = [verified[k] for k in keys]

    reranked = rerank(table, score_with_model(table, model), config.ranking.rerank.order)
    items = ranked_items(reranked, executions)
    write_ranked_jsonl(run_dir / "reranked.jsonl", items)
    write_trec(run_dir / "reranked.trec", items, tag=config.ranking.rerank.tag)
    return items
