"""The LightGBM lambdarank LETOR fixture (../shared), loaded once per process."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from ranking.svmlight import LTRData, load_svmlight

LETOR_DIR = Path("fixtures") / "letor" / "lightgbm-lambdarank"


@functools.lru_cache(maxsize=None)
def _load(shared: str) -> tuple[LTRData, LTRData]:
    folder = Path(shared) / LETOR_DIR
    train = load_svmlight(folder / "rank.train", folder / "rank.train.query")
    test = load_svmlight(folder / "rank.test", folder / "rank.test.query", n_features=train.X.shape[1])
    return train, test


def letor(shared_dir: Path) -> tuple[LTRData, LTRData]:
    """(train, test) of the fixture; callers must not modify the arrays."""
    return _load(str(shared_dir))


def first_queries(data: LTRData, n: int) -> LTRData:
    """The rows of the first ``n`` queries (a small, fast subset)."""
    keep = list(dict.fromkeys(data.qids.tolist()))[:n]
    return data.subset(np.isin(data.qids, keep))


def letor_paths(shared_dir: Path) -> dict[str, Path]:
    folder = Path(shared_dir) / LETOR_DIR
    return {name: folder / name for name in ("rank.train", "rank.train.query", "rank.test", "rank.test.query")}
