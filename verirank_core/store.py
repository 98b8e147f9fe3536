"""The run directory: every stage's output plus a manifest.

Layout of ``DIR`` (each file is documented in the README)::

    DIR/manifest.json        resolved config, package versions, git sha, stage log
    DIR/queries.jsonl        stage 1 input, normalised
    DIR/serp.jsonl           search results (original ranking)
    DIR/pages.jsonl          one fetch record per (qid, url)
    DIR/extraction.jsonl     one extraction record per (qid, url)
    DIR/execution.jsonl      one execution record per (qid, url)
    DIR/trajectories.jsonl   one trajectory per executed page (the last line of a key wins)
    DIR/screens/             the screens the trajectories name, one file per distinct screen
    DIR/features.parquet     one feature row per (qid, url)

Only this module knows file formats. JSONL files are appended one whole line
per ``write()`` and flushed; a line torn by a kill is dropped on the next
open, so a resumed stage neither loses nor duplicates an item. Whole-file
outputs are written to a temporary file and renamed into place.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Optional, TypeVar

from verirank_core.errors import SchemaError, StoreError
from verirank_core.json_types import JSONObject, JSONValue
from verirank_core.records import Record

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

R = TypeVar("R", bound=Record)

# read once: os.umask can only be read by setting it, which is not thread-safe
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Write ``data`` to ``path`` so readers see the old or the new file, never half.

    ``durable``: fsync the data before the rename, so that a power cut leaves
    the old file or the whole new one. Without it a killed process still
    leaves one or the other, but a power cut may leave an empty file: for
    files written in bulk whose loss a resumed stage detects (two processes'
    fsyncs queue for one journal).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp creates 0600; give the file the permissions a plain open() would
        os.chmod(tmp, 0o666 & ~_UMASK)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def atomic_write_text(path: Path, text: str, *, durable: bool = True) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), durable=durable)


def atomic_write_json(path: Path, obj: object, *, compact: bool = False, durable: bool = True) -> None:
    """``obj`` as JSON, sorted keys; indented for people to read, or ``compact`` for files written
    per item in bulk (json's fast encoder only runs without an indent: 3 ms a trajectory)."""
    text = (json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":")) if compact
            else json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=True))
    atomic_write_text(path, text + "\n", durable=durable)


def close_quietly(conn: Optional[sqlite3.Connection]) -> None:
    """Close a cache's connection when turning the cache off; a close that fails changes nothing then."""
    if conn is not None:
        try:
            conn.close()
        except sqlite3.Error:
            pass


#: tries to open a shared SQLite file that another process is opening at the same moment
_OPEN_ATTEMPTS = 20


def connect_shared_sqlite(path: Path, schema: str) -> sqlite3.Connection:
    """Open (or create, with ``schema``) an SQLite file that threads and processes use at once.

    One connection serves every thread of a process (callers hold a lock);
    WAL mode lets other processes read while one writes, and a writer waits
    up to 30 s for another. Raises OSError or sqlite3.Error for callers to word.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    attempt = 0
    while True:
        attempt += 1
        conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(schema)
            conn.commit()
            return conn
        except sqlite3.Error as exc:
            conn.close()
            # two processes opening a new file at once: SQLite answers one of them "locked" at once,
            # without waiting (each would wait for the other), so that one opens it again
            if "locked" not in str(exc) or attempt == _OPEN_ATTEMPTS:
                raise
            time.sleep(0.02 * attempt)


def _repair_torn_tail(path: Path) -> None:
    """Cut a final line that has no newline (a write interrupted by a kill)."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as fh:
        fh.seek(-1, os.SEEK_END)
        if fh.read(1) == b"\n":
            return
        fh.seek(0)
        data = fh.read()
        cut = data.rfind(b"\n") + 1
        fh.truncate(cut)


def read_jsonl(path: Path, record_type: type[R]) -> list[R]:
    """Read and validate every line of a JSONL file (torn last line ignored)."""
    return list(iter_jsonl(path, record_type))


