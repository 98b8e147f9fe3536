"""How-to pages: what each page says (its variant) and how it looks (its style).

A :class:`PagePlan` fixes everything about one page: its URL, style, content
variant, the instruction sentences it shows and the *gold action sequence* (what
a person following it literally would do). ``render_page`` turns a plan into
HTML. The plan is kept in a sidecar file by the builder; nothing of it but
the HTML reaches the pipeline.

Variants (what the page says)
    ``correct``         the right steps, plainly worded
    ``paraphrased``     the right steps in varied wording or as a breadcrumb
    ``outdated``        the path of an older app/OS version
    ``other_platform``  the path of another platform (iPhone, another Android skin)
    ``partial``         the right steps without the last one or two
    ``bait``            unrelated numbered lists beside the right steps, or beside none
    ``no_steps``        talk about the topic, no instructions

Styles (how it looks)
    ``help_centre``, ``blog`` (step headings), ``forum`` (answers),
    ``listicle``, ``video`` (a video page, never steps), ``seo_spam``.
"""

from __future__ import annotations

import html
import random
from dataclasses import asdict, dataclass, field
from typing import Optional

from howtobench.tasks import AltPath, Step, Task, gold_actions
from howtobench.wording import render_steps
from verirank_core.json_types import JSONObject

__all__ = ["VARIANTS", "STYLES", "RELEVANT_BY_DESIGN", "PagePlan", "plan_pages", "render_page", "plain_text"]

VARIANTS = ("correct", "paraphrased", "outdated", "other_platform", "partial", "bait", "no_steps")
STYLES = ("help_centre", "blog", "forum", "listicle", "video", "seo_spam")
#: variants written to answer the question on the target world (the qrels are still checked by replay)
RELEVANT_BY_DESIGN = ("correct", "paraphrased", "bait_with_steps")

# How often each style hosts each kind of content; video pages never carry steps.
_STYLE_WEIGHTS: dict[str, dict[str, float]] = {
    "steps": {"help_centre": 3, "blog": 4, "forum": 3, "listicle": 3, "seo_spam": 2},
    "none": {"help_centre": 1, "blog": 2, "forum": 3, "listicle": 2, "video": 5, "seo_spam": 3},
}
_NONRELEVANT_WEIGHTS = {"outdated": 4, "other_platform": 4, "partial": 3, "no_steps": 5, "bait": 2}

_SITES: dict[str, list[tuple[str, str]]] = {
    "help_centre": [("support.phonecare.example", "PhoneCare Support"), ("help.droidguide.example", "DroidGuide Help"),
                    ("answers.mobilehelpdesk.example", "Mobile Helpdesk")],
    "blog": [("www.techtipsdaily.example", "TechTips Daily"), ("androidnerd.example", "Android Nerd"),
             ("www.gadgetbrief.example", "Gadget Brief"), ("blog.appsavvy.example", "AppSavvy Blog")],
    "forum": [("forum.xdevs.example", "XDevs Forum"), ("community.phonetalk.example", "PhoneTalk Community"),
              ("discuss.androidusers.example", "Android Users")],
    "listicle": [("www.top10phonehacks.example", "Top10 Phone Hacks"), ("listwise.example", "Listwise Tech")],
    "video": [("www.vidtube.example", "VidTube"), ("clips.howtovids.example", "HowToVids")],
    "seo_spam": [("best-phone-fix-2024.example", "Best Phone Fix"), ("freeandroidtricks.example", "Free Android Tricks"),
                 ("mobile-solution-hub.example", "Mobile Solution Hub")],
}


@dataclass
class PagePlan:
    """Everything that defines one page (the builder stores it in the hidden sidecar)."""

    qid: str
    url: str
    host: str
    site: str
    style: str
    variant: str
    #: bait pages: whether the right steps are there too
    bait_with_steps: bool
    #: the phone/OS the page claims to be about
    platform: str
    title: str
    query: str
    topic: str
    app_name: str
    date: str
    #: instruction sentences shown on the page («labels» marked)
    steps: list[str]
    #: what a person following the page literally does
    gold: list[Step]
    #: unrelated numbered lists (bait)
    bait: list[list[str]] = field(default_factory=list)
    seed: int = 0

    def to_json(self) -> JSONObject:
        out = asdict(self)
        out["gold"] = [s.model_dump(exclude_defaults=True) for s in self.gold]
        return out


