"""`verirank demo` end to end: outputs, numbers equal to `verirank evaluate`, MLflow, resuming."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

from ranking.metrics import read_qrels, read_trec_run
from verirank_core.execution_records import ExecutionResult
from verirank_core.store import read_jsonl
from verirank_core.trajectories import RunTrajectories

SYSTEMS = ("Oracle", "Original order", "F4-only", "LR")
STAGE_NAMES = ("inputs", "search", "fetch", "extract", "execute", "features", "model", "rerank",
               "evaluate", "report")


def _summary(out):
    return json.loads((out / "summary.json").read_text())


def test_demo_writes_every_output(demo_run):
    out = demo_run.out
    for name in ("queries.jsonl", "serp.jsonl", "pages.jsonl", "extraction.jsonl", "execution.jsonl",
                 "features.parquet", "reranked.trec", "reranked.jsonl", "summary.json", "report.html",
                 "qrels.txt", "mlflow.db", "manifest.json", "model/ranker.json",
                 "runs/original.trec", "runs/f4.trec", "runs/oracle.trec"):
        assert (out / name).is_file(), name
    assert any((out / "assets").rglob("*.png")), "the report has no screenshot copies"
    executed = [r for r in read_jsonl(out / "execution.jsonl", ExecutionResult) if r.trajectory]
    assert executed and all(RunTrajectories(out).load(r).url == r.url for r in executed)

    assert not (out / "demo.json").exists()  # the stage log is the manifest's, like every run's
    log = json.loads((out / "manifest.json").read_text())["stages"]
    finished = [e["stage"] for e in log if "finished" in e and e["pipeline"] == "demo"]
    assert finished == list(STAGE_NAMES)
    # written by the one runner (verirank_core.stages), as for `verirank run` and the experiments
    runner_keys = {"stage", "pipeline", "fingerprint", "started", "finished", "counts", "seconds", "cpu_seconds"}
    assert all(runner_keys <= set(e) for e in log)
    # the config logged is the one that ran: simulators on the queries' worlds, every step's screen
    ran = json.loads((out / "manifest.json").read_text())["config"]
    assert ran["execution"]["route_by_world"] is True and ran["execution"]["screenshots"] == "every_step"
    assert len(ran["execution"]["devices"]) == 2 and all(d.startswith("sim:") for d in ran["execution"]["devices"])
    assert ran["extraction"]["fetch"]["cache_dir"].endswith("cache/pages")
    # 4 queries, one per app, top 5 results each
    queries = [json.loads(line) for line in (out / "queries.jsonl").read_text().splitlines()]
    assert len(queries) == 4 and len({q["world"] for q in queries}) == 4
    assert len((out / "serp.jsonl").read_text().splitlines()) == 20


def test_terminal_prints_the_table(demo_run):
    text = demo_run.output
    header = next(line for line in text.splitlines() if line.startswith("system"))
    for column in ("MRR", "P@1", "P@5", "NDCG@5", "p vs original"):
        assert column in header
    summary = _summary(demo_run.out)
    for row in summary["rows"]:
        line = next(line for line in text.splitlines() if line.startswith(row["system"] + " "))
        assert f"{row['mean']['MRR']:.4f}" in line and f"{row['mean']['NDCG@5']:.4f}" in line
    assert [r["system"] for r in summary["rows"]] == list(SYSTEMS)


@pytest.mark.parametrize("system", ["LR", "F4-only", "Oracle"])
def test_summary_equals_verirank_evaluate(demo_run, system):
    """The demo's numbers are exactly what `verirank evaluate` prints for the same files."""
    summary = _summary(demo_run.out)
    row = next(r for r in summary["rows"] if r["system"] == system)
    out = demo_run.out
    result = demo_run.invoke("evaluate", "--run", out / row["run"], "--qrels", out / "qrels.txt",
                             "--baseline", out / "runs" / "original.trec", "--json", "--no-track")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["system"]["mean"] == pytest.approx(row["mean"], abs=1e-12)
    assert report["baseline"]["mean"] == pytest.approx(summary["rows"][1]["mean"], abs=1e-12)
    for test in report["significance"]:
        assert row["p_permutation"][test["metric"]] == pytest.approx(test["p_permutation"])
        assert row["p_ttest"][test["metric"]] == pytest.approx(test["p_ttest"])


def test_the_ranker_row_is_the_reranked_file(demo_run):
    out = demo_run.out
    lr = next(r for r in _summary(out)["rows"] if r["system"] == "LR")
    assert lr["run"] == "reranked.trec"
    trec = read_trec_run(out / "reranked.trec")
    ranked = {}
    for line in (out / "reranked.jsonl").read_text().splitlines():
        item = json.loads(line)
        ranked.setdefault(item["qid"], []).append((item["rank"], item["url"]))
    for qid, docs in trec.items():
        by_score = [d for d, _ in sorted(docs.items(), key=lambda kv: -kv[1])]
        assert by_score == [url for _, url in sorted(ranked[qid])]


def test_oracle_bounds_every_system(demo_run):
    summary = _summary(demo_run.out)
    oracle = summary["rows"][0]["mean"]
    for row in summary["rows"][1:]:
        for metric, value in row["mean"].items():
            assert value <= oracle[metric] + 1e-12, (row["system"], metric)
    # qrels are restricted to the candidate pool, so the oracle reaches MRR 1 on answerable queries
    qrels = read_qrels(demo_run.out / "qrels.txt")
    answerable = sum(1 for docs in qrels.values() if any(g > 0 for g in docs.values()))
    assert oracle["MRR"] == pytest.approx(answerable / len(qrels))
    serp = {(json.loads(l)["qid"], json.loads(l)["url"]) for l in (demo_run.out / "serp.jsonl").read_text().splitlines()}
    assert {(q, u) for q, docs in qrels.items() for u in docs} <= serp


