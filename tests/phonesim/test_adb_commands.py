"""The simulated phone's shell: parsing and the Android commands it mimics."""

from __future__ import annotations

import struct

import pytest
from support_adb import StubPhone

from phonesim.adbproto.commands import DeviceShell
from phonesim.adbproto.shellparse import ShellSyntaxError, parse, tokenize
from phonesim.adbproto.vfs import VfsError, VirtualFS


@pytest.fixture
def phone() -> StubPhone:
    return StubPhone()


@pytest.fixture
def sh(phone) -> DeviceShell:
    return DeviceShell(phone, VirtualFS(), serial="sim-1")


def run(sh: DeviceShell, line: str) -> tuple[str, str, int]:
    out, err, status = sh.run_captured(line)
    return out.decode(), err.decode(), status


# -- parsing -------------------------------------------------------------------------

def test_tokenize_quotes_escapes_and_operators():
    words = tokenize(r"""input text 'it'"'"'s' "a \"b\" \\ $c" x\ y a2>f 2>/dev/null ''""")
    assert words == [
        ("word", "input"), ("word", "text"), ("word", "it's"), ("word", 'a "b" \\ $c'),
        ("word", "x y"), ("word", "a2"), ("op", ">"), ("word", "f"), ("op", "2>"),
        ("word", "/dev/null"), ("word", ""),
    ]


def test_parse_sequences_and_pipes():
    pipelines = parse("rm -f /x; uiautomator dump /x && echo ok || echo no | grep o")
    assert [p.connector for p in pipelines] == [";", ";", "&&", "||"]
    assert [c.argv for c in pipelines[3].commands] == [["echo", "no"], ["grep", "o"]]


@pytest.mark.parametrize("line", ["echo 'open", "echo \"open", "| grep x", "echo a &&"])
def test_parse_errors(line):
    with pytest.raises(ShellSyntaxError):
        parse(line)


def test_syntax_error_is_reported_not_raised(sh):
    out, err, status = run(sh, "echo 'unterminated")
    assert status == 2 and "no closing quote" in err


# -- shell semantics -----------------------------------------------------------------

def test_status_and_connectives(sh):
    assert run(sh, "false; echo $?") == ("1\n", "", 0)
    assert run(sh, "true && echo yes || echo no") == ("yes\n", "", 0)
    assert run(sh, "false && echo yes || echo no") == ("no\n", "", 0)
    assert run(sh, "echo X4EXIT:$?")[0] == "X4EXIT:0\n"  # adbutils' shell_v1 exit-code trick
    out, err, status = run(sh, "nosuch --flag")
    assert (out, status) == ("", 127)
    assert err == "/system/bin/sh: nosuch: inaccessible or not found\n"
    assert run(sh, "exit 7; echo never") == ("", "", 7)


def test_redirects_and_pipes(sh):
    assert run(sh, "echo hi > /sdcard/a.txt; echo more >> /sdcard/a.txt; cat /sdcard/a.txt")[0] == "hi\nmore\n"
    assert run(sh, "cat /sdcard/none 2>/dev/null; echo $?") == ("1\n", "", 0)
    assert run(sh, "cat /sdcard/none 2>&1")[0] == "cat: /sdcard/none: No such file or directory\n"
    assert run(sh, "dumpsys window | grep mCurrentFocus")[0].strip().startswith("mCurrentFocus=Window{")
    out, err, status = run(sh, "echo x > /system/x")
    assert status == 1 and "Permission denied" in err


def test_files_cat_rm_ls(sh):
    sh.fs.write("/data/local/tmp/a", b"A")
    assert run(sh, "ls /data/local/tmp") == ("a\n", "", 0)
    assert run(sh, "rm /data/local/tmp/a; cat /data/local/tmp/a")[1].endswith("No such file or directory\n")
    assert run(sh, "rm /data/local/tmp/a")[2] == 1
    assert run(sh, "rm -f /data/local/tmp/a")[2] == 0


# -- the Android tools ---------------------------------------------------------------

def test_uiautomator_dump_writes_the_device_xml(sh, phone):
    out, err, status = run(sh, "uiautomator dump")
    assert (out, status) == ("", 0)
    assert err == "UI hierchary dumped to: /sdcard/window_dump.xml\n"  # sic: the real tool's typo
    assert sh.fs.read("/sdcard/window_dump.xml").decode() == phone.dump_xml()
    out, _, _ = run(sh, "uiautomator dump /dev/tty")
    assert out == phone.dump_xml()


def test_uiautomator_dump_failure_knob(sh):
    sh.fail_next_dumps(2)
    for _ in range(2):
        out, err, status = run(sh, "rm -f /sdcard/d.xml; uiautomator dump /sdcard/d.xml")
        assert err == "ERROR: could not get idle state.\n" and status == 0
        assert sh.fs.stat("/sdcard/d.xml") is None
    assert "dumped to" in run(sh, "uiautomator dump /sdcard/d.xml")[1]
    assert sh.pending_dump_failures == 0


