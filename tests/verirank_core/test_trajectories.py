"""RunTrajectories: a row's trajectory from trajectories.jsonl (the last line of its key) or from a
page's own trajectory.json (runs made before, imports), with errors that name the file and the row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verirank_core.errors import SchemaError, StoreError
from verirank_core.execution_records import ExecutionResult, ExecutionStatus, StopReason, Trajectory
from verirank_core.store import LineLog, json_line
from verirank_core.trajectories import TRAJECTORIES_FILE, RunTrajectories


def _traj(url: str, detail: str = "") -> Trajectory:
    return Trajectory(qid="q1", url=url, device="sim:w", instructions=["Open Settings"],
                      stop_reason=StopReason.COMPLETED, stop_detail=detail, final_xml="screens/ab.xml")


def _row(url: str, trajectory: str | None = TRAJECTORIES_FILE) -> ExecutionResult:
    return ExecutionResult(qid="q1", url=url, rank=1, status=ExecutionStatus.EXECUTED, trajectory=trajectory)


def test_the_last_line_of_a_key_is_the_trajectory_of_its_row(tmp_path: Path) -> None:
    with LineLog(tmp_path / TRAJECTORIES_FILE) as log:
        log.append(json_line(_traj("https://a.example/", "first attempt")))
        log.append(json_line(_traj("https://b.example/")))
        log.append(json_line(_traj("https://a.example/", "run again")))
    trajectories = RunTrajectories(tmp_path)
    assert trajectories.load(_row("https://a.example/")).stop_detail == "run again"
    assert trajectories.load(_row("https://b.example/")).url == "https://b.example/"
    # screen names are relative to the folder of the file: the run directory
    assert trajectories.folder_of(_row("https://a.example/")) == tmp_path
    assert trajectories.load(_row("https://c.example/", trajectory=None)) is None


def test_a_missing_or_broken_line_is_an_error_that_names_the_row(tmp_path: Path) -> None:
    good = json_line(_traj("https://a.example/"))
    # a line of zeros (a power cut), a line that is not an object, and a torn last line
    (tmp_path / TRAJECTORIES_FILE).write_bytes(
        good + b"\0" * 40 + b"\n" + b"[1, 2]\n" + json_line(_traj("https://torn.example/"))[:-9])
    trajectories = RunTrajectories(tmp_path)
    assert trajectories.load(_row("https://a.example/")).url == "https://a.example/"
    with pytest.raises(StoreError, match=r"has no trajectory for \(q1, https://torn.example/\)"):
        trajectories.load(_row("https://torn.example/"))
    with pytest.raises(StoreError, match="does not exist"):
        RunTrajectories(tmp_path / "elsewhere").load(_row("https://a.example/"))


def test_a_line_that_is_not_a_trajectory_is_a_schema_error(tmp_path: Path) -> None:
    bad = dict(_traj("https://a.example/").to_json_dict(), stop_reason="finished somehow")
    (tmp_path / TRAJECTORIES_FILE).write_text(json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(SchemaError, match=r"stop_reason"):
        RunTrajectories(tmp_path).load(_row("https://a.example/"))


def test_a_page_folder_of_an_older_run_is_read_too(tmp_path: Path) -> None:
    folder = tmp_path / "trajectories" / "q1" / "abc"
    folder.mkdir(parents=True)
    (folder / "trajectory.json").write_text(json.dumps(_traj("https://a.example/").to_json_dict()))
    row = _row("https://a.example/", trajectory="trajectories/q1/abc/trajectory.json")
    trajectories = RunTrajectories(tmp_path)
    assert trajectories.load(row).url == "https://a.example/"
    assert trajectories.folder_of(row) == folder
    # a file holding another page's trajectory is refused, not silently used
    with pytest.raises(SchemaError, match=r"trajectory is for \(q1, https://a.example/\), expected"):
        trajectories.load(_row("https://b.example/", trajectory="trajectories/q1/abc/trajectory.json"))
    with pytest.raises(StoreError, match="named in execution.jsonl does not exist"):
        trajectories.load(_row("https://a.example/", trajectory="trajectories/q1/gone/trajectory.json"))


def test_a_line_log_cuts_a_torn_line_when_opened_again(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": 2')  # killed in the middle of the second write
    with LineLog(path) as log:
        log.append(b'{"a": 3}\n')
    assert path.read_bytes() == b'{"a": 1}\n{"a": 3}\n'


def test_keys_are_read_from_lines_as_stage_2_writes_them_and_as_others_do(tmp_path: Path) -> None:
    # stage 2 writes with pydantic (key first, no spaces); a URL may hold quotes and backslashes
    odd = 'https://a.example/say "hi"\\there?q=1'
    lines = [_traj(odd, "stage 2").model_dump_json().encode() + b"\n",
             json.dumps(dict(_traj("https://b.example/").to_json_dict(), url="https://b.example/"),
                        indent=None, sort_keys=True).encode() + b"\n"]  # another writer's order
    (tmp_path / TRAJECTORIES_FILE).write_bytes(b"".join(lines))
    trajectories = RunTrajectories(tmp_path)
    assert trajectories.load(_row(odd)).stop_detail == "stage 2"
    assert trajectories.load(_row("https://b.example/")).url == "https://b.example/"
