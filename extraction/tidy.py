"""Tidy a chosen block's steps: what names no action leaves the steps and becomes context.

The agent acts on the steps it is given, so what they hold must not mislead it:

* trailing notes, tips and optional extras ("Note: ...", "Tip: ...",
  "Optionally, ...", "(Optional) ...", a crawl's "Advertisement") are not the
  task's steps;
* an outcome sentence ending a step that starts with an action ("Tap Reset.
  A confirmation message will appear.") tells what happens, not what to do;
  read as part of the action, a target named in it would mislead the agent.

An outcome sentence that stands as a step of its own ("Your TV should now
start mirroring.") stays: it is a sentence of the page's steps as a person
reads them (real-dev's labels keep such sentences, and dropping them cost a
twentieth of the texts in every structure), and stage 2 parses it to no
intent, so the agent does nothing for it and the judge does not count it.

What is taken out is kept, in page order, as context (``Extraction.context``):
the agent may read it, it never acts on it. A step that also holds an action
("If a pop-up appears, tap OK") stays whole.
"""

from __future__ import annotations

import re

from extraction.blocks import is_imperative

__all__ = ["tidy_steps", "is_outcome", "is_aside"]

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])")
#: notes, tips and extras that follow the steps
_ASIDE = re.compile(r"^\W*(?:notes?|tips?|warning|caution|important|optional(?:ly)?|advertisement|pro tip|"
                    r"bonus|related|see also|read more|also read)\b", re.I)
#: what happens after a step: something appears, opens or starts
_OUTCOME = re.compile(
    r"\b(?:will|should|may|might|would|can)\s+(?:now\s+|then\s+|soon\s+)?(?:appear|pop up|open(?: up)?|show up|"
    r"display|begin|start|restart|reboot|load|be (?:displayed|shown|enabled|disabled|turned (?:on|off)|saved|"
    r"applied|removed|prompted|asked|taken|redirected))\b|"
    r"\b(?:appears|pops up|opens up|is displayed|are displayed|is shown|are shown|will be shown|shows up)\b",
    re.I)


def is_aside(step: str) -> bool:
    """A note, tip or optional extra ("Note: ...", "Optionally, ...")."""
    return bool(_ASIDE.match(step))


def is_outcome(sentence: str) -> bool:
    """A sentence that tells what happens and asks for nothing ("A warning message will appear.")."""
    if is_imperative(sentence) or not _OUTCOME.search(sentence):
        return False
    # "If a pop-up appears, tap OK": an action after the condition
    return not any(is_imperative(part) for part in re.split(r"[,;:]\s*", sentence)[1:])


def tidy_steps(steps: list[str]) -> tuple[list[str], list[str]]:
    """(steps, context): outcomes ending an action's step and trailing asides moved out of ``steps``."""
    kept: list[str] = []
    context: list[str] = []
    for step in steps:
        sentences = [t for t in _SENTENCE.split(step.strip()) if t.strip()]
        # an outcome ending a step that starts with an action: "Tap Reset. A message will appear."
        cut = len(sentences)
        while cut > 1 and is_outcome(sentences[cut - 1]):
            cut -= 1
        if cut < len(sentences) and is_imperative(sentences[0]):
            context.extend(sentences[cut:])
            step = " ".join(sentences[:cut])
        kept.append(step)
    # notes and extras after the last step
    end = len(kept)
    while end > 0 and is_aside(kept[end - 1]):
        end -= 1
    if end == 0:  # nothing but asides: they are what the page offers, leave them
        return kept, context
    context.extend(kept[end:])
    return kept[:end], context
