"""The one ordering rule of stage 3, and the run that writes an order down.

Every list verirank ranks is ordered the same way within each query:

1. ``tier`` ascending (verified-first puts verified pages in tier 0, the rest in tier 1);
2. ``score`` descending;
3. the original (search engine) rank ascending, so equal scores keep the original order.

:func:`positions` applies the rule; :func:`ranked_run` turns positions into the
scores of a TREC run (``n - rank + 1``) so that any TREC tool re-sorting by score
reads back exactly this order, not trec_eval's tie-break by doc id.
The rerank step, the fixed baseline rankers, the experiments and the export
all go through these two functions.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

__all__ = ["positions", "ranked_run"]


def positions(groups: Sequence, scores: Sequence[float], original_rank: Sequence[float],
              tier: Optional[Sequence[int]] = None) -> np.ndarray:
    """The 1-based position of every row within its query (``groups``) under the rule above."""
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    original_rank = np.asarray(original_rank, dtype=np.float64).reshape(-1)
    tier = np.zeros(len(scores), dtype=np.int64) if tier is None else np.asarray(tier, dtype=np.int64)
    codes = np.unique(np.asarray(groups).astype(str), return_inverse=True)[1].reshape(-1)
    if not (len(codes) == len(scores) == len(original_rank) == len(tier)):
        raise ValueError(f"{len(codes)} groups, {len(scores)} scores, {len(original_rank)} ranks, {len(tier)} tiers")
    order = np.lexsort((original_rank, -scores, tier, codes))  # the last key sorts first
    sorted_codes = codes[order]
    index = np.arange(len(order))
    starts_query = np.r_[True, sorted_codes[1:] != sorted_codes[:-1]] if len(order) else np.zeros(0, dtype=bool)
    first_of_query = np.maximum.accumulate(np.where(starts_query, index, 0)) if len(order) else index
    out = np.empty(len(order), dtype=np.int64)
    out[order] = index - first_of_query + 1
    return out


def ranked_run(qids: Sequence, docs: Sequence, ranks: Sequence[int]) -> dict[str, dict[str, float]]:
    """A TREC-style run ``qid -> {doc: score}`` whose scores reproduce ``ranks``: ``n - rank + 1``."""
    from ranking.metrics import run_from_scores

    qids = [str(q) for q in qids]
    sizes: dict[str, int] = {}
    for q in qids:
        sizes[q] = sizes.get(q, 0) + 1
    return run_from_scores(qids, [str(d) for d in docs],
                           [float(sizes[q] - int(r) + 1) for q, r in zip(qids, ranks, strict=True)])