# ----------------------------------------------------------------- planning

def _slug(text: str) -> str:
    keep = "".join(c.lower() if c.isalnum() else "-" for c in text)
    return "-".join(p for p in keep.split("-") if p)[:60]


def _url(style: str, host: str, topic: str, platform: str, rng: random.Random) -> str:
    slug = _slug(f"{topic} {platform}")
    n = rng.randrange(10_000, 9_999_999)
    if style == "help_centre":
        return f"https://{host}/answer/{n}"
    if style == "blog":
        return f"https://{host}/{rng.randrange(2019, 2025)}/{rng.randrange(1, 13):02d}/{slug}/"
    if style == "forum":
        return f"https://{host}/t/{slug}/{n}"
    if style == "listicle":
        return f"https://{host}/{slug}-{rng.randrange(3, 12)}-ways"
    if style == "video":
        alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ0123456789_-"
        return f"https://{host}/watch?v={''.join(rng.choice(alphabet) for _ in range(11))}"
    return f"https://{host}/{slug}-{n}.html"


def _title(style: str, topic: str, platform: str, rng: random.Random) -> str:
    Topic = topic[0].upper() + topic[1:]
    Cap = " ".join(w if w[:1].isupper() else w.capitalize() for w in topic.split())
    options = {
        "help_centre": [f"{Topic} - {platform} Help", f"{Topic} on {platform}", f"Change settings: {topic}"],
        "blog": [f"How to {Cap} on {platform}", f"How to {Cap} ({platform} Guide)", f"{Cap}: A Step-by-Step Guide for {platform}"],
        "forum": [f"How do I {topic}? ({platform})", f"[Help] Can't figure out how to {topic}", f"{platform}: where is the option to {topic}?"],
        "listicle": [f"{rng.randrange(3, 9)} Ways to {Cap} on {platform}", f"{Cap}? Here Are {rng.randrange(4, 11)} Quick Tips"],
        "video": [f"How To {Cap} - {platform} (Easy Tutorial)", f"{Cap} in 60 seconds | {platform}"],
        "seo_spam": [f"{topic} {platform.lower()} 100% working method {rng.randrange(2019, 2025)} free",
                     f"[SOLVED] {topic} - best easy fix {platform}"],
    }[style]
    return rng.choice(options)


def _bait_lists(rng: random.Random) -> list[list[str]]:
    lists = rng.sample(_BAIT_LISTS, k=rng.choice([1, 2]))
    return [rng.sample(items, k=min(len(items), rng.randrange(4, 7))) for items in lists]


def _pick_style(kind: str, rng: random.Random) -> str:
    weights = _STYLE_WEIGHTS[kind]
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def _pick_variants(task: Task, n_pages: int, rng: random.Random) -> list[str]:
    """``n_pages`` variants: one to three written to be right, the rest not."""
    n_right = min(n_pages, rng.choice([1, 1, 1, 2, 2, 3]))
    right = [rng.choice(["correct", "correct", "paraphrased", "bait_with_steps"]) for _ in range(n_right)]
    weights = dict(_NONRELEVANT_WEIGHTS)
    if not task.outdated:
        weights.pop("outdated")
    if not task.other_platforms:
        weights.pop("other_platform")
    wrong = rng.choices(list(weights), weights=list(weights.values()), k=n_pages - n_right)
    out = right + wrong
    rng.shuffle(out)
    return out


