"""Settings isolation: reading `settings list`, and what a restore must put back or delete."""

from __future__ import annotations

from execution.isolation import SettingsSnapshot, diff_settings, parse_settings_list
from execution.sim.device import SimDevice


def test_parse_settings_list_keeps_equals_signs_and_multiline_values() -> None:
    text = "accessibility_enabled=0\nfont_scale=1.0\nlock_pattern=a=b\nnote=line one\nline two\nvolume_ring=5\n"
    assert parse_settings_list(text) == {
        "accessibility_enabled": "0", "font_scale": "1.0", "lock_pattern": "a=b",
        "note": "line one\nline two", "volume_ring": "5",
    }
    assert parse_settings_list("") == {}


def test_diff_puts_back_changed_and_removed_keys_and_deletes_added_ones() -> None:
    before = SettingsSnapshot({"system": {"a": "1", "b": "x", "gone": "y"}, "secure": {"s": "0"}})
    after = SettingsSnapshot({"system": {"a": "2", "b": "x", "new": "z"}, "secure": {"s": "0", "t": "1"}})
    puts, deletes = diff_settings(before, after)
    assert sorted(puts) == [("system", "a", "1"), ("system", "gone", "y")]
    assert sorted(deletes) == [("secure", "t"), ("system", "new")]
    puts, deletes = diff_settings(before, after, ignore=["system/a", "secure/t"])
    assert puts == [("system", "gone", "y")] and deletes == [("system", "new")]
    assert diff_settings(before, before) == ([], [])


def test_sim_device_snapshot_and_restore_undo_a_page() -> None:
    device = SimDevice.open("android13-settings")
    before = device.snapshot_settings()
    assert before.values["system"]["dark_theme"] == "0"
    device.settings_put("system", "dark_theme", "1")  # what a page that turns dark theme on leaves behind
    device.settings_put("global", "added_by_page", "1")
    assert device.simulator.state["dark_theme"] is True
    report = device.restore_settings(before)
    assert report.restored == ["system/dark_theme"] and report.deleted == ["global/added_by_page"]
    assert device.simulator.state["dark_theme"] is False
    assert device.snapshot_settings() == before
