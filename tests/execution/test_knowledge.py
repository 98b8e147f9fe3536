"""Knowledge cards (AppCards), curiosity, skipped grouping steps and reflection (MobA) on the OnePlus world.

Cards are built from the real decoded OnePlus APK (``$VERIRANK_SHARED/apps``). Goals are read
only as labels (``device.simulator.goal_satisfied``); the agent and the judge never see them.
"""

from __future__ import annotations

import json

import pytest

from execution.agent import run_episode
from execution.judge import HeuristicJudge
from execution.knowledge import KnowledgeBase, curiosity, knowledge_for_device, load_knowledge
from execution.knowledge.cards import KNOWLEDGE_DIR, SEARCH_SOURCE, TABLE, build_knowledge, cards_from_resources
from execution.predict import HeuristicPredictor
from execution.predict.uimap import load_ui_map
from verirank_core.execution_records import DeviationKind, StopReason
from phonesim.device import SimDevice

ONEPLUS = "imported/oneplus-settings-android11"
SETTINGS = "com.android.settings"
CARDS = KNOWLEDGE_DIR / "oneplus-settings-android11.json"


@pytest.fixture(scope="module")
def apk(shared_dir):
    path = shared_dir / "apps" / "oneplus-settings-android11"
    assert (path / "res" / "values" / "strings.xml").is_file()
    return path


@pytest.fixture(scope="module")
def resource_cards(apk):
    cards = cards_from_resources(apk)
    assert cards
    return cards


def _titles(cards, phrase):
    return KnowledgeBase(cards).titles(phrase)


# --- cards from data --------------------------------------------------------------------------


def test_resource_cards_map_stock_names_to_oxygenos_titles(resource_cards):
    # a vendor title string next to its unused stock twin
    assert _titles(resource_cards, "Network & internet") == ["Wi-Fi & network"]
    assert _titles(resource_cards, "Connected devices") == ["Bluetooth & device connection"]
    assert _titles(resource_cards, "Night Light") == ["Vision comfort"]
    # a row whose key names a stock string
    assert _titles(resource_cards, "Dark theme") == ["Dark mode"]
    assert _titles(resource_cards, "Screen timeout") == ["Sleep"]
    # multi-word search keywords
    assert "Adaptive Brightness" in _titles(resource_cards, "auto brightness")


def test_every_card_names_its_source(resource_cards):
    assert all(c.source.removeprefix(SEARCH_SOURCE).startswith("res/xml") for c in resource_cards)
    kb = load_knowledge(CARDS)
    assert all(c.source for c in kb.cards)
    table_sources = [c.source for c in kb.cards if c.source.startswith("table:")]
    assert table_sources and len(table_sources) <= len(TABLE)


def test_a_title_with_a_search_keyword_tells_the_judge_not_the_agent(resource_cards):
    from execution.goal import read_goal

    search = {(c.phrase, c.title) for c in resource_cards if c.source.startswith(SEARCH_SOURCE)}
    # device_info_storage.xml: title "Storage", settings:keywords "space, disk, hard drive, ..."
    assert ("Storage space", "Storage") in search
    # a one-word keyword alone names no row ("Sound" is a keyword of Phone ringtone)
    assert all(len(phrase.split()) >= 2 for phrase, _ in search)
    kb = KnowledgeBase(resource_cards)
    # no page calls the row "Storage space": the agent never taps by such a card
    assert kb.lookup("Storage space") == []
    # the question does ask for it
    assert ("Storage", True) in read_goal("how to check storage space on android", kb).titles


def test_lookup_is_near_exact_not_loose(resource_cards):
    kb = load_knowledge(CARDS)
    # a generic word or a phrase merely containing a card's phrase retrieves nothing
    assert kb.lookup("Settings") == []
    assert kb.lookup("Display") == []
    assert kb.lookup("dark") == []
    # spelling variants of the same phrase do
    assert kb.titles("network and internet") == ["Wi-Fi & network"]
    assert kb.titles("Dark Theme") == ["Dark mode"]


