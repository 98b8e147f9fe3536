"""Text vectors on disk, shared by the processes of a run and by the runs that name the same file.

Each worker process of stage 2 has its own encoder; without a shared file,
every worker embeds the same control labels again, and a resumed run embeds
everything again. The file is SQLite in WAL mode, so several processes read
and write it at once. A vector is keyed by the model and the exact text.

A cache must never fail a run: a file that cannot be opened, read or written
turns the cache off for this process, with one warning.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from pathlib import Path
from typing import Mapping, Optional, Sequence

import numpy as np

from verirank_core.store import close_quietly, connect_shared_sqlite

log = logging.getLogger(__name__)

#: texts longer than this are page passages, rarely seen twice: not worth the disk
MAX_TEXT_CHARS = 500

#: SQLite takes at most this many parameters in one statement on old builds
_CHUNK = 500


class VectorCache:
    """Float32 vectors of ``dim`` numbers by (model, text), at most ``max_texts`` of them."""

    def __init__(self, path: Path | str, model: str, dim: int, max_texts: int = 100_000):
        self.path = Path(path)
        self.model = model
        self.dim = dim
        self.max_texts = max_texts
        self._lock = threading.Lock()
        self._conn: Optional[sqlite3.Connection] = None
        try:
            self._conn = connect_shared_sqlite(self.path, "CREATE TABLE IF NOT EXISTS vectors ("
                                               " model TEXT NOT NULL, text TEXT NOT NULL, vec BLOB NOT NULL,"
                                               " PRIMARY KEY (model, text))")
            self._conn.execute("PRAGMA synchronous=NORMAL")  # a lost vector is embedded again: no fsync a write
            self._trim()
        except (OSError, sqlite3.Error) as exc:
            self._disable(f"cannot open {self.path}: {exc}")

    @property
    def active(self) -> bool:
        return self._conn is not None

    def get_many(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of those ``texts`` that have one."""
        wanted = [t for t in dict.fromkeys(texts) if len(t) <= MAX_TEXT_CHARS]
        found: dict[str, np.ndarray] = {}
        if not wanted:
            return found
        with self._lock:
            if self._conn is None:
                return found
            try:
                for start in range(0, len(wanted), _CHUNK):
                    chunk = wanted[start:start + _CHUNK]
                    rows = self._conn.execute(
                        f"SELECT text, vec FROM vectors WHERE model = ? AND text IN ({','.join('?' * len(chunk))})",
                        (self.model, *chunk)).fetchall()
                    for text, blob in rows:
                        vec = np.frombuffer(blob, dtype=np.float32)
                        if vec.shape == (self.dim,):  # anything else was not written by this code
                            found[text] = vec
            except sqlite3.Error as exc:
                self._disable(f"cannot read {self.path}: {exc}")
        return found

    def put_many(self, vectors: Mapping[str, np.ndarray]) -> None:
        rows = [(self.model, text, np.asarray(vec, dtype=np.float32).tobytes())
                for text, vec in vectors.items() if len(text) <= MAX_TEXT_CHARS]
        if not rows:
            return
        with self._lock:
            if self._conn is None:
                return
            try:
                # another process may have stored the same text meanwhile: either vector will do
                self._conn.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?, ?)", rows)
                self._conn.commit()
            except sqlite3.Error as exc:
                self._disable(f"cannot write {self.path}: {exc}")

    def __len__(self) -> int:
        with self._lock:
            if self._conn is None:
                return 0
            return self._conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _trim(self) -> None:
        """Keep the newest ``max_texts`` vectors (done when the file is opened, not on every write)."""
        assert self._conn is not None
        count = self._conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
        if count > self.max_texts:
            self._conn.execute("DELETE FROM vectors WHERE rowid IN "
                               "(SELECT rowid FROM vectors ORDER BY rowid LIMIT ?)", (count - self.max_texts,))
            self._conn.commit()

    def _disable(self, why: str) -> None:
        log.warning("vector cache off for this process: %s", why)
        close_quietly(self._conn)
        self._conn = None


#: ``execution.vector_cache`` by default: one file per user, so a run finds the vectors of every
#: earlier run on the machine and a new process need not load the model for them
MACHINE_CACHE = "~/.cache/verirank/vectors.sqlite"
#: moves that default elsewhere (a path; a relative one is under the run) or turns it off ("off")
MACHINE_CACHE_ENV = "VERIRANK_VECTOR_CACHE"


def cache_path_for(run_dir: Path | str, cache_path: Optional[str]) -> Optional[Path]:
    """``execution.vector_cache`` resolved: relative paths are under the run, ``None`` is off.

    The default (:data:`MACHINE_CACHE`) gives way to ``$VERIRANK_VECTOR_CACHE`` when it is set
    (tests and benchmarks keep theirs under the run); a path named in the config always wins.
    """
    if cache_path == MACHINE_CACHE:
        cache_path = os.environ.get(MACHINE_CACHE_ENV, cache_path)
        if cache_path.strip().lower() in ("", "off", "null", "none"):
            return None
    if not cache_path:
        return None
    path = Path(cache_path).expanduser()
    return path if path.is_absolute() else Path(run_dir) / path