def _content(task: Task, variant: str, rng: random.Random) -> tuple[str, list[str], list[Step], Optional[AltPath]]:
    """(platform, step sentences, gold actions, alternative used) of one variant."""
    alt: Optional[AltPath] = None
    if variant in ("correct", "bait_with_steps"):
        gold = gold_actions(task)
        steps = render_steps(gold, "plain" if variant == "correct" or rng.random() < 0.5 else "paraphrased", rng)
    elif variant == "paraphrased":
        gold = gold_actions(task)
        steps = render_steps(gold, rng.choice(["paraphrased", "paraphrased", "breadcrumb"]), rng)
    elif variant in ("outdated", "other_platform"):
        alt = rng.choice(task.outdated if variant == "outdated" else task.other_platforms)
        gold = gold_actions(task, alt.path, alt.app)
        steps = render_steps(gold, rng.choice(["plain", "paraphrased"]), rng)
    elif variant == "partial":
        cut = 1 if len(task.path) < 3 else rng.choice([1, 2])
        gold = gold_actions(task, task.path[:-cut])
        steps = render_steps(gold, rng.choice(["plain", "paraphrased"]), rng)
    else:  # no_steps, bait without steps
        gold, steps = [], []
    return (alt.platform if alt else task.platform), steps, gold, alt


def plan_pages(task: Task, qid: str, query: str, n_pages: int, seed: int) -> list[PagePlan]:
    """The ``n_pages`` result pages of one query (deterministic in ``seed`` and ``qid``)."""
    rng = random.Random(f"howtobench:{seed}:{qid}")
    plans: list[PagePlan] = []
    urls: set[str] = set()
    for variant in _pick_variants(task, n_pages, rng):
        page_rng = random.Random(rng.getrandbits(64))
        platform, steps, gold, alt = _content(task, variant, page_rng)
        has_steps = bool(steps)
        style = _pick_style("steps" if has_steps else "none", page_rng)
        host, site = page_rng.choice(_SITES[style])
        url = _url(style, host, task.topic, platform, page_rng)
        while url in urls:  # same slug on the same host: add a page number
            url = url.rstrip("/") + f"-{page_rng.randrange(2, 99)}" + ("/" if url.endswith("/") else "")
        urls.add(url)
        year = page_rng.randrange(2017, 2021) if variant == "outdated" else page_rng.randrange(2021, 2026)
        plans.append(PagePlan(
            qid=qid, url=url, host=host, site=site, style=style,
            variant="bait" if variant.startswith("bait") else variant,
            bait_with_steps=variant == "bait_with_steps",
            platform=platform, title=_title(style, task.topic, platform, page_rng), query=query,
            topic=task.topic, app_name=(alt.app if alt and alt.app else task.app_name),
            date=f"{year}-{page_rng.randrange(1, 13):02d}-{page_rng.randrange(1, 29):02d}",
            steps=steps, gold=gold,
            bait=_bait_lists(page_rng) if variant.startswith("bait") else [],
            seed=page_rng.getrandbits(32),
        ))
    return plans


# ---------------------------------------------------------------- rendering

def _label_html(text: str, how: str) -> str:
    """Escape ``text`` and render its «labels» as bold, quoted or plain."""
    out = html.escape(text, quote=False)
    open_, close = {"bold": ("<strong>", "</strong>"), "quote": ("&quot;", "&quot;"), "plain": ("", "")}[how]
    return out.replace("«", open_).replace("»", close)


def _strip_marks(text: str) -> str:
    return text.replace("«", "").replace("»", "")


def _fill(template: str, plan: PagePlan) -> str:
    return template.format(topic=plan.topic, platform=plan.platform, app=plan.app_name, site=plan.site,
                           query=plan.query)


def _paras(bank: list[str], plan: PagePlan, rng: random.Random, k: int) -> str:
    return "\n".join(f"<p>{html.escape(_fill(t, plan))}</p>" for t in rng.sample(bank, k=min(k, len(bank))))


def _ol(items: list[str], how: str, cls: str = "") -> str:
    attr = f' class="{cls}"' if cls else ""
    return f"<ol{attr}>\n" + "\n".join(f"  <li>{_label_html(s, how)}</li>" for s in items) + "\n</ol>"