def iter_jsonl(path: Path, record_type: type[R]) -> Iterator[R]:
    path = Path(path)
    if not path.exists():
        raise StoreError(f"{path} does not exist")
    with open(path, "rb") as fh:
        lines = fh.read().split(b"\n")
    # a final chunk without newline is a torn write (or an empty string)
    for lineno, raw in enumerate(lines[:-1], start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise SchemaError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from exc
        yield record_type.parse(data, where=f"{path}:{lineno}")
    tail = lines[-1].strip()
    if tail:
        # a file written by another tool may lack the final newline
        try:
            data = json.loads(tail)
        except json.JSONDecodeError:
            return
        yield record_type.parse(data, where=f"{path}:{len(lines)}")


def write_jsonl(path: Path, records: Iterable[Record]) -> int:
    """Atomically replace ``path`` with ``records``; returns the count."""
    lines = [json_line(r) for r in records]
    atomic_write_bytes(Path(path), b"".join(lines))
    return len(lines)


class LineLog:
    """Append whole lines to a file: flushed at once, fsynced at most every ``fsync_interval_s``.

    The file under every ``*.jsonl`` a stage appends to. Thread-safe. Each line
    is one ``write()`` flushed to the OS, so a killed process loses nothing; a
    power cut loses at most the last second of lines (an fsync per line cost
    about 0.5 ms, a tenth of a simulated page). A line torn by a kill is cut
    when the file is opened again.
    """

    def __init__(self, path: Path, fsync_interval_s: float = 1.0):
        self.path = Path(path)
        self.fsync_interval_s = fsync_interval_s
        self._synced = float("-inf")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _repair_torn_tail(self.path)
        self._lock = threading.Lock()
        self._fh = open(self.path, "ab")

    def append(self, line: bytes) -> None:
        """Write ``line``, which ends with a newline and holds no other."""
        with self._lock:
            self._write(line)

    def _write(self, line: bytes) -> None:  # the caller holds the lock
        self._fh.write(line)
        self._fh.flush()
        now = time.monotonic()
        if now - self._synced >= self.fsync_interval_s:
            os.fsync(self._fh.fileno())
            self._synced = now

    def close(self) -> None:
        with self._lock:
            if not self._fh.closed:
                self._fh.flush()
                os.fsync(self._fh.fileno())
                self._fh.close()

    def __enter__(self) -> "LineLog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class JsonlAppender(LineLog):
    """Append records one whole line at a time (see :class:`LineLog`), and know which keys are done.

    Thread-safe, so a pool of workers can share one appender.
    """

    def __init__(self, path: Path, record_type: type[R], fsync_interval_s: float = 1.0,
                 keep: Optional[Callable[[R], bool]] = None):
        """``keep(record)`` false for a stored record: its item is not done after all (e.g. a file
        it names did not survive a power cut); the record is removed, so the item runs again."""
        path = Path(path)
        self.record_type = record_type
        _repair_torn_tail(path)
        self._done: set[tuple] = set()
        if path.exists():
            stored = list(iter_jsonl(path, record_type))
            kept = [rec for rec in stored if keep is None or keep(rec)]
            if len(kept) < len(stored):
                log.warning("%s: %d record(s) name files that are missing or broken; their items run again",
                            path, len(stored) - len(kept))
                write_jsonl(path, kept)
            self._done = {rec.key() for rec in kept}
        super().__init__(path, fsync_interval_s)

    def done(self, key: tuple) -> bool:
        return key in self._done

    @property
    def n_done(self) -> int:
        return len(self._done)

    def append(self, record: Record) -> bool:  # type: ignore[override]
        """Write ``record`` unless its key is already stored; returns True if written."""
        return self.append_line(record.key(), json_line(record))

    def append_line(self, key: tuple, line: bytes) -> bool:
        """Write a record already serialised by :func:`json_line` (by the worker that made it),
        unless ``key`` is already stored; returns True if written."""
        with self._lock:
            if key in self._done:
                return False
            self._write(line)
            self._done.add(key)
            return True

    def __enter__(self) -> "JsonlAppender":
        return self


def json_line(record: Record) -> bytes:
    """``record`` as one line of a JSONL file, as :func:`write_jsonl` and the appenders write it."""
    return (json.dumps(record.to_json_dict(), ensure_ascii=False) + "\n").encode("utf-8")


def write_parquet(path: Path, frame: pd.DataFrame) -> None:
    """Atomically write a pandas DataFrame as Parquet."""
    import io

    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    atomic_write_bytes(Path(path), buf.getvalue())


def read_parquet(path: Path) -> pd.DataFrame:
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise StoreError(f"{path} does not exist")
    return pd.read_parquet(path)


# --- the run directory -------------------------------------------------------

MANIFEST = "manifest.json"
_PACKAGES = (
    "verirank", "torch", "sentence-transformers", "faiss-cpu", "lxml", "openai",
    "adbutils", "mlflow", "lightgbm", "allrank", "pandas", "numpy",
)


def package_versions(names: Iterable[str] = _PACKAGES) -> dict[str, str]:
    from importlib import metadata

    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def git_sha(repo: Path | None = None) -> str:
    import subprocess

    repo = repo or Path(__file__).resolve().parent.parent
    try:
        out = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=5, check=True,
        )
        sha = out.stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=5,
        ).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