def test_mlflow_holds_the_train_and_evaluate_runs(demo_run):
    summary = _summary(demo_run.out)
    db = sqlite3.connect(demo_run.out / "mlflow.db")
    try:
        kinds = dict(db.execute(
            "SELECT r.run_uuid, t.value FROM runs r JOIN tags t ON t.run_uuid = r.run_uuid "
            "WHERE t.key = 'verirank.kind'").fetchall())
        metrics = {(run, key): value for run, key, value in db.execute(
            "SELECT run_uuid, key, value FROM latest_metrics")}
    finally:
        db.close()
    assert sorted(kinds.values()).count("evaluate") == 4
    assert "train" in kinds.values()
    for row in summary["rows"]:
        assert kinds[row["mlflow_run_id"]] == "evaluate"
        assert metrics[(row["mlflow_run_id"], "system.MRR")] == pytest.approx(row["mean"]["MRR"])


def test_rerun_reuses_every_stage(demo_run, tmp_path):
    out = tmp_path / "copy"
    shutil.copytree(demo_run.out, out)
    before = _summary(out)
    result = demo_run.invoke("demo", "--data", demo_run.data, "--out", out, "--queries", "4",
                             "--set", "extraction.search.top_n=5")
    assert result.exit_code == 0, result.output
    for name in STAGE_NAMES:
        assert f"{name}: reused" in result.output
    after = _summary(out)
    assert [r["mean"] for r in after["rows"]] == [r["mean"] for r in before["rows"]]


def test_no_train_redoes_only_the_model_onwards(demo_run, tmp_path):
    out = tmp_path / "copy"
    shutil.copytree(demo_run.out, out)
    executions_before = (out / "execution.jsonl").read_bytes()
    result = demo_run.invoke("demo", "--data", demo_run.data, "--out", out, "--queries", "4",
                             "--set", "extraction.search.top_n=5", "--no-train")
    assert result.exit_code == 0, result.output
    for name in ("inputs", "search", "fetch", "extract", "execute", "features"):
        assert f"{name}: reused" in result.output
    for name in ("model", "rerank", "evaluate", "report"):
        assert f"{name}: reused" not in result.output
    summary = _summary(out)
    assert summary["model"]["source"] == "bundled"
    assert (out / "execution.jsonl").read_bytes() == executions_before


def test_an_interrupted_execute_stage_resumes(demo_run, tmp_path):
    """Drop half the execution records and mark the stage unfinished: the re-run completes it."""
    out = tmp_path / "copy"
    shutil.copytree(demo_run.out, out)
    lines = (out / "execution.jsonl").read_text().splitlines(keepends=True)
    kept = lines[: len(lines) // 2]
    (out / "execution.jsonl").write_text("".join(kept) + lines[len(kept)][:25])  # plus a torn line
    manifest = json.loads((out / "manifest.json").read_text())
    execute = [e for e in manifest["stages"] if e["stage"] == "execute"][-1]
    del execute["finished"]  # as a run killed during the stage leaves it
    (out / "manifest.json").write_text(json.dumps(manifest))

    result = demo_run.invoke("demo", "--data", demo_run.data, "--out", out, "--queries", "4",
                             "--set", "extraction.search.top_n=5", "--no-train")
    assert result.exit_code == 0, result.output
    assert "extract: reused" in result.output and "execute: reused" not in result.output
    from verirank_core.execution_records import ExecutionResult

    records = read_jsonl(out / "execution.jsonl", ExecutionResult)
    assert len(records) == len(lines)
    assert len({r.key() for r in records}) == len(lines)


def test_other_inputs_in_the_same_folder_are_refused(demo_run):
    before = (demo_run.out / "manifest.json").read_bytes()
    result = demo_run.invoke("demo", "--data", demo_run.data, "--out", demo_run.out, "--queries", "2")
    assert result.exit_code == 2
    assert "holds a demo of other inputs" in result.output
    assert (demo_run.out / "manifest.json").read_bytes() == before


def test_missing_benchmark_folder_is_a_clear_error(demo_run, tmp_path):
    result = demo_run.invoke("demo", "--data", tmp_path / "nowhere", "--out", tmp_path / "out")
    assert result.exit_code == 2
    assert "is not a HowToBench folder" in result.output and "qrels.txt" in result.output


def test_a_ranking_setting_change_redoes_features_onwards(demo_run, tmp_path):
    out = tmp_path / "copy"
    shutil.copytree(demo_run.out, out)
    result = demo_run.invoke("demo", "--data", demo_run.data, "--out", out, "--queries", "4",
                             "--set", "extraction.search.top_n=5", "--set", "ranking.verified.rule=completed")
    assert result.exit_code == 0, result.output
    for name in ("inputs", "search", "fetch", "extract", "execute"):
        assert f"{name}: reused" in result.output
    for name in ("features", "model", "rerank", "evaluate", "report"):
        assert f"{name}: reused" not in result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["ranking"]["verified"]["rule"] == "completed"


def test_an_execution_setting_change_is_refused(demo_run):
    before = (demo_run.out / "execution.jsonl").read_bytes()
    result = demo_run.invoke("demo", "--data", demo_run.data, "--out", demo_run.out, "--queries", "4",
                             "--set", "extraction.search.top_n=5", "--set", "execution.max_steps=3")
    assert result.exit_code == 2
    assert "other execute settings" in result.output and "--fresh" in result.output
    assert (demo_run.out / "execution.jsonl").read_bytes() == before
