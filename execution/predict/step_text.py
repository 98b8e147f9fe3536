"""The words of an instruction step, before they become intents.

Crawled text arrives with broken captions, lost full stops and filler around the labels;
``steps.py`` reads intents only after this module has repaired the text, split it into
sentences and clauses where a verb follows, and cut a control's label from its phrasing.
"""

from __future__ import annotations

import re
from typing import Optional

from verirank_core.text import fold_unicode


# --- verb table (longest phrases first) -------------------------------------------

_VERBS: list[tuple[str, str, Optional[bool]]] = [
    ("touch and hold", "long_press", None), ("press and hold", "long_press", None),
    ("tap and hold", "long_press", None), ("hold down on", "long_press", None), ("hold down", "long_press", None),
    ("long press on", "long_press", None), ("long-press on", "long_press", None),
    ("long press", "long_press", None), ("long-press", "long_press", None),
    ("turn on", "toggle", True), ("turn off", "toggle", False),
    ("switch on", "toggle", True), ("switch off", "toggle", False),
    ("toggle on", "toggle", True), ("toggle off", "toggle", False),
    ("flip on", "toggle", True), ("flip off", "toggle", False),
    ("enable", "toggle", True), ("disable", "toggle", False),
    ("activate", "toggle", True), ("deactivate", "toggle", False),
    ("uncheck", "toggle", False), ("untick", "toggle", False), ("tick", "toggle", True),
    ("select or clear", "toggle", None), ("check or uncheck", "toggle", None), ("tick or untick", "toggle", None),
    ("toggle", "toggle", None), ("flip", "toggle", None), ("turn", "toggle", None),
    ("slide", "toggle", None), ("switch", "toggle", None), ("switch to", "tap", None),
    ("make sure", "ensure", None), ("check that", "ensure", None), ("ensure", "ensure", None),
    ("verify that", "ensure", None), ("confirm that", "ensure", None), ("check whether", "ensure", None),
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
    ("open up", "open", None), ("open", "open", None), ("opening", "open", None), ("launch", "open", None),
    ("start", "open", None), ("run", "open", None),
    ("go to", "tap", None), ("go into", "tap", None), ("navigate to", "tap", None),
    ("head to", "tap", None), ("head over to", "tap", None), ("move to", "tap", None),
    ("tap on", "tap", None), ("click on", "tap", None), ("press on", "tap", None),
    ("tap", "tap", None), ("click", "tap", None), ("press", "tap", None), ("hit", "tap", None),
    ("touch", "tap", None), ("access", "tap", None), ("visit", "tap", None),
    ("find and tap", "tap", None), ("find", "locate", None), ("locate", "locate", None), ("look for", "locate", None),
    ("check", "tap", None), ("view", "tap", None), ("save", "tap", None),
]
_VERBS.sort(key=lambda v: -len(v[0]))
_VERB_RE = re.compile(
    r"^(?:" + "|".join(re.escape(v) for v, _, _ in _VERBS) + r")\b", re.IGNORECASE
)
_VERB_KIND = {v: (k, s) for v, k, s in _VERBS}
_VERB_WORDS = frozenset(w for v, _, _ in _VERBS for w in v.split())

_LEAD_RE = re.compile(
    r"^(?:(?:step\s*\d+\s*[:.)-]?)|(?:\d+\s*[.):-])|[-*•·]|(?:now|then|next|finally|first|lastly|also|"
    r"simply|just|please|repeatedly|afterwards|after that|once there|once (?:it|this) (?:opens|is open)|"
    r"(?:do )?(?:one|any) of the following:|"
    r"you (?:can|need to|should|must|will need to|have to|may|want to)(?: also| then| now| simply)?|"
    r"(?:on|in|from) (?:the|your) (?:home screen|app drawer|next screen|screen|menu|list)),?)\s*",
    re.IGNORECASE,
)
#: a leading place or time, up to its comma: "Under 'Personal,'", "At the top right,", "On your Android phone,",
#: "To delete the album,", "When the message appears,", "After you select the photos,"
_PREFIX_RE = re.compile(
    r"^(?:under|at|in|on|from|within|inside|below|above|beside|near|next to|to the (?:right|left) of|"
    r"with|to|when|once|after|before|while|as soon as)\b[^,;]{1,80}?,['\"]?\s+",
    re.IGNORECASE,
)
#: the gear icon of these places is Settings' own icon (an app's gear stays a tap)
_LAUNCHER_RE = re.compile(r"\b(?:home ?screen|app drawer|notification (?:panel|shade|bar)|quick settings)\b", re.IGNORECASE)
_SEE_RE = re.compile(r"^(?:(?:under|in|at|on|next to)\b[^,]{0,60},[\"'”’]?\s*)?(?:here,?\s*)?you (?:can|will|'ll|ll|should|may) "
                     r"(?:find|see|view|notice|read)\b", re.IGNORECASE)
