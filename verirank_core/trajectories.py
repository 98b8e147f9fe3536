"""Where a run's trajectories are kept, and how a reader finds the one of a row.

Stage 2 appends each page's :class:`Trajectory` as one line of
``<run>/trajectories.jsonl``. The page's row in execution.jsonl names that
file in its ``trajectory`` field, and the line is the one with the row's
key (qid, url). A page run again (after a kill, or on another device after
a device failure) appends a new line, and the last line of a key is the
page's trajectory; earlier ones are left behind, never read.

Why one file and not one per page: creating a file is the file system's
slowest small operation, and two worker processes creating files in the
same folder take turns on its lock (docs/throughput.md).

Runs made before, and runs imported from MagicWand, keep one file per page
(``trajectories/<qid>/<page>/trajectory.json``), and their rows name that
file; :class:`RunTrajectories` reads both. Screen files named in a
trajectory are relative to the folder of the file that holds it: the run
directory for trajectories.jsonl (``screens/<hash>.xml``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Optional

from verirank_core.errors import SchemaError, StoreError
from verirank_core.execution_records import ExecutionResult, Trajectory
from verirank_core.json_types import JSONObject

__all__ = ["TRAJECTORIES_FILE", "RunTrajectories"]

#: the file of a run's trajectories, relative to the run directory
TRAJECTORIES_FILE = "trajectories.jsonl"


class RunTrajectories:
    """The trajectories of one run directory, read on demand.

    Each trajectories file is scanned once, on first use, for where each
    key's last line is; a trajectory is then read with one seek.
    """

    def __init__(self, run_dir: Path | str):
        self.run_dir = Path(run_dir)
        #: file -> key -> (offset, length) of the key's last whole line
        self._index: dict[Path, dict[tuple[str, str], tuple[int, int]]] = {}

    def file_of(self, execution: ExecutionResult) -> Optional[Path]:
        """The file the row names, or None when it names none (a page that did not run)."""
        return self.run_dir / execution.trajectory if execution.trajectory else None

    def folder_of(self, execution: ExecutionResult) -> Optional[Path]:
        """The folder the trajectory's screen names are relative to."""
        path = self.file_of(execution)
        return path.parent if path is not None else None

    def data(self, execution: ExecutionResult) -> Optional[JSONObject]:
        """The row's trajectory as stored (a JSON object), or None when the row names none.

        Raises StoreError when the file, or its line for the row, is missing,
        and SchemaError when what is there is not a trajectory of this row.
        """
        path = self.file_of(execution)
        if path is None:
            return None
        key = (execution.qid, execution.url)
        if path.suffix == ".jsonl":
            where = self._where(path)
            if key not in where:
                raise StoreError(f"{path} has no trajectory for ({execution.qid}, {execution.url})")
            offset, length = where[key]
            with open(path, "rb") as fh:
                fh.seek(offset)
                raw = fh.read(length)
            label = f"{path} at byte {offset}"
        else:
            try:
                raw = path.read_bytes()
            except FileNotFoundError as exc:
                raise StoreError(f"trajectory {path} of ({execution.qid}, {execution.url}) "
                                 "named in execution.jsonl does not exist") from exc
            except OSError as exc:
                raise StoreError(f"cannot read {path}: {exc}") from exc
            label = str(path)
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise SchemaError(f"{label}: not valid JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise SchemaError(f"{label}: a trajectory is a JSON object, found {type(data).__name__}")
        if (data.get("qid"), data.get("url")) != key:
            raise SchemaError(f"{label}: trajectory is for ({data.get('qid')}, {data.get('url')}), "
                              f"expected ({execution.qid}, {execution.url})")
        return data

    def load(self, execution: ExecutionResult) -> Optional[Trajectory]:
        """The row's :class:`Trajectory` (None when it names none); errors as :meth:`data`."""
        data = self.data(execution)
        if data is None:
            return None
        return Trajectory.parse(data, where=f"trajectory of ({execution.qid}, {execution.url})")

    def _where(self, path: Path) -> dict[tuple[str, str], tuple[int, int]]:
        if path not in self._index:
            self._index[path] = _scan(path)
        return self._index[path]


#: how stage 2 writes a trajectory line (pydantic's JSON writer, fields in order): the key comes first,
#: so a scan reads it without parsing the rest of a 10-30 kB line
_KEY_PREFIX = re.compile(rb'^\{"qid":("(?:[^"\\]|\\.)*"),"url":("(?:[^"\\]|\\.)*"),')


def _key_of(line: bytes) -> Optional[tuple[str, str]]:
    """A whole line's (qid, url), or None when the line is not a JSON object (torn, zeros...)."""
    match = _KEY_PREFIX.match(line)
    if match is not None and line.rstrip().endswith(b"}"):
        try:
            return json.loads(match.group(1)), json.loads(match.group(2))
        except ValueError:
            pass
    try:
        data = json.loads(line)  # written another way: read it all
    except ValueError:
        return None
    return (data.get("qid"), data.get("url")) if isinstance(data, dict) else None


def _scan(path: Path) -> dict[tuple[str, str], tuple[int, int]]:
    """Offset and length of each key's last whole line; a torn or broken line is no trajectory."""
    where: dict[tuple[str, str], tuple[int, int]] = {}
    try:
        fh = open(path, "rb")
    except FileNotFoundError as exc:
        raise StoreError(f"{path} does not exist") from exc
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc}") from exc
    with fh:
        offset = 0
        for line in fh:
            if line.endswith(b"\n"):
                key = _key_of(line)
                if key is not None:
                    where[key] = (offset, len(line))
            offset += len(line)
    return where
