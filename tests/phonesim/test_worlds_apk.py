"""The OnePlus Settings APK import: UI map, world, simulator behaviour, coverage, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support_worlds import find, tap_text, texts
from typer.testing import CliRunner

from phonesim.device import SimDevice
from phonesim.world import parse_world
from phonesim.worlds import build_ui_map
from phonesim.worlds.apk_map import StringTable, parse_apk, xml_for_class
from phonesim.worlds.apk_world import build_apk_world
from phonesim.worlds.coverage import apk_coverage, tap_reachable
from verirank_core.errors import WorldError

PACKAGE = "com.android.settings"


@pytest.fixture(scope="module")
def apk_dir(shared_dir: Path) -> Path:
    return shared_dir / "apps" / "oneplus-settings-android11"


@pytest.fixture(scope="module")
def imported(apk_dir: Path):
    uimap = parse_apk(apk_dir)
    doc, world = build_apk_world(uimap, name="oneplus-settings-android11")
    return uimap, doc, world


@pytest.fixture
def device(imported) -> SimDevice:
    dev = SimDevice(imported[2])
    dev.reset(PACKAGE)
    return dev


def test_at_least_150_screens_are_reachable_from_home_by_tapping(imported):
    uimap, _, world = imported
    reached = tap_reachable(world)
    preference_screens = {sid for sid, s in uimap.screens.items() if s.kind == "page"}
    by_taps = preference_screens & set(reached)
    assert len(by_taps) >= 150
    # the simulator agrees with the map's own link graph
    assert by_taps == set(uimap.reachable(pages_only=True))
    assert reached["dark_mode_settings"] == ["Display", "Dark mode"]


def test_display_dark_mode_has_a_switch_that_flips_in_the_dump(device):
    tap_text(device, "Display")
    tap_text(device, "Dark mode")
    assert find(device, "Dark mode").get("class") == "android.widget.TextView"  # the toolbar title
    switch = next(n for n in _nodes(device) if n.get("class") == "android.widget.Switch")
    assert switch.get("checked") == "false"
    assert not device.simulator.goal_satisfied("dark_mode_on")
    tap_text(device, "Manual")  # OnePlus labels the dark mode switch "Manual"
    switch = next(n for n in _nodes(device) if n.get("class") == "android.widget.Switch")
    assert switch.get("checked") == "true"
    assert device.simulator.goal_satisfied("dark_mode_on")  # labeller's view only


def _nodes(device):
    from support_worlds import nodes

    return nodes(device)


def test_home_screen_reads_like_oneplus_settings(device):
    shown = texts(device)
    assert shown[0] == "Settings"
    for title in ("Wi-Fi & network", "Display", "Apps & Notifications", "Battery"):
        assert title in shown
    assert "About Phone" not in shown  # below the fold until the list scrolls
    tap_text(device, "About Phone")
    assert "About Phone" in texts(device)
    # android:order puts Display right after the two connection entries
    assert shown.index("Display") == shown.index("Bluetooth & device connection") + 1
    assert not any("@string/" in t or "%1$" in t for t in shown)


def test_strings_are_resolved_through_references_and_missing_ones_reported(apk_dir, imported):
    uimap, doc, _ = imported
    table = StringTable.load(apk_dir / "res" / "values")
    # oneplus_dark_mode is itself "@string/theme_switch_dark_mode_title"
    assert table.text("@string/oneplus_dark_mode", "test") == "Night Mode"
    assert table.text("@string/no_such_string_here", "test") == ""
    assert ("@string/no_such_string_here", "test") in table.missing
    assert not any("@string/" in json.dumps(s) for s in doc["screens"])
    assert uimap.missing_strings and all(name.startswith("@") for name, _ in uimap.missing_strings)
    keywords = uimap.screens["display_settings"].keywords
    assert keywords and all(k == k.strip() for k in keywords)


def test_string_escapes_and_format_args(tmp_path):
    values = tmp_path / "values"
    values.mkdir()
    (values / "strings.xml").write_text(
        '<resources><string name="a">Don\\\'t \\"panic\\"</string>'
        '<string name="b">"  kept  "</string><string name="c">Off / %1$s</string>'
        '<string name="d">@string/c</string><string name="e"><b>Bold</b> text</string>'
        '<string name="loop">@string/loop</string></resources>', encoding="utf-8")
    table = StringTable.load(values)
    assert table.text("@string/a", "t") == 'Don\'t "panic"'
    assert table.text("@string/b", "t") == "kept"
    assert table.text("@string/d", "t") == "Off / %s"
    assert table.text("@string/e", "t") == "Bold text"
    assert table.text("@string/loop", "t") == ""
    assert any("cycle" in where for _, where in table.missing)


def _mini_apk(root: Path, arrays: str = "") -> Path:
    """A tiny decoded APK: home -> Display (a list with real entries, a switch, a collapsed section)."""
    (root / "res" / "xml").mkdir(parents=True)
    (root / "res" / "values").mkdir(parents=True)
    ns = ('xmlns:android="http://schemas.android.com/apk/res/android" '
          'xmlns:settings="http://schemas.android.com/apk/res-auto"')
    (root / "res" / "xml" / "top_level_settings.xml").write_text(
        f'<PreferenceScreen {ns}><Preference android:title="@string/display" android:key="top_display" '
        'android:fragment="com.example.DisplaySettings"/>'
        '<Preference android:title="Sound" android:key="sound" android:fragment="com.example.Gone"/>'
        '</PreferenceScreen>', encoding="utf-8")
    (root / "res" / "xml" / "display_settings.xml").write_text(
        f'<PreferenceScreen {ns} android:title="@string/display" settings:initialExpandedChildrenCount="2">'
        '<ListPreference android:key="timeout" android:title="Screen timeout" android:summary="%s" '
        'android:entries="@array/timeout_entries" android:entryValues="@array/timeout_values" '
        'android:defaultValue="60"/>'
        '<SwitchPreference android:key="dark" android:title="Dark theme"/>'
        '<PreferenceCategory android:title="More"><SwitchPreference android:key="hidden" android:title="Hidden one"/>'
        '</PreferenceCategory></PreferenceScreen>', encoding="utf-8")
    (root / "res" / "values" / "strings.xml").write_text(
        '<resources><string name="display">Display</string><string name="s30">30 seconds</string></resources>',
        encoding="utf-8")
    (root / "res" / "values" / "arrays.xml").write_text(arrays or (
        '<resources><string-array name="timeout_entries"><item>@string/s30</item><item>1 minute</item>'
        '<item>2 minutes</item></string-array><string-array name="timeout_values"><item>30</item>'
        '<item>60</item><item>120</item></string-array></resources>'), encoding="utf-8")
    (root / "AndroidManifest.xml").write_text(
        '<manifest xmlns:android="http://schemas.android.com/apk/res/android" package="com.android.settings">'
        '<application/></manifest>', encoding="utf-8")
    (root / "fragment_xml.json").write_text(json.dumps(
        {"fragments": {"com.example.DisplaySettings": ["display_settings"]}, "missing": ["com.example.Gone"]}))
    return root


def test_a_list_preference_opens_a_dialog_with_the_array_entries(tmp_path):
    uimap = parse_apk(_mini_apk(tmp_path / "apk"))
    _, world = build_apk_world(uimap, name="mini")
    dev = SimDevice(world)
    dev.reset(PACKAGE)
    tap_text(dev, "Display")
    assert find(dev, "1 minute") is not None  # the summary shows the default entry (value 60)
    tap_text(dev, "Screen timeout")
    options = [n.get("text") for n in _nodes(dev) if n.get("class") == "android.widget.CheckedTextView"]
    assert options == ["30 seconds", "1 minute", "2 minutes"]
    tap_text(dev, "2 minutes")
    assert find(dev, "2 minutes") is not None and find(dev, "Screen timeout") is not None  # dialog closed
    assert uimap.unresolved[0].reason == "fragment Gone is not in this APK"


def test_an_advanced_section_is_collapsed_until_tapped(tmp_path, device):
    uimap = parse_apk(_mini_apk(tmp_path / "apk"))
    _, world = build_apk_world(uimap, name="mini")
    dev = SimDevice(world)
    dev.reset(PACKAGE)
    tap_text(dev, "Display")
    assert find(dev, "Hidden one") is None
    advanced = find(dev, "Advanced")
    assert advanced is not None
    # like AndroidX's ExpandButton, the summary names the hidden category rather than its children
    summary = find(dev, "More")
    assert summary is not None and summary.get("resource-id") == "android:id/summary"
    assert texts(dev).count("More") == 1  # the category header itself is hidden
    tap_text(dev, "Advanced")
    assert find(dev, "Hidden one") is not None and find(dev, "Advanced") is None
    dev.key("back")
    tap_text(dev, "Display")
    assert find(dev, "Hidden one") is None  # collapsed again on re-entry
    # the real OnePlus screen: Languages & input hides "Spell Checker" behind Advanced
    tap_text(device, "System")
    tap_text(device, "Languages\u00a0& input")
    assert find(device, "Spell Checker") is None
    tap_text(device, "Advanced")
    assert find(device, "Spell Checker") is not None


def test_oneplus_list_preferences_open_a_dialog_and_missing_entries_are_reported(device, imported):
    tap_text(device, "Display")
    tap_text(device, "Dark mode")
    tap_text(device, "Turn on automatically")
    assert device.simulator.window().kind == "dialog"
    assert find(device, "Cancel") is not None
    report = apk_coverage(imported[0])
    stub = [x for x in report["lists_without_entries"] if x["element"] == "Turn on automatically"]
    assert stub and "empty stub" in stub[0]["reason"]


def test_route_to_finds_the_shortest_path_by_label(imported):
    uimap, _, world = imported
    assert [h.tap for h in uimap.route_to("Dark mode")] == ["Display"]
    assert [h.tap for h in uimap.route_to("USB debugging")] == ["System", "Developer options"]
    assert uimap.route_to("Dark mode", start="display_settings") == []  # already shown there
    assert [h.tap for h in uimap.route_to("Manual", start="display_settings")] == ["Dark mode"]
    assert uimap.route_to("no such setting anywhere") is None
    hops = uimap.route("top_level_settings", "dark_mode_settings")
    assert [(h.screen, h.to) for h in hops] == [("top_level_settings", "display_settings"),
                                                ("display_settings", "dark_mode_settings")]
    # the map rebuilt from the world alone gives the same route
    from_world = build_ui_map(world)
    assert [h.tap for h in from_world.route_to("Dark mode")] == ["Display"]
    collapsed = from_world.route_to("Spell Checker")
    assert collapsed is not None and [h.tap for h in collapsed][-1] == "Languages\u00a0& input"


def test_class_name_rule_agrees_with_the_known_mapping(apk_dir):
    known = json.loads((apk_dir / "fragment_xml.json").read_text())["fragments"]
    names = {p.stem for p in (apk_dir / "res" / "xml").glob("*.xml")}
    agree = disagree = 0
    for cls, xmls in known.items():
        guess = xml_for_class(cls, names)
        if guess is not None and xmls:
            agree += guess == xmls[0]
            disagree += guess != xmls[0]
    assert agree >= 80 and disagree == 0


def test_coverage_report_has_the_expected_keys_and_plausible_numbers(imported):
    uimap, _, world = imported
    report = apk_coverage(uimap, world)
    for key in ("screens", "elements", "reachable_from_home", "unresolved", "missing_strings",
                "unresolved_by_reason", "lists_without_entries", "collapsed_sections"):
        assert key in report
    built = report["built_from_aosp_behaviour"]
    # preference XMLs, without the pages built from AOSP behaviour (test_worlds_code_built.py)
    assert 300 <= report["screens"] - built["new_screens"] - built["per_app_or_account_copies"] <= 349
    assert report["elements"] > 1000
    assert 150 <= report["reachable_from_home"] <= report["screens"]
    assert report["reachable_without_guessed_links"] <= report["reachable_from_home"]
    assert report["unresolved"] and all(u["reason"] for u in report["unresolved"])
    assert report["collapsed_sections"] >= 5
    assert sum(report["unresolved_by_reason"].values()) == len(report["unresolved"])
    assert set(report["world"]["goals"]) >= {"dark_mode_on"}


def test_malformed_input_gives_a_clear_error(tmp_path):
    with pytest.raises(WorldError, match="not a decoded APK"):
        parse_apk(tmp_path)
    apk = _mini_apk(tmp_path / "broken")
    (apk / "res" / "xml" / "display_settings.xml").write_text("<PreferenceScreen><oops>", encoding="utf-8")
    with pytest.raises(WorldError, match=r"display_settings\.xml: not readable XML"):
        parse_apk(apk)
    (apk / "res" / "xml" / "display_settings.xml").unlink()
    (apk / "fragment_xml.json").write_text("[]")
    with pytest.raises(WorldError, match="fragment_xml.json"):
        parse_apk(apk)
    with pytest.raises(WorldError, match="no such folder"):
        parse_apk(tmp_path / "missing")


def test_cli_import_apk_writes_a_loadable_world_and_prints_coverage(tmp_path):
    from verirank.cli import app

    apk = _mini_apk(tmp_path / "apk")
    out = tmp_path / "mini.json"
    result = CliRunner().invoke(app, ["worlds", "import-apk", str(apk), "--out", str(out), "--verify",
                                      "--report-json", str(tmp_path / "report.json")])
    assert result.exit_code == 0, result.output
    assert "reachable_from_home:" in result.output and "reachable_by_taps:" in result.output
    world = parse_world(json.loads(out.read_text()))
    assert world.app.launch_screen == "top_level_settings"
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["reachable_by_taps"] == report["reachable_from_home"] == 2
    bad = CliRunner().invoke(app, ["worlds", "import-apk", str(tmp_path / "nothing")])
    assert bad.exit_code == 2 and "error:" in bad.output


def test_committed_world_matches_a_fresh_import(repo_root, imported):
    committed = json.loads((repo_root / "datasets/worlds/imported/oneplus-settings-android11.json").read_text())
    fresh = imported[1]
    assert [s["id"] for s in committed["screens"]] == [s["id"] for s in fresh["screens"]]
    assert committed["state"] == json.loads(json.dumps(fresh["state"]))


# --- a world as complete as the phone: stock options for lists the decode left empty ---------

def test_lists_the_decode_left_empty_get_the_stock_aosp_options(imported):
    uimap, doc, world = imported
    sleep = next(el for s in uimap.screens.values() for el in s.elements if el.key == "screen_timeout")
    assert sleep.entries == ["15 seconds", "30 seconds", "1 minute", "2 minutes", "5 minutes", "10 minutes",
                             "30 minutes"]
    assert "packages/apps/Settings" in sleep.entries_source and "screen_timeout_entries" in sleep.entries_source
    # the source is recorded in the world, next to the options
    assert "screen_timeout_entries" in doc["state"]["screen_timeout"]["description"]
    # a vendor-only array stays empty and is still reported, never guessed
    report = apk_coverage(uimap, world)
    assert report["list_preferences"] == 88
    assert report["lists_with_options"] == report["lists_with_stock_options"] >= 20
    assert any(item["element"] == "Battery Style" for item in report["lists_without_entries"])


def test_go_to_display_sleep_and_choose_5_minutes_completes_on_the_imported_world(imported):
    from execution.agent import run_episode
    from execution.predict import HeuristicPredictor
    from verirank_core.execution_records import StopReason

    _, _, world = imported
    device = SimDevice(world)
    device.reset(PACKAGE)
    traj = run_episode(["Go to Display > Sleep and choose 5 minutes"], HeuristicPredictor(use_embeddings=False),
                       device, qid="q", url="https://example.org/sleep", app=PACKAGE)
    assert traj.stop_reason == StopReason.COMPLETED, traj.stop_reason
    assert device.simulator.state["screen_timeout"] == "5 minutes"  # label only


def test_the_notification_shade_gear_opens_settings(imported):
    from execution.uicontext import UIContext

    _, _, world = imported
    device = SimDevice(world)
    device.reset()  # the launcher
    w, h = device.simulator.screen_size()
    device.swipe(w // 2, 5, w // 2, h // 2)  # from the status bar down
    ui = UIContext.from_xml(device.dump_xml())
    gear = next(c for c in ui.controls if c.label == "Settings")
    assert gear.resource_id == "com.android.systemui:id/settings_button"
    device.tap(*gear.center)
    assert device.simulator.foreground == PACKAGE
    assert device.simulator.screen_id == world.app.launch_screen
    # back folds the shade away without leaving the app under it
    device.swipe(w // 2, 5, w // 2, h // 2)
    device.key("back")
    assert device.simulator.screen_id == world.app.launch_screen and "Settings" in texts(device)
    # a swipe that starts below the status bar scrolls the list instead
    device.swipe(w // 2, h // 2, w // 2, h // 4)
    assert "No notifications" not in texts(device)


@pytest.mark.parametrize("name", ["oneplus", "oneplus.json"])
def test_the_path_import_apk_prints_opens_as_a_sim_device_with_or_without_suffix(tmp_path, name):
    from execution.slots import device_opener
    from verirank.cli import app
    from verirank_core.config import load_config

    apk = _mini_apk(tmp_path / "apk")
    result = CliRunner().invoke(app, ["worlds", "import-apk", str(apk), "--out", str(tmp_path / name)])
    assert result.exit_code == 0, result.output
    written = [line.split()[1] for line in result.output.splitlines() if line.startswith("wrote ")]
    assert written == [str((tmp_path / name).resolve())]
    assert f"sim:{written[0]}" in result.output
    stem = str(tmp_path / "oneplus")
    for spec in (f"sim:{written[0]}", f"sim:{stem}"):  # the printed path, and the path without a suffix
        device = device_opener(load_config())(spec)
        try:
            assert device.world.app.launch_screen == "top_level_settings"
        finally:
            device.close()


# --- on/off bars that a fragment draws from a layout, for a setting no row shows as a switch ---

@pytest.mark.parametrize("screen, key, title, on", [
    ("location_settings", "location_switch_bar", "Use location", True),
    ("wifi_tether_settings", "wifi_tether_switch_bar", "Wi\u2011Fi hotspot", False),
])
def test_a_page_with_its_own_on_off_bar_shows_it_first(imported, screen, key, title, on):
    """Android 11 draws these bars in code (LocationSwitchBarController, WifiTetherSwitchBarController);
    the resources hold no row for them, yet a page's "turn off Use location" needs one."""
    uimap, doc, _ = imported
    bar = uimap.screens[screen].elements[0]
    assert (bar.key, bar.kind, bar.title, bar.default) == (key, "switch", title, on)
    assert "packages/apps/Settings" in bar.built_from and bar.widget == "SwitchBar"
    assert doc["state"][key]["initial"] is on


