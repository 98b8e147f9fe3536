"""The experiments end to end on a tiny HowToBench (2 worlds, 6 queries x 4 pages).

One module-scoped working folder is shared: Table 5 runs the pipeline and
builds the pre-training set; the other experiments reuse them, as they do on
the real benchmark. Every number in a result table is checked against a
recomputation from the written files with ``ranking.metrics.evaluate``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from experiments import ablation, judge_agreement, table5, table6, table7
from experiments.common import FEATURE_GROUPS, METRICS, fmt
from ranking.metrics import evaluate, read_qrels, read_trec_run
from ranking.significance import compare

TASK_FILES = ("clock-app.yaml", "keyboard-app.yaml")


@pytest.fixture(scope="module")
def work(tmp_path_factory, repo_root) -> dict:
    root = tmp_path_factory.mktemp("experiments")
    tasks = root / "tasks"
    tasks.mkdir()
    for name in TASK_FILES:
        shutil.copy(repo_root / "datasets" / "howtobench" / "tasks" / name, tasks / name)
    out = root / "out"
    args = ["--small", "--out", str(out), "--results", str(root / "results"),
            "--tracking-uri", f"sqlite:///{root / 'mlflow.db'}", "--tasks", str(tasks),
            "--pages-per-query", "4", "--pretrain-tasks", "2", "--devices", "2"]
    return {"root": root, "out": out, "args": args, "results": root / "results",
            "uri": f"sqlite:///{root / 'mlflow.db'}"}


@pytest.fixture(scope="module")
def t5(work) -> dict:
    return table5.run(work["args"])


def _json(path: Path) -> dict:
    return json.loads(Path(path).read_text("utf-8"))


# --- Table 5 ---------------------------------------------------------------------------------


def test_table5_rows_and_columns(t5, work):
    md = t5["paths"]["md"].read_text("utf-8")
    data = _json(t5["paths"]["json"])
    assert t5["paths"]["md"].name == "table5-small.md"
    assert [r["system"] for r in data["rows"]] == list(table5.ROWS)
    header = next(line for line in md.splitlines() if line.startswith("| System"))
    assert header == "| System | MRR | P@1 | P@5 | NDCG@5 | gap closed P@1 | gap closed NDCG@5 |"
    for label in table5.ROWS:
        assert any(line.startswith(f"| {label} |") for line in md.splitlines()), label
    assert data["test"]["queries"] == 6 and data["test"]["pages"] == 24


def test_the_pipeline_run_goes_through_the_one_runner(t5, work):
    """OUT/run's stage log is the runner's (verirank_core.stages), as for `verirank run` and the demo."""
    log = _json(work["out"] / "run" / "manifest.json")["stages"]
    assert [e["stage"] for e in log if "finished" in e] == ["search", "fetch", "extract", "execute", "features"]
    runner_keys = {"stage", "pipeline", "fingerprint", "started", "finished", "counts", "seconds", "cpu_seconds"}
    for entry in log:
        assert runner_keys <= set(entry) and entry["pipeline"] == "experiment", entry
    assert not (work["out"] / "run" / "experiment-config.json").exists()


def test_table5_numbers_equal_evaluate_on_the_written_runs(t5):
    data = _json(t5["paths"]["json"])
    qrels = read_qrels(data["qrels"])
    results = {}
    for row in data["rows"]:
        run = read_trec_run(data["runs"][row["system"]])
        results[row["system"]] = evaluate(run, qrels, METRICS)
        for m in METRICS:
            assert row["mean"][m] == pytest.approx(results[row["system"]].mean[m], abs=1e-12), (row["system"], m)
    md_lines = t5["paths"]["md"].read_text("utf-8").splitlines()
    original, oracle = results["Original order"].mean, results["Oracle"].mean
    for row in data["rows"]:
        line = next(x for x in md_lines if x.startswith(f"| {row['system']} |"))
        cells = [c.strip() for c in line.strip("|").split("|")]
        for i, m in enumerate(METRICS, start=1):
            assert cells[i].rstrip("*†") == fmt(row["mean"][m])
        if row["system"] not in ("Oracle", "Original order"):
            for m in table5.GAP_METRICS:
                expected = table5.gap_closed(results[row["system"]].mean[m], original[m], oracle[m])
                assert row["gap_closed"][m] == pytest.approx(expected)
            tests = {t.metric: t for t in compare(results[row["system"]], results["Original order"], METRICS,
                                                  n_resamples=10_000, seed=42)}
            for stored in row["significance_vs_original"]:
                assert stored["p_permutation"] == pytest.approx(tests[stored["metric"]].p_permutation)
                assert stored["p_ttest"] == pytest.approx(tests[stored["metric"]].p_ttest)


def test_table5_oracle_and_original_mean_what_they_say(t5):
    data = _json(t5["paths"]["json"])
    qrels = read_qrels(data["qrels"])
    oracle = read_trec_run(data["runs"]["Oracle"])
    answerable = [q for q, docs in qrels.items() if any(g > 0 for g in docs.values())]
    # the oracle puts a relevant page first on every query that has one
    assert evaluate(oracle, qrels, ["P@1"]).mean["P@1"] == pytest.approx(len(answerable) / len(qrels))
    bench_serp = Path(data["qrels"]).parent / "serp.jsonl"
    first = {}
    for line in bench_serp.read_text("utf-8").splitlines():
        row = json.loads(line)
        if row["rank"] == 1:
            first[row["qid"]] = row["url"]
    original = read_trec_run(data["runs"]["Original order"])
    for qid, docs in original.items():
        assert max(docs, key=docs.get) == first[qid]


def test_table5_trains_only_on_the_pretraining_set(t5, work):
    data = _json(t5["paths"]["json"])
    pretrain = Path(data["pretrain"]["folder"])
    train_qids = {json.loads(x)["qid"] for x in (pretrain / "queries.jsonl").read_text("utf-8").splitlines()}
    test_qids = set(read_qrels(data["qrels"]))
    assert train_qids and not (train_qids & test_qids)
    for _, name in table5.LEARNED:
        assert (work["out"] / "models" / name / "ranker.json").exists()


def test_table5_is_tracked_in_mlflow(t5, work):
    from mlflow.tracking import MlflowClient

    data = _json(t5["paths"]["json"])
    client = MlflowClient(work["uri"])
    parent = client.get_run(data["mlflow_run_id"])
    assert parent.data.tags["verirank.experiment"] == "table5"
    assert parent.data.metrics["lr.NDCG_at_5"] == pytest.approx(data["rows"][3]["mean"]["NDCG@5"])
    children = client.search_runs([parent.info.experiment_id],
                                  filter_string=f"tags.mlflow.parentRunId = '{parent.info.run_id}'")
    assert sorted(c.info.run_name for c in children) == sorted(table5.ROWS)


def test_rerunning_reuses_the_run_and_refuses_other_settings(t5, work, capsys):
    before = (work["out"] / "run" / "extraction.jsonl").read_bytes()
    code = table6.main(work["args"] + ["--set", "execution.max_steps=5"])
    assert code == 2
    assert "other execute settings" in capsys.readouterr().err
    assert (work["out"] / "run" / "extraction.jsonl").read_bytes() == before


def test_a_folder_that_is_not_a_benchmark_is_a_clear_error(work, tmp_path, capsys):
    code = table6.main(["--small", "--out", str(tmp_path / "o"), "--bench", str(tmp_path),
                        "--results", str(tmp_path / "r"), "--tracking-uri", f"sqlite:///{tmp_path / 'm.db'}"])
    assert code == 2
    assert "not a HowToBench build" in capsys.readouterr().err


# --- Table 6 ---------------------------------------------------------------------------------


def test_table6_bins_recount_from_the_feature_table(t5, work):
    from experiments.common import read_page_labels
    from verirank_core.store import read_parquet

    out = table6.run(work["args"])
    data = _json(out["paths"]["json"])
    labels = read_page_labels(work["out"] / "bench")
    features = read_parquet(work["out"] / "run" / "features.parquet")
    f4 = {(q, u): v for q, u, v in zip(features["qid"], features["url"], features["F4"])}
    expected: dict[str, dict[str, int]] = {g: {b: 0 for b in table6.BINS} for g in table6.GROUPS}
    for key, label in labels.items():
        expected[table6.instruction_group(label)][table6.f4_bin(f4[key])] += 1
    for group in table6.GROUPS:
        assert data["groups"][group]["counts"] == expected[group]
        assert data["groups"][group]["pages"] == sum(expected[group].values())
    assert sum(d["pages"] for d in data["groups"].values()) == len(labels)
    nop = expected[table6.NO_OR_PARTIAL]
    assert data["no_or_partial_f4_1_share"] == pytest.approx(nop["F4 = 1"] / sum(nop.values()))
    md = out["paths"]["md"].read_text("utf-8")
    for group in table6.GROUPS:
        assert f"| {group} |" in md


def test_table6_groups_and_bins():
    assert table6.f4_bin(0.0) == "F4 = 0"
    assert table6.f4_bin(0.49) == "0 < F4 < 0.5"
    assert table6.f4_bin(0.5) == "0.5 <= F4 < 1"
    assert table6.f4_bin(1.0) == "F4 = 1"
    assert table6.instruction_group({"variant": "bait", "bait_with_steps": True}) == table6.FULL
    assert table6.instruction_group({"variant": "bait", "bait_with_steps": False}) == table6.NO_OR_PARTIAL
    assert table6.instruction_group({"variant": "partial"}) == table6.NO_OR_PARTIAL
    assert table6.instruction_group({"variant": "outdated"}) == table6.OTHER_VERSION
    with pytest.raises(ValueError):
        table6.instruction_group({"variant": "mystery"})


# --- Table 7 ---------------------------------------------------------------------------------


def test_table7_with_and_without_grounding(t5, work):
    from verirank_core.extraction_records import Extraction
    from verirank_core.store import read_jsonl

    out = table7.run(work["args"])
    data = _json(out["paths"]["json"])
    ground, plain = data["settings"]["With grounding"], data["settings"]["Without grounding"]
    for s in (ground, plain):
        assert s["recall"] == pytest.approx(s["true_positives"] / s["pages_with_steps"])
        assert s["false_extraction_rate"] == pytest.approx(s["false_extractions"] / s["pages_without_steps"])
        assert s["missing_records"] == 0
    # grounding only removes steps from the same (deterministic) extractor output
    assert plain["false_extractions"] >= ground["false_extractions"]
    assert plain["any_steps_on_pages_with_steps"] >= ground["any_steps_on_pages_with_steps"]
    noground = read_jsonl(work["out"] / "run-noground" / "extraction.jsonl", Extraction)
    assert noground and all(s.origin == "ungrounded" for e in noground for s in e.steps)
    md = out["paths"]["md"].read_text("utf-8")
    assert "| With grounding |" in md and "| Without grounding |" in md


def test_step_match_is_rouge_l_on_words():
    assert table7.lcs_length("a b c d".split(), "a x c d".split()) == 3
    recall, precision = table7.step_match(["Open «Settings».", "Tap Display."], ["1. Open Settings", "Tap Display"])
    assert recall == 1.0 and precision == pytest.approx(4 / 5)
    assert table7.step_match(["Tap Display"], []) == (0.0, 0.0)


# --- judge agreement ---------------------------------------------------------------------------


def test_judge_agreement_counts(t5, work):
    out = judge_agreement.run(work["args"])
    data = _json(out["paths"]["json"])
    for row in data["thresholds"].values():
        assert row["tp"] + row["fp"] + row["fn"] + row["tn"] == row["n"] == data["executed"]
        assert row["agreement"] == pytest.approx((row["tp"] + row["tn"]) / row["n"])
    assert data["all_pages_f4_1"]["n"] == data["pages"] == 24
    assert Path(data["png"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_agreement_and_kappa_by_hand():
    a = judge_agreement.agreement([True, True, False, False], [True, False, False, False])
    assert (a["tp"], a["fp"], a["fn"], a["tn"]) == (1, 1, 0, 2)
    assert a["agreement"] == 0.75 and a["precision"] == 0.5 and a["recall"] == 1.0
    # expected agreement (2*1 + 2*3) / 16 = 0.5, kappa = (0.75 - 0.5) / 0.5
    assert a["kappa"] == pytest.approx(0.5)
    assert judge_agreement.agreement([], [])["agreement"] is None


# --- ablation ----------------------------------------------------------------------------------


def test_ablation_rows_and_deltas(t5, work):
    out = ablation.run(work["args"] + ["--models", "lr"])
    data = _json(out["paths"]["json"])
    labels = [r["features"] for r in data["rows"]]
    assert labels == [ablation.ALL] + [f"- {g}" for g in FEATURE_GROUPS]
    qrels = read_qrels(data["qrels"])
    runs = sorted(Path(data["runs_folder"]).glob("lr-*.trec"))
    assert len(runs) == 1 + len(FEATURE_GROUPS)
    full = evaluate(read_trec_run(Path(data["runs_folder"]) / "lr-all.trec"), qrels, METRICS)
    for row in data["rows"][1:]:
        dropped = FEATURE_GROUPS[row["features"].removeprefix("- ")]
        assert not set(dropped) & set(row["columns"])
        assert len(row["columns"]) == 18 - len(dropped)
        slug = "minus-" + row["features"].removeprefix("- ").split()[0].lower()
        result = evaluate(read_trec_run(Path(data["runs_folder"]) / f"lr-{slug}.trec"), qrels, METRICS)
        for m in METRICS:
            assert row["mean"][m] == pytest.approx(result.mean[m])
            assert row["delta"][m] == pytest.approx(result.mean[m] - full.mean[m])
    assert Path(data["png"]).read_bytes()[:4] == b"\x89PNG"


def test_ablation_rejects_unknown_models(work, capsys):
    assert ablation.main(work["args"] + ["--models", "svm"]) == 2
    assert "unknown" in capsys.readouterr().err


def test_feature_sets_drop_each_group_once():
    names = [f"F{i}" for i in range(1, 19)]
    sets = ablation.feature_sets(names)
    assert len(sets) == 1 + len(FEATURE_GROUPS)
    assert sets[ablation.ALL] == names
    assert sets["- F4 judge"] == [n for n in names if n != "F4"]
    assert np.sum([len(v) for k, v in sets.items() if k != ablation.ALL]) == 6 * 18 - 18


def test_table7_flags_runs_made_by_different_extractor_output():
    from verirank_core.extraction_records import Extraction, ExtractionStatus

    def ext(url: str, raw: list[str]) -> Extraction:
        return Extraction(qid="q", url=url, rank=1, status=ExtractionStatus.NO_STEPS, raw_steps=raw)

    a = {("q", "u1"): ext("u1", ["Open Settings"]), ("q", "u2"): ext("u2", [])}
    b = {("q", "u1"): ext("u1", ["Open Settings"]), ("q", "u2"): ext("u2", ["Tap Display"])}
    assert table7.raw_output_mismatches(a, a) == []
    assert table7.raw_output_mismatches(a, b) == [("q", "u2")]


def test_results_name_the_code_of_every_stage(t5):
    data = _json(t5["paths"]["json"])
    for stage in ("run/extract", "run/execute", "run/features", "pretrain/pretrain"):
        assert data["pipeline_code"][stage] and data["pipeline_code"][stage][0].startswith("git ")
    assert "pipeline run git " in t5["paths"]["md"].read_text("utf-8")
