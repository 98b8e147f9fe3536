"""The simulator behaves like a phone: layout, taps, switches, lists, dialogs, keys, apps, text."""

from __future__ import annotations

import pytest
import support_sim
from lxml import etree
from support_sim import find, tap

from execution.sim.layout import walk
from execution.sim.simulator import Simulator
from execution.sim.world import parse_world

PKG = "com.example.settings"


@pytest.fixture()
def sim() -> Simulator:
    s = Simulator(parse_world(support_sim.mini_world(), source="mini"))
    s.launch(PKG)
    return s


def _texts(sim: Simulator) -> list[str]:
    root = etree.fromstring(sim.dump_xml().encode("utf-8"))
    return [n.get("text") for n in root.iter("node") if n.get("text")]


def _node(sim: Simulator, text: str):
    root = etree.fromstring(sim.dump_xml().encode("utf-8"))
    return next(n for n in root.iter("node") if n.get("text") == text)


# ------------------------------------------------------------------ layout

def _check_bounds(node, parent_bounds) -> None:
    x1, y1, x2, y2 = node.bounds
    assert x1 <= x2 and y1 <= y2
    px1, py1, px2, py2 = parent_bounds
    assert px1 <= x1 and py1 <= y1 and x2 <= px2 and y2 <= py2, (node.cls, node.bounds, parent_bounds)
    for child in node.children:
        _check_bounds(child, node.bounds)


@pytest.mark.parametrize("screen", ["main", "display", "long", "rename", "timeout_dialog", "confirm"])
def test_layout_bounds_nest_and_rows_do_not_overlap(sim, screen):
    sim.open_screen(screen)
    win = sim.window()
    _check_bounds(win.root, (0, 0, 1080, 2400))
    if win.list_node is not None:
        rows = win.list_node.children
        assert rows, screen
        for above, below in zip(rows, rows[1:]):
            assert above.bounds[3] <= below.bounds[1], (above.bounds, below.bounds)
        # the list sits under the toolbar and above the navigation bar
        assert win.list_node.bounds[1] >= 63 and win.list_node.bounds[3] <= 2400 - 63


def test_rows_have_title_summary_and_switch_like_android(sim):
    support_sim.tap(sim, "Display")
    row = find(sim, "Dark theme")
    ids = [n.resource_id for n in walk(row)]
    assert {"android:id/title", "android:id/summary", "android:id/widget_frame", "android:id/switch_widget"} <= set(ids)
    switch = next(n for n in walk(row) if n.cls == "android.widget.Switch")
    # the switch sits at the right end of the row, vertically inside it
    assert switch.bounds[2] > 900 and row.bounds[1] <= switch.bounds[1] < switch.bounds[3] <= row.bounds[3]
    title = next(n for n in walk(row) if n.resource_id == "android:id/title")
    summary = next(n for n in walk(row) if n.resource_id == "android:id/summary")
    assert title.bounds[3] <= summary.bounds[1]


# ------------------------------------------------------------------ taps

