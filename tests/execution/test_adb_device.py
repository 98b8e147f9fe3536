"""End to end: the real adb binary and adbutils drive our device server; AdbDevice on top.

Chain under test: AdbDevice -> adbutils -> adb server process (bundled binary,
private port) -> TCP -> AdbDeviceServer -> Device.  The ``twin`` tests replay
the same actions on an identical device driven directly and require identical
screens, so they hold for any world.
"""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from support_adb import StubPhone

from execution.adb_device import AdbDevice, escape_input_text
from phonesim.adb_server import AdbDeviceServer
from execution.devices import open_device
from verirank_core.errors import AppNotInstalled, DeviceError

REPO = Path(__file__).resolve().parents[2]
WORLDS = REPO / "datasets/worlds"
#: the world the brief names; any bundled world will do while it is not there yet
SIM_WORLD = "android13-settings" if (WORLDS / "android13-settings.yaml").exists() else \
    next((p.stem for p in sorted(WORLDS.glob("*.yaml"))), "android13-settings")


def sim_available() -> bool:
    return (REPO / "phonesim/device.py").exists() and (WORLDS / f"{SIM_WORLD}.yaml").exists()


def new_device(kind: str):
    if kind == "stub":
        return StubPhone()
    if not sim_available():
        pytest.skip(f"phonesim.device.SimDevice or the {SIM_WORLD} world is not there yet")
    from phonesim.device import SimDevice

    return SimDevice.open(SIM_WORLD)


@pytest.fixture
def served(adb_host):
    """Factory: serve a device, ``adb connect`` it, undo both at teardown."""
    opened: list[AdbDeviceServer] = []

    def serve(device, **options) -> AdbDeviceServer:
        server = AdbDeviceServer(device, **options)
        opened.append(server)
        adb_host.connect(server.address)
        return server

    yield serve
    for server in opened:
        adb_host.disconnect(server.address)
        server.close()


def adb_device(adb_host, server: AdbDeviceServer, **options) -> AdbDevice:
    options.setdefault("timeout", 20.0)
    options.setdefault("retry_delay", 0.05)
    return AdbDevice(server.address, adb_port=adb_host.port, **options)


# -- the real adb binary ---------------------------------------------------------------

def test_adb_devices_lists_the_simulator(adb_host, served):
    server = served(StubPhone())
    listing = adb_host.run("devices", "-l").stdout.decode()
    row = next(line for line in listing.splitlines() if line.startswith(server.address))
    assert row.split()[1] == "device"
    assert "model:Pixel_7" in row and "product:verirank_sim" in row


def test_adb_shell_exit_status_stderr_and_exec_out(adb_host, served):
    phone = StubPhone()
    server = served(phone)
    done = adb_host.run("-s", server.address, "shell", "echo hi; getprop ro.product.model; nosuch")
    assert done.stdout == b"hi\nPixel 7\n"
    assert done.stderr == b"/system/bin/sh: nosuch: inaccessible or not found\n"
    assert done.returncode == 127  # shell_v2 carries the exit status to the host
    png = adb_host.run("-s", server.address, "exec-out", "screencap -p").stdout
    assert png == phone.screenshot_png()


def test_adb_shell_script_pty_and_refused_services(adb_host, served):
    server = served(StubPhone())
    script = adb_host.run("-s", server.address, "shell", input=b"echo hi\ngetprop ro.build.version.sdk\nexit 3\n")
    assert (script.stdout, script.returncode) == (b"hi\n33\n", 3)
    pty = adb_host.run("-s", server.address, "shell", "-t", "-t", "echo a; echo b")
    assert pty.stdout == b"a\r\nb\r\n"  # a terminal's line discipline, as on a phone
    legacy = adb_host.run("-s", server.address, "shell", "-x", "echo a; nosuch")  # -x: no shell_v2
    assert legacy.stdout == b"a\n/system/bin/sh: nosuch: inaccessible or not found\n"
    assert legacy.returncode == 0  # the legacy protocol has no exit status
    reboot = adb_host.run("-s", server.address, "reboot")
    assert reboot.returncode != 0 and b"closed" in reboot.stderr
    assert adb_host.devices()[server.address] == "device"  # refusing did not hurt the connection


