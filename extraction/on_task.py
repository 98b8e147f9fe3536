"""Is a block of steps about the query's task at all, or another app's task under its title?

A page titled with the query may hold steps for something else: a Tor Browser walk-through
under "How to set up a VPN", a PingTools install, a comment thread. Their words never name the
task, and they never go to the Settings app the question is about. Neither the page title nor a
heading can tell (SEO pages and listicles copy the query into them), so the test reads only the
steps.

The test is asked only of questions about the Settings app (``Query.app``): a Settings answer
either names the task ("Wi-Fi calling", "Dark theme") or goes through Settings. A question about
another app may well be answered in its words alone ("Tap the add icon, tap the contact"), and a
question of unknown app is left alone too.
"""

from __future__ import annotations

from typing import AbstractSet, Iterable, Optional

from verirank_core.platforms import BRAND_WORDS, PLATFORM_WORDS
from verirank_core.text import NOT_DISTINCTIVE, stem, terms

__all__ = ["about_settings", "names_task_or_settings", "same_task"]

#: words that name the Settings app: its name, and the gear icon that opens it
_SETTINGS_WORDS = frozenset({"setting", "gear"})


def about_settings(app: Optional[str]) -> bool:
    """Is the question about the Settings app ("Settings", "com.android.settings")?"""
    return bool(app) and "setting" in app.lower()


#: word endings that make another form of the same word ("restart"/"restarting",
#: "rotate"/"rotation"); "save"/"saver" and "time"/"timeout" are different words
_ENDINGS = frozenset({"", "e", "s", "es", "d", "ed", "ing", "ion", "ions", "er", "ers"})
#: words a task's name may hold that say little of which task it is: the rule's non-distinctive
#: words ("mode", "screen", ...), and counting words ("one app")
_WEAK = frozenset(stem(w) for w in NOT_DISTINCTIVE) | {"one", "all", "every", "each", "some"}


def _alike(a: str, b: str) -> bool:
    """The same word in another form: "restarting" and "Restart", "capturing" and "captured".

    Stems fold only plurals (``verirank_core.text.stem``), so a step's verb form may differ from
    the query's: after a shared start of four letters or more, both must end in an inflection.
    (``execution.goal._same_word`` also takes clipped forms, "auto" for "automatically", which
    here would count "time" for "timeout".)
    """
    if a == b:
        return True
    common = 0
    for x, y in zip(a, b):
        if x != y:
            break
        common += 1
    return common >= 4 and a[common:] in _ENDINGS and b[common:] in _ENDINGS


def _query_forms(distinctive: Iterable[str], query: str) -> set[str]:
    """The query's words that tell its task ("timeout" in "change screen timeout"; all of them
    when none does), with split words joined: a URL's "wi fi" is "wifi"."""
    wanted = set(distinctive)
    wanted = (wanted - _WEAK) or wanted
    told = terms(query)
    return wanted | {a + b for a, b in zip(told, told[1:]) if a in wanted and b in wanted and min(len(a), len(b)) <= 3}


def names_task_or_settings(steps: list[str], query: str, distinctive: Iterable[str]) -> bool:
    """Do the steps name a word that tells the query's task, or Settings?"""
    seen = set(terms(" ".join(steps)))
    if seen & _SETTINGS_WORDS:
        return True
    wanted = _query_forms(distinctive, query)
    return any(_alike(w, s) for w in wanted for s in seen)


#: words that name a phone, not a task ("On Samsung", "iPhone")
_DEVICE_WORDS = frozenset(w for group in (*PLATFORM_WORDS.values(), *BRAND_WORDS.values()) for w in group if " " not in w)


def _telling(words: Iterable[str]) -> set[str]:
    """The words of a task's name that tell which task it is: not numbers, not phones, and not the
    weak words ("mode", "app") unless the name has nothing else."""
    named = {w for w in words if not w.isdigit() and w not in _DEVICE_WORDS}
    return (named - _WEAK) or named


def _unnamed(words: Iterable[str], other: set[str]) -> set[str]:
    """The words that ``other`` does not name in any form."""
    return {w for w in words if not any(_alike(w, o) for o in other)}


def same_task(query_words: AbstractSet[str], part_words: Iterable[AbstractSet[str]],
              heading_words: AbstractSet[str]) -> bool:
    """Does a tip's heading name the query's task, not a neighbour's?

    The arguments are content words of task names (``heuristic._query_words``): the query's, those
    of each of its parts when it joins two ("autocorrect" and "predictive text"), and the
    heading's. On a page of tips, "Turn on Wi-Fi and connect to a network" is close in meaning to
    "turn on Wi-Fi calling", yet it is another task. The heading names the query's task when:

    * it names all of the query's telling words ("Enable Wi-Fi Calling for better coverage"); or
    * it names the query, or one of its parts, by a word for word swap: at least half of the
      query's telling words and half of the heading's are shared, and each side has a word in
      place of every telling word the other leaves out. "Turn on Dark Mode" answers "enable dark
      theme" ("mode" for "theme"); "Turn on Wi-Fi" does not answer "Wi-Fi calling", nor does
      "Turn on Wi-Fi calling" answer the part "turn on Wi-Fi".

    A query told only in weak words ("notifications for one app") cannot say which tip is
    another task ("Stop Twitter notifications" is one app's): every tip passes.
    """
    query, heading = set(query_words), set(heading_words)
    wanted = _telling(query)
    if not (wanted - _WEAK) or not _telling(heading) or not _unnamed(wanted, heading):
        return True
    return any(_swapped(set(part), heading) for part in [query, *part_words])


def _swapped(query: set[str], heading: set[str]) -> bool:
    """Is ``heading`` ``query`` with some telling words swapped for others, half or fewer?"""
    wanted, told = _telling(query), _telling(heading)
    if not wanted or not told:
        return False
    missing, extra = _unnamed(query, heading), _unnamed(heading, query)
    lost, added = missing & wanted, extra & told
    return (2 * len(lost) <= len(wanted) and 2 * len(added) <= len(told)
            and len(lost) <= len(extra) and len(added) <= len(missing))
