"""The one ordering rule (score descending, ties by original rank) and the fixed rankers that use it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ranking.metrics import rank_docs
from ranking.order import positions, ranked_run
from ranking.rerank import baseline_ranker, rerank, score_with_model
from verirank_core.errors import RankingError


def test_positions_sort_each_query_by_tier_then_score_then_original_rank():
    groups = ["b", "a", "a", "b", "a", "a"]
    scores = [1.0, 0.5, 0.9, 1.0, 0.5, 0.1]
    ranks = [2, 3, 4, 1, 1, 2]
    # a: 0.9 first; the two 0.5s tie -> original rank 1 before rank 3; 0.1 last. b: tie -> rank 1 first
    assert list(positions(groups, scores, ranks)) == [2, 3, 1, 1, 2, 4]
    # tier 0 before tier 1 whatever the score, then score within a tier
    assert list(positions(["q"] * 3, [5.0, 1.0, 9.0], [1, 2, 3], tier=[1, 0, 1])) == [3, 1, 2]
    assert len(positions([], [], [])) == 0
    with pytest.raises(ValueError, match="2 groups, 1 scores"):
        positions(["a", "b"], [1.0], [1, 2])


def test_a_ranked_run_reads_back_in_the_same_order_under_trec_tie_breaking():
    """Scores n - rank + 1: a TREC tool re-sorting by score gets our order, not the doc-id order."""
    run = ranked_run(["q", "q", "q", "r"], ["z", "a", "m", "x"], [2, 3, 1, 1])
    assert run == {"q": {"m": 3.0, "z": 2.0, "a": 1.0}, "r": {"x": 1.0}}
    assert rank_docs(run["q"]) == ["m", "z", "a"]


def _table() -> pd.DataFrame:
    rows = [("q1", f"u{r}", r, f4, f4 == 1.0) for r, f4 in ((1, 0.0), (2, 1.0), (3, 0.5), (4, 1.0), (5, 0.5))]
    rows += [("q2", "v1", 1, 0.2, False), ("q2", "v2", 2, 0.2, False)]
    table = pd.DataFrame(rows, columns=["qid", "url", "rank", "F4", "verified"])
    table["F1"] = np.linspace(0, 1, len(table))
    return table.iloc[::-1].reset_index(drop=True)  # rows not in original order: the rank column decides


def _order(table, name, rule="score"):
    ranked = rerank(table, score_with_model(table, baseline_ranker(name, table)), rule)
    return {q: list(g["url"]) for q, g in ranked.groupby("qid", sort=True)}


def test_the_registered_fixed_rankers_order_a_feature_table():
    table = _table()
    assert _order(table, "original") == {"q1": ["u1", "u2", "u3", "u4", "u5"], "q2": ["v1", "v2"]}
    assert _order(table, "f4") == {"q1": ["u2", "u4", "u3", "u5", "u1"], "q2": ["v1", "v2"]}
    assert _order(table, "f4-first") == {"q1": ["u2", "u4", "u1", "u3", "u5"], "q2": ["v1", "v2"]}
    # verified-first keeps unverified pages in original order after the verified ones
    assert _order(table, "f4", "verified-first")["q1"] == ["u2", "u4", "u1", "u3", "u5"]
    with pytest.raises(RankingError, match="not a fixed ranker"):
        baseline_ranker("lr", table)