def test_bundled_cards_are_current_and_carry_ui_map_paths(apk):
    built = build_knowledge(load_ui_map(ONEPLUS), apk, name="oneplus-settings-android11",
                            device={"manufacturer": "OnePlus", "model": "IN2013", "os_version": "11"})
    stored = json.loads(CARDS.read_text("utf-8"))
    assert built.to_json() == stored, "datasets/knowledge is stale: run python -m execution.knowledge build"
    assert len(stored["cards"]) > 100
    kb = KnowledgeBase.from_json(stored)
    dark = kb.lookup("Dark theme")[0]
    assert dark.path == ("Display",)
    # a card whose title no reachable screen shows is dropped
    assert all(c.path is not None for c in kb.cards)


def test_cards_are_per_device(tmp_path):
    oneplus = SimDevice.open(ONEPLUS)
    kb, why = knowledge_for_device(oneplus)
    assert kb is not None and len(kb) > 50 and "oneplus" in why
    other = SimDevice.open("android13-settings")
    kb2, why2 = knowledge_for_device(other)
    assert kb2 is None and "no knowledge cards" in why2
    # a cards file for another manufacturer is refused
    path = tmp_path / "cards.json"
    path.write_text(json.dumps({**json.loads(CARDS.read_text("utf-8")), "device": {"manufacturer": "Samsung"}}))
    kb3, why3 = knowledge_for_device(oneplus, str(path))
    assert kb3 is None and "Samsung" in why3


# --- curiosity --------------------------------------------------------------------------------


def test_curiosity_rises_with_weak_matches_ties_and_stalls():
    assert curiosity([1.0, 0.3]).score == 0.0
    weak = curiosity([0.4, 0.1])
    assert weak.score == pytest.approx(0.6) and weak.miss == pytest.approx(0.6)
    tie = curiosity([0.7, 0.69])
    assert tie.ambiguity > 0.25 and tie.score >= tie.miss
    assert curiosity([1.0], stalled_actions=3).score == 1.0
    assert curiosity([]).score == 1.0


# --- the agent ----------------------------------------------------------------------------------


def _agent(**kw) -> HeuristicPredictor:
    defaults = dict(use_embeddings=False, use_knowledge=True, use_reflection=True, skip_grouping_steps=True)
    defaults.update(kw)
    return HeuristicPredictor(**defaults)


def _run(steps, predictor, query):
    dev = SimDevice.open(ONEPLUS)
    traj = run_episode(steps, predictor, dev, qid="q", url="https://howto.example/p", app=SETTINGS, query=query)
    return traj, dev


STOCK_DARK = ["Open Settings.", "Tap Display.", "Tap Dark theme.", "Turn on Dark theme."]


def test_stock_wording_is_mapped_through_cards_and_recorded_as_knowledge():
    traj, dev = _run(STOCK_DARK, _agent(), "how to turn on dark mode")
    assert traj.stop_reason == StopReason.COMPLETED
    assert dev.simulator.goal_satisfied("dark_mode_on")  # label only
    assert traj.deviations.get("knowledge", 0) >= 1
    used = [s for s in traj.steps if s.deviation_kind == DeviationKind.KNOWLEDGE.value]
    assert used and all("knowledge card" in s.action.rationale and "dark_ui_mode" in s.action.rationale for s in used)
    assert "oneplus-settings-android11" in (traj.knowledge or "")
    verdict = HeuristicJudge(use_embeddings=False, use_knowledge=True).judge(traj)
    assert verdict.score == 1.0


def test_without_cards_the_stock_page_is_not_completed():
    traj, dev = _run(STOCK_DARK, _agent(use_knowledge=False), "how to turn on dark mode")
    assert not dev.simulator.goal_satisfied("dark_mode_on")
    assert "knowledge" not in traj.deviations
    assert HeuristicJudge(use_embeddings=False).judge(traj).score < 1.0