def test_screencap_png_raw_and_file(sh, phone):
    png = phone.screenshot_png()
    assert sh.run_captured("screencap -p")[0] == png
    assert run(sh, "screencap -p /sdcard/s.png")[2] == 0
    assert sh.fs.read("/sdcard/s.png") == png
    raw = sh.run_captured("screencap")[0]
    w, h, fmt, _ = struct.unpack("<4I", raw[:16])
    assert (w, h, fmt) == (108, 240, 1) and len(raw) == 16 + w * h * 4


def test_input_commands_reach_the_device(sh, phone):
    assert run(sh, "input tap 950 350")[2] == 0
    assert phone.wifi is True
    run(sh, "input touchscreen swipe 10 20 30 40 250")
    run(sh, "input swipe 5 5 5 5 900")  # not moving for 900 ms: a long press
    run(sh, "input swipe 6 6 6 6 50")  # not moving, short: a tap
    run(sh, "input text 'hello%sworld&(x)'")
    run(sh, "input keyevent KEYCODE_BACK; input keyevent 3; input keyevent ENTER")
    assert phone.calls[1:] == [
        ("swipe", 10, 20, 30, 40, 250), ("long_press", 5, 5, 900), ("tap", 6, 6),
        ("text", "hello world&(x)"), ("key", "back"), ("key", "home"), ("key", "enter"),
    ]


def test_input_errors_are_loud(sh, phone):
    out, err, status = run(sh, "input keyevent KEYCODE_VOLUME_UP")
    assert status == 1 and "not supported" in err
    out, err, status = run(sh, "input keyevent KEYCODE_NOPE")
    assert status == 1 and "Unknown keycode" in err
    assert run(sh, "input tap one two")[2] == 1
    assert phone.calls == []


def test_app_commands(sh, phone):
    out, _, status = run(sh, "am start -W -n com.android.settings/.wifi.WifiSettings")
    assert status == 0 and out.startswith("Starting: Intent { cmp=com.android.settings/.wifi.WifiSettings }")
    assert (phone.package, phone.activity) == ("com.android.settings", ".wifi.WifiSettings")
    window = run(sh, "dumpsys window windows")[0]
    assert "mCurrentFocus=Window{" in window and " u0 com.android.settings/.wifi.WifiSettings}" in window
    assert "mResumedActivity: ActivityRecord{" in run(sh, "dumpsys activity activities")[0]
    run(sh, "am force-stop com.android.settings")
    assert phone.package == "com.google.android.apps.nexuslauncher"
    out, _, status = run(sh, "monkey -p com.android.settings -c android.intent.category.LAUNCHER 1")
    assert status == 0 and "Events injected: 1" in out and phone.package == "com.android.settings"
    out, _, status = run(sh, "monkey -p com.example.missing 1")
    assert status == 251 and "No activities found" in out
    phone.wifi = True
    assert run(sh, "pm clear com.android.settings") == ("Success\n", "", 0)
    assert phone.wifi is False and ("reset", "com.android.settings") in phone.calls
    assert run(sh, "am start -a android.intent.action.VIEW -d http://x")[2] == 1


def test_properties_and_system_info(sh):
    assert run(sh, "getprop ro.build.version.release")[0] == "13\n"
    assert run(sh, "getprop ro.build.version.sdk")[0] == "33\n"
    assert run(sh, "getprop no.such.prop")[0] == "\n"
    listing = run(sh, "getprop")[0]
    assert "[ro.product.model]: [Pixel 7]\n" in listing and "[ro.product.manufacturer]: [Google]\n" in listing
    assert "versionName=13\n" in run(sh, "dumpsys package com.android.settings")[0]
    assert "versionName" not in run(sh, "dumpsys package com.nope")[0]
    assert run(sh, "wm size") == ("Physical size: 1080x2400\n", "", 0)
    assert "deviceWidth=1080, deviceHeight=2400" in run(sh, "dumpsys display")[0]
    assert run(sh, "pm path com.android.settings")[0].startswith("package:")


def test_vfs_rules():
    fs = VirtualFS()
    fs.write("/sdcard/dir/sub/f", b"1")
    assert fs.stat("/sdcard/dir").mode & 0o170000 == 0o040000
    assert [name for name, _ in fs.listdir("/sdcard/dir")] == ["sub"]
    with pytest.raises(VfsError, match="Permission denied"):
        fs.write("/etc/hosts", b"")
    with pytest.raises(VfsError, match="Is a directory"):
        fs.remove("/sdcard/dir")
    fs.remove("/sdcard/dir", recursive=True)
    assert fs.stat("/sdcard/dir/sub/f") is None and fs.stat("/sdcard") is not None


def test_force_stop_uses_the_device_capability_when_present(sh, phone):
    stopped = []
    phone.force_stop = stopped.append  # type: ignore[attr-defined]
    run(sh, "am start -n com.android.settings/.Settings")
    assert run(sh, "am force-stop com.android.settings")[2] == 0
    assert stopped == ["com.android.settings"]
    out, err, status = run(sh, "am start -n com.example.nope/.Main")
    assert status == 1 and "does not exist" in err