def test_adb_pull_of_the_dump_and_push(adb_host, served, tmp_path):
    phone = StubPhone()
    server = served(phone)
    dumped = adb_host.run("-s", server.address, "shell", "uiautomator", "dump")
    assert b"UI hierchary dumped to: /sdcard/window_dump.xml" in dumped.stdout + dumped.stderr
    target = tmp_path / "dump.xml"
    pulled = adb_host.run("-s", server.address, "pull", "/sdcard/window_dump.xml", str(target))
    assert pulled.returncode == 0, pulled.stderr
    assert target.read_text(encoding="utf-8") == phone.dump_xml()
    missing = adb_host.run("-s", server.address, "pull", "/sdcard/none.xml", str(tmp_path / "n"))
    assert missing.returncode != 0 and b"No such file or directory" in missing.stderr

    source = tmp_path / "note.txt"
    source.write_bytes(b"pushed \x00 bytes\n" * 5000)  # > 64 KiB: several DATA chunks
    pushed = adb_host.run("-s", server.address, "push", str(source), "/sdcard/Download/note.txt")
    assert pushed.returncode == 0, pushed.stderr
    assert server.fs.read("/sdcard/Download/note.txt") == source.read_bytes()


# -- AdbDevice ----------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["stub", "sim"])
def test_adb_device_matches_a_directly_driven_twin(adb_host, served, kind):
    behind_adb, twin = new_device(kind), new_device(kind)
    device = adb_device(adb_host, served(behind_adb))
    assert device.screen_size() == twin.screen_size()

    def same_screen() -> str:
        xml = device.dump_xml()
        assert xml == twin.dump_xml()
        assert device.screenshot_png() == twin.screenshot_png()
        return xml

    import xml.etree.ElementTree as ET

    start = same_screen()
    assert ET.fromstring(start.encode()).tag == "hierarchy"
    # tap the centre of every clickable/checkable node in turn, on both devices
    seen = {start}
    root = ET.fromstring(start.encode())
    targets = [n.get("bounds") for n in root.iter("node")
               if n.get("clickable") == "true" or n.get("checkable") == "true"][:3]
    assert targets, "the start screen has nothing to tap"
    for bounds in targets:
        (l, t), (r, b) = [tuple(int(v) for v in p.split(",")) for p in bounds.strip("[]").split("][")]
        x, y = (l + r) // 2, (t + b) // 2
        device.tap(x, y)
        twin.tap(x, y)
        seen.add(same_screen())
    assert len(seen) > 1, "no tap changed the screen; the test would prove nothing"
    for action in (lambda d: d.input_text("wifi 5G"), lambda d: d.key("enter"), lambda d: d.key("back"),
                   lambda d: d.swipe(500, 1800, 500, 600, 300), lambda d: d.long_press(540, 1200, 900)):
        action(device)
        action(twin)
        same_screen()
    assert device.current_app() == twin.current_app()


def test_adb_device_actions_reach_the_phone(adb_host, served):
    phone = StubPhone()
    device = adb_device(adb_host, served(phone))
    device.launch("com.android.settings")
    assert device.current_app().package == "com.android.settings"
    before = device.dump_xml()
    assert 'checked="false"' in before
    device.tap(950, 350)  # the Wi-Fi toggle
    assert 'checked="true"' in device.dump_xml()
    text = "a b&c;d'e\"f$(g)|h<i>`j`\\k"
    device.input_text(text)
    device.long_press(10, 20, 900)
    device.key("back")
    assert phone.calls[-3:] == [("text", text), ("long_press", 10, 20, 900), ("key", "back")]
    assert device.current_app().package == "com.google.android.apps.nexuslauncher"


def test_adb_device_info_launch_and_reset(adb_host, served):
    phone = StubPhone()
    device = adb_device(adb_host, served(phone), app_package="com.android.settings", reset="pm-clear")
    info = device.info(("com.android.settings", "com.example.absent"))
    assert (info.model, info.manufacturer, info.os_version, info.sdk) == ("Pixel 7", "Google", "13", "33")
    assert info.app_versions == {"com.android.settings": "13"}
    assert info.serial == "stub-1" != device.serial  # the phone's ro.serialno, not its adb address
    device.launch("com.android.settings", ".wifi.WifiSettings")
    app = device.current_app()
    assert (app.package, app.activity) == ("com.android.settings", ".wifi.WifiSettings")
    # a missing app is the page's failed action, as on the in-process simulator, not a broken device
    with pytest.raises(AppNotInstalled, match="com.example.absent") as missing:
        device.launch("com.example.absent")
    assert not isinstance(missing.value, DeviceError)
    phone.wifi = True
    device.reset()
    assert phone.wifi is False  # pm clear reached the device
    assert ("reset", "com.android.settings") in phone.calls
    assert device.current_app() == type(app)("com.android.settings", ".Settings")  # relaunched


