"""The page plan and its lookahead: real phrasings, followed on the imported OnePlus world.

The pages here are written in the styles of real help sites (chained "and then" steps, a
grouping this phone lacks, "To turn on, ... To turn off, ..."), not copied from the dev set.
"""

from __future__ import annotations

from execution.agent import run_episode
from execution.predict import HeuristicPredictor
from execution.predict.plan import PagePlan
from execution.predict.steps import parse_step, parse_step_in_context
from phonesim.device import SimDevice
from verirank_core.execution_records import DeviationKind, StopReason

ONEPLUS = "imported/oneplus-settings-android11"
SETTINGS = "com.android.settings"


def _agent(**kw) -> HeuristicPredictor:
    defaults = dict(use_embeddings=False, use_knowledge=True, use_reflection=True, skip_grouping_steps=True,
                    use_lookahead=True)
    return HeuristicPredictor(**{**defaults, **kw})


def _run(steps, predictor, query="how to allow apps from unknown sources"):
    dev = SimDevice.open(ONEPLUS)
    return run_episode(steps, predictor, dev, qid="q", url="u", app=SETTINGS, query=query), dev


# --- reading the plan ---------------------------------------------------------------------


def test_a_chained_step_becomes_several_items_in_page_order():
    plan = PagePlan.read(["Open Settings.", "Tap Apps and then Advanced and then Special access."])
    names = [(it.step, it.pos, it.name) for it in plan.items]
    assert names == [(0, 0, "Settings"), (1, 0, "Apps"), (1, 1, "Advanced"), (1, 2, "Special access")]


def test_settings_are_never_skippable_navigation_is():
    plan = PagePlan.read(["Tap Display.", "Turn on Dark mode.", "Set Sleep to 5 minutes."])
    assert [it.skippable for it in plan.items] == [True, False, False]


def test_repeated_references_to_one_name_count_once():
    page = ["Head to System Settings.", "Scroll down until you find System Settings.", "Tap on it.", "Tap About phone."]
    plan = PagePlan.read(page)
    assert plan.next_name(0, 0).name == "About phone"
    assert plan.is_last_named(3, 0)


def test_to_turn_on_and_to_turn_off_are_two_choices_of_one_switch():
    page = ["To turn on, tap the Wi-Fi switch to ON.", "To turn off, tap the Wi-Fi switch to OFF."]
    first, second = PagePlan.read(page).items
    assert (first.intent.kind, first.intent.state, first.alternative_of) == ("toggle", True, None)
    assert second.alternative_of == (0, 0)


# --- the language of real texts --------------------------------------------------------------


def test_switch_positions_and_flips():
    assert [(i.kind, i.target, i.state) for i in parse_step("Tap the Wi-Fi switch to the ON position.")] == [
        ("toggle", "Wi-Fi", True)]
    assert [(i.kind, i.target, i.state) for i in parse_step("Tap the Bluetooth switch to ON / OFF.")] == [
        ("toggle", "Bluetooth", None)]
    assert [(i.kind, i.target, i.state) for i in parse_step("Slide the Airplane mode switch on or off.")] == [
        ("toggle", "Airplane mode", None)]
    assert [(i.kind, i.target, i.state) for i in parse_step("Switch Wi-Fi off.")] == [("toggle", "Wi-Fi", False)]


def test_placeholders_name_a_kind_of_item():
    (i,) = parse_step("Tap the app you want to stop.")
    assert i.placeholder and i.target == "app"
    (i,) = parse_step("Select a preference: Wi-Fi preferred Mobile preferred")
    assert i.placeholder and i.choices == "Wi-Fi preferred Mobile preferred"
    (i,) = parse_step("Tap Apps.")
    assert not i.placeholder and i.target == "Apps"  # a capitalised name is a name


def test_steps_outside_the_app_and_the_launcher_gear():
    # on the home screen "Apps" is the app drawer (an Apps icon where the launcher has one, else a swipe up)
    (i,) = parse_step("From any home screen, tap Apps.")
    assert (i.kind, i.target, i.place) == ("drawer", None, "home")
    (i,) = parse_step("Locate the gear icon on your home screen or app drawer.")
    assert (i.kind, i.target) == ("open", "Settings")
    # "you can find X" says what the reader will see; it is no target
    assert parse_step('Under "Location," you can find the type of location the app asked for.') == []


