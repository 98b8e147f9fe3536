"""The ``sync:`` service: file transfer for ``adb pull``/``adb push``/``adb ls``.

Every request is ``[id:4 bytes][length:u32 LE][path]``.  Replies (all little-endian):

    STAT -> "STAT" mode:u32 size:u32 mtime:u32          (all zero when missing)
    STA2/LST2 -> id error:u32 dev:u64 ino:u64 mode:u32 nlink:u32 uid:u32 gid:u32
                 size:u64 atime:i64 mtime:i64 ctime:i64  (with the stat_v2 feature)
    LIST -> "DENT" mode size mtime namelen name ... then "DONE" + 16 zero bytes
    RECV -> "DATA" len bytes (len <= 64 KiB) ... then "DONE" 0, or "FAIL" len message
    SEND path,mode -> host sends DATA chunks then "DONE" mtime; we answer "OKAY" 0 or "FAIL"
    QUIT -> end of session
"""

from __future__ import annotations

import struct
from typing import Optional

from phonesim.adbproto.stream import Stream
from phonesim.adbproto.vfs import ENOENT, VfsError, VirtualFS
from phonesim.latency import Latency

SYNC_DATA_MAX = 64 * 1024
MAX_PATH = 1024
_REQUEST = struct.Struct("<4sI")
_STAT_V1 = struct.Struct("<4sIII")
_STAT_V2 = struct.Struct("<4sIQQIIIIQqqq")
_DENT = struct.Struct("<4sIIII")
SHELL_UID = 2000
SDCARD_GID = 9997


def serve_sync(stream: Stream, fs: VirtualFS, latency: Optional[Latency] = None) -> None:
    """Answer sync requests until QUIT or the host closes the stream; each waits ``latency``'s ``pull``."""
    while True:
        header = stream.read(_REQUEST.size)
        if not header:
            return
        if len(header) < _REQUEST.size:
            header += stream.read_exact(_REQUEST.size - len(header))
        request, length = _REQUEST.unpack(header)
        if request == b"QUIT":
            return
        if length > MAX_PATH:
            _fail(stream, f"path too long ({length} bytes)")
            return
        path = stream.read_exact(length).decode("utf-8", "replace") if length else ""
        if latency is not None:
            latency.wait("pull")
        if request == b"STAT":
            _stat_v1(stream, fs, path)
        elif request in (b"STA2", b"LST2"):
            _stat_v2(stream, fs, path, request)
        elif request == b"LIST":
            _list(stream, fs, path)
        elif request == b"RECV":
            _recv(stream, fs, path)
        elif request == b"SEND":
            if not _send(stream, fs, path):
                return
        else:
            _fail(stream, f"unknown sync request {request!r}")
            return


def _fail(stream: Stream, message: str) -> None:
    data = message.encode()
    stream.write(b"FAIL" + struct.pack("<I", len(data)) + data)


def _stat_v1(stream: Stream, fs: VirtualFS, path: str) -> None:
    entry = fs.stat(path)
    if entry is None:
        stream.write(_STAT_V1.pack(b"STAT", 0, 0, 0))
    else:
        stream.write(_STAT_V1.pack(b"STAT", entry.mode, min(entry.size, 0xFFFFFFFF), entry.mtime))


def _stat_v2(stream: Stream, fs: VirtualFS, path: str, request: bytes) -> None:
    entry = fs.stat(path)
    if entry is None:
        stream.write(_STAT_V2.pack(request, ENOENT, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        return
    inode = hash(fs.normalize(path)) & 0xFFFFFFFF
    stream.write(_STAT_V2.pack(request, 0, 0xFD00, inode, entry.mode, 1, SHELL_UID, SDCARD_GID,
                               entry.size, entry.mtime, entry.mtime, entry.mtime))


def _list(stream: Stream, fs: VirtualFS, path: str) -> None:
    try:
        children = fs.listdir(path)
    except VfsError:
        children = []  # adbd answers an unreadable directory with an empty listing
    out = bytearray()
    for name, entry in [(".", fs.stat(path)), ("..", fs.stat(path))] + children:
        if entry is None:
            continue
        encoded = name.encode()
        out += _DENT.pack(b"DENT", entry.mode, entry.size, entry.mtime, len(encoded)) + encoded
    out += _DENT.pack(b"DONE", 0, 0, 0, 0)
    stream.write(bytes(out))


def _recv(stream: Stream, fs: VirtualFS, path: str) -> None:
    try:
        data = fs.read(path)
    except VfsError as exc:
        _fail(stream, f"open failed: {exc.reason}")
        return
    out = bytearray()
    for start in range(0, len(data), SYNC_DATA_MAX):
        chunk = data[start:start + SYNC_DATA_MAX]
        out += b"DATA" + struct.pack("<I", len(chunk)) + chunk
    # one write: a separate DONE packet waited for the host's OKAY of the data, 40 ms a pull
    # (the adb server's delayed ACK) on every dump the agent read
    stream.write(bytes(out + b"DONE" + struct.pack("<I", 0)))


def _send(stream: Stream, fs: VirtualFS, spec: str) -> bool:
    """Receive one file; False when the session must end (protocol error)."""
    path, sep, mode_text = spec.rpartition(",")
    if not sep:
        path, mode_text = spec, "33188"  # 0o100644
    try:
        mode = int(mode_text)
    except ValueError:
        mode = 0o100644
    chunks = []
    while True:
        kind, value = _REQUEST.unpack(stream.read_exact(_REQUEST.size))
        if kind == b"DATA":
            if value > SYNC_DATA_MAX:
                _fail(stream, f"DATA chunk of {value} bytes exceeds {SYNC_DATA_MAX}")
                return False
            chunks.append(stream.read_exact(value))
        elif kind == b"DONE":
            break
        else:
            _fail(stream, f"unexpected {kind!r} during SEND")
            return False
    try:
        fs.write(path, b"".join(chunks), mode=mode)
    except VfsError as exc:
        _fail(stream, f"couldn't create file: {exc.reason}")
        return True
    stream.write(b"OKAY" + struct.pack("<I", 0))
    return True