def test_switch_row_toggles_state_and_dump(sim):
    tap(sim, "Display")
    assert sim.screen_id == "display"
    switch = lambda: next(n for n in etree.fromstring(sim.dump_xml().encode()).iter("node")
                          if n.get("class") == "android.widget.Switch")
    assert switch().get("checked") == "false"
    tap(sim, "Dark theme")
    assert sim.state["dark"] is True and switch().get("checked") == "true"
    assert "On" in _texts(sim)  # the summary template follows the state
    # tapping the Switch itself toggles it back (it is not clickable: the row gets the tap)
    x1, y1, x2, y2 = map(int, switch().get("bounds").replace("][", ",").strip("[]").split(","))
    sim.tap((x1 + x2) // 2, (y1 + y2) // 2)
    assert sim.state["dark"] is False and switch().get("checked") == "false"


def test_split_row_text_opens_page_and_switch_toggles(sim):
    row = find(sim, "Wi-Fi")
    sw = next(n for n in walk(row) if n.cls == "android.widget.Switch")
    assert sw.clickable
    sim.tap((sw.bounds[0] + sw.bounds[2]) // 2, (sw.bounds[1] + sw.bounds[3]) // 2)
    assert sim.state["wifi"] is False and sim.screen_id == "main"
    sim.tap(row.bounds[0] + 100, (row.bounds[1] + row.bounds[3]) // 2)
    assert sim.screen_id == "wifi"
    assert "HomeNet" not in _texts(sim)  # visible_if: wifi
    tap(sim, "Use Wi-Fi")
    assert "HomeNet" in _texts(sim)


def test_tap_on_nothing_or_disabled_changes_nothing(sim):
    before = sim.dump_xml()
    state = sim.state
    steps = sim.step_count
    sim.tap(540, 30)  # status bar
    sim.tap(5000, 5000)  # off screen
    disabled = find(sim, "Disabled row")
    assert not disabled.enabled
    sim.tap((disabled.bounds[0] + disabled.bounds[2]) // 2, (disabled.bounds[1] + disabled.bounds[3]) // 2)
    assert sim.dump_xml() == before and sim.state == state
    assert sim.step_count == steps + 3  # every input counts as a step, even one that does nothing


def test_hidden_row_appears_after_counter_taps(sim):
    assert "Secret" not in _texts(sim)
    for _ in range(5):
        tap(sim, "Build number")
    assert sim.state["taps"] == 3  # clamped to the variable's max
    tap(sim, "Secret")
    assert sim.screen_id == "secret"


def test_slider_tap_and_buttons(sim):
    tap(sim, "Display")
    bar = next(n for n in walk(sim.window().root) if n.cls == "android.widget.SeekBar")
    sim.tap(bar.bounds[2] - 2, (bar.bounds[1] + bar.bounds[3]) // 2)
    assert sim.state["size"] == "Large"
    tap(sim, "Decrease")
    tap(sim, "Decrease")
    tap(sim, "Decrease")
    assert sim.state["size"] == "Small"


# ------------------------------------------------------------------ scrolling

def test_long_list_shows_only_onscreen_items_until_swiped(sim):
    tap(sim, "Long list")
    texts = _texts(sim)
    assert "Item 1" in texts and "Item 30" not in texts and "Last item" not in texts
    lst = etree.fromstring(sim.dump_xml().encode()).xpath("//node[@scrollable='true']")
    assert len(lst) == 1 and lst[0].get("class") == "androidx.recyclerview.widget.RecyclerView"
    win = sim.window()
    top, bottom = win.viewport
    for _ in range(10):
        sim.swipe(540, bottom - 50, 540, top + 50)
    texts = _texts(sim)
    assert "Last item" in texts and "Item 1" not in texts
    tap(sim, "Last item")
    assert sim.state["dark"] is True
    # scrolling back up restores the first items; a swipe outside the list does nothing
    for _ in range(10):
        sim.swipe(540, top + 50, 540, bottom - 50)
    assert "Item 1" in _texts(sim)
    before = sim.dump_xml()
    sim.swipe(540, sim.metrics.status_bar + 20, 540, 1500)  # on the toolbar (the status bar pulls the shade)
    assert sim.dump_xml() == before


def test_partially_visible_row_is_clipped_to_the_list(sim):
    tap(sim, "Long list")
    win = sim.window()
    top, bottom = win.viewport
    sim.swipe(540, bottom - 100, 540, bottom - 100 - 95)  # half a row
    for node in walk(sim.window().list_node):
        assert top <= node.bounds[1] <= node.bounds[3] <= bottom


def test_tiny_swipe_is_a_tap(sim):
    row = find(sim, "Display")
    cx, cy = (row.bounds[0] + row.bounds[2]) // 2, (row.bounds[1] + row.bounds[3]) // 2
    sim.swipe(cx, cy, cx + 3, cy + 3, 100)
    assert sim.screen_id == "display"


# ------------------------------------------------------------------ dialogs

def test_choice_dialog_selects_and_dismisses(sim):
    tap(sim, "Display")
    tap(sim, "Screen timeout")
    assert sim.screen_id == "timeout_dialog"
    assert [w.kind for w in sim.windows()] == ["page", "dialog"]
    tap(sim, "1 minute")
    assert sim.state["timeout"] == "1 minute" and sim.screen_id == "display"
    assert "After 1 minute of inactivity" in _texts(sim)
    # tap outside and back both dismiss a cancelable dialog without changing anything
    tap(sim, "Screen timeout")
    sim.tap(540, 100)
    assert sim.screen_id == "display"
    tap(sim, "Screen timeout")
    sim.key("back")
    assert sim.screen_id == "display" and sim.state["timeout"] == "1 minute"
    tap(sim, "Screen timeout")
    tap(sim, "Cancel")
    assert sim.screen_id == "display"


def test_non_cancelable_confirm_dialog(sim):
    tap(sim, "Display")
    tap(sim, "Delete everything")
    sim.tap(540, 100)
    sim.key("back")
    assert sim.screen_id == "confirm"  # only its buttons close it
    tap(sim, "Delete")
    assert sim.screen_id == "display" and sim.state["deleted"] is True


# ------------------------------------------------------------------ keys and apps

def test_back_home_launch_like_a_phone(sim):
    tap(sim, "Display")
    assert sim.current_app() == (PKG, "com.example.settings.Sub")
    sim.key("home")
    assert sim.screen_id == "launcher"
    assert sim.current_app()[0] == "com.google.android.apps.nexuslauncher"
    tap(sim, "MiniSettings")  # the launcher icon resumes the app where it was
    assert sim.screen_id == "display"
    sim.key("back")
    assert sim.screen_id == "main" and sim.current_app() == (PKG, "com.example.settings.Main")
    sim.key("back")  # back on the first page closes the app
    assert sim.screen_id == "launcher"
    sim.key("back")  # and does nothing on the home screen
    assert sim.screen_id == "launcher"
    assert sim.launch(PKG) and sim.screen_id == "main"
    # another installed app opens its own (blank) screen; an unknown one is refused
    assert sim.launch("com.android.chrome") and sim.current_app()[0] == "com.android.chrome"
    assert not sim.launch("com.not.installed")
    sim.key("volume_up")  # unknown keys are ignored
    assert sim.current_app()[0] == "com.android.chrome"


def test_toolbar_up_arrow_goes_back(sim):
    tap(sim, "Display")
    tap(sim, "Navigate up")
    assert sim.screen_id == "main"


def test_text_input_goes_to_the_focused_field(sim):
    tap(sim, "Name")
    sim.input_text("ignored")  # nothing focused yet
    assert sim.state["draft"] == ""
    field = find(sim, "Device name")
    assert field.cls == "android.widget.EditText" and not field.focused
    tap(sim, "Device name")
    assert find(sim, "Device name").focused
    save = find(sim, "Save")
    assert not save.enabled
    sim.input_text("Work ")
    sim.input_text("phone")
    assert _node(sim, "Work phone").get("focused") == "true"
    sim.key("enter")  # the field's on_enter copies the draft and goes back
    assert sim.screen_id == "main" and sim.state["name"] == "Work phone"
    assert "Work phone" in _texts(sim)
    assert sim.goal_satisfied("named")


# ------------------------------------------------------------------ determinism and goals

def _play(sim: Simulator) -> list[str]:
    dumps = []
    for text in ("Display", "Dark theme", "Screen timeout", "15 seconds"):
        tap(sim, text)
        dumps.append(sim.dump_xml())
    sim.key("back")
    dumps.append(sim.dump_xml())
    return dumps


def test_same_actions_same_xml_and_reset(sim):
    first = _play(sim)
    assert sim.state["dark"] is True
    sim.reset(PKG)
    assert sim.step_count == 0 and sim.state["dark"] is False and sim.screen_id == "main"
    assert _play(sim) == first
    other = Simulator(parse_world(support_sim.mini_world(), source="mini"))
    other.launch(PKG)
    assert _play(other) == first
    sim.reset()
    assert sim.screen_id == "launcher"


def test_snapshot_restore_round_trip(sim):
    tap(sim, "Display")
    snap = sim.snapshot()
    xml = sim.dump_xml()
    tap(sim, "Dark theme")
    sim.key("home")
    sim.restore(snap)
    assert sim.dump_xml() == xml and sim.state["dark"] is False and sim.screen_id == "display"


def test_goals_evaluate_on_state(sim):
    assert not sim.goal_satisfied("dark_on") and not sim.goal_satisfied("timeout_1m")
    tap(sim, "Display")
    tap(sim, "Dark theme")
    assert sim.goal_satisfied("dark_on")
    tap(sim, "Screen timeout")
    tap(sim, "1 minute")
    assert sim.goal_satisfied("timeout_1m")
    with pytest.raises(Exception, match="no goal named 'nope'"):
        sim.goal_satisfied("nope")


def test_state_is_a_copy(sim):
    state = sim.state
    state["dark"] = True
    assert sim.state["dark"] is False


@pytest.mark.parametrize("name", ["android13-settings", "android9-settings", "video-app", "maps-app"])
def test_measured_heights_match_built_heights(name):
    """Off-screen rows are measured, not built: both must agree or scrolling would jump."""
    from execution.sim.layout import Metrics, _Builder
    from execution.sim.world import load_world

    world = load_world(name)
    state = world.initial_state()
    builder = _Builder(world, Metrics(world), state, world.app.package, None, in_dialog=False)
    checked = 0
    for screen in world.screens:
        for node in screen.nodes:
            h = builder.measure(node, 1080)
            if h is not None:
                bottom = builder.build(node, 0, 500, 1080).bounds[3]
                assert bottom - 500 == h, (screen.id, node.kind, node.title)
                checked += 1
    assert checked > 20