def test_crawl_artefacts_are_repaired():
    page = ["Image titled Check Android Version Step 2 2 Select About Phone.", "Tap it."]
    assert [(i.kind, i.value or i.target) for i in parse_step(page[0])] == [("select", "About Phone")]
    assert [i.target for i in parse_step_in_context(page, 1)] == ["About Phone"]
    assert [i.target for i in parse_step("[3] Tap Display.")] == ["Display"]
    assert [i.target for i in parse_step("Tap either About phone or About tablet.")] == ["About phone"]


# --- following the plan on the OnePlus world ----------------------------------------------------


CHAINED = ["Open Settings.",
           "Tap Apps & notifications and then Advanced and then Special app access and then Install unknown apps."]


def test_an_absent_grouping_inside_a_step_is_skipped_when_the_next_name_is_visible():
    traj, dev = _run(CHAINED, _agent())
    skips = [s for s in traj.steps if s.deviation_kind == DeviationKind.SKIP.value]
    assert len(skips) == 1 and "'Advanced'" in skips[0].action.rationale and skips[0].noop
    assert traj.stop_reason == StopReason.COMPLETED
    assert traj.steps[-1].action.target_label == "Install unknown apps"


def test_without_lookahead_the_same_step_stops_at_the_grouping():
    traj, _ = _run(CHAINED, _agent(use_lookahead=False))
    assert traj.stop_reason != StopReason.COMPLETED
    assert not any(s.deviation_kind == DeviationKind.SKIP.value for s in traj.steps)


def test_an_absent_setting_is_never_skipped():
    # "Allow from anywhere" is a switch this phone lacks: the next name is visible, yet no skip
    page = ["Open Settings.", "Tap Apps & notifications.", "Turn on Allow from anywhere.", "Tap Special app access."]
    traj, _ = _run(page, _agent())
    assert traj.stop_reason == StopReason.NO_ACTION and traj.stop_detail.startswith("step 3")
    assert not any(s.deviation_kind == DeviationKind.SKIP.value for s in traj.steps)


def test_the_other_choice_of_a_switch_is_not_taken():
    page = ["Open Settings.", "Tap Wi-Fi & network.", "To turn on, tap the Wi-Fi switch to ON.",
            "To turn off, tap the Wi-Fi switch to OFF."]
    traj, dev = _run(page, _agent(), query="how to turn on wifi")
    assert traj.stop_reason == StopReason.COMPLETED
    kinds = [s.deviation_kind for s in traj.steps if s.step_index == 3]
    assert kinds == [DeviationKind.ALTERNATIVE.value]
    flips = [s for s in traj.steps if s.action.type.value == "click" and "Wi" in (s.action.target_label or "")
             and s.step_index >= 2]
    assert len(flips) == 1  # turned on once, never back off


def test_home_screen_steps_are_satisfied_when_the_episode_is_already_in_the_app():
    page = ["From the home screen, tap Apps.", "Tap Settings.", "Tap Display."]
    traj, _ = _run(page, _agent(), query="how to change display settings")
    assert traj.stop_reason == StopReason.COMPLETED
    assert traj.steps[0].noop and "outside the app" in traj.steps[0].action.rationale
    assert traj.steps[-1].action.target_label == "Display"


def test_reflection_never_retries_a_tap_on_a_switch_row():
    # "Wi-Fi calling" is a switch row (with a plain twin further down); "Connection Preferences"
    # is not on this phone. Retrying the switch step would tap Wi-Fi calling again and undo it:
    # a careful person stops instead. A navigation tap may still be retried (test_predict_heuristic).
    page = ["Open Settings.", "Tap Wi-Fi & network.", "Tap Wi-Fi Calling.", "Tap Connection Preferences."]
    traj, _ = _run(page, _agent(), query="how to turn on wifi calling")
    taps = [s for s in traj.steps if s.action.type.value == "click" and s.action.target_label == "Wi-Fi calling"]
    assert len(taps) == 1 and taps[0].step_index == 2
    assert not any(s.deviation_kind == DeviationKind.REFLECTION.value for s in traj.steps)
    assert traj.stop_reason == StopReason.NO_ACTION and traj.stop_detail.startswith("step 4")