def test_dump_retries_on_idle_state_errors(adb_host, served):
    phone = StubPhone()
    server = served(phone)
    device = adb_device(adb_host, server, dump_retries=3)
    server.fail_next_dumps(2)
    assert device.dump_xml() == phone.dump_xml()
    assert server.shell.pending_dump_failures == 0
    server.fail_next_dumps(5, "ERROR: null root node returned by UiTestAutomationBridge.")
    with pytest.raises(DeviceError, match="null root node") as caught:
        adb_device(adb_host, server, dump_retries=1).dump_xml()
    assert server.address in str(caught.value) and "2 attempts" in str(caught.value)


def test_killed_device_server_raises_device_error_not_a_hang(adb_host, served):
    server = served(StubPhone())
    device = adb_device(adb_host, server, timeout=10.0)
    assert device.screen_size() == (1080, 2400)
    server.close()  # the phone vanishes: listener and connections gone
    started = time.monotonic()
    for call in (device.dump_xml, device.screenshot_png, lambda: device.tap(1, 1)):
        with pytest.raises(DeviceError) as caught:
            call()
        assert server.address in str(caught.value)
    assert time.monotonic() - started < 30


def test_bad_serial_and_missing_adb_server(adb_host):
    with pytest.raises(DeviceError, match="no-such-phone"):
        AdbDevice("no-such-phone", adb_port=adb_host.port, timeout=1.0)
    from support_adb import free_port

    with pytest.raises(DeviceError, match="no adb server"):
        AdbDevice("x", adb_port=free_port(), start_server=False)
    with pytest.raises(DeviceError, match="reset mode"):
        AdbDevice("x", adb_port=adb_host.port, reset="reboot")  # type: ignore[arg-type]
    with pytest.raises(DeviceError, match="snapshot_name"):
        AdbDevice("x", adb_port=adb_host.port, reset="snapshot")


def test_with_no_adb_server_running_the_device_starts_one_on_the_port_adb_is_told(no_adb_server):
    """A fresh machine: nothing listens yet. ANDROID_ADB_SERVER_PORT names the port, as for adb itself."""
    from execution.adb_server import server_address

    assert server_address() == ("127.0.0.1", no_adb_server.port)
    with AdbDeviceServer(StubPhone()) as phone:
        device = AdbDevice(phone.address, timeout=20.0)  # no adb_port: the environment's
        try:
            assert (device.adb_host, device.adb_port) == ("127.0.0.1", no_adb_server.port)
            assert no_adb_server.listening()
            assert device.screen_size() == (1080, 2400)
            # the server is adb's own, as `adb devices` on that port shows
            assert phone.address in no_adb_server.run("devices").stdout.decode()
            # a second device on the running server starts nothing
            again = AdbDevice(phone.address, adb_port=no_adb_server.port, timeout=20.0)
            assert again.current_app().package == "com.google.android.apps.nexuslauncher"
        finally:
            device.close()
            no_adb_server.run("disconnect", phone.address)


def test_a_missing_remote_adb_server_is_an_error_naming_the_command(no_adb_server):
    # 127.0.0.2 answers at once (loopback) but is not this machine's adb address: adb could not start it
    with pytest.raises(DeviceError) as caught:
        AdbDevice("phone", adb_host="127.0.0.2", adb_port=no_adb_server.port, timeout=2.0)
    message = str(caught.value)
    assert f"adb -a -P {no_adb_server.port} nodaemon server" in message and "127.0.0.2" in message
    assert not no_adb_server.listening()  # nothing was started here


def test_the_adb_server_address_follows_adb_s_own_rules(monkeypatch):
    from execution.adb_server import server_address

    monkeypatch.delenv("ANDROID_ADB_SERVER_ADDRESS", raising=False)
    monkeypatch.delenv("ANDROID_ADB_SERVER_PORT", raising=False)
    assert server_address() == ("127.0.0.1", 5037)
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", "5099")
    monkeypatch.setenv("ANDROID_ADB_SERVER_ADDRESS", "10.0.0.7")
    assert server_address() == ("10.0.0.7", 5099)
    assert server_address("127.0.0.1", 6000) == ("127.0.0.1", 6000)  # the config wins
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", "port")
    with pytest.raises(DeviceError, match="ANDROID_ADB_SERVER_PORT"):
        server_address()


def test_open_device_adb_spec(adb_host, served):
    server = served(StubPhone())
    with open_device(f"adb:{server.address}", adb_port=adb_host.port, timeout=20.0) as device:
        assert device.spec == f"adb:{server.address}"
        assert device.screen_size() == (1080, 2400)


