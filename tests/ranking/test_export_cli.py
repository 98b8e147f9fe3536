"""`verirank features / rerank / export` through the real typer app."""

from __future__ import annotations

import json

import pandas as pd
from typer.testing import CliRunner

import support_ranking_runs as runs
from verirank.cli import app

NO_F2 = "[" + ",".join(f"F{i}" for i in range(1, 19) if i != 2) + "]"


def _invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)


def test_features_rerank_export_end_to_end(tmp_path):
    from ranking.models import make_model

    run = runs.make_run(tmp_path / "run")
    qrels = runs.write_qrels(tmp_path / "qrels.txt", {("q1", "https://e.example/done"): 2,
                                                      ("q1", "https://b.example/dark"): 1,
                                                      ("q2", "https://g.example/bt"): 1})
    result = _invoke("features", run, "--qrels", qrels, "--set", f"ranking.features.names={NO_F2}")
    assert result.exit_code == 0, result.output
    assert "7 pages of 2 queries, 3 verified" in result.output
    table = pd.read_parquet(run / "features.parquet")
    assert table["label"].tolist() == [0, 1, 0, 0, 2, 0, 1]
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["stages"][-1]["counts"]["labelled_relevant"] == 3

    names = [c for c in table.columns if c.startswith("F")]
    model = make_model("lr").fit(table[names].to_numpy(), table["label"].to_numpy(), table["qid"].to_numpy(),
                                 feature_names=names)
    model_dir = model.save(tmp_path / "model")
    result = _invoke("rerank", run, "--model", model_dir)
    assert result.exit_code == 0, result.output
    lines = (run / "reranked.trec").read_text().splitlines()
    assert len(lines) == 7 and lines[0].split()[:2] == ["q1", "Q0"]

    for fmt in ("trec", "jsonl", "csv"):
        out = tmp_path / f"out.{fmt}"
        result = _invoke("export", run, "--format", fmt, "--out", out)
        assert result.exit_code == 0, result.output
        assert "wrote 7 rows" in result.output
    assert (tmp_path / "out.trec").read_text() == (run / "reranked.trec").read_text()


def test_missing_inputs_are_one_clear_line(tmp_path):
    run = tmp_path / "empty"
    run.mkdir()
    result = _invoke("features", run)
    assert result.exit_code == 2
    assert "extraction.jsonl not found: run `verirank extract" in result.output
    runs.make_run(run)
    result = _invoke("rerank", run, "--model", tmp_path / "nope")
    assert result.exit_code == 2 and "features.parquet not found: run `verirank features" in result.output
    assert _invoke("features", run).exit_code == 0
    result = _invoke("rerank", run, "--model", tmp_path / "nope")
    assert result.exit_code == 2 and "neither a saved-model directory" in result.output
    result = _invoke("export", run, "--format", "csv", "--out", tmp_path / "x.csv")
    assert result.exit_code == 2 and "reranked.jsonl not found" in result.output
    result = _invoke("features", run, "--set", "ranking.features.names=[F1,F99]")
    assert result.exit_code == 2 and "unknown feature" in result.output
