"""The real-phone path as a user runs it: the CLI over `adb:` devices, on a machine where no adb
server runs yet.

The phone is the simulator served by ``verirank sim serve`` (a child process, reached through
adb like a phone on Wi-Fi debugging); the pages are a handful of the bundled demo's, served on
127.0.0.1. Nothing starts an adb server beforehand: ``ANDROID_ADB_SERVER_PORT`` names a free
private port (so 5037 is never touched) and the product must start the server itself, as on a
fresh machine or in CI. Every command is a child process, as a user types it.
"""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import pytest
from support_adb import wait_until
from support_http import serve
from support_served_sim import REPO, ServedSim, cli_command, cli_env

from verirank_core.execution_records import ExecutionResult, ExecutionStatus, StopReason
from verirank_core.ranking_records import RankedItem
from verirank_core.store import read_jsonl
from ranking.verified import summarize

WORLD = "android13-settings"
DEMO = REPO / "datasets" / "demo"
#: the ranker `verirank run` uses by default
MODEL = REPO / "datasets" / "models" / "lr-pretrain"
#: the first results of two demo queries: pages with steps, and pages without
PER_QUERY = 4
QIDS = ("demo1", "demo2")


def _corpus(tmp: Path, base_url: str) -> tuple[Path, Path]:
    """queries.jsonl and serp.jsonl for a few demo pages served at ``base_url``; the app is named
    by its package, as a user who knows it would, so the app's version is read from the phone."""
    queries = [json.loads(line) for line in (DEMO / "queries.jsonl").read_text("utf-8").splitlines()]
    serp = [json.loads(line) for line in (DEMO / "serp.jsonl").read_text("utf-8").splitlines()]
    q_file, s_file = tmp / "queries.jsonl", tmp / "serp.jsonl"
    q_file.write_text("".join(json.dumps(dict(q, app="com.android.settings")) + "\n"
                              for q in queries if q["qid"] in QIDS))
    rows = [dict(r, url=base_url + r["url"].split(":8765", 1)[1]) for r in serp
            if r["qid"] in QIDS and r["rank"] <= PER_QUERY]
    s_file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return q_file, s_file


