"""The judge's F4 on simulator episodes, checked against the worlds' goals (labels, tests only)."""

from __future__ import annotations

from pathlib import Path

import pytest

from execution.agent import load_trajectory, run_episode
from verirank_core.execution_config import ExecutionConfig
from execution.judge import HeuristicJudge, LLMJudge, make_judge
from execution.predict import HeuristicPredictor
from verirank_core.execution_records import StepRecord, StopReason, Trajectory
from phonesim.device import SimDevice
from verirank_core.errors import ConfigError

SETTINGS = "com.android.settings"
RESET_WORLD = str(Path(__file__).resolve().parents[1] / "fixtures" / "worlds" / "agent-reset.yaml")

# (world, goal label, query, instructions); the query is the user's question, the goal is ground truth
CASES = [
    ("oneui5-settings", "dark_mode_on", "How to turn on dark mode", ["Open Settings", "Tap Display", "Turn on Dark mode"]),
    ("oneui5-settings", "dark_mode_on", "How to turn on dark mode", ["Open Settings", "Tap Display"]),
    ("oneui5-settings", "dark_mode_on", "How to turn on dark mode", ["Dark mode is easier on the eyes.", "Enjoy it at night!"]),
    ("oneui5-settings", "dark_mode_on", "How to turn on dark mode", ["Open Settings", "Tap Display", "Tap Advanced", "Turn on Dark theme"]),
    ("oneui5-settings", "bluetooth_on", "How to turn on Bluetooth", ["Open Settings", "Tap Connections", "Turn on Bluetooth"]),
    ("oneui5-settings", "bluetooth_on", "How to turn on Bluetooth", ["Open Settings", "Tap Connections"]),
    ("oneui5-settings", "wifi_off", "How to turn off Wi-Fi", ["Go to Settings > Connections", "Toggle off Wi-Fi"]),
    ("oneui5-settings", "wifi_off", "How to turn off Wi-Fi", ["Open Settings", "Tap Network & internet", "Turn off Wi-Fi"]),
    ("oneui5-settings", "screen_timeout_5min", "How to change screen timeout to 5 minutes",
     ["Open Settings > Display > Screen timeout", "Select 5 minutes"]),
    ("oneui5-settings", "screen_timeout_5min", "How to change screen timeout to 5 minutes",
     ["Open Settings", "Tap Display", "Tap Screen timeout"]),
    ("oneui5-settings", "battery_percentage_on", "How to show battery percentage",
     ["Open Settings", "Tap Notifications", "Tap Advanced settings", "Turn on Show battery percentage"]),
    ("oneui5-settings", "battery_percentage_on", "How to show battery percentage",
     ["Open Settings", "Tap Battery", "Turn on Battery percentage"]),
    ("oneui5-settings", "power_saving_on", "How to turn on power saving mode",
     ["Open Settings", "Tap Battery and device care", "Tap Battery", "Turn on Power saving"]),
    ("oneui5-settings", "flight_mode_on", "How to turn on flight mode", ["Open Settings", "Tap Connections", "Turn on Flight mode"]),
    ("oneui5-settings", "flight_mode_on", "How to turn on flight mode", ["Swipe down from the top of the screen", "Tap the airplane icon"]),
    ("oneui5-settings", "use_24h_on", "How to use 24-hour time",
     ["Open Settings", "Tap General management", "Tap Date and time", "Turn on Use 24-hour format"]),
    ("oneui5-settings", "eye_comfort_on", "How to turn on eye comfort shield", ["Open Settings", "Tap Display", "Tap Eye comfort shield"]),
    ("oneui5-settings", "adaptive_brightness_off", "How to turn off adaptive brightness",
     ["Open Settings", "Tap Display", "Turn on Adaptive brightness"]),
    ("oneui5-settings", "adaptive_brightness_off", "How to turn off adaptive brightness",
     ["Open Settings", "Tap Display", "Turn off Adaptive brightness"]),
    (RESET_WORLD, "timeout_10", "How to set screen timeout to 10 minutes", ["Open Settings", "Tap Display", "Set Screen timeout to 10 minutes"]),
    (RESET_WORLD, "timeout_10", "How to set screen timeout to 10 minutes", ["Open Settings", "Tap Display"]),
    (RESET_WORLD, "dark_on", "How to turn on dark theme", ["Tap Display", "Enable Dark theme", "Your screen is now dark."]),
    ("android13-settings", "dark_theme_on", "How to turn on dark mode on Android 13",
     ["Open Settings", "Tap Display", "Tap Dark theme", "Turn on Use Dark theme"]),
    ("android13-settings", "dark_theme_on", "How to turn on dark mode on Android 13", ["Open Settings", "Tap Display"]),
    ("android13-settings", "screen_timeout_10_minutes", "How to change screen timeout to 10 minutes on Android",
     ["Open Settings", "Go to Display > Screen timeout", "Select 10 minutes"]),
    ("android13-settings", "dark_theme_on", "How to turn on dark mode on Android 13",
     ["Open Settings > Display > Advanced > Device theme", "Select Dark"]),
    ("android9-settings", "device_theme_dark", "How to turn on dark theme on Android 9 Pie",
     ["Open Settings > Display > Advanced > Device theme", "Select Dark"]),
    ("android9-settings", "device_theme_dark", "How to turn on dark theme on Android 9 Pie",
     ["Open Settings", "Tap Display", "Tap Dark theme", "Turn on Use Dark theme"]),
]


