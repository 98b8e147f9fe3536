"""Verdicts that outlive a run: a page verified once is not run again while nothing it depends on changed.

On a phone a page costs tens of seconds of device time, and the same page
recurs across queries' weeks. Its verdict cannot change while these stay the
same, so a verdict (the page's row of execution.jsonl, its trajectory, and
the screens that trajectory names) is stored under two keys:

* the **page key**: the exact step texts stage 2 runs, the query (the judge
  and the dry-run rule read it), the app package the agent launches, the
  credentials handed to the predictor (hashed, never stored), and the
  fingerprint of the agent, judge and knowledge (:func:`agent_fingerprint`:
  the source of the ``execution`` package and of the core modules it reads
  screens and text with, the knowledge cards, and the execution settings that
  shape a verdict);
* the **device key**: the device model, the Android version and the version
  of the page's app, as the device reports them; for a simulator, its world
  file (which holds those facts; its name and content) and the simulator's
  code, which is its "firmware".

A new run looks its pages up before any device is opened: a hit is recorded
as a row marked ``reused`` with the date it was verified, its trajectory is
appended to the run's trajectories.jsonl and its screens are written to the
run's screen store, so the report and the features read it as any other.
A simulator's identity comes from its world file; a phone's is read once per
run (``getprop`` and ``dumpsys package``), and only when some page of the run
has a stored verdict.

What is never stored: pages that did not run (skipped, ``device_failed``),
trajectories that stopped on a device error, pages whose settings could not
be restored, and runs whose predictor or judge was built outside the config
(the fingerprint cannot describe them). A verdict older than
``execution.verdict_max_age_days`` is not reused; ``--no-reuse`` runs every
page and stores its verdict anew.

The file is SQLite in WAL mode, shared by the runs (and worker processes) of
a user. Like the vector cache it must never fail a run: a file that cannot
be opened, read or written turns it off for the run, with one warning.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import sqlite3
import threading
import zlib
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

from pydantic import ValidationError

from verirank_core.config import RunConfig
from verirank_core.device import Device, DeviceInfo
from verirank_core.errors import DeviceError, SchemaError, VerirankError
from verirank_core.execution_records import ExecutionResult, ExecutionStatus, StopReason, Trajectory
from verirank_core.store import atomic_write_bytes, close_quietly, connect_shared_sqlite, read_jsonl
from verirank_core.trajectories import TRAJECTORIES_FILE, RunTrajectories

if TYPE_CHECKING:
    from execution.jobs import Job

__all__ = ["VERDICT_CACHE_ENV", "DeviceIdentity", "VerdictCache", "VerdictReuse", "agent_fingerprint",
           "sim_identity", "verdict_cache_path", "StoredVerdict"]

log = logging.getLogger(__name__)

#: overrides ``execution.verdict_cache``: a path, or ``off`` (the test suite sets it off)
VERDICT_CACHE_ENV = "VERIRANK_VERDICT_CACHE"

_ROOT = Path(__file__).resolve().parents[1]
#: the code a verdict depends on besides the execution package itself (relative to the checkout)
_CORE_FILES = ("verirank_core/device.py", "verirank_core/embed.py", "verirank_core/text.py",
               "verirank_core/screens.py", "verirank_core/isolation.py", "verirank_core/execution_config.py",
               "verirank_core/execution_records.py")
#: execution settings that change how fast or where pages run, or whether verdicts are reused, not
#: what a verdict says (as ``ExecuteStage.fingerprint`` leaves them out of the stage's fingerprint)
_NOT_VERDICT = {"devices", "executor", "process_min_pages", "ray_address", "ray_num_cpus", "max_attempts",
                "vector_cache", "vector_cache_max_texts", "verdict_cache", "reuse", "verdict_max_age_days"}
#: adb settings that change how a device is reached, not what it shows
_TRANSPORT = {"adb_host", "adb_port", "timeout_s"}
#: the screen files a trajectory names, as the screen store writes them
_SCREEN_NAME = re.compile(r"^screens/[A-Za-z0-9_-]+\.[a-z]{2,5}$")


def _sha(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def _files_digest(files: Iterable[Path], root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(set(files)):
        h.update(str(path.relative_to(root) if path.is_relative_to(root) else path).encode("utf-8") + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


@lru_cache(maxsize=4)
def _code_digest(package: str) -> str:
    """The source of a package of this checkout (``execution``, ``phonesim``), with the core modules it reads.

    This module is left out: it decides how verdicts are kept, not what they say (a stored row
    that no longer parses is a miss)."""
    files = [p for p in (_ROOT / package).rglob("*.py") if p != Path(__file__).resolve()]
    if package == "execution":
        files += [_ROOT / name for name in _CORE_FILES if (_ROOT / name).is_file()]
    return _files_digest(files, _ROOT)


def _path_digest(setting: Optional[str]) -> Optional[str]:
    """A knowledge or UI-map setting: a file by its bytes, a folder by its files' names, sizes and times."""
    if not setting:
        return None
    path = Path(setting).expanduser()
    if path.is_file():
        return hashlib.sha256(path.read_bytes()).hexdigest()
    if path.is_dir():
        return _sha(sorted((str(p.relative_to(path)), p.stat().st_size, p.stat().st_mtime_ns)
                           for p in path.rglob("*") if p.is_file()))
    try:  # a world name
        from phonesim.world import resolve_world

        return hashlib.sha256(resolve_world(setting).read_bytes()).hexdigest()
    except (VerirankError, OSError):
        return f"unresolved:{setting}"


