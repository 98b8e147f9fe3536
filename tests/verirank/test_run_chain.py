"""`verirank run` chains all three stages over the bundled pages, and resumes."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from verirank_core.execution_records import ExecutionResult
from verirank_core.extraction_records import Extraction
from verirank_core.ranking_records import RankedItem
from verirank.cli import app
from verirank_core.store import read_jsonl


#: what the runner writes into every stage-log entry of manifest.json
RUNNER_KEYS = {"stage", "pipeline", "fingerprint", "started", "finished", "counts", "seconds", "cpu_seconds"}

def test_run_chains_extraction_execution_and_ranking(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["run", "--quickstart", "--out", str(out)])
    # no --queries: the bundled pages under datasets/demo are served on 127.0.0.1
    assert result.exit_code == 0, result.output
    extractions = read_jsonl(out / "extraction.jsonl", Extraction)
    executions = read_jsonl(out / "execution.jsonl", ExecutionResult)
    ranked = read_jsonl(out / "reranked.jsonl", RankedItem)
    assert {(e.qid, e.url) for e in extractions} == {(e.qid, e.url) for e in executions}
    assert {(e.qid, e.url) for e in extractions} == {(r.qid, r.url) for r in ranked}
    assert (out / "features.parquet").exists() and (out / "reranked.trec").exists()
    # every page with steps ran on a device; pages without steps were skipped, not lost
    with_steps = {(e.qid, e.url) for e in extractions if e.has_steps}
    assert {(e.qid, e.url) for e in executions if e.status.value == "executed"} == with_steps
    # verified pages come first in every reranked list
    for qid in {r.qid for r in ranked}:
        flags = [r.verified for r in sorted(ranked, key=lambda r: r.rank) if r.qid == qid]
        assert flags == sorted(flags, reverse=True)
    log = json.loads((out / "manifest.json").read_text())["stages"]
    # the stage log of the one runner (verirank_core.stages), as for the demo and the experiments
    assert [e["stage"] for e in log] == ["search", "fetch", "extract", "execute", "features", "rerank"]
    for entry in log:
        assert RUNNER_KEYS <= set(entry) and entry["pipeline"] == "run", entry

    # a second run resumes: nothing is redone or duplicated
    again = CliRunner().invoke(app, ["run", "--quickstart", "--out", str(out)])
    assert again.exit_code == 0, again.output
    assert len(read_jsonl(out / "execution.jsonl", ExecutionResult)) == len(executions)
    assert f"resumed={len(executions)}" in again.output  # every page was already done


def test_until_stops_after_the_named_stage(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["run", "--quickstart", "--out", str(out), "--until", "extract"])
    assert result.exit_code == 0, result.output
    assert (out / "extraction.jsonl").exists() and not (out / "execution.jsonl").exists()
    bad = CliRunner().invoke(app, ["run", "--quickstart", "--out", str(out), "--until", "nope"])
    assert bad.exit_code == 2 and "valid: search, fetch, extract, execute, features, rerank" in bad.output


def test_a_row_with_an_odd_url_never_costs_the_other_rows_their_reranked_list(tmp_path: Path) -> None:
    """A SERP row whose URL holds spaces (a data: URL) gets its own status; the run finishes with exit 0."""
    from support_http import serve  # tests/support

    from verirank_core.extraction_records import Page
    from ranking.metrics import read_trec_run

    demo = Path(__file__).resolve().parents[2] / "datasets" / "demo"
    odd = ["data:text/html,<ol><li>Open the Settings app.</li><li>Tap Display.</li></ol>",
           "https://bad host.example/a page?q=ü \"x\""]
    with serve(static_dir=demo) as srv:
        rows = [json.loads(line) for line in (demo / "serp.jsonl").read_text("utf-8").splitlines()]
        assert rows
        for row in rows:
            row["url"] = srv.url(row["url"].split(":8765", 1)[1])
        qid = rows[0]["qid"]
        last = max(r["rank"] for r in rows if r["qid"] == qid)
        rows += [{"qid": qid, "rank": last + i, "url": url} for i, url in enumerate(odd, start=1)]
        serp = tmp_path / "serp.jsonl"
        serp.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
        out = tmp_path / "run"
        result = CliRunner().invoke(app, ["run", "-q", str(demo / "queries.jsonl"), "--serp", str(serp),
                                          "--out", str(out), "--allow-private-hosts"])
    assert result.exit_code == 0, result.output
    pages = {p.url: p for p in read_jsonl(out / "pages.jsonl", Page)}
    assert len(pages) == len(rows)
    assert pages[odd[0]].status.value == "blocked" and pages[odd[0]].reason
    ranked = read_jsonl(out / "reranked.jsonl", RankedItem)
    assert {(r.qid, r.url) for r in ranked} == {(r["qid"], r["url"]) for r in rows}
    trec = read_trec_run(out / "reranked.trec")
    assert set(trec[qid]) == {r["url"] for r in rows if r["qid"] == qid}
    for q, docs in trec.items():  # the TREC order is the reranked order
        want = [r.url for r in sorted(ranked, key=lambda r: r.rank) if r.qid == q]
        assert sorted(docs, key=docs.get, reverse=True) == want


def test_run_never_picks_its_inputs_by_itself(tmp_path: Path) -> None:
    """With no arguments `verirank run` prints its help; the bundled pages run only when asked (--quickstart)."""
    bare = CliRunner().invoke(app, ["run"])
    assert "--quickstart" in bare.output and "--queries" in bare.output
    out = tmp_path / "run"
    no_inputs = CliRunner().invoke(app, ["run", "--out", str(out)])
    assert no_inputs.exit_code == 2 and "give --queries (and --serp), or --quickstart" in no_inputs.output
    assert not out.exists()
    both = CliRunner().invoke(app, ["run", "--quickstart", "--queries", str(tmp_path / "q.jsonl")])
    assert both.exit_code == 2 and "without --queries/--serp" in both.output
