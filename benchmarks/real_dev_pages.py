"""Real how-to texts rendered into the page structures stage 1 must read.

``../shared/real-dev/pages.jsonl`` holds 185 real help-site texts, each split
into sentences, with the instruction sentences for its task labelled by a
person (``steps``). This module puts each text's *sentences* (never its
labels) into a web page of one structure, with the furniture real sites add
(navigation, a site breadcrumb, ads, related links, a cookie banner, a
footer):

============================  ================================================
``ol``                        one ``<li>`` per sentence (a help centre); or
                              one ``<ol start=N>`` per item with a screenshot
                              between; or a step's further sentences as
                              nested sub-items
``paragraph``                 the whole text as one ``<p>``
``step_headings``             "Step N" headings (or "N. first sentence", or
                              "Step N: first sentence"), the
                              body in the following ``<p>`` siblings
``action_headings``           un-numbered headings holding a step's first
                              sentence, its other sentences in paragraphs
``table``                     one row per sentence under a header row (``th``,
                              ``thead`` or bold ``td`` cells)
``breadcrumb``                texts that hold a menu path ("Settings > Apps >
                              ..."), as prose paragraphs of two or three
                              sentences
``accordion``                 an FAQ: this text answers the query's question
                              among other tasks' questions; ``<details>``,
                              hidden panels opened by a button, panels
                              ``aria-hidden`` after an ``aria-expanded``
                              control, script FAQs hidden by style, or visible
============================  ================================================

plus ``qa`` (a question and its accepted answer among other replies),
``listicle`` (several numbered tips, the text being the one that answers the
query, the others real texts of other tasks) and ``forum`` (a thread: the
question post, replies with user panels and signatures, the answer as lines
split by ``<br>``, paragraphs or a BBCode list, and a later reply quoting its
first line).

The labelled steps travel in :class:`RenderedPage` for scoring only; the page
is built from the sentences alone. ``benchmarks/bench_steps_real.py`` scores
stage 1 on these pages; ``tests/extraction/test_real_dev_structures.py`` uses a
few of them.
"""

from __future__ import annotations

import html
import json
import os
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("VERIRANK_SHARED", ROOT.parent / "shared"))
REAL_DEV = SHARED / "real-dev"

STRUCTURES = ("ol", "paragraph", "step_headings", "action_headings", "table", "breadcrumb", "accordion", "qa", "forum",
              "listicle")

#: a menu path told in the text: "Settings > Apps", "Apps & notifications and then Advanced"
_MENU_PATH = re.compile(r"\s(?:>|→|»|›)\s|\band then\b")
#: the renderer's own idea of a sentence that starts a step (to group sentences under headings)
_STARTS_STEP = re.compile(r"^(?:tap|open|go|select|touch|choose|swipe|scroll|turn|toggle|press|navigate|find|"
                          r"enable|disable|launch|head|click|from|on|in|under)\b", re.I)


@dataclass(frozen=True)
class Text:
    """One real-dev text: what the page shows (``sentences``) and, for scoring only, its labels."""

    qid: str
    pid: str
    query: str
    #: the task's device and app, as a search engine user would state them
    device: str
    app: str
    sentences: tuple[str, ...]
    #: labelled instruction sentences for the task (empty: none) -- truth, never rendered on its own
    steps: tuple[str, ...]
    variant: str
    platform: str


@dataclass(frozen=True)
class RenderedPage:
    text: Text
    structure: str
    html: str

    @property
    def url(self) -> str:
        return f"http://real-dev.test/{self.structure}/{self.text.pid}.html"


