"""The UI map as agent knowledge: route repair, deviations, and the OnePlus acceptance checks.

Goals are read here only, as labels (``device.simulator.goal_satisfied``);
the agent and the judge never see them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from execution.agent import run_episode
from execution.judge import HeuristicJudge
from execution.predict import HeuristicPredictor, make_predictor
from execution.predict.uimap import MapNavigator, load_ui_map, ui_map_for_device
from verirank_core.execution_records import ExecutionResult, StopReason
from phonesim.device import SimDevice
from execution.uicontext import UIContext
from verirank_core.config import load_config, parse_override
from verirank_core.store import read_jsonl, write_jsonl

ONEPLUS = "imported/oneplus-settings-android11"
SETTINGS = "com.android.settings"
DARK_MODE_PAGE = ["Open Settings > Display > Dark mode and turn it on"]
#: the same task written as if Dark mode were on the home screen (it is under Display)
SKIPPING_PAGE = ["Open Settings", "Tap Dark mode", "Turn it on"]


def _predictor(use_ui_map: bool, **kw) -> HeuristicPredictor:
    return HeuristicPredictor(use_embeddings=kw.pop("use_embeddings", False), use_ui_map=use_ui_map, **kw)


def _run(steps, predictor, device=None, **kw):
    dev = device or SimDevice.open(ONEPLUS)
    traj = run_episode(steps, predictor, dev, qid="q", url="https://howto.example/dark", app=SETTINGS,
                       query="how to turn on dark mode", **kw)
    return traj, dev


def _ui(dev: SimDevice) -> UIContext:
    app = dev.current_app()
    return UIContext.from_xml(dev.dump_xml(), dev.screen_size(), app.package, app.activity)


# --- acceptance: through the adb-served simulator -------------------------------------------


def test_dark_mode_page_completes_on_the_adb_served_oneplus_world(adb_host, tmp_path):
    from execution.adb_device import AdbDevice
    from phonesim.adb_server import AdbDeviceServer

    sim = SimDevice.open(ONEPLUS)
    server = AdbDeviceServer(sim)
    try:
        adb_host.connect(server.address)
        device = AdbDevice(server.address, adb_port=adb_host.port, timeout=20.0, retry_delay=0.05)
        # an adb device has no world: the map comes from the configured source
        predictor = _predictor(True, ui_map=ONEPLUS)
        traj = run_episode(DARK_MODE_PAGE, predictor, device, qid="q", url="https://howto.example/dark",
                           app=SETTINGS, query="how to turn on dark mode", out_dir=tmp_path)
        device.close()
    finally:
        adb_host.disconnect(server.address)
        server.close()

    assert traj.stop_reason == StopReason.COMPLETED, traj.stop_detail
    assert traj.ui_map == f"ui_map {ONEPLUS}"
    assert sim.simulator.goal_satisfied("dark_mode_on")  # the label, read by the test only
    labels = [s.action.target_label for s in traj.steps]
    assert labels == ["Display", "Dark mode", "Manual"]
    # Display > Dark mode opens a screen whose switch is titled "Manual" (off before the tap)
    manual = next(c for c in traj.steps[2].controls if c["label"] == "Manual")
    assert manual.get("checked") is False and traj.steps[2].screen["title"] == "Dark mode"
    assert not any(s.deviation for s in traj.steps)  # the page's steps worked as written
    verdict = HeuristicJudge(use_embeddings=False).judge(traj, tmp_path)
    assert verdict.score == 1.0 and verdict.detail[-1]["terminal"]
    assert (tmp_path / "trajectory.json").exists() and (tmp_path / "final.png").exists()


def test_a_stock_android_13_page_is_judged_correctly_on_oneplus():
    # "Dark theme" is stock Android's name; OnePlus says "Dark mode" and hides the switch one level down
    page = ["Open the Settings app.", "Tap Display.", "Turn on Dark theme."]
    traj, dev = _run(page, _predictor(True, use_embeddings=True))
    reached = dev.simulator.goal_satisfied("dark_mode_on")  # label only
    verdict = HeuristicJudge().judge(traj)
    # whatever the agent managed, the judge must agree with the device's real state
    assert (verdict.score == 1.0) == reached
    assert not reached and traj.stop_reason == StopReason.NO_ACTION
    # ... and the trajectory says why: the step that found no "Dark theme", searched for on Display
    assert traj.stop_detail.startswith("step 3") and "no control matches 'Dark theme'" in traj.stop_detail
    search = [s for s in traj.steps if s.step_index == 2]
    assert search and all(s.deviation and "'Dark theme' not" in s.action.rationale for s in search)
    assert search[0].screen["title"] == "Display"
    # the map knows no "Dark theme" either, so it proposed nothing
    assert not any(s.action.rationale.startswith("ui-map route") for s in traj.steps)
    assert verdict.detail[2]["done"] is False and verdict.detail[-1]["terminal"] is False
    # the verdict names the goal the page never reached (the judge's wording is its own)
    assert "dark mode" in verdict.detail[-1]["why"].lower()


# --- the map repairs what the page skipped --------------------------------------------------


def test_a_page_that_skips_a_screen_fails_without_the_map():
    traj, dev = _run(SKIPPING_PAGE, _predictor(False))
    assert traj.stop_reason == StopReason.NO_ACTION and "'Dark mode'" in traj.stop_detail
    assert traj.ui_map is None
    assert not dev.simulator.goal_satisfied("dark_mode_on")


def test_the_map_repairs_it_and_every_repair_is_a_deviation():
    traj, dev = _run(SKIPPING_PAGE, _predictor(True))
    assert traj.stop_reason == StopReason.COMPLETED, traj.stop_detail
    assert dev.simulator.goal_satisfied("dark_mode_on")
    assert traj.ui_map == "world oneplus-settings-android11"
    repairs = [s for s in traj.steps if s.deviation]
    assert [s.action.target_label for s in repairs] == ["Display"]
    assert repairs[0].action.rationale.startswith("ui-map route: Display > Dark mode")
    assert repairs[0].step_index == 1 and not repairs[0].step_done
    # the literal action of the step came after the repair and completed it
    literal = next(s for s in traj.steps if s.step_index == 1 and s.step_done)
    assert literal.action.target_label == "Dark mode" and not literal.deviation
    verdict = HeuristicJudge(use_embeddings=False).judge(traj)
    assert verdict.score == 1.0  # the task is done; the deviation is what ranking sees


def test_the_map_goes_back_when_the_target_is_in_another_branch():
    traj, dev = _run(["Open Settings", "Tap Battery", "Tap Dark mode", "Turn it on"], _predictor(True))
    assert traj.stop_reason == StopReason.COMPLETED, traj.stop_detail
    moves = [(s.action.type.value, s.action.target_label) for s in traj.steps if s.deviation]
    assert moves == [("back", None), ("click", "Display")]
    back = next(s for s in traj.steps if s.deviation)
    assert "going back from 'Battery'" in back.action.rationale and back.screen["title"] == "Battery"
    assert dev.simulator.goal_satisfied("dark_mode_on")


def test_a_row_hidden_under_advanced_is_expanded_first():
    traj, _ = _run(["Open Settings", "Tap Privacy", "Tap Permission Manager"], _predictor(False))
    taps = [(s.action.target_label, s.deviation, s.step_done) for s in traj.steps if not s.noop]
    assert taps == [("Privacy", False, True), ("Advanced", True, False), ("Permission Manager", False, True)]


def test_the_map_budget_bounds_repairs():
    # a target the map knows but the agent cannot reach within one map action
    traj, _ = _run(["Open Settings", "Tap Permission Manager"], _predictor(True, ui_map_max_actions=1))
    map_moves = [s for s in traj.steps if s.action.rationale.startswith("ui-map route")]
    assert len(map_moves) == 1


# --- the navigator itself -------------------------------------------------------------------


@pytest.fixture(scope="module")
def oneplus_nav() -> MapNavigator:
    return MapNavigator(load_ui_map(ONEPLUS))


def test_navigator_locates_screens_and_ignores_other_apps(oneplus_nav):
    dev = SimDevice.open(ONEPLUS)
    dev.reset(SETTINGS)
    dev.launch(SETTINGS)
    assert oneplus_nav.locate(_ui(dev)) == "top_level_settings"
    dev.simulator.open_screen("dark_mode_settings")
    assert oneplus_nav.locate(_ui(dev)) == "dark_mode_settings"
    dev.key("home")
    assert oneplus_nav.locate(_ui(dev)) is None
    assert oneplus_nav.next_move("Dark mode", _ui(dev)) is None


def test_navigator_expands_advanced_when_the_target_is_collapsed_on_this_screen(oneplus_nav):
    dev = SimDevice.open(ONEPLUS)
    dev.reset(SETTINGS)
    dev.launch(SETTINGS)
    route = oneplus_nav.map.route_to("Color correction")
    assert [h.tap for h in route] == ["System", "Accessibility"]
    dev.simulator.open_screen("accessibility_settings")
    assert oneplus_nav.locate(_ui(dev)) == "accessibility_settings"
    # the row is collapsed: until "Advanced" scrolls into view the map has nothing to add
    # (a plain scroll search does that); then it says to tap "Advanced"
    for _ in range(8):
        move = oneplus_nav.next_move("Color correction", _ui(dev))
        if move is not None:
            break
        dev.swipe(540, 1800, 540, 900)
    assert move is not None and move.kind == "tap" and move.control.label == "Advanced"
    assert move.why.startswith("ui-map route: Advanced > Color correction") and "is hidden" in move.why
    assert oneplus_nav.next_move("No such setting anywhere", _ui(dev)) is None


def test_maps_come_from_the_config_or_the_simulated_world():
    sim = SimDevice.open("oneui5-settings")
    uimap, where = ui_map_for_device(sim)
    assert where == "world oneui5-settings" and uimap.home == sim.world.launch_screen
    assert ui_map_for_device(sim)[0] is uimap  # built once per world file
    configured, where = ui_map_for_device(sim, ONEPLUS)
    assert where == f"ui_map {ONEPLUS}" and "dark_mode_settings" in configured.screens

    class NoWorld:  # a phone as Device declares it: a spec, no world
        spec = "adb:emulator-5554"
        world = None

    none, why = ui_map_for_device(NoWorld())
    assert none is None and "adb:emulator-5554" in why and "execution.agent.ui_map" in why


def test_the_config_flag_reaches_the_predictor():
    cfg = load_config(overrides=[parse_override("execution.agent.use_ui_map=true"),
                                 parse_override(f"execution.agent.ui_map={ONEPLUS}")])
    pred = make_predictor(cfg.execution)
    assert pred.use_ui_map and pred.ui_map == ONEPLUS
    assert not make_predictor(load_config().execution).use_ui_map  # off by default


# --- the deviation count reaches the ranking features ----------------------------------------


def test_runner_counts_repairs_and_the_feature_ranks_repaired_pages_lower(tmp_path: Path):
    from execution.stage import execute_run
    from verirank_core.extraction_records import Extraction, ExtractionStatus, GroundedStep, Query
    from ranking.features import build_feature_table

    run = tmp_path / "run"
    run.mkdir()
    write_jsonl(run / "queries.jsonl", [Query(qid="q1", query="how to turn on dark mode", app=SETTINGS,
                                              world=ONEPLUS)])

    def page(rank: int, steps: list[str]) -> Extraction:
        return Extraction(qid="q1", url=f"https://howto.example/{rank}", rank=rank, query="how to turn on dark mode",
                          status=ExtractionStatus.OK,
                          steps=[GroundedStep(index=i, text=t, xpath=f"/html/body/ol/li[{i + 1}]")
                                 for i, t in enumerate(steps)])

    write_jsonl(run / "extraction.jsonl", [page(1, SKIPPING_PAGE), page(2, DARK_MODE_PAGE)])
    cfg = load_config(overrides=[parse_override(s) for s in (
        f"execution.devices=[sim:{ONEPLUS}]", "execution.agent.use_ui_map=true",
        "execution.agent.heuristic.use_embeddings=false", "execution.save_screens=false",
        "ranking.features.names=[F4, n_deviations_norm]")])
    execute_run(run, cfg)
    rows = {r.url: r for r in read_jsonl(run / "execution.jsonl", ExecutionResult)}
    repaired, literal = rows["https://howto.example/1"], rows["https://howto.example/2"]
    assert repaired.n_deviations == 1 and literal.n_deviations == 0
    assert repaired.f4 == literal.f4 == 1.0  # both pages reach dark mode; only the deviation tells them apart
    table = build_feature_table(run, cfg).set_index("url")
    assert table.loc["https://howto.example/1", "n_deviations_norm"] > 0
    assert table.loc["https://howto.example/2", "n_deviations_norm"] == 0


# --- HowToBench tasks on the real-app worlds ---------------------------------------------------


def test_real_world_tasks_are_well_posed_for_the_replay_labeller(tmp_path):
    from phonesim.world import load_world
    from howtobench.build import check_task
    from howtobench.replay import replay
    from howtobench.tasks import gold_actions, load_tasks

    import shutil

    tasks_dir = Path(__file__).resolve().parents[2] / "datasets" / "howtobench" / "tasks"
    for f in tasks_dir.glob("real-*.yaml"):  # only the real-app worlds' tasks
        shutil.copy(f, tmp_path / f.name)
    tasks = load_tasks(tmp_path)
    assert {t.world for t in tasks} >= {ONEPLUS, "imported/utg-notes", "imported/utg-file-manager"}
    assert len(tasks) >= 20 and any(t.goal == "dark_mode_on" for t in tasks)
    worlds = {}
    for task in tasks:
        world = worlds.setdefault(task.world, load_world(task.world))
        check_task(task, world)  # goal false at the start, true after the gold path (raises otherwise)
        # without its last step the path must fall short (partial pages are not relevant)
        assert not replay(world, task.goal, gold_actions(task, task.path[:-1])).reached, task.id
    # the synthetic "older version" paths skip the overflow menu: a literal reader gets stuck
    notes = next(t for t in tasks if t.id == "utg-notes-delete")
    stuck = replay(worlds[notes.world], notes.goal, gold_actions(notes, notes.outdated[0].path))
    assert not stuck.reached and stuck.failed_at == 1


def test_the_map_repairs_an_older_version_page_on_a_utg_world():
    dev = SimDevice.open("imported/utg-notes")
    page = ["Open the Notes app.", "Tap Delete note."]  # "Delete note" sits in the overflow menu
    for use_map, reached in ((False, False), (True, True)):
        traj = run_episode(page, _predictor(use_map), dev, qid="q", url="https://howto.example/notes",
                           app=dev.world.app.package)
        assert dev.simulator.goal_satisfied("task_2") is reached, traj.stop_detail
    assert [s.action.target_label for s in traj.steps if s.deviation] == ["More options"]
