"""Steps outside the app, done as a person does them: the Home and Menu keys, the app drawer, the shade.

Run through the Device interface on the imported OnePlus world (its launcher, app drawer and quick
settings panel are the simulator's system UI); the simulator's state is read only as the label.
"""

from __future__ import annotations

from execution.agent import run_episode
from execution.judge import HeuristicJudge
from execution.predict import HeuristicPredictor
from execution.predict.steps import parse_step
from phonesim.device import SimDevice
from verirank_core.execution_records import StopReason

ONEPLUS = "imported/oneplus-settings-android11"
SETTINGS = "com.android.settings"
DARK = ["Tap Display.", "Turn on Dark theme."]


def _run(steps, app=None, query="how to turn on dark mode"):
    predictor = HeuristicPredictor(use_embeddings=False, use_knowledge=True, use_reflection=True,
                                   skip_grouping_steps=True, use_lookahead=True)
    dev = SimDevice.open(ONEPLUS)
    traj = run_episode(steps, predictor, dev, qid="q", url="u", app=app, query=query)
    return traj, dev, HeuristicJudge(use_knowledge=True, use_embeddings=False).judge(traj).score


def _sent(traj):
    """The actions sent to the device: (type, target label)."""
    return [(s.action.type.value, s.action.target_label) for s in traj.steps if not s.noop]


def test_the_phone_ui_is_read_as_its_own_steps():
    assert [i.kind for i in parse_step("Press the Menu key.")] == ["menu"]
    assert [i.kind for i in parse_step("Press the Back key.")] == ["back"]
    assert [i.kind for i in parse_step("Tap the Menu button.")] == ["tap"]  # often an icon on the screen
    assert [i.kind for i in parse_step("Swipe up from the home screen to open the app drawer.")] == ["drawer"]
    assert [i.kind for i in parse_step("Access the app drawer and tap Settings.")] == ["drawer", "tap"]
    assert [i.kind for i in parse_step("Drag down the Quick Settings menu from the top of the screen.")] == ["shade"]
    assert [(i.kind, i.target) for i in parse_step("Swipe down from the top of the screen, then tap the gear icon.")] \
        == [("shade", None), ("open", "Settings")]
    # "Swipe up" in an app scrolls; only from the home screen is it the drawer
    assert [i.kind for i in parse_step("Swipe up to see more.")] == ["scroll"]
    assert [(i.kind, i.place) for i in parse_step("From the Home screen, swipe up and then tap Settings.")] \
        == [("drawer", "home"), ("tap", "home")]


def test_from_the_home_screen_the_agent_opens_the_app_drawer_and_taps_settings():
    page = ["Swipe up from the home screen to open the app drawer.", "Tap Settings."] + DARK
    traj, dev, f4 = _run(page)
    sent = _sent(traj)
    assert sent[:3] == [("swipe", "app drawer"), ("click", "Settings"), ("click", "Display")]
    assert traj.stop_reason == StopReason.COMPLETED and f4 == 1.0
    assert dev.simulator.state["dark_mode_enabled"] is True  # the label, read after the fact


def test_from_the_home_screen_the_agent_pulls_down_quick_settings_and_taps_the_gear():
    page = ["Swipe down from the top of the screen.", "Tap the gear icon."] + DARK
    traj, dev, f4 = _run(page)
    assert _sent(traj)[:3] == [("swipe", "notification shade"), ("click", "Settings"), ("click", "Display")]
    gear = next(s for s in traj.steps if s.action.target_label == "Settings")
    assert gear.action.target_resource_id == "com.android.systemui:id/settings_button"  # the shade's gear
    assert traj.stop_reason == StopReason.COMPLETED and f4 == 1.0
    assert dev.simulator.state["dark_mode_enabled"] is True


def test_a_named_quick_settings_tile_is_tapped_in_the_shade_even_from_inside_the_app():
    page = ["Swipe down from the top of the screen to open Quick Settings.", "Tap Bluetooth to turn it on."]
    traj, dev, f4 = _run(page, app=SETTINGS, query="how to turn on bluetooth")
    assert _sent(traj) == [("swipe", "notification shade"), ("click", "Bluetooth")]
    assert dev.simulator.state["bluetooth_settings"] is True
    assert traj.stop_reason == StopReason.COMPLETED and f4 == 1.0


def test_the_home_key_is_pressed_and_the_app_is_found_again_in_the_drawer():
    page = ["Press the Home key.", "Swipe up to open the app drawer and tap Settings."] + DARK
    traj, dev, f4 = _run(page, app=SETTINGS)
    assert _sent(traj)[:4] == [("home", None), ("swipe", "app drawer"), ("click", "Settings"), ("click", "Display")]
    assert traj.stop_reason == StopReason.COMPLETED and f4 == 1.0


def test_inside_the_app_the_way_to_it_is_already_done():
    # the episode launched Settings: the home screen, the drawer and the Apps icon are behind it
    page = ["From any Home screen, tap Apps.", "Tap Settings."] + DARK
    traj, _, f4 = _run(page, app=SETTINGS)
    assert _sent(traj)[0] == ("click", "Display")
    assert f4 == 1.0


def test_after_the_apps_name_a_home_screen_chain_continues_inside_the_app():
    # "From the Home screen, tap Settings > Display": Display is a row of Settings, not of the home screen
    traj, _, f4 = _run(["From the Home screen, tap Settings > Display.", "Turn on Dark theme."], app=SETTINGS)
    assert _sent(traj)[0] == ("click", "Display")
    assert f4 == 1.0


def test_the_menu_key_is_sent_to_the_device():
    traj, dev, _ = _run(["Open Settings.", "Press the Menu key.", "Tap Display."], app=SETTINGS)
    menu = [s for s in traj.steps if s.action.type.value == "menu"]
    assert len(menu) == 1 and menu[0].ok and menu[0].step_index == 1
    assert traj.stop_reason == StopReason.COMPLETED and dev.simulator.screen_id == "display_settings"


def test_in_the_shade_only_a_tile_of_that_name_is_tapped():
    # "Bluetooth" is another setting than "Bluetooth tethering": a person does not tap it for that
    page = ["Swipe down from the top of the screen.", "Tap the Bluetooth tethering tile to turn it on."]
    traj, dev, f4 = _run(page, app=SETTINGS, query="how to turn on bluetooth tethering")
    assert _sent(traj)[0] == ("swipe", "notification shade")
    assert ("click", "Bluetooth") not in _sent(traj)
    assert dev.simulator.state["bluetooth_settings"] is False and f4 < 1.0