@pytest.fixture(scope="module")
def episodes():
    predictor = HeuristicPredictor()
    out = []
    for world, goal, query, steps in CASES:
        dev = SimDevice.open(world)
        traj = run_episode(steps, predictor, dev, qid=goal, url="u", app=SETTINGS, query=query)
        out.append((traj, dev.simulator.goal_satisfied(goal)))
    return out


def test_judge_agrees_with_ground_truth(episodes):
    judge = HeuristicJudge()
    agree = 0
    for traj, reached in episodes:
        res = judge.judge(traj)
        assert 0.0 <= res.score <= 1.0
        agree += (res.score >= 0.999) == reached
    assert agree / len(episodes) >= 0.95, f"agreement {agree}/{len(episodes)}"
    assert sum(r for _, r in episodes) >= 8  # the table holds enough successes to mean something


#: pages that stop short of the task ("Open Settings. Tap Display.") or have no steps at all
PARTIAL_OR_EMPTY = [1, 2, 5, 9, 20, 23]


def test_partial_or_empty_pages_never_score_one(episodes):
    judge = HeuristicJudge()
    for traj, reached in episodes:
        if not reached:
            assert judge.judge(traj).score < 1.0, traj.instructions
    for i in PARTIAL_OR_EMPTY:
        traj, reached = episodes[i]
        assert not reached
        # even without the query, the judge sees that the page never changes anything
        assert judge.judge(traj.model_copy(update={"query": None})).score <= 0.5, traj.instructions


def test_partial_page_scores_between_stuck_and_complete(episodes):
    judge = HeuristicJudge()
    complete = judge.judge(episodes[0][0])
    partial = judge.judge(episodes[1][0])
    empty = judge.judge(episodes[2][0])
    stuck = judge.judge(episodes[3][0])
    assert complete.score == 1.0
    assert partial.score == 0.5 and partial.detail[-1]["terminal"] is False
    assert empty.score == 0.0
    assert stuck.score < partial.score


def test_detail_has_one_row_per_step(episodes):
    traj = episodes[0][0]
    res = HeuristicJudge().judge(traj)
    rows = res.detail[:-1]
    assert [r["step"] for r in rows] == [0, 1, 2]
    assert all(r["done"] and r["effect"] for r in rows)
    assert res.name == "heuristic"


def test_judge_needs_only_the_stored_trajectory(tmp_path):
    dev = SimDevice.open("oneui5-settings")
    run_episode(["Open Settings", "Tap Connections", "Turn on Bluetooth"], HeuristicPredictor(use_embeddings=False),
                dev, qid="q", url="u", app=SETTINGS, out_dir=tmp_path)
    dev.close()  # the device is gone: the judge works from the files alone
    res = HeuristicJudge(use_embeddings=False).judge(load_trajectory(tmp_path), tmp_path)
    assert res.score == 1.0


def test_switch_in_the_wrong_state_is_not_effective():
    screen = {"title": "Display", "signature": "a", "texts": []}
    before = [{"id": 0, "label": "Dark theme", "role": "switch", "checked": False, "bounds": [0, 0, 10, 10], "actions": ["click"]}]
    after = [{**before[0], "checked": False}]
    from verirank_core.execution_records import Action, ActionType

    step = StepRecord(index=0, step_index=0, action=Action(type=ActionType.CLICK, target_label="Dark theme"),
                      controls=before, screen=screen, step_done=True, ok=True)
    traj = Trajectory(qid="q", url="u", device="d", instructions=["Turn on Dark theme"], steps=[step],
                      stop_reason=StopReason.COMPLETED, final_controls=after,
                      final_screen={**screen, "signature": "b"})
    res = HeuristicJudge(use_embeddings=False).judge(traj)
    assert res.detail[0]["done"] and not res.detail[0]["effect"] and res.score == 0.0
    traj.final_controls = [{**before[0], "checked": True}]
    assert HeuristicJudge(use_embeddings=False).judge(traj).score == 1.0


def test_registry():
    cfg = ExecutionConfig()
    assert isinstance(make_judge(cfg), HeuristicJudge)
    with pytest.raises(ConfigError):
        make_judge(cfg.model_copy(update={"judge": "llm"}))
    with pytest.raises(ConfigError, match="heuristic, llm"):
        make_judge(cfg.model_copy(update={"judge": "oracle"}))
    assert isinstance(make_judge(cfg.model_copy(update={"judge": "llm"}), llm_client=object()), LLMJudge)
