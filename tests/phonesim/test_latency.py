"""Phone-like latency of the served simulator: the spec, which command is which operation, the wait."""

from __future__ import annotations

import socket
import time

import pytest
from support_adb import StubPhone
from typer.testing import CliRunner

from phonesim.adb_server import AdbDeviceServer
from phonesim.adbproto.message import A_CLSE, A_CNXN, A_OKAY, A_OPEN, A_VERSION, A_WRTE, Message, pack, read_message
from phonesim.latency import PROFILES, Latency, LatencySpecError, operation_of
from verirank.cli import app


def test_a_spec_sets_the_operations_it_names_and_nothing_else():
    latency = Latency.parse("dump=1.0, tap=0.3,screenshot=0.4")
    assert dict(latency.seconds) == {"dump": 1.0, "tap": 0.3, "screenshot": 0.4}
    assert latency.of_command(["uiautomator", "dump", "/sdcard/x.xml"]) == 1.0
    assert latency.of_command(["input", "keyevent", "KEYCODE_BACK"]) == 0.0
    assert not Latency.parse("") and not Latency.parse("dump=0")


def test_a_profile_comes_first_and_later_pairs_override_it():
    latency = Latency.parse("phone,dump=2,input=0.1")
    assert latency.seconds["dump"] == 2.0
    assert {latency.seconds[k] for k in ("tap", "swipe", "key", "text")} == {0.1}
    assert latency.seconds["screenshot"] == PROFILES["phone"]["screenshot"]
    assert Latency.parse(latency.describe()) == latency  # what `sim serve` prints is a spec again
    assert latency.scaled(0.5).seconds["dump"] == 1.0


@pytest.mark.parametrize("spec, message", [
    ("bogus=1", "unknown operation 'bogus'"),
    ("dump=fast", "not a number"),
    ("tap=-0.1", "between 0 and"),
    ("dump=nan", "between 0 and"),
    ("dump=1,phone", "may only come first"),
    ("dump", "not NAME=SECONDS"),
])
def test_a_bad_spec_is_one_clear_error(spec, message):
    with pytest.raises(LatencySpecError, match=message):
        Latency.parse(spec)


@pytest.mark.parametrize("argv, operation", [
    (["uiautomator", "dump", "/sdcard/window_dump.xml"], "dump"),
    (["screencap", "-p"], "screenshot"),
    (["input", "tap", "5", "5"], "tap"),
    (["input", "touchscreen", "swipe", "1", "2", "3", "4", "300"], "swipe"),
    (["input", "keyevent", "KEYCODE_HOME"], "key"),
    (["input", "text", "hello"], "text"),
    (["monkey", "-p", "com.android.settings", "1"], "launch"),
    (["am", "start", "-n", "a/.B"], "launch"),
    (["am", "force-stop", "a"], "shell"),
    (["/system/bin/getprop"], "shell"),
    (["dumpsys", "window", "windows"], "shell"),
    (["rm", "-f", "/sdcard/window_dump.xml"], None),
    (["echo", "x"], None),
])
def test_each_command_the_agent_sends_is_one_operation(argv, operation):
    assert operation_of(argv) == operation


def _shell_over_adb(port: int, command: str) -> bytes:
    """Run ``command`` on the served device as an adb host does (one connection, one stream)."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(pack(Message(A_CNXN, A_VERSION, 1 << 20, b"host::features=shell_v2\0")))
        assert read_message(sock).command == A_CNXN
        sock.sendall(pack(Message(A_OPEN, 7, 0, command.encode() + b"\0")))
        out = b""
        while True:
            message = read_message(sock)
            if message.command == A_WRTE:
                out += message.data
                sock.sendall(pack(Message(A_OKAY, 7, message.arg0)))
            elif message.command == A_CLSE:
                return out


def test_a_served_device_with_latency_answers_no_sooner_than_a_phone():
    with AdbDeviceServer(StubPhone(), latency=Latency.parse("dump=0.4,shell=0.2")) as server:
        started = time.monotonic()
        out = _shell_over_adb(server.port, "shell:uiautomator dump /dev/tty")
        took_dump = time.monotonic() - started
        started = time.monotonic()
        props = _shell_over_adb(server.port, "shell:getprop ro.build.version.sdk; getprop ro.product.model")
        took_props = time.monotonic() - started
    assert b"<hierarchy" in out and took_dump >= 0.4
    assert props.count(b"\n") == 2 and took_props >= 0.4  # two device tools, 0.2 s each


def test_sim_serve_rejects_a_bad_latency_before_serving():
    result = CliRunner().invoke(app, ["sim", "serve", "android13-settings", "--port", "0", "--latency", "dumps=1"])
    assert result.exit_code == 2
    assert "unknown operation 'dumps'" in result.output
    assert "serving" not in result.output