def agent_fingerprint(config: RunConfig) -> str:
    """What the agent, judge and knowledge are: their code, the knowledge cards, and the settings
    that shape a verdict (the execution settings but the scheduling and transport ones, and the
    LLM's when one predicts or judges)."""
    from verirank_core.resources import KNOWLEDGE_DIR

    execution = config.execution.model_dump(mode="json", exclude=_NOT_VERDICT)
    execution["adb"] = {k: v for k, v in execution["adb"].items() if k not in _TRANSPORT}
    uses_llm = "llm" in (config.execution.predictor, config.execution.judge)
    settings = {"execution": execution,
                "llm": config.llm.model_dump(mode="json", exclude={"cache_path"}) if uses_llm else None}
    cards = list(Path(KNOWLEDGE_DIR).rglob("*.json")) if Path(KNOWLEDGE_DIR).is_dir() else []
    agent = config.execution.agent
    return _sha({
        "code": _code_digest("execution"),
        "cards": _files_digest(cards, Path(KNOWLEDGE_DIR)) if cards else None,
        "knowledge": _path_digest(agent.knowledge), "ui_map": _path_digest(agent.ui_map),
        "settings": settings,
    })


@dataclass(frozen=True)
class DeviceIdentity:
    """A device as a verdict depends on it: what it reports about itself and the page's app."""

    model: Optional[str]
    os_version: Optional[str]
    app: Optional[str]
    app_version: Optional[str]
    #: a simulator: its world file's name, and a digest of that file and the simulator's code (the
    #: file holds the model and versions, so those fields stay None)
    world: Optional[str] = None
    world_digest: Optional[str] = None

    def key(self) -> str:
        return _sha(asdict(self))

    @classmethod
    def of_info(cls, info: DeviceInfo, app: Optional[str]) -> "DeviceIdentity":
        """As ``run_episode`` records it: the app's version only when the page names a package."""
        return cls(info.model or None, info.os_version or None, app, info.app_versions.get(app) if app else None)


def _world_digest(target: str) -> tuple[str, str]:
    """(file stem, digest) of a world: its file's bytes (an edited world is another device, and the
    file holds the model, the Android version and the apps' versions) and the simulator's code (its
    firmware). Not parsed: a large imported world takes most of a second to load."""
    from phonesim.world import resolve_world

    path = resolve_world(target)
    stat = path.stat()
    return path.stem, _file_digest(str(path), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=64)
def _file_digest(file: str, mtime_ns: int, size: int) -> str:
    """The digest of one version of a world file (an edited file is read again)."""
    return _sha([hashlib.sha256(Path(file).read_bytes()).hexdigest(), _code_digest("phonesim")])


