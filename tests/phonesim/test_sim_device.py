"""SimDevice behaves like a phone through the Device interface."""

from __future__ import annotations

import threading

import pytest
import support_sim
from lxml import etree

from verirank_core.device import AppInfo, Device
from execution.devices import open_device
from phonesim.device import SimDevice
from verirank_core.errors import AppNotInstalled, DeviceError, WorldError


def test_open_by_name_reports_world_versions():
    dev = open_device("sim:android13-settings")
    assert isinstance(dev, SimDevice) and isinstance(dev, Device)
    assert dev.spec == "sim:android13-settings"
    info = dev.info()
    assert (info.manufacturer, info.model, info.os_version, info.sdk) == ("Google", "Pixel 6", "13", "33")
    assert info.app_versions == {"com.android.settings": "13"}
    assert dev.info(("com.android.chrome", "com.missing")).app_versions == {"com.android.chrome": "114.0.5735.196"}
    assert dev.screen_size() == (1080, 2400)
    nine = open_device("sim:android9-settings")
    assert (nine.info().os_version, nine.info().sdk, nine.screen_size()) == ("9", "28", (1080, 1920))


def test_open_by_path_and_bad_specs(tmp_path):
    path = support_sim.write_world(tmp_path, support_sim.mini_world())
    dev = SimDevice.open(str(path), serial="emu-1")
    assert dev.serial == "emu-1" and dev.info().app_versions == {"com.example.settings": "2.1"}
    with pytest.raises(WorldError):
        open_device("sim:not-a-world")
    with pytest.raises(DeviceError, match="unknown option"):
        SimDevice.open(str(path), colour="red")


def test_drive_a_settings_task_through_the_device_interface():
    dev = open_device("sim:android13-settings")
    dev.reset("com.android.settings")
    assert dev.current_app() == AppInfo("com.android.settings", "com.android.settings.Settings")

    def tap_text(text: str) -> None:
        root = etree.fromstring(dev.dump_xml().encode("utf-8"))
        node = next(n for n in root.iter("node") if n.get("text") == text)
        x1, y1, x2, y2 = (int(v) for v in node.get("bounds").replace("][", ",").strip("[]").split(","))
        dev.tap((x1 + x2) // 2, (y1 + y2) // 2)

    tap_text("Display")
    assert dev.current_app().activity == "com.android.settings.SubSettings"
    tap_text("Screen timeout")
    tap_text("10 minutes")
    dev.key("back")
    assert "After 10 minutes of inactivity" in dev.dump_xml()
    assert dev.simulator.goal_satisfied("screen_timeout_10_minutes")  # labeller's view
    png = dev.screenshot_png()
    assert png.startswith(b"\x89PNG")
    dev.key("home")
    assert dev.current_app().package == "com.google.android.apps.nexuslauncher"
    dev.reset()
    assert not dev.simulator.goal_satisfied("screen_timeout_10_minutes")


def test_launch_errors_and_close():
    dev = open_device("sim:video-app")
    dev.launch("com.tubeview.android")
    assert dev.current_app().package == "com.tubeview.android"
    # a missing app is the page's problem, not a broken device
    with pytest.raises(AppNotInstalled, match="not installed") as missing:
        dev.launch("com.not.there")
    assert not isinstance(missing.value, DeviceError)
    with pytest.raises(DeviceError, match="not installed"):
        dev.reset("com.not.there")
    with dev:
        pass
    with pytest.raises(DeviceError, match="closed"):
        dev.dump_xml()


def test_concurrent_callers_are_serialised():
    dev = open_device("sim:android13-settings")
    dev.launch("com.android.settings")
    errors: list[BaseException] = []

    def worker(kind: int) -> None:
        try:
            for _ in range(40):
                if kind == 0:
                    etree.fromstring(dev.dump_xml().encode("utf-8"))
                elif kind == 1:
                    dev.swipe(540, 2000, 540, 800)
                    dev.swipe(540, 800, 540, 2000)
                else:
                    dev.tap(540, 500)
                    dev.key("back")
                    dev.launch("com.android.settings")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
