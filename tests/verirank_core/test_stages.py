"""The one runner: stage log, reuse, refusal of mixed settings, --until."""

from __future__ import annotations

import json

import pytest

from verirank_core.config import load_config, parse_override
from verirank_core.errors import ConfigError, StoreError
from verirank_core.stages import diff_settings, run_stages
from verirank_core.store import RunDir


class Appender:
    """A stage that appends one line per call to NAME.txt; its fingerprint is one setting."""

    append_only = True

    def __init__(self, name: str, requires: tuple[str, ...] = ()):
        self.name, self.calls, self.requires = name, 0, requires

    def fingerprint(self, cfg):
        return {"top_n": cfg.extraction.search.top_n}

    def __call__(self, run, cfg, progress):
        self.calls += 1
        with open(run / f"{self.name}.txt", "a") as fh:
            fh.write("x\n")
        return {"lines": sum(1 for _ in open(run / f"{self.name}.txt"))}


def _cfg(top_n: int = 10):
    return load_config(overrides=[parse_override(f"extraction.search.top_n={top_n}")], use_default_file=False)


def test_the_runner_logs_every_stage_in_the_manifest(tmp_path):
    run = RunDir(tmp_path / "run")
    stages = [Appender("a"), Appender("b")]
    lines = []
    out = run_stages(run, _cfg(), stages, pipeline="test", echo=lines.append)
    log = json.loads(run.manifest_path.read_text())["stages"]
    assert [(e["stage"], e["pipeline"], e["fingerprint"], e["counts"]) for e in log] == [
        ("a", "test", {"top_n": 10}, {"lines": 1}), ("b", "test", {"top_n": 10}, {"lines": 1})]
    assert all("finished" in e and e["seconds"] >= 0 for e in log)
    assert [o.status for o in out.values()] == ["ran", "ran"] and len(lines) == 2
    assert json.loads(run.manifest_path.read_text())["config"]["extraction"]["search"]["top_n"] == 10


def test_without_reuse_every_stage_runs_again(tmp_path):
    run = RunDir(tmp_path)
    stages = [Appender("a")]
    run_stages(run, _cfg(), stages, echo=lambda line: None)
    run_stages(run, _cfg(20), stages, echo=lambda line: None)  # no refusal either: each stage resumes itself
    assert stages[0].calls == 2


def test_reuse_skips_finished_stages_until_one_runs_again(tmp_path):
    run = RunDir(tmp_path)
    a, b = Appender("a"), Appender("b")
    run_stages(run, _cfg(), [a, b], reuse=True, echo=lambda line: None)
    out = run_stages(run, _cfg(), [a, b], reuse=True, echo=lambda line: None)
    assert {n: o.status for n, o in out.items()} == {"a": "reused", "b": "reused"}
    assert (a.calls, b.calls) == (1, 1)
    # an interrupted stage (no "finished") runs again, and so does every stage after it
    manifest = json.loads(run.manifest_path.read_text())
    del manifest["stages"][0]["finished"]
    run.manifest_path.write_text(json.dumps(manifest))
    out = run_stages(run, _cfg(), [a, b], reuse=True, echo=lambda line: None)
    assert {n: o.status for n, o in out.items()} == {"a": "ran", "b": "ran"}


def test_reuse_refuses_other_settings_for_append_only_stages(tmp_path):
    run = RunDir(tmp_path)
    run_stages(run, _cfg(10), [Appender("a")], pipeline="demo", reuse=True, echo=lambda line: None)
    before = run.manifest_path.read_bytes()
    with pytest.raises(ConfigError, match=r"holds a demo of other a settings \(top_n: 10 then, 20 now\).*--fresh"):
        run_stages(run, _cfg(20), [Appender("a")], pipeline="demo", reuse=True, hint="give --fresh",
                   echo=lambda line: None)
    assert run.manifest_path.read_bytes() == before


def test_until_stops_after_the_named_stage_and_rejects_unknown_names(tmp_path):
    a, b = Appender("a"), Appender("b")
    out = run_stages(RunDir(tmp_path), _cfg(), [a, b], until="a", echo=lambda line: None)
    assert list(out) == ["a"] and b.calls == 0
    with pytest.raises(ConfigError, match="valid: a, b"):
        run_stages(RunDir(tmp_path), _cfg(), [a, b], until="c", echo=lambda line: None)


def test_settings_added_later_do_not_block_a_resume():
    then = {"execution": {"max_steps": 28}, "features": {"names": ["F1"]}}
    now = {"execution": {"max_steps": 28, "new_setting": True}, "features": {"names": ["F1"]}}
    assert diff_settings(then, now) == []
    assert diff_settings(then, {**now, "execution": {"max_steps": 5}}) == ["execution.max_steps: 28 then, 5 now"]


class WarmUpRecorder(Appender):
    """An Appender with a warm_up hook that records the order of calls."""

    def __init__(self, name: str, events: list):
        super().__init__(name)
        self.events = events

    def warm_up(self, cfg):
        self.events.append(("warm_up", self.name))

    def __call__(self, run, cfg, progress):
        self.events.append(("run", self.name))
        return super().__call__(run, cfg, progress)


def test_warm_up_is_called_before_the_first_stage_for_each_stage_that_will_run(tmp_path):
    run = RunDir(tmp_path)
    events: list = []
    stages = [WarmUpRecorder("a", events), WarmUpRecorder("b", events)]
    run_stages(run, _cfg(), stages, reuse=True, echo=lambda line: None)
    assert events == [("warm_up", "a"), ("warm_up", "b"), ("run", "a"), ("run", "b")]
    # the same settings again: both are reused, so nothing is warmed up
    events.clear()
    run_stages(run, _cfg(), stages, reuse=True, echo=lambda line: None)
    assert events == []
    # an interrupted a runs again, and so does b after it: both are warmed up first
    manifest = json.loads(run.manifest_path.read_text())
    del manifest["stages"][0]["finished"]
    run.manifest_path.write_text(json.dumps(manifest))
    events.clear()
    run_stages(run, _cfg(), stages, reuse=True, echo=lambda line: None)
    assert events == [("warm_up", "a"), ("warm_up", "b"), ("run", "a"), ("run", "b")]


def test_warm_up_skips_stages_after_until(tmp_path):
    events: list = []
    stages = [WarmUpRecorder("a", events), WarmUpRecorder("b", events)]
    run_stages(RunDir(tmp_path), _cfg(), stages, until="a", echo=lambda line: None)
    assert events == [("warm_up", "a"), ("run", "a")]


def test_a_stage_runs_only_when_what_it_requires_exists(tmp_path):
    """The runner checks ``requires`` before the stage starts and names the command that writes the file."""
    run = RunDir(tmp_path / "run")
    stage = Appender("a", requires=("extraction.jsonl",))
    with pytest.raises(StoreError, match=r"extraction.jsonl not found: run `verirank extract .*run` first"):
        run_stages(run, _cfg(), [stage], echo=lambda line: None)
    assert stage.calls == 0 and run.read_manifest().get("stages") is None
    (run / "extraction.jsonl").write_text("")
    run_stages(run, _cfg(), [stage], echo=lambda line: None)
    assert stage.calls == 1
