"""Stage 1 end to end over a real HTTP server on 127.0.0.1: search -> fetch -> extract."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from extraction.pipeline import EXTRACTORS, extract_pages, make_extractor, run_stage1
from verirank_core.extraction_records import Extraction, ExtractionStatus, Page
from verirank_core.config import load_config
from verirank_core.errors import ConfigError, LLMError, StoreError
from verirank_core.store import RunDir, read_jsonl

from support_http import Reply, serve  # tests/support
from support_scripted_llm import ScriptedLLMServer, request_text

PAGES = Path(__file__).resolve().parent.parent / "fixtures" / "pages"
LABELS = json.loads((PAGES / "labels.json").read_text("utf-8"))["pages"]

#: served by routes, not files: the statuses a page can end with besides ok/no_steps
ROUTES = {
    "/missing.html": Reply(status=404, body=b"not here", headers={"Content-Type": "text/html"}),
    "/blank.html": Reply(body=b"   \n\n   \t  ", headers={"Content-Type": "text/html"}),
}


@pytest.fixture(scope="module")
def encoder():
    from verirank_core.embed import default_encoder

    return default_encoder()


def _config(**sets):
    overrides = [{"extraction": {"fetch": {"allow_private_hosts": True, "retries": 0, "workers": 4}}}]
    for dotted, value in sets.items():
        node = value
        for part in reversed(dotted.split(".")):
            node = {part: node}
        overrides.append(node)
    return load_config(overrides=overrides)


def _write_inputs(tmp: Path, srv) -> tuple[Path, Path, dict[str, str]]:
    """One query per label (fixture pages reused across queries), plus the failure routes."""
    queries, serp, expected = [], [], {}
    by_qid: dict[str, list[dict]] = {}
    for label in LABELS:
        by_qid.setdefault(label["qid"], []).append(label)
    for qid, labels in by_qid.items():
        first = labels[0]
        queries.append({"qid": qid, "query": first["query"], **({"device": first["device"]} if "device" in first else {})})
        for rank, label in enumerate(labels, start=1):
            url = srv.url("/" + label["file"])
            serp.append({"qid": qid, "rank": rank, "url": url, "title": label["file"]})
            expected[(qid, url)] = label["status"]
    for rank, (path, status) in enumerate([("/missing.html", "fetch_failed"), ("/blank.html", "parse_failed")], 50):
        serp.append({"qid": "dark", "rank": rank, "url": srv.url(path)})
        expected[("dark", srv.url(path))] = status
    qpath, spath = tmp / "queries.jsonl", tmp / "serp.jsonl"
    qpath.write_text("".join(json.dumps(q) + "\n" for q in queries), "utf-8")
    spath.write_text("".join(json.dumps(r) + "\n" for r in serp), "utf-8")
    return qpath, spath, expected


def test_run_stage1_end_to_end_with_expected_statuses(tmp_path, encoder):
    with serve(routes=ROUTES, static_dir=PAGES) as srv:
        qpath, spath, expected = _write_inputs(tmp_path, srv)
        out = tmp_path / "run"
        counts = run_stage1(qpath, spath, out, _config(), encoder=encoder)

    pages = read_jsonl(out / "pages.jsonl", Page)
    extractions = read_jsonl(out / "extraction.jsonl", Extraction)
    assert len(pages) == len(extractions) == len(expected)
    got = {(e.qid, e.url): e.status.value for e in extractions}
    assert got == {key: status for key, status in expected.items()}
    assert counts["extract"]["ok"] == sum(s == "ok" for s in expected.values())
    assert counts["fetch"]["ok"] == len(expected) - 1          # the 404
    for e in extractions:
        assert e.reason, f"{e.url} has no reason"
        if e.status == ExtractionStatus.OK:
            assert e.steps and all(s.xpath and s.snippet for s in e.steps)
            assert e.query and e.extractor == "heuristic"
    # the heading each page's steps sit under travels with them as context, never as a step
    titled = [e for e in extractions if e.has_steps and e.context]
    assert titled and all(c not in {s.text for s in e.steps} for e in titled for c in e.context)
    missing = next(e for e in extractions if e.url.endswith("/missing.html"))
    assert "http_error" in missing.reason and "404" in missing.reason
    blank = next(e for e in extractions if e.url.endswith("/blank.html"))
    assert "empty" in blank.reason

    manifest = RunDir(out).read_manifest()
    stages = [(s["stage"], "finished" in s) for s in manifest["stages"]]
    assert stages == [("search", True), ("fetch", True), ("extract", True)]
    assert manifest["stages"][-1]["counts"]["ok"] == counts["extract"]["ok"]
    assert manifest["config"]["extraction"]["fetch"]["allow_private_hosts"] is True


def test_resume_after_a_kill_loses_nothing_and_duplicates_nothing(tmp_path, encoder):
    with serve(routes=ROUTES, static_dir=PAGES) as srv:
        qpath, spath, expected = _write_inputs(tmp_path, srv)
        out = tmp_path / "run"
        run_stage1(qpath, spath, out, _config(), encoder=encoder)
    path = out / "extraction.jsonl"
    full = read_jsonl(path, Extraction)

    # a kill in the middle of writing: half of the records, the last one torn mid-line
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    keep = len(lines) // 2
    path.write_bytes(b"\n".join(lines[:keep]) + b"\n" + lines[keep][: len(lines[keep]) // 2])
    assert len(read_jsonl(path, Extraction)) == keep

    counts = extract_pages(RunDir(out), _config(), encoder=encoder)
    assert counts["skipped"] == keep
    assert counts["pages"] - counts["skipped"] == len(full) - keep
    again = read_jsonl(path, Extraction)
    keys = [e.key() for e in again]
    assert len(keys) == len(set(keys)) == len(full)
    before = {e.key(): (e.status, [s.text for s in e.steps]) for e in full}
    after = {e.key(): (e.status, [s.text for s in e.steps]) for e in again}
    assert after == before
    # a second resume has nothing to do
    assert extract_pages(RunDir(out), _config(), encoder=encoder)["skipped"] == len(full)


def test_llm_extractor_through_the_pipeline_grounds_and_drops_and_records_failures(tmp_path, monkeypatch, encoder):
    """The real LLM client and extractor against a scripted stub server."""
    def responder(body: dict) -> str:
        text = request_text(body)
        if "Change to dark theme" in text:      # the help-centre page: real steps plus an invented one
            return json.dumps({"has_steps": True, "reason": "numbered list",
                               "steps": ["Open your device's Settings app.", "Tap Display.",
                                         "Tap Bluetooth and pair your headphones.", "Turn Dark theme on or off."]})
        if "Dark mode won" in text:             # the opinion piece: the model invents steps
            return json.dumps({"has_steps": True, "reason": "", "steps": ["Open Quick Settings", "Tap Dark mode"]})
        return "this is not JSON"               # every other page: invalid output

    with ScriptedLLMServer(responder=responder) as llm, serve(static_dir=PAGES) as srv:
        urls = [srv.url("/help_centre_dark_theme.html"), srv.url("/news_no_steps_dark_mode.html"),
                srv.url("/video_dark_mode.html")]
        qpath, spath = tmp_path / "q.jsonl", tmp_path / "s.jsonl"
        qpath.write_text(json.dumps({"qid": "dark", "query": "how to turn on dark mode on android"}) + "\n")
        spath.write_text("".join(json.dumps({"qid": "dark", "rank": i, "url": u}) + "\n"
                                 for i, u in enumerate(urls, 1)))
        monkeypatch.setenv("VR_TEST_LLM_KEY", "test-key")
        cfg = _config(**{"extraction.extract.extractor": "llm", "llm.base_url": llm.base_url,
                         "llm.model": "stub-model", "llm.api_key_env": "VR_TEST_LLM_KEY",
                         "llm.cache_path": None, "llm.max_retries": 0})
        run_stage1(qpath, spath, tmp_path / "run", cfg, encoder=encoder)
        assert len(llm.requests) >= 3

    by_url = {e.url: e for e in read_jsonl(tmp_path / "run" / "extraction.jsonl", Extraction)}
    help_page, news, video = (by_url[u] for u in urls)
    assert help_page.status == ExtractionStatus.OK and help_page.extractor == "llm"
    assert [s.text for s in help_page.steps] == ["Open your device's Settings app.", "Tap Display.",
                                                 "Turn Dark theme on or off."]
    assert help_page.dropped_steps == ["Tap Bluetooth and pair your headphones."]
    assert help_page.prompt_tokens > 0 and help_page.completion_tokens > 0
    assert news.status == ExtractionStatus.NO_STEPS and "could be grounded" in news.reason
    assert news.dropped_steps == ["Open Quick Settings", "Tap Dark mode"]
    assert video.status == ExtractionStatus.EXTRACTOR_FAILED and video.reason


def test_an_unreachable_llm_server_stops_the_stage_and_records_nothing(tmp_path, encoder):
    with serve(static_dir=PAGES) as srv, ScriptedLLMServer() as llm:
        dead_url = llm.base_url  # a port that is closed once the server stops
        qpath, spath = tmp_path / "q.jsonl", tmp_path / "s.jsonl"
        qpath.write_text(json.dumps({"qid": "dark", "query": "dark mode"}) + "\n")
        spath.write_text(json.dumps({"qid": "dark", "rank": 1, "url": srv.url("/help_centre_dark_theme.html")}) + "\n")
        out = tmp_path / "run"
        run_stage1(qpath, spath, out, _config(), encoder=encoder)
    (out / "extraction.jsonl").unlink()
    cfg = _config(**{"extraction.extract.extractor": "llm", "llm.base_url": dead_url, "llm.cache_path": None,
                     "llm.timeout_s": 2})
    with pytest.raises(LLMError):
        extract_pages(RunDir(out), cfg, encoder=encoder)
    assert read_jsonl(out / "extraction.jsonl", Extraction) == []


def test_make_extractor_registry(encoder):
    cfg = load_config()
    assert make_extractor(cfg, encoder=encoder).name == "heuristic"
    assert EXTRACTORS.names() == ["heuristic", "llm"]
    with pytest.raises(ConfigError, match="unknown extractor 'magic'.*heuristic, llm"):
        make_extractor(cfg, name="magic")
    with pytest.raises(ConfigError, match="must be one of"):
        load_config(overrides=[{"extraction": {"extract": {"extractor": "magic"}}}])


def test_extract_without_pages_is_a_clear_error(tmp_path):
    with pytest.raises(StoreError, match=r"pages.jsonl not found: run `verirank fetch .*` first"):
        extract_pages(RunDir(tmp_path), load_config())


def test_a_page_whose_body_left_the_cache_is_recorded_not_fatal(tmp_path, encoder):
    with serve(static_dir=PAGES) as srv:
        qpath, spath = tmp_path / "q.jsonl", tmp_path / "s.jsonl"
        qpath.write_text(json.dumps({"qid": "dark", "query": "dark mode"}) + "\n")
        spath.write_text(json.dumps({"qid": "dark", "rank": 1, "url": srv.url("/help_centre_dark_theme.html")}) + "\n")
        out = tmp_path / "run"
        run_stage1(qpath, spath, out, _config(**{"extraction.extract.extractor": "heuristic"}), encoder=encoder)
    (out / "extraction.jsonl").unlink()
    bodies = list((out / "cache" / "pages").rglob("*.body"))
    assert bodies, "the fetch stored no body to remove"
    for body in bodies:
        body.unlink()
    counts = extract_pages(RunDir(out), _config(), encoder=encoder)
    assert counts["fetch_failed"] == 1
    rec = read_jsonl(out / "extraction.jsonl", Extraction)[0]
    assert rec.status == ExtractionStatus.FETCH_FAILED and "cache" in rec.reason


def test_parallel_workers_give_the_same_records(tmp_path, encoder):
    with serve(routes=ROUTES, static_dir=PAGES) as srv:
        qpath, spath, _ = _write_inputs(tmp_path, srv)
        out = tmp_path / "run"
        run_stage1(qpath, spath, out, _config(), encoder=encoder)
    one = {e.key(): (e.status, [s.xpath for s in e.steps]) for e in read_jsonl(out / "extraction.jsonl", Extraction)}
    (out / "extraction.jsonl").unlink()
    counts = extract_pages(RunDir(out), _config(**{"extraction.extract.workers": 3}), encoder=encoder)
    many = {e.key(): (e.status, [s.xpath for s in e.steps]) for e in read_jsonl(out / "extraction.jsonl", Extraction)}
    assert many == one
    assert sum(counts[s.value] for s in ExtractionStatus) == len(one)
    assert Counter(v[0] for v in many.values()) == Counter(v[0] for v in one.values())


def test_rows_below_top_n_and_bad_lines_each_get_a_counted_record(tmp_path, encoder):
    """Nothing handed in disappears: rows after top_n and unusable lines are recorded and counted."""
    with serve(routes=ROUTES, static_dir=PAGES) as srv:
        files = sorted({label["file"] for label in LABELS})[:5]
        assert len(files) == 5
        qpath, spath = tmp_path / "queries.jsonl", tmp_path / "serp.jsonl"
        qpath.write_text('{"qid": "q1", "query": "turn on dark mode"}\n{"qid": ""}\nnot json\n', "utf-8")
        rows = [json.dumps({"qid": "q1", "rank": r, "url": srv.url("/" + f)}) for r, f in enumerate(files, 1)]
        rows += ['{"qid": "q1", "rank": 9', json.dumps({"qid": "q9", "rank": 1, "url": srv.url("/x")})]
        spath.write_text("\n".join(rows) + "\n", "utf-8")
        out = tmp_path / "run"
        counts = run_stage1(qpath, spath, out, _config(**{"extraction.search.top_n": 3}), encoder=encoder)

    pages = read_jsonl(out / "pages.jsonl", Page)
    assert sorted(p.rank for p in pages) == [1, 2, 3, 4, 5]
    beyond = [p for p in pages if p.status.value == "beyond_top_n"]
    assert sorted(p.rank for p in beyond) == [4, 5] and all("top_n=3" in p.reason for p in beyond)
    assert len(read_jsonl(out / "extraction.jsonl", Extraction)) == 3
    assert counts["search"]["beyond_top_n"] == 2
    assert counts["fetch"]["beyond_top_n"] == 2 and counts["extract"]["beyond_top_n"] == 2
    assert counts["search"]["rejected_queries"] == 2 and counts["search"]["rejected_results"] == 2
    rejected = [json.loads(line) for line in (out / "rejected.jsonl").read_text("utf-8").splitlines()]
    assert {(r["source"], r["line"], r["status"]) for r in rejected} == {
        ("queries", 2, "malformed"), ("queries", 3, "malformed"),
        ("serp", 6, "malformed"), ("serp", 7, "unknown_qid")}
    assert all(r["reason"] for r in rejected)
    manifest = {s["stage"]: s["counts"] for s in RunDir(out).read_manifest()["stages"]}
    assert manifest["fetch"]["beyond_top_n"] == 2 and manifest["search"]["rejected_results"] == 2


def test_records_written_before_the_context_field_still_read():
    old = {"qid": "q", "url": "http://a.test/", "rank": 1, "status": "ok", "steps": [{"index": 0, "text": "Tap X"}]}
    rec = Extraction.model_validate(old)
    assert rec.context == [] and rec.has_steps
    assert Extraction.model_validate({**old, "context": ["On Samsung phones"]}).context == ["On Samsung phones"]
