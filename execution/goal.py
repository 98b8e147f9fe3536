"""The goal a how-to question asks for, read the way a person reads it.

``read_goal("how to turn on wifi calling on android")`` ->
``Goal(want="on", words={"wifi", "calling"}, ...)``: what the reader wants done
(``want``) to which setting (``words``, the head of the question's noun phrase;
``context`` holds the rest, "for one app", "to a tv"). The judge then looks
for **the goal control** on the screens the agent saw: a control whose name is
made of the question's words (:func:`fit`), or whose title a knowledge card
gives for the question's words ("screen mirroring" -> "Cast", "android
version" -> "About Phone"; :func:`card_titles`).

Only the question and the device's cards are read here, never a world's goals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal, Optional

__all__ = ["Goal", "read_goal", "words_of", "name_words", "fit", "names_action", "names_head", "card_titles"]

#: what the reader wants done to the goal control ("do": an action on one item, ``Goal.action``)
Want = Literal["on", "off", "either", "see", "open", "set", "do"]

#: makers' names: the phone in "on a Samsung", but part of a thing's name in "Samsung account"
_MAKERS = frozenset("samsung galaxy pixel oneplus google".split())
#: words that name no setting: function words, the device, "settings", "option"
_STOP = _MAKERS | frozenset("""
a an the to of for on off in at by with from into onto my your our their its his her me i we you it this that these
those how what which where when why whether if is are be been being do does did can could should would will have has
had much many there here then than so as or and not no yes all any every some one each own up out about just only
phone phones device devices tablet smartphone iphone ipad
setting settings option options menu app_settings screen_settings feature features mode default
""".split())
#: words kept for matching but too general to name a setting on their own
_GENERIC = frozenset({"advanced", "more", "general", "system", "other", "setting", "use", "show", "manage", "app",
                      "screen", "new"})
_LEAD_RE = re.compile(r"^\s*(?:how\s+(?:do|can|should|would)\s+(?:i|you|we)\s+|how\s+to\s+|ways?\s+to\s+|steps?\s+to\s+)",
                      re.IGNORECASE)
_TAIL_RE = re.compile(r"\s+(?:on|in|for|with)\s+(?:(?:my|your|an?|the)\s+)?(?:android|iphone|ipad|samsung|galaxy|pixel|"
                      r"oneplus)?\s*(?:phone|device|tablet|smartphone)?\s*$", re.IGNORECASE)
#: (verb pattern, want): the first that matches the question's start wins
_VERBS: tuple[tuple[str, Want], ...] = (
    (r"turn\s+(?P<x>.+?)\s+on\s+or\s+off|toggle|switch\s+(?P<y>.+?)\s+on\s+or\s+off", "either"),
    (r"turn\s+on|switch\s+on|enable|activate|show|display|unmute|use", "on"),
    (r"turn\s+off|switch\s+off|disable|deactivate|hide|mute|silence|stop", "off"),
    (r"check|see|find|view|know|find\s+out|look\s+up|look\s+at|tell|read", "see"),
    # an action on one item ("forget a wifi network", "clear app cache"): the control that does it
    # names the action ("Forget", "Clear cache"); opening the item's list or a row named like the
    # item is only the way there
    (r"forget|delete|remove|clear|uninstall|unpair|disconnect|erase", "do"),
    (r"change|set(?!\s+up)|pick|choose|select|adjust|customi[sz]e|edit|modify|update|increase|decrease|lower|raise"
     r"|reduce|make", "set"),
)
#: "turn X on" / "turn X off" with the object between verb and particle
_SPLIT_VERB_RE = re.compile(r"^(?:turn|switch)\s+(?P<x>.+?)\s+(?P<p>on|off)$", re.IGNORECASE)
#: a clause that starts after the goal ("turn on wifi and connect to a network")
_NEXT_CLAUSE_RE = re.compile(r"\s+(?:and|then|to)\s+(?=(?:connect|use|unlock|make|stop|get|see|start|allow|join|pair|"
                             r"send|share|save|keep|protect|add|set|turn|open|change)\b)", re.IGNORECASE)
#: qualifiers after the head noun ("notifications for one app", "screen to a tv")
_QUALIFIER_RE = re.compile(r"\s+(?:for|from|on|in|with|while|when|during|of\s+(?:a|an|the|my|your|each|every|one)"
                           r"|to\s+(?:a|an|the|my|your))\s+", re.IGNORECASE)
#: word forms read as one word; a ringtone is what rings ("Ring volume" is the ringtone's volume)
_STEMS = {"usage": "use", "used": "use", "using": "use", "mirroring": "mirror", "mirrored": "mirror",
          "casting": "cast", "calls": "call", "calling": "call", "ringtones": "ring", "ringtone": "ring", "passcode": "pin",
          "sounds": "sound", "alerts": "alert", "languages": "language", "permissions": "permission"}


def words_of(text: str) -> list[str]:
    """Lower-case content words, in order: Wi-Fi -> wifi, plurals singular, function words dropped."""
    t = text.lower().replace("\u2011", "-").replace("\xa0", " ")
    t = re.sub(r"\bwi[\s-]?fi\b", "wifi", t)
    t = re.sub(r"\be[\s-]mail\b", "email", t)
    # "autocorrect" is "auto-correction", "autorotate" "auto rotate": the prefix is written joined or apart
    t = re.sub(r"\bauto(?!mat)(?=[a-z]{4,})", "auto ", t)
    t = re.sub(r"\b(text|speech)[\s-]+to[\s-]+(speech|text)\b", r"\1to\2", t)
    t = re.sub(r"\bset\s+up\b", "setup", t)
    out = []
    for w in re.findall(r"[a-z0-9]+", t):
        if w in _STOP:
            continue
        w = _STEMS.get(w, w)
        if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
            w = w[:-1]
        w = _STEMS.get(w, w)
        # "unlocking" / "unlock", "charging" / "charged": one word
        if len(w) > 5 and w.endswith("ing"):
            w = w[:-3]
        elif len(w) > 5 and w.endswith("ed"):
            w = w[:-2]
        if w and w not in _STOP:
            out.append(w)
    return out


def name_words(text: str) -> set[str]:
    """:func:`words_of` with makers' names kept: the words that tell one named thing from another
    ("Samsung account" from "Accounts", which :func:`words_of` reads alike)."""
    return set(words_of(text)) | (set(re.findall(r"[a-z0-9]+", text.lower())) & _MAKERS)


#: what may follow a word's stem in another form of it ("rotat" + "ion", "custom" + "ize"); a word
#: that goes on with another word is another word ("chrome" + "cast", "time" + "out", "blue" + "tooth")
_WORD_ENDINGS = frozenset("""e s es d ed er ers ing ion ions ation ations ization isation ize ise ized ure uration
    ment ments al ally ly ic ical ically ity ive able ible or ors y""".split())
#: clipped forms that stand for longer words ("auto" for "automatically", "sync" for "synchronise")
_CLIPPED = frozenset({"auto", "sync"})


def _same_word(a: str, b: str) -> bool:
    """Equal, another form of the same word ("rotat" / "rotation", "customiz" / "customize"), or a
    clipped form of it ("auto" / "automatically"); never a longer word ("chrome" / "chromecast")."""
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    if len(short) < 4 or not long_.startswith(short):
        return False
    return short in _CLIPPED or long_[len(short):] in _WORD_ENDINGS


def _matched(label_words: set[str], words: frozenset[str]) -> set[str]:
    """The label's words that are one of ``words``."""
    return {w for w in label_words if any(_same_word(w, x) for x in words)}