def test_turn_off_use_location_completes_on_the_imported_world(imported):
    from execution.agent import run_episode
    from execution.predict import HeuristicPredictor
    from verirank_core.execution_records import StopReason

    device = SimDevice(imported[2])
    device.reset(PACKAGE)
    traj = run_episode(["Open Settings and tap Location.", "Turn off Use location."],
                       HeuristicPredictor(use_embeddings=False), device, qid="q",
                       url="https://example.org/location", app=PACKAGE)
    assert traj.stop_reason == StopReason.COMPLETED, (traj.stop_reason, traj.stop_detail)
    assert device.simulator.state["location_switch_bar"] is False  # label only


# --- System navigation: an empty XML whose modes Android 11 lists in code ---

def test_system_navigation_lists_the_three_modes_with_3_button_chosen(imported):
    """SystemNavigationGestureSettings offers its modes in code; the APK's own strings name them."""
    uimap, doc, _ = imported
    modes = [e for e in uimap.screens["system_navigation_gesture_settings"].elements if e.kind == "radio"]
    assert [m.title for m in modes] == ["Gesture navigation", "2-button navigation", "3-button navigation"]
    assert [m.default for m in modes] == [False, False, True]
    assert all("SystemNavigationGestureSettings" in m.built_from for m in modes)


