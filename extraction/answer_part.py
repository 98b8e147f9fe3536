"""Which part of a block's steps answers the query, when the block tells another task too.

A help page's list often holds two tasks in a row: it pauses TalkBack with a gesture and then
turns it off in Settings, or sets a screen lock and then goes on to Smart Lock. A careful reader
follows the part that does what the query asks:

* **The goal step** is the first step that names the query's task as fully as any step does,
  preferring one that changes a state ("turn TalkBack off", "set up a screen lock") over one
  that only passes by ("display TalkBack controls").
* **Back to an earlier screen.** A step that returns to a screen named before the previous step
  ("On the Security screen, tap Smart Lock", "Go back to the Settings menu and ...") starts
  another task. The part holding the goal step is the answer. A step that names the screen just
  opened ("In the Mail screen, ...") goes on with the same task.
* **A fresh start in Settings.** A step that goes to Settings, after two or more steps that
  never opened it, starts the answer when the goal step is that step or comes after it: the
  steps before were another task (a beta sign-up, a gesture).

Steps that open Settings first are the answer's own way in and stay. Without a step naming the
task nothing is cut: the part cannot be told.
"""

from __future__ import annotations

import re
from typing import Optional

from verirank_core.text import stem, words

__all__ = ["answer_part", "goal_step", "GOES_TO_SETTINGS"]

#: a way into the Settings app ("Open Settings", "tap the gear icon"); "Settings > X" goes through it
_INTO_SETTINGS = re.compile(r"\b(?:settings?|gear|cog)\b", re.IGNORECASE)
_THROUGH_SETTINGS = re.compile(r"\bsettings?\s*(?:>|→|»|›)", re.IGNORECASE)
#: a step that sends the reader to the Settings app itself ("go back to the Settings menu and ...",
#: "Go to Settings > General"), not to a screen named "... settings" ("Other call settings")
GOES_TO_SETTINGS = re.compile(
    r"\b(?:go(?: back)? to|go into|open|opening|access|return to|head (?:back )?to|head into|launch|navigate to)"
    r"\s+(?:the\s+|your\s+)?(?:\w+'?s\s+|iphone\s+|android\s+)?settings\b|" + _THROUGH_SETTINGS.pattern,
    re.IGNORECASE)
#: a step that changes a state: what the query's goal step does, not a step passing by its name
_CHANGES_STATE = re.compile(
    r"\b(?:turn(?:ed|ing)?\s+(?:[\w/-]+\s+){0,3}?(?:on|off)\b|toggle|switch(?:ed)?\s+(?:it\s+)?(?:on|off)\b|"
    r"enable|disable|activate|deactivate|set\s+up|slide\s+the\s+switch|check\s+the\s+box|uncheck|tick)|"
    r"\b(?:on|off)\s*\.?$", re.IGNORECASE)
#: "Go back to the Settings menu and ...", "Return to the Downloads folder"
_BACK_TO = re.compile(r"^\W*(?:go back|return|navigate back|head back|back) to (?:the |your )?(.+?)"
                      r"(?:\s+(?:screen|menu|page|folder|app)\b|[,.]|\s+and\b|$)", re.IGNORECASE)
#: "On the Security screen, tap Smart Lock"
_ON_SCREEN = re.compile(r"^\W*(?:on|in|from) the (.+?) (?:screen|menu|page)\b", re.IGNORECASE)


def _stems(text: str) -> set[str]:
    return {stem(w) for w in words(text)}


def goal_step(steps: list[str], distinctive: set[str]) -> Optional[int]:
    """The step doing the query's task: the first naming its words as fully as any step does,
    preferring one that changes a state. None: no step names the task."""
    named = [len(distinctive & _stems(t)) for t in steps]
    if not named or not max(named):
        return None
    most = max(named)
    for i, (text, n) in enumerate(zip(steps, named)):
        if n == most and _CHANGES_STATE.search(text):
            return i
    return named.index(most)


def _returns_to_earlier_screen(steps: list[str], i: int) -> bool:
    """Step i goes back to a screen named before the previous step (not the one just opened)."""
    if i < 2:
        return False
    m = _BACK_TO.match(steps[i]) or _ON_SCREEN.match(steps[i])
    if not m:
        return False
    screen = _stems(m.group(1))
    return bool(screen) and not screen <= _stems(steps[i - 1]) and any(screen <= _stems(t) for t in steps[:i - 1])


def _fresh_start(steps: list[str], goal: int, distinctive: set[str]) -> int:
    """Where the answer starts in Settings after another task's steps (0: from the start)."""
    for s in range(goal, 1, -1):
        if GOES_TO_SETTINGS.search(steps[s]):
            for text in steps[:s]:
                # an earlier way in, or a path through Settings toward the task: the answer's own start
                if _INTO_SETTINGS.search(text) and (distinctive & _stems(text) or not _THROUGH_SETTINGS.search(text)):
                    return 0
            return s
    return 0


def answer_part(steps: list[str], distinctive: set[str]) -> tuple[int, int]:
    """(start, end): the slice of ``steps`` that answers the query (``(0, len(steps))``: all)."""
    goal = goal_step(steps, distinctive)
    if goal is None:
        return 0, len(steps)
    start, end = 0, len(steps)
    for i in range(len(steps)):
        if _returns_to_earlier_screen(steps, i):
            if i <= goal:
                start = i
            else:
                end = i
                break
    part = steps[start:end]
    return start + _fresh_start(part, goal - start, distinctive), end