def _bait_html(plan: PagePlan, rng: random.Random) -> str:
    out = []
    for items in plan.bait:
        heading = rng.choice(_BAIT_HEADINGS)
        out.append(f"<h2>{html.escape(heading)}</h2>\n" + _ol(items, "plain"))
    return "\n".join(out)


def _head(plan: PagePlan, css: str) -> str:
    desc = html.escape(_strip_marks(plain_text(plan))[:150])
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{html.escape(plan.title)}</title>\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<meta name=\"description\" content=\"{desc}\">\n"
        f"<link rel=\"stylesheet\" href=\"/static/{css}.css\">\n"
        "<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments);}"
        f"gtag('js',new Date());gtag('config','G-{plan.seed % 10**8:08d}');</script>\n"
        "</head>\n"
    )


def _footer(plan: PagePlan) -> str:
    return (f"<footer>\n<p>&copy; {plan.date[:4]} {html.escape(plan.site)}. All rights reserved.</p>\n"
            "<nav><a href=\"/privacy\">Privacy</a> · <a href=\"/terms\">Terms</a> · <a href=\"/contact\">Contact</a>"
            " · <a href=\"/cookies\">Cookie settings</a></nav>\n</footer>\n"
            "<script src=\"/static/consent.js\" async></script>\n</body>\n</html>\n")


def _ad(rng: random.Random) -> str:
    return (f"<div class=\"ad-slot\" data-ad-unit=\"{rng.randrange(10**6, 10**7)}\">"
            f"<span class=\"ad-label\">Advertisement</span><a href=\"https://ads.adnet.example/click?id={rng.randrange(10**8)}\">"
            f"{html.escape(rng.choice(_ADS))}</a></div>")


def _help_centre(plan: PagePlan, rng: random.Random) -> str:
    body = [f"<h1>{html.escape(_strip_marks(plan.title))}</h1>", _paras(_INTROS, plan, rng, 1)]
    if plan.steps:
        body.append(f"<h2>{html.escape(plan.platform)}</h2>")
        body.append(_ol(plan.steps, "bold", "steps"))
        body.append(f"<div class=\"tip\"><strong>Tip:</strong> {html.escape(_fill(rng.choice(_TIPS), plan))}</div>")
    else:
        body.append(_paras(_NO_STEPS, plan, rng, 2))
    if plan.bait:
        body.append(_bait_html(plan, rng))
    related = "".join(f"<li><a href=\"/answer/{rng.randrange(10**5, 10**7)}\">{html.escape(r)}</a></li>"
                      for r in rng.sample(_RELATED, 4))
    return (_head(plan, "help") + "<body>\n<header class=\"hc-header\">"
            f"<a class=\"logo\" href=\"/\">{html.escape(plan.site)}</a>"
            "<form role=\"search\" action=\"/search\"><input type=\"search\" name=\"q\" placeholder=\"Describe your issue\"></form>"
            "<nav><a href=\"/\">Help Center</a><a href=\"/community\">Community</a><a href=\"/contact\">Contact us</a></nav></header>\n"
            f"<div class=\"breadcrumbs\"><a href=\"/\">Help</a> › <a href=\"/apps\">{html.escape(plan.app_name)}</a></div>\n"
            "<main>\n<article class=\"answer\">\n" + "\n".join(body) + "\n</article>\n"
            f"<aside><h2>Related articles</h2><ul>{related}</ul></aside>\n"
            "<section class=\"feedback\">Was this helpful? <button>Yes</button> <button>No</button></section>\n</main>\n"
            + _footer(plan))


