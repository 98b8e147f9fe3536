"""The ADB wire protocol of our device server, spoken from a raw socket as a host would."""

from __future__ import annotations

import socket
import struct

import pytest
from support_adb import StubPhone

from phonesim.adb_server import AdbDeviceServer
from phonesim.adbproto.message import (
    A_CLSE,
    A_CNXN,
    A_OKAY,
    A_OPEN,
    A_VERSION,
    A_WRTE,
    HEADER_SIZE,
    Message,
    ProtocolError,
    checksum,
    pack,
    read_message,
    unpack_header,
)
from phonesim.adbproto.shellv2 import ID_EXIT, ID_STDERR, ID_STDOUT

TIMEOUT = 20.0


class RawHost:
    """The host side of one ADB connection, packet by packet."""

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        self.next_id = 100

    def send(self, command: int, arg0: int, arg1: int, data: bytes = b"") -> None:
        self.sock.sendall(pack(Message(command, arg0, arg1, data)))

    def recv(self, timeout: float = TIMEOUT) -> Message:
        self.sock.settimeout(timeout)
        message = read_message(self.sock, verify_checksum=True)
        assert message is not None, "device closed the connection"
        return message

    def handshake(self, maxdata: int = 1024 * 1024) -> Message:
        self.send(A_CNXN, A_VERSION, maxdata, b"host::features=shell_v2,cmd,stat_v2\0")
        return self.recv()

    def open(self, service: str) -> tuple[int, Message]:
        self.next_id += 1
        self.send(A_OPEN, self.next_id, 0, service.encode() + b"\0")
        return self.next_id, self.recv()

    def read_stream(self, local_id: int) -> bytes:
        """Collect WRTE payloads (acknowledging each) until the device closes the stream."""
        data = b""
        while True:
            m = self.recv()
            if m.command == A_WRTE:
                assert m.arg1 == local_id
                data += m.data
                self.send(A_OKAY, local_id, m.arg0)
            elif m.command == A_CLSE:
                assert m.arg1 == local_id
                return data
            else:
                raise AssertionError(f"unexpected {m}")

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def phone() -> StubPhone:
    return StubPhone()


@pytest.fixture
def server(phone):
    with AdbDeviceServer(phone) as srv:
        yield srv


@pytest.fixture
def host(server):
    h = RawHost(server.port)
    yield h
    h.close()


# -- framing ------------------------------------------------------------------------

def test_pack_layout_checksum_and_magic():
    raw = pack(Message(A_WRTE, 7, 9, b"\x01\x02\xff"))
    command, arg0, arg1, length, check, magic = struct.unpack("<6I", raw[:HEADER_SIZE])
    assert raw[:4] == b"WRTE" and (arg0, arg1, length) == (7, 9, 3)
    assert check == 0x102 == checksum(b"\x01\x02\xff")
    assert magic == command ^ 0xFFFFFFFF
    assert raw[HEADER_SIZE:] == b"\x01\x02\xff"
    assert unpack_header(raw[:HEADER_SIZE]) == (A_WRTE, 7, 9, 3, 0x102)


def test_bad_headers_are_rejected_with_a_reason():
    good = pack(Message(A_OKAY, 1, 2))
    bad_magic = good[:20] + b"\0\0\0\0"
    with pytest.raises(ProtocolError, match="magic"):
        unpack_header(bad_magic)
    unknown = struct.pack("<6I", 0x12345678, 0, 0, 0, 0, 0x12345678 ^ 0xFFFFFFFF)
    with pytest.raises(ProtocolError, match="unknown ADB command"):
        unpack_header(unknown)
    huge = struct.pack("<6I", A_WRTE, 1, 1, 1 << 30, 0, A_WRTE ^ 0xFFFFFFFF)
    with pytest.raises(ProtocolError, match="exceeds"):
        unpack_header(huge)


# -- handshake -----------------------------------------------------------------------

def test_cnxn_banner_and_payload_negotiation(host):
    reply = host.handshake(maxdata=4096)
    assert reply.command == A_CNXN
    assert reply.arg0 == A_VERSION
    assert reply.arg1 == 4096  # never more than the host can take
    banner = reply.data.decode()
    assert banner.startswith("device::")
    fields = dict(item.split("=", 1) for item in banner[len("device::"):].split(";"))
    assert fields["ro.product.model"] == "Pixel 7"
    assert fields["ro.product.name"] == fields["ro.product.device"] == "verirank_sim"
    assert set(fields["features"].split(",")) == {"shell_v2", "stat_v2"}


def test_payload_capped_at_our_maximum(host):
    assert host.handshake(maxdata=16 * 1024 * 1024).arg1 == 256 * 1024


# -- streams -------------------------------------------------------------------------

def test_open_shell_writes_then_closes(host):
    host.handshake()
    local_id, reply = host.open("shell:echo hello; getprop ro.build.version.sdk")
    assert reply.command == A_OKAY and reply.arg1 == local_id and reply.arg0 != 0
    assert host.read_stream(local_id) == b"hello\n33\n"


def test_unknown_and_refused_services_get_clse_with_zero_id(host):
    host.handshake()
    for service in ("reboot:", "frobnicate:now", "tcpip:5555"):
        local_id, reply = host.open(service)
        assert (reply.command, reply.arg0, reply.arg1) == (A_CLSE, 0, local_id)