def test_cards_do_not_make_a_page_for_another_feature_look_good():
    # a page about reading mode, judged for a dark-mode query, with the cards on
    steps = ["Open Settings.", "Tap Display.", "Tap Reading Mode.", "Turn on Reading Mode."]
    traj, dev = _run(steps, _agent(), "how to turn on dark mode")
    assert not dev.simulator.goal_satisfied("dark_mode_on")
    assert HeuristicJudge(use_embeddings=False, use_knowledge=True).judge(traj).score < 1.0


def test_grouping_step_is_skipped_when_the_next_item_is_visible():
    steps = ["Open Settings.", "Tap Connected devices.", "Tap Connection preferences.", "Turn on NFC."]
    traj, dev = _run(steps, _agent(), "how to turn on NFC")
    assert traj.stop_reason == StopReason.COMPLETED
    skips = [s for s in traj.steps if s.deviation_kind == DeviationKind.SKIP.value]
    assert len(skips) == 1 and skips[0].step_index == 2 and skips[0].noop
    assert dev.simulator.state["toggle_nfc"] is True  # label only
    assert HeuristicJudge(use_embeddings=False, use_knowledge=True).judge(traj).score == 1.0


def test_no_skip_when_the_next_item_is_not_visible_either():
    steps = ["Open Settings.", "Tap Accessibility.", "Turn on Remove animations."]
    traj, _ = _run(steps, _agent(), "how to remove animations")
    assert traj.stop_reason != StopReason.COMPLETED
    assert "skip" not in traj.deviations


def test_reflection_goes_back_once_and_an_outdated_route_stays_unverified():
    # Android 9 wording: Display > Advanced > Dark theme; OnePlus's Advanced page has no Dark theme
    steps = ["Open Settings.", "Tap Display.", "Tap Advanced.", "Turn on Dark theme."]
    # no back press in the blind search: going back is reflection's job here
    traj, _ = _run(steps, _agent(max_backs=0), "how to turn on dark mode")
    reflections = [s for s in traj.steps if s.deviation_kind == DeviationKind.REFLECTION.value]
    assert reflections and reflections[0].action.type.value == "back"
    assert len([s for s in reflections if s.action.type.value == "back"]) == 1  # once per step
    assert traj.deviations.get("reflection", 0) >= 1
    verdict = HeuristicJudge(use_embeddings=False, use_knowledge=True).judge(traj)
    # going back undid the page's own "Advanced" step: whatever came after, the page is not verified
    assert verdict.score < 1.0
    assert any(row.get("undone") for row in verdict.detail[:-1])
    # the same holds when the blind search's back press is what went back
    traj2, _ = _run(steps, _agent(), "how to turn on dark mode")
    assert traj2.deviations.get("search", 0) + traj2.deviations.get("reflection", 0) >= 1
    assert HeuristicJudge(use_embeddings=False, use_knowledge=True).judge(traj2).score < 1.0


def test_reflection_off_records_no_reflection():
    steps = ["Open Settings.", "Tap Display.", "Tap Advanced.", "Turn on Dark theme."]
    traj, _ = _run(steps, _agent(use_reflection=False), "how to turn on dark mode")
    assert "reflection" not in traj.deviations


def test_step_limit_and_cycle_detection_still_bound_a_hopeless_page():
    steps = ["Open Settings.", "Tap Personal.", "Tap Nonexistent row.", "Turn on Something."]
    traj, _ = _run(steps, _agent(), "how to turn on something")
    assert traj.stop_reason in (StopReason.NO_ACTION, StopReason.CYCLE, StopReason.MAX_STEPS)
    assert sum(1 for s in traj.steps if not s.noop) <= 28


# --- the judge ---------------------------------------------------------------------------------