def _blog(plan: PagePlan, rng: random.Random) -> str:
    author = rng.choice(_AUTHORS)
    body = [f"<h1>{html.escape(plan.title)}</h1>",
            f"<p class=\"byline\">By {author} · Updated {plan.date} · {rng.randrange(2, 9)} min read</p>",
            _paras(_INTROS, plan, rng, 2), _ad(rng)]
    if plan.steps:
        for i, step in enumerate(plan.steps, start=1):
            body.append(f"<h3>Step {i}: {_label_html(step, 'plain')}</h3>")
            body.append(f"<figure><img src=\"/img/{_slug(plan.topic)}-{i}.png\" alt=\"screenshot of step {i}\">"
                        f"<figcaption>{html.escape(rng.choice(_CAPTIONS))}</figcaption></figure>")
    else:
        body.append(_paras(_NO_STEPS, plan, rng, 3))
    if plan.bait:
        body.append(_bait_html(plan, rng))
    body.append("<h2>Final thoughts</h2>" + _paras(_OUTROS, plan, rng, 1))
    comments = "".join(f"<li class=\"comment\"><b>{html.escape(rng.choice(_NAMES))}</b> "
                       f"<p>{html.escape(_fill(c, plan))}</p></li>" for c in rng.sample(_COMMENTS, 3))
    sidebar = "".join(f"<li><a href=\"/{_slug(p)}/\">{html.escape(p)}</a></li>" for p in rng.sample(_RELATED, 5))
    return (_head(plan, "blog") + "<body>\n<header class=\"site-header\">"
            f"<a class=\"brand\" href=\"/\">{html.escape(plan.site)}</a><nav><a href=\"/android\">Android</a>"
            "<a href=\"/iphone\">iPhone</a><a href=\"/reviews\">Reviews</a><a href=\"/deals\">Deals</a></nav></header>\n"
            "<div class=\"layout\">\n<main><article class=\"post\">\n" + "\n".join(body) + "\n</article>\n"
            f"<section id=\"comments\"><h2>3 Comments</h2><ol class=\"comments\">{comments}</ol></section></main>\n"
            f"<aside class=\"sidebar\"><h2>Popular posts</h2><ul>{sidebar}</ul>{_ad(rng)}</aside>\n</div>\n"
            + _footer(plan))


def _forum(plan: PagePlan, rng: random.Random) -> str:
    asker, helper = rng.sample(_NAMES, 2)
    question = html.escape(_fill(rng.choice(_QUESTIONS), plan))
    posts = [f"<div class=\"post question\"><div class=\"meta\"><b>{asker}</b> · {plan.date}</div>"
             f"<h1>{html.escape(plan.title)}</h1><p>{question}</p></div>"]
    if plan.steps:
        if rng.random() < 0.5:
            lines = "<br>\n".join(f"{i}. {_label_html(s, 'plain')}" for i, s in enumerate(plan.steps, 1))
            answer = f"<p>{html.escape(rng.choice(_FORUM_OPENERS))}</p>\n<p>{lines}</p>"
        else:
            answer = f"<p>{html.escape(rng.choice(_FORUM_OPENERS))}</p>\n" + _ol(plan.steps, "quote")
        posts.append(f"<div class=\"post answer accepted\"><div class=\"meta\"><b>{helper}</b> · "
                     f"<span class=\"votes\">{rng.randrange(3, 250)} points</span> · Accepted answer</div>{answer}</div>")
    for text in rng.sample(_FORUM_REPLIES, rng.randrange(2, 4)):
        posts.append(f"<div class=\"post answer\"><div class=\"meta\"><b>{html.escape(rng.choice(_NAMES))}</b> · "
                     f"<span class=\"votes\">{rng.randrange(0, 40)} points</span></div><p>{html.escape(_fill(text, plan))}</p></div>")
    if plan.bait:
        posts.insert(1, "<div class=\"post answer\">" + _bait_html(plan, rng) + "</div>")
    return (_head(plan, "forum") + "<body>\n<header class=\"forum-header\">"
            f"<a href=\"/\">{html.escape(plan.site)}</a><nav><a href=\"/latest\">Latest</a><a href=\"/top\">Top</a>"
            "<a href=\"/login\">Log in</a></nav></header>\n<main class=\"thread\">\n" + "\n".join(posts)
            + f"\n</main>\n<aside>{_ad(rng)}</aside>\n" + _footer(plan))