@dataclass(frozen=True)
class Goal:
    """What the question asks: ``want`` done to the setting named by ``words``."""

    want: Want
    #: the head of the question's noun phrase ("notifications" in "notifications for one app")
    words: frozenset[str]
    #: the question's other words (qualifiers, a second clause)
    context: frozenset[str] = frozenset()
    #: "set X to V": the value asked for
    value: Optional[str] = None
    #: this device's titles for the question's words (knowledge cards), best first, with
    #: whether the card's phrase is the whole head ("android version" -> "About Phone")
    titles: tuple[tuple[str, bool], ...] = ()
    #: the question's object as written, for messages
    phrase: str = ""
    #: every name the question offers ("rtt or tty"): any of them is the goal
    alternatives: tuple[frozenset[str], ...] = field(default=())
    #: the words of what is asked, its verb and object, makers' names kept (:func:`name_words`):
    #: {creat, samsung, account} for "create a Samsung account"; no qualifier ("on a Galaxy S10")
    asked: frozenset[str] = frozenset()
    #: ``want == "do"``: the action's word ("forget"), which the goal control must name
    action: str = ""

    def describe(self) -> str:
        what = self.action if self.want == "do" else self.want
        return f"{what} {self.phrase!r}" + (f" -> {[t for t, _ in self.titles]}" if self.titles else "")