def load_texts(folder: Path = REAL_DEV) -> list[Text]:
    """Every text of real-dev with its task's query; [] when the folder is missing."""
    if not (folder / "pages.jsonl").exists():
        return []
    tasks = {}
    for line in (folder / "tasks.jsonl").read_text(encoding="utf-8").splitlines():
        task = json.loads(line)
        tasks[task["qid"]] = task
    texts = []
    for line in (folder / "pages.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        task = tasks[row["qid"]]
        texts.append(Text(row["qid"], row["pid"], task["query"], task["device"], task["app"], tuple(row["sentences"]),
                          tuple(row["steps"]), row["variant"], row["platform"]))
    return texts


def has_menu_path(text: Text) -> bool:
    return any(_MENU_PATH.search(s) for s in text.sentences)


def applies(text: Text, structure: str) -> bool:
    """Does the structure fit the text? (Only texts with a menu path make breadcrumb pages.)"""
    return structure != "breadcrumb" or has_menu_path(text)


# --- pieces of a page ---------------------------------------------------------------------


def _e(text: str) -> str:
    return html.escape(text, quote=False)


def _task_title(query: str) -> str:
    """"how to change wallpaper on android phone" -> "Change wallpaper on android phone"."""
    rest = re.sub(r"^how (?:to|do i|can i)\s+", "", query.strip(), flags=re.I)
    return rest[:1].upper() + rest[1:]


_RELATED = ["How to reset your phone to factory settings", "The best Android phones of the year",
            "How to free up storage space", "Fix a phone that will not charge", "How to back up your photos",
            "10 hidden features of your phone"]
_ADS = ["Advertisement", "Sponsored: Save 40% on the new Galaxy - shop now", "Get 3 months of VPN free. Sign up today!",
        "Ad: Switch to our unlimited plan and pay less"]


def _chrome(rng: random.Random, title: str, main: str) -> str:
    """The furniture of a real site around the page's main content."""
    crumbs = ("<nav aria-label='breadcrumb'><a href='/'>Home</a> &gt; <a href='/android'>Android</a> &gt; "
              "<a href='/settings'>Settings</a></nav>") if rng.random() < 0.5 else (
        "<div class='breadcrumbs'><a href='/'>Home</a> › <a href='/help'>Help</a> › How-to</div>")
    header = ("<header><div class='logo'>TechHelp</div><nav><ul><li><a href='/'>Home</a></li>"
              "<li><a href='/phones'>Phones</a></li><li><a href='/apps'>Apps</a></li>"
              "<li><a href='/deals'>Deals</a></li></ul></nav></header>")
    cookie = ("<div id='cookie-banner' class='cookie-consent'><p>We use cookies to improve your experience. "
              "Accept all cookies or manage your preferences.</p><button>Accept</button></div>")
    ad = f"<div class='ad-slot'><p>{_e(rng.choice(_ADS))}</p></div>"
    related = "".join(f"<li><a href='/r{n}'>{_e(t)}</a></li>" for n, t in enumerate(rng.sample(_RELATED, 4)))
    aside = (f"<aside class='sidebar'><h3>Related articles</h3><ul>{related}</ul></aside>" if rng.random() < 0.5
             else f"<div class='related-posts'><h3>You might also like</h3><ul>{related}</ul></div>")
    footer = ("<footer><p>&copy; 2025 TechHelp Media. All rights reserved.</p><ul><li><a href='/privacy'>Privacy</a>"
              "</li><li><a href='/terms'>Terms</a></li><li><a href='/contact'>Contact us</a></li></ul></footer>")
    return (f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>{_e(title)}</title>"
            "<script>window.ads = {slots: 3};</script></head>"
            f"<body>{cookie}{header}{crumbs}<main>{main}{ad}</main>{aside}{footer}</body></html>\n")


def _groups(sentences: tuple[str, ...]) -> list[list[str]]:
    """Sentences grouped into steps: a step starts at a sentence that reads like an action."""
    groups: list[list[str]] = []
    for s in sentences:
        if not groups or _STARTS_STEP.match(s) or len(groups[-1]) >= 3:
            groups.append([s])
        else:
            groups[-1].append(s)
    return groups


def _paragraphs(sentences: tuple[str, ...] | list[str], rng: random.Random) -> str:
    """Sentences as prose: paragraphs of two or three sentences."""
    out, i = [], 0
    while i < len(sentences):
        n = rng.choice((2, 3))
        out.append("<p>" + _e(" ".join(sentences[i:i + n])) + "</p>")
        i += n
    return "".join(out)


def _intro(text: Text) -> str:
    return (f"<p class='intro'>Updated March 2025. Wondering how to {_e(_task_title(text.query).lower())}? "
            "It only takes a minute once you know where to look.</p>")


# --- the structures -------------------------------------------------------------------------


def _ol(text: Text, rng: random.Random, others: list[Text]) -> tuple[str, str]:
    title = f"How to {_task_title(text.query).lower()}"
    style = rng.choice(("one", "one", "split", "nested"))
    if style == "split":  # one list per item, a screenshot between: <ol start="3">
        items = "".join(f"<ol start='{n}'><li>{_e(s)}</li></ol><figure><img src='/img/step{n}.png' alt=''>"
                        f"<figcaption>Screenshot {n}</figcaption></figure>"
                        for n, s in enumerate(text.sentences, start=1))
        return title, f"<article><h1>{_e(title)}</h1>{_intro(text)}{items}</article>"
    if style == "nested":  # a step's further sentences as sub-items
        items = "".join(f"<li>{_e(g[0])}" + ("<ul>" + "".join(f"<li>{_e(s)}</li>" for s in g[1:]) + "</ul>"
                                              if len(g) > 1 else "") + "</li>" for g in _groups(text.sentences))
    else:
        items = "".join(f"<li>{_e(s)}</li>" for s in text.sentences)
    return title, f"<article><h1>{_e(title)}</h1>{_intro(text)}<ol>{items}</ol></article>"


def _paragraph(text: Text, rng: random.Random, others: list[Text]) -> tuple[str, str]:
    title = f"How to {_task_title(text.query).lower()}"
    return title, (f"<article><h1>{_e(title)}</h1>{_intro(text)}"
                   f"<div class='entry-content'><p>{_e(' '.join(text.sentences))}</p></div></article>")


def _step_headings(text: Text, rng: random.Random, others: list[Text]) -> tuple[str, str]:
    title = f"How to {_task_title(text.query).lower()} (step by step)"
    tag = rng.choice(("h2", "h3"))
    style = rng.choice(("bare", "numbered", "step_titled"))
    parts = []
    for n, group in enumerate(_groups(text.sentences), start=1):
        if style == "bare":  # "Step 2" heading, the step in the paragraphs below
            head, body = f"Step {n}", group
        elif style == "numbered":  # "2. Tap Display." heading, what follows below
            head, body = f"{n}. {group[0]}", group[1:]
        else:  # "Step 2: Tap Display." heading
            head, body = f"Step {n}: {group[0]}", group[1:]
        parts.append(f"<{tag}>{_e(head)}</{tag}>" + "".join(f"<p>{_e(s)}</p>" for s in body))
    return title, f"<article><h1>{_e(title)}</h1>{_intro(text)}<div class='steps'>{''.join(parts)}</div></article>"


def _action_headings(text: Text, rng: random.Random, others: list[Text]) -> tuple[str, str]:
    title = f"{_task_title(text.query)}: a quick guide"
    tag = rng.choice(("h3", "h4"))
    parts = [f"<div class='step'><{tag}>{_e(g[0])}</{tag}>" + "".join(f"<p>{_e(s)}</p>" for s in g[1:]) + "</div>"
             for g in _groups(text.sentences)]
    return title, f"<article><h1>{_e(title)}</h1>{_intro(text)}{''.join(parts)}</article>"


def _table(text: Text, rng: random.Random, others: list[Text]) -> tuple[str, str]:
    title = f"How to {_task_title(text.query).lower()}"
    header = rng.choice((
        "<tr><th>Step</th><th>What to do</th></tr>",
        "<thead><tr><th>#</th><th>Instructions</th></tr></thead>",
        "<tr><td><strong>Step</strong></td><td><strong>Action</strong></td></tr>",
    ))
    rows = "".join(f"<tr><td>{n}</td><td>{_e(s)}</td></tr>" for n, s in enumerate(text.sentences, start=1))
    return title, (f"<article><h1>{_e(title)}</h1>{_intro(text)}"
                   f"<table class='steps-table'>{header}<tbody>{rows}</tbody></table></article>")


def _breadcrumb(text: Text, rng: random.Random, others: list[Text]) -> tuple[str, str]:
    title = f"Where to find the setting to {_task_title(text.query).lower()}"
    return title, f"<article><h1>{_e(title)}</h1>{_intro(text)}{_paragraphs(text.sentences, rng)}</article>"


def _answer(sentences: tuple[str, ...], rng: random.Random) -> str:
    """An answer's body: one paragraph per sentence, or prose paragraphs."""
    if rng.random() < 0.5:
        return "".join(f"<p>{_e(s)}</p>" for s in sentences)
    return _paragraphs(sentences, rng)


def _others(text: Text, others: list[Text], rng: random.Random, n: int) -> list[Text]:
    """Real texts of other tasks (with labelled steps): the other questions or tips on the page."""
    pool = [o for o in others if o.qid != text.qid and o.steps]
    seen, out = set(), []
    for o in rng.sample(pool, len(pool)):
        if o.qid not in seen:
            seen.add(o.qid)
            out.append(o)
        if len(out) == n:
            break
    return out


def _accordion(text: Text, rng: random.Random, others: list[Text]) -> tuple[str, str]:
    title = "Android settings: frequently asked questions"
    entries = _others(text, others, rng, 3)
    entries.insert(rng.randrange(len(entries) + 1), text)
    style = rng.choice(("details", "button", "aria", "script", "visible"))
    parts = []
    for n, t in enumerate(entries):
        question = f"How do I {_task_title(t.query).lower()}?"
        sentences = t.sentences if t is text else t.steps
        if style == "details":
            parts.append(f"<details><summary>{_e(question)}</summary><div>{_answer(sentences, rng)}</div></details>")
        elif style == "button":
            parts.append(f"<div class='faq-item'><button aria-expanded='false' aria-controls='faq{n}'>"
                         f"{_e(question)}</button><div id='faq{n}' class='faq-panel' hidden>"
                         f"{_answer(sentences, rng)}</div></div>")
        elif style == "aria":  # a panel hidden from screen readers too, after a control that expands it
            parts.append(f"<div class='qa-row'><div class='q' role='button' aria-expanded='false'>{_e(question)}"
                         f"</div><div class='a' aria-hidden='true'>{_answer(sentences, rng)}</div></div>")
        elif style == "script":  # a jQuery-style FAQ without ARIA: the answer hidden by style
            parts.append(f"<div class='faq-entry'><h3 class='faq-question'>{_e(question)}</h3>"
                         f"<div class='faq-answer' style='display: none;'>{_answer(sentences, rng)}</div></div>")
        else:
            parts.append(f"<div class='faq-item'><h3>{_e(question)}</h3><div class='faq-answer'>"
                         f"{_answer(sentences, rng)}</div></div>")
    return title, f"<article><h1>{_e(title)}</h1><div class='faq'>{''.join(parts)}</div></article>"


def _qa(text: Text, rng: random.Random, others: list[Text]) -> tuple[str, str]:
    title = f"How do I {_task_title(text.query).lower()}?"
    lines = rng.random() < 0.5
    body = ("<p>" + "<br>".join(_e(s) for s in text.sentences) + "</p>") if lines else _answer(text.sentences, rng)
    main = (f"<div class='question'><h1>{_e(title)}</h1><p>I got a new phone last week and I can't work out how to "
            f"{_e(_task_title(text.query).lower())}. I looked everywhere. Any ideas?</p>"
            "<div class='meta'>asked by newbie_22</div></div>"
            "<div class='answers'><h2>3 Answers</h2>"
            "<div class='answer'><div class='votes'>2</div><p>Same problem here, following.</p></div>"
            f"<div class='answer accepted-answer'><div class='votes'>41</div>{body}"
            "<div class='meta'>answered by helper_pro</div></div>"
            "<div class='answer'><div class='votes'>5</div><p>Thanks, that worked for me!</p></div></div>")
    return title, main


_FORUM_USERS = ["droid_fan88", "Kev_M", "techgranny", "pixelpusher", "sarah.j", "mod_Andy"]


def _post(rng: random.Random, user: str, n: int, body: str, signature: bool) -> str:
    """One post of a thread: the user panel, the date, the body and perhaps a signature."""
    panel = (f"<div class='postprofile'><a class='username' href='/u/{user}'>{_e(user)}</a>"
             f"<span class='posts'>Posts: {rng.randint(3, 4000):,}</span><span>Joined: Mar 2019</span></div>")
    sig = ("<div class='signature'>Galaxy S21 | Android 13 | sent from my phone</div>" if signature else "")
    return (f"<div class='post' id='p{n}'>{panel}<div class='postbody'><p class='author'>Posted "
            f"{rng.randint(1, 28)} Jan 2024, {rng.randint(1, 12)}:{rng.randint(10, 59)} pm</p>"
            f"<div class='content'>{body}</div>{sig}"
            "<ul class='post-buttons'><li>Quote</li><li>Report</li><li>Like</li></ul></div></div>")


def _forum(text: Text, rng: random.Random, others: list[Text]) -> tuple[str, str]:
    title = f"{_task_title(text.query)}?"
    asker, helper, other = rng.sample(_FORUM_USERS, 3)
    style = rng.choice(("lines", "paragraphs", "list"))
    if style == "lines":  # a post typed as lines: one <br> per sentence
        answer = "<br>".join(_e(s) for s in text.sentences)
    elif style == "paragraphs":
        answer = _paragraphs(text.sentences, rng)
    else:  # a BBCode [list]
        answer = "<ul>" + "".join(f"<li>{_e(s)}</li>" for s in text.sentences) + "</ul>"
    question = (f"Hi all, how do I {_e(_task_title(text.query).lower())}? I went into Settings but I can't find "
                "it anywhere. Thanks in advance!")
    posts = [
        _post(rng, asker, 1, f"<p>{question}</p>", False),
        _post(rng, other, 2, "<p>Which phone and Android version do you have?</p>", True),
        _post(rng, helper, 3, answer, True),
        _post(rng, asker, 4, f"<blockquote><cite>{_e(helper)} wrote:</cite>{_e(text.sentences[0])}</blockquote>"
                             "<p>Thanks, that worked for me. Marking as solved.</p>", False),
    ]
    main = (f"<div class='topic'><h1 class='topic-title'>{_e(title)}</h1><div class='pagination'>Page 1 of 1</div>"
            f"{''.join(posts)}</div>")
    return title, main


def _listicle(text: Text, rng: random.Random, others: list[Text]) -> tuple[str, str]:
    tips = _others(text, others, rng, rng.choice((3, 4, 5)))
    tips.insert(rng.randrange(len(tips) + 1), text)
    title = f"{len(tips)} Android settings tips everyone should know"
    tag = rng.choice(("h2", "h3"))
    parts = []
    for n, t in enumerate(tips, start=1):
        sentences = t.sentences if t is text else t.steps
        parts.append(f"<{tag}>{n}. {_e(_task_title(t.query))}</{tag}>{_paragraphs(sentences, rng)}")
    return title, f"<article><h1>{_e(title)}</h1>{_intro(text)}{''.join(parts)}</article>"


_RENDERERS: dict[str, Callable[[Text, random.Random, list[Text]], tuple[str, str]]] = {
    "ol": _ol, "paragraph": _paragraph, "step_headings": _step_headings, "action_headings": _action_headings,
    "table": _table, "breadcrumb": _breadcrumb, "accordion": _accordion, "qa": _qa, "listicle": _listicle,
    "forum": _forum,
}


def render(text: Text, structure: str, others: Optional[list[Text]] = None, seed: int = 0) -> RenderedPage:
    """The page of ``text`` in ``structure``; ``others`` supply the other questions or tips of a page."""
    rng = random.Random(f"{text.pid}-{structure}-{seed}")
    title, main = _RENDERERS[structure](text, rng, others or [])
    return RenderedPage(text, structure, _chrome(rng, title, main))


def render_all(texts: list[Text], structures: tuple[str, ...] = STRUCTURES, seed: int = 0) -> list[RenderedPage]:
    return [render(t, s, texts, seed) for s in structures for t in texts if applies(t, s)]