def test_flow_control_one_write_in_flight(host, server):
    host.handshake(maxdata=4096)
    server.fs.write("/sdcard/big.bin", bytes(range(256)) * 64)  # 16 KiB -> 4 packets
    local_id, reply = host.open("exec:cat /sdcard/big.bin")
    first = host.recv()
    assert first.command == A_WRTE and len(first.data) == 4096
    # until we acknowledge, the device must not send the next packet
    with pytest.raises(socket.timeout):
        host.recv(timeout=0.5)
    host.send(A_OKAY, local_id, first.arg0)
    rest = host.read_stream(local_id)
    assert first.data + rest == bytes(range(256)) * 64


def test_concurrent_streams_on_one_connection(host):
    host.handshake()
    id_a, id_b = 201, 202
    host.send(A_OPEN, id_a, 0, b"shell:echo A\0")
    host.send(A_OPEN, id_b, 0, b"shell:echo B\0")
    device_ids: dict[int, int] = {}
    got: dict[int, bytes] = {id_a: b"", id_b: b""}
    closed: set[int] = set()
    while closed != {id_a, id_b}:
        m = host.recv()
        if m.command == A_OKAY:
            device_ids[m.arg1] = m.arg0
        elif m.command == A_WRTE:
            assert m.arg1 in device_ids, "data before the OKAY that opens the stream"
            got[m.arg1] += m.data
            host.send(A_OKAY, m.arg1, m.arg0)
        elif m.command == A_CLSE:
            closed.add(m.arg1)
    assert device_ids[id_a] != device_ids[id_b]
    assert got == {id_a: b"A\n", id_b: b"B\n"}


def test_shell_v2_frames_stdout_stderr_and_exit_status(host):
    host.handshake()
    local_id, _ = host.open("shell,v2,raw:echo out; nosuchcmd; exit 3")
    data = host.read_stream(local_id)
    packets = []
    while data:
        kind, length = struct.unpack("<BI", data[:5])
        packets.append((kind, data[5:5 + length]))
        data = data[5 + length:]
    assert packets == [
        (ID_STDOUT, b"out\n"),
        (ID_STDERR, b"/system/bin/sh: nosuchcmd: inaccessible or not found\n"),
        (ID_EXIT, b"\x03"),
    ]


def test_sync_stat_over_host_writes(host, server):
    """The host WRTEs a sync request; the device OKAYs it and WRTEs the answer."""
    host.handshake()
    server.fs.write("/sdcard/f.txt", b"12345")
    local_id, reply = host.open("sync:")
    remote_id = reply.arg0
    path = b"/sdcard/f.txt"
    host.send(A_WRTE, local_id, remote_id, b"STAT" + struct.pack("<I", len(path)) + path)
    ack = host.recv()
    assert (ack.command, ack.arg0, ack.arg1) == (A_OKAY, remote_id, local_id)
    answer = host.recv()
    assert answer.command == A_WRTE
    tag, mode, size, mtime = struct.unpack("<4sIII", answer.data)
    assert tag == b"STAT" and size == 5 and mode & 0o170000 == 0o100000 and mtime > 0


def test_binary_clean_exec_and_crlf_under_a_pty(host, phone):
    host.handshake()
    png = phone.screenshot_png()
    local_id, _ = host.open("exec:screencap -p")
    assert host.read_stream(local_id) == png
    local_id, _ = host.open("shell:screencap -p")  # modern adbd: a command without pty is raw
    assert host.read_stream(local_id) == png
    local_id, _ = host.open("shell,v2,pty:echo a; echo b")
    framed = host.read_stream(local_id)
    assert framed.startswith(struct.pack("<BI", ID_STDOUT, 6) + b"a\r\nb\r\n")


def test_garbage_closes_only_that_connection(server):
    bad = socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT)
    bad.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert bad.recv(100) == b""  # the device hung up
    bad.close()
    good = RawHost(server.port)
    assert good.handshake().command == A_CNXN
    good.close()


def test_host_disconnect_mid_stream_leaves_server_serving(server):
    h = RawHost(server.port)
    h.handshake(maxdata=4096)
    server.fs.write("/sdcard/big.bin", b"x" * 50_000)
    h.open("exec:cat /sdcard/big.bin")
    assert h.recv().command == A_WRTE
    h.close()  # vanish with the service blocked on flow control
    h2 = RawHost(server.port)
    h2.handshake()
    local_id, _ = h2.open("shell:echo still here")
    assert h2.read_stream(local_id) == b"still here\n"
    h2.close()


def test_interactive_legacy_shell(host):
    host.handshake()
    local_id, reply = host.open("shell:")
    remote_id = reply.arg0
    prompt = host.recv()
    assert prompt.data == b"verirank_sim:/ $ "
    host.send(A_OKAY, local_id, remote_id)
    host.send(A_WRTE, local_id, remote_id, b"echo hi\rexit 4\r")
    seen = b""
    while True:
        m = host.recv()
        if m.command == A_WRTE:
            seen += m.data
            host.send(A_OKAY, local_id, remote_id)
        elif m.command == A_CLSE:
            break
    assert b"echo hi\r\nhi\r\n" in seen
    assert seen.endswith(b"exit 4\r\n")