def _strip(query: str) -> str:
    q = query.strip().rstrip("?.!").strip()
    q = _LEAD_RE.sub("", q)
    q = re.sub(r"\b(text|speech)\s+to\s+(speech|text)\b", r"\1-to-\2", q, flags=re.IGNORECASE)
    # "my android phone" is the phone; "android version" is a setting's name
    q = re.sub(r"\b(my|your|an?|the)\s+android\s+(phone|device|tablet)\b", r"\1 \2", q, flags=re.IGNORECASE)
    for _ in range(2):
        q = _TAIL_RE.sub("", q).strip()
    return q


def read_goal(query: Optional[str], knowledge: Any = None) -> Optional[Goal]:
    """The goal of a how-to question, or None when it names nothing (no content words)."""
    if not query:
        return None
    q = _strip(query)
    want: Want = "open"
    obj = q
    m = _SPLIT_VERB_RE.match(q)
    if m and not re.search(r"\bon\s+or\s+off$", q, re.IGNORECASE):
        want, obj = ("on" if m.group("p").lower() == "on" else "off"), m.group("x")
    else:
        for pattern, kind in _VERBS:
            mv = re.match(rf"^(?:{pattern})\b\s*", q, re.IGNORECASE)
            if mv:
                want = kind
                obj = mv.groupdict().get("x") or mv.groupdict().get("y") or q[mv.end():]
                break
        else:
            mv = re.match(r"^[a-z]+(?:\s+up)?\s+", q, re.IGNORECASE)  # "set up a vpn", "mirror my screen": open X
            if mv and words_of(q[mv.end():]):
                obj = q[mv.end():]
    obj = re.sub(r"\s+on\s+or\s+off\s*$", "", obj, flags=re.IGNORECASE)
    value = None
    if want == "set":
        mval = re.match(r"^(?P<x>.+?)\s+to\s+(?P<v>(?!a\b|an\b|the\b|my\b|your\b).+)$", obj, re.IGNORECASE)
        if mval:
            obj, value = mval.group("x"), mval.group("v").strip()
            if not words_of(obj):  # "set my phone to vibrate": the value is the setting asked for
                obj, value = value, None
    clause = _NEXT_CLAUSE_RE.split(obj, maxsplit=1)[0]
    head_text = _QUALIFIER_RE.split(clause, maxsplit=1)[0]
    head = words_of(head_text)
    if not head:
        head = words_of(clause)
    if not head:
        return None
    alternatives = tuple(frozenset(words_of(part)) for part in re.split(r"\s+or\s+|\s*/\s*", head_text)
                         if words_of(part))
    if len(alternatives) < 2 and len(head) >= 3:
        # "autocorrect and predictive text": two settings, each a goal control; a two-word "X and Y"
        # ("date and time", "sound and vibration") is one name
        parts = tuple(frozenset(words_of(part)) for part in re.split(r"\s+(?:and|&)\s+", head_text)
                      if words_of(part))
        if len(parts) > 1:
            alternatives = parts
    context = frozenset(words_of(q)) - frozenset(head)
    lead = q[: len(q) - len(obj)] if q.endswith(obj) else ""
    verb = words_of(lead)
    titles = card_titles(knowledge, set(verb) | set(head), set(verb) | set(words_of(clause)), frozenset(head)) \
        if knowledge is not None else ()
    return Goal(want=want, words=frozenset(head), context=context, value=value, titles=titles,
                phrase=head_text.strip(), alternatives=alternatives if len(alternatives) > 1 else (),
                asked=frozenset(name_words(lead) | name_words(head_text)),
                action=verb[0] if want == "do" and verb else "")


