"""The ``shell:`` and ``exec:`` services, with and without the shell_v2 framing.

Service names the host sends::

    shell:CMD                 legacy: stdout+stderr as raw bytes, no exit status
    shell,v2,raw:CMD          shell_v2: packets [id:u8][len:u32 LE][data]
    shell,v2,TERM=xterm,pty:  shell_v2 interactive (adb shell in a terminal)
    exec:CMD                  binary-clean raw output (adb exec-out)

shell_v2 packet ids: 0 stdin, 1 stdout, 2 stderr, 3 exit (1 byte status),
4 close-stdin, 5 window-size-change.  As on Android 7+, a *command* without a
pty is raw (binary-clean, e.g. ``screencap -p``); with a pty (``adb shell -t``
or an interactive shell) output LF becomes CRLF as a terminal's line discipline
does, which is what used to corrupt PNGs from ``adb shell screencap`` on old phones.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from phonesim.adbproto.commands import DeviceShell
from phonesim.adbproto.stream import Stream

ID_STDIN, ID_STDOUT, ID_STDERR, ID_EXIT, ID_CLOSE_STDIN, ID_WINDOW_SIZE = 0, 1, 2, 3, 4, 5
_PACKET = struct.Struct("<BI")
#: output is coalesced into chunks of at most this size before it is sent
FLUSH_BYTES = 64 * 1024


def pack_packet(packet_id: int, data: bytes = b"") -> bytes:
    return _PACKET.pack(packet_id, len(data)) + data


@dataclass(frozen=True)
class ShellRequest:
    command: str
    v2: bool
    pty: bool


def parse_service(name: str) -> ShellRequest | None:
    """Understand ``shell[,opts]:CMD`` and ``exec:CMD``; None for other services."""
    if name.startswith("exec:"):
        return ShellRequest(name[len("exec:"):], v2=False, pty=False)
    head, sep, command = name.partition(":")
    if not sep or not (head == "shell" or head.startswith("shell,")):
        return None
    options = head.split(",")[1:]
    pty = "pty" in options or ("raw" not in options and not command)
    return ShellRequest(command, v2="v2" in options, pty=pty)


class _Output:
    """Buffers (fd, bytes) output and writes it to the stream in order."""

    def __init__(self, stream: Stream, v2: bool, pty: bool):
        self.stream, self.v2, self.pty = stream, v2, pty
        self.fd = 1
        self.buffer = bytearray()

    def emit(self, fd: int, data: bytes) -> None:
        if self.pty:  # a terminal merges stderr into the screen and turns \n into \r\n
            fd, data = 1, data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
        if fd != self.fd:
            self.flush()
            self.fd = fd
        self.buffer += data
        if len(self.buffer) >= FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        if not self.buffer:
            return
        data = bytes(self.buffer)
        self.buffer.clear()
        self.stream.write(pack_packet(ID_STDOUT if self.fd == 1 else ID_STDERR, data) if self.v2 else data)

    def exit(self, status: int) -> None:
        self.flush()
        if self.v2:
            self.stream.write(pack_packet(ID_EXIT, bytes([status & 0xFF])))


def serve_shell(stream: Stream, shell: DeviceShell, request: ShellRequest) -> None:
    """Run one shell/exec request on ``stream``; returns when the command finished."""
    out = _Output(stream, request.v2, request.pty)
    if request.command.strip():
        status = shell.run(request.command, out.emit)
    else:
        status = _interactive(stream, shell, out)
    out.exit(status)


def _read_input(stream: Stream, v2: bool) -> bytes:
    """Next chunk of the user's keystrokes; b"" at end of input."""
    if not v2:
        return stream.read(4096)
    while True:
        packet_id, length = _PACKET.unpack(stream.read_exact(_PACKET.size))
        data = stream.read_exact(length) if length else b""
        if packet_id == ID_STDIN and data:
            return data
        if packet_id == ID_CLOSE_STDIN:
            return b""
        # window-size changes and empty packets need no action here


def _interactive(stream: Stream, shell: DeviceShell, out: _Output) -> int:
    """Read command lines from the host until ``exit`` or end of input.

    With a pty (a person at a terminal) it prompts, echoes keystrokes and handles
    backspace, ^C and ^D; without one (``adb shell < script``) it just runs lines.
    """
    prompt = f"{shell.product}:/ $ ".encode() if out.pty else b""
    out.emit(1, prompt)
    out.flush()
    line = bytearray()
    status = 0
    while True:
        data = _read_input(stream, out.v2)
        if not data:
            if line and not out.pty:  # a script whose last line has no newline
                status, _ = shell.execute(line.decode("utf-8", "replace"), out.emit, status=status)
            return status
        for byte in data:
            if byte in (0x0D, 0x0A):
                if out.pty:
                    out.emit(1, b"\n")
                status, exited = shell.execute(line.decode("utf-8", "replace"), out.emit, status=status)
                line.clear()
                if exited:
                    return status
                out.emit(1, prompt)
            elif not out.pty:
                line.append(byte)
            elif byte in (0x7F, 0x08):
                if line:
                    line.pop()
                    out.emit(1, b"\b \b")
            elif byte == 0x03:  # ^C
                line.clear()
                out.emit(1, b"^C\n" + prompt)
            elif byte == 0x04 and not line:  # ^D on an empty line
                return status
            else:
                line.append(byte)
                out.emit(1, bytes([byte]))  # terminal echo
        out.flush()
