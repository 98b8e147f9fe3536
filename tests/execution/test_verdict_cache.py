"""Verdicts that outlive a run: an unchanged page on a device like the last one runs on no device.

Every run here is a real stage 2 (``execute_run``) on real simulated phones
(``SimDevice``) that count the calls made to them; the cache is a real
SQLite file of the test's own.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

import pytest
import yaml

from execution.jobs import StageParts, build_parts
from execution.stage import ExecuteStage, execute_run
from execution.verdict_cache import VERDICT_CACHE_ENV, DeviceIdentity, VerdictCache, agent_fingerprint
from phonesim.device import SimDevice
from phonesim.world import load_world, resolve_world
from ranking.verified import summarize
from verirank_core.config import load_config, parse_override
from verirank_core.device import DeviceInfo
from verirank_core.execution_records import ExecutionResult, ExecutionStatus
from verirank_core.extraction_records import Extraction, ExtractionStatus, GroundedStep, Query
from verirank_core.store import read_jsonl, write_jsonl
from verirank_core.trajectories import RunTrajectories

WORLD = "android13-settings"
QUERY = "how to turn on dark mode"
PAGES = {
    "http://site.test/good": ["Open Settings", "Tap Display", "Turn on Dark theme"],
    "http://site.test/other": ["Go to Settings", "Select Display", "Switch on Dark theme"],
    "http://site.test/wrong": ["Open Settings", "Tap Wallpaper & style", "Tap Themes", "Select the Night theme"],
    "http://site.test/none": [],
}
#: what may differ between a row run on a device and the same row reused
RUN_ONLY = {"reused", "verified_at", "elapsed_s", "attempts"}

_DEVICE_METHODS = ("dump_xml", "screenshot_png", "screenshot_png_scaled", "screen_size", "tap", "long_press",
                   "swipe", "input_text", "key", "launch", "current_app", "info", "reset", "snapshot_settings",
                   "restore_settings")


class CountingSim(SimDevice):
    """A real simulated phone that counts every call made through the Device interface."""

    calls: Counter


def _counted(name: str) -> Callable:
    def method(self, *args, **kwargs):
        self.calls[name] += 1
        return getattr(SimDevice, name)(self, *args, **kwargs)
    return method


for _name in _DEVICE_METHODS:
    setattr(CountingSim, _name, _counted(_name))


@pytest.fixture(autouse=True)
def _cache_on(monkeypatch: pytest.MonkeyPatch) -> None:
    # the suite turns the per-user cache off (tests/conftest.py); these tests name a file of their own
    monkeypatch.delenv(VERDICT_CACHE_ENV, raising=False)


def _make_run(folder: Path, pages: dict[str, list[str]] = PAGES, app: str = "com.android.settings") -> Path:
    folder.mkdir(parents=True)
    write_jsonl(folder / "queries.jsonl", [Query(qid="q1", query=QUERY, app=app)])
    write_jsonl(folder / "extraction.jsonl", [
        Extraction(qid="q1", url=url, rank=rank, query=QUERY,
                   status=ExtractionStatus.OK if steps else ExtractionStatus.NO_STEPS,
                   steps=[GroundedStep(index=i, text=t, xpath=f"/html/body/ol/li[{i + 1}]")
                          for i, t in enumerate(steps)])
        for rank, (url, steps) in enumerate(pages.items(), start=1)])
    return folder


def _config(tmp_path: Path, *sets: str):
    base = [f"execution.verdict_cache={tmp_path / 'verdicts.sqlite'}", "execution.executor=threads",
            "execution.screenshots=every_step"]
    return load_config(overrides=[parse_override(s) for s in (*base, *sets)])


def _opener(calls: Counter, worlds: dict[str, Path | str] | None = None) -> Callable[[str], SimDevice]:
    """Opens ``sim:WORLD`` as itself, and ``adb:NAME`` as a simulated phone of ``worlds[NAME]``."""
    def open_(spec: str) -> SimDevice:
        calls["open"] += 1
        kind, _, target = spec.partition(":")
        world = load_world(target if kind == "sim" else (worlds or {})[target])
        device = CountingSim(world, spec=spec, serial=target)
        device.calls = calls
        return device
    return open_


def _rows(run: Path) -> dict[str, ExecutionResult]:
    return {r.url: r for r in read_jsonl(run / "execution.jsonl", ExecutionResult)}


def _world_file(tmp_path: Path, name: str, **device: str) -> Path:
    """A copy of the bundled world with some device facts changed (another phone, another Android)."""
    data = yaml.safe_load(resolve_world(WORLD).read_text("utf-8"))
    data["device"].update(device)
    data["name"] = WORLD
    path = tmp_path / name / f"{WORLD}.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(yaml.safe_dump(data), "utf-8")
    return path


def test_a_rerun_touches_no_device_and_gives_the_same_rows_and_ranking(tmp_path: Path) -> None:
    from ranking.features import build_feature_table
    from ranking.rerank import load_model, rerank_run
    from verirank_core.resources import BUNDLED_MODEL
    from verirank_core.store import write_parquet

    cfg = _config(tmp_path, f"execution.devices=[sim:{WORLD}]")
    first_calls, second_calls = Counter(), Counter()
    first, second = _make_run(tmp_path / "first"), _make_run(tmp_path / "second")

    counts1 = execute_run(first, cfg, opener=_opener(first_calls))
    counts2 = execute_run(second, cfg, opener=_opener(second_calls))

    assert counts1.get("reused") == 0 and first_calls["dump_xml"] > 0
    assert counts2["reused"] == 3 and counts2["executed"] == 3 and counts2["skipped"] == 1
    assert second_calls == Counter(), f"the rerun touched a device: {second_calls}"

    rows1, rows2 = _rows(first), _rows(second)
    assert rows1.keys() == rows2.keys()
    for url, row in rows2.items():
        if row.status != ExecutionStatus.EXECUTED:
            continue
        assert row.reused and row.verified_at and datetime.fromisoformat(row.verified_at) <= datetime.now(timezone.utc)
        assert not rows1[url].reused
        assert row.model_dump(exclude=RUN_ONLY) == rows1[url].model_dump(exclude=RUN_ONLY)
        # the trajectory and every screen it names are in the second run's own folder
        traj = RunTrajectories(second).load(row)
        assert traj.url == url and traj.steps
        for name in [traj.final_xml, *(s.xml for s in traj.steps), *(s.screenshot for s in traj.steps)]:
            assert name and (second / name).is_file()

    # the features and the reranked list read the reused trajectories as any others
    model = load_model(str(BUNDLED_MODEL))
    ranked = []
    for run in (first, second):
        table = build_feature_table(run, cfg)
        write_parquet(run / "features.parquet", table)
        ranked.append((table, [(i.qid, i.url) for i in rerank_run(run, cfg, model)]))
    assert ranked[0][0].equals(ranked[1][0])
    assert ranked[0][1] == ranked[1][1]

    # a resumed rerun finds every reused page complete (its trajectory and screens survived)
    again = Counter()
    assert execute_run(second, cfg, opener=_opener(again))["resumed"] == 4 and again == Counter()


def test_a_changed_step_misses_the_cache_and_only_that_page_runs(tmp_path: Path) -> None:
    cfg = _config(tmp_path, f"execution.devices=[sim:{WORLD}]")
    execute_run(_make_run(tmp_path / "first"), cfg, opener=_opener(Counter()))
    changed = dict(PAGES, **{"http://site.test/good": ["Open Settings", "Tap Display", "Turn on Dark mode"]})
    calls = Counter()
    run = _make_run(tmp_path / "second", changed)
    counts = execute_run(run, cfg, opener=_opener(calls))
    rows = _rows(run)
    assert counts["reused"] == 2 and calls["open"] == 1 and calls["dump_xml"] > 0
    assert not rows["http://site.test/good"].reused
    assert rows["http://site.test/other"].reused and rows["http://site.test/wrong"].reused


def test_another_agent_setting_misses_the_cache(tmp_path: Path) -> None:
    execute_run(_make_run(tmp_path / "first"), _config(tmp_path, f"execution.devices=[sim:{WORLD}]"),
                opener=_opener(Counter()))
    # a setting that shapes the verdict is part of the agent's fingerprint
    other = _config(tmp_path, f"execution.devices=[sim:{WORLD}]", "execution.agent.cycle_repeats=4")
    assert agent_fingerprint(other) != agent_fingerprint(_config(tmp_path, f"execution.devices=[sim:{WORLD}]"))
    calls = Counter()
    assert execute_run(_make_run(tmp_path / "agent"), other, opener=_opener(calls))["reused"] == 0
    assert calls["dump_xml"] > 0
    # how the devices are scheduled is not
    same = _config(tmp_path, f"execution.devices=[sim:{WORLD}, sim:{WORLD}]", "execution.max_attempts=5")
    assert agent_fingerprint(same) == agent_fingerprint(_config(tmp_path, f"execution.devices=[sim:{WORLD}]"))


def test_knowledge_cards_are_part_of_the_fingerprint(tmp_path: Path) -> None:
    cards = tmp_path / "cards.json"
    cards.write_text(json.dumps({"cards": []}), "utf-8")
    with_cards = _config(tmp_path, f"execution.agent.knowledge={cards}")
    before = agent_fingerprint(with_cards)
    cards.write_text(json.dumps({"cards": [{"from": "Dark mode", "to": "Dark theme"}]}), "utf-8")
    assert agent_fingerprint(with_cards) != before
    assert agent_fingerprint(_config(tmp_path)) != before


def test_a_phone_is_known_by_its_model_android_and_app_version(tmp_path: Path) -> None:
    """Phones (``adb:``) are asked who they are once a run; another Android version misses the cache."""
    android13, android14 = _world_file(tmp_path, "a13"), _world_file(tmp_path, "a14", os_version="14")
    cfg = _config(tmp_path, "execution.devices=[adb:phone]", "execution.isolation=off")
    first = _make_run(tmp_path / "first")
    execute_run(first, cfg, opener=_opener(Counter(), {"phone": android13}))
    assert {r.os_version for r in _rows(first).values() if r.status == ExecutionStatus.EXECUTED} == {"13"}

    same_calls = Counter()
    same = _make_run(tmp_path / "same")
    assert execute_run(same, cfg, opener=_opener(same_calls, {"phone": android13}))["reused"] == 3
    # one question (getprop, dumpsys package) and nothing else: no page ran
    assert same_calls == Counter({"open": 1, "info": 1})

    updated_calls = Counter()
    updated = _make_run(tmp_path / "updated")
    assert execute_run(updated, cfg, opener=_opener(updated_calls, {"phone": android14}))["reused"] == 0
    assert updated_calls["dump_xml"] > 0
    assert {r.os_version for r in _rows(updated).values() if r.status == ExecutionStatus.EXECUTED} == {"14"}

    # the identity: every field counts
    info = DeviceInfo(serial="x", model="IN2013", os_version="11", app_versions={"com.android.settings": "11"})
    base = DeviceIdentity.of_info(info, "com.android.settings")
    assert base.key() != DeviceIdentity.of_info(
        DeviceInfo(serial="y", model="IN2013", os_version="11", app_versions={"com.android.settings": "11.1"}),
        "com.android.settings").key()
    assert base.key() != DeviceIdentity.of_info(
        DeviceInfo(serial="x", model="IN2015", os_version="11", app_versions={"com.android.settings": "11"}),
        "com.android.settings").key()
    # another phone of the same model, Android and app version gives the same verdict
    assert base.key() == DeviceIdentity.of_info(
        DeviceInfo(serial="z", model="IN2013", os_version="11", app_versions={"com.android.settings": "11"}),
        "com.android.settings").key()


def test_no_reuse_and_the_maximum_age(tmp_path: Path) -> None:
    cfg = _config(tmp_path, f"execution.devices=[sim:{WORLD}]")
    execute_run(_make_run(tmp_path / "first"), cfg, opener=_opener(Counter()))

    calls = Counter()
    no_reuse = _config(tmp_path, f"execution.devices=[sim:{WORLD}]", "execution.reuse=false")
    assert execute_run(_make_run(tmp_path / "forced"), no_reuse, opener=_opener(calls))["reused"] == 0
    assert calls["dump_xml"] > 0

    # every stored verdict made 40 days ago: too old for the default 30, fine without a limit
    old = (datetime.now(timezone.utc) - timedelta(days=40)).replace(microsecond=0).isoformat()
    with sqlite3.connect(tmp_path / "verdicts.sqlite") as conn:
        conn.execute("UPDATE verdicts SET verified_at = ?", (old,))
    assert execute_run(_make_run(tmp_path / "stale"), cfg, opener=_opener(Counter()))["reused"] == 0
    ageless = _config(tmp_path, f"execution.devices=[sim:{WORLD}]", "execution.verdict_max_age_days=null")
    # the stale run stored fresh verdicts: make them old too, so only the unlimited age can reuse them
    with sqlite3.connect(tmp_path / "verdicts.sqlite") as conn:
        conn.execute("UPDATE verdicts SET verified_at = ?", (old,))
    calls = Counter()
    run = _make_run(tmp_path / "ageless")
    assert execute_run(run, ageless, opener=_opener(calls))["reused"] == 3 and calls == Counter()
    assert {r.verified_at for r in _rows(run).values() if r.reused} == {old}


def test_device_failures_and_injected_parts_are_never_cached(tmp_path: Path) -> None:
    cfg = _config(tmp_path, f"execution.devices=[sim:{WORLD}]", "execution.max_attempts=1")

    def dead(spec: str) -> SimDevice:
        from verirank_core.errors import DeviceError

        raise DeviceError(f"{spec}: unplugged")

    counts = execute_run(_make_run(tmp_path / "failed"), cfg, opener=dead)
    assert counts["device_failed"] == 3
    assert len(VerdictCache(tmp_path / "verdicts.sqlite")) == 0

    # parts built outside the config: no fingerprint describes them, so nothing is stored or read
    execute_run(_make_run(tmp_path / "injected"), cfg, parts_factory=lambda: StageParts(**vars(build_parts(cfg))))
    assert len(VerdictCache(tmp_path / "verdicts.sqlite")) == 0


def test_the_summary_says_where_and_when_a_reused_verdict_was_made(tmp_path: Path) -> None:
    cfg = _config(tmp_path, f"execution.devices=[sim:{WORLD}]")
    execute_run(_make_run(tmp_path / "first"), cfg, opener=_opener(Counter()))
    run = _make_run(tmp_path / "second")
    execute_run(run, cfg, opener=_opener(Counter()))
    row = _rows(run)["http://site.test/good"]
    day = row.verified_at[:10]
    assert summarize(row, True).startswith(
        f"verified on Pixel 6 (world {WORLD}), Android 13, com.android.settings 13, on {day}: ")
    fresh = _rows(tmp_path / "first")["http://site.test/good"]
    assert "on 20" not in summarize(fresh, True)


_WRITER = """
import sys
from execution.verdict_cache import DeviceIdentity, VerdictCache
cache = VerdictCache(sys.argv[1])
identity = DeviceIdentity("IN2013", "11", "com.android.settings", "11")
start = int(sys.argv[2])
for i in range(start, start + 40):  # one transaction a page, as many as a run's pages
    cache.put_many([(f"page{i}", identity, {"i": i}, b"{}", {f"screens/{i % 7}.xml": b"<x/>"})],
                   f"2026-11-{i % 28 + 1:02d}T00:00:00+00:00")
