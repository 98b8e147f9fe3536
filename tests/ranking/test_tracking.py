"""MLflow tracking on a real SQLite store: a train run and an evaluate run read back in full."""

from __future__ import annotations

import csv
import hashlib
import io

import mlflow
import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

import support_letor
from ranking import tracking
from verirank_core.ranking_config import EvalConfig, TrainConfig
from ranking.experiment import evaluate_runs, train
from ranking.metrics import read_trec_run, run_from_scores, write_qrels, write_trec_run, qrels_from_labels
from ranking.models import load_ranker
from ranking.svmlight import save_svmlight
from verirank_core.config import RunConfig
from verirank_core.errors import ConfigError, StoreError


@pytest.fixture(scope="module")
def letor_files(shared_dir, tmp_path_factory):
    """A small train/test pair written as svmlight (40 and 12 queries of the fixture)."""
    folder = tmp_path_factory.mktemp("letor")
    train_data, test_data = support_letor.letor(shared_dir)
    paths = {}
    for split, data, n in (("train", train_data, 40), ("test", test_data, 12)):
        part = support_letor.first_queries(data, n)
        paths[split] = folder / f"{split}.svmlight"
        save_svmlight(paths[split], part.X, part.y, part.qids)
    return paths


@pytest.fixture(scope="module")
def tracked(letor_files, tmp_path_factory):
    """One tracked TMLP training run (3 epochs) in a fresh SQLite store."""
    folder = tmp_path_factory.mktemp("mlflow")
    uri = f"sqlite:///{folder / 'mlflow.db'}"
    config = RunConfig().to_manifest()
    outcome = train(
        letor_files["train"], "tmlp-lambdaloss", folder / "model",
        train_cfg=TrainConfig(valid_frac=0.25), eval_cfg=EvalConfig(), seed=3, epochs=3,
        test_path=letor_files["test"], config=config, tracking_uri=uri, experiment="tests",
    )
    return outcome, uri, folder


def _test_frame(path):
    data = load_test(path)
    frame = pd.DataFrame(data.X, columns=data.feature_names)
    frame["qid"] = data.qids.astype(str)
    return data, frame


def load_test(path):
    from ranking.svmlight import load_svmlight

    return load_svmlight(path, n_features=300)


def test_train_run_params_metrics_and_tags(tracked, letor_files):
    outcome, uri, _ = tracked
    mlflow.set_tracking_uri(uri)
    client = MlflowClient()
    run = client.get_run(outcome.run_id)
    params = run.data.params
    assert params["model"] == "tmlp-lambdaloss"
    assert params["hp.epochs"] == "3" and params["hp.mu"] == "10.0" and params["hp.n_heads"] == "2"
    assert params["data_sha256"] == hashlib.sha256(letor_files["train"].read_bytes()).hexdigest()
    assert params["n_features"] == "300"
    assert run.data.tags["verirank.kind"] == "train"
    assert run.data.tags["verirank.git_sha"]
    assert run.info.experiment_id == client.get_experiment_by_name("tests").experiment_id

    # per-epoch history, one step per epoch, equal to the model's own record
    history = client.get_metric_history(outcome.run_id, "valid_ndcg_at_5")
    assert [m.step for m in sorted(history, key=lambda m: m.step)] == [0, 1, 2]
    assert [m.value for m in sorted(history, key=lambda m: m.step)] == pytest.approx(
        [h["valid_ndcg@5"] for h in outcome.model.history_])
    assert len(client.get_metric_history(outcome.run_id, "train_loss")) == 3
    # final metrics on the test file
    assert run.data.metrics["test.NDCG_at_5"] == pytest.approx(outcome.test.mean["NDCG@5"])
    assert run.data.metrics["test.answerable.MRR"] == pytest.approx(outcome.test.mean_answerable["MRR"])
    assert run.data.metrics["train_seconds"] > 0


