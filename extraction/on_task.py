"""Is a block of steps about the query's task at all, or another app's task under its title?

A page titled with the query may hold steps for something else: a Tor Browser walk-through
under "How to set up a VPN", a PingTools install, a comment thread. Their words never name the
task, and they never go to the Settings app the question is about. Neither the page title nor a
heading can tell (SEO pages and listicles copy the query into them), so the test reads only the
steps.

Only what a step names as a thing to act on counts (:func:`named_words`): a task word said in
passing ("open Safari or your default browser") is not an answer's.

The test is asked only of questions about the Settings app (``Query.app``): a Settings answer
either names the task ("Wi-Fi calling", "Dark theme") or goes through Settings. A question about
another app may well be answered in its words alone ("Tap the add icon, tap the contact"), and a
question of unknown app is left alone too.
"""

from __future__ import annotations

import re
from typing import AbstractSet, Iterable, Optional

from extraction.blocks import strip_marker
from verirank_core.platforms import BRAND_WORDS, PLATFORM_WORDS
from verirank_core.text import NOT_DISTINCTIVE, fold_unicode, stem, terms

__all__ = ["about_settings", "named_words", "names_task_or_settings", "same_task"]


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
    """Do the steps name, as a thing to act on, a word that tells the query's task, or Settings?

    A word said in passing does not count: "open Safari or your default browser" in a Facebook
    walk-through, "until you feel a feedback vibration" in a Quick Settings tour. A word counts
    when a step names it as a control or a place (:func:`named_words`: "Tap Wi-Fi Calling",
    "turn on airplane mode", "Open your phone's settings"), or says it does the query's action to
    the task ("Tap Display to change the wallpaper" for "change wallpaper"). The gear icon opens
    Settings wherever it is mentioned.
    """
    if "gear" in terms(" ".join(steps)):
        return True
    runs = [run for step in steps for run in _named_runs(step)]
    if any(_is_settings_app(run) for run in runs):
        return True
    named = _run_words(runs)
    asked = set(terms(query)) - _NAME_ENDS
    named |= set().union(*(_purpose_words(step, asked) for step in steps))
    wanted = _query_forms(distinctive, query)
    return any(_alike(w, s) for w in wanted for s in named)


