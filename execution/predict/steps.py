"""Read one instruction step as a short list of intents.

``parse_step("Go to Settings > Display > Dark theme")`` ->
``[open Settings, tap Display, tap Dark theme]``;
``parse_step("Scroll down and tap About phone")`` -> ``[scroll down, tap About phone]``;
``parse_step("Turn on Dark theme")`` -> ``[toggle Dark theme on]``.

The parser is deliberately plain: a table of verb phrases, quotes for
literal values, ``>`` for paths, and a split on "and"/"then"/sentences when
a verb follows (the tables, text repairs and splitting are in ``step_text.py``). A step with no verb we know (``"Dark mode is now on."``) is
*informational* and parses to no intent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal, Optional

from execution.predict.step_text import (
    _APP_ROOT_RE, _APPISH, _CONDITION_RE, _GENERIC_CONTROLS, _GENERIC_PLACES, _HOME_RE, _INFO_RE, _LAUNCHER_RE, _PATH_SPLIT_RE,
    _PRONOUNS, _PURPOSE_RE, _SEE_RE, _SO_RE, _TURN_PURPOSE_RE, _TURN_SUFFIX_RE, _VERB_KIND, _VERB_RE,
    _alternatives, _clean_target, _comma_path, _credential, _is_accessory_step, _is_hardware, _quoted, _repair,
    _sentences, _split_clauses, _strip_lead_keep_place, _strip_prefixes, slider_step,
)

__all__ = ["Intent", "parse_step", "parse_step_in_context", "parse_query", "COMMITTING_KINDS"]

Kind = Literal[
    "open", "tap", "long_press", "toggle", "set", "select", "type",
    "scroll", "back", "home", "enter",
    # the phone's own UI: the Menu key, the notification shade (quick settings), the app drawer
    "menu", "shade", "drawer",
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
    #: "Tap Security or Security & location": every name the page offers, ``target`` first
    alternatives: tuple[str, ...] = ()
    #: "If you don't see X, tap Y": the condition as written ("you don't see X")
    condition: Optional[str] = None
    #: the page names a control we cannot read ("Tap ." where an icon was an image)
    unnamed: bool = False
    #: the page names a kind of item, not an item: "Tap the app you want", "Select a preference: A B C"
    placeholder: bool = False
    #: the options a placeholder choice lists, as written ("None Swipe Pattern PIN Password")
    choices: Optional[str] = None
    #: where the step happens: "home" (outside the app: home screen, app drawer, quick settings), or
    #: "app" (the app's own home screen: "In Settings, tap Display", the root of "Settings > Display")
    place: Optional[str] = None

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
        if self.alternatives:
            parts.append(f"alternatives={list(self.alternatives)!r}")
        if self.condition:
            parts.append(f"if={self.condition!r}")
        if self.unnamed:
            parts.append("unnamed")
        if self.placeholder:
            parts.append("placeholder")
        if self.choices:
            parts.append(f"choices={self.choices!r}")
        if self.place:
            parts.append(f"at={self.place}")
        return " ".join(parts)


def _state_word(word: str) -> Optional[bool]:
    w = word.lower()
    if w in ("on", "enabled", "checked", "green", "blue", "ticked", "selected", "allowed", "active"):
        return True
    if w in ("off", "disabled", "unchecked", "grey", "gray", "cleared", "unticked", "inactive"):
        return False
    return None


_ENSURE_RES = [
    # "you have Location History turned on"
    re.compile(r"^(?:that )?you have (?P<t>.+?) (?:turned |switched |set to )?(?P<s>on|off|enabled|disabled)\b", re.IGNORECASE),
    # "the toggle is in the on position", "the switch next to Contacts is on/green", "NFC is turned on"
    re.compile(r"^(?:that )?(?P<t>.+?) (?:is|are) (?:turned |switched |set |set to |in the |toggled )?(?P<s>on|off|enabled|disabled|checked|unchecked|green|gr[ae]y)(?=\s*(?:$|[/.,;]|position\b|and\b|then\b))",
               re.IGNORECASE),
]


def _ensure(rest: str) -> list[Intent]:
    """'Make sure X is on' / 'Check that X is turned on': a state to reach, not a tap."""
    for rx in _ENSURE_RES:
        m = rx.match(rest)
        if m:
            target = _clean_target(m.group("t"))
            state = _state_word(m.group("s"))
            if target and state is not None and not re.match(r"^(?:you|you're|your (?:phone|device))\b", target, re.IGNORECASE):
                return [Intent("toggle", target, state=state)]
    return []


#: "tap the Wi-Fi switch to ON", "Tap the Wi-Fi switch to the ON position", "tap the X Switch to ON / OFF"
_SWITCH_TO_RE = re.compile(
    r"^(?:on )?(?:the )?(?P<t>.{1,60}?)\s+(?:on/off |on-off )?(?:switch|toggle|slider)\s+(?:to|into)\s+(?:the\s+)?"
    r"(?P<s>on\s*/\s*off|on or off|on|off)\b(?:\s+position)?", re.IGNORECASE)
#: a kind of item where the page means "any item of that list": "the app you want", "an app", "the app name"
_PLACEHOLDER_RE = re.compile(
    r"^(?:on )?(?:an?|the|your|any|whichever|whatever|one)\s+(?P<kind>app|application|account|keyboard|network|"
    r"contact|ringtone|sound|service|device|language|voice|engine)(?:'s)?(?: name| icon)?"
    r"(?P<rest>\s+(?:you|that|which|whose|for which|to)\b.*)?$", re.IGNORECASE)
#: the reader's own pick among the options on screen: "the one you want", "your preferred option",
#: "your new navigation option", "the desired sync options"
_OWN_CHOICE_RE = re.compile(
    r"^(?:on )?(?:(?:the|any) one (?:(?:that )?you|of your)\b.*|"
    r"(?:the|your|a) (?:new|preferred|desired) (?:(?P<kind>[\w-]+(?: [\w-]+)?) )?"
    r"(?:option|setting|mode|method|style|choice)s?)$", re.IGNORECASE)
#: "Select screen lock method: None Swipe Pattern PIN Password", "select a preference: Wi-Fi Preferred ..."
_CHOICES_RE = re.compile(r"^(?:an? |the |your )?(?P<kind>[\w -]{2,40}?)\s*:\s*(?P<choices>.{3,})$")


def _on_off(word: str) -> Optional[bool]:
    w = re.sub(r"\s+", "", word.lower())
    return True if w == "on" else False if w == "off" else None


def _placeholder(kind: str, rest: str) -> Optional[Intent]:
    """'Tap the app you want', 'Tap an app', 'select a preference: A B C': any item of a list."""
    if kind not in ("tap", "select", "locate"):
        return None
    text = (_PURPOSE_RE.sub("", rest.strip().rstrip(".!")) or rest).strip()
    m = _PLACEHOLDER_RE.match(text) or _OWN_CHOICE_RE.match(text)
    if m:
        noun = (m.group("kind") or "option").lower()  # "the one you want": an option of the list
        return Intent("select", None, value=noun, placeholder=True) if kind == "select" else \
            Intent("tap", noun, placeholder=True)
    if kind == "select":
        c = _CHOICES_RE.match(rest.strip())
        if c and not _PATH_SPLIT_RE.search(c.group("kind")):
            return Intent("select", c.group("kind").strip(), placeholder=True, choices=c.group("choices").strip())
    return None


#: opening the notification shade / quick settings: "Swipe down from the top", "Open Quick Settings"
_SHADE_OPEN_RE = re.compile(
    r"^(?:(?:swipe|pull|drag|slide)(?: down)?(?: twice)? (?:down )?(?:from |on )?(?:the )?(?:very )?"
    r"(?:top of (?:the|your) (?:screen|display|phone)|top edge|status bar|notification (?:shade|panel|bar)|"
    r"quick settings)"
    r"|(?:open|access|pull down|drag down|bring up|expand) (?:the |your )?(?:quick settings|"
    r"notification (?:shade|panel|bar)|status bar))\b", re.IGNORECASE)
#: where a swipe up opens the app drawer
_DRAWER_PLACE_RE = re.compile(r"\b(?:home ?screen|app drawer|apps? (?:tray|screen|list)|all apps|empty (?:spot|area|space)|"
                              r"from the bottom)\b", re.IGNORECASE)
#: the launcher's way to every app: the drawer ("Apps", "the All Apps icon", "the Apps tray")
_DRAWER_NAME_RE = re.compile(r"(?:all )?(?:apps?|applications)(?: (?:tray|drawer|screen|list|menu|button))?|"
                             r"(?:the )?app drawer|apps? tray", re.IGNORECASE)


def _parse_clause(clause: str, prev_kind: Optional[str], alone: bool = False) -> list[Intent]:
    text = _strip_prefixes(clause.strip().rstrip(".!:"))
    if not text:
        return []
    if _SHADE_OPEN_RE.match(text):
        return [Intent("shade")]
    if _is_accessory_step(text):
        return []  # the accessory's part of a pairing: nothing on the phone's screen
    slid = slider_step(text)
    if slid is not None:
        kind, name, way = slid
        if kind == "toggle":  # "Move the Notes slider to on/green"
            return [Intent("toggle", name, state=None if way is None else way == "on")]
        # "Drag the Ring volume slider to the left": set that slider, lower ("down") or higher ("up")
        return [Intent("set", name, direction=way)]  # type: ignore[arg-type]
    m = _VERB_RE.match(text)
    if not m:
        if _INFO_RE.match(text):
            return []
        # a bare menu path or label ("Display > Dark theme", or "Dark theme" after "then")
        words = text.split()
        parts = _PATH_SPLIT_RE.split(text)
        if (_PATH_SPLIT_RE.search(text) and all(0 < len(p.split()) <= 6 for p in parts)) or (
            prev_kind in ("tap", "select", "open") and len(words) <= 5 and text[:1].isupper()) or (
            alone and len(words) <= 4 and text[:1].isupper()
        ):
            return [Intent("tap", t) for t in _path_targets(text)]
        return []
    verb = m.group(0).lower()
    kind, state = _VERB_KIND[verb]
    rest = text[m.end():].strip()
    if kind == "ensure":
        return _ensure(re.sub(r"^that\s+", "", rest, flags=re.IGNORECASE))
    # "so it turns off" says the state the tap leads to
    so = _SO_RE.search(rest)
    so_state = None
    if so:
        so_state = _state_word(so.group(1))
        rest = rest[: so.start()]
    quotes = _quoted(rest)

    if kind == "scroll":
        direction = "up" if ("up" in verb and "swipe" not in verb) or ("down" in verb and "swipe" in verb) else "down"
        if verb == "scroll" and re.match(r"^up\b", rest, re.IGNORECASE):
            direction = "up"
        if "swipe down" in verb and re.match(r"^(?:twice )?from the top\b", rest, re.IGNORECASE):
            return [Intent("shade")]  # pulls down the notification shade; see _shade
        if "swipe up" in verb and _DRAWER_PLACE_RE.search(rest):
            return [Intent("drawer")]  # "Swipe up from the home screen to open the app drawer"
        target = re.sub(r"^(?:up|down)\b\s*", "", rest, flags=re.IGNORECASE)
        until = re.search(r"\buntil you (?:see|find|reach|get to)\s+(.+)$", target, re.IGNORECASE)
        if until:
            target = until.group(1)  # "Scroll down the Settings menu until you find System Settings"
        target = _PURPOSE_RE.sub("", target)
        # "Scroll down again", "Scroll all the way to the bottom of the list again"
        target = re.sub(r"^again\b\s*|\s*\bagain$", "", target.strip(" .,"), flags=re.IGNORECASE)
        target = re.sub(r"^all the way(?: (?:down|up))?\s*(?=to\b|$)", "", target, flags=re.IGNORECASE)
        target = re.sub(r"^(?:to|until you (?:see|find)|and (?:find|look for))\s*", "", target, flags=re.IGNORECASE)
        target = re.sub(r"^(?:on|in) (?:the |your )?[\w ]{0,30}(?:screen|page|list|menu)$", "", target, flags=re.IGNORECASE)
        target = re.sub(r"^(?:the )?(?:very )?(?:bottom|top|end)(?: of the (?:page|list|screen|menu))?$", "", target,
                        flags=re.IGNORECASE)
        cleaned = _clean_target(target) if target else None
        return [Intent("scroll", cleaned, direction=direction)]
    if kind in ("back", "home", "enter"):
        return [Intent(kind)]
    m_key = re.match(r"^(?:the |your )?(home|back|menu)\s+(key|button)s?\b", rest, re.IGNORECASE)
    if kind == "tap" and m_key and (m_key.group(1).lower() != "menu" or m_key.group(2).lower() == "key"):
        # "Press the Menu key": a key (KEYCODE_MENU); a "Menu button" is as often an icon on the screen
        return [Intent(m_key.group(1).lower())]  # type: ignore[arg-type]
    if kind in ("tap", "long_press") and re.match(
            r"^(?:down )?(?:on )?(?:the |your )?(?:home|power|volume|side|bixby)\b[\w /&-]{0,30}?\b(?:button|key)s?\b", rest, re.IGNORECASE):
        if kind == "tap" and re.match(r"^(?:the )?home (?:button|key)\b", rest, re.IGNORECASE):
            return [Intent("home")]
        return []  # a key on the side of the phone, not a control on the screen
    if kind == "tap":
        m_pos = _SWITCH_TO_RE.match(rest)
        if m_pos:
            target = _clean_target(m_pos.group("t")) if m_pos.group("t") else None
            return [Intent("toggle", target, state=_on_off(m_pos.group("s")))] if target else []
    placeholder = _placeholder(kind, rest)
    if placeholder is not None:
        return [placeholder]
    named_in_turn: Optional[str] = None
    if kind in ("tap", "long_press", "locate", "select") or (kind == "toggle" and verb in ("flip", "toggle", "slide")):
        m_turn = _TURN_SUFFIX_RE.search(rest)
        if m_turn:
            word = (m_turn.group("w1") or m_turn.group("w2") or m_turn.group("w3") or "").lower()
            named_in_turn = m_turn.group("named")
            rest_before = rest[: m_turn.start()]
            target = _clean_target(named_in_turn) if named_in_turn else None
            targets = _path_targets(rest_before)
            if target and (not targets or targets[-1].lower() in _PRONOUNS):
                targets = targets[:-1] + [target]  # "tap the switch to turn TalkBack off"
            if targets and not (named_in_turn and not target):
                st = None if word == "on or off" else word in ("on", "enable")
                return [Intent("tap", t) for t in targets[:-1]] + [Intent("toggle", targets[-1], state=st)]
    rest = _PURPOSE_RE.sub("", rest)
    quotes = [q for q in _quoted(rest) if rest.lstrip(" \"'“‘").startswith(q[:1]) or len(_quoted(rest)) == 1 and
              re.match(r"^(?:the |on the |on )?[\"'“‘]", rest, re.IGNORECASE)]
    if so_state is not None and kind in ("tap", "toggle"):
        targets = _path_targets(quotes[0] if quotes else rest)
        return [Intent("tap", t) for t in targets[:-1]] + ([Intent("toggle", targets[-1], state=so_state)] if targets else [])
    if kind == "toggle":
        m_flip = re.search(r"\s+on\s*(?:/|or)\s*off\b.*$", rest, re.IGNORECASE)
        if m_flip:  # "Slide the switch on or off": flip it
            rest, verb, state = rest[: m_flip.start()], "toggle", None
        if verb in ("turn", "flip", "slide", "switch"):  # "turn X on"
            m2 = re.search(r"\s+(on|off)\b(.*)$", rest, re.IGNORECASE)
            if m2:
                state = m2.group(1).lower() == "on"
                rest = rest[: m2.start()]
            elif verb in ("turn", "switch"):
                return [Intent("tap", t) for t in _path_targets(rest)] if rest else []
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
        if target and re.match(r"^(?:given|text|input|appropriate|required|provided)?\s*(?:field|box)$", target, re.IGNORECASE):
            target = None
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
        if re.match(r"^(?:one|any|some|all)(?: or more)? of\b|^from\b", rest, re.IGNORECASE):
            return []  # "choose one of the following": the choice is not named
        m2 = re.search(r"\s+(?:as|for|in|under|from)\s+(?:the\s+|your\s+)?(.+)$", rest, re.IGNORECASE)
        where = _clean_target(m2.group(1)) if m2 else None
        if where and (where.lower() in _GENERIC_PLACES or re.match(r"^(?:list|menu|options) of\b", where, re.IGNORECASE)):
            where = None
        if quotes:
            return [Intent("select", where, value=quotes[0])]
        if m2 and not _PATH_SPLIT_RE.search(rest):
            value = _clean_target(rest[: m2.start()])
            return [Intent("select", where, value=value)] if value else []
        targets = _path_targets(rest)
        if not targets:
            return [Intent("select", None, unnamed=True)] if not rest.strip(" .") else []
        *path, last = targets
        alts = _alternatives(last)
        return [Intent("tap", t) for t in path] + [
            Intent("select", None, value=alts[0], alternatives=tuple(alts) if len(alts) > 1 else ())]
    # open / tap / long_press / locate
    if quotes and not _PATH_SPLIT_RE.search(rest):
        targets = [t for t in (_clean_target(q) for q in quotes[:1]) if t]
    else:
        targets = _path_targets(rest)
    if not targets or (len(targets) == 1 and targets[0].lower() in ("or", "and", "the", "on", "the or", "or the")):
        if verb == "save":
            return [Intent("tap", "Save")]
        if kind in ("tap", "long_press") and (targets or len(rest.strip(" .")) <= 12):
            return [Intent(kind, None, unnamed=True)]  # "Tap ." - the icon's name was an image
        return []
    if kind in ("tap", "long_press") and _is_hardware(rest, targets[-1]):
        if re.fullmatch(r"home", targets[-1], re.IGNORECASE):
            return [Intent("home")]
        return []  # a key on the side of the phone, not a control on the screen
    if kind == "tap" and len(targets) == 1 and re.fullmatch(r"home|back", targets[0], re.IGNORECASE) and re.search(
            r"\b(?:button|key)\b", rest, re.IGNORECASE):
        return [Intent(targets[0].lower())]
    *path, last = targets
    alts = _alternatives(last) if not quotes else [last]
    extra = {"alternatives": tuple(alts)} if len(alts) > 1 else {}
    last = alts[0]
    if kind == "open":
        if not path:
            return [Intent("open", last, **extra)]
        return [Intent("open", path[0])] + [Intent("tap", t) for t in path[1:]] + [Intent("tap", last, **extra)]
    if kind == "long_press":
        return [Intent("tap", t) for t in path] + [Intent("long_press", last, **extra)]
    out = [Intent("tap", t) for t in path] + [Intent("tap", last, **extra)]
    if verb in ("go to", "go into", "navigate to", "head to", "head over to") and (path or out[0].target.lower() in _APPISH):
        out[0] = replace(out[0], kind="open")
    if kind == "locate":
        out[-1] = replace(out[-1], value="\x00locate")  # marker, removed in _merge_locate
    return out


def _path_targets(text: str) -> list[str]:
    parts = _PATH_SPLIT_RE.split(text) if _PATH_SPLIT_RE.search(text) else [text]
    return [t for t in (_clean_target(p) for p in parts) if t]


def _is_pronoun(target: Optional[str]) -> bool:
    return target is not None and target.lower() in _PRONOUNS


def _resolve_pronoun(intent: Intent, previous: list[Intent]) -> Intent:
    if not _is_pronoun(intent.target):
        return intent
    named = next((p.target for p in reversed(previous) if p.target and not _is_pronoun(p.target)), None)
    if named is None:
        return intent
    return replace(intent, target=named)


def _merge_locate(intents: list[Intent]) -> list[Intent]:
    """'Find Display and tap it' is one tap; 'Find Display' alone is a tap on Display."""
    out: list[Intent] = []
    for intent in intents:
        if out and out[-1].value == "\x00locate" and _is_pronoun(intent.target):
            located = out.pop()
            intent = replace(intent, target=located.target)
        out.append(intent)
    return [replace(i, value=None) if i.value == "\x00locate" else i for i in out]


_GEAR_RE = re.compile(r"(?:gear|cog|cogwheel|settings|gear-shaped|settings gear|settings cog)", re.IGNORECASE)


def _shade(intents: list[Intent], shade: bool = False) -> list[Intent]:
    """'Swipe down from the top of the screen and tap the gear icon': the shade's gear opens Settings.

    The swipe is kept (``shade``): outside the app the agent opens the shade and taps the gear there.
    """
    out: list[Intent] = []
    for intent in intents:
        if intent.kind == "shade":
            shade = True
            out.append(intent)
            continue
        if shade and intent.kind == "tap" and intent.target and _GEAR_RE.fullmatch(intent.target):
            intent = Intent("open", "Settings", condition=intent.condition)
        shade = False
        out.append(intent)
    return out


@lru_cache(maxsize=4096)
def _parse_cached(step: str) -> tuple[Intent, ...]:
    """Intents with pronouns resolved inside the step."""
    intents: list[Intent] = []
    for intent in _parse_unresolved(step):
        intents.append(_resolve_pronoun(intent, intents))
    return tuple(intents)


@lru_cache(maxsize=4096)
def _parse_unresolved(step: str) -> tuple[Intent, ...]:
    intents: list[Intent] = []
    for sentence in _sentences(_comma_path(_repair(step))):
        sentence = _strip_lead_keep_place(sentence)
        place = "home" if _HOME_RE.match(sentence) else None
        app_root = _APP_ROOT_RE.match(sentence)
        condition = None
        m_turn = _TURN_PURPOSE_RE.match(sentence)
        if m_turn and _VERB_RE.match(_strip_prefixes(sentence[m_turn.end():])):
            # "To turn on, tap the Wi-Fi switch to ON": one of the page's choices (see plan.py)
            condition, sentence = m_turn.group(1), sentence[m_turn.end():]
        if _SEE_RE.match(sentence):
            continue  # "Under 'Location,' you can find the type of location": what the reader will see
        m = _CONDITION_RE.match(sentence)
        if m:
            condition, sentence = m.group(1).strip(), sentence[m.end():]
            if not _VERB_RE.match(_strip_prefixes(sentence)):
                continue  # "If X, you're running another version": commentary
        got: list[Intent] = []
        prev_kind: Optional[str] = None
        clauses = _split_clauses(_strip_prefixes(sentence))
        for clause in clauses:
            parsed = _parse_clause(clause, prev_kind, alone=len(clauses) == 1)
            if parsed:
                prev_kind = parsed[-1].kind
            got.extend(parsed)
        got = _shade(_merge_locate(got))
        launcher = _LAUNCHER_RE.search(sentence)
        got = [Intent("open", "Settings", condition=g.condition) if launcher and g.kind in ("tap", "locate") and g.target
               and _GEAR_RE.fullmatch(g.target) and g.target.lower() in ("gear", "cog", "cogwheel", "settings gear",
                                                                          "settings cog", "gear-shaped")
               else g for g in got]
        if place:
            got = [replace(g, place=place) for g in got]
            # "From the home screen, swipe up and tap Settings": the swipe opens the drawer; "tap Apps"
            # (the Apps icon, the Apps tray) is the drawer of launchers that have no such icon
            got = [Intent("drawer", place=place, condition=g.condition)
                   if (g.kind == "scroll" and g.target is None and g.direction == "down")
                   or (g.kind in ("tap", "open") and g.target and _DRAWER_NAME_RE.fullmatch(g.target))
                   else g for g in got]
        got = [Intent("drawer", place=g.place, condition=g.condition)
               if g.kind in ("tap", "open") and g.target and re.fullmatch(r"(?:the )?app drawer|apps? tray", g.target,
                                                                           re.IGNORECASE) else g for g in got]
        # "Scroll to and tap the Play Music icon": the scroll looks for what the tap names
        got = [replace(g, target=got[i + 1].target) if g.kind == "scroll" and g.target is None and i + 1 < len(got)
               and re.match(r"^\s*scroll to\s*$", clause_text, re.IGNORECASE) else g
               for i, (g, clause_text) in enumerate(zip(got, clauses + [""] * len(got)))]
        if app_root and got:
            got[0] = replace(got[0], place="app")  # where the sentence starts; the rest follows from there
        elif len(got) > 1 and got[0].kind == "tap" and got[0].place is None \
                and (got[0].target or "").lower() in _APPISH:
            got[0] = replace(got[0], place="app")  # "check Settings > Apps": the app roots the path
        if condition:
            got = [replace(g, condition=condition) for g in got]
        intents.extend(got)
    return tuple(intents)


def parse_step(step: str) -> list[Intent]:
    """The intents of one instruction step, in order; empty for informational text."""
    return list(_parse_cached(step))


_SHADE_RE = re.compile(r"\bswipe down (?:twice )?from the top\b", re.IGNORECASE)
#: "... the new Show Activity Status option": a control an informational step names
_MENTION_RE = re.compile(r"\b(?:the|a) (?:new )?((?:[A-Z][\w'&-]*)(?: [A-Za-z][\w'&-]*){0,5}) (?:option|setting|toggle|switch)\b")


def parse_step_in_context(instructions: list[str], index: int, heading: Optional[str] = None) -> list[Intent]:
    """The intents of step ``index``, with "it" and "the switch" resolved from the page.

    "it"/"this" name the last control named before, in this step or an earlier one
    ("Tap Dark mode." then "Turn it on." -> toggle 'Dark mode' on). A control named
    only by its kind ("Flip the switch.") is the one the page is about when its
    ``heading`` (title or breadcrumb, read as a query) names one, else the last
    named. An informational step can name it too ("you'll see the new X option").
    """
    raw = list(_parse_unresolved(instructions[index]))
    if index > 0 and raw and raw[0].kind == "tap" and raw[0].target and _GEAR_RE.fullmatch(raw[0].target) and \
            _SHADE_RE.search(_repair(instructions[index - 1])):
        raw = _shade(raw, shade=True)  # "Swipe down from the top." then "Tap the gear icon."
    if not any(_is_pronoun(i.target) for i in raw):
        return [_resolve_pronoun(i, raw[:n]) for n, i in enumerate(raw)]
    about = None
    if heading:
        named = [q.target for q in parse_query(heading) if q.target]
        about = named[-1] if named else None
    earlier = _named_before(instructions, index)
    out: list[Intent] = []
    for intent in raw:
        if _is_pronoun(intent.target):
            in_step = _resolve_pronoun(intent, out)
            generic = intent.target.lower() in _GENERIC_CONTROLS
            if generic and about:
                intent = replace(intent, target=about)
            elif in_step is not intent:
                intent = in_step
            elif earlier or about:
                intent = replace(intent, target=earlier or about)
        out.append(intent)
    return out


def _named_before(instructions: list[str], index: int) -> Optional[str]:
    for earlier in range(index - 1, max(-1, index - 4), -1):
        previous = [p if p.target or p.kind != "select" else replace(p, target=p.value)
                    for p in parse_step(instructions[earlier]) if not p.placeholder]
        previous = [p for p in previous if p.target and not _is_pronoun(p.target)]
        acted = [p for p in previous if p.kind != "scroll"]
        mention = _MENTION_RE.search(_repair(instructions[earlier]))
        if acted or mention or previous:
            # a control the step acts on, else one it mentions ("you'll see the new X option"), else a scroll goal
            return acted[-1].target if acted else mention.group(1) if mention else previous[-1].target
    return None


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
