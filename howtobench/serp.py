"""The original ranking of HowToBench: realistic, and blind to correctness.

A web search engine ranks How-to pages by popularity and text match, not by
whether the steps work on your phone. We imitate that with a seeded score per
page: a popularity prior by page style (SEO spam and listicles often rank
high, forums low) plus Gumbel noise. Nothing in the score looks at the page's
variant or its qrels, so the original order is (by construction) only weakly
related to relevance; ``rank_relevance_correlation`` measures how weakly.
"""

from __future__ import annotations

import math
import random
from typing import Iterable, Mapping, Sequence

from verirank_core.extraction_records import SearchResult
from howtobench.pages import PagePlan, plain_text

__all__ = ["STYLE_POPULARITY", "rank_pages", "serp_records", "rank_relevance_correlation"]

#: log-popularity prior per page style
STYLE_POPULARITY: dict[str, float] = {
    "seo_spam": 0.8, "listicle": 0.7, "video": 0.6, "blog": 0.5, "help_centre": 0.4, "forum": 0.2,
}


def rank_pages(plans: Sequence[PagePlan], seed: int) -> list[PagePlan]:
    """The plans of one query in search-engine order (deterministic in ``seed``)."""
    if not plans:
        return []
    rng = random.Random(f"howtobench-serp:{seed}:{plans[0].qid}")
    scored = []
    for plan in plans:
        u = min(max(rng.random(), 1e-12), 1 - 1e-12)
        gumbel = -math.log(-math.log(u))
        scored.append((STYLE_POPULARITY[plan.style] + gumbel, plan.url, plan))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [plan for _, _, plan in scored]


def serp_records(ranked: Sequence[PagePlan]) -> list[SearchResult]:
    """``serp.jsonl`` rows (rank starts at 1)."""
    return [SearchResult(qid=p.qid, rank=i, url=p.url, title=p.title, snippet=plain_text(p)[:200])
            for i, p in enumerate(ranked, start=1)]


def rank_relevance_correlation(serp: Iterable[SearchResult], qrels: Mapping[str, Mapping[str, int]]) -> dict:
    """How much the original order knows about relevance.

    Returns the pooled Spearman rho and Kendall tau-b between rank and relevance
    (negative = relevant pages rank higher), P@1 of the original order, the
    base rate (share of relevant pages) and the expected P@1 of a random order
    (mean over queries of relevant/pages).
    """
    from scipy.stats import kendalltau, spearmanr

    by_q: dict[str, list[SearchResult]] = {}
    for r in serp:
        by_q.setdefault(r.qid, []).append(r)
    ranks, rels, p1, random_p1 = [], [], [], []
    for qid, rows in sorted(by_q.items()):
        rows.sort(key=lambda r: r.rank)
        labels = [int(qrels.get(qid, {}).get(r.url, 0) > 0) for r in rows]
        ranks += [r.rank for r in rows]
        rels += labels
        p1.append(labels[0])
        random_p1.append(sum(labels) / len(labels))
    rho = spearmanr(ranks, rels).statistic if len(set(rels)) > 1 else 0.0
    tau = kendalltau(ranks, rels).statistic if len(set(rels)) > 1 else 0.0
    n = max(1, len(p1))
    return {
        "queries": len(p1), "pages": len(rels), "relevant": sum(rels),
        "base_rate": round(sum(rels) / max(1, len(rels)), 4),
        "spearman_rho": round(float(rho), 4), "kendall_tau": round(float(tau), 4),
        "p_at_1": round(sum(p1) / n, 4), "random_p_at_1": round(sum(random_p1) / n, 4),
    }
