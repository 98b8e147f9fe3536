"""Training data helpers: load LTR data, group rows by query, split by query."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterable, Optional, Sequence

import numpy as np

from ranking.svmlight import LTRData, load_svmlight
from verirank_core.errors import SchemaError

__all__ = ["query_slates", "split_by_query", "load_ltr_data", "frame_to_ltr", "file_sha256"]

#: columns of features.parquet that describe a row but are not features
NON_FEATURE_COLUMNS = ("qid", "url", "rank", "title", "verified", "summary", "label", "relevance")


def query_slates(groups: np.ndarray) -> list[np.ndarray]:
    """Row indices of each query, queries in order of first appearance, rows in order."""
    rows_by_query: dict = {}
    for row, qid in enumerate(np.asarray(groups).tolist()):
        rows_by_query.setdefault(qid, []).append(row)
    return [np.asarray(rows, dtype=np.int64) for rows in rows_by_query.values()]


def split_by_query(groups: np.ndarray, frac: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks ``(train, valid)``: a seeded ``frac`` of the *queries* goes to valid.

    Every row of a query lands on the same side. With two or more queries
    both sides get at least one query.
    """
    if not 0.0 < frac < 1.0:
        raise SchemaError(f"validation fraction must be in (0, 1), got {frac}")
    groups = np.asarray(groups)
    qids = np.unique(groups)
    if len(qids) < 2:
        raise SchemaError(f"cannot split {len(qids)} query into train and validation")
    n_valid = min(max(1, int(round(frac * len(qids)))), len(qids) - 1)
    rng = np.random.default_rng(seed)
    valid_qids = qids[rng.permutation(len(qids))[:n_valid]]
    valid = np.isin(groups, valid_qids)
    return ~valid, valid


def file_sha256(paths: Iterable[Path | str]) -> str:
    """One sha256 over the bytes of every file, in the given order."""
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def load_ltr_data(
    path: Path | str,
    query_file: Path | str | None = None,
    label_column: str = "label",
    n_features: Optional[int] = None,
    feature_columns: Optional[Sequence[str]] = None,
) -> LTRData:
    """Load training/evaluation rows from svmlight (any suffix) or ``.parquet``.

    A parquet file is a ``features.parquet`` with a ``label_column`` added.
    """
    path = Path(path)
    if path.suffix == ".parquet":
        from verirank_core.store import read_parquet

        return frame_to_ltr(read_parquet(path), label_column, feature_columns, where=str(path))
    return load_svmlight(path, query_file=query_file, n_features=n_features)


def frame_to_ltr(
    frame: "object",
    label_column: str = "label",
    feature_columns: Optional[Sequence[str]] = None,
    where: str = "frame",
) -> LTRData:
    """Turn a features frame (one row per (qid, url)) into :class:`LTRData`.

    Feature columns default to the known verirank features (F1..F18 and the
    extras of ``verirank_core.ranking_config.ALL_FEATURES``) present in the frame, else to
    every numeric column that is not a descriptor (qid, url, rank, title,
    verified, label). Rows are ordered by query (first
    appearance) and then by original ``rank``, so row order = original order.
    """
    import pandas as pd

    df: pd.DataFrame = frame  # type: ignore[assignment]
    for column in ("qid", label_column):
        if column not in df.columns:
            raise SchemaError(f"{where}: no {column!r} column (columns: {list(df.columns)[:20]})")
    if feature_columns is None:
        from verirank_core.ranking_config import ALL_FEATURES

        # verirank's own feature tables: exactly the known feature columns, in table order
        feature_columns = [c for c in df.columns if c in ALL_FEATURES]
    if not feature_columns:
        skip = set(NON_FEATURE_COLUMNS) | {label_column}
        feature_columns = [
            c for c in df.columns
            if c not in skip and pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])
        ]
    missing = [c for c in feature_columns if c not in df.columns]
    if missing:
        raise SchemaError(f"{where}: feature columns {missing} are missing")
    if not feature_columns:
        raise SchemaError(f"{where}: no numeric feature columns")
    df = df.copy()
    df["_order"] = df.groupby("qid", sort=False).ngroup()
    sort_keys = ["_order", "rank"] if "rank" in df.columns else ["_order"]
    df = df.sort_values(sort_keys, kind="stable")
    X = df[list(feature_columns)].to_numpy(dtype=np.float64)
    y = df[label_column].to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(X)):
        bad = [c for c in feature_columns if not np.all(np.isfinite(df[c].to_numpy(dtype=np.float64)))]
        raise SchemaError(f"{where}: NaN/inf in feature columns {bad[:10]}")
    if not np.all(np.isfinite(y)):
        raise SchemaError(f"{where}: {label_column!r} has missing values")
    docs = df["url"].astype(str).to_numpy(dtype=object) if "url" in df.columns else None
    return LTRData(X=X, y=y, qids=df["qid"].astype(str).to_numpy(dtype=object),
                   feature_names=[str(c) for c in feature_columns], docs=docs)
