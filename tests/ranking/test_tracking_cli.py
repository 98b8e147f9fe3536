"""`verirank train` and `verirank evaluate` through the real typer app."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from mlflow.tracking import MlflowClient
from typer.testing import CliRunner

import support_letor
from ranking.metrics import read_trec_run, write_qrels, write_trec_run
from ranking.svmlight import save_svmlight
from verirank.cli import app


def _invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)


def _small_letor(shared_dir, folder):
    train, test = support_letor.letor(shared_dir)
    paths = {}
    for split, data, n in (("train", train, 30), ("test", test, 10)):
        part = support_letor.first_queries(data, n)
        paths[split] = folder / f"{split}.svmlight"
        save_svmlight(paths[split], part.X, part.y, part.qids)
    return paths


def test_train_then_evaluate_with_default_tracking_store(shared_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default store is sqlite:///mlflow.db in the working directory
    paths = _small_letor(shared_dir, tmp_path)
    result = _invoke("train", "--data", paths["train"], "--test", paths["test"], "--model", "lambdamart",
                     "--out", tmp_path / "lm", "--seed", 1, "--set", "ranking.train.params.n_estimators=30",
                     "--experiment", "cli-test", "--register", "cli-lm")
    assert result.exit_code == 0, result.output
    assert "trained lambdamart" in result.output and "registered as models:/cli-lm/1" in result.output
    assert (tmp_path / "mlflow.db").exists()
    summary = json.loads((tmp_path / "lm" / "train_summary.json").read_text())
    assert summary["params"]["n_estimators"] == 30 and summary["params"]["seed"] == 1
    run = MlflowClient(tracking_uri="sqlite:///mlflow.db").get_run(summary["mlflow_run_id"])
    assert run.data.params["hp.n_estimators"] == "30"

    # a baseline run in the original order, and qrels from the labels
    from ranking.svmlight import load_svmlight
    from ranking.metrics import qrels_from_labels, run_from_scores

    test = load_svmlight(paths["test"], n_features=300)
    write_qrels(tmp_path / "qrels.txt", qrels_from_labels(test.qids, test.docs, test.y))
    write_trec_run(tmp_path / "orig.trec", run_from_scores(test.qids, test.docs, -np.arange(len(test), dtype=float)))

    result = _invoke("evaluate", "--run", tmp_path / "lm" / "test.trec", "--qrels", tmp_path / "qrels.txt",
                     "--baseline", tmp_path / "orig.trec", "--json", "--no-track")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["system"]["n_queries"] == 10
    assert {t["metric"] for t in report["significance"]} == {"MRR", "P@1", "P@5", "NDCG@5", "NDCG@10"}
    assert report["system"]["mean"]["NDCG@5"] == summary["test_mean"]["NDCG@5"]
    assert "mlflow_run_id" not in report

    result = _invoke("evaluate", "--run", tmp_path / "lm" / "test.trec", "--qrels", tmp_path / "qrels.txt",
                     "--baseline", tmp_path / "orig.trec", "--metric", "P@1", "--metric", "NDCG@3")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split()[:4] == ["metric", "system", "baseline", "delta"]
    assert lines[1].startswith("P@1") and lines[2].startswith("NDCG@3")
    assert "MLflow run" in result.output


def test_train_from_a_features_parquet(tmp_path):
    rng = np.random.default_rng(0)
    rows = []
    for q in range(12):
        for r in range(1, 9):
            feats = {f"F{i}": float(rng.random()) for i in range(1, 19)}
            rows.append({"qid": f"q{q}", "url": f"https://s{r}.example/{q}", "rank": r, "title": "t",
                         "verified": feats["F4"] > 0.5, **feats, "label": int(feats["F4"] > 0.7)})
    pd.DataFrame(rows).to_parquet(tmp_path / "features.parquet", index=False)
    result = _invoke("train", "--data", tmp_path / "features.parquet", "--model", "lr", "--out", tmp_path / "m",
                     "--no-track")
    assert result.exit_code == 0, result.output
    meta = json.loads((tmp_path / "m" / "ranker.json").read_text())
    assert meta["feature_names"] == [f"F{i}" for i in range(1, 19)]
    # the label follows F4, so F4 gets the largest weight
    weights = dict(zip(meta["feature_names"], meta["state"]["coef"]))
    assert max(weights, key=weights.get) == "F4"
    # the validation run uses the pages' urls as doc ids
    run = read_trec_run(tmp_path / "m" / "valid.trec")
    assert all(doc.startswith("https://") for docs in run.values() for doc in docs)


def test_bad_inputs_exit_2_with_a_clear_message(tmp_path):
    bad = tmp_path / "bad.svmlight"
    bad.write_text("1 qid:1 1:0.5\n1 qid:1 2:oops\n")
    result = _invoke("train", "--data", bad, "--model", "lr", "--out", tmp_path / "m", "--no-track")
    assert result.exit_code == 2
    assert f"{bad}:2" in result.output and "oops" in result.output

    result = _invoke("train", "--data", bad, "--model", "svm", "--out", tmp_path / "m", "--no-track")
    assert result.exit_code == 2 and "ranking.model" in result.output and "lambdamart" in result.output

    (tmp_path / "q.txt").write_text("q1 0 a 1\n")
    result = _invoke("evaluate", "--run", tmp_path / "missing.trec", "--qrels", tmp_path / "q.txt", "--no-track")
    assert result.exit_code == 2 and "missing.trec does not exist" in result.output


def test_help_shows_examples():
    for command in ("train", "evaluate"):
        result = _invoke(command, "--help")
        assert result.exit_code == 0
        assert "Examples" in result.output and f"verirank {command}" in result.output
