"""Steps outside the app: the home screen and app drawer, the quick settings panel, Back/Home/Menu keys.

Driven on the imported OnePlus world through the Device interface (and, at the end, over the
ADB wire with the shell commands a real phone takes); state variables are read only as labels.
"""

from __future__ import annotations

import pytest
from support_worlds import centre, find, nodes, tap_text, texts

from phonesim.device import SimDevice
from phonesim.world import load_world

ONEPLUS = "imported/oneplus-settings-android11"
PACKAGE = "com.android.settings"
LAUNCHER = "net.oneplus.launcher"


@pytest.fixture(scope="module")
def world():
    return load_world(ONEPLUS)


@pytest.fixture
def device(world) -> SimDevice:
    dev = SimDevice(world)
    dev.reset(PACKAGE)  # episodes start in the app, as the runner does
    return dev


def _packages(device) -> set[str]:
    return {n.get("package") for n in nodes(device)}


def _tile(device, label: str):
    return next((n for n in nodes(device) if n.get("class") == "android.widget.Switch"
                 and n.get("content-desc") == label), None)


def _pull_down(device) -> None:
    w, h = device.screen_size()
    device.swipe(w // 2, 5, w // 2, h // 2)  # from the top edge


def test_home_key_shows_the_launcher_with_settings_and_tapping_it_resumes_the_app(device):
    tap_text(device, "Display")
    device.key("home")
    assert device.current_app().package == LAUNCHER
    assert _packages(device) == {LAUNCHER}
    icon = find(device, "Settings")
    assert icon is not None and icon.get("clickable") == "true"
    assert find(device, "Firefox") is None  # only some apps have a home-screen icon
    device.tap(*centre(icon))
    assert device.current_app().package == PACKAGE and device.simulator.screen_id == "display_settings"
    device.key("back")
    device.key("back")  # back on the app's first page closes it
    assert device.current_app().package == LAUNCHER


def test_swipe_up_on_the_home_screen_opens_the_app_drawer_with_every_app(device):
    device.key("home")
    w, h = device.screen_size()
    device.swipe(w // 2, h - 300, w // 2, h // 3)
    assert device.current_app().package == LAUNCHER
    labels = [n.get("text") for n in nodes(device) if n.get("clickable") == "true" and n.get("text")]
    assert {"Settings", "Firefox", "WhatsApp", "Chrome"} <= set(labels)
    assert labels == sorted(labels, key=str.lower)  # A to Z
    device.key("back")
    assert find(device, "Firefox") is None and find(device, "Settings") is not None  # back on the home screen
    device.swipe(w // 2, h - 300, w // 2, h // 3)
    tap_text(device, "Settings")
    assert device.current_app().package == PACKAGE


def test_swipe_down_from_the_top_shows_quick_settings_tiles_and_the_gear(device):
    _pull_down(device)
    for label in ("Wi-Fi", "Bluetooth", "Airplane mode", "Flashlight", "Dark mode"):
        tile = _tile(device, label)
        assert tile is not None, label
        assert tile.get("checkable") == "true" and tile.get("package") == "com.android.systemui"
    assert find(device, "Settings", attr="content-desc") is not None
    device.key("back")
    assert _tile(device, "Wi-Fi") is None and device.current_app().package == PACKAGE


def test_the_wifi_tile_and_the_wifi_switch_are_one_setting(device):
    def wifi_switch_in_app() -> bool:
        row = next(n for n in nodes(device) if n.get("text") == "Wi‑Fi")  # OnePlus writes Wi‑Fi with U+2011
        parent = row.getparent()
        while parent is not None and not any(c.get("class") == "android.widget.Switch" for c in parent.iter("node")):
            parent = parent.getparent()
        switch = next(c for c in parent.iter("node") if c.get("class") == "android.widget.Switch")
        return switch.get("checked") == "true"

    tap_text(device, "Wi-Fi & network")
    before = wifi_switch_in_app()
    _pull_down(device)
    assert (_tile(device, "Wi-Fi").get("checked") == "true") == before
    device.tap(*centre(_tile(device, "Wi-Fi")))
    assert (_tile(device, "Wi-Fi").get("checked") == "true") == (not before)  # the panel stays open
    device.key("back")
    assert wifi_switch_in_app() == (not before)
    assert device.simulator.state["main_toggle_wifi"] == (not before)  # label only
    # and the other way: the app's switch shows in the tile
    switch = next(n for n in nodes(device) if n.get("class") == "android.widget.Switch")
    device.tap(*centre(switch))
    _pull_down(device)
    assert (_tile(device, "Wi-Fi").get("checked") == "true") == before


def test_the_dark_mode_tile_meets_the_same_goal_as_the_dark_mode_switch(device):
    _pull_down(device)
    device.tap(*centre(_tile(device, "Dark mode")))
    assert device.simulator.goal_satisfied("dark_mode_on")  # label only


def test_a_long_press_on_a_tile_opens_its_settings_page(device):
    device.key("home")
    _pull_down(device)
    device.long_press(*centre(_tile(device, "Bluetooth")))
    assert device.current_app().package == PACKAGE
    assert device.simulator.screen_id == "bluetooth_screen"
    assert "Bluetooth" in texts(device)


def test_the_menu_key_opens_the_overflow_menu_and_does_nothing_without_one():
    dev = SimDevice.open("clock-app")
    dev.reset(dev.world.app.package)
    before = dev.dump_xml()
    dev.key("menu")
    assert dev.dump_xml() != before  # the overflow menu ("More options") is open
    assert dev.simulator.windows()[-1].kind == "dialog"
    dev.key("back")
    settings = SimDevice.open(ONEPLUS)
    settings.reset(PACKAGE)
    before = settings.dump_xml()
    settings.key("menu")  # Settings pages have no overflow menu here
    assert settings.dump_xml() == before


def test_adb_keyevents_swipes_and_statusbar_commands_drive_the_same_screens(adb_host):
    from execution.adb_device import AdbDevice
    from phonesim.adb_server import AdbDeviceServer

    sim = SimDevice.open(ONEPLUS)
    sim.reset(PACKAGE)
    server = AdbDeviceServer(sim)
    try:
        adb_host.connect(server.address)
        dev = AdbDevice(server.address, adb_port=adb_host.port, timeout=20.0, retry_delay=0.05)
        assert dev.shell("input keyevent KEYCODE_HOME")[0] == 0
        assert dev.current_app().package == LAUNCHER
        w, h = dev.screen_size()
        assert dev.shell(f"input swipe {w // 2} {h - 300} {w // 2} {h // 3} 300")[0] == 0
        assert find(dev, "Firefox") is not None  # the app drawer
        assert dev.shell("input keyevent KEYCODE_BACK")[0] == 0
        assert dev.shell("cmd statusbar expand-settings")[0] == 0
        assert _tile(dev, "Wi-Fi") is not None
        assert dev.shell("cmd statusbar collapse")[0] == 0
        assert _tile(dev, "Wi-Fi") is None
        assert dev.shell("input keyevent KEYCODE_MENU")[0] == 0
        assert dev.shell("input keyevent 82")[0] == 0
    finally:
        server.close()
