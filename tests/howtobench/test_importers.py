"""Importers for the paper's formats: the How-to WeWeb layout and MagicWand trajectories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verirank_core.execution_records import ActionType, StopReason, Trajectory
from extraction.pagecache import PageCache
from verirank_core.extraction_records import Page, Query, SearchResult
from howtobench.importers.magicwand import from_magicwand, import_magicwand, load_magicwand, to_magicwand
from howtobench.importers.weweb import import_weweb
from ranking.metrics import read_qrels
from verirank_core.errors import SchemaError
from verirank_core.store import read_jsonl

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "magicwand"


def _weweb(root: Path) -> Path:
    (root / "pages").mkdir(parents=True)
    (root / "pages" / "a.html").write_text("<html><body><ol><li>Open Settings</li><li>Tap Display</li></ol></body></html>")
    (root / "pages" / "b.html").write_text("<html><body><p>No steps here</p></body></html>")
    (root / "queries.tsv").write_text("qid\tquery\tapp\n1\thow to turn on dark mode\tSettings\n2\tenable bluetooth\t\n")
    rows = [
        {"qid": "1", "rank": 1, "url": "https://a.example/dark", "title": "Dark", "html": "pages/a.html"},
        {"qid": "1", "rank": 2, "url": "https://b.example/x", "title": "X", "html": "pages/b.html"},
        {"qid": "2", "rank": 1, "url": "https://c.example/bt", "title": "BT"},
    ]
    (root / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "labels.tsv").write_text("1\thttps://a.example/dark\t1\n1\thttps://b.example/x\t0\n")
    return root


def test_weweb_layout_becomes_an_offline_run(tmp_path):
    src = _weweb(tmp_path / "weweb")
    run = tmp_path / "run"
    counts = import_weweb(src, run)
    assert counts == {"queries": 2, "results": 3, "pages_saved": 2, "relevant": 1}
    queries = read_jsonl(run / "queries.jsonl", Query)
    assert [q.app for q in queries] == ["Settings", None]
    assert len(read_jsonl(run / "serp.jsonl", SearchResult)) == 3
    pages = {p.url: p for p in read_jsonl(run / "pages.jsonl", Page)}
    cache = PageCache(run / "cache" / "pages")
    assert cache.get(pages["https://a.example/dark"].body_sha256) == (src / "pages" / "a.html").read_bytes()
    assert not pages["https://c.example/bt"].usable and "no saved HTML" in pages["https://c.example/bt"].reason
    assert read_qrels(run / "qrels.txt") == {"1": {"https://a.example/dark": 1, "https://b.example/x": 0},
                                             "2": {"https://c.example/bt": 0}}


def test_weweb_problems_name_file_and_line(tmp_path):
    src = _weweb(tmp_path / "w1")
    (src / "pages" / "a.html").unlink()
    with pytest.raises(SchemaError, match=r"results.jsonl:1: saved page 'pages/a.html' not found"):
        import_weweb(src, tmp_path / "r1")
    src = _weweb(tmp_path / "w2")
    (src / "labels.tsv").write_text("1\thttps://nowhere.example/\t1\n")
    with pytest.raises(SchemaError, match="not in results.jsonl"):
        import_weweb(src, tmp_path / "r2")
    src = _weweb(tmp_path / "w3")
    (src / "results.jsonl").write_text('{"qid": "1", "url": "u"}\n')
    with pytest.raises(SchemaError, match=r"results.jsonl:1: result lacks rank"):
        import_weweb(src, tmp_path / "r3")


@pytest.mark.parametrize("name", ["dark_mode_completed.json", "bluetooth_failed.json"])
def test_magicwand_round_trip(name):
    original = json.loads((FIXTURES / name).read_text())
    traj = load_magicwand(FIXTURES / name)
    assert traj.instructions == original["plan"]["receivedPlan"]
    assert to_magicwand(traj) == original
    again = from_magicwand(json.loads(json.dumps(to_magicwand(traj))))
    assert again.to_json_dict() == traj.to_json_dict()


def test_magicwand_fields_map_to_our_trajectory():
    traj = load_magicwand(FIXTURES / "dark_mode_completed.json")
    assert traj.stop_reason == StopReason.COMPLETED and traj.acted_steps == [0, 1, 2]
    tap = traj.steps[1]
    assert tap.action.type == ActionType.CLICK and (tap.action.x, tap.action.y) == (540, 1210)
    assert tap.action.target_label == "Display" and tap.step_index == 1 and tap.screenshot == "screens/1.png"
    failed = load_magicwand(FIXTURES / "bluetooth_failed.json")
    assert failed.stop_reason == StopReason.NO_ACTION and not failed.steps[-1].ok
    assert failed.steps[-1].failure_reason and failed.steps[2].action.type == ActionType.SWIPE


def test_magicwand_import_writes_a_run_and_bad_files_are_named(tmp_path):
    counts = import_magicwand(sorted(FIXTURES.glob("*.json")), tmp_path / "run")
    assert counts == {"trajectories": 2, "queries": 2}
    execs = [json.loads(line) for line in (tmp_path / "run" / "execution.jsonl").read_text().splitlines()]
    for e in execs:
        Trajectory.parse(json.loads((tmp_path / "run" / e["trajectory"]).read_text()))
    bad = json.loads((FIXTURES / "dark_mode_completed.json").read_text())
    bad["executions"][1]["action"] = "teleport"
    with pytest.raises(SchemaError, match=r"executions\[1\].action: unknown action 'teleport'"):
        from_magicwand(bad, source="x.json")
    bad["executions"][1]["action"] = "click"
    bad["executions"][1]["attributing"]["instruction_step"] = 9
    with pytest.raises(SchemaError, match="instruction_step: 9 is not a step"):
        from_magicwand(bad, source="x.json")


def test_export_magicwand_reads_a_runs_trajectories_jsonl_and_keeps_a_pages_last_line(tmp_path):
    from typer.testing import CliRunner

    from verirank.cli import app

    first, second = (load_magicwand(FIXTURES / n) for n in ("dark_mode_completed.json", "bluetooth_failed.json"))
    stale = first.model_copy(update={"query": "an attempt a device failure cut short"})
    assert to_magicwand(stale) != to_magicwand(first)  # (plan.goal differs)
    log = tmp_path / "trajectories.jsonl"  # as stage 2 writes it: a page run again has a later line
    log.write_text("".join(t.model_dump_json() + "\n" for t in (stale, second, first)), encoding="utf-8")
    result = CliRunner().invoke(app, ["howtobench", "export-magicwand", str(log), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    written = sorted((tmp_path / "out").glob("*.json"))
    assert len(written) == 2  # one per page
    exported = {(d["qid"], d["url"]): d for d in (json.loads(p.read_text()) for p in written)}
    assert exported[(first.qid, first.url)] == to_magicwand(first)
    assert exported[(second.qid, second.url)] == to_magicwand(second)
