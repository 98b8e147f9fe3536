"""DroidBot UI transition graphs (DroidTask) imported as simulator worlds."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support_worlds import find, tap_text, texts
from typer.testing import CliRunner

from phonesim.device import SimDevice
from phonesim.world import load_world
from phonesim.worlds import build_ui_map
from phonesim.worlds.coverage import utg_coverage
from phonesim.worlds.utg import (
    UNEXPLORED_VAR,
    build_utg_world,
    find_utg_dirs,
    load_tasks,
    load_utg,
    parse_state,
    replay_path,
)
from verirank_core.errors import WorldError

UTG_ROOT = Path("apps") / "droidtask-utg"


@pytest.fixture(scope="module")
def utg_root(shared_dir: Path) -> Path:
    return shared_dir / UTG_ROOT


def _app_names(shared: Path) -> list[str]:
    return [p.name for p in find_utg_dirs(shared / UTG_ROOT)]


def test_parse_state_maps_the_simplified_html():
    html = ("<input id=0>Search</input>\n<button id=1 text='More options'></button>\n"
            "<button id=2>Font size<br>Large</button>\n<checkbox id=3 checked=True>Monthly view</checkbox>\n"
            "<p id=4><unknown></p>\n<button id=5>A\nB</button>\n<button id=6>go back</button>")
    els = parse_state(html)
    assert [(e.id, e.tag) for e in els] == [(0, "input"), (1, "button"), (2, "button"), (3, "checkbox"),
                                            (4, "p"), (5, "button"), (6, "button")]
    assert els[1].desc == "More options" and els[1].label == "More options"
    assert els[2].lines == ["Font size", "Large"]
    assert els[3].checked is True
    assert els[4].label == "<unknown>"
    assert els[5].label == "A B"
    assert els[6].is_back and not els[2].is_back


def test_the_result_of_a_record_is_the_next_records_state(utg_root):
    utg = load_utg(utg_root / "contacts")
    first = utg.transitions[0]
    src = utg.states[first.src]
    assert src.element(first.choice).label == "Groups"
    assert "Create group" in utg.states[first.dst].text()


_SHARED = Path(os.environ.get("VERIRANK_SHARED", Path(__file__).resolve().parents[3] / "shared"))


@pytest.mark.parametrize("app", _app_names(_SHARED) if (_SHARED / UTG_ROOT).is_dir() else [])
def test_every_app_imports_and_its_matched_tasks_replay_to_their_goals(utg_root, app):
    utg, matched, doc, world = build_utg_world(utg_root / app)
    assert len(world.screens) == len(utg.states)
    tasks = load_tasks(utg_root / "tasks.csv")
    has_tasks = any(app.replace("-", "").lower() == k for k in tasks)
    if has_tasks:
        assert matched, f"no DroidTask task of {app} has a replayable path"
    for tp in matched:
        dev = SimDevice(world)
        dev.reset(world.app.package)
        assert not dev.simulator.goal_satisfied(tp.goal)
        replay_path(dev, tp.steps)
        assert dev.simulator.goal_satisfied(tp.goal), tp.task
        assert dev.simulator.state[UNEXPLORED_VAR] == 0
    app_tasks = tasks.get(app.replace("-", "").lower())
    report = utg_coverage(utg, world, matched, app_tasks.tasks if app_tasks else [])
    assert report["states"] == len(utg.states)
    assert 1 <= report["reachable_from_start"] <= report["states"]
    assert report["elements_with_transitions"] + report["clickable_elements_without_transitions"] \
        <= report["elements"]
    assert sum(report["transition_kinds"].values()) == report["transitions"]
    assert len(report["tasks_matched"]) == len(matched) <= report["tasks"]


def test_unexplored_tap_leaves_the_screen_unchanged_and_back_returns(utg_root):
    utg, _, _, world = build_utg_world(utg_root / "contacts")
    dev = SimDevice(world)
    dev.reset(world.app.package)
    start = dev.dump_xml()
    start_screen = dev.simulator.screen_id
    # find an element of the start state DroidBot never acted on, and one it did
    forward = utg.forward()
    state = utg.states[utg.start]
    explored = next(e for e in state.elements if (utg.start, e.id, None) in forward
                    and forward[(utg.start, e.id, None)] != utg.start)
    unexplored = next(e for e in state.elements if e.clickable and not e.is_back and e.tag != "input"
                      and not any(k[0] == utg.start and k[1] == e.id for k in forward))
    attr = "content-desc" if not unexplored.lines else "text"
    tap_text(dev, unexplored.label, attr=attr)
    assert dev.dump_xml() == start
    assert dev.simulator.state[UNEXPLORED_VAR] == 1  # the labeller can mark the step "unexplored"
    tap_text(dev, explored.label, attr="content-desc" if not explored.lines else "text")
    assert dev.simulator.screen_id == forward[(utg.start, explored.id, None)]
    assert dev.dump_xml() != start
    dev.key("back")
    assert dev.simulator.screen_id == start_screen
    assert dev.dump_xml() == start


def test_typed_text_shows_in_the_field_and_enter_follows_the_typed_transition(utg_root):
    utg, _, _, world = build_utg_world(utg_root / "contacts")
    typed = next(t for t in utg.transitions if t.kind == "input")
    path = utg.reachable()[typed.src]
    dev = SimDevice(world)
    dev.reset(world.app.package)
    replay_path(dev, path)
    replay_path(dev, [typed])
    assert dev.simulator.screen_id == typed.dst


def test_route_to_on_a_utg_world(utg_root):
    _, _, _, world = build_utg_world(utg_root / "calendar")
    uimap = build_ui_map(world)
    hops = uimap.route_to("Yearly view")
    assert hops, "Yearly view should be reachable"
    assert hops[0].screen == world.launch_screen
    assert any("Yearly view" == el.title for el in uimap.screens[hops[-1].to].elements)
    assert uimap.route_to("definitely not in this app") is None


def test_malformed_utg_gives_a_clear_error(tmp_path):
    with pytest.raises(WorldError, match="no utg.yaml"):
        load_utg(tmp_path)
    (tmp_path / "utg.yaml").write_text("records:\n- Choice: 1\n  Input: 'null'\n", encoding="utf-8")
    with pytest.raises(WorldError, match=r"records\[0\] needs State"):
        load_utg(tmp_path)
    (tmp_path / "utg.yaml").write_text("records: [unclosed", encoding="utf-8")
    with pytest.raises(WorldError, match="not readable YAML"):
        load_utg(tmp_path)
    with pytest.raises(WorldError, match="no utg.yaml here or in its sub-folders"):
        find_utg_dirs(_empty(tmp_path))


def _empty(tmp_path: Path) -> Path:
    empty = tmp_path / "empty"
    empty.mkdir()
    return empty


def test_cli_imports_one_app_and_all_apps(tmp_path, utg_root):
    from verirank.cli import app

    one = CliRunner().invoke(app, ["worlds", "import-utg", str(utg_root / "clock"), "--out",
                                   str(tmp_path / "clock.json")])
    assert one.exit_code == 0, one.output
    assert "states:" in one.output and "tasks_matched:" in one.output
    world = load_world(tmp_path / "clock.json")
    assert world.goals and world.app.package == "com.simplemobiletools.clock"
    every = CliRunner().invoke(app, ["worlds", "import-utg", str(utg_root), "--out", str(tmp_path / "all"),
                                     "--report-json", str(tmp_path / "reports.json")])
    assert every.exit_code == 0, every.output
    written = sorted(p.stem for p in (tmp_path / "all").glob("*.json"))
    assert written == sorted(f"utg-{name.lower()}" for name in _app_names(utg_root.parents[1]))
    reports = json.loads((tmp_path / "reports.json").read_text())
    assert set(reports) == set(written)
    bad = CliRunner().invoke(app, ["worlds", "import-utg", str(_empty(tmp_path))])
    assert bad.exit_code == 2 and "error:" in bad.output


def test_committed_utg_worlds_load(repo_root, utg_root):
    for name in _app_names(utg_root.parents[1]):
        world = load_world(f"imported/utg-{name.lower()}")
        assert world.app.launch_screen == "s0"


def test_a_replayed_screen_reads_like_the_explored_one(utg_root):
    utg, _, _, world = build_utg_world(utg_root / "contacts")
    dev = SimDevice(world)
    dev.reset(world.app.package)
    shown = texts(dev)
    for label in ("Alice", "Bob", "Jack", "Favorites", "Groups"):
        assert label in shown
    assert find(dev, "More options", attr="content-desc") is not None
    assert "go back" not in shown  # DroidBot's back action is the back key, not a button