_TURN_PURPOSE_RE = re.compile(r"^(to (?:turn|switch) (?:it |this |\w+ )?(?:on|off)),\s*", re.IGNORECASE)
_CONDITION_RE = re.compile(r"^(?:if|unless)\s+([^,;]{1,100}?),\s*(?:then\s+)?", re.IGNORECASE)
_QUOTE_RE = re.compile(r"[\"“”]([^\"“”]{1,80})[\"“”]|(?<![A-Za-z])['‘’]([^'‘’]{1,80})['‘’](?![A-Za-z])")
_PATH_SPLIT_RE = re.compile(r"\s*(?:>|→|->|»|›)\s*")
_SENTENCE_RE = re.compile(r"\s*(?:;|(?<=[a-z0-9)\"'’”])[.!?]\s+(?=[A-Z\"']))\s*")
_THEN_RE = re.compile(r"\s*(?:,?\s+and then\s+|,\s*then,?\s+|\s+then\s+)\s*", re.IGNORECASE)
_AND_RE = re.compile(r"(,?\s+and\s+|,\s+)", re.IGNORECASE)
_INFO_RE = re.compile(
    r"^(?:this|that|it|it's|its|you(?:'ll| ll| will| should| can now| are| now| may need| might| won't)|your|"
    r"there|here|the (?:\w+ )?(?:phone|device|screen|app|icon|page|menu|option|button|message|system) (?:will|should|is|appears|opens)|"
    r"note|tip|done|that's it|congratulations|now the|now your|if |when |once |wait|doing so|tapping|selecting|"
    r"the [\w ]{1,40} will\b)",
    re.IGNORECASE,
)
#: "to open the menu", "to turn everything off": why a step acts, never part of a label
_PURPOSE_VERBS = (
    "open|display|show|bring|see|view|save|finish|start|turn|toggle|enable|disable|pair|type|verify|confirm|"
    "continue|proceed|access|launch|get|go|make|select|choose|change|create|delete|remove|begin|complete|edit|"
    "call|send|scroll|return|switch|use|enter|hear|configure|check|reveal|expand|find|search|set|adjust|"
    "activate|deactivate|allow|block|stop|reset|restart|close|exit|apply|add|move|copy|share|play|pause|record|"
    "take|capture|install|download|update|upload|sign|log|unlock|lock|mute|silence|dismiss|clear|back|batch|"
    "bring|pull|drag|zoom|let|keep|protect|help|prevent|avoid|ensure|connect|disconnect|link|sync|rename|hide|"
    "insert|import|export|print|scan|test|try|learn|manage|customi[sz]e|personali[sz]e|pick|register|join|leave|"
    "listen|watch|read|reply|forward|mark|archive|select|transfer|restore|erase|wipe|format|free|speed"
)
_PURPOSE_RE = re.compile(rf"(?<!\bnext)\s+(?:in order |so as )?to (?:{_PURPOSE_VERBS})\b.*$", re.IGNORECASE)
_SO_RE = re.compile(r"\s+so (?:that )?(?:it|this|the \w+|they)\s+(?:turns?|is|are|becomes?|switch(?:es)?|goes)\s+(on|off|green|grey|gray|blue|enabled|disabled)\b.*$", re.IGNORECASE)
#: what qualifies the control rather than names it: places, relative clauses, means, repetitions
_QUALIFIER_RE = re.compile(
    r"\s+(?:"
    r"(?:that|which|who)\s+(?:you|is|are|appears?|says|looks|was|were|has|have)\b|"
    r"(?:you|you'd|you'll)\s+(?:want|wish|would|'d|need|like|have|had|just|can|will)\b|"
    r"(?:found|located|labell?ed|listed|shown|displayed|identified|depending|until|by \w+ing)\b|"
    r"or (?:whatever|whichever|any other|another|the one)\b|"
    r"(?:on|in|at|from|along|near|beside|between|inside|within|under|over)\s+(?:the|your|any|a|an|each|every)\b|"
    r"(?:at|from|on|in|near) (?:the )?(?:bottom|top|upper|lower|left|right)\b|"
    r"(?:below|above|beneath|underneath)\b|"
    r"(?:for|on) (?:a |about )?(?:few )?seconds?\b|"
    r"(?:(?:about|around|at least) )?(?:\w+ (?:or|to) )?(?:once|twice|\w+ times)$|"
    r"(?:there|here)$|"
    r"(?:if|when|whenever|once|after|as)\s+(?:it|you|prompted|asked|needed|necessary|available|applicable|shown|one)\b"
    r").*$",
    re.IGNORECASE,
)
#: a repeat said after the name ("Tap the Record button again", "Tap Build number repeatedly");
#: "Try again" is a button's name
_AGAIN_RE = re.compile(r"(?<!\btry)\s+(?:again|repeatedly)$", re.IGNORECASE)
_TRAILING_NOISE_RE = re.compile(
    r"\s+(?:(?:at|near|on|in|from|under) (?:the )?(?:top|bottom|list|menu|screen|page|right|left|"
    r"corner|top right|top left|bottom right|bottom left|upper right|lower right)(?: (?:of|on) the (?:screen|page|list|menu))?|"
    r"on (?:your|the) (?:phone|device|screen|home screen)|from the (?:list|menu|options)|"
    r"in (?:the )?settings|if (?:it is|it's) not already (?:on|off|enabled|disabled))$",
    re.IGNORECASE,
)
_GENERIC_TAIL_RE = re.compile(
    r"\s+(?:option|options|button|menu|tab|icon|item|entry|toggle|switch|setting|section|link|app|application|list)$",
    re.IGNORECASE,
)
#: "a new option called Developer options", "the button labeled Save": the words after the verb of
#: naming are the label, whatever its own last word ("options")
_NAMED_KIND_RE = re.compile(
    r"^(?:the |a |an )?(?:new |other |first |second |next )?"
    r"(?:option|button|menu item|menu|item|entry|setting|tab|icon|link|toggle|switch|section|field|box|checkbox)\s+"
    r"(?:called|named|labell?ed|titled|marked|that says|which says|reading)\s+"
    r"(?!(?:by|with|as|beneath|below|above|under|in|on|at|to|for|from)\b)(?P<name>\S.*)$",
    re.IGNORECASE,
)
_GENERIC_HEAD_RE = re.compile(
    r"^(?:the |a |an |your |on |onto |into |to |at |any |either |desired |preferred |appropriate |applicable )+|"
    r"^(?:your |the )?(?:phone|device|tablet|android)(?:'s| s|’s) |"
    r"^(?:the )?(?:on/off |on-off )?(?:switch|toggle|option|button|checkbox|box|slider) (?:next to|for|beside|labell?ed|called|named) (?:the )?",
    re.IGNORECASE,
)
_TURN_SUFFIX_RE = re.compile(
    r"\s+(?:to )?(?:turn (?:it |this |them |the feature |the setting |the option |(?P<named>[^ ](?:(?!\bturn\b).){0,40}?) )?(?P<w1>on or off|on|off)"
    r"|(?P<w2>enable|disable) (?:it|this|them)|toggle (?:it |this )?(?P<w3>on|off))$",
    re.IGNORECASE,
)
#: "from the list" names no control
_GENERIC_PLACES = {"list", "menu", "options", "screen", "page", "pop-up", "popup", "dropdown", "drop-down", "dialog", "following"}
_CREDENTIALS = (
    ("password", "password"), ("passcode", "password"), ("pin", "pin"),
    ("e-mail", "email"), ("email", "email"), ("username", "username"), ("user name", "username"),
    ("phone number", "phone"),
)
#: words that stand for the control the page named before ("Turn it on", "Disable it there")
_ANAPHORA = frozenset({"it", "this", "that", "them", "this option", "this setting", "that option", "one"})
#: a control named only by its kind ("Flip the switch"): the one the page is about (its heading), else the last named
_GENERIC_CONTROLS = frozenset({
    "switch", "toggle", "slider", "feature", "setting", "on/off switch", "on/off", "on-off", "checkbox", "option",
})
_PRONOUNS = _ANAPHORA | _GENERIC_CONTROLS
#: wikiHow icon captions and spacing the crawl broke ("U nder", "a pp", "Wi -Fi", "Tap Privacy .")
_ARTEFACT_WORDS = frozenset({
    "under", "app", "apps", "tap", "open", "select", "settings", "setting", "scroll", "swipe", "turn", "toggle",
    "enable", "disable", "find", "press", "choose", "menu", "account", "about", "option", "options", "phone",
    "device", "screen", "notifications", "display", "network", "internet", "general", "security",
})
_IMAGE_RE = re.compile(r"\s*Image titled (?:[^\s]+\.(?:png|jpg|jpeg|gif|svg)|.{1,120}? Step \d+(?: \d+\b)?)\s*",
                       re.IGNORECASE)
