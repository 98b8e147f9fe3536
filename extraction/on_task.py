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

from typing import Iterable, Optional

from verirank_core.text import terms

__all__ = ["about_settings", "names_task_or_settings"]

#: words that name the Settings app: its name, and the gear icon that opens it
_SETTINGS_WORDS = frozenset({"setting", "gear"})


def about_settings(app: Optional[str]) -> bool:
    """Is the question about the Settings app ("Settings", "com.android.settings")?"""
    return bool(app) and "setting" in app.lower()


def _alike(a: str, b: str) -> bool:
    """The same word in another form: "restarting" and "Restart", "capturing" and "captured".

    Stems fold only plurals (``verirank_core.text.stem``), so the step's verb form differs from
    the query's; a shared start of all but the last three letters of the shorter word, and of at
    least four, counts as the same word ("setting" and "setup" share only "set").
    """
    if a == b:
        return True
    shorter = min(len(a), len(b))
    if shorter < 4:
        return False
    common = 0
    for x, y in zip(a, b):
        if x != y:
            break
        common += 1
    return common >= max(4, shorter - 3)


def _query_forms(distinctive: Iterable[str], query: str) -> set[str]:
    """The query's distinctive words, with neighbours joined: "wi fi" is also "wifi"."""
    wanted = set(distinctive)
    told = terms(query)
    return wanted | {a + b for a, b in zip(told, told[1:]) if (a in wanted or b in wanted) and min(len(a), len(b)) <= 3}


def names_task_or_settings(steps: list[str], query: str, distinctive: Iterable[str]) -> bool:
    """Do the steps name one of the query's distinctive words, or Settings?"""
    seen = set(terms(" ".join(steps)))
    if seen & _SETTINGS_WORDS:
        return True
    wanted = _query_forms(distinctive, query)
    return any(_alike(w, s) for w in wanted for s in seen)
