"""Control distillation on real uiautomator dumps: labels, roles, merging, visibility."""

from __future__ import annotations

import pytest

from execution.distill import distill_controls, humanise_id
from execution.uicontext import UIContext
from execution.uitree import parse_hierarchy


def _ctx(shared_dir, name: str) -> UIContext:
    return UIContext.from_xml((shared_dir / "fixtures" / "uiautomator" / name).read_text("utf-8"))


def _by_label(ui: UIContext, label: str):
    found = [c for c in ui.controls if c.label == label]
    assert found, f"no control labelled {label!r}; have {[c.label for c in ui.controls]}"
    return found[0]


def test_clickable_rows_take_their_title_from_descendants(shared_dir):
    ui = _ctx(shared_dir, "test_asset_1.xml")  # Gmail "Set up email" provider list
    assert [c.label for c in ui.controls] == [
        "Google", "Outlook, Hotmail, and Live", "Yahoo", "Exchange and Office 365", "Other",
    ]
    assert all(c.label_source == "descendant" and c.actions == ("click",) for c in ui.controls)
    # the row is the control, not its TextView: the tap point is the row's centre
    assert _by_label(ui, "Yahoo").bounds == (0, 807, 1080, 951)


def test_switch_inside_a_settings_row_belongs_to_the_row(shared_dir):
    ui = _ctx(shared_dir, "trace_7_7.xml")  # Maps "Personal content"
    row = _by_label(ui, "Timeline emails")
    assert row.role == "switch"
    assert row.checked is False
    assert row.summary.startswith("Get highlights of your Timeline")
    assert row.bounds == (0, 346, 1080, 538)
    assert "toggle" in row.actions
    assert len(row.members) == 1 and row.members[0].short_class == "Switch"
    # the Switch widgets themselves are not separate controls
    assert not any(c.node.short_class == "Switch" for c in ui.controls)
    assert _by_label(ui, "Delete all Timeline data").role == "list item"
    assert _by_label(ui, "Navigate up").label_source == "desc"


def test_disabled_controls_are_dropped(shared_dir):
    before = _ctx(shared_dir, "trace_7_8.xml")  # Delete is disabled until the box is ticked
    after = _ctx(shared_dir, "trace_7_9.xml")
    assert "Delete" not in [c.label for c in before.controls]
    assert _by_label(after, "Delete").role == "button"
    assert _by_label(before, "I understand and want to delete.").checked is False
    assert _by_label(after, "I understand and want to delete.").checked is True


def test_controls_under_a_popup_are_covered(shared_dir):
    plain = _ctx(shared_dir, "trace_18_2.xml")
    popup = _ctx(shared_dir, "trace_18_3.xml")  # a lesson card drawn over the path
    hidden = (331, 1030, 515, 1201)  # a lesson bubble inside the card's area
    assert hidden in [c.bounds for c in plain.controls]
    assert hidden not in [c.bounds for c in popup.controls]
    assert _by_label(popup, "START +10 XP").role == "button"
    assert _by_label(popup, "Use basic phrases").summary == "Lesson 2 of 5"


def test_zero_area_and_offscreen_nodes_are_dropped(shared_dir):
    ui = _ctx(shared_dir, "trace_18_0.xml")  # a card_content with bounds [0,0][0,0]
    assert all(c.bounds[2] > c.bounds[0] and c.bounds[3] > c.bounds[1] for c in ui.controls)
    assert all(c.node.enabled for c in ui.controls)


def test_icon_with_only_a_resource_id_gets_a_readable_label(shared_dir):
    ui = _ctx(shared_dir, "trace_18_4.xml")
    quit_button = next(c for c in ui.controls if c.resource_id.endswith("quitButton"))
    assert quit_button.label == "quit button"
    assert quit_button.label_source == "resource_id"


def test_edit_fields_are_named_not_by_their_content(shared_dir):
    ui = _ctx(shared_dir, "trace_18_0.xml")
    edit = next(c for c in ui.controls if c.role == "edit")
    assert edit.label == "search bar"
    assert edit.value == "sustainable living"
    assert "input" in edit.actions
    maps = _ctx(shared_dir, "trace_7_3.xml")
    assert next(c for c in maps.controls if c.role == "edit").label == "Search here"


