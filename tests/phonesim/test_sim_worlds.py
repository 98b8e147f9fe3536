"""Every bundled world is coherent: it loads, every screen is reachable by taps from the launcher,
and every goal can be made true by some input sequence (found by BFS in the simulator itself)."""

from __future__ import annotations

import pytest

from phonesim.explore import explore, relevant_vars, replay, solve_goal
from phonesim.simulator import Simulator
from phonesim.world import list_worlds, load_world

WORLDS = list_worlds()
OURS = ("android13-settings", "android9-settings", "video-app", "maps-app")


def test_the_four_reference_worlds_are_bundled():
    assert set(OURS) <= set(WORLDS)


@pytest.mark.parametrize("name", OURS)
def test_reference_worlds_are_rich_enough(name):
    world = load_world(name)
    assert len(world.goals) >= 15
    assert len(world.screens) >= 20
    assert any(s.kind == "dialog" for s in world.screens)
    assert all(g.query for g in world.goals.values())
    sim = Simulator(world)
    sim.launch(world.app.package)
    # a long top-level list: at least one page scrolls, like on a phone
    assert any(sim.open_screen(s.id) or sim.window().max_scroll > 0 for s in world.screens if s.kind == "page")


@pytest.mark.parametrize("name", WORLDS)
def test_world_is_coherent(name):
    world = load_world(name)
    report = explore(world)
    assert not report.truncated
    assert report.unreachable == [], f"{name}: screens no tap sequence reaches: {report.unreachable}"
    # a reported route really shows its screen when replayed on a fresh phone
    for screen_id, path in list(report.reached.items())[:: max(1, len(report.reached) // 8)]:
        sim = Simulator(world)
        replay(sim, path)
        assert screen_id in [w.screen_id for w in sim.windows()], (screen_id, [str(m) for m in path])
    initial = Simulator(world)
    for goal in world.goals:
        path = solve_goal(world, goal)
        assert path is not None, f"{name}: goal {goal} cannot be reached"
        sim = Simulator(world)
        assert not sim.goal_satisfied(goal), f"{name}: goal {goal} is already true at start"
        replay(sim, path)
        assert sim.goal_satisfied(goal), (goal, [str(m) for m in path])
    assert initial.screen_id == "launcher"


def test_relevant_vars_follow_the_gating_chain():
    world = load_world("android13-settings")
    # USB debugging lives in Developer options, which appear after 7 taps on Build number
    assert relevant_vars(world, variables=["usb_debugging"]) >= {"usb_debugging", "build_taps"}
    assert "build_taps" not in relevant_vars(world, variables=["dark_theme"])
