"""The stage-1 commands: `verirank search|fetch|extract|run`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from verirank_core.extraction_records import Extraction, ExtractionStatus, Page
from verirank.cli import app
from verirank_core.store import RunDir, read_jsonl

from support_http import serve  # tests/support

PAGES = Path(__file__).resolve().parent.parent / "fixtures" / "pages"
REPO = Path(__file__).resolve().parents[2]

runner = CliRunner()


@pytest.mark.parametrize("command", ["search", "fetch", "extract", "run"])
def test_help_teaches_with_examples(command):
    result = runner.invoke(app, [command, "--help"])
    assert result.exit_code == 0, result.output
    assert "Examples" in result.output
    assert f"verirank {command}" in result.output
    for option in ("--config", "--set"):
        assert option in result.output


def test_top_level_help_lists_the_stage1_commands():
    out = subprocess.run([sys.executable, "-m", "verirank.cli", "--help"], capture_output=True, text=True,
                         cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stderr
    for command in ("search", "fetch", "extract", "run"):
        assert command in out.stdout


def test_search_fetch_extract_one_step_at_a_time(tmp_path):
    with serve(static_dir=PAGES) as srv:
        qpath, spath = tmp_path / "q.tsv", tmp_path / "serp.jsonl"
        qpath.write_text("dark\thow to turn on dark mode on android\n", "utf-8")
        spath.write_text("".join(json.dumps({"qid": "dark", "rank": i, "url": srv.url("/" + name)}) + "\n"
                                 for i, name in enumerate(["help_centre_dark_theme.html",
                                                           "news_no_steps_dark_mode.html"], 1)), "utf-8")
        out = tmp_path / "run"
        r = runner.invoke(app, ["search", "--queries", str(qpath), "--serp", str(spath), "--out", str(out)])
        assert r.exit_code == 0, r.output
        assert "search: queries=1" in r.output and "results=2" in r.output

        # private hosts are refused unless allowed
        r = runner.invoke(app, ["fetch", str(out)])
        assert r.exit_code == 0, r.output
        assert {p.status.value for p in read_jsonl(out / "pages.jsonl", Page)} == {"blocked"}
        (out / "pages.jsonl").unlink()
        r = runner.invoke(app, ["fetch", str(out), "--allow-private-hosts", "--set", "extraction.fetch.retries=0"])
        assert r.exit_code == 0, r.output
        assert "ok=2" in r.output

    r = runner.invoke(app, ["extract", str(out)])
    assert r.exit_code == 0, r.output
    assert "ok=1" in r.output and "no_steps=1" in r.output
    recs = {e.url.rsplit("/", 1)[1]: e for e in read_jsonl(out / "extraction.jsonl", Extraction)}
    assert recs["help_centre_dark_theme.html"].status == ExtractionStatus.OK
    assert recs["news_no_steps_dark_mode.html"].status == ExtractionStatus.NO_STEPS

    # --no-ground keeps the extractor's steps as they are
    (out / "extraction.jsonl").unlink()
    r = runner.invoke(app, ["extract", str(out), "--no-ground"])
    assert r.exit_code == 0, r.output
    steps = next(e for e in read_jsonl(out / "extraction.jsonl", Extraction) if e.status == ExtractionStatus.OK).steps
    assert {s.origin for s in steps} == {"ungrounded"}
    stages = [s["stage"] for s in RunDir(out).read_manifest()["stages"]]
    assert stages == ["search", "fetch", "fetch", "extract", "extract"]


def test_run_with_no_inputs_runs_the_bundled_demo(tmp_path):
    out = tmp_path / "demo"
    r = runner.invoke(app, ["run", "--quickstart", "--out", str(out)])
    assert r.exit_code == 0, r.output
    demo_serp = [json.loads(line) for line in (REPO / "datasets/demo/serp.jsonl").read_text().splitlines() if line]
    extractions = read_jsonl(out / "extraction.jsonl", Extraction)
    assert len(extractions) == len(demo_serp) == 20
    statuses = {e.url.rsplit("/", 1)[1]: e.status.value for e in extractions}
    # the demo's page names say their style; pages without the query's steps must not get any
    for name, status in statuses.items():
        no_steps_style = any(s in name for s in ("-news", "-video", "-unrelated"))
        assert status == ("no_steps" if no_steps_style else "ok"), (name, status)
    for line in ("search: queries=4", "fetch: results=20", "extract: pages=20"):
        assert line in r.output
    # a second run resumes: nothing left to do
    r = runner.invoke(app, ["run", "--quickstart", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "skipped=20" in r.output
    assert len(read_jsonl(out / "extraction.jsonl", Extraction)) == 20


def test_run_until_stops_after_the_named_stage(tmp_path):
    out = tmp_path / "demo"
    r = runner.invoke(app, ["run", "--quickstart", "--out", str(out), "--until", "fetch"])
    assert r.exit_code == 0, r.output
    assert (out / "pages.jsonl").exists() and not (out / "extraction.jsonl").exists()
    r = runner.invoke(app, ["run", "--quickstart", "--out", str(out), "--until", "nowhere"])
    assert r.exit_code == 2 and "unknown stage 'nowhere'" in r.output


@pytest.mark.parametrize("args, message", [
    (["extract", "{tmp}/nothing"], "pages.jsonl not found: run `verirank fetch"),
    (["run", "--serp", "x.jsonl"], "--serp was given without --queries"),
    (["run", "--queries", "{tmp}/q.jsonl"], "--out is required"),
    (["extract", "{tmp}", "--set", "extraction.extract.extractor=magic"], "must be one of"),
    (["search", "--queries", "{tmp}/none.jsonl", "--serp", "{tmp}/none.jsonl", "--out", "{tmp}/r"], "not found"),
])
def test_bad_input_is_one_clear_error_line(tmp_path, args, message):
    r = runner.invoke(app, [a.replace("{tmp}", str(tmp_path)) for a in args])
    assert r.exit_code == 2, r.output
    assert "error:" in r.output and message in r.output
    assert "Traceback" not in r.output


def test_demo_uses_a_free_port_when_8765_is_taken_and_keeps_it_on_resume(tmp_path):
    import socket

    from extraction.localsite import DEMO_PORT, demo_inputs

    blocker = socket.socket()
    blocker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past TIME_WAIT of earlier tests
    try:
        blocker.bind(("127.0.0.1", DEMO_PORT))
        blocker.listen()
    except OSError:
        pass  # already taken by someone else: the same situation
    try:
        with demo_inputs(tmp_path) as (_, serp):
            first = [json.loads(line)["url"] for line in serp.read_text().splitlines()]
            assert serp == tmp_path / "demo-serp.jsonl"
            assert f":{DEMO_PORT}/" not in first[0]
            import urllib.request
            with urllib.request.urlopen(first[0], timeout=10) as resp:
                assert resp.status == 200 and b"<html" in resp.read()
        with demo_inputs(tmp_path) as (_, serp):
            assert [json.loads(line)["url"] for line in serp.read_text().splitlines()] == first
    finally:
        blocker.close()


def test_fetch_works_on_a_howtobench_build_through_its_prefilled_cache(tmp_path):
    """The build's hosts (*.example) do not resolve: fetch must look in the cache before resolving."""
    bench = REPO / "datasets" / "howtobench" / "small"
    out = tmp_path / "run"
    r = runner.invoke(app, ["search", "--queries", str(bench / "queries.jsonl"), "--serp", str(bench / "serp.jsonl"),
                            "--out", str(out)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["fetch", str(out), "--set", f"extraction.fetch.cache_dir={bench / 'cache' / 'pages'}"])
    assert r.exit_code == 0, r.output
    pages = read_jsonl(out / "pages.jsonl", Page)
    serp = [json.loads(line) for line in (bench / "serp.jsonl").read_text("utf-8").splitlines() if line.strip()]
    assert len(pages) == len(serp) > 0
    fetched = [p for p in pages if p.status.value != "beyond_top_n"]
    assert fetched and all(p.status.value == "ok" and p.from_cache for p in fetched)
    assert all(".example" in (p.url.split("/")[2]) for p in fetched)
