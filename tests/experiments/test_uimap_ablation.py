"""Helpers of the UI-map ablation (the full run takes minutes: python -m experiments.uimap_ablation --small)."""

from __future__ import annotations

import json

import yaml

from experiments.uimap_ablation import REAL_TASKS_DIR, format_report, read_goals, write_task_subset


def test_small_task_subset_keeps_every_task_with_its_first_phrasing(tmp_path):
    out = write_task_subset(tmp_path / "tasks", small=True)
    originals = sorted(REAL_TASKS_DIR.glob("real-*.yaml"))
    assert originals, REAL_TASKS_DIR
    assert [p.name for p in sorted(out.glob("*.yaml"))] == [p.name for p in originals]
    for original in originals:
        full = yaml.safe_load(original.read_text())
        small = yaml.safe_load((out / original.name).read_text())
        assert [t["id"] for t in small["tasks"]] == [t["id"] for t in full["tasks"]]
        assert all(s["queries"] == f["queries"][:1] for s, f in zip(small["tasks"], full["tasks"]))
    write_task_subset(out, small=False)  # rewriting replaces, never mixes
    assert yaml.safe_load((out / originals[0].name).read_text()) == yaml.safe_load(originals[0].read_text())


def test_goals_are_read_with_openable_world_specs(tmp_path):
    (tmp_path / "labels").mkdir()
    rows = [{"qid": "a", "goal": "dark_mode_on", "world": "oneplus-settings-android11"},
            {"qid": "b", "goal": "dark_mode_on", "world": "oneui5-settings"}]
    (tmp_path / "labels" / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert read_goals(tmp_path) == {"a": ("imported/oneplus-settings-android11", "dark_mode_on"),
                                    "b": ("oneui5-settings", "dark_mode_on")}


def test_report_shows_both_arms_side_by_side():
    execution = {"executed_pages": 10, "success": 0.5, "success_relevant": 1.0, "success_not_relevant": 0.25,
                 "relevant_pages": 2, "repaired_pages": 3, "mean_deviations": 0.4, "judge_vs_goal": 0.8,
                 "judge_vs_qrels": 0.7, "f4_1_but_goal_missed": 0, "goal_reached_but_f4_below_1": 2}
    ranking = {"Original order": {"MRR": 0.5, "P@1": 0.25, "P@5": 0.2, "NDCG@5": 0.4}}
    arm = {"execution": execution, "ranking": ranking, "deviation_weight": -1.5, "pages": 20, "queries": 2,
           "relevant": 2}
    facts = {"benchmark": {"worlds": ["imported/utg-notes"]}, "predictor": "heuristic", "judge": "heuristic",
             "git_sha": "0123456789abc", "date": "2026-01-01"}
    md = format_report({"without map": arm, "with map": {**arm, "deviation_weight": -2.0}}, facts, "OUT/b", True)
    assert "| execution success (goal reached) | 50.0% | 50.0% |" in md
    assert "| Original order, with map | 0.500 | 0.250 | 0.200 | 0.400 |" in md
    assert "without map: -1.500, with map: -2.000" in md
