"""Paired significance tests: known answers, determinism, and pairing checks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from ranking.metrics import evaluate
from ranking.significance import compare, paired_ttest, permutation_test
from verirank_core.errors import SchemaError


def test_ttest_matches_scipy_and_handles_degenerate_cases():
    rng = np.random.default_rng(0)
    a, b = rng.random(30), rng.random(30)
    assert paired_ttest(a, b) == pytest.approx(stats.ttest_rel(a, b).pvalue)
    assert paired_ttest(a, a) == 1.0  # no difference at all
    assert paired_ttest(a + 0.1, a) == 0.0  # a constant improvement on every query


def test_exact_permutation_p_value_by_enumeration():
    diffs = np.array([0.5, 0.2, -0.1, 0.4, 0.3, 0.0])  # the zero difference is dropped
    observed = abs(diffs[diffs != 0].mean())
    nonzero = diffs[diffs != 0]
    hits = sum(abs(np.mean(np.array(signs) * nonzero)) >= observed - 1e-12
               for signs in itertools.product((1, -1), repeat=len(nonzero)))
    expected = hits / 2 ** len(nonzero)
    assert permutation_test(diffs, np.zeros_like(diffs)) == pytest.approx(expected)
    assert permutation_test(np.zeros(5), np.zeros(5)) == 1.0


def test_sampled_permutation_is_seeded_and_sensible():
    rng = np.random.default_rng(1)
    base = rng.random(60)
    better = base + 0.2 + rng.normal(0, 0.05, 60)
    noise = base + rng.normal(0, 0.05, 60)
    p1 = permutation_test(better, base, n_resamples=2000, seed=3)
    assert p1 == permutation_test(better, base, n_resamples=2000, seed=3)
    assert p1 < 0.001
    assert permutation_test(noise, base, n_resamples=2000, seed=3) > 0.01


def test_compare_pairs_queries_and_reports_every_metric():
    qrels = {f"q{i}": {"good": 1, "bad": 0} for i in range(20)}
    good_run = {q: {"good": 2.0, "bad": 1.0} for q in qrels}
    bad_run = {q: {"good": 1.0, "bad": 2.0} for q in qrels}
    tests = compare(evaluate(good_run, qrels), evaluate(bad_run, qrels), n_resamples=500)
    by_metric = {t.metric: t for t in tests}
    assert set(by_metric) == {"MRR", "P@1", "P@5", "NDCG@5", "NDCG@10"}
    p1 = by_metric["P@1"]
    assert (p1.system, p1.baseline, p1.delta, p1.n) == (1.0, 0.0, 1.0, 20)
    assert p1.p_ttest == 0.0 and p1.p_permutation < 0.01
    # P@5 is the same for both (one relevant in the top 5)
    assert by_metric["P@5"].delta == 0.0 and by_metric["P@5"].p_permutation == 1.0


def test_compare_refuses_results_on_different_queries():
    a = evaluate({"q1": {"d": 1.0}}, {"q1": {"d": 1}})
    b = evaluate({"q2": {"d": 1.0}}, {"q2": {"d": 1}})
    with pytest.raises(SchemaError, match="different queries"):
        compare(a, b)
