"""The verification evaluation: its pages, labels and measures (the agent runs on a few real pages)."""

from __future__ import annotations

import pytest
import yaml

from experiments.verification_eval import (
    PAGE_KINDS, TASKS_FILE, build_pages, make_system, run_pages, summarise,
)
from verirank_core.config import load_config


@pytest.fixture(scope="module")
def spec():
    data = yaml.safe_load(TASKS_FILE.read_text("utf-8"))
    assert len(data["tasks"]) >= 30
    return data


def test_every_task_has_paths_and_reasoned_labels(spec):
    for task in spec["tasks"]:
        assert task["path"] is not None and task["switch"] and task["query"]
        for alt in ("stock", "other", "wrong"):
            assert task[alt]["switch"] and task[alt].get("why"), (task["id"], alt)
            assert isinstance(task[alt].get("works", False), bool)


def test_pages_are_labelled_by_kind_and_shuffled_deterministically(spec):
    pages = build_pages(spec["tasks"][:3])
    assert len(pages) == 3 * len(PAGE_KINDS)
    again = build_pages(spec["tasks"][:3])
    assert [p["steps"] for p in pages] == [p["steps"] for p in again]
    for p in pages:
        if p["kind"] == "oneplus/nav_only" or p["kind"].startswith("wrong/"):
            assert not p["works"]
        elif p["kind"].startswith("oneplus/"):
            assert p["works"]
    # the original order is not the label order
    first = [p for p in pages if p["rank"] == 1]
    assert len(first) == 3 and not all(p["works"] for p in pages if p["rank"] <= 2)
    assert any(p["steps"][-1] == "Enable it there." for p in pages)
    assert any(p["steps"][0].startswith("Step 1:") for p in pages)


def test_summary_measures_recall_precision_and_gap():
    rows = [
        {"qid": "q", "doc": "a", "rank": 1, "kind": "wrong/plain", "works": False, "f4": 0.5, "stop": "completed",
         "deviations": {}},
        {"qid": "q", "doc": "b", "rank": 2, "kind": "oneplus/plain", "works": True, "f4": 1.0, "stop": "completed",
         "deviations": {"knowledge": 1}},
        {"qid": "q", "doc": "c", "rank": 3, "kind": "oneplus/plain", "works": True, "f4": 0.25, "stop": "no_action",
         "deviations": {"reflection": 1}},
    ]
    s = summarise(rows)
    assert s["recall"] == 0.5 and s["precision"] == 1.0
    assert s["metrics"]["original"]["P@1"] == 0.0 and s["metrics"]["reranked"]["P@1"] == 1.0
    assert s["gap_closed"]["P@1"] == 1.0
    assert s["missed_working"] == {"no_action": 1}
    assert s["deviations"] == {"knowledge": 1, "reflection": 1}
    assert s["pages_with_repairs_verified"] == 1


def test_a_few_real_pages_run_through_the_agent_and_judge(spec):
    pages = [p for p in build_pages(spec["tasks"][:1]) if p["kind"] in ("oneplus/plain", "oneplus/nav_only")]
    predictor, judge = make_system(load_config(), use_knowledge=True, use_reflection=True)
    rows = run_pages(pages, spec["world"], predictor, judge, 28)
    by_kind = {r["kind"]: r for r in rows}
    assert by_kind["oneplus/plain"]["f4"] == 1.0
    assert by_kind["oneplus/nav_only"]["f4"] < 1.0