def sim_identity(target: str, app: Optional[str]) -> DeviceIdentity:
    """A ``sim:TARGET`` device's identity, from its world file (no simulator is started)."""
    name, digest = _world_digest(target)
    return DeviceIdentity(None, None, app, None, world=name, world_digest=digest)


def verdict_cache_path(run_dir: Path | str, setting: Optional[str]) -> Optional[Path]:
    """``execution.verdict_cache`` (or ``$VERIRANK_VERDICT_CACHE``) resolved; None: off."""
    env = os.environ.get(VERDICT_CACHE_ENV)
    if env is not None:
        setting = None if env.strip().lower() in ("", "off", "none", "null", "0") else env
    if not setting:
        return None
    path = Path(setting).expanduser()
    return path if path.is_absolute() else Path(run_dir) / path


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)


@dataclass(frozen=True)
class StoredVerdict:
    row: dict[str, Any]
    trajectory: dict[str, Any]
    verified_at: str


class VerdictCache:
    """Verdicts by (page key, device key), and the screens their trajectories name, in one SQLite file."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: Optional[sqlite3.Connection] = None
        try:
            self._conn = connect_shared_sqlite(self.path, (
                "CREATE TABLE IF NOT EXISTS verdicts ("
                " page_key TEXT NOT NULL, device_key TEXT NOT NULL, verified_at TEXT NOT NULL,"
                " identity TEXT NOT NULL, row TEXT NOT NULL, trajectory BLOB NOT NULL,"
                " PRIMARY KEY (page_key, device_key))"))
            self._conn.execute("CREATE TABLE IF NOT EXISTS screens (name TEXT PRIMARY KEY, data BLOB NOT NULL)")
            self._conn.commit()
        except (OSError, sqlite3.Error) as exc:
            self._disable(f"cannot open {self.path}: {exc}")

    @property
    def active(self) -> bool:
        return self._conn is not None

    def has_any(self, page_keys: Iterable[str]) -> bool:
        """Whether any of these pages has a stored verdict (on any device)."""
        keys = list(dict.fromkeys(page_keys))
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            row = self._read(f"SELECT 1 FROM verdicts WHERE page_key IN ({','.join('?' * len(chunk))}) LIMIT 1",
                             chunk)
            if row:
                return True
        return False

    def lookup(self, page_key: str, device_keys: list[str], not_before: str = "") -> Optional[StoredVerdict]:
        """The newest verdict of the page on one of these devices, made at ``not_before`` or later."""
        if not device_keys:
            return None
        rows = self._read(
            f"SELECT row, trajectory, verified_at FROM verdicts WHERE page_key = ? AND device_key IN "
            f"({','.join('?' * len(device_keys))}) AND verified_at >= ? ORDER BY verified_at DESC LIMIT 1",
            [page_key, *device_keys, not_before])
        if not rows:
            return None
        row, trajectory, verified_at = rows[0]
        try:
            return StoredVerdict(json.loads(row), json.loads(zlib.decompress(trajectory)), verified_at)
        except (ValueError, zlib.error):
            return None  # not written by this code: a miss

    def screen(self, name: str) -> Optional[bytes]:
        rows = self._read("SELECT data FROM screens WHERE name = ?", [name])
        try:
            return zlib.decompress(rows[0][0]) if rows else None
        except zlib.error:
            return None

    def put_many(self, entries: list[tuple[str, DeviceIdentity, dict[str, Any], bytes, dict[str, bytes]]],
                 verified_at: str) -> int:
        """Store (page key, device, row, trajectory JSON, screens) entries; a newer verdict replaces an older one."""
        if not entries:
            return 0
        with self._lock:
            if self._conn is None:
                return 0
            try:
                with self._conn:  # one transaction
                    for page_key, identity, row, trajectory, screens in entries:
                        self._conn.executemany("INSERT OR IGNORE INTO screens VALUES (?, ?)",
                                               [(n, zlib.compress(d, 6)) for n, d in screens.items()])
                        self._conn.execute(
                            "INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?, ?, ?)",
                            (page_key, identity.key(), verified_at, json.dumps(asdict(identity)),
                             json.dumps(row), zlib.compress(trajectory, 6)))
                return len(entries)
            except sqlite3.Error as exc:
                self._disable(f"cannot write {self.path}: {exc}")
                return 0

    def __len__(self) -> int:
        rows = self._read("SELECT COUNT(*) FROM verdicts", [])
        return rows[0][0] if rows else 0

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _read(self, sql: str, params: list[Any]) -> list[tuple]:
        with self._lock:
            if self._conn is None:
                return []
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                self._disable(f"cannot read {self.path}: {exc}")
                return []

    def _disable(self, why: str) -> None:
        log.warning("verdict cache off for this run: %s", why)
        close_quietly(self._conn)
        self._conn = None


def _screen_names(trajectory: dict[str, Any]) -> list[str]:
    names = [trajectory.get("final_xml"), trajectory.get("final_screenshot")]
    for step in trajectory.get("steps") or []:
        names += [step.get("xml"), step.get("screenshot")]
    return [n for n in dict.fromkeys(names) if isinstance(n, str)]


class VerdictReuse:
    """The verdict cache as one run of stage 2 uses it: :meth:`take` before the pool, :meth:`store` after."""

    def __init__(self, cache: VerdictCache, run_dir: Path, config: RunConfig,
                 opener: Callable[[str], Device], route: Callable[[str, Job, bool], str]):
        self.cache = cache
        self.run_dir = Path(run_dir)
        self.config = config
        #: opens a device spec (asked for a phone's identity); the device spec a page goes to from a slot's
        self.opener, self.route = opener, route
        self.agent = agent_fingerprint(config)
        #: adb spec -> what the phone said about itself this run (None: it did not answer)
        self._phones: dict[str, Optional[DeviceInfo]] = {}

    @classmethod
    def open(cls, run_dir: Path | str, config: RunConfig, *, opener: Callable[[str], Any],
             route: Callable[[str, Any, bool], str], injected: bool = False) -> Optional["VerdictReuse"]:
        """The run's verdict cache, or None: off, or the predictor/judge were built outside the config
        (``injected``), which no fingerprint describes."""
        path = verdict_cache_path(run_dir, config.execution.verdict_cache)
        if path is None or injected:
            return None
        cache = VerdictCache(path)
        return cls(cache, Path(run_dir), config, opener, route) if cache.active else None

    # --- keys

    def page_key(self, job: Job) -> str:
        # the credentials the predictor is given (``execution.credentials_env``), as the runner reads them
        env = self.config.execution.credentials_env
        credentials = _sha({name: os.environ.get(var) for name, var in sorted(env.items())})
        return _sha({"steps": list(job.instructions), "query": job.query, "app": job.app,
                     "credentials": credentials, "agent": self.agent})

    def _identities(self, job: Job, apps: tuple[str, ...]) -> list[DeviceIdentity]:
        """The devices of this run the page may be sent to, as verdicts know them."""
        out: list[DeviceIdentity] = []
        for base in dict.fromkeys(self.config.execution.devices):
            spec = self.route(base, job, self.config.execution.route_by_world)
            try:
                if spec.startswith("sim:"):
                    out.append(sim_identity(spec[4:], job.app))
                else:
                    info = self._phone(spec, apps)
                    if info is not None:
                        out.append(DeviceIdentity.of_info(info, job.app))
            except (VerirankError, OSError) as exc:  # the pool reports a bad spec when it opens it
                log.info("verdict cache: cannot tell what %s is: %s", spec, exc)
        return out

    def _phone(self, spec: str, apps: tuple[str, ...]) -> Optional[DeviceInfo]:
        """A phone's identity, asked once a run (the only device call reuse makes)."""
        if spec not in self._phones:
            device = None
            try:
                device = self.opener(spec)
                self._phones[spec] = device.info(apps)
            except (DeviceError, VerirankError, OSError) as exc:
                log.warning("verdict cache: %s did not say what it is (%s); its pages run", spec, exc)
                self._phones[spec] = None
            finally:
                if device is not None:
                    try:
                        device.close()
                    except Exception:
                        pass
        return self._phones[spec]

    # --- before the pool

    def take(self, jobs: list[Job]) -> tuple[list[tuple[ExecutionResult, Trajectory]], list[Job]]:
        """(the rows and trajectories of the pages answered from the cache, the jobs left to run)."""
        if not self.config.execution.reuse or not jobs:
            return [], jobs
        keys = {job.key: self.page_key(job) for job in jobs}
        if not self.cache.has_any(keys.values()):
            return [], jobs
        days = self.config.execution.verdict_max_age_days
        not_before = "" if days is None else (_now() - timedelta(days=days)).isoformat()
        apps = tuple(sorted({job.app for job in jobs if job.app}))
        reused, left = [], []
        for job in jobs:
            devices = [i.key() for i in self._identities(job, apps)]
            stored = self.cache.lookup(keys[job.key], devices, not_before) if devices else None
            page = self._reuse(job, stored) if stored is not None else None
            if page is None:
                left.append(job)
            else:
                reused.append(page)
        return reused, left

    def _reuse(self, job: Job, stored: StoredVerdict) -> Optional[tuple[ExecutionResult, Trajectory]]:
        """The stored verdict as this run's page, its screens written to the run; None if it is incomplete."""
        row = dict(stored.row, qid=job.qid, url=job.url, rank=job.rank, attempts=0, elapsed_s=0.0,
                   reused=True, verified_at=stored.verified_at, trajectory=TRAJECTORIES_FILE)
        data = dict(stored.trajectory, qid=job.qid, url=job.url)
        try:
            result, trajectory = ExecutionResult.parse(row), Trajectory.model_validate(data)
        except (ValidationError, SchemaError):
            return None  # stored by another version of the records
        for name in _screen_names(data):
            if not _SCREEN_NAME.match(name):
                return None  # only names of the run's screen store are ever stored
            target = self.run_dir / name
            if target.is_file():
                continue
            blob = self.cache.screen(name)
            if blob is None:
                return None
            atomic_write_bytes(target, blob, durable=False)
        return result, trajectory

    # --- after the pool

    def store(self, jobs: Iterable[Job]) -> int:
        """Store the verdicts of the pages this run sent to its devices (``jobs``); returns how many."""
        by_key = {job.key: job for job in jobs}
        wanted = set(by_key)
        if not wanted:
            return 0
        path = self.run_dir / "execution.jsonl"
        rows = [r for r in read_jsonl(path, ExecutionResult) if r.key() in wanted] if path.exists() else []
        trajectories = RunTrajectories(self.run_dir)
        entries = []
        for row in rows:
            job = by_key.get(row.key())
            if (job is None or row.status != ExecutionStatus.EXECUTED or row.reused or row.settings_unrestored
                    or row.stop_reason == StopReason.DEVICE_ERROR or not row.device):
                continue
            entry = self._entry(job, row, trajectories)
            if entry is not None:
                entries.append(entry)
        return self.cache.put_many(entries, _now().isoformat())

    def _entry(self, job: Job, row: ExecutionResult, trajectories: RunTrajectories) -> Optional[tuple]:
        try:
            data = trajectories.data(row)
            if row.device.startswith("sim:"):
                identity = sim_identity(row.device[4:], row.app)
            else:
                identity = DeviceIdentity(row.device_model, row.os_version, row.app, row.app_version)
        except (VerirankError, OSError) as exc:
            log.info("verdict cache: %s not stored: %s", row.url, exc)
            return None
        if data is None:
            return None
        screens: dict[str, bytes] = {}
        folder = trajectories.folder_of(row) or self.run_dir
        for name in _screen_names(data):
            if not _SCREEN_NAME.match(name):
                return None  # not in the run's screen store (a run made with a folder per page)
            try:
                screens[name] = (folder / name).read_bytes()
            except OSError:
                return None  # a trajectory without its screens is not worth keeping
        stored_row = row.model_dump(mode="json", exclude={"reused", "verified_at"})
        return (self.page_key(job), identity, stored_row, json.dumps(data).encode("utf-8"), screens)

    def close(self) -> None:
        self.cache.close()

