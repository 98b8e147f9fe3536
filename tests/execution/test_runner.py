"""The device pool: every page runs once, failures move to another device, runs resume."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from verirank_core.device import Device
from execution.devices import open_device
from verirank_core.execution_records import ExecutionResult, ExecutionStatus, StopReason
from execution.stage import execute_run
from verirank_core.trajectories import RunTrajectories
from verirank_core.extraction_records import Extraction, ExtractionStatus, GroundedStep, Query
from verirank_core.config import load_config, parse_override
from verirank_core.errors import DeviceError
from verirank_core.store import read_jsonl, write_jsonl

WORLD = "android13-settings"
GOOD = ["Open Settings", "Tap Display", "Turn on Dark theme"]
WRONG = ["Open Settings", "Tap Wallpaper & style", "Tap Themes", "Select the Night theme"]


def _extraction(qid: str, url: str, rank: int, steps: list[str]) -> Extraction:
    return Extraction(
        qid=qid, url=url, rank=rank, query="how to turn on dark mode",
        status=ExtractionStatus.OK if steps else ExtractionStatus.NO_STEPS,
        reason="" if steps else "no step block relevant to the query",
        steps=[GroundedStep(index=i, text=t, xpath=f"/html/body/ol/li[{i + 1}]") for i, t in enumerate(steps)],
    )


def _make_run(tmp_path: Path, n_good: int = 2) -> Path:
    run = tmp_path / "run"
    run.mkdir(parents=True)
    write_jsonl(run / "queries.jsonl", [Query(qid="q1", query="how to turn on dark mode", app="com.android.settings")])
    pages = [_extraction("q1", f"http://site.test/good{i}", i + 1, GOOD) for i in range(n_good)]
    pages.append(_extraction("q1", "http://site.test/wrong", n_good + 1, WRONG))
    pages.append(_extraction("q1", "http://site.test/none", n_good + 2, []))
    write_jsonl(run / "extraction.jsonl", pages)
    return run


def _config(*sets: str):
    return load_config(overrides=[parse_override(s) for s in sets])


class FlakyDevice(Device):
    """Fault injection over a real simulator: the device 'disconnects' after N calls."""

    def __init__(self, inner: Device, fail_after: int):
        self.inner, self.fail_after, self.calls = inner, fail_after, 0
        self.spec = inner.spec

    def _call(self, name: str, *args, **kwargs):
        self.calls += 1
        if self.calls > self.fail_after:
            raise DeviceError(f"{self.spec}: device offline (injected)")
        return getattr(self.inner, name)(*args, **kwargs)

    def dump_xml(self): return self._call("dump_xml")
    def screenshot_png(self): return self._call("screenshot_png")
    def screen_size(self): return self._call("screen_size")
    def tap(self, x, y): return self._call("tap", x, y)
    def long_press(self, x, y, duration_ms=800): return self._call("long_press", x, y, duration_ms)
    def swipe(self, x1, y1, x2, y2, duration_ms=300): return self._call("swipe", x1, y1, x2, y2, duration_ms)
    def input_text(self, text): return self._call("input_text", text)
    def key(self, key): return self._call("key", key)
    def launch(self, package, activity=None): return self._call("launch", package, activity)
    def current_app(self): return self._call("current_app")
    def info(self, packages=()): return self._call("info", packages)
    def reset(self, package=None): return self._call("reset", package)


def test_every_page_gets_one_record_and_a_trajectory(tmp_path: Path) -> None:
    run = _make_run(tmp_path)
    cfg = _config(f"execution.devices=[sim:{WORLD}, sim:{WORLD}]")
    from execution.stage import ExecuteStage
    from verirank_core.stages import run_stages
    from verirank_core.store import RunDir

    counts = run_stages(RunDir(run), cfg, [ExecuteStage()], echo=lambda line: None)["execute"].counts
    rows = {r.url: r for r in read_jsonl(run / "execution.jsonl", ExecutionResult)}
    assert len(rows) == 4
    assert counts["executed"] == 3 and counts["skipped"] == 1
    none = rows["http://site.test/none"]
    assert none.status == ExecutionStatus.SKIPPED and none.stop_reason == StopReason.NO_INSTRUCTIONS
    good = rows["http://site.test/good0"]
    assert good.status == ExecutionStatus.EXECUTED and good.n_actions >= 2
    # every executed page has one line in trajectories.jsonl, which its row names; the skipped one has none
    assert good.trajectory == "trajectories.jsonl" and none.trajectory is None
    lines = [json.loads(line) for line in (run / "trajectories.jsonl").read_text("utf-8").splitlines()]
    assert sorted(t["url"] for t in lines) == sorted(url for url, r in rows.items() if r.status == ExecutionStatus.EXECUTED)
    traj = next(t for t in lines if t["url"] == good.url)
    assert traj["instructions"] == GOOD
    assert not (run / "trajectories").exists()  # no folder per page
    # the wrong page cannot be completed as well as the correct one
    assert rows["http://site.test/wrong"].f4 < good.f4
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["stages"][-1]["stage"] == "execute" and "finished" in manifest["stages"][-1]
    # the garbage collector ignores what was loaded only while pages run here
    import gc

    assert gc.get_freeze_count() == 0


def test_a_failed_device_hands_the_page_to_another(tmp_path: Path) -> None:
    run = _make_run(tmp_path, n_good=1)
    opened: list[str] = []

    lock = threading.Lock()

    def opener(spec: str) -> Device:
        with lock:  # workers open devices concurrently
            first = not opened
            opened.append(spec)
        dev = open_device(spec)
        # the first device ever opened dies after a few calls
        return FlakyDevice(dev, fail_after=4) if first else dev

    cfg = _config(f"execution.devices=[sim:{WORLD}, sim:{WORLD}]", "execution.max_attempts=3")
    execute_run(run, cfg, opener=opener)
    rows = read_jsonl(run / "execution.jsonl", ExecutionResult)
    assert len(rows) == 3 and len({r.url for r in rows}) == 3
    retried = [r for r in rows if r.attempts == 2]
    assert len(retried) == 1 and retried[0].status == ExecutionStatus.EXECUTED


def test_a_device_that_always_fails_gives_device_failed_after_the_budget(tmp_path: Path) -> None:
    run = _make_run(tmp_path, n_good=1)
    cfg = _config(f"execution.devices=[sim:{WORLD}]", "execution.max_attempts=2")
    execute_run(run, cfg, opener=lambda spec: FlakyDevice(open_device(spec), fail_after=0))
    rows = {r.url: r for r in read_jsonl(run / "execution.jsonl", ExecutionResult)}
    failed = rows["http://site.test/good0"]
    assert failed.status == ExecutionStatus.DEVICE_FAILED and failed.attempts == 2
    assert "device offline" in failed.reason
    assert rows["http://site.test/none"].status == ExecutionStatus.SKIPPED


def test_resume_after_a_kill_runs_only_the_missing_pages(tmp_path: Path) -> None:
    run = _make_run(tmp_path)
    cfg = _config(f"execution.devices=[sim:{WORLD}]")
    execute_run(run, cfg)
    lines = (run / "execution.jsonl").read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    # keep one finished record and half of the next one, as a kill would leave it
    (run / "execution.jsonl").write_text(lines[0] + lines[1][: len(lines[1]) // 2])
    counts = execute_run(run, cfg)
    rows = read_jsonl(run / "execution.jsonl", ExecutionResult)
    assert len(rows) == 4 and len({(r.qid, r.url) for r in rows}) == 4
    assert counts["resumed"] == 1
    assert rows[0].to_json_dict() == first  # the finished record was not redone


def test_a_page_whose_trajectory_did_not_survive_runs_again_on_resume(tmp_path: Path) -> None:
    """trajectories.jsonl's last second is not fsynced: after a power cut a saved row may name a
    line that is gone or was never written (zeros). The resumed stage drops that row and runs the
    page again; the rows of the other pages stay as they were."""
    run = _make_run(tmp_path, n_good=3)
    cfg = _config(f"execution.devices=[sim:{WORLD}]")
    execute_run(run, cfg)
    before = {r.url: r for r in read_jsonl(run / "execution.jsonl", ExecutionResult)}
    lines = (run / "trajectories.jsonl").read_bytes().splitlines(keepends=True)
    urls = [json.loads(line)["url"] for line in lines]
    zeroed, lost = urls[0], urls[-1]
    lines[0] = b"\0" * (len(lines[0]) - 1) + b"\n"  # allocated, never written
    (run / "trajectories.jsonl").write_bytes(b"".join(lines[:-1]))  # the tail is gone
    counts = execute_run(run, cfg)
    rows = read_jsonl(run / "execution.jsonl", ExecutionResult)
    assert sorted(r.url for r in rows) == sorted(before)  # one row a page, none lost
    assert counts["resumed"] == 3 and counts["executed"] == 2
    after = {r.url: r for r in rows}
    trajectories = RunTrajectories(run)
    for url in (zeroed, lost):
        assert trajectories.load(after[url]).url == url
        assert after[url].f4 == before[url].f4 and after[url].status == before[url].status
    for url in set(urls) - {zeroed, lost}:
        assert after[url].to_json_dict() == before[url].to_json_dict()
        assert trajectories.load(after[url]).url == url


def test_a_trajectory_written_before_a_kill_is_superseded_by_the_page_run_again(tmp_path: Path) -> None:
    """A kill between a page's trajectory line and its row leaves a line no row names. The page runs
    again on resume and appends a new line; a reader finds the new one (the last line of a key)."""
    run = _make_run(tmp_path, n_good=2)
    cfg = _config(f"execution.devices=[sim:{WORLD}]")
    execute_run(run, cfg)
    rows = read_jsonl(run / "execution.jsonl", ExecutionResult)
    orphan = next(r for r in rows if r.trajectory)
    # as if killed after the trajectory line: the row is not there, and the stale line says so
    stale = dict(RunTrajectories(run).data(orphan), stop_detail="stale: written before the kill")
    with open(run / "trajectories.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(stale) + "\n")
    write_jsonl(run / "execution.jsonl", [r for r in rows if r.key() != orphan.key()])
    counts = execute_run(run, cfg)
    assert counts["executed"] == 1 and counts["resumed"] == len(rows) - 1
    after = {r.url: r for r in read_jsonl(run / "execution.jsonl", ExecutionResult)}
    assert sorted(after) == sorted(r.url for r in rows)
    again = RunTrajectories(run).load(after[orphan.url])
    assert again.url == orphan.url and not again.stop_detail.startswith("stale")
    keys = [(t["qid"], t["url"]) for t in map(json.loads, (run / "trajectories.jsonl").read_text().splitlines())]
    # the first run's line, the stale one and the new one are all kept; the row's trajectory is the last
    assert keys.count(orphan.key()) == 3 and keys[-1] == orphan.key()


def test_a_run_made_with_a_folder_per_page_resumes_and_reads_as_before(tmp_path: Path) -> None:
    """Runs made before trajectories.jsonl name each page's own trajectory.json, with screen names
    relative to that folder. Such rows stay done on resume, their pages are read as before, and the
    pages still to run go to trajectories.jsonl."""
    run = _make_run(tmp_path, n_good=2)
    cfg = _config(f"execution.devices=[sim:{WORLD}]")
    execute_run(run, cfg)
    rows = read_jsonl(run / "execution.jsonl", ExecutionResult)
    executed = [r for r in rows if r.trajectory]
    old, rerun = executed[0], executed[1]
    # rewrite `old` as the earlier layout wrote it
    data = RunTrajectories(run).data(old)
    relocate = lambda name: f"../../../{name}" if name else name  # noqa: E731
    data["final_xml"], data["final_screenshot"] = relocate(data["final_xml"]), relocate(data["final_screenshot"])
    for step in data["steps"]:
        step["xml"], step["screenshot"] = relocate(step["xml"]), relocate(step["screenshot"])
    folder = run / "trajectories" / "q1" / "0123456789ab"
    folder.mkdir(parents=True)
    (folder / "trajectory.json").write_text(json.dumps(data), encoding="utf-8")
    old.trajectory = "trajectories/q1/0123456789ab/trajectory.json"
    (run / "trajectories.jsonl").unlink()
    write_jsonl(run / "execution.jsonl", [old if r.key() == old.key() else r for r in rows if r.key() != rerun.key()
                                          and (r.key() == old.key() or not r.trajectory)])
    counts = execute_run(run, cfg)
    after = {r.url: r for r in read_jsonl(run / "execution.jsonl", ExecutionResult)}
    assert counts["resumed"] == len(rows) - len(executed) + 1 and counts["executed"] == len(executed) - 1
    assert after[old.url].trajectory == old.trajectory  # kept: its file and screens are there
    trajectories = RunTrajectories(run)
    assert trajectories.load(after[old.url]).url == old.url and trajectories.folder_of(after[old.url]) == folder
    assert (folder / trajectories.load(after[old.url]).final_xml).is_file()
    assert after[rerun.url].trajectory == "trajectories.jsonl" and trajectories.load(after[rerun.url]).url == rerun.url


def test_a_page_whose_screens_did_not_survive_runs_again_on_resume(tmp_path: Path) -> None:
    """The shared screen files are not fsynced either: a saved row whose trajectory names a lost
    screen is dropped on resume, and exactly the pages that named it run again."""
    run = _make_run(tmp_path, n_good=3)
    cfg = _config(f"execution.devices=[sim:{WORLD}]")
    execute_run(run, cfg)
    before = {r.url: r for r in read_jsonl(run / "execution.jsonl", ExecutionResult)}

    def screens_of(row: ExecutionResult) -> set[str]:
        traj = RunTrajectories(run).data(row)
        return {Path(n).name for n in [traj["final_xml"], *(s["xml"] for s in traj["steps"])] if n}

    named = {url: screens_of(row) for url, row in before.items() if row.trajectory}
    # a screen that some executed pages saw and others did not
    lost = next(name for name in sorted(set().union(*named.values()))
                if 0 < sum(name in s for s in named.values()) < len(named))
    (run / "screens" / lost).unlink()
    counts = execute_run(run, cfg)
    rerun = {url for url, s in named.items() if lost in s}
    assert counts["executed"] == len(rerun) and counts["resumed"] == len(before) - len(rerun)
    after = {r.url: r for r in read_jsonl(run / "execution.jsonl", ExecutionResult)}
    assert sorted(after) == sorted(before) and (run / "screens" / lost).is_file()
    for url in rerun:
        assert after[url].f4 == before[url].f4 and after[url].status == before[url].status


def test_missing_extraction_is_a_clear_error(tmp_path: Path) -> None:
    """Called without the runner too, the stage names the command that writes what it lacks."""
    from verirank_core.errors import StoreError

    with pytest.raises(StoreError, match=r"extraction.jsonl not found: run `verirank extract .*` first"):
        execute_run(tmp_path, _config())


@pytest.mark.slow
def test_ray_executor_gives_the_same_records(tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    run = _make_run(tmp_path, n_good=1)
    cfg = _config(f"execution.devices=[sim:{WORLD}, sim:{WORLD}]", "execution.executor=ray")
    try:
        execute_run(run, cfg)
    finally:
        ray.shutdown()
    rows = {r.url: r for r in read_jsonl(run / "execution.jsonl", ExecutionResult)}
    assert len(rows) == 3
    assert rows["http://site.test/good0"].status == ExecutionStatus.EXECUTED
    assert rows["http://site.test/none"].status == ExecutionStatus.SKIPPED

    thread_run = _make_run(tmp_path / "threads", n_good=1)
    execute_run(thread_run, _config(f"execution.devices=[sim:{WORLD}]"))
    threads = {r.url: r for r in read_jsonl(thread_run / "execution.jsonl", ExecutionResult)}
    for url, row in rows.items():
        assert row.f4 == threads[url].f4 and row.stop_reason == threads[url].stop_reason


@pytest.mark.parametrize("mode", ["every_step", "final", "none"])
def test_the_screenshot_setting_reaches_every_trajectory(tmp_path: Path, mode: str) -> None:
    run = _make_run(tmp_path)
    execute_run(run, _config(f"execution.devices=[sim:{WORLD}]", f"execution.screenshots={mode}"))
    rows = [r for r in read_jsonl(run / "execution.jsonl", ExecutionResult) if r.status == ExecutionStatus.EXECUTED]
    assert len(rows) == 3
    named: list[str] = []
    trajectories = RunTrajectories(run)
    for row in rows:
        folder = trajectories.folder_of(row)
        traj = trajectories.data(row)
        steps = [s["screenshot"] for s in traj["steps"]]
        assert traj["screenshots"] == mode and traj["screenshot_scale"] == 0.5 and len(traj["screen_size"]) == 2
        # no file per page: the trajectory is a line of trajectories.jsonl, its screens in the shared store
        assert folder == run and not (run / "trajectories").exists()
        if mode == "every_step":
            assert all(s is not None for s in steps) and traj["final_screenshot"]
        else:
            assert steps == [None] * len(steps)
            assert (traj["final_screenshot"] is not None) == (mode == "final")
        for name in steps + [traj["final_screenshot"]] + [s["xml"] for s in traj["steps"]] + [traj["final_xml"]]:
            if name is not None:
                assert (folder / name).resolve().parent == (run / "screens").resolve() and (folder / name).is_file()
                named.append(name)
    with_png = {n for n in named if n.endswith(".png")}
    assert (mode == "none") == (not with_png)
    # three pages on one world see the same launcher and Settings screens: each is stored once
    assert len(set(named)) < len(named) and len(list((run / "screens").iterdir())) == len(set(named))


def test_an_llm_judge_always_gets_every_step() -> None:
    assert _config().execution.screenshot_mode() == "final"
    assert _config("execution.screenshots=none", "execution.judge=llm").execution.screenshot_mode() == "every_step"
    with pytest.raises(Exception, match="screenshots"):
        _config("execution.screenshots=sometimes")
