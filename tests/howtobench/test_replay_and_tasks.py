"""The labeller's replay and the task definitions it checks."""

from __future__ import annotations

from phonesim.world import load_world
from howtobench.replay import Replayer, normalise_label, replay
from howtobench.tasks import Step, gold_actions, load_tasks
from phonesim.simulator import Simulator


def test_every_bundled_task_is_well_posed():
    tasks = load_tasks()
    assert len({t.world for t in tasks}) >= 6
    assert sum(len(t.queries) for t in tasks if t.split == "test") >= 150
    worlds = {}
    for t in tasks:
        world = worlds.setdefault(t.world, load_world(t.world))
        result = replay(world, t.goal, gold_actions(t))
        assert not result.held_at_start and result.reached, t.id
        # dropping the last step must break it (otherwise 'partial' pages would be relevant)
        assert not replay(world, t.goal, gold_actions(t, t.path[:-1])).reached, t.id


def test_replay_scrolls_to_find_a_label_and_reports_where_it_got_stuck():
    world = load_world("oneui5-settings")
    events = []
    sim = Simulator(world)
    sim.reset()
    player = Replayer(sim, on_event=lambda kind, d: events.append(kind))
    assert player.perform(Step(op="launch", label="Settings")) is None
    assert player.perform(Step(op="tap", label="General management")) is None  # below the fold
    assert "swipe" in events and sim.screen_id == "general"
    stuck = replay(world, "dark_mode_on", [Step(op="launch", label="Settings"), Step(op="tap", label="Display"),
                                           Step(op="toggle", label="Dark theme")])
    assert stuck.failed_at == 2 and "Dark theme" in stuck.reason and not stuck.reached


def test_labels_match_case_and_quotes_insensitively():
    assert normalise_label('"Send a “Do Not Track” request".') == 'send a “do not track” request'
    assert normalise_label("  Dark   mode ") == "dark mode"
