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

Another device's part of the page ("On your Mac, ...") leaves the steps too
(:func:`phone_part`): the phone cannot follow it.

What is taken out is kept, in page order, as context (``Extraction.context``):
the agent may read it, it never acts on it. A step that also holds an action
("If a pop-up appears, tap OK") stays whole.

Both extractors end with :func:`finish_steps`, so a step list reads the same
whether the heuristic or an LLM picked it.
"""

from __future__ import annotations

import re

from extraction.blocks import is_imperative
from verirank_core.platforms import COMPUTER_WORDS
from verirank_core.text import words

__all__ = ["finish_steps", "device_note", "dedupe", "tidy_steps", "phone_part", "is_outcome", "is_aside"]

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


#: a section for a device that is not the phone: "On your Mac, choose Apple menu > ...",
#: "On your computer, go to voice.google.com"
_OTHER_DEVICE = re.compile(
    r"^\W*(?:on|from|using)\s+(?:your|a|the)\s+(?:" + COMPUTER_WORDS + r"|"
    r"(?:apple\s+|galaxy\s+|smart\s*)?watch|(?:smart\s+|apple\s+|fire\s+|android\s+)?tv|"
    r"headset|console|web\s+browser)\b[^,.;:!?]{0,40},", re.I)
#: a section back on the phone: "On your Android phone, tap the link."
_THIS_DEVICE = re.compile(r"^\W*(?:on|from|using)\s+(?:your|a|the)\s+(?:android|iphone|ipad|phone|smartphone|tablet|"
                          r"mobile|device)\b", re.I)


def phone_part(steps: list[str]) -> tuple[list[str], list[str]]:
    """(the phone's steps, another device's steps among them).

    Help pages often tell a part for another device ("On your Mac, choose Apple
    menu > System Settings ..."). The device can follow only its own part: another
    device's section runs from its first sentence, after at least one instruction
    for the phone, up to a sentence back on the phone ("On your Android phone, ...").
    """
    own: list[str] = []
    other: list[str] = []
    told = away = False  # told: an instruction for the phone came before
    for step in steps:
        if told and _OTHER_DEVICE.match(step):
            away = True
        elif _THIS_DEVICE.match(step):
            away = False
        if away:
            other.append(step)
        else:
            own.append(step)
            told = told or is_imperative(step)
    return own, other


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


def dedupe(steps: list[str]) -> list[str]:
    """Steps without repeats (a step shown twice, as a caption and as text, is one step).

    A short step may come back later ("Tap Next" on two screens of a wizard); only
    a step repeated right away, or a longer one repeated anywhere, is a duplicate.
    """
    seen: set[tuple[str, ...]] = set()
    out: list[str] = []
    for s in steps:
        key = tuple(words(s))
        if key and ((out and key == tuple(words(out[-1]))) or (key in seen and len(key) >= 4)):
            continue
        seen.add(key)
        out.append(s)
    return out


def finish_steps(steps: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(steps, context, another device's steps): the last pass over any extractor's chosen steps.

    Another device's part leaves first, then repeats; then outcomes ending an
    action's step and trailing asides move to the context.
    """
    own, elsewhere = phone_part(steps)
    kept, context = tidy_steps(dedupe(own))
    return kept, context, elsewhere


def device_note(elsewhere: list[str]) -> str:
    """The extractor's note for another device's steps left out ("" when none were)."""
    return f"left out {len(elsewhere)} step(s) for another device ({elsewhere[0][:40]!r} ...)" if elsewhere else ""
