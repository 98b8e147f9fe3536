"""One way to read on-screen and page text, shared by the matcher, the judge and the world importers.

Real strings spell the same label many ways: OnePlus writes "Wi‑Fi hotspot" with
U+2011 (a non-breaking hyphen), pages paste NBSPs, curly quotes and "…", and
crawled HTML carries zero-width characters. :func:`fold_unicode` maps all of
those to plain ASCII punctuation and spaces without changing the words;
:func:`normalise` additionally lower-cases, reads "&" as "and", joins hyphenated
words ("Wi-Fi" -> "wifi") and drops punctuation, which is how labels are compared.

:func:`words` splits that form into tokens and :func:`stem` folds plurals
("batteries" -> "battery", "settings" -> "setting"); :func:`terms` does both. Every
module that compares words (the matcher, extraction, grounding, the ranking features
and the world importers) reads text through these three, so a word means the same
thing in every stage. Stopwords stay with their module: what is filler differs.
Grounding's ROUGE-L alone reads text with rouge-score's tokeniser, because that
tokeniser is part of the metric's definition (the paper's ROUGE-L).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["fold_unicode", "normalise", "words", "stem", "terms", "NOT_DISTINCTIVE"]

#: hyphens, dashes and minus signs (NFKC already turns U+2011 into U+2010)
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d\u2043"
#: zero-width and invisible formatting characters, and the soft hyphen
_INVISIBLE = "\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad\u180e"
_TABLE = str.maketrans(
    {**{c: "-" for c in _DASHES}, **{c: None for c in _INVISIBLE},
     "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "\u00b4": "'", "\u0060": "'",
     "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"'}
)
_SPACES_RE = re.compile(r"[^\S\n]+")
_PUNCT_RE = re.compile(r"[^\w\s]")


@lru_cache(maxsize=16384)
def fold_unicode(text: str) -> str:
    """Unicode variants to plain forms: dashes -> "-", odd spaces -> " ", curly quotes -> straight,
    "…" -> "...", zero-width characters removed, runs of spaces collapsed. Case and words are kept."""
    t = unicodedata.normalize("NFKC", text)  # NBSP, narrow NBSP, thin space, "…", full-width forms
    t = t.translate(_TABLE)
    return _SPACES_RE.sub(" ", t).strip()


@lru_cache(maxsize=16384)
def normalise(text: str) -> str:
    """The comparison form of a label: folded, lower-case, ``&`` -> ``and``, ``Wi-Fi`` -> ``wifi``, no punctuation."""
    t = fold_unicode(text).casefold()
    t = re.sub(r"(?<=\w)-(?=\w)", "", t)  # wi-fi -> wifi, e-mail -> email
    t = t.replace("&", " and ")
    t = _PUNCT_RE.sub(" ", t)
    return " ".join(t.split())


def words(text: str) -> list[str]:
    """The tokens of :func:`normalise`'s form, in order: ``"Wi-Fi & Network"`` -> ``["wifi", "and", "network"]``."""
    return normalise(text).split()


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Fold an English plural, nothing more: ``batteries`` -> ``battery``, ``settings`` -> ``setting``.

    Words of three letters or fewer and endings that are not plurals (``-ss``, ``-us``, ``-is``:
    ``access``, ``status``, ``this``) stay as they are. A lighter touch than Porter on purpose: UI
    labels are short nouns, and a stemmer that also folds ``-ing``/``-ed`` merges labels that
    differ ("Calling" and "Calls", "Pinned" and "Pin").
    """
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) >= 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def terms(text: str) -> list[str]:
    """:func:`words` stemmed, in order, repeats kept."""
    return [stem(w) for w in words(text)]


#: words that say little of which setting or task a name means: the "verified" rule's list
#: (../shared/real-dev/README.md, home-screen counterparts). The agent's counterparts and
#: stage 1's on-task test both read it.
NOT_DISTINCTIVE = ("mode", "screen", "app", "device", "on", "off", "turn", "use", "show", "setting", "notification",
                   "option")