def card_titles(knowledge: Any, head: set[str], clause: set[str], exact: frozenset[str] = frozenset()
                ) -> tuple[tuple[str, bool], ...]:
    """This device's titles for the question, from its knowledge cards: (title, the card names the whole head).

    A card counts when its phrase says at least two content words and they are the question's
    (its verb and head: "screen mirroring" in "mirror my phone screen"; "android version" in
    "what android version my phone has"), or, for a phrase of three words or more, when three
    quarters of them are in the question's clause ("install apps unknown sources" for "allow
    apps from unknown sources"). One-word phrases are left to :func:`fit`.
    """
    out: list[tuple[int, str, bool]] = []
    for card in getattr(knowledge, "cards", ()):
        phrase = set(words_of(card.phrase))
        if len(phrase) < 2 or not (phrase - _GENERIC):
            continue
        if phrase <= head or (len(phrase) >= 3 and len(phrase & clause) >= 0.75 * len(phrase)):
            out.append((-len(phrase), card.title, phrase == exact))
    out.sort(key=lambda x: x[0])
    titles: dict[str, bool] = {}
    for _, t, whole in out:
        titles[t] = titles.get(t, False) or whole
    return tuple(titles.items())


def fit(goal: Goal, label: str) -> float:
    """How well a control's ``label`` names the goal, in [0, 1] (0: it names something else).

    Every content word of the label must be one of the question's words (head or context):
    "Apps & Notifications" names a part of "notifications for one app", "Wi-Fi" a part of
    "wifi calling", "Data Usage" of "how much mobile data I have used". The score is the
    share of the head's words the label covers, so the fuller name wins ("Wi-Fi calling"
    over "Wi-Fi"); an alternative of the question ("RTT" in "rtt or tty mode") counts as a
    whole head. A label made of generic words only ("Advanced") names nothing.
    """
    lw = set(words_of(label))
    if not lw or not (lw - _GENERIC):
        return 0.0
    extra = lw - _matched(lw, goal.words | goal.context) - _GENERIC
    best = 0.0
    for head in (goal.words, *goal.alternatives):
        n = len(_matched(lw, head))
        share = min(1.0, n / len(head))
        if extra and not (len(extra) == 1 and n >= 2):
            # a word the question does not say names another setting; one extra word next to
            # two of the head's may be a rewording ("Use 24-hour format" for "24-hour time")
            continue
        # the whole head, or most of a longer one ("Screen lock" for "screen lock pin")
        if share >= 0.99 or (n >= 2 and share >= 0.6):
            best = max(best, share * (0.9 if extra else 1.0))
    if not extra and len(lw) >= 3 and _matched(lw, goal.words):
        # a long name made only of the question's words ("Swipe fingerprint for notifications" for
        # "swipe the fingerprint sensor to see notifications", "Shortcut from Lock Screen")
        best = max(best, 0.9)
    return best


def names_action(goal: Goal, label: str) -> bool:
    """For an action on an item: the label names the action, and otherwise only the question's words
    ("Forget", "Forget network" for "forget a wifi network"; "Clear cache" for "clear app cache")."""
    lw = set(words_of(label))
    if not goal.action or not any(_same_word(w, goal.action) for w in lw):
        return False
    rest = {w for w in lw if not _same_word(w, goal.action)}
    return rest - _matched(rest, goal.words | goal.context) <= _GENERIC


def names_head(goal: Goal, label: str) -> bool:
    """The label says the head and nothing else (a home-screen category may be the goal then)."""
    return set(words_of(label)) in (set(goal.words), *[set(a) for a in goal.alternatives])
