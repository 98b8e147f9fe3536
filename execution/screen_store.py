"""One file per distinct screen: the dumps and screenshots of a run, shared by its pages.

Pages of one run see the same screens again and again (the launcher, the
Settings home, the Display screen...). Stage 2 therefore keeps each dump and
screenshot once, under ``<run>/screens/`` and named by a hash of its bytes,
and a trajectory names the files it saw relative to the folder of the file
that holds it (``screens/3f2a....xml`` from the run's trajectories.jsonl), so
a reader joins that folder and the name.

Why not one file per step: creating a file is the file system's slowest
small operation, and on a busy ext4 it gets slower with every file recently
deleted (the inode allocator skips them one by one). Eight new files a page
took a third of stage 2's CPU time on the benchmark machine, and that kernel
time is what two worker processes could not share (docs/throughput.md).

Two worker processes may store the same new screen at once: each writes its
own temporary file and renames it into place, and the content is the same.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from verirank_core.store import atomic_write_bytes

__all__ = ["ScreenStore", "SCREENS_DIR"]

#: the store's folder under a run directory
SCREENS_DIR = "screens"


class ScreenStore:
    """Content-addressed files under ``root``; :meth:`put` returns the file's path.

    Stage 2 makes one per device slot and run: what it remembers is what this
    run wrote or found, so a file lost before a resumed run is written again.
    """

    def __init__(self, root: Path, remember: int = 100_000):
        self.root = Path(root)
        self.remember = remember
        #: names known to be on disk, so a screen seen before costs no system call
        self._known: set[str] = set()
        self._lock = threading.Lock()
        #: files this store created / found already there (for benchmarks and tests)
        self.written = 0
        self.reused = 0

    def put(self, data: bytes, suffix: str) -> Path:
        """Store ``data`` (unless a file with the same bytes is there) as ``<hash><suffix>``."""
        name = hashlib.blake2b(data, digest_size=16).hexdigest() + suffix
        path = self.root / name
        with self._lock:
            if name in self._known:
                self.reused += 1
                return path
        if path.exists():
            self.reused += 1
        else:
            # a temporary file renamed into place: another process storing the same bytes meanwhile
            # is harmless; no fsync (resume checks that the files a trajectory names are there)
            atomic_write_bytes(path, data, durable=False)
            self.written += 1
        with self._lock:
            if len(self._known) >= self.remember:
                self._known.clear()
            self._known.add(name)
        return path