_REFERENCE_RE = re.compile(r"\s*\[\d{1,3}\]\s*")
_APPISH = frozenset({"settings", "setting", "settings app"})


def _repair(text: str) -> str:
    """Undo crawl artefacts and Unicode variants before reading the text."""
    t = fold_unicode(text)
    t = _IMAGE_RE.sub(" ", t)
    t = _REFERENCE_RE.sub(" ", t).strip()

    def join(m: re.Match) -> str:
        word = m.group(1) + m.group(2)
        return word if word.lower() in _ARTEFACT_WORDS and m.group(2).lower() not in _ARTEFACT_WORDS else m.group(0)

    t = re.sub(r"\b([A-Za-z]) ([a-z]{2,})\b", join, t)
    t = re.sub(r"(?<=\w) -(?=\w)", "-", t)  # "Wi -Fi"
    t = re.sub(r"\s+([.,;:!?])", r"\1", t)  # "Tap Privacy ." -> "Tap Privacy."
    t = _DOUBLED_RE.sub(r"\1", t)
    return _unglue(t).strip()


#: "go to Settings, Software update and Download updates manually": a menu path told with commas
#: (after a verb that goes somewhere: one of ``_VERBS`` that taps or opens, or "select")
_COMMA_PATH_RE = re.compile(r"\b(?:" + "|".join(re.escape(v) for v, kind, _ in _VERBS if kind in ("tap", "open"))
                            + r"|select)\s+(?:the\s+|your\s+)?settings(?:\s+app)?\s*,\s*", re.IGNORECASE)