class RunDir:
    """A run directory: stage outputs plus ``manifest.json``.

    The manifest records the resolved config (secrets never included: the
    config holds only the *names* of environment variables), package versions,
    the git sha and one entry per stage invocation.
    """

    def __init__(self, path: Path | str):
        self.path = Path(path)

    def __truediv__(self, name: str) -> Path:
        return self.path / name

    def ensure(self) -> "RunDir":
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create run directory {self.path}: {exc}") from exc
        return self

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    def read_manifest(self) -> JSONObject:
        if not self.manifest_path.exists():
            return {}
        try:
            return json.loads(self.manifest_path.read_text("utf-8"))
        except json.JSONDecodeError as exc:
            raise StoreError(f"{self.manifest_path} is not valid JSON: {exc}") from exc

    def start_stage(self, stage: str, config: JSONObject, **extra: JSONValue) -> None:
        """Record the resolved config before any work of ``stage`` starts (``extra``: more fields of the entry)."""
        import datetime as _dt

        self.ensure()
        manifest = self.read_manifest()
        manifest["config"] = config
        manifest["packages"] = package_versions()
        manifest["git_sha"] = git_sha()
        manifest.setdefault("stages", []).append(
            {"stage": stage, **extra, "started": _dt.datetime.now(_dt.timezone.utc).isoformat()}
        )
        atomic_write_json(self.manifest_path, manifest)

    def finish_stage(self, stage: str, counts: JSONObject, **extra: JSONValue) -> None:
        import datetime as _dt

        manifest = self.read_manifest()
        for entry in reversed(manifest.get("stages", [])):
            if entry.get("stage") == stage and "finished" not in entry:
                entry["finished"] = _dt.datetime.now(_dt.timezone.utc).isoformat()
                entry["counts"] = counts
                entry.update(extra)
                break
        atomic_write_json(self.manifest_path, manifest)


def count_lines(path: Path) -> int:
    """Non-blank lines of a JSONL file (0 when it does not exist), e.g. for a progress bar's total."""
    if not Path(path).exists():
        return 0
    with open(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())


def read_json(path: Path) -> JSONValue:
    """Read one JSON document; a missing or broken file is a StoreError naming it."""
    path = Path(path)
    try:
        return json.loads(path.read_text("utf-8"))
    except FileNotFoundError as exc:
        raise StoreError(f"{path} does not exist") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StoreError(f"{path} is not valid JSON: {exc}") from exc