def test_escape_input_text():
    assert escape_input_text("hello world") == "hello%sworld"
    assert escape_input_text("a&b") == "'a&b'"
    assert escape_input_text("it's") == "'it'\"'\"'s'"


def test_screenshot_is_a_valid_png_of_the_right_size(adb_host, served):
    from PIL import Image

    phone = StubPhone()
    device = adb_device(adb_host, served(phone))
    image = Image.open(io.BytesIO(device.screenshot_png()))
    image.verify()
    assert image.size == (108, 240)


class _FrozenPhone(StubPhone):
    """A phone whose UI dump blocks until released (a wedged uiautomator)."""

    def __init__(self) -> None:
        super().__init__()
        import threading

        self.entered = threading.Event()
        self.release = threading.Event()

    def dump_xml(self) -> str:
        self.entered.set()
        self.release.wait(30)
        return super().dump_xml()


def test_connection_lost_mid_command_raises(adb_host, served):
    import threading

    phone = _FrozenPhone()
    server = served(phone)
    device = adb_device(adb_host, server, timeout=20.0)
    errors: list[BaseException] = []
    worker = threading.Thread(target=lambda: _capture(device.dump_xml, errors))
    worker.start()
    try:
        assert phone.entered.wait(20)
        server.drop_connections()  # the network goes away while the command runs
        worker.join(25)
        assert not worker.is_alive(), "dump_xml hung after the connection dropped"
    finally:
        phone.release.set()
    assert len(errors) == 1 and isinstance(errors[0], DeviceError)
    assert "uiautomator dump" in str(errors[0])


def test_unresponsive_device_times_out(adb_host, served):
    phone = _FrozenPhone()
    device = adb_device(adb_host, served(phone), timeout=1.5)
    started = time.monotonic()
    try:
        with pytest.raises(DeviceError, match="uiautomator dump"):
            device.dump_xml()
    finally:
        phone.release.set()
    assert time.monotonic() - started < 15


def _capture(call, errors: list) -> None:
    try:
        call()
    except BaseException as exc:  # noqa: BLE001 - handed to the test thread
        errors.append(exc)


@pytest.mark.parametrize("reset_mode", ["force-stop", "pm-clear"])
def test_adb_device_on_the_simulator_reports_and_resets_like_simdevice(adb_host, served, reset_mode):
    behind_adb, twin = new_device("sim"), new_device("sim")
    package = twin.world.app.package
    device = adb_device(adb_host, served(behind_adb), reset=reset_mode, app_package=package)
    got, want = device.info((package,)), twin.info((package,))
    assert (got.model, got.manufacturer, got.os_version, got.sdk, got.app_versions) == \
        (want.model, want.manufacturer, want.os_version, want.sdk, want.app_versions)
    assert got.app_versions, "the world's app should report a version"
    device.launch(package)
    twin.launch(package)
    assert device.current_app() == twin.current_app()
    start = device.dump_xml()
    assert start == twin.dump_xml()
    _tap_first_clickable(device, start)  # move away from the start screen
    device.reset()
    twin.reset(package)
    assert device.current_app().package == package
    if reset_mode == "pm-clear":  # data cleared and relaunched: exactly a fresh start
        assert device.current_app() == twin.current_app()
        assert device.dump_xml() == twin.dump_xml()