def _listicle(plan: PagePlan, rng: random.Random) -> str:
    body = [f"<h1>{html.escape(plan.title)}</h1>", f"<p class=\"byline\">{plan.date}</p>", _paras(_INTROS, plan, rng, 1)]
    methods = rng.sample(_METHODS, k=rng.randrange(2, 4))
    n = 1
    if plan.steps:
        body.append(f"<h2>{n}. Use the {html.escape(plan.app_name)} app</h2>")
        body.append(_ol(plan.steps, rng.choice(["bold", "plain"])))
        n += 1
    for m in methods:
        body.append(f"<h2>{n}. {html.escape(_fill(m[0], plan))}</h2><p>{html.escape(_fill(m[1], plan))}</p>")
        body.append(_ad(rng) if n % 2 else "")
        n += 1
    if plan.bait:
        body.append(_bait_html(plan, rng))
    body.append(_paras(_OUTROS, plan, rng, 1))
    return (_head(plan, "list") + "<body>\n<header><a href=\"/\">" + html.escape(plan.site) + "</a>"
            "<nav><a href=\"/tech\">Tech</a><a href=\"/lists\">Lists</a><a href=\"/quiz\">Quizzes</a></nav></header>\n"
            "<main><article>\n" + "\n".join(b for b in body if b) + "\n</article></main>\n" + _footer(plan))


def _video(plan: PagePlan, rng: random.Random) -> str:
    views = f"{rng.randrange(1, 999)},{rng.randrange(100, 999)} views"
    chapters = "".join(f"<li>{m}:{s:02d} {html.escape(c)}</li>" for (m, s), c in
                       zip(sorted((rng.randrange(0, 4), rng.randrange(0, 60)) for _ in range(4)), rng.sample(_CHAPTERS, 4)))
    comments = "".join(f"<li><b>@{html.escape(rng.choice(_NAMES).lower().replace(' ', ''))}</b> "
                       f"{html.escape(_fill(c, plan))}</li>" for c in rng.sample(_VIDEO_COMMENTS, 4))
    body = (f"<div id=\"player\" class=\"video-player\" data-video-id=\"{plan.url[-11:]}\"><video controls "
            f"poster=\"/thumbs/{plan.seed}.jpg\"></video></div>\n<h1>{html.escape(plan.title)}</h1>\n"
            f"<div class=\"video-meta\">{views} · {plan.date}</div>\n"
            f"<div class=\"description\"><p>{html.escape(_fill(rng.choice(_VIDEO_DESCRIPTIONS), plan))}</p>"
            f"<p>Chapters:</p><ul class=\"chapters\">{chapters}</ul><p>#android #howto #{_slug(plan.topic).replace('-', '')}</p></div>\n")
    if plan.bait:
        body += _bait_html(plan, rng)
    return (_head(plan, "video") + "<body>\n<header class=\"masthead\"><a href=\"/\">" + html.escape(plan.site)
            + "</a><form action=\"/results\"><input name=\"search_query\" placeholder=\"Search\"></form></header>\n"
            f"<main>{body}<section class=\"comments\"><h2>Comments</h2><ul>{comments}</ul></section></main>\n"
            f"<aside class=\"up-next\">{_ad(rng)}</aside>\n" + _footer(plan))


def _seo_spam(plan: PagePlan, rng: random.Random) -> str:
    kw = html.escape(plan.query)
    body = [f"<h1>{html.escape(plan.title)}</h1>", _ad(rng),
            f"<p>Are you searching for {kw}? You are at the right place. {kw} is a very common question and in this "
            f"article about {kw} we will tell you everything about {kw} step by step. Read till the end!</p>",
            _paras(_SPAM, plan, rng, 3), _ad(rng)]
    if plan.steps:
        body.append(f"<h2>{kw} – working method</h2>")
        body.append(_ol(plan.steps, "plain"))
    else:
        body.append(_paras(_NO_STEPS, plan, rng, 2))
    if plan.bait:
        body.append(_bait_html(plan, rng))
    body += [_ad(rng), f"<h2>FAQ about {kw}</h2>", _paras(_SPAM, plan, rng, 2),
             f"<p class=\"tags\">Tags: {kw}, {html.escape(plan.topic)}, {html.escape(plan.platform)}, android tricks, "
             "mobile tips 2024, free, latest</p>"]
    return (_head(plan, "spam") + "<body>\n<div class=\"popup\" id=\"newsletter\">Subscribe for FREE tricks! "
            "<button>Allow</button></div>\n<header><a href=\"/\">" + html.escape(plan.site) + "</a></header>\n"
            "<main>" + "\n".join(body) + "</main>\n" + _footer(plan))


