"""Records of stage 3.

=====================  =====================  ==========
file                   record                 key
=====================  =====================  ==========
``reranked.jsonl``     :class:`RankedItem`    (qid, url)
=====================  =====================  ==========

``features.parquet`` is a table, not records: it has one column per feature (``F1`` ... ``F18`` plus any
extra features) beside qid, url, rank, title and verified. The same rows are
written as svmlight (``features.svmlight`` + ``features.qids.tsv``) for LTR tools.
"""

from __future__ import annotations

from typing import ClassVar, Optional

from pydantic import Field

from verirank_core.records import Record


class RankedItem(Record):
    key_fields: ClassVar[tuple[str, ...]] = ("qid", "url")

    qid: str
    rank: int = Field(ge=1)
    url: str
    title: str = ""
    score: float
    verified: bool
    f4: float = 0.0
    original_rank: Optional[int] = None
    #: a short human-readable verification summary
    summary: str = ""
