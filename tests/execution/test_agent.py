"""run_episode end to end on simulator worlds (goals are read here, in tests only, as labels)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support_screens import Screen, ScriptedScreenDevice

from execution.agent import EpisodeConfig, load_trajectory, run_episode, save_trajectory
from execution.predict import HeuristicPredictor
from verirank_core.execution_records import StopReason, Trajectory
from phonesim.device import SimDevice
from verirank_core.errors import SchemaError, StoreError

SETTINGS = "com.android.settings"
RESET_WORLD = str(Path(__file__).resolve().parents[1] / "fixtures" / "worlds" / "agent-reset.yaml")


@pytest.fixture(scope="module")
def predictor():
    return HeuristicPredictor(use_embeddings=False)


def _run(world, steps, predictor, out_dir=None, **settings):
    dev = SimDevice.open(world)
    traj = run_episode(steps, predictor, dev, EpisodeConfig(**settings), qid="q", url="https://example.org/howto",
                       app=SETTINGS, out_dir=out_dir)
    return traj, dev


def test_correct_instructions_complete_the_task(predictor, tmp_path):
    traj, dev = _run("oneui5-settings", ["Open Settings", "Tap Display", "Turn on Dark mode"], predictor,
                     out_dir=tmp_path)
    assert traj.stop_reason == StopReason.COMPLETED
    assert dev.simulator.goal_satisfied("dark_mode_on")  # label only
    assert traj.acted_steps == [0, 1, 2]
    assert [s.step_index for s in traj.steps] == [0, 1, 2]
    assert traj.steps[0].noop and "already in Settings" in traj.steps[0].action.rationale
    assert traj.steps[2].action.target_label == "Dark mode" and traj.steps[2].step_done
    assert traj.world == "oneui5-settings" and traj.os_version == "13" and traj.device == "sim:oneui5-settings"


def test_multi_level_path_and_dialog_choice(predictor):
    traj, dev = _run("oneui5-settings", ["Open Settings > Display > Screen timeout", "Select 5 minutes"], predictor)
    assert traj.stop_reason == StopReason.COMPLETED
    assert dev.simulator.goal_satisfied("screen_timeout_5min")
    assert [s.action.target_label for s in traj.steps] == ["Display", "Screen timeout", "5 minutes"]


def test_off_screen_target_is_found_by_scrolling(predictor):
    traj, dev = _run("oneui5-settings", ["Open Settings", "Tap General management", "Tap Date and time",
                                         "Turn on Use 24-hour format"], predictor)
    assert traj.stop_reason == StopReason.COMPLETED
    assert dev.simulator.goal_satisfied("use_24h_on")
    assert any(s.deviation and s.action.type.value == "swipe" for s in traj.steps)
    assert all(s.step_index == 1 for s in traj.steps if s.deviation)


def test_outdated_instructions_get_stuck_and_say_why(predictor):
    # stock Android 9 wording on a Samsung One UI 5 phone: there is no "Advanced" under Display
    traj, dev = _run("oneui5-settings", ["Open Settings", "Tap Display", "Tap Advanced", "Turn on Dark theme"],
                     predictor)
    assert traj.stop_reason == StopReason.NO_ACTION
    assert "step 3" in traj.stop_detail and "'Advanced'" in traj.stop_detail
    assert not dev.simulator.goal_satisfied("dark_mode_on")
    assert 2 not in traj.acted_steps


def test_cycle_is_detected_and_not_repeated(predictor):
    # "Reset" on this world is a row that does nothing when tapped
    traj, _ = _run("oneui5-settings", ["Open Settings", "Tap General management", "Tap Reset", "Tap Erase"],
                   predictor, cycle_repeats=3)
    assert traj.stop_reason == StopReason.CYCLE
    assert "'Reset'" in traj.stop_detail
    reset_clicks = [s for s in traj.steps if s.action.target_label == "Reset"]
    assert len(reset_clicks) == 2 and not any(s.ok for s in reset_clicks)
    assert all(s.failure_reason for s in reset_clicks)
    assert [a["method"] for a in reset_clicks[0].attempts] == ["click", "tap_center", "long_press"]


def test_max_steps_bounds_the_episode(predictor):
    traj, dev = _run("oneui5-settings", ["Open Settings", "Tap Display", "Tap Screen timeout", "Select 5 minutes"],
                     predictor, max_steps=2)
    assert traj.stop_reason == StopReason.MAX_STEPS
    assert len([s for s in traj.steps if not s.noop]) == 2
    assert not dev.simulator.goal_satisfied("screen_timeout_5min")


def test_files_and_trajectory_json(predictor, tmp_path):
    traj, _ = _run(RESET_WORLD, ["Open Settings", "Tap Display", "Turn on Dark theme"], predictor, out_dir=tmp_path)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["final.png", "final.xml", "step_000.png", "step_000.xml", "step_001.png", "step_001.xml",
                     "step_002.png", "step_002.xml", "trajectory.json"]
    assert (tmp_path / "step_001.png").read_bytes().startswith(b"\x89PNG")
    assert "Display" in (tmp_path / "step_001.xml").read_text("utf-8")
    loaded = load_trajectory(tmp_path)
    assert loaded == traj
    assert loaded.steps[1].screenshot == "step_001.png" and loaded.final_xml == "final.xml"
    step = loaded.steps[1]
    assert {"observe", "predict", "act", "device", "model", "overhead", "total", "io"} <= set(step.timings_ms)
    assert step.timings_ms["overhead"] <= step.timings_ms["total"]
    assert any(c["label"] == "Display" for c in step.controls)
    assert step.screen["title"] == "Settings" and step.changed is True
    dark = next(c for c in loaded.final_controls if c["label"] == "Dark theme")
    assert dark["checked"] is True


@pytest.mark.parametrize("mode, pngs", [("final", ["final.png"]), ("none", [])])
def test_screenshot_modes_save_only_what_is_asked(predictor, tmp_path, mode, pngs):
    dev = SimDevice.open(RESET_WORLD)
    shots = []
    original = dev.screenshot_png_scaled
    dev.screenshot_png_scaled = lambda scale=1.0: shots.append(scale) or original(scale)
    traj = run_episode(["Open Settings", "Tap Display", "Turn on Dark theme"], predictor, dev,
                       EpisodeConfig(screenshots=mode, screenshot_scale=0.5), qid="q", url="u", app=SETTINGS,
                       out_dir=tmp_path)
    assert traj.stop_reason == StopReason.COMPLETED
    assert sorted(p.name for p in tmp_path.glob("*.png")) == pngs
    # nothing is drawn that is not saved: the heuristic predictor never looks at the screen
    assert len(shots) == len(pngs)
    assert all(s.screenshot is None for s in traj.steps) and len(traj.steps) == 3
    assert sorted(p.name for p in tmp_path.glob("step_*.xml")) == ["step_000.xml", "step_001.xml", "step_002.xml"]
    assert traj.screenshots == mode and traj.final_screenshot == (pngs[0] if pngs else None)


def test_every_step_screenshots_are_stored_scaled_with_the_screen_size(predictor, tmp_path):
    from PIL import Image

    traj, dev = _run(RESET_WORLD, ["Open Settings", "Tap Display"], predictor, out_dir=tmp_path,
                     screenshots="every_step", screenshot_scale=0.5)
    width, height = dev.screen_size()
    assert traj.screen_size == [width, height] and traj.screenshot_scale == 0.5
    assert [s.screenshot for s in traj.steps] == ["step_000.png", "step_001.png"]
    with Image.open(tmp_path / "step_001.png") as img:
        assert img.size == (width // 2, height // 2)
    # the half-size copy is the full screen reduced, not a crop
    full = Image.open(__import__("io").BytesIO(dev.screenshot_png())).convert("RGB")
    with Image.open(tmp_path / "final.png") as small:
        assert small.size == (width // 2, height // 2)
        assert full.reduce(2).tobytes() == small.convert("RGB").tobytes()


def test_nothing_touches_disk_or_takes_screenshots_without_out_dir(predictor, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    dev = ScriptedScreenDevice({"main": Screen("Settings", [{"title": "Dark theme", "switch": False}])}, "main")
    traj = run_episode(["Turn on Dark theme"], predictor, dev, qid="q", url="u")
    assert traj.stop_reason == StopReason.COMPLETED
    assert not any(c[0] == "screenshot" for c in dev.calls)
    assert list(tmp_path.iterdir()) == []


def test_device_failure_returns_partial_trajectory(predictor, tmp_path):
    screens = {"main": Screen("Settings", [{"title": "Display"}], on_tap={"Display": lambda d: d.go("display")}),
               "display": Screen("Display", [{"title": "Dark theme", "switch": False}])}
    dev = ScriptedScreenDevice(screens, "main", fail_after=8)
    traj = run_episode(["Tap Display", "Turn on Dark theme", "Tap Colors"], predictor, dev, qid="q", url="u",
                       out_dir=tmp_path)
    assert traj.stop_reason == StopReason.DEVICE_ERROR
    assert "connection lost" in traj.stop_detail
    assert load_trajectory(tmp_path).stop_reason == StopReason.DEVICE_ERROR
    assert len(traj.steps) >= 1  # what happened before the failure is kept


def test_no_instructions_leaves_the_device_alone(predictor):
    dev = ScriptedScreenDevice({"main": Screen("Settings", [])}, "main")
    traj = run_episode([], predictor, dev, qid="q", url="u")
    assert traj.stop_reason == StopReason.NO_INSTRUCTIONS
    assert traj.steps == [] and not any(c[0] in ("reset", "tap") for c in dev.calls)


def test_load_trajectory_errors_name_the_file(tmp_path):
    with pytest.raises(StoreError):
        load_trajectory(tmp_path / "missing")
    (tmp_path / "trajectory.json").write_text("{not json")
    with pytest.raises(SchemaError, match="trajectory.json"):
        load_trajectory(tmp_path)
    (tmp_path / "trajectory.json").write_text(json.dumps({"qid": "q"}))
    with pytest.raises(SchemaError, match="stop_reason"):
        load_trajectory(tmp_path)
    t = Trajectory(qid="q", url="u", device="d", instructions=["a"], stop_reason=StopReason.CYCLE)
    save_trajectory(tmp_path, t)
    assert load_trajectory(tmp_path / "trajectory.json") == t


def test_android13_steps_on_android9_get_stuck_where_the_ui_differs(predictor):
    steps = ["Open Settings", "Tap Display", "Tap Dark theme", "Turn on Use Dark theme"]
    traj13, dev13 = _run("android13-settings", steps, predictor)
    assert traj13.stop_reason == StopReason.COMPLETED and dev13.simulator.goal_satisfied("dark_theme_on")
    traj9, dev9 = _run("android9-settings", steps, predictor)
    assert traj9.stop_reason == StopReason.NO_ACTION
    assert "step 3" in traj9.stop_detail and "Dark theme" in traj9.stop_detail
    assert not dev9.simulator.goal_satisfied("device_theme_dark")


def test_android9_steps_work_on_android9_only(predictor):
    steps = ["Open Settings > Display > Advanced > Device theme", "Select Dark"]
    traj9, dev9 = _run("android9-settings", steps, predictor)
    assert traj9.stop_reason == StopReason.COMPLETED and dev9.simulator.goal_satisfied("device_theme_dark")
    traj13, _ = _run("android13-settings", steps, predictor)
    assert traj13.stop_reason == StopReason.NO_ACTION and "'Advanced'" in traj13.stop_detail


def test_the_episode_config_is_built_once_from_the_execution_config(monkeypatch):
    from verirank_core.config import load_config, parse_override

    cfg = load_config(overrides=[parse_override(s) for s in (
        "execution.max_steps=9", "execution.agent.cycle_repeats=5", "execution.judge=heuristic",
        "execution.screenshots=none", "execution.screenshot_scale=0.25",
        "execution.credentials_env={email: H23_TEST_EMAIL, password: H23_TEST_MISSING}")])
    monkeypatch.setenv("H23_TEST_EMAIL", "a@example.org")
    monkeypatch.delenv("H23_TEST_MISSING", raising=False)
    episode = EpisodeConfig.from_execution(cfg.execution)
    assert (episode.max_steps, episode.cycle_repeats, episode.screenshots, episode.screenshot_scale) == \
        (9, 5, "none", 0.25)
    # only the variables that are set become credentials; their values never enter the config
    assert episode.extra_context == {"credentials": {"email": "a@example.org"}}
    assert "a@example.org" not in str(cfg.to_manifest())
    with pytest.raises(ValueError, match="screenshots must be one of"):
        EpisodeConfig(screenshots="sometimes")