#: where the path's clause ends: a sentence end or a "then"
_PATH_END_RE = re.compile(r"[.;!?](?:\s|$)|,?\s+(?:and\s+)?then\b", re.IGNORECASE)


def _comma_path(text: str) -> str:
    """Commas after "go to Settings" as the path's arrows.

    "go to Settings, Security, Screen lock" reads as "Settings > Security > Screen lock" when every
    part after Settings is a name (starts with a capital; all but the last of six words or fewer).
    A last part of two names of two words or more joined by "and" ("Software update and Download
    updates manually") is two steps of the path; "Sound and Vibration" stays one name, as does
    any list the rule does not fit ("Settings, Account, the Google account you want")."""
    m = _COMMA_PATH_RE.search(text)
    if not m:
        return text
    end = _PATH_END_RE.search(text, m.end())
    stop = end.start() if end else len(text)
    parts = [p.strip() for p in re.split(r",\s*", text[m.end():stop])]
    last = re.match(r"^([A-Z][^,]*?\s[^,]*?)\s+and\s+([A-Z]\S*\s.+)$", parts[-1]) if parts else None
    if last:
        parts[-1:] = [last.group(1), last.group(2)]
    # every part a name; the last may run on into a purpose ("... manually to pull down the OTA")
    if not all(p[:1].isupper() for p in parts) or any(len(p.split()) > 6 for p in parts[:-1]):
        return text
    head = text[:m.end()].rstrip().rstrip(",")
    return f"{head} > {' > '.join(parts)}{text[stop:]}"