def _verirank(env: dict[str, str], *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    done = subprocess.run(cli_command(*args), cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"verirank {' '.join(args)} exited {done.returncode}:\n{done.stdout[-3000:]}" \
                                 f"\n{done.stderr[-3000:]}"
    return done


def _rows(run: Path) -> list[ExecutionResult]:
    return read_jsonl(run / "execution.jsonl", ExecutionResult)


@pytest.fixture
def phone(no_adb_server):
    """The served simulator; its adb serial is its address (`adb connect` is the product's job)."""
    sim = ServedSim(WORLD).start()
    try:
        yield sim
    finally:
        sim.stop()


def test_every_stage_over_adb_with_no_adb_server_running_beforehand(no_adb_server, phone, tmp_path: Path):
    env = dict(cli_env(), **no_adb_server.env)
    out = tmp_path / "run"
    with serve(static_dir=DEMO) as site:
        queries, serp = _corpus(tmp_path, site.url("").rstrip("/"))
        _verirank(env, "run", "--queries", str(queries), "--serp", str(serp), "--out", str(out),
                  "--allow-private-hosts", "--devices", f"adb:{phone.address}")
    assert no_adb_server.listening()  # the product started adb's server on the port adb was told

    rows = _rows(out)
    assert len(rows) == len(QIDS) * PER_QUERY
    assert not [r for r in rows if r.status == ExecutionStatus.DEVICE_FAILED]
    executed = [r for r in rows if r.status == ExecutionStatus.EXECUTED]
    assert executed and any(r.f4 > 0 for r in executed)
    # the device's identity, as the phone reported it (getprop, dumpsys package)
    for row in executed:
        assert row.device == f"adb:{phone.address}" and row.world is None
        assert (row.device_model, row.device_serial, row.os_version) == ("Pixel 6", f"sim-{WORLD}", "13")
        assert (row.app, row.app_version) == ("com.android.settings", "13")

    # rerank again on its own (the stage that crashed on adb runs), then report and export
    (out / "reranked.jsonl").unlink()
    _verirank(env, "rerank", str(out), "--model", str(MODEL))
    ranked = read_jsonl(out / "reranked.jsonl", RankedItem)
    assert {(r.qid, r.url) for r in ranked} == {(r.qid, r.url) for r in rows}
    for qid in QIDS:
        flags = [r.verified for r in sorted(ranked, key=lambda r: r.rank) if r.qid == qid]
        assert flags == sorted(flags, reverse=True)  # verified pages first
    verified = [r for r in ranked if r.verified]
    assert verified and all("Pixel 6 (serial sim-android13-settings, Android 13, com.android.settings 13)"
                            in r.summary for r in verified)

    _verirank(env, "report", str(out))
    html = (out / "report.html").read_text("utf-8")
    assert f"adb:{phone.address}" in html and "Pixel 6" in html and f"sim-{WORLD}" in html

    _verirank(env, "export", str(out), "--format", "csv", "--out", str(tmp_path / "reranked.csv"))
    with (tmp_path / "reranked.csv").open(newline="", encoding="utf-8") as handle:
        exported = list(csv.DictReader(handle))
    assert len(exported) == len(ranked)


def test_adb_server_killed_during_execution_then_resume_completes_the_pages(no_adb_server, phone, tmp_path: Path):
    """``adb kill-server`` while pages run: the run finishes (exit 0) with the page it cut short as
    ``device_failed`` (one attempt per page here), and running the stage again completes it."""
    env = dict(cli_env(), **no_adb_server.env)
    out = tmp_path / "run"
    device = f"adb:{phone.address}"
    with serve(static_dir=DEMO) as site:
        queries, serp = _corpus(tmp_path, site.url("").rstrip("/"))
        _verirank(env, "run", "--queries", str(queries), "--serp", str(serp), "--out", str(out),
                  "--allow-private-hosts", "--until", "extract")
    extracted = [json.loads(line) for line in (out / "extraction.jsonl").read_text("utf-8").splitlines()]
    with_steps = [e for e in extracted if e["steps"]]
    assert len(with_steps) >= 3, "the test needs pages that run after the kill"

    execute = subprocess.Popen(
        cli_command("execute", str(out), "--devices", device, "--set", "execution.max_attempts=1"),
        cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        def executed_rows() -> list[dict]:
            path = out / "execution.jsonl"
            lines = path.read_text("utf-8").splitlines() if path.exists() else []
            return [row for row in map(json.loads, (x for x in lines if x.endswith("}")))
                    if row["status"] == "executed"]

        wait_until(lambda: executed_rows() or execute.poll() is not None, 600, interval=0.02,
                   what="a first page run on the phone")
        phone.pause()  # the run waits on the phone now: no page can finish on the device meanwhile
        try:
            done_before = len(executed_rows())
            assert done_before <= len(with_steps) - 2, "pages must be left to run after the kill"
            no_adb_server.kill_server()
        finally:
            phone.resume()
        output, _ = execute.communicate(timeout=900)
    finally:
        if execute.poll() is None:
            execute.kill()
            execute.wait(10)
    assert execute.returncode == 0, output[-3000:]
    rows = _rows(out)
    assert {(r.qid, r.url) for r in rows} == {(e["qid"], e["url"]) for e in extracted}  # nothing lost
    failed = [r for r in rows if r.status == ExecutionStatus.DEVICE_FAILED]
    assert failed, "a page was cut short by the kill"
    assert all(r.stop_reason == StopReason.DEVICE_ERROR and device in r.reason for r in failed)
    assert all(summarize(r, False).startswith("not executed: device failed") for r in failed)
    # the pages after the cut ran: the product started a new adb server and reconnected
    assert len([r for r in rows if r.status == ExecutionStatus.EXECUTED]) > done_before
    assert no_adb_server.listening()

    # a resume runs the device_failed pages again, and only those
    kept = {(r.qid, r.url): r for r in rows if r.status == ExecutionStatus.EXECUTED}
    _verirank(env, "execute", str(out), "--devices", device)
    again = {(r.qid, r.url): r for r in _rows(out)}
    assert len(again) == len(rows)
    assert all(r.status != ExecutionStatus.DEVICE_FAILED for r in again.values())
    for key, row in kept.items():
        assert again[key].model_dump() == row.model_dump()  # finished pages were not redone
    for row in failed:
        assert again[(row.qid, row.url)].status == ExecutionStatus.EXECUTED
    _verirank(env, "features", str(out))
    _verirank(env, "rerank", str(out), "--model", str(MODEL))
    assert len(read_jsonl(out / "reranked.jsonl", RankedItem)) == len(rows)