_RENDERERS = {"help_centre": _help_centre, "blog": _blog, "forum": _forum, "listicle": _listicle,
              "video": _video, "seo_spam": _seo_spam}


def render_page(plan: PagePlan) -> str:
    """The page's HTML (deterministic in the plan)."""
    return _RENDERERS[plan.style](plan, random.Random(plan.seed))


def plain_text(plan: PagePlan) -> str:
    """A short description of the page for the search snippet."""
    rng = random.Random(plan.seed + 1)
    if plan.style == "video":
        return _fill(rng.choice(_VIDEO_DESCRIPTIONS), plan)
    if plan.style == "seo_spam":
        return f"Are you searching for {plan.query}? You are at the right place. Read till the end!"
    return _fill(rng.choice(_INTROS), plan)


# -------------------------------------------------------------- text banks
# Written for HowToBench; {topic}, {platform}, {app}, {site} and {query} are filled per page.

_INTROS = [
    "Want to {topic}? It only takes a few seconds once you know where the option lives on {platform}.",
    "Many people ask how to {topic}. The option is a little hidden, so here is exactly where to find it.",
    "If you have just set up a new phone you may want to {topic}. This guide walks you through it.",
    "Phone makers move settings around with every update, which is why it is hard to {topic} sometimes.",
    "This article explains how to {topic} on {platform}, with notes for older versions.",
    "Whether you are on a brand new phone or an older one, you can {topic} from the {app} app.",
    "Here is a quick way to {topic}. No extra apps are needed.",
]
_NO_STEPS = [
    "The ability to {topic} depends on your phone model and software version, so results may vary.",
    "We tested this on several phones and the experience was not the same on every device.",
    "Some carriers customise their phones, and the menus you see may look different from ours.",
    "If the option is missing, check whether your phone has a pending software update.",
    "Google and the phone makers have changed this feature a lot over the last few years.",
    "In our review we found the feature useful, although battery savings were modest.",
    "Before you change anything, it is worth backing up your phone in case something goes wrong.",
    "There is no single answer for every device, which is why so many people search for {query}.",
]
_OUTROS = [
    "That's all there is to it. Let us know in the comments if this worked for you.",
    "If this guide helped, share it with a friend who keeps asking how to {topic}.",
    "Settings can change after updates, so bookmark this page; we keep it up to date.",
]
_TIPS = [
    "You can also search for the setting with the magnifying glass at the top of {app}.",
    "Options may be named differently if your phone uses another language.",
    "Changes take effect immediately; you do not need to restart the phone.",
]
_RELATED = [
    "Change your wallpaper", "Back up your phone", "Free up storage space", "Update your phone's software",
    "Turn on Do Not Disturb", "Find your phone's model number", "Share your screen", "Set up fingerprint unlock",
    "Change the ringtone", "Connect to a Wi-Fi network", "Transfer data to a new phone", "Take a screenshot",
]
_AUTHORS = ["Priya Raman", "Marco Bellini", "Hannah Ode", "Tom Whitaker", "Aiko Tanaka", "Luis Ortega"]
_NAMES = ["Sam Carter", "jpeters", "Noor A.", "techgeek99", "Lena M.", "droidfan", "K. Osei", "mobileMike",
          "Ruth B", "pixelpro", "Ana Lima", "d_kowalski"]
