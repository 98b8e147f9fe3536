"""ADB packet framing: a 24-byte little-endian header followed by a payload.

Header fields: command, arg0, arg1, data_length, data_check, magic, where
``magic == command ^ 0xffffffff`` and ``data_check`` is the byte sum of the
payload (hosts since protocol version 0x01000001 no longer verify it, older ones
do, so we always fill it in).
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

from verirank_core.errors import DeviceError

HEADER = struct.Struct("<6I")
HEADER_SIZE = HEADER.size  # 24


def _cmd(name: bytes) -> int:
    return struct.unpack("<I", name)[0]


A_SYNC = _cmd(b"SYNC")
A_CNXN = _cmd(b"CNXN")
A_AUTH = _cmd(b"AUTH")
A_OPEN = _cmd(b"OPEN")
A_OKAY = _cmd(b"OKAY")
A_CLSE = _cmd(b"CLSE")
A_WRTE = _cmd(b"WRTE")
A_STLS = _cmd(b"STLS")

COMMAND_NAMES = {
    A_SYNC: "SYNC", A_CNXN: "CNXN", A_AUTH: "AUTH", A_OPEN: "OPEN",
    A_OKAY: "OKAY", A_CLSE: "CLSE", A_WRTE: "WRTE", A_STLS: "STLS",
}

#: protocol version that lets both sides skip the payload checksum
A_VERSION = 0x01000001
#: oldest version we accept from a host
A_VERSION_MIN = 0x01000000
#: largest payload we offer; the host's CNXN may ask for less
MAX_PAYLOAD = 256 * 1024
#: payloads larger than this are refused outright (protects against garbage headers)
MAX_ACCEPTED_PAYLOAD = 1024 * 1024

# AUTH subtypes (arg0)
AUTH_TOKEN, AUTH_SIGNATURE, AUTH_RSAPUBLICKEY = 1, 2, 3


class ProtocolError(DeviceError):
    """The peer sent bytes that are not a valid ADB packet."""


@dataclass(frozen=True)
class Message:
    command: int
    arg0: int
    arg1: int
    data: bytes = b""

    @property
    def name(self) -> str:
        return COMMAND_NAMES.get(self.command, f"0x{self.command:08x}")

    def __repr__(self) -> str:  # short, for logs
        return f"Message({self.name}, {self.arg0}, {self.arg1}, {len(self.data)}B)"


def checksum(data: bytes) -> int:
    """The legacy payload checksum: the sum of all bytes, modulo 2**32."""
    return sum(data) & 0xFFFFFFFF


def pack(message: Message) -> bytes:
    """Serialise one packet (header + payload)."""
    data = message.data
    header = HEADER.pack(
        message.command, message.arg0 & 0xFFFFFFFF, message.arg1 & 0xFFFFFFFF,
        len(data), checksum(data), message.command ^ 0xFFFFFFFF,
    )
    return header + data


def unpack_header(header: bytes) -> tuple[int, int, int, int, int]:
    """Validate a 24-byte header; return (command, arg0, arg1, length, check)."""
    if len(header) != HEADER_SIZE:
        raise ProtocolError(f"ADB header must be {HEADER_SIZE} bytes, got {len(header)}")
    command, arg0, arg1, length, check, magic = HEADER.unpack(header)
    if magic != command ^ 0xFFFFFFFF:
        raise ProtocolError(f"bad ADB magic 0x{magic:08x} for command 0x{command:08x}")
    if command not in COMMAND_NAMES:
        raise ProtocolError(f"unknown ADB command 0x{command:08x}")
    if length > MAX_ACCEPTED_PAYLOAD:
        raise ProtocolError(f"ADB payload of {length} bytes exceeds {MAX_ACCEPTED_PAYLOAD}")
    return command, arg0, arg1, length, check


def recv_exact(sock: socket.socket, n: int) -> bytes:
    """Read exactly ``n`` bytes; ``b""`` if the peer closed before the first byte."""
    chunks = []
    remaining = n
    while remaining:
        chunk = sock.recv(remaining)
        if not chunk:
            if remaining == n:
                return b""
            raise ProtocolError(f"connection closed after {n - remaining} of {n} bytes")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_message(sock: socket.socket, verify_checksum: bool = False) -> Message | None:
    """Read one packet; None when the peer closed the connection cleanly."""
    header = recv_exact(sock, HEADER_SIZE)
    if not header:
        return None
    command, arg0, arg1, length, check = unpack_header(header)
    data = recv_exact(sock, length) if length else b""
    if length and not data:
        raise ProtocolError("connection closed before the payload")
    if verify_checksum and check != checksum(data):
        raise ProtocolError(f"bad checksum for {COMMAND_NAMES[command]}: {check} != {checksum(data)}")
    return Message(command, arg0, arg1, data)