def test_a_skip_that_leads_nowhere_is_taken_back_on_the_imported_world(imported):
    """'Tap System and then Gestures and then System navigation': the device's cards read 'Gestures'
    as 'Buttons & gestures', which shows on the first screen, so System is skipped; that screen has
    no 'System navigation'. The agent goes back, looks for System after all (further down the home
    screen) and follows the page."""
    from execution.agent import run_episode
    from execution.predict import HeuristicPredictor
    from verirank_core.config import RunConfig
    from verirank_core.execution_records import DeviationKind

    agent = RunConfig().execution.agent.model_copy(update={"use_reflection": True, "use_knowledge": True})
    device = SimDevice(imported[2])
    device.reset(PACKAGE)
    traj = run_episode(["Open Settings.", "Tap System and then Gestures and then System navigation."],
                       HeuristicPredictor.from_config(agent.heuristic, agent=agent), device, qid="q",
                       url="https://example.org/gestures", app=PACKAGE)
    taps = [s.action.target_label for s in traj.steps if s.action.target_label and s.action.type.value == "click"]
    assert taps[-3:] == ["System", "Gestures", "System navigation"], taps
    assert any(s.deviation_kind == DeviationKind.SKIP.value for s in traj.steps)
    assert any(s.deviation_kind == DeviationKind.REFLECTION.value and s.action.target_label == "System"
               for s in traj.steps)
    assert "Gesture navigation" in texts(device)


