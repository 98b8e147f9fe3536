"""The run store: atomic writes, torn-line repair, resume without loss or duplicates."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import time
from pathlib import Path

import pytest

from verirank_core.extraction_records import FetchStatus, Page
from verirank_core.errors import SchemaError, StoreError
from verirank_core.store import JsonlAppender, RunDir, atomic_write_json, read_jsonl, write_jsonl


def _page(i: int) -> Page:
    return Page(qid=f"q{i % 3}", url=f"http://example.org/{i}", rank=i + 1, status=FetchStatus.OK)


def test_appender_skips_done_keys_and_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "pages.jsonl"
    with JsonlAppender(path, Page) as app:
        assert app.append(_page(0)) is True
        assert app.append(_page(0)) is False  # same (qid, url): not written twice
        app.append(_page(1))
    with JsonlAppender(path, Page) as app:
        assert app.done(_page(1).key())
        assert not app.done(_page(2).key())
        assert app.append(_page(1)) is False
        app.append(_page(2))
    rows = read_jsonl(path, Page)
    assert [r.url for r in rows] == [f"http://example.org/{i}" for i in range(3)]


def test_torn_last_line_is_dropped_on_reopen(tmp_path: Path) -> None:
    path = tmp_path / "pages.jsonl"
    write_jsonl(path, [_page(0), _page(1)])
    full = json.dumps(_page(2).to_json_dict())
    with open(path, "a") as fh:
        fh.write(full[: len(full) // 2])  # a kill in the middle of a write
    assert [r.url for r in read_jsonl(path, Page)] == [_page(0).url, _page(1).url]
    with JsonlAppender(path, Page) as app:
        assert app.n_done == 2
        app.append(_page(2))
    rows = read_jsonl(path, Page)
    assert len(rows) == 3 and len({r.key() for r in rows}) == 3


def _writer(path: str, n: int) -> None:
    with JsonlAppender(Path(path), Page) as app:
        for i in range(n):
            app.append(_page(i))
            time.sleep(0.002)


def test_kill_mid_run_then_resume_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "pages.jsonl"
    n = 400
    proc = mp.get_context("spawn").Process(target=_writer, args=(str(path), n))
    proc.start()
    deadline = time.time() + 60
    while (not path.exists() or path.stat().st_size < 2000) and time.time() < deadline:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.join()
    written_before = len(read_jsonl(path, Page))
    assert 0 < written_before < n
    _writer(str(path), n)  # the resumed run
    rows = read_jsonl(path, Page)
    assert len(rows) == n
    assert len({r.key() for r in rows}) == n


def test_bad_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "pages.jsonl"
    path.write_text(json.dumps(_page(0).to_json_dict()) + "\n" + '{"qid": "q", "url": 3}\n')
    with pytest.raises(SchemaError, match=r"pages.jsonl:2: invalid Page record .*rank"):
        read_jsonl(path, Page)
    path.write_text("not json\n")
    with pytest.raises(SchemaError, match=r"pages.jsonl:1: not valid JSON"):
        read_jsonl(path, Page)


def test_missing_file_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        read_jsonl(tmp_path / "nope.jsonl", Page)


def test_atomic_write_leaves_no_temp_files(tmp_path: Path) -> None:
    atomic_write_json(tmp_path / "a.json", {"x": 1})
    atomic_write_json(tmp_path / "a.json", {"x": 2})
    assert json.loads((tmp_path / "a.json").read_text()) == {"x": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_manifest_records_config_versions_and_stages(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "run")
    run.start_stage("fetch", {"extraction": {"fetch": {"workers": 3}}})
    run.finish_stage("fetch", {"ok": 5})
    manifest = run.read_manifest()
    assert manifest["config"]["extraction"]["fetch"]["workers"] == 3
    assert "torch" in manifest["packages"] and "git_sha" in manifest
    assert manifest["stages"][0]["stage"] == "fetch"
    assert manifest["stages"][0]["counts"] == {"ok": 5}
    assert "finished" in manifest["stages"][0]


def test_appender_flushes_every_record_and_fsyncs_at_most_once_an_interval(tmp_path: Path, monkeypatch) -> None:
    import verirank_core.store as store

    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(store.os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    path = tmp_path / "pages.jsonl"
    app = JsonlAppender(path, Page, fsync_interval_s=3600)
    for i in range(50):
        app.append(_page(i))
        # flushed at once: another reader (or a resume after a kill) sees every line
        assert len(path.read_text().splitlines()) == i + 1
    assert len(synced) == 1, "only the first record of the interval is fsynced"
    app.close()
    assert len(synced) == 2, "close fsyncs what is left"
    every = JsonlAppender(tmp_path / "every.jsonl", Page, fsync_interval_s=0)
    for i in range(5):
        every.append(_page(i))
    every.close()
    assert len(synced) == 2 + 5 + 1


def test_a_stored_record_that_keep_rejects_is_removed_so_its_item_runs_again(tmp_path: Path) -> None:
    path = tmp_path / "pages.jsonl"
    with JsonlAppender(path, Page) as app:
        for i in range(4):
            app.append(_page(i))
    lost = {_page(1).key(), _page(3).key()}  # e.g. the files they name did not survive a power cut
    with JsonlAppender(path, Page, keep=lambda rec: rec.key() not in lost) as app:
        assert app.n_done == 2 and not app.done(_page(1).key()) and app.done(_page(2).key())
        assert app.append(_page(1)) is True  # run again, stored once
    rows = read_jsonl(path, Page)
    assert [r.url for r in rows] == [_page(i).url for i in (0, 2, 1)]


def test_a_non_durable_atomic_write_still_replaces_the_whole_file(tmp_path: Path, monkeypatch) -> None:
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    path = tmp_path / "t.json"
    atomic_write_json(path, {"a": 1}, durable=False)
    atomic_write_json(path, {"a": 2}, compact=True, durable=False)
    assert json.loads(path.read_text()) == {"a": 2} and synced == []
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]
    atomic_write_json(path, {"a": 3})
    assert len(synced) == 1