#: a caption the crawl repeated ("Notification Sounds Notification Sounds"): read once
_DOUBLED_RE = re.compile(r"\b([A-Z][\w'&-]*(?:\s+[\w'&-]+){0,6}?)(?:\s+\1\b)+")
#: a capitalised command inside a sentence: where a crawl lost the full stop ("... Settings Select Notification Sounds")
_GLUED_RE = re.compile(r"(?<=[A-Za-z0-9)])\s+(?=(?:Tap|Select|Choose|Pick|Press|Open|Go to|Turn|Toggle|Scroll|Swipe|"
                       r"Enable|Disable|Navigate|Click|Head)\s+\S)")
#: words after which a capitalised command word is a name, not a new sentence ("Turn on Select to Speak",
#: "tap Open by default", "via Touch ID", "the Enable LTE toggle")
_NAME_LEADS = frozenset("""
a an the to of for on off in at by via with from into onto or and then up your my its this that any
""".split())


def _unglue(text: str) -> str:
    """Put back the full stops a crawl dropped between two commands.

    Only before a capitalised command word that follows a plain word (not a verb, article or
    preposition, which would make it part of a name), and never after a colon in the same
    sentence, where capitalised words list choices ("method: None Swipe Pattern PIN").
    """
    out, last = [], 0
    for m in _GLUED_RE.finditer(text):
        before = text[:m.start()]
        prev = before.rsplit(None, 1)[-1].lower() if before.split() else ""
        sentence = re.split(r"[.!?]\s", before)[-1]
        if prev in _NAME_LEADS or prev in _VERB_WORDS or ":" in sentence:
            continue
        out.append(text[last:m.start()] + ";")  # a sentence break whatever the case before it ("INSTALL")
        last = m.start()
    out.append(text[last:])
    return "".join(out)


def _clean_target(text: str) -> Optional[str]:
    """Strip articles, filler and generic nouns; keep the words a control would show."""
    t = text.strip().strip(" .,:;!")
    t = re.sub(r"\s*\([^)]*\)?", "", t)  # "(factory reset)" explains, it is not a label
    named = _NAMED_KIND_RE.match(t)
    if named:
        t = named.group("name")
    for _ in range(3):
        before = t
        cut = _QUALIFIER_RE.sub("", t).strip(" .,:;!")
        if cut:
            t = cut
        t = _TRAILING_NOISE_RE.sub("", t).strip(" .,:;!")
        t = _AGAIN_RE.sub("", t)
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


def _sentences(step: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_RE.split(step) if s and s.strip(" .")]


def _starts_with_verb(piece: str, after_and: bool) -> bool:
    piece = _strip_lead(piece)
    m = _VERB_RE.match(piece)
    if not m:
        # "... and drag the Media volume slider": a slider's verbs are verbs only there
        return slider_step(piece) is not None and not (after_and and piece[:1].isupper())
    # "Language and Input", "Language and input": after a bare "and", a capitalised word or a verb
    # with nothing to act on is part of a label ("and tap ." is a tap whose icon name was lost)
    alone = not piece[m.end():].strip(" .,;") and _VERB_KIND[m.group(0).lower()][0] not in ("back", "home", "enter")
    return not (after_and and (piece[:1].isupper() or (alone and m.group(0).lower() not in ("save", "tap", "click", "tap on", "click on"))))


def _split_clauses(sentence: str) -> list[str]:
    clauses: list[str] = []
    for part in _THEN_RE.split(sentence):
        part = part.strip()
        if not part:
            continue
        # "X and tap Y": split on "and"/"," only where a verb follows
        pieces = _AND_RE.split(part)
        current = pieces[0]
        for sep, piece in zip(pieces[1::2], pieces[2::2]):
            after_and = "and" in sep.lower() and "," not in sep
            if _starts_with_verb(piece, after_and):
                clauses.append(current)
                current = piece
            elif _INFO_RE.match(piece):
                if not clauses and not _VERB_RE.match(_strip_prefixes(current)):
                    current = ""  # "After a moment, the device appears": no action at all
                break  # ", and the app will remove any duplicates": the rest is commentary
            else:
                current = f"{current}{' and ' if 'and' in sep.lower() else ', '}{piece}"
        clauses.append(current)
    return [c for c in clauses if c.strip(" .")]