#: a word token (with inner dots, hyphens and apostrophes: "Facebook.com", "Wi-Fi", "phone's") or
#: one mark of punctuation
_TOKEN = re.compile(r"[A-Za-z0-9](?:[\w'.-]*\w)?|[^\w\s]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
#: small words that end a name ("Open Facebook on your phone") or a verb's object
_NAME_ENDS = frozenset("""a an the your my this that these those its his her their our to into in on off of for from
    with by at and or but then if when while so as is are be it you can will until""".split())
#: a sentence that opens with these has a subject, not a leading verb ("Your browser should open")
_NOT_A_VERB = frozenset("a an the your my this that these those its his her their our it you i we they".split())
#: words that may open a step before its verb
_DISCOURSE = frozenset("then next now first second third finally lastly also afterwards step".split())
#: words between a leading verb and its object ("Go to Settings", "turn on airplane mode")
_BEFORE_OBJECT = frozenset("to into on off the a an your my up down out".split())


#: words before "Settings" that still name the Settings app itself ("your phone's Settings",
#: "the device settings", "System settings"), and words after it ("the Settings app")
_SETTINGS_BEFORE = frozenset(stem(w) for w in "main phone s device android tablet iphone ipad system".split())
_SETTINGS_AFTER = frozenset(stem(w) for w in "app application menu icon screen page option".split())


def _is_settings_app(run: list[str]) -> bool:
    """Does a name (its tokens, as written) name the Settings app, not another name holding the word
    ("Quick Settings", "Import Settings", "the Advanced settings section", "the Setting dropdown")?
    A capitalised name may follow: a path whose marks a crawl lost ("Tap Settings Connections Data
    usage")."""
    words = [terms(token) for token in run]
    at = next((i for i, w in enumerate(words) if w == ["setting"]), None)
    if at is None or not all(set(w) <= _SETTINGS_BEFORE for w in words[:at]):
        return False
    after = run[at + 1:]
    return not after or after[0][0].isupper() or all(set(w) <= _SETTINGS_AFTER for w in words[at + 1:])


def named_words(step: str) -> set[str]:
    """The words (``terms``) a step names as things on the screen or places to go (:func:`_named_runs`)."""
    return _run_words(_named_runs(step))


def _run_words(runs: list[list[str]]) -> set[str]:
    """The words (``terms``) of name runs, all together."""
    return set().union(*(terms(" ".join(run)) for run in runs))


def _named_runs(step: str) -> list[list[str]]:
    """The names a step gives as things on the screen or places to go, each as its tokens.

    * a capitalised run that does not open a sentence, with the lower-case words that carry it
      on ("Tap Mobile data", "Tap System settings", "Select Paid memberships");
    * the object of a sentence's leading verb (after any "Next," or "Finally,"), or of one after
      "then" ("Tap the keyboard icon", "Open Control Center, then turn on airplane mode", "Go
      into your phone's settings");
    * a quoted name ('tap "wifi calling"').
    """
    named: list[list[str]] = []
    for sentence in _SENTENCE_END.split(strip_marker(fold_unicode(step))[1]):
        tokens = _TOKEN.findall(sentence)
        # the leading verb comes after "Then", "Next," or "Finally," (and a step number a page
        # wrote into the step: "Step 2 Tap Display")
        lead = next((i for i, t in enumerate(tokens)
                     if t[0].isalnum() and t.lower() not in _DISCOURSE and not t.isdigit()), 0)
        covered = 0  # a capitalised run is named whole: "Quick Settings" holds no "Settings" of its own
        for i, token in enumerate(tokens):
            if i > lead and i >= covered and token[0].isupper():
                run = _run(tokens, i, capitals=True)
                covered = i + len(run)
                named.append(run)
            if (i == lead or (i > 0 and tokens[i - 1].lower() == "then")) and token.lower() not in _NOT_A_VERB:
                j = i + 1
                while j < len(tokens) and tokens[j].lower() in _BEFORE_OBJECT:
                    j += 1
                named.append(_run(tokens, j, capitals=False))
        for quoted in re.findall(r'"([^"]{2,40})"', sentence):
            named.append(_TOKEN.findall(quoted))
    return [run for run in named if run]


def _run(tokens: list[str], start: int, capitals: bool) -> list[str]:
    """The words from ``start`` up to a small word or a mark; with ``capitals``, a capitalised small
    word goes on with the name ("Show On Lock Screen"). An "&" between words is inside the name
    ("Accounts & sync", "Security & lock screen"); a word "and" is not ("Open Facebook and tap")."""
    end = start
    while end < len(tokens) and (tokens[end][0].isalnum() or (
            tokens[end] == "&" and end > start and end + 1 < len(tokens) and tokens[end + 1][0].isalnum())) and (
            tokens[end].lower() not in _NAME_ENDS or (capitals and end > start and tokens[end][0].isupper())):
        end += 1
    return tokens[start:end]


#: "to <verb> <what>" up to a mark: "Tap Display to change the wallpaper, adjust ..."
_PURPOSE = re.compile(r"\bto (\w+)\b([^.,;:!?]*)", re.IGNORECASE)


def _purpose_words(step: str, asked: AbstractSet[str]) -> set[str]:
    """The words of a purpose clause whose verb is one of the query's words ``asked`` ("to change
    the wallpaper" for "change wallpaper"): the step says it does the query's action."""
    found: set[str] = set()
    for verb, rest in _PURPOSE.findall(fold_unicode(step)):
        if stem(verb.lower()) in asked:
            found.update(terms(rest))
    return found


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