def test_judge_credits_a_tap_on_a_switch_row_as_a_toggle():
    steps = ["Open Settings.", "Tap Display.", "Tap Adaptive Brightness."]
    traj, dev = _run(steps, _agent(), "how to turn on auto brightness")
    verdict = HeuristicJudge(use_embeddings=False, use_knowledge=True).judge(traj)
    last = [row for row in verdict.detail if row.get("step") == 2][0]
    assert last["kind"] == "toggle" and last["effect"]
    # the query says "auto brightness", the control "Adaptive Brightness": read through the cards
    assert verdict.score == 1.0 and "Adaptive Brightness" in verdict.detail[-1]["why"]


def test_judge_keeps_navigation_only_pages_capped():
    steps = ["Open Settings.", "Tap Display."]
    traj, _ = _run(steps, _agent(), "how to turn on auto brightness")
    verdict = HeuristicJudge(use_embeddings=False, use_knowledge=True).judge(traj)
    assert verdict.score <= 0.5


def test_judge_refuses_a_page_that_changed_another_switch():
    steps = ["Open Settings.", "Tap Display.", "Turn on Comfort tone."]
    traj, _ = _run(steps, _agent(), "how to turn on auto brightness")
    verdict = HeuristicJudge(use_embeddings=False, use_knowledge=True).judge(traj)
    assert verdict.score < 1.0


def test_judge_reads_an_unparsed_question_against_the_page_change():
    # the question has no verb the parser knows; the page flips the plain NFC switch instead
    query = "how to require unlocking the phone for NFC"
    judge = HeuristicJudge(use_knowledge=True)
    wrong, _ = _run(["Open Settings.", "Tap Bluetooth & device connection.", "Turn on NFC."], _agent(), query)
    verdict = judge.judge(wrong)
    assert verdict.score < 1.0 and "not" in verdict.detail[-1]["why"]
    right, dev = _run(["Open Settings.", "Tap Bluetooth & device connection.",
                       "Turn on Require device unlock for NFC."], _agent(), query)
    assert judge.judge(right).score == 1.0


def test_reflection_retries_a_same_named_twin_row():
    # Wi-Fi & network lists "Hotspot & tethering" twice; only one page holds the switch
    steps = ["Open Settings.", "Tap Wi-Fi & network.", "Tap Hotspot & tethering.", "Turn on Turn off hotspot automatically."]
    traj, dev = _run(steps, _agent(), "how to make the hotspot turn off automatically")
    assert traj.stop_reason == StopReason.COMPLETED
    assert traj.deviations.get("reflection", 0) >= 1
    retry = [s for s in traj.steps if s.deviation_kind == "reflection" and s.action.type.value == "click"]
    assert retry and retry[0].step_index == 2 and retry[0].action.target_label == "Hotspot & tethering"
    assert dev.simulator.state["wifi_tether_auto_turn_off_2"] is True  # label only


def test_judge_reads_a_switch_named_after_turning_off():
    query = "how to turn off battery saver automatically when charged"
    judge = HeuristicJudge(use_knowledge=True)
    right, dev = _run(["Open Settings.", "Tap Battery.", "Tap Battery Saver.", "Turn on Turn off when charged."],
                      _agent(), query)
    assert dev.simulator.state["battery_saver_sticky"] is True  # label only
    assert judge.judge(right).score == 1.0
    wrong, _ = _run(["Open Settings.", "Tap Battery.", "Tap Battery Saver.", "Turn on Turn on now."], _agent(), query)
    assert judge.judge(wrong).score < 1.0


def test_reflection_in_a_breadcrumb_retries_the_row_it_tapped():
    steps = ["Go to Settings > Wi-Fi & network > Hotspot & tethering > Turn off hotspot automatically.",
             "Enable it there."]
    traj, dev = _run(steps, _agent(), "how to make the hotspot turn off automatically")
    assert traj.stop_reason == StopReason.COMPLETED
    assert dev.simulator.state["wifi_tether_auto_turn_off_2"] is True  # label only
