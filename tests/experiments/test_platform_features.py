"""Issue 22's platform experiment: the extra columns, leave-queries-out folds, and a report with both settings."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from experiments.platform_features import (
    PLATFORM, STEPS_PLATFORM, caveats, chain_table, feature_sets, group_facts, main, measure, query_folds,
)
from verirank_core.config import load_config
from verirank_core.ranking_config import PAPER_FEATURES


def test_the_platform_setting_adds_exactly_the_two_columns():
    sets = feature_sets(PAPER_FEATURES)
    assert sets["default"] == list(PAPER_FEATURES)
    assert sets["default + platform"] == [*PAPER_FEATURES, *PLATFORM]
    assert sets["text only"] == ["F1", "F2", "F3", "F5", "F6", "F7", "F8"]
    assert sets["text only + platform"] == [*sets["text only"], *PLATFORM]
    assert sets["default + steps platform"] == [*PAPER_FEATURES, STEPS_PLATFORM]
    # a default set that already names them is not counted twice
    assert feature_sets([*PAPER_FEATURES, *PLATFORM])["default"] == list(PAPER_FEATURES)


def test_folds_hold_whole_queries_once_and_follow_the_seed():
    qids = [f"q{i:02d}" for i in range(20) for _ in range(3)]
    folds = query_folds(qids, 5, seed=0)
    flat = [q for f in folds for q in f]
    assert sorted(flat) == sorted(set(qids)) and len(flat) == 20
    assert [len(f) for f in folds] == [4] * 5
    assert query_folds(qids, 5, seed=0) == folds
    assert query_folds(qids, 5, seed=1) != folds
    with pytest.raises(ValueError):
        query_folds(["a", "b"], 3, seed=0)


def _synthetic(n_queries: int = 10, per_query: int = 6, seed: int = 0) -> pd.DataFrame:
    """One working page per query; only platform_match tells which (the other columns are noise)."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(n_queries):
        good = int(rng.integers(per_query))
        for r in range(per_query):
            rows.append({"qid": f"q{q:02d}", "url": f"u{q}-{r}", "doc": f"q{q:02d}-t{r}", "rank": r + 1,
                         "verified": False, "F1": rng.random(), "F4": rng.random(),
                         "platform_match": 1.0 if r == good else 0.0, "device_match": 0.5,
                         STEPS_PLATFORM: 0.5, "label": int(r == good)})
    return pd.DataFrame(rows)


def test_an_informative_platform_column_changes_the_ranking_and_the_report_has_both_settings():
    table = _synthetic()
    res = measure(table, load_config(), ["lr"], n_folds=5, seeds=[0], default=["F1", "F4"])
    rows = {(r["features"], r["order"]): r for r in res["rows"]}
    for order in ("score", "verified-first"):
        assert ("default", order) in rows and ("default + platform", order) in rows
    with_, without = rows[("default + platform", "score")], rows[("default", "score")]
    assert set(with_["columns"]) - set(without["columns"]) == set(PLATFORM)
    # learnt out of fold: the held-out queries are ranked perfectly only with the platform column
    assert with_["mean"]["P@1"] == 1.0 and with_["gap_closed"]["P@1"] == 1.0
    assert without["mean"]["P@1"] < 0.6
    assert with_["platform_importance"]["platform_match"] > 0
    test = next(s for s in res["significance"] if s["system"] == "default + platform" and s["order"] == "score")
    p1 = next(t for t in test["tests"] if t["metric"] == "P@1")
    assert p1["delta"] > 0.4 and p1["p_permutation"] < 0.05
    assert res["baselines"]["oracle"]["P@1"] == 1.0


def test_facts_and_caveats_come_from_the_table():
    table = _synthetic(n_queries=3, per_query=4).assign(
        stated_platform=lambda d: np.where(d["platform_match"] == 1.0, "android", "ios"), status="executed")
    facts = group_facts(table, "stated_platform")
    assert facts["android"] == {"pages": 3, "working": 3, "works_rate": 1.0, "executed": 3, "verified": 0}
    assert facts["ios"]["pages"] == 9 and facts["ios"]["working"] == 0
    notes = " ".join(caveats(table))
    assert "device_match is 0.5 on every page" in notes
    assert "none of which has a working text" not in notes  # it varies where the working pages are


@pytest.mark.slow
def test_the_experiment_runs_on_two_real_tasks(shared_dir, tmp_path):
    from experiments.real_dev_eval import run_chain
    from ranking.metrics import read_qrels

    dev = shared_dir / "real-dev"
    config = load_config()
    run_chain(dev, tmp_path / "chain", config, only={"dA01", "dA02"})
    table = chain_table(tmp_path / "chain" / "run", config, read_qrels(dev / "qrels.txt"))
    assert len(table) == 20 and int(table["label"].sum()) == 5  # 2 + 3 working texts, as qrels.txt says
    assert set(table["doc"]) == {f"dA0{q}-t{i:02d}" for q in (1, 2) for i in range(1, 11)}
    assert set(table["platform_match"]) <= {0.0, 0.5, 1.0}
    assert main(["--run", str(tmp_path / "chain"), "--tasks", "dA01,dA02", "--folds", "2", "--seeds", "0",
                 "--models", "lr", "--results", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "platform_features.json").read_text())
    assert {r["features"] for r in report["ranking"]["rows"]} >= {"default", "default + platform"}
    assert sum(v["pages"] for v in report["facts"]["by_stated_platform"].values()) == 20
    assert "default + platform" in (tmp_path / "platform_features.md").read_text()