def test_train_run_artifacts(tracked):
    outcome, uri, folder = tracked
    mlflow.set_tracking_uri(uri)
    client = MlflowClient()
    listed = {a.path for a in client.list_artifacts(outcome.run_id)}
    assert {"config.json", "ranker", "test.trec", "per_query.csv", "feature_importance.png"} <= listed
    # artifacts live beside the database, not in the working directory
    assert (folder / "mlartifacts").is_dir()

    local = folder / "downloaded"
    local.mkdir()
    mlflow.artifacts.download_artifacts(run_id=outcome.run_id, dst_path=str(local))
    assert (local / "feature_importance.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    config = mlflow.artifacts.load_dict(f"runs:/{outcome.run_id}/config.json")
    assert config["ranking"]["model"] == RunConfig().ranking.model

    rows = list(csv.DictReader(io.StringIO((local / "per_query.csv").read_text())))
    assert sorted(r["qid"] for r in rows) == sorted(outcome.test.per_query)
    for row in rows:
        assert float(row["NDCG@5"]) == pytest.approx(outcome.test.per_query[row["qid"]]["NDCG@5"])

    # the logged run file is the one written beside the model
    logged_run = read_trec_run(local / "test.trec")
    assert logged_run == read_trec_run(outcome.out_dir / "test.trec")
    # and the raw ranker directory loads
    assert np.array_equal(load_ranker(local / "ranker").net_.output_layer.w_1.weight.detach().numpy(),
                          outcome.model.net_.output_layer.w_1.weight.detach().numpy())


def test_logged_run_file_matches_model_scores(tracked, letor_files):
    outcome, _, _ = tracked
    data = load_test(letor_files["test"])
    expected = run_from_scores(data.qids, data.docs, outcome.model.predict(data.X, data.qids))
    assert read_trec_run(outcome.out_dir / "test.trec") == expected  # scores are written exactly


def test_pyfunc_model_predicts_the_same_scores(tracked, letor_files):
    outcome, uri, _ = tracked
    mlflow.set_tracking_uri(uri)
    data, frame = _test_frame(letor_files["test"])
    expected = outcome.model.predict(data.X, data.qids)
    pyfunc = mlflow.pyfunc.load_model(f"runs:/{outcome.run_id}/model")
    assert np.array_equal(np.asarray(pyfunc.predict(frame)), expected)
    assert np.array_equal(tracking.load_model(f"runs:/{outcome.run_id}/model").predict(data.X, data.qids), expected)
    assert np.array_equal(tracking.load_model(outcome.out_dir).predict(data.X, data.qids), expected)


def test_model_registers_in_the_sqlite_registry(tracked, letor_files):
    outcome, uri, _ = tracked
    mlflow.set_tracking_uri(uri)
    version = tracking.register_model(outcome.model_uri, "verirank-test-ranker")
    assert version == "1"
    assert MlflowClient().get_registered_model("verirank-test-ranker").name == "verirank-test-ranker"
    data = load_test(letor_files["test"])
    loaded = tracking.load_model("models:/verirank-test-ranker/1")
    assert np.array_equal(loaded.predict(data.X, data.qids), outcome.model.predict(data.X, data.qids))


def test_load_model_errors_are_clear(tmp_path):
    with pytest.raises(StoreError, match="neither a saved model directory"):
        tracking.load_model(tmp_path / "nothing-here")


def test_evaluate_run_is_tracked_with_significance(tracked, letor_files, tmp_path):
    outcome, uri, _ = tracked
    data = load_test(letor_files["test"])
    qrels = qrels_from_labels(data.qids, data.docs, data.y)
    write_qrels(tmp_path / "qrels.txt", qrels)
    # baseline: the original order of the file
    write_trec_run(tmp_path / "base.trec", run_from_scores(data.qids, data.docs, -np.arange(len(data), dtype=float)))
    report = evaluate_runs(outcome.out_dir / "test.trec", tmp_path / "qrels.txt",
                           baseline_path=tmp_path / "base.trec", eval_cfg=EvalConfig(n_resamples=500),
                           tracking_uri=uri, experiment="tests")
    assert report.result.mean["NDCG@5"] == pytest.approx(outcome.test.mean["NDCG@5"])
    mlflow.set_tracking_uri(uri)
    client = MlflowClient()
    run = client.get_run(report.run_id)
    assert run.data.tags["verirank.kind"] == "evaluate"
    assert run.data.metrics["system.NDCG_at_5"] == pytest.approx(report.result.mean["NDCG@5"])
    by_metric = {t.metric: t for t in report.tests}
    assert run.data.metrics["p_ttest.P_at_1"] == pytest.approx(by_metric["P@1"].p_ttest)
    assert 0.0 <= run.data.metrics["p_permutation.NDCG_at_5"] <= 1.0
    listed = {a.path for a in client.list_artifacts(report.run_id)}
    assert {"run.trec", "per_query.csv", "report.json"} <= listed


def test_secrets_never_logged(monkeypatch):
    tracking.assert_no_secrets(RunConfig().to_manifest())  # the real config is clean
    monkeypatch.setenv("VR_TEST_KEY", "sk-live-123456")
    leaked = {"llm": {"api_key_env": "VR_TEST_KEY", "base_url": "sk-live-123456"}}
    with pytest.raises(ConfigError, match="llm.base_url"):
        tracking.assert_no_secrets(leaked)
    with pytest.raises(ConfigError, match="looks like a secret"):
        tracking.assert_no_secrets({"search": {"api_key": "abc"}})
    # naming the variable is fine
    tracking.assert_no_secrets({"llm": {"api_key_env": "VR_TEST_KEY"}})
