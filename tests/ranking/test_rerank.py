"""Reranking: verified pages first by score, the rest in their original order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import support_ranking_runs as runs
from ranking.features import attach_labels, build_feature_table, write_feature_files
from ranking.pipeline import RerankStage
from ranking.rerank import load_model, rerank, rerank_run, score_with_model
from verirank_core.config import load_config
from verirank_core.errors import RankingError, SchemaError, StoreError
from verirank_core.stages import run_stages
from verirank_core.store import RunDir, read_jsonl

NO_F2 = [f"F{i}" for i in range(1, 19) if i != 2]


def _table(rows):
    return pd.DataFrame(rows, columns=["qid", "url", "rank", "verified"])


def test_verified_pages_first_by_score_then_the_rest_in_original_order():
    table = _table([("q", "a", 1, False), ("q", "b", 2, True), ("q", "c", 3, False),
                    ("q", "d", 4, True), ("q", "e", 5, True), ("q", "f", 6, False)])
    scores = np.array([9.0, 0.1, 5.0, 0.7, 0.7, -1.0])
    out = rerank(table, scores)
    # verified b(0.1), d(0.7), e(0.7): d and e tie -> original order d, e; then a, c, f as before
    assert list(out["url"]) == ["d", "e", "b", "a", "c", "f"]
    assert list(out["rank"]) == [1, 2, 3, 4, 5, 6]
    assert list(out["original_rank"]) == [4, 5, 2, 1, 3, 6]
    assert list(out["score"]) == [0.7, 0.7, 0.1, 9.0, 5.0, -1.0]


def test_each_query_is_reranked_on_its_own_and_input_is_untouched():
    table = _table([("q2", "x", 1, True), ("q2", "y", 2, True), ("q1", "a", 1, False), ("q1", "b", 2, True)])
    before = table.copy()
    out = rerank(table, np.array([0.1, 0.2, 0.0, 0.0]))
    assert list(zip(out["qid"], out["url"], out["rank"])) == [
        ("q1", "b", 1), ("q1", "a", 2), ("q2", "y", 1), ("q2", "x", 2)]
    assert table.equals(before)


def test_unverified_order_never_depends_on_scores():
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(1, 12))
        verified = rng.random(n) < 0.5
        table = _table([("q", f"u{i}", i + 1, bool(verified[i])) for i in range(n)])
        out = rerank(table, rng.normal(size=n))
        flags = list(out["verified"])
        assert flags == sorted(flags, reverse=True)  # all verified before all others
        rest = out[~out["verified"]]
        assert list(rest["original_rank"]) == sorted(rest["original_rank"])
        ver = out[out["verified"]]
        assert list(ver["score"]) == sorted(ver["score"], reverse=True)


def test_score_order_ranks_everything_by_score():
    table = _table([("q", "a", 1, False), ("q", "b", 2, True), ("q", "c", 3, False)])
    out = rerank(table, np.array([0.5, 0.2, 0.5]), rule="score")
    assert list(out["url"]) == ["a", "c", "b"]


def test_bad_scores_and_tables_are_refused():
    table = _table([("q", "a", 1, False), ("q", "b", 2, True)])
    with pytest.raises(RankingError, match="1 scores for 2 pages"):
        rerank(table, np.array([1.0]))
    with pytest.raises(RankingError, match="NaN"):
        rerank(table, np.array([1.0, np.nan]))
    with pytest.raises(RankingError, match="unknown rerank order"):
        rerank(table, np.array([1.0, 2.0]), rule="random")
    with pytest.raises(SchemaError, match="verified"):
        rerank(table.drop(columns="verified"), np.array([1.0, 2.0]))


def test_score_with_model_uses_the_models_feature_order():
    table = pd.DataFrame({"qid": ["q", "q"], "F1": [0.2, 0.9], "F4": [1.0, 0.0]})
    model = runs.stub_model({"F4": 10.0, "F1": 1.0}, feature_names=["F4", "F1"])
    assert list(score_with_model(table, model)) == [10.2, 0.9]
    with pytest.raises(SchemaError, match=r"needs feature\(s\) \['F9'\]"):
        score_with_model(table, runs.stub_model({"F9": 1.0}))


def _trained_lr(tmp_path):
    """A real pairwise-LR ranker trained on the hand-made run (labels favour verified pages)."""
    from ranking.models import make_model

    run = runs.make_run(tmp_path / "run")
    cfg = load_config(overrides=[{"ranking": {"features": {"names": NO_F2}}}])
    table = attach_labels(build_feature_table(run, cfg), {
        "q1": {"https://b.example/dark": 1, "https://e.example/done": 2},
        "q2": {"https://g.example/bt": 2},
    })
    write_feature_files(run, table)
    model = make_model("lr").fit(table[NO_F2].to_numpy(), table["label"].to_numpy(), table["qid"].to_numpy(),
                                 feature_names=NO_F2)
    return run, cfg, model


def test_rerank_run_with_a_real_saved_model(tmp_path):
    run, cfg, model = _trained_lr(tmp_path)
    loaded = load_model(str(model.save(tmp_path / "model")))
    items = rerank_run(run, cfg, loaded)
    assert (run / "reranked.jsonl").exists() and (run / "reranked.trec").exists()
    q1 = [it for it in items if it.qid == "q1"]
    # verified pages of q1 (ranks 2 and 5) come first; the rest keep the order 1, 3, 4
    assert {it.original_rank for it in q1[:2]} == {2, 5}
    assert [it.original_rank for it in q1[2:]] == [1, 3, 4]
    assert all(it.verified for it in q1[:2]) and not any(it.verified for it in q1[2:])
    q2 = [it for it in items if it.qid == "q2"]
    assert [it.original_rank for it in q2] == [2, 1]
    stored = read_jsonl(run / "reranked.jsonl", type(items[0]))
    assert stored == items
    assert q1[0].summary.startswith("verified on android13-settings v13")


def test_rerank_run_applies_the_current_verified_rule(tmp_path):
    run, cfg, model = _trained_lr(tmp_path)
    strict = load_config(overrides=[{"ranking": {"features": {"names": NO_F2},
                                                 "verified": {"rule": "completed"}}}])
    items = rerank_run(run, strict, model)
    verified = {(it.qid, it.url) for it in items if it.verified}
    # the worked example stopped with no_action: no longer verified
    assert verified == {("q1", "https://e.example/done"), ("q2", "https://g.example/bt")}
    q1 = [it.original_rank for it in items if it.qid == "q1"]
    assert q1 == [5, 1, 2, 3, 4]


def test_rerank_run_and_load_model_errors(tmp_path):
    run = runs.make_run(tmp_path / "run")
    # the runner checks what the stage requires and names the command that makes it
    with pytest.raises(StoreError, match=r"features.parquet not found: run `verirank features .*` first"):
        run_stages(RunDir(run), load_config(), [RerankStage(ranker=runs.stub_model({"F4": 1.0}))])
    assert not (run / "reranked.jsonl").exists()
    with pytest.raises(StoreError, match="neither a saved-model directory nor an MLflow model URI"):
        load_model(str(tmp_path / "no-such-model"))


def test_mlflow_model_uri_from_a_sqlite_store(tmp_path, monkeypatch):
    import mlflow

    from ranking import tracking

    run, cfg, model = _trained_lr(tmp_path)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.chdir(tmp_path)  # MLflow's default artifact root is relative to the working directory
    tracking.configure(uri, "features-test")
    with tracking.start_run("train") as mlrun:
        model_uri = tracking.log_ranker(model)
    table = pd.read_parquet(run / "features.parquet")
    for spec in (model_uri, f"runs:/{mlrun.info.run_id}/model"):
        mlflow.set_tracking_uri("sqlite:///unused.db")  # load_model must switch to the given URI
        loaded = load_model(spec, tracking_uri=uri)
        assert np.allclose(score_with_model(table, loaded), score_with_model(table, model))
