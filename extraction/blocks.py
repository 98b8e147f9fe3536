"""Find candidate instruction blocks in a cleaned page's snippets.

A block is a run of snippets that could be the page's steps:

``list``
    the items of one ``ol``/``ul`` (nested items are added when they read as
    actions: "Tap Network" inside "Go to Settings");
``numbered``
    "Step 1: ..." / "1. ..." headings, paragraphs or ``<br>``-separated
    lines numbered 1, 2, 3...;
``breadcrumb``
    a menu path in one sentence, "Settings > Display > Dark theme" (also
    ``→ -> » ›``), split into one step per part;
``imperative``
    consecutive paragraphs that each start with an action verb, or one
    paragraph made of two or more such sentences.

Each block carries the heading text it sits under (the nearest heading or
"label:" line before it), which the scorer compares with the query. This
module only looks at text and XPaths; scoring lives in ``heuristic.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional, Sequence

from verirank_core.extraction_records import Snippet

__all__ = ["Block", "find_blocks", "is_imperative", "strip_marker", "describes_task", "IMPERATIVE_VERBS",
           "UI_WORDS", "heading_context"]

#: verbs that start an instruction ("Tap Display", "Turn on Wi-Fi")
IMPERATIVE_VERBS = frozenset("""
tap double-tap long-press click open go select turn toggle scroll enter press choose swipe touch hold
type find navigate head launch pick switch enable disable set check uncheck add remove delete clear
drag hit make wait restart reboot power connect pair follow confirm save slide move change use visit
search copy paste allow grant download install uninstall update sign log create edit rename return
close exit expand collapse unlock lock activate deactivate start stop tick untick mark pull drop
insert plug unplug wipe dry keep look locate access customize customise adjust tweak reset
""".split())

#: nouns of a phone's UI; a step that names one reads like an instruction
UI_WORDS = frozenset("""
settings setting menu button toggle switch icon app apps screen display option options tab notification
notifications bluetooth wi-fi wifi network internet bar panel gear slider checkbox keyboard dialog
home back page field system account storage battery sound volume camera gallery photos
""".split())

_DISCOURSE = re.compile(r"^(?:(?:first|next|then|finally|now|lastly|afterwards|after that|once done|"
                        r"to do this|also|and|or|simply|just)\b[\s,:]*)+", re.I)
_MARKER = re.compile(r"^\s*(?:step\s*(\d{1,2})\b\s*[:.)\-–—]?|(\d{1,2})\s*[.):]\s+(?=\S))\s*", re.I)
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BREADCRUMB_SEP = re.compile(r"\s*(?:>|→|->|»|›|⇒|=>)\s*")
_LEAD_IN = re.compile(r"\b(?:go to|goes to|navigate to|head to|head over to|open|tap|select|choose|"
                      r"click|visit|find|under|in)\s+(?:the\s+)?(?:app\s+)?$", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'])")


@dataclass
class Block:
    kind: str
    #: the steps, in page order, as page text (markers like "Step 1:" removed)
    steps: list[str]
    #: snippet positions the block spans (first and last used for context and order)
    positions: list[int]
    #: the nearest heading (or "label:" line) before the block
    heading: str = ""
    #: all enclosing headings, outermost first
    heading_path: list[str] = field(default_factory=list)
    #: a sentence right before the block ("On most Android phones:"), if short
    lead: str = ""
    #: how-to-ness fixed by the finder (a menu path told as an aside reads less
    #: like instructions than its "Tap ..." steps suggest); None: judge the steps
    howto_hint: Optional[float] = None
    #: numbered headings without the word "step" ("1. Use Digital Wellbeing"): the
    #: shape of a listicle of alternatives as much as of one sequence
    numbered_headings: bool = False

    @property
    def first(self) -> int:
        return self.positions[0]


# --- small text tests ----------------------------------------------------------------


def strip_marker(text: str) -> tuple[Optional[int], str]:
    """("Step 2: Tap Display") -> (2, "Tap Display"); unnumbered text -> (None, text)."""
    m = _MARKER.match(text)
    if not m:
        return None, text.strip()
    number = int(m.group(1) or m.group(2))
    return number, text[m.end():].strip()


def _first_word(text: str) -> str:
    text = _DISCOURSE.sub("", strip_marker(text)[1])
    m = _WORD.search(text[:40])
    return m.group(0).lower() if m and m.start() <= 3 else ""


def is_imperative(text: str) -> bool:
    """Does ``text`` start like an instruction ("Tap ...", "Then, open ...")?"""
    word = _first_word(text)
    if word in IMPERATIVE_VERBS:
        return True
    # "Long press", "Double tap", "Swipe-up"
    return "-" in word and word.split("-")[-1] in IMPERATIVE_VERBS


def describes_task(heading: str) -> bool:
    """Does a heading name a task ("Turn on dark theme", "How to clean your screen")?

    Headings such as "Gboard 7", "On Android" or "This is how I did it" do not:
    for those the page title says what the block is about.
    """
    return is_imperative(heading) or bool(re.search(r"\bhow (?:to|do you|can you)\b", heading, re.I))


def _is_label(s: Snippet) -> bool:
    """A short line ending in ':' that introduces what follows ("On iPhone:")."""
    return s.text.endswith(":") and len(s.text.split()) <= 10


# --- heading context ----------------------------------------------------------------


def heading_context(snippets: Sequence[Snippet]) -> list[list[str]]:
    """For each snippet, the headings that enclose it (outermost first)."""
    out: list[list[str]] = []
    stack: list[tuple[int, str]] = []  # (level, text)
    for s in snippets:
        out.append([t for _, t in stack])
        level = _HEADINGS.get(s.tag)
        if level is None and _is_label(s):
            level = 7
        if level is not None:
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, s.text.rstrip(":")))
    return out


# --- the block finders -----------------------------------------------------------------


def _parent(xpath: str) -> str:
    return xpath.rsplit("/", 1)[0]


def _list_blocks(snippets: Sequence[Snippet]) -> list[Block]:
    # the first text run of each li, grouped by the list (parent XPath) holding it
    first_run: dict[str, int] = {}
    for i, s in enumerate(snippets):
        if s.tag == "li":
            first_run.setdefault(s.xpath, i)
    lists: dict[str, list[int]] = {}
    for xpath, i in first_run.items():
        lists.setdefault(_parent(xpath), []).append(i)
    blocks = []
    for parent, items in lists.items():
        items.sort()
        positions: list[int] = []
        for i in items:
            positions.append(i)
            # nested action items inside this li ("Go to Settings:" > "Tap Network")
            prefix = snippets[i].xpath + "/"
            nested = [j for x, j in first_run.items() if x.startswith(prefix)]
            if nested and all(is_imperative(snippets[j].text) for j in nested):
                positions.extend(sorted(nested))
        steps = [strip_marker(snippets[i].text)[1] for i in positions]
        blocks.append(Block("list", steps, positions))
    return blocks


def _numbered_blocks(snippets: Sequence[Snippet]) -> list[Block]:
    blocks: list[Block] = []
    current: list[tuple[int, str]] = []
    expected = 1

    def close() -> None:
        if len(current) >= 2:
            positions = [i for i, _ in current]
            headings = all(snippets[i].tag in _HEADINGS and not snippets[i].text.lower().lstrip().startswith("step")
                           for i in positions)
            blocks.append(Block("numbered", [t for _, t in current], positions, numbered_headings=headings))
        current.clear()

    for i, s in enumerate(snippets):
        if s.tag == "li":
            continue
        number, rest = strip_marker(s.text)
        if number is None:
            continue
        if number == 1 and current:
            close()
        if number == 1 or number == expected:
            if not rest and i + 1 < len(snippets):  # a bare "Step 1" heading: the step follows
                rest = snippets[i + 1].text
            if rest:
                current.append((i, rest))
                expected = number + 1
        else:
            close()
            expected = 1
    close()
    return blocks


def _split_breadcrumb(text: str) -> Optional[tuple[list[str], bool]]:
    """"Go to Settings > Display > Dark theme and turn it on." -> (steps, told as an action?)."""
    parts = _BREADCRUMB_SEP.split(text)
    if len(parts) < 2:
        return None
    head, middle, tail = parts[0], parts[1:-1], parts[-1]
    # the first part: the words after the lead-in ("go to"), at most four of them
    words = head.rstrip(" :,").split()
    start = max(0, len(words) - 4)
    for cut in range(len(words) - 1, -1, -1):
        if _LEAD_IN.search(" ".join(words[:cut]) + " "):
            start = cut
            break
    lead_in = " ".join(words[:start])
    first = " ".join(words[start:]).strip(" \"'“”")
    verb_match = _LEAD_IN.search(lead_in + " ")
    imperative_lead = bool(verb_match) and verb_match.group(0).split()[0].lower() not in ("in", "under")
    # the last part ends where the sentence goes on ("and turn it on", ", then")
    last = re.split(r"\s+(?:and|to|then|or|if|where|which)\s+|[,.;:!?()]", tail, maxsplit=1)[0]
    path = [first] + [p.strip() for p in middle] + [last.strip(" \"'“”")]
    if any(not p or len(p.split()) > 6 for p in path):
        return None
    # a two-part path counts only after an action ("Open Settings > Display");
    # "I looked in Settings > Connections" is a story, not an instruction
    if len(path) < 3 and not imperative_lead:
        return None
    verb = verb_match.group(0).strip() if imperative_lead else "Open"
    verb = verb[0].upper() + verb[1:]
    return [f"{verb} {path[0]}"] + [f"Tap {p}" for p in path[1:]], imperative_lead


def _breadcrumb_blocks(snippets: Sequence[Snippet]) -> list[Block]:
    blocks = []
    for i, s in enumerate(snippets):
        if not _BREADCRUMB_SEP.search(s.text):
            continue
        for sentence in _SENTENCE.split(s.text):
            found = _split_breadcrumb(sentence)
            if found:
                steps, told_as_action = found
                blocks.append(Block("breadcrumb", steps, [i], howto_hint=1.0 if told_as_action else 0.6))
    return blocks


def _imperative_blocks(snippets: Sequence[Snippet]) -> list[Block]:
    blocks = []
    run: list[int] = []

    def close() -> None:
        if len(run) >= 2:
            blocks.append(Block("imperative", [strip_marker(snippets[i].text)[1] for i in run], list(run)))
        run.clear()

    for i, s in enumerate(snippets):
        if s.tag in _HEADINGS or s.tag == "li":
            close()
            continue
        if is_imperative(s.text):
            if run and _parent(snippets[run[-1]].xpath) != _parent(s.xpath) and snippets[run[-1]].xpath != s.xpath:
                close()
            run.append(i)
        else:
            close()
        # one paragraph of several instructions: "Open Settings. Tap Display. Turn on Dark theme."
        sentences = [t for t in _SENTENCE.split(s.text) if t.strip()]
        if len(sentences) >= 2 and sum(is_imperative(t) for t in sentences) >= 2:
            steps = [t for t in sentences if is_imperative(t)]
            blocks.append(Block("imperative", steps, [i]))
    close()
    return blocks


def find_blocks(snippets: Sequence[Snippet]) -> list[Block]:
    """Every candidate block of the page, each with its heading context, in page order."""
    blocks = (_list_blocks(snippets) + _numbered_blocks(snippets)
              + _breadcrumb_blocks(snippets) + _imperative_blocks(snippets))
    context = heading_context(snippets)
    for b in blocks:
        path = context[b.first]
        b.heading_path = path
        b.heading = path[-1] if path else ""
        prev = b.first - 1
        if prev >= 0 and snippets[prev].tag not in _HEADINGS and len(snippets[prev].text.split()) <= 25:
            b.lead = snippets[prev].text
    blocks.sort(key=lambda b: (b.first, b.kind))
    return blocks
