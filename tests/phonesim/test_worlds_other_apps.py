"""Other apps' screens that Settings opens: Gboard's settings and TalkBack (other_app_screens.py).

Each test drives the world imported from the real decoded OnePlus APK with taps on what the
dump shows, as a user would, and reads the outcome from the labels and switches on screen.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support_worlds import centre, find, nodes, tap_text, texts

from phonesim.device import SimDevice
from phonesim.worlds.apk_map import parse_apk
from phonesim.worlds.apk_world import build_apk_world
from phonesim.worlds.coverage import apk_coverage

PACKAGE = "com.android.settings"


@pytest.fixture(scope="module")
def imported(shared_dir: Path):
    uimap = parse_apk(shared_dir / "apps" / "oneplus-settings-android11")
    doc, world = build_apk_world(uimap, name="oneplus-settings-android11")
    return uimap, world


@pytest.fixture
def device(imported) -> SimDevice:
    dev = SimDevice(imported[1])
    dev.reset(PACKAGE)
    return dev


def _switch_of(device, title: str) -> bool:
    """The checked state of the Switch in the clickable row titled ``title``."""
    for row in nodes(device):
        inner = list(row.iter("node"))
        if row.get("clickable") == "true" and any(n.get("text") == title for n in inner):
            switch = next((n for n in inner if n.get("class") == "android.widget.Switch"), None)
            if switch is not None:
                return switch.get("checked") == "true"
    raise AssertionError(f"no switch row {title!r}; texts: {texts(device)}")


def _row_texts(device, title: str) -> list[str]:
    """Every text of the clickable row titled ``title`` (its title and summary)."""
    for row in nodes(device):
        inner = [n.get("text") for n in row.iter("node") if n.get("text")]
        if row.get("clickable") == "true" and title in inner:
            return inner
    raise AssertionError(f"no row {title!r}; texts: {texts(device)}")


def _open_keyboard_list(device) -> None:
    tap_text(device, "System")
    tap_text(device, "Languages\u00a0& input")  # the APK's string has a no-break space
    tap_text(device, "Virtual Keyboard")


def test_gboard_is_listed_under_virtual_keyboard_and_opens_its_settings(device):
    _open_keyboard_list(device)
    shown = texts(device)
    assert "Gboard" in shown and "Manage keyboards" in shown, shown
    tap_text(device, "Gboard")
    shown = texts(device)
    for row in ("Languages", "Preferences", "Theme", "Text correction", "Glide typing", "Voice typing"):
        assert row in shown, shown


def test_auto_correction_can_be_turned_off(device):
    _open_keyboard_list(device)
    tap_text(device, "Gboard")
    tap_text(device, "Text correction")
    for label in ("Show suggestion strip", "Next-word suggestions", "Block offensive words", "Auto-correction"):
        assert label in texts(device)
    assert _switch_of(device, "Auto-correction") is True
    assert _switch_of(device, "Show suggestion strip") is True
    tap_text(device, "Auto-correction")
    assert _switch_of(device, "Auto-correction") is False
    assert _switch_of(device, "Show suggestion strip") is True  # only the tapped switch changed


def test_preferences_has_keypress_switches(device):
    _open_keyboard_list(device)
    tap_text(device, "Gboard")
    tap_text(device, "Preferences")
    assert _switch_of(device, "Number row") is False
    tap_text(device, "Number row")
    assert _switch_of(device, "Number row") is True
    assert "Vibrate on keypress" in texts(device)


def test_talkback_turns_on_only_through_the_allow_dialog(device):
    tap_text(device, "System")
    tap_text(device, "Accessibility")
    tap_text(device, "TalkBack")
    assert _switch_of(device, "Use TalkBack") is False
    assert "Settings" in texts(device)
    # Deny leaves it off
    tap_text(device, "Use TalkBack")
    assert "Allow TalkBack to have full control of your device?" in texts(device)
    tap_text(device, "Deny")
    assert _switch_of(device, "Use TalkBack") is False
    # Allow turns it on
    tap_text(device, "Use TalkBack")
    tap_text(device, "Allow")
    assert find(device, "Allow TalkBack to have full control of your device?") is None
    assert _switch_of(device, "Use TalkBack") is True
    # turning it off asks to stop
    tap_text(device, "Use TalkBack")
    assert "Stop TalkBack?" in texts(device)
    tap_text(device, "Stop")
    assert _switch_of(device, "Use TalkBack") is False


def test_talkback_row_shows_the_service_state(device):
    tap_text(device, "System")
    tap_text(device, "Accessibility")
    assert _row_texts(device, "TalkBack") == ["TalkBack", "Off"]
    tap_text(device, "TalkBack")
    tap_text(device, "Use TalkBack")
    tap_text(device, "Allow")
    device.key("back")
    assert _row_texts(device, "TalkBack") == ["TalkBack", "On"]
    device.tap(*centre(find(device, "TalkBack")))
    tap_text(device, "Settings")
    assert "TalkBack settings" in texts(device)


def test_coverage_counts_the_other_app_screens(imported):
    report = apk_coverage(imported[0])
    built = report["built_from_aosp_behaviour"]
    assert built["other_app_screens"] == 11  # Gboard: settings + 8 pages; TalkBack: service + settings
    assert {"Gboard", "TalkBack"} <= {b["element"] for b in report["built_links"]}
