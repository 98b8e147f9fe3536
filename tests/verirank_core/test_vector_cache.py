"""The vector cache on disk: shared by processes, keyed by model, bounded, and never fatal."""

from __future__ import annotations

import logging
import multiprocessing
from pathlib import Path

import numpy as np
import pytest

from verirank_core.embed import DIM, Encoder
from verirank_core.vector_cache import MAX_TEXT_CHARS, VectorCache, cache_path_for


def _vec(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def test_vectors_come_back_exactly_and_only_for_the_same_model(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    cache = VectorCache(path, model="m1", dim=DIM)
    cache.put_many({"Display": _vec(1), "Dark theme": _vec(2)})
    cache.close()
    again = VectorCache(path, model="m1", dim=DIM)
    got = again.get_many(["Display", "Battery", "Dark theme", "Display"])
    assert set(got) == {"Display", "Dark theme"}
    assert np.array_equal(got["Display"], _vec(1)) and got["Display"].dtype == np.float32
    assert VectorCache(path, model="m2", dim=DIM).get_many(["Display"]) == {}


def test_long_passages_are_not_stored(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path / "v.sqlite", model="m", dim=DIM)
    long = "x" * (MAX_TEXT_CHARS + 1)
    cache.put_many({long: _vec(1), "Wi-Fi": _vec(2)})
    assert len(cache) == 1 and cache.get_many([long]) == {}


def test_the_file_keeps_the_newest_texts_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    cache = VectorCache(path, model="m", dim=DIM)
    for i in range(5):
        cache.put_many({f"label {i}": _vec(i)})
    cache.close()
    trimmed = VectorCache(path, model="m", dim=DIM, max_texts=3)
    assert len(trimmed) == 3
    assert set(trimmed.get_many([f"label {i}" for i in range(5)])) == {"label 2", "label 3", "label 4"}


def test_a_vector_of_another_size_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    VectorCache(path, model="m", dim=8).put_many({"Display": np.ones(8, dtype=np.float32)})
    assert VectorCache(path, model="m", dim=DIM).get_many(["Display"]) == {}


def test_a_file_that_is_not_a_database_turns_the_cache_off_and_the_encoder_still_works(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "v.sqlite"
    path.write_bytes(b"this is not SQLite" * 100)
    enc = Encoder()
    with caplog.at_level(logging.WARNING):
        enc.use_disk_cache(path)
        vecs = enc.encode(["Display", "Sound"])
    assert vecs.shape == (2, DIM) and enc.misses == 2
    assert enc.disk is not None and not enc.disk.active
    assert "vector cache off" in caplog.text


def test_a_second_encoder_reads_what_the_first_embedded(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    first = Encoder()
    first.use_disk_cache(path)
    want = first.encode(["Display", "Dark theme", "x" * (MAX_TEXT_CHARS + 5)])
    assert first.misses == 3 and first.disk_hits == 0
    second = Encoder()  # as a second worker process of the same run starts
    second.use_disk_cache(path)
    got = second.encode(["Dark theme", "Display", "Battery"])
    assert second.disk_hits == 2 and second.misses == 1  # only the new label goes to the model
    assert np.array_equal(got[0], want[1]) and np.array_equal(got[1], want[0])
    second.use_disk_cache(None)
    assert second.disk is None


def _writer(path: str, start: int) -> None:
    cache = VectorCache(path, model="m", dim=DIM)
    for i in range(start, start + 200):
        cache.put_many({f"label {i % 300}": _vec(i % 300)})
    cache.close()


def test_two_processes_write_one_file_at_once(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    VectorCache(path, model="m", dim=DIM).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(path), start)) for start in (0, 100)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    cache = VectorCache(path, model="m", dim=DIM)
    got = cache.get_many([f"label {i}" for i in range(300)])
    assert len(cache) == 300 and len(got) == 300  # labels 100-199 were written by both: once each
    assert all(np.array_equal(got[f"label {i}"], _vec(i)) for i in (0, 150, 299))


def test_the_path_is_under_the_run_unless_absolute(tmp_path: Path) -> None:
    assert cache_path_for(tmp_path, "cache/vectors.sqlite") == tmp_path / "cache" / "vectors.sqlite"
    assert cache_path_for(tmp_path, str(tmp_path / "shared.sqlite")) == tmp_path / "shared.sqlite"
    assert cache_path_for(tmp_path, None) is None and cache_path_for(tmp_path, "") is None


def test_the_machine_wide_default_gives_way_to_the_environment_but_a_named_path_does_not(
        tmp_path: Path, monkeypatch) -> None:
    from verirank_core.config import load_config
    from verirank_core.vector_cache import MACHINE_CACHE, MACHINE_CACHE_ENV

    assert load_config().execution.vector_cache == MACHINE_CACHE  # every run of the user shares one file
    monkeypatch.delenv(MACHINE_CACHE_ENV, raising=False)
    assert cache_path_for(tmp_path, MACHINE_CACHE) == Path.home() / ".cache" / "verirank" / "vectors.sqlite"
    monkeypatch.setenv(MACHINE_CACHE_ENV, "cache/vectors.sqlite")
    assert cache_path_for(tmp_path, MACHINE_CACHE) == tmp_path / "cache" / "vectors.sqlite"
    assert cache_path_for(tmp_path, str(tmp_path / "mine.sqlite")) == tmp_path / "mine.sqlite"
    monkeypatch.setenv(MACHINE_CACHE_ENV, "off")
    assert cache_path_for(tmp_path, MACHINE_CACHE) is None


def test_a_file_another_process_is_opening_is_opened_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two workers opening a new file at once: SQLite answers one "database is locked" at once,
    without its busy wait. That worker opens the file again instead of running without the cache."""
    import sqlite3

    import verirank_core.store as store

    real_connect, refusals = sqlite3.connect, [2]

    class Contended:
        def __init__(self, conn: sqlite3.Connection) -> None:
            self.conn = conn

        def execute(self, sql: str, *args):
            if sql.startswith("PRAGMA journal_mode") and refusals[0]:
                refusals[0] -= 1
                raise sqlite3.OperationalError("database is locked")
            return self.conn.execute(sql, *args)

        def __getattr__(self, name: str):
            return getattr(self.conn, name)

    monkeypatch.setattr(store.sqlite3, "connect", lambda *a, **k: Contended(real_connect(*a, **k)))
    cache = VectorCache(tmp_path / "v.sqlite", model="m", dim=DIM)
    assert refusals == [0] and cache.active
    cache.put_many({"Display": _vec(1)})
    assert set(cache.get_many(["Display"])) == {"Display"}
