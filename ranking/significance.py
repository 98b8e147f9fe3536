"""Paired significance tests of a system against a baseline, per metric.

Both systems are scored on the same queries; the unit of pairing is the
query. Two two-sided tests are reported:

* the paired t-test (``scipy.stats.ttest_rel``), the usual IR choice;
* a paired randomisation (sign-flip permutation) test of the mean
  difference (``scipy.stats.permutation_test``): under the null hypothesis
  the two systems are exchangeable per query, so each per-query difference
  may flip sign. With at most ``exact_up_to`` non-zero differences every sign
  pattern is enumerated (an exact p-value); otherwise ``n_resamples`` random
  patterns from a fixed seed are drawn and p = (hits + 1) / (n_resamples + 1).

When every per-query difference is zero both p-values are 1.0.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable, Optional, Sequence

import numpy as np

from ranking.metrics import EvalResult
from verirank_core.errors import SchemaError

__all__ = ["PairedTest", "paired_ttest", "permutation_test", "compare"]


@dataclass(frozen=True)
class PairedTest:
    """A system vs baseline comparison on one metric."""

    metric: str
    n: int
    system: float
    baseline: float
    delta: float
    p_ttest: float
    p_permutation: float

    def to_dict(self) -> dict:
        return asdict(self)


def paired_ttest(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided paired t-test p-value of mean(a - b) = 0."""
    from scipy import stats

    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if len(diff) < 2 or np.allclose(diff, 0.0, atol=1e-12):
        return 1.0
    if np.allclose(diff, diff[0], atol=1e-12):
        # constant non-zero difference: zero variance, the effect is certain
        return 0.0
    return float(stats.ttest_rel(a, b).pvalue)


def permutation_test(
    a: Sequence[float],
    b: Sequence[float],
    n_resamples: int = 10_000,
    seed: int = 0,
    exact_up_to: int = 16,
) -> float:
    """Two-sided paired randomisation test p-value (see module docstring)."""
    from scipy import stats

    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    diff = diff[np.abs(diff) > 1e-12]  # zero differences are unchanged by a flip
    if len(diff) <= 1:  # no difference, or one whose two sign patterns are equally extreme
        return 1.0
    # statistic |mean|, "greater": p = share of sign patterns at least as extreme as the observed one
    result = stats.permutation_test(
        (diff,), lambda d, axis: np.abs(np.mean(d, axis=axis)), permutation_type="samples",
        vectorized=True, n_resamples=np.inf if len(diff) <= exact_up_to else n_resamples,
        alternative="greater", random_state=seed)
    return float(result.pvalue)


def compare(
    system: EvalResult,
    baseline: EvalResult,
    metrics: Optional[Iterable[str]] = None,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> list[PairedTest]:
    """Test ``system`` against ``baseline`` on every metric, paired by query.

    Both results must cover the same queries (evaluate both against the same
    qrels); the averages compared are the all-queries means.
    """
    qids = sorted(system.per_query)
    if qids != sorted(baseline.per_query):
        only_sys = sorted(set(system.per_query) - set(baseline.per_query))[:5]
        only_base = sorted(set(baseline.per_query) - set(system.per_query))[:5]
        raise SchemaError(
            "system and baseline were scored on different queries "
            f"(only in system: {only_sys}, only in baseline: {only_base}); use the same qrels"
        )
    tests = []
    for metric in metrics or system.metrics:
        if metric not in baseline.metrics or metric not in system.metrics:
            raise SchemaError(f"metric {metric!r} is missing from one of the results")
        a = system.values(metric, qids)
        b = baseline.values(metric, qids)
        tests.append(PairedTest(
            metric=metric,
            n=len(qids),
            system=float(np.mean(a)) if a else 0.0,
            baseline=float(np.mean(b)) if b else 0.0,
            delta=float(np.mean(a) - np.mean(b)) if a else 0.0,
            p_ttest=paired_ttest(a, b),
            p_permutation=permutation_test(a, b, n_resamples=n_resamples, seed=seed),
        ))
    return tests
