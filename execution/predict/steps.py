"""Read one instruction step as a short list of intents.

``parse_step("Go to Settings > Display > Dark theme")`` ->
``[open Settings, tap Display, tap Dark theme]``;
``parse_step("Scroll down and tap About phone")`` -> ``[scroll down, tap About phone]``;
``parse_step("Turn on Dark theme")`` -> ``[toggle Dark theme on]``.

The parser is deliberately plain: a table of verb phrases, quotes for
literal values, ``>`` for paths, and a split on "and"/"then"/sentences when
a verb follows. A step with no verb we know (``"Dark mode is now on."``) is
*informational* and parses to no intent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, Optional

__all__ = ["Intent", "parse_step", "parse_step_in_context", "parse_query", "COMMITTING_KINDS"]

Kind = Literal[
    "open", "tap", "long_press", "toggle", "set", "select", "type",
    "scroll", "back", "home", "enter",
]

#: intents that change state rather than navigate: a how-to normally ends with one
COMMITTING_KINDS = frozenset({"toggle", "set", "select", "type"})


@dataclass(frozen=True, slots=True)
class Intent:
    kind: Kind
    target: Optional[str] = None
    value: Optional[str] = None
    #: toggle: True = on, False = off, None = flip
    state: Optional[bool] = None
    direction: Optional[Literal["up", "down"]] = None
    #: type: press enter after typing ("search for X")
    submit: bool = False
    #: type: the value names a credential ("your password") rather than a literal
    credential: Optional[str] = None

    def describe(self) -> str:
        parts = [self.kind]
        if self.target:
            parts.append(repr(self.target))
        if self.value is not None:
            parts.append(f"value={self.value!r}")
        if self.state is not None:
            parts.append("on" if self.state else "off")
        if self.direction:
            parts.append(self.direction)
        return " ".join(parts)


# --- verb table (longest phrases first) -------------------------------------------

_VERBS: list[tuple[str, str, Optional[bool]]] = [
    ("press and hold", "long_press", None), ("tap and hold", "long_press", None),
    ("long press on", "long_press", None), ("long-press on", "long_press", None),
    ("long press", "long_press", None), ("long-press", "long_press", None),
    ("turn on", "toggle", True), ("turn off", "toggle", False),
    ("switch on", "toggle", True), ("switch off", "toggle", False),
    ("toggle on", "toggle", True), ("toggle off", "toggle", False),
    ("flip on", "toggle", True), ("flip off", "toggle", False),
    ("enable", "toggle", True), ("disable", "toggle", False),
    ("activate", "toggle", True), ("deactivate", "toggle", False),
    ("uncheck", "toggle", False), ("untick", "toggle", False), ("tick", "toggle", True),
    ("toggle", "toggle", None), ("turn", "toggle", None),
    ("set", "set", None), ("change", "set", None), ("adjust", "set", None),
    ("search for", "type", None), ("type in", "type", None), ("type", "type", None),
    ("enter", "type", None), ("input", "type", None), ("write", "type", None),
    ("fill in", "type", None),
    ("select", "select", None), ("choose", "select", None), ("pick", "select", None),
    ("press the home button", "home", None), ("tap the home button", "home", None),
    ("press the back button", "back", None), ("tap the back button", "back", None),
    ("tap the back arrow", "back", None), ("go back", "back", None), ("press back", "back", None), ("tap back", "back", None),
    ("navigate back", "back", None), ("return to the previous screen", "back", None),
    ("go to the home screen", "home", None), ("go home", "home", None),
    ("press home", "home", None), ("return home", "home", None),
    ("press enter", "enter", None), ("hit enter", "enter", None), ("tap enter", "enter", None),
    ("scroll down", "scroll", None), ("scroll up", "scroll", None),
    ("swipe up", "scroll", None), ("swipe down", "scroll", None), ("scroll", "scroll", None),
    ("open up", "open", None), ("open", "open", None), ("launch", "open", None),
    ("start", "open", None), ("run", "open", None),
    ("go to", "tap", None), ("go into", "tap", None), ("navigate to", "tap", None),
    ("head to", "tap", None), ("head over to", "tap", None), ("move to", "tap", None),
    ("tap on", "tap", None), ("click on", "tap", None), ("press on", "tap", None),
    ("tap", "tap", None), ("click", "tap", None), ("press", "tap", None), ("hit", "tap", None),
    ("touch", "tap", None), ("access", "tap", None), ("visit", "tap", None),
    ("find", "tap", None), ("locate", "tap", None), ("look for", "tap", None),
    ("check", "tap", None), ("view", "tap", None), ("see", "tap", None), ("save", "tap", None),
]
_VERBS.sort(key=lambda v: -len(v[0]))
_VERB_RE = re.compile(
    r"^(?:" + "|".join(re.escape(v) for v, _, _ in _VERBS) + r")\b", re.IGNORECASE
)
_VERB_KIND = {v: (k, s) for v, k, s in _VERBS}

_LEAD_RE = re.compile(
    r"^(?:(?:step\s*\d+\s*[:.)-]?)|(?:\d+\s*[.):-])|[-*•·]|(?:now|then|next|finally|first|lastly|also|"
    r"simply|just|please|afterwards|after that|once there|once (?:it|this) (?:opens|is open)|"
    r"(?:under|within|inside) [^,]{1,40},|"
    r"you (?:can|need to|should|must|will need to|have to|may)|"
    r"(?:on|in|from) (?:the|your) (?:home screen|app drawer|next screen|screen|menu|list)),?)\s*",
    re.IGNORECASE,
)
_QUOTE_RE = re.compile(r"[\"“”]([^\"“”]{1,80})[\"“”]|(?<![A-Za-z])['‘’]([^'‘’]{1,80})['‘’](?![A-Za-z])")
_PATH_SPLIT_RE = re.compile(r"\s*(?:>|→|->|»|›)\s*")
_CLAUSE_SPLIT_RE = re.compile(r"\s*(?:;|,?\s+and then\s+|,\s*then\s+|\s+then\s+|(?<=[a-z0-9)\"'’”])\.\s+(?=[A-Z]))\s*")
_AND_RE = re.compile(r",?\s+and\s+|,\s+", re.IGNORECASE)
_INFO_RE = re.compile(
    r"^(?:this|that|it|you(?:'ll| will| should| can now| are| now)|your|the (?:phone|device|screen|app) will|"
    r"note|tip|done|that's it|congratulations|now the|now your|if |when |once |wait)",
    re.IGNORECASE,
)
_TRAILING_NOISE_RE = re.compile(
    r"\s+(?:(?:at|near|on|in|from|under) (?:the )?(?:top|bottom|list|menu|screen|page|right|left|"
    r"corner|top right|top left|bottom right|bottom left|upper right|lower right)(?: (?:of|on) the (?:screen|page|list|menu))?|"
    r"on (?:your|the) (?:phone|device|screen|home screen)|from the (?:list|menu|options)|"
    r"in (?:the )?settings|if (?:it is|it's) not already (?:on|off|enabled|disabled)|"
    r"to (?:open|access|see|view|continue|proceed|confirm)(?: it| them| the [a-z ]+)?)$",
    re.IGNORECASE,
)
_GENERIC_TAIL_RE = re.compile(
    r"\s+(?:option|options|button|menu|tab|icon|item|entry|toggle|switch|setting|section|link|app|application|page|screen)$",
    re.IGNORECASE,
)
_GENERIC_HEAD_RE = re.compile(
    r"^(?:the |a |an |your |on |onto |into |to |at )+|^(?:the )?(?:switch|toggle|option|button|checkbox|box) (?:next to|for|beside|labell?ed|called|named) (?:the )?",
    re.IGNORECASE,
)
_TURN_SUFFIX_RE = re.compile(r"\s+(?:to )?(?:turn (?:it |this |them )?(on|off)|(enable|disable) it)$", re.IGNORECASE)
#: "from the list" names no control
_GENERIC_PLACES = {"list", "menu", "options", "screen", "page", "pop-up", "popup", "dropdown", "drop-down", "dialog", "following"}
_CREDENTIALS = (
    ("password", "password"), ("passcode", "password"), ("pin", "pin"),
    ("e-mail", "email"), ("email", "email"), ("username", "username"), ("user name", "username"),
    ("phone number", "phone"),
)


def _clean_target(text: str) -> Optional[str]:
    """Strip articles, filler and generic nouns; keep the words a control would show."""
    t = text.strip().strip(" .,:;!")
    t = re.sub(r"\s*\([^)]*\)", "", t)  # "(factory reset)" explains, it is not a label
    for _ in range(3):
        before = t
        t = _TRAILING_NOISE_RE.sub("", t).strip(" .,:;!")
        t = _GENERIC_HEAD_RE.sub("", t).strip()
        stripped = _GENERIC_TAIL_RE.sub("", t).strip()
        if stripped:
            t = stripped
        if t == before:
            break
    t = t.strip(" .,:;!\"'“”‘’")
    return t or None


def _quoted(text: str) -> list[str]:
    return [a or b for a, b in _QUOTE_RE.findall(text)]


def _credential(text: str) -> Optional[str]:
    low = text.lower()
    for word, name in _CREDENTIALS:
        if re.search(rf"\b{re.escape(word)}\b", low):
            return name
    return None


def _split_clauses(step: str) -> list[str]:
    clauses: list[str] = []
    for part in _CLAUSE_SPLIT_RE.split(step):
        part = part.strip()
        if not part:
            continue
        # "X and tap Y": split on "and"/"," only where a verb follows
        pieces = _AND_RE.split(part)
        current = pieces[0]
        for piece in pieces[1:]:
            if _VERB_RE.match(_LEAD_RE.sub("", piece)):
                clauses.append(current)
                current = piece
            else:
                sep = " and " if not current.endswith(",") else " "
                current = f"{current}{sep}{piece}"
        clauses.append(current)
    return [c for c in clauses if c.strip(" .")]


def _strip_lead(text: str) -> str:
    for _ in range(4):
        new = _LEAD_RE.sub("", text, count=1).strip()
        if new == text:
            break
        text = new
    return text


def _parse_clause(clause: str, prev_kind: Optional[str], alone: bool = False) -> list[Intent]:
    text = _strip_lead(clause.strip().rstrip(".!"))
    if not text:
        return []
    m = _VERB_RE.match(text)
    if not m:
        if _INFO_RE.match(text):
            return []
        # a bare menu path or label ("Display > Dark theme", or "Dark theme" after "then")
        words = text.split()
        if _PATH_SPLIT_RE.search(text) or (prev_kind in ("tap", "select", "open") and len(words) <= 5) or (
            alone and len(words) <= 4 and text[:1].isupper()
        ):
            return [Intent("tap", t) for t in _path_targets(text)]
        return []
    verb = m.group(0).lower()
    kind, state = _VERB_KIND[verb]
    rest = text[m.end():].strip()
    quotes = _quoted(rest)

    if kind == "scroll":
        direction = "up" if ("up" in verb and "swipe" not in verb) or ("down" in verb and "swipe" in verb) else "down"
        if verb == "scroll" and re.match(r"^up\b", rest, re.IGNORECASE):
            direction = "up"
        target = re.sub(r"^(?:up|down)\b\s*", "", rest, flags=re.IGNORECASE)
        target = re.sub(r"^(?:to|until you (?:see|find)|and (?:find|look for))\s+", "", target, flags=re.IGNORECASE)
        target = re.sub(r"^(?:the )?(?:bottom|top)(?: of the (?:page|list|screen))?$", "", target, flags=re.IGNORECASE)
        return [Intent("scroll", _clean_target(target) if target else None, direction=direction)]
    if kind in ("back", "home", "enter"):
        return [Intent(kind)]
    if kind == "toggle":
        if verb == "turn":  # "turn X on"
            m2 = re.search(r"\s+(on|off)\b(.*)$", rest, re.IGNORECASE)
            if not m2:
                return [Intent("tap", t) for t in _path_targets(rest)] if rest else []
            state = m2.group(1).lower() == "on"
            rest = rest[: m2.start()]
        elif verb == "toggle" or verb.startswith("switch"):
            m2 = re.search(r"\s+(on|off)$", rest, re.IGNORECASE)
            if m2:
                state = m2.group(1).lower() == "on"
                rest = rest[: m2.start()]
        targets = _path_targets(quotes[0] if quotes and len(quotes) == 1 and ">" not in rest else rest)
        if not targets:
            return []
        return [Intent("tap", t) for t in targets[:-1]] + [Intent("toggle", targets[-1], state=state)]
    if kind == "set":
        m2 = re.search(r"\s+(?:to|as|at)\s+(.+)$", rest, re.IGNORECASE)
        if m2:
            value = quotes[-1] if quotes else _clean_target(m2.group(1))
            targets = _path_targets(rest[: m2.start()])
            if not targets:
                return [Intent("select", None, value=value)]
            return [Intent("tap", t) for t in targets[:-1]] + [Intent("set", targets[-1], value=value)]
        targets = _path_targets(rest)
        return [Intent("tap", t) for t in targets[:-1]] + ([Intent("set", targets[-1])] if targets else [])
    if kind == "type":
        submit = verb == "search for"
        m2 = re.search(r"\s+(?:in|into|inside|on|in the|into the)\s+(?:the\s+)?(.+)$", rest, re.IGNORECASE)
        target = _clean_target(m2.group(1)) if m2 else None
        value_text = rest[: m2.start()] if m2 else rest
        if quotes:
            value = quotes[0]
            cred = None
        else:
            cred = _credential(value_text)
            value = None if cred else _clean_target(value_text)
            if cred and target is None:
                target = cred
        if value is None and cred is None:
            return []
        return [Intent("type", target, value=value, submit=submit, credential=cred)]
    if kind == "select":
        m2 = re.search(r"\s+(?:as|for|in|under|from)\s+(?:the\s+|your\s+)?(.+)$", rest, re.IGNORECASE)
        where = _clean_target(m2.group(1)) if m2 else None
        if where and where.lower() in _GENERIC_PLACES:
            where = None
        if quotes:
            return [Intent("select", where, value=quotes[0])]
        if m2 and not _PATH_SPLIT_RE.search(rest):
            return [Intent("select", where, value=_clean_target(rest[: m2.start()]))]
        targets = _path_targets(rest)
        if not targets:
            return []
        return [Intent("tap", t) for t in targets[:-1]] + [Intent("select", None, value=targets[-1])]
    # open / tap / long_press
    m_turn = _TURN_SUFFIX_RE.search(rest)
    if m_turn and kind == "tap":
        word = (m_turn.group(1) or m_turn.group(2) or "").lower()
        targets = _path_targets(rest[: m_turn.start()])
        if targets:
            return [Intent("tap", t) for t in targets[:-1]] + [
                Intent("toggle", targets[-1], state=word in ("on", "enable"))
            ]
    if quotes and not _PATH_SPLIT_RE.search(rest):
        targets = [t for t in (_clean_target(q) for q in quotes[:1]) if t]
    else:
        targets = _path_targets(rest)
    if not targets:
        return [Intent("tap", "Save")] if verb == "save" else []
    if kind == "open":
        return [Intent("open", targets[0])] + [Intent("tap", t) for t in targets[1:]]
    if kind == "long_press":
        return [Intent("tap", t) for t in targets[:-1]] + [Intent("long_press", targets[-1])]
    first = "open" if verb in ("go to", "navigate to", "head to", "head over to") and len(targets) > 1 else "tap"
    return [Intent(first, targets[0])] + [Intent("tap", t) for t in targets[1:]]


def _path_targets(text: str) -> list[str]:
    parts = _PATH_SPLIT_RE.split(text) if _PATH_SPLIT_RE.search(text) else [text]
    return [t for t in (_clean_target(p) for p in parts) if t]


#: "... > Dark mode and turn it on": the pronoun names the previous target
_PRONOUNS = frozenset({"it", "this", "that", "them", "this option", "this setting"})


def _resolve_pronoun(intent: Intent, previous: list[Intent]) -> Intent:
    if intent.target is None or intent.target.lower() not in _PRONOUNS:
        return intent
    named = next((p.target for p in reversed(previous) if p.target and p.target.lower() not in _PRONOUNS), None)
    if named is None:
        return intent
    return Intent(intent.kind, named, intent.value, intent.state, intent.direction, intent.submit, intent.credential)


@lru_cache(maxsize=4096)
def _parse_cached(step: str) -> tuple[Intent, ...]:
    intents: list[Intent] = []
    prev_kind: Optional[str] = None
    clauses = _split_clauses(step.strip())
    for clause in clauses:
        got = _parse_clause(clause, prev_kind, alone=len(clauses) == 1)
        if got:
            prev_kind = got[-1].kind
        for intent in got:
            intents.append(_resolve_pronoun(intent, intents))
    return tuple(intents)


def parse_step(step: str) -> list[Intent]:
    """The intents of one instruction step, in order; empty for informational text."""
    return list(_parse_cached(step))


def parse_step_in_context(instructions: list[str], index: int) -> list[Intent]:
    """The intents of step ``index``; a leading "it" names the last target of an earlier step.

    ("Tap Dark mode." then "Turn it on." -> toggle 'Dark mode' on.)
    """
    intents = parse_step(instructions[index])
    if not intents or (intents[0].target or "").lower() not in _PRONOUNS:
        return intents
    for earlier in range(index - 1, -1, -1):
        previous = parse_step(instructions[earlier])
        if any(p.target for p in previous):
            return [_resolve_pronoun(i, previous) for i in intents]
    return intents


_QUERY_LEAD_RE = re.compile(
    r"^(?:how (?:to|do i|do you|can i|can you|should i)|ways to|steps to|guide to|i want to|help me)\s+",
    re.IGNORECASE,
)
_QUERY_TAIL_RE = re.compile(
    r"\s+(?:on|in|for|with|using|from) (?:an? |my |the |your )?(?:android|phone|iphone|samsung|pixel|device|"
    r"settings|tablet|galaxy|oneplus|xiaomi|huawei|motorola)\b.*$",
    re.IGNORECASE,
)
_QUERY_VERBS = {"see": "tap", "check": "tap", "find": "tap", "view": "tap", "show": "tap"}


def parse_query(query: str) -> list[Intent]:
    """A how-to query read as the intents it asks for ("how to turn on dark mode" -> toggle on)."""
    q = query.strip().rstrip("?").strip()
    q = _QUERY_LEAD_RE.sub("", q)
    for _ in range(2):
        q = _QUERY_TAIL_RE.sub("", q).strip()
    if not q:
        return []
    # "show battery percentage" asks for a switch to be on, "hide X" for it to be off
    m = re.match(r"^(show|display|hide)\s+(?:the\s+)?(.+)$", q, re.IGNORECASE)
    if m:
        return [Intent("toggle", _clean_target(m.group(2)), state=m.group(1).lower() != "hide")]
    return parse_step(q[0].upper() + q[1:])