_CAPTIONS = ["Screenshot: the menu you should see", "The option is highlighted", "Your screen may look slightly different"]
_COMMENTS = [
    "Thanks, this worked on my phone!", "The menu looks different on mine, any idea why?",
    "Finally! I was looking for this for ages.", "Does this also work on tablets?",
    "Worked after the last update, thank you.", "My phone doesn't have this option at all.",
]
_QUESTIONS = [
    "I've been looking everywhere but I can't find how to {topic}. Any help appreciated.",
    "Just got a new phone and want to {topic}. Where is this setting now?",
    "After the update I can't find the option to {topic} anymore. Did they remove it?",
    "Is it possible to {topic}? Searched {query} but the guides don't match my menus.",
]
_FORUM_OPENERS = ["This is how I did it:", "Here you go:", "Try this, worked for me:", "On my phone it's:"]
_FORUM_REPLIES = [
    "Same question here, following.", "Depends on your phone model honestly.",
    "Did you try restarting the phone first?", "Mine doesn't have that menu, weird.",
    "There used to be an app for that but it's gone from the store.", "Thanks, marking as solved.",
    "Why do they keep moving settings around with every update?", "Try searching in the settings search bar.",
]
_METHODS = [
    ("Ask the Google Assistant", "Say \"Hey Google\" and ask it to {topic}. This works on many phones but not all."),
    ("Use a third-party app", "Several free apps in the store promise to {topic}, though most show ads."),
    ("Check for a software update", "Updates sometimes add or move the option to {topic}."),
    ("Use the Quick Settings panel", "Swipe down from the top of the screen and look for a tile; not every phone has one."),
    ("Restart your phone", "If nothing changes after you {topic}, a quick restart often helps."),
]
_CHAPTERS = ["Intro", "Why you might want this", "Where to find it", "Result", "Bonus tip", "Outro", "Subscribe!"]
_VIDEO_DESCRIPTIONS = [
    "In this video I show you how to {topic} on {platform}. Quick and easy tutorial. Like and subscribe for more!",
    "Learn how to {topic}. If this video helped, leave a comment with your phone model.",
    "{topic} - full tutorial for {platform}. Timestamps below.",
]
_VIDEO_COMMENTS = [
    "Thank you so much bro", "Didn't work on my phone", "Who is watching this in 2024?",
    "Straight to the point, thanks", "My menu looks totally different", "You saved me so much time",
]
_SPAM = [
    "We have tested this {query} trick on all the latest phones and it is 100% working. Many users searched "
    "{query} and found our guide the best one on the internet.",
    "Before we start, please note that {topic} is very easy and anyone can do it. Just follow the simple guide "
    "and also check our other articles about android tricks.",
    "{platform} is one of the most popular systems. People love it. That is why {query} is trending today and "
    "this is the complete guide for 2024.",
    "Do not forget to share this article about {query} with your friends on social media. Also subscribe to "
    "our notifications so you never miss a trick.",
    "Disclaimer: {site} is not responsible for any damage. All trademarks belong to their owners. "
    "This post may contain affiliate links.",
]
_ADS = ["Top 5 VPNs of the year – 70% off", "Your phone may be slow. Clean it now!", "Best phone cases – free delivery",
        "Compare mobile plans in 30 seconds", "Unlock premium themes today"]
_BAIT_HEADINGS = ["You might also like", "More tips", "Trending now", "Before you go", "Quick tips"]
_BAIT_LISTS = [
    ["Lower your screen brightness.", "Close apps you are not using.", "Turn off location when you don't need it.",
     "Use a dark wallpaper.", "Keep your software up to date.", "Avoid extreme temperatures."],
    ["Tap the camera icon twice to open it quickly.", "Press and hold the home screen to add widgets.",
     "Swipe down with two fingers to open Quick Settings.", "Long-press an app icon to see shortcuts.",
     "Double-tap the status bar to scroll to the top."],
    ["Choose a strong screen lock.", "Review app permissions every month.", "Turn on Find My Device.",
     "Back up your photos to the cloud.", "Remove apps you no longer use."],
    ["Open the Play Store and tap your profile icon.", "Select Manage apps and device.", "Tap Update all.",
     "Restart the phone when the updates finish."],
    ["Clean the charging port gently.", "Use the charger that came with the phone.", "Don't charge overnight every night.",
     "Remove the case while charging if it gets hot."],
]
