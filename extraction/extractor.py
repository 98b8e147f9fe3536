"""The interface every step extractor implements.

An extractor reads one cleaned page and answers with the page's steps for the
query, in page order, or with none and a reason. It never sees the network.
Grounding (``extraction/ground.py``) runs afterwards and is independent of
which extractor produced the steps.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Optional

from verirank_core.extraction_records import CleanedPage, Query


@dataclass
class ExtractorOutput:
    #: steps in page order; empty means "none"
    steps: list[str] = field(default_factory=list)
    #: why there are no steps (or a note about how they were found)
    reason: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: the platform the steps are written for ("android", "ios"), when the page says
    stated_platform: Optional[str] = None
    #: the phone maker the steps are written for ("samsung", "pixel", ...), when the page says
    stated_device: Optional[str] = None
    #: page text kept out of the steps but useful to whoever follows them: the heading the
    #: steps sit under, step headings, outcomes ending a step
    #: ("Tap Reset. A new screen appears.") and tips
    context: list[str] = field(default_factory=list)


class Extractor(ABC):
    #: registry name, e.g. ``heuristic`` or ``llm``
    name: str = ""

    @abstractmethod
    def extract(self, query: Query, page: CleanedPage) -> ExtractorOutput:
        """Return the page's steps for ``query``, or none with a reason."""