def _tap_first_clickable(device, xml: str) -> None:
    import xml.etree.ElementTree as ET

    for node in ET.fromstring(xml.encode()).iter("node"):
        if node.get("clickable") == "true":
            (l, t), (r, b) = [tuple(int(v) for v in p.split(",")) for p in node.get("bounds").strip("[]").split("][")]
            device.tap((l + r) // 2, (t + b) // 2)
            return


def test_adbutils_helpers_work_unchanged(adb_host, served):
    """adbutils' own conveniences parse our output exactly as they parse a phone's."""
    from execution.adb_server import adb_client

    phone = StubPhone()
    server = served(phone)
    d = adb_client("127.0.0.1", adb_host.port, 20).device(server.address)
    assert d.prop.model == "Pixel 7"
    assert d.getprop("ro.build.version.release") == "13"
    assert tuple(d.window_size()) == (1080, 2400)
    assert d.screenshot().size == (108, 240)  # `shell:screencap -p` must be binary-clean
    assert d.dump_hierarchy() == phone.dump_xml()
    phone.package, phone.activity = "com.android.settings", ".Settings"
    current = d.app_current()
    assert (current.package, current.activity) == ("com.android.settings", ".Settings")
    assert d.app_info("com.android.settings").version_name == "13"
    assert d.shell2("echo x; false", v2=False).returncode == 1  # the `; echo X4EXIT:$?` trick
    assert d.shell2("exit 5", v2=True).returncode == 5
    d.sync.push(b"abc", "/data/local/tmp/x.bin")
    assert d.sync.read_bytes("/data/local/tmp/x.bin") == b"abc"
    assert "x.bin" in [f.path for f in d.sync.list("/data/local/tmp")]
    d.click(950, 350)
    d.send_keys("hello there")
    d.keyevent("KEYCODE_HOME")
    assert phone.calls[-3:] == [("tap", 950, 350), ("text", "hello there"), ("key", "home")]


def test_adb_device_without_shell_v2_still_gets_exit_statuses(adb_host, served):
    """An old phone (no shell_v2): AdbDevice falls back to the legacy shell and still sees failures."""
    phone = StubPhone()
    device = adb_device(adb_host, served(phone, features=()))
    assert device._shell_v2 is False
    device.tap(950, 350)
    assert phone.wifi is True
    with pytest.raises(DeviceError, match="exited 1"):
        device.launch("com.example.absent", ".Main")  # `am start` fails on the phone
    assert device.dump_xml() == phone.dump_xml()


def test_skip_unchanged_dumps_answers_known_screens_without_waiting_and_never_stale(adb_host, served):
    if not sim_available():
        pytest.skip("the simulator is not there yet")
    from execution.adb_device import forget_screens

    forget_screens()  # screens another test's phone of this build made known would be skipped at once
    behind_adb, twin = new_device("sim"), new_device("sim")
    shots = []
    original = behind_adb.screenshot_png
    behind_adb.screenshot_png = lambda: shots.append(1) or original()
    device = adb_device(adb_host, served(behind_adb), skip_unchanged_dumps=True)

    home = device.dump_xml()
    assert home == twin.dump_xml() and len(shots) == 1          # the screenshot came with the dump
    assert device.screenshot_png() == twin.screenshot_png() and len(shots) == 1  # ... and is reused
    assert device.dump_xml() == home and device.skipped_dumps == 0  # a second dump agrees: now known
    assert device.dump_xml() == home and device.skipped_dumps == 1  # a known screen: not waited for

    import xml.etree.ElementTree as ET

    root = ET.fromstring(home.encode())
    node = next(n for n in root.iter("node") if n.get("clickable") == "true" and n.get("text"))
    (l, t), (r, b) = [tuple(int(v) for v in p.split(",")) for p in node.get("bounds").strip("[]").split("][")]
    for d in (device, twin):
        d.tap((l + r) // 2, (t + b) // 2)
    # after input the cached screenshot is gone and the new screen is dumped, not served from memory
    assert device.screenshot_png() == twin.screenshot_png()
    opened = device.dump_xml()
    assert opened == twin.dump_xml() != home and device.skipped_dumps == 1
    for d in (device, twin):
        d.key("back")
    # back on the known home screen: answered from the known dump, which is the phone's real dump
    assert device.dump_xml() == twin.dump_xml() == home and device.skipped_dumps == 2
    device.close()  # collects the dump still running on the phone
    assert device.dumps == 5  # every dump was still sent; the skipped ones finished in the background


def test_a_screen_one_phone_made_known_is_known_to_the_other_phones_of_its_build(adb_host, served):
    """A farm of like phones learns each screen once: the second phone skips the dump of a screen
    the first one dumped twice, and still gets that phone's real dump."""
    if not sim_available():
        pytest.skip("the simulator is not there yet")
    from execution.adb_device import forget_screens

    forget_screens()
    first = adb_device(adb_host, served(new_device("sim")), skip_unchanged_dumps=True)
    second = adb_device(adb_host, served(new_device("sim")), skip_unchanged_dumps=True)
    home = first.dump_xml()
    assert first.dump_xml() == home and first.skipped_dumps == 0  # two agreeing dumps: known
    assert second.dump_xml() == home and second.skipped_dumps == 1  # known to the other phone too
    first.close()
    second.close()
    assert second.dumps == 1  # the dump was still sent, and collected on close


def test_launching_the_app_a_reset_just_launched_sends_nothing_until_the_next_input(adb_host, served):
    phone = StubPhone()
    device = adb_device(adb_host, served(phone), app_package="com.android.settings")
    device.reset()
    launches = phone.calls.count(("launch", "com.android.settings", None))
    device.launch("com.android.settings")  # the agent's launch after the reset: already in front
    assert phone.calls.count(("launch", "com.android.settings", None)) == launches
    device.key("back")
    device.launch("com.android.settings")  # after input it is launched again
    assert phone.calls.count(("launch", "com.android.settings", None)) == launches + 1
