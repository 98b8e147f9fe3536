"""Where the answer starts when a block's steps end another task.

A help page's list sometimes holds another task before the answer: a beta sign-up whose last
step is "Go to Settings > General > Software Update". The agent would stop at the sign-up's
first step ("Open Safari ..."), so the steps start at the answer, when the answer says so
plainly:

* the first step naming the query's distinctive words as fully as any step does goes to the
  Settings app itself ("go to Settings", "Settings > ..."; not "Other call settings");
* two or more steps come before it;
* none of them opens Settings or goes through it toward the task: such steps are the answer's
  own way in;
* none of them names a query word that the answer's first step leaves out. "Open Chrome" before
  "Go to Settings > Advanced > Privacy" is the way into the query's app, whose settings these
  are ("privacy settings chrome android").

Rules that cut more were tried and left out. Each one gained texts on real-dev and real-dev2,
but when their cuts were read on ``../shared/real-text/``, most were wrong (docs/extraction.md,
"Fifteenth session").
"""

from __future__ import annotations

import re
from typing import AbstractSet

from verirank_core.text import terms

__all__ = ["answer_start"]

#: a way into the Settings app ("Open Settings", "tap the gear icon"); "Settings > X" goes through it
_INTO_SETTINGS = re.compile(r"\b(?:settings?|gear|cog)\b", re.IGNORECASE)
_THROUGH_SETTINGS = re.compile(r"\bsettings?\s*(?:>|→|»|›)", re.IGNORECASE)
#: a step that sends the reader to the Settings app itself ("go back to the Settings menu and ...",
#: "Go to Settings > General"), not to a screen named "... settings" ("Other call settings")
_GOES_TO_SETTINGS = re.compile(
    r"\b(?:go(?: back)? to|go into|open|opening|access|return to|head (?:back )?to|head into|launch|navigate to)"
    r"\s+(?:the\s+|your\s+)?(?:\w+'?s\s+|iphone\s+|android\s+)?settings\b|" + _THROUGH_SETTINGS.pattern,
    re.IGNORECASE)


def answer_start(steps: list[str], distinctive: AbstractSet[str]) -> int:
    """The index of the step where the answer starts (0: the steps are the answer from their start).

    ``distinctive``: the stems of the query's words that a task's own text must name.
    """
    named = [distinctive & set(terms(t)) for t in steps]
    most = max((len(n) for n in named), default=0)
    if not most:
        return 0
    first = next(i for i, n in enumerate(named) if len(n) == most)
    if first < 2 or not _GOES_TO_SETTINGS.search(steps[first]):
        return 0
    for text, n in zip(steps[:first], named):
        if _INTO_SETTINGS.search(text) and (n or not _THROUGH_SETTINGS.search(text)):
            return 0  # it opens Settings, or goes through it toward the task: the answer's way in
        if n - named[first]:
            return 0  # it names what the query asks and the answer leaves out: the query's app
    return first
