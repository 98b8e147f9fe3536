"""Words as the ranking features see them: tokens, stems, stopwords, action verbs.

Every text feature (F1, F3, F5-F18) goes through :func:`content_terms`, so
they all agree on what a "term" is:

1. read it with the project's one tokeniser, :func:`verirank_core.text.words`
   (Unicode folded, lower case, ``"&"`` -> ``and``, ``"Wi-Fi"`` -> ``wifi``,
   punctuation separates: ``"Tap 'Display'."`` -> ``tap``, ``display``);
2. fold plurals with :func:`verirank_core.text.stem`;
3. drop the tokens that are in :data:`STOPWORDS` (the list is stemmed the
   same way, so ``does`` and ``settings``-like plurals compare equal).

Both lists below are fixed and versioned with the code, so features are
reproducible; ranking/FEATURES.md quotes the rules.
"""

from __future__ import annotations

from verirank_core.text import stem, words

__all__ = ["STOPWORDS", "ACTION_VERBS", "tokenize", "stem", "content_terms"]

#: English function words, contraction pieces ("phone's" -> phone, s) and
#: How-to filler ("how", "step", "app"). Kept short
#: on purpose: action verbs (tap, turn, go, open...) are NOT here because F5-F8
#: count them, and UI nouns (settings, screen, menu) are not here because F9-F16
#: match them on screen. "on"/"off" ARE here: every toggle shows them, so they
#: would match any screen.
_STOPWORD_TEXT = """
a about above after again against all also am an and any are as at be because
been before being below between both but by can could did do does doing down
during each either else ever few for from further had has have having he her
here hers herself him himself his how i if in into is it its itself just me
may might more most must my myself no nor not now of off on once one only or other
our ours ourselves out over own same shall she should so some such than that
the their theirs them themselves then there these they this those through to
too under until up upon very was we were what when where whether which while who
whom why will with would yet you your yours yourself yourselves
step steps way ways want need needs like let lets get gets got make sure
please simply just easily quickly also first next finally then once
android phone device devices app apps
s t d ll re ve m
"""

#: Verbs that tell the user to act on the UI, in every inflection that the
#: light stemmer leaves distinct (``taps`` stems to ``tap``; ``tapping`` does not).
_ACTION_VERB_TEXT = """
tap tapped tapping click clicked clicking press pressed pressing hold holding
touch touched touching open opened opening select selected selecting
choose chose choosing pick picking toggle toggled toggling turn turned turning
switch switched switching swipe swiped swiping scroll scrolled scrolling
drag dragged dragging slide slid sliding enter entered entering type typed
typing go went going navigate navigated navigating head return launch
launched launching enable enabled enabling disable disabled disabling activate
activated activating deactivate check checked checking uncheck unchecked
confirm confirmed confirming save saved saving set add added adding
remove removed removing delete deleted deleting find locate look
searching change changed changing adjust adjusted adjusting move moved
restart reboot install uninstall allow deny close exit
"""


def tokenize(text: str) -> list[str]:
    """The text's words, in order (:func:`verirank_core.text.words`)."""
    return words(text)


# Both lists are written as plain words and compared after stemming, like the text.
STOPWORDS: frozenset[str] = frozenset(stem(w) for w in _STOPWORD_TEXT.split())
ACTION_VERBS: frozenset[str] = frozenset(stem(w) for w in _ACTION_VERB_TEXT.split())


def content_terms(text: str) -> list[str]:
    """The stemmed non-stopword tokens of ``text``, in order, repeats kept."""
    terms = []
    for token in tokenize(text):
        term = stem(token)
        if term not in STOPWORDS:
            terms.append(term)
    return terms
