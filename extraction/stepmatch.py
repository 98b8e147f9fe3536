"""The strict measure of an extraction: are the page's true steps found whole?

ROUGE-L between the extracted step list and the labelled step list, each
joined into one word sequence (lower-cased alphanumeric words):

* recall: the share of the labelled words found, in order, in the extracted
  text (the true steps are all there, none cut in half);
* precision: the share of the extracted words that belong to the true steps
  (not a different block that happens to contain them).

A page's steps are *found whole* when recall >= ``MIN_RECALL`` (0.8) and
precision >= ``MIN_PRECISION`` (0.5). The lenient measure is "any steps".
Used by the tests, Table 7 and the extraction benchmark.
"""

from __future__ import annotations

import re
from typing import Sequence

from extraction.ground import lcs_length

__all__ = ["MIN_RECALL", "MIN_PRECISION", "words", "step_match", "found_whole"]

MIN_RECALL = 0.8
MIN_PRECISION = 0.5
_WORD = re.compile(r"[^\W_]+")


def words(texts: Sequence[str]) -> list[str]:
    """Lower-case word tokens of a list of step texts (punctuation and markers dropped)."""
    return [w for t in texts for w in _WORD.findall(t.lower())]


def step_match(true_steps: Sequence[str], extracted: Sequence[str]) -> tuple[float, float]:
    """(recall, precision) of ROUGE-L of the extracted steps against the true steps."""
    ref, got = words(true_steps), words(extracted)
    lcs = lcs_length(ref, got)
    return (lcs / len(ref) if ref else 0.0), (lcs / len(got) if got else 0.0)


def found_whole(true_steps: Sequence[str], extracted: Sequence[str]) -> bool:
    recall, precision = step_match(true_steps, extracted)
    return recall >= MIN_RECALL and precision >= MIN_PRECISION