def test_scrollable_containers_and_tabs(shared_dir):
    ui = _ctx(shared_dir, "trace_18_2.xml")
    scrollers = [c for c in ui.controls if c.role == "scrollable"]
    assert scrollers and all({"swipe_up", "swipe_down"} <= set(c.actions) for c in scrollers)
    assert scrollers[0].label == "path"  # named by its id, not by its first row
    tabs = [c.label for c in ui.controls if c.role == "tab"]
    assert tabs == ["Learn Tab", "Leagues Tab", "Profile Tab", "Goals Tab", "News Tab"]
    assert "Learning" in [c.label for c in ui.controls]  # leaked numeric id removed


def test_chips_merge_their_checkable_label(shared_dir):
    ui = _ctx(shared_dir, "trace_7_2.xml")  # Maps filter chips: CompoundButton > Button
    chip = _by_label(ui, "Vegetarian options")
    assert chip.checked is True and chip.role == "checkbox"
    assert _by_label(ui, "Dine-in").checked is False


def test_no_control_lacks_a_label_when_a_descendant_has_text(shared_dir):
    paths = sorted((shared_dir / "fixtures" / "uiautomator").glob("*.xml"))
    assert paths, "no real uiautomator dumps found"
    for path in paths:
        ui = UIContext.from_xml(path.read_text("utf-8"))
        owners = {id(c.node) for c in ui.controls}
        for c in ui.controls:
            if c.label:
                continue
            stack = list(c.node.children)
            while stack:
                n = stack.pop()
                if id(n) in owners:
                    continue
                assert not (n.text or n.content_desc), f"{path.name}: unlabelled control over {n!r}"
                stack.extend(n.children)


def test_every_control_is_visible_enabled_and_actionable(shared_dir):
    paths = sorted((shared_dir / "fixtures" / "uiautomator").glob("*.xml"))
    assert paths, "no real uiautomator dumps found"
    for path in paths:
        ui = UIContext.from_xml(path.read_text("utf-8"))
        for c in ui.controls:
            x1, y1, x2, y2 = c.bounds
            assert 0 <= x1 < x2 <= ui.width and 0 <= y1 < y2 <= ui.height, (path.name, c)
            assert c.actions, (path.name, c)
            n = c.node
            assert n.enabled and (n.clickable or n.long_clickable or n.checkable or n.scrollable or n.editable)


@pytest.mark.parametrize("rid, expected", [
    ("com.app:id/search_button", "search button"),
    ("com.duolingo:id/tabLearn", "tab learn"),
    ("android:id/switch_widget", "switch widget"),
    ("quitButton", "quit button"),
    ("com.x:id/item_2", "item"),
])
def test_humanise_id(rid, expected):
    assert humanise_id(rid) == expected


def test_distill_is_a_pure_function_of_the_tree(shared_dir):
    xml = (shared_dir / "fixtures" / "uiautomator" / "trace_7_4.xml").read_text("utf-8")
    roots = parse_hierarchy(xml)
    a = [c.to_json() for c in distill_controls(roots, 1080, 1792)]
    b = [c.to_json() for c in distill_controls(roots, 1080, 1792)]
    assert a == b
    assert _by_label(UIContext.from_xml(xml), "Settings").role == "list item"


def test_a_seekbar_is_a_slider():
    # no shared dump holds one; this row is how Android's volume preferences dump a SeekBar
    xml = ('<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0">'
           '<node index="0" text="" resource-id="android:id/seekbar" class="android.widget.SeekBar" '
           'package="com.android.settings" content-desc="Media volume" checkable="false" checked="false" '
           'clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" '
           'long-clickable="false" password="false" selected="false" bounds="[147,499][933,625]" />'
           '</hierarchy>')
    [bar] = UIContext.from_xml(xml).controls
    assert (bar.role, bar.label, bar.actions) == ("slider", "Media volume", ("click",))