@pytest.mark.parametrize("query, chosen", [
    ("how to turn on gesture navigation on android", "Gesture navigation"),
    ("how to switch to 2-button navigation on android", "2-button navigation"),
    (None, "Gesture navigation"),  # no question: any option of the list, the first
])
def test_the_readers_own_pick_follows_the_question(imported, query, chosen):
    """'Choose your new navigation option' leaves the pick to the reader, who takes what they asked for."""
    from execution.agent import run_episode
    from execution.predict import HeuristicPredictor
    from verirank_core.execution_records import DeviationKind, StopReason

    device = SimDevice(imported[2])
    device.reset(PACKAGE)
    traj = run_episode(["Open Settings and tap System > Gestures > System navigation.",
                        "Choose your new navigation option."],
                       HeuristicPredictor(use_embeddings=False), device, qid="q", url="https://example.org/nav",
                       app=PACKAGE, query=query)
    assert traj.stop_reason == StopReason.COMPLETED, (traj.stop_reason, traj.stop_detail)
    last = traj.steps[-1]
    assert (last.action.target_label, last.deviation_kind) == (chosen, DeviationKind.PLACEHOLDER.value)


def test_the_readers_pick_is_of_the_kind_the_page_names(imported):
    """'Tap the network you'd like to join' on Wi-Fi & network: the question's 'Wi-Fi calling' is no
    network, so it is not the pick; the list's first row is, as without a question."""
    from execution.agent import run_episode
    from execution.predict import HeuristicPredictor

    picks = []
    for query in ("how to enable wifi calling", None):
        device = SimDevice(imported[2])
        device.reset(PACKAGE)
        traj = run_episode(["Open Settings and tap Wi-Fi & network.", "Tap the network you'd like to join."],
                           HeuristicPredictor(use_embeddings=False), device, qid="q", url="https://example.org/w",
                           app=PACKAGE, query=query)
        picks.append(traj.steps[-1].action.target_label)
    assert picks[0] == picks[1] != "Wi-Fi calling"