cache.close()
"""


def test_processes_write_one_cache_at_once(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, path, str(start)]) for start in (0, 40, 80)]
    assert [p.wait(120) for p in procs] == [0, 0, 0]
    cache = VerdictCache(path)
    assert len(cache) == 120
    assert cache.screen("screens/3.xml") == b"<x/>"
    hit = cache.lookup("page57", [DeviceIdentity("IN2013", "11", "com.android.settings", "11").key()])
    assert hit is not None and hit.row == {"i": 57}


def test_the_cache_settings_do_not_change_the_stage_fingerprint(tmp_path: Path) -> None:
    a = _config(tmp_path)
    b = load_config(overrides=[parse_override(s) for s in (
        "execution.verdict_cache=null", "execution.reuse=false", "execution.verdict_max_age_days=1",
        "execution.executor=threads", "execution.screenshots=every_step")])
    assert ExecuteStage().fingerprint(a) == ExecuteStage().fingerprint(b)


def test_no_reuse_on_the_command_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from verirank.cli import app

    def execute(run: Path, *flags: str) -> dict[str, ExecutionResult]:
        result = CliRunner().invoke(app, ["execute", str(run), "--devices", f"sim:{WORLD}", "--executor", "threads",
                                          "--set", f"execution.verdict_cache={tmp_path / 'cli.sqlite'}", *flags])
        assert result.exit_code == 0, result.output
        return _rows(run)

    execute(_make_run(tmp_path / "first"))
    forced = execute(_make_run(tmp_path / "forced"), "--no-reuse")
    assert not any(r.reused for r in forced.values())
    again = execute(_make_run(tmp_path / "again"))
    assert sum(r.reused for r in again.values()) == 3


def test_a_broken_cache_file_never_fails_a_run(tmp_path: Path) -> None:
    (tmp_path / "verdicts.sqlite").write_bytes(b"not a database, " * 100)
    cfg = _config(tmp_path, f"execution.devices=[sim:{WORLD}]")
    calls = Counter()
    counts = execute_run(_make_run(tmp_path / "run"), cfg, opener=_opener(calls))
    assert counts["executed"] == 3 and "reused" not in counts and calls["dump_xml"] > 0