def _strip_lead(text: str) -> str:
    for _ in range(4):
        new = _LEAD_RE.sub("", text, count=1).strip()
        if new == text:
            break
        text = new
    return text


#: "In Settings, tap Display", "From your phone's Settings menu, ...": the step starts on the app's home screen
_APP_ROOT_RE = re.compile(r"^(?:in|from|on|within|inside) (?:the |your )?(?:(?:phone|device)'?s? )?(?:main )?settings"
                          r"(?: app| menu| screen| page)?\s*,", re.IGNORECASE)
#: a step done outside the app: on the home screen or in the app drawer
_HOME_RE = re.compile(r"^(?:(?:from|on|at|in) (?:any|the|your|a) (?:home ?screen|home|app drawer|apps? (?:screen|tray|list))\b"
                      r"|(?:go to|return to|open) (?:the |your )?(?:home ?screen|app drawer)\b"
                      r"|swipe up (?:from the (?:bottom|home screen)|on the home screen|to open the app drawer))",
                      re.IGNORECASE)


def _strip_lead_keep_place(text: str) -> str:
    """``_strip_lead``, but "From the home screen," stays: it says where the step happens."""
    if _HOME_RE.match(text):
        return text
    return _strip_lead(text)


def _strip_prefixes(text: str) -> str:
    """Drop leading places and times ("Under 'Personal,'", "At the top,") when a verb follows."""
    for _ in range(3):
        text = _strip_lead(text)
        m = _PREFIX_RE.match(text)
        if not m or not _VERB_RE.match(_strip_lead(text[m.end():])):
            break
        text = text[m.end():]
    return _strip_lead(text)


def _alternatives(text: str) -> list[str]:
    """'Security or Security & location' -> both names, when both look like labels."""
    parts = re.split(r"\s+or\s+(?:tap\s+|select\s+|choose\s+)?", text)
    if len(parts) < 2:
        return [text]
    names = [_clean_target(p) for p in parts]
    if any(not n for n in names):
        return [text]
    if not all(n[:1].isupper() or n[:1].isdigit() or p.strip()[:1] in "\"'" for n, p in zip(names, parts)):
        return [text]
    return list(dict.fromkeys(names))


#: an accessory the phone pairs with, written as a thing, not a UI name ("the keyboard", not "Keyboard")
_ACCESSORY = r"(?:keyboard|mouse|headphones?|headsets?|earbuds?|earphones?|speakers?|controllers?|hearing (?:aids?|devices?))"
#: the other device's own part of a pairing: "Put your Bluetooth speaker into pairing mode", "Activate
#: Bluetooth pairing mode on the device from which ...", "Turn the keyboard on"; no phone screen shows it
_ACCESSORY_STEP_RE = re.compile(
    r"(?i:\bpairing mode\b)|"
    r"^(?i:turn|switch|power)\s+(?i:on\s+|off\s+)?(?i:the|your)\s+(?i:bluetooth\s+|wireless\s+)?" + _ACCESSORY +
    r"(?:\s+(?i:on|off))?\s*$")


def _is_accessory_step(text: str) -> bool:
    """A step done on the accessory being paired, not on the phone (parses to no intent)."""
    return bool(_ACCESSORY_STEP_RE.search(text))


def _is_hardware(raw: str, target: str) -> bool:
    """'the POWER button', 'Power and Volume-Down buttons': keys on the phone's side, not on the screen."""
    if not re.search(r"\b(?:power|volume|side|bixby)\b", target, re.IGNORECASE):
        return False
    return bool(re.search(r"\b(?:button|buttons|key|keys)\b", raw, re.IGNORECASE)) or bool(
        re.fullmatch(r"(?:power|volume[ -]?(?:up|down)?)(?: and (?:power|volume[ -]?(?:up|down)?))*", target, re.IGNORECASE))


# --- sliders ----------------------------------------------------------------------

#: "Drag the Ring volume slider all the way to the left", "Use the slider next to Brightness"
_SLIDER_VERB_RE = re.compile(r"^(?:tap and drag|press and drag|touch and drag|drag|slide|move|adjust|set|use|pull|swipe|"
                             r"toggle|switch|flip|tap)\s+(?P<rest>.*\bslider\b.*)$", re.IGNORECASE)
