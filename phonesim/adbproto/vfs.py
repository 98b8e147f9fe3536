"""A tiny in-memory file system for the simulated device.

It holds what a real phone's shell would write (``uiautomator dump`` output,
``screencap`` files, pushed files) so that ``cat``, ``rm``, ``ls`` and the
``sync:`` service (``adb pull``/``adb push``) see the same files.  Directories
exist implicitly above every file, plus a fixed set that every Android device
has.  Only ``/sdcard``, ``/storage`` and ``/data/local/tmp`` are writable, like
the shell user's view of a real phone.
"""

from __future__ import annotations

import posixpath
import stat
import threading
import time
from dataclasses import dataclass

from verirank_core.errors import DeviceError

BASE_DIRS = (
    "/", "/sdcard", "/sdcard/Download", "/sdcard/Pictures", "/storage", "/storage/emulated",
    "/storage/emulated/0", "/data", "/data/local", "/data/local/tmp", "/dev", "/system",
    "/system/bin", "/proc",
)
WRITABLE_ROOTS = ("/sdcard", "/storage/emulated/0", "/data/local/tmp")
DIR_MODE = stat.S_IFDIR | 0o771
FILE_MODE = stat.S_IFREG | 0o660


class VfsError(DeviceError):
    """A file operation failed; ``reason`` is the errno text a phone would print."""

    def __init__(self, path: str, reason: str, errno: int):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
        self.errno = errno


ENOENT, EACCES, EISDIR, ENOTDIR = 2, 13, 21, 20


@dataclass
class Entry:
    mode: int
    size: int
    mtime: int


class VirtualFS:
    def __init__(self) -> None:
        self._files: dict[str, tuple[bytes, int, int]] = {}  # path -> (data, mode, mtime)
        self._dirs: set[str] = set(BASE_DIRS)
        self._lock = threading.Lock()

    @staticmethod
    def normalize(path: str, cwd: str = "/") -> str:
        """Absolute, normalised path; ``/storage/self/primary`` style aliases are not resolved."""
        if not path.startswith("/"):
            path = posixpath.join(cwd, path)
        path = posixpath.normpath(path)
        return "/" if path.startswith("//") else path

    def _is_dir(self, path: str) -> bool:
        if path in self._dirs:
            return True
        prefix = path.rstrip("/") + "/"
        return any(p.startswith(prefix) for p in self._files)

    def stat(self, path: str) -> Entry | None:
        path = self.normalize(path)
        with self._lock:
            if path in self._files:
                data, mode, mtime = self._files[path]
                return Entry(mode, len(data), mtime)
            if self._is_dir(path):
                return Entry(DIR_MODE, 4096, 0)
        return None

    def read(self, path: str) -> bytes:
        path = self.normalize(path)
        with self._lock:
            if path in self._files:
                return self._files[path][0]
            if self._is_dir(path):
                raise VfsError(path, "Is a directory", EISDIR)
        raise VfsError(path, "No such file or directory", ENOENT)

    def write(self, path: str, data: bytes, mode: int = 0o644, append: bool = False) -> None:
        path = self.normalize(path)
        if not any(path == root or path.startswith(root + "/") for root in WRITABLE_ROOTS):
            raise VfsError(path, "Permission denied", EACCES)
        with self._lock:
            if self._is_dir(path):
                raise VfsError(path, "Is a directory", EISDIR)
            parent = posixpath.dirname(path)
            if parent in self._files:
                raise VfsError(path, "Not a directory", ENOTDIR)
            if append and path in self._files:
                data = self._files[path][0] + data
            self._files[path] = (bytes(data), stat.S_IFREG | (mode & 0o7777), int(time.time()))
            # creating a file creates its parents, like `adb push` with fixed_push_mkdir
            while parent not in self._dirs:
                self._dirs.add(parent)
                parent = posixpath.dirname(parent)

    def remove(self, path: str, recursive: bool = False) -> None:
        path = self.normalize(path)
        with self._lock:
            if path in self._files:
                del self._files[path]
                return
            if not self._is_dir(path):
                raise VfsError(path, "No such file or directory", ENOENT)
            if not recursive:
                raise VfsError(path, "Is a directory", EISDIR)
            if path in BASE_DIRS:
                raise VfsError(path, "Permission denied", EACCES)
            prefix = path + "/"
            for p in [p for p in self._files if p.startswith(prefix)]:
                del self._files[p]
            self._dirs = {d for d in self._dirs if d != path and not d.startswith(prefix)}

    def listdir(self, path: str) -> list[tuple[str, Entry]]:
        """(name, entry) for the direct children of a directory, sorted by name."""
        path = self.normalize(path)
        with self._lock:
            if path in self._files:
                raise VfsError(path, "Not a directory", ENOTDIR)
            if not self._is_dir(path):
                raise VfsError(path, "No such file or directory", ENOENT)
            prefix = path.rstrip("/") + "/"
            children: dict[str, Entry] = {}
            for p, (data, mode, mtime) in self._files.items():
                if p.startswith(prefix):
                    head, _, rest = p[len(prefix):].partition("/")
                    children[head] = Entry(DIR_MODE, 4096, 0) if rest else Entry(mode, len(data), mtime)
            for d in self._dirs:
                if d.startswith(prefix) and d != path:
                    head = d[len(prefix):].split("/")[0]
                    children.setdefault(head, Entry(DIR_MODE, 4096, 0))
        return sorted(children.items())
