"""An unresolved two-target switch row of the OnePlus APK keeps its switch instead of opening an empty page."""

from __future__ import annotations

from pathlib import Path

from phonesim.worlds.apk_map import parse_apk
from phonesim.worlds.apk_world import build_apk_world


def test_a_master_switch_row_whose_page_is_another_apps_toggles_in_place(shared_dir: Path):
    # res/xml/network_and_internet.xml: MasterSwitchPreference oneplus_wifi_calling_plus, whose <intent>
    # names com.oneplus.sprint.callingplus (not in this APK)
    uimap = parse_apk(shared_dir / "apps" / "oneplus-settings-android11")
    row = next(el for el in uimap.screens["network_and_internet"].elements if el.key == "oneplus_wifi_calling_plus")
    assert row.kind == "switch" and row.unresolved and "callingplus" in row.unresolved
    doc, _ = build_apk_world(uimap, name="oneplus-settings-android11")
    screen = next(s for s in doc["screens"] if s["id"] == "network_and_internet")
    node = next(n for n in screen["nodes"] if n["id"].endswith(".oneplus_wifi_calling_plus"))
    assert "switch" in node and "on_click" not in node  # a tap toggles the row's own switch
    assert not any(s["id"].endswith("oneplus_wifi_calling_plus__unresolved") for s in doc["screens"])
    # still reported as a link the import could not follow
    assert any(u.element == row.title and u.screen == "network_and_internet" for u in uimap.unresolved)