#: the slider named after it ("the slider next to Brightness", "the slider for Media volume")
_SLIDER_AFTER_RE = re.compile(r"\bslider\s+(?:next to|beside|for|on|under|below|labell?ed|called|named)\s+(?:the\s+)?"
                              r"(?P<t>.+?)(?=\s+(?:to|toward|towards|all the way|left|right|up|down)\b|$)", re.IGNORECASE)
#: the slider named before it ("the Ring volume slider")
_SLIDER_BEFORE_RE = re.compile(r"^(?:the\s+|your\s+|a\s+)?(?P<t>.+?)\s+slider\b", re.IGNORECASE)
#: the slider named by what it does ("the slider to adjust the brightness")
_SLIDER_PURPOSE_RE = re.compile(r"\bslider\s+to\s+(?:adjust|change|set|increase|decrease|raise|lower|control)\s+"
                                r"(?:the\s+|your\s+)?(?P<t>.+)$", re.IGNORECASE)
#: a slider moved to on or off is a switch (iPhone pages call switches sliders): "to on/green",
#: "to the Off position", "to ON or OFF"
_SLIDER_STATE_RE = re.compile(r"\b(?:to|into)\s+(?:the\s+)?(?P<s>on\s*(?:/|or)\s*off|on|off)\b", re.IGNORECASE)
#: which way a level goes: "to the (far) left"; else a word that says it
_SLIDER_TO_RE = re.compile(r"\b(?:to|toward|towards)\s+(?:the\s+)?(?:far\s+|very\s+)?(?P<w>left|right|top|bottom|lowest|"
                           r"highest|minimum|maximum|min|max)\b", re.IGNORECASE)
_LOWER_RE = re.compile(r"\b(?:left|bottom|lowest|minimum|min|decrease|lower|quieter|dimmer|down)\b", re.IGNORECASE)
_HIGHER_RE = re.compile(r"\b(?:right|top|highest|maximum|max|increase|raise|louder|brighter|up)\b", re.IGNORECASE)


def slider_step(text: str) -> Optional[tuple[str, str, Optional[str]]]:
    """A step that moves a named slider: (kind, the slider's name, which way).

    "Drag the Ring volume slider all the way to the left" -> ("set", "Ring volume", "down"): a
    level, lower ("down"), higher ("up") or left to the reader (None). "Move the Notes slider to
    on/green" -> ("toggle", "Notes", "on"): iPhone pages call a switch a slider. A slider the
    step does not name ("Drag the slider to the left") is none to look for, and a name that runs on
    ("the Color Temperature by adjusting the slider") is left to the general reading.
    """
    m = _SLIDER_VERB_RE.match(text.strip())
    if not m:
        return None
    rest = m.group("rest")
    name = None
    # the name before "slider" when there is one ("the track position slider below the artwork"),
    # else the one after it, else what it adjusts
    for rx in (_SLIDER_BEFORE_RE, _SLIDER_AFTER_RE, _SLIDER_PURPOSE_RE):
        found = rx.search(rest)
        if found:
            name = re.sub(r"^(?:the|your|a)\s+", "", found.group("t").strip(" .,"), flags=re.IGNORECASE)
            if name.lower() not in ("the", "your", "a") and not re.search(r"\s(?:a|an|the)$", name, re.IGNORECASE):
                break
            name = None
    if not name or name.lower() in ("its", "their", "this", "that") or len(name.split()) > 6 \
            or re.search(r"[:,;(]|\b(?:by|to|then|tap|if|using|with|via)\b|^(?:any|each|every|all)\b", name,
                         re.IGNORECASE):
        return None
    way = rest[rest.lower().rfind("slider"):]
    state = _SLIDER_STATE_RE.search(way)
    if state:
        word = state.group("s").lower()
        return "toggle", name, ("on" if word == "on" else "off" if word == "off" else None)
    if m.group(0).split()[0].lower() in ("toggle", "switch", "flip", "tap"):
        return None  # "Tap the Mobile data slider to turn it on": a switch, read as such elsewhere
    to = _SLIDER_TO_RE.search(way)
    if to:
        return "set", name, "down" if _LOWER_RE.fullmatch(to.group("w")) else "up"
    lower, higher = _LOWER_RE.search(way), _HIGHER_RE.search(way)
    return "set", name, "down" if lower and not higher else "up" if higher and not lower else None
