"""The heuristic extractor: pick the page's instruction block for the query, without an LLM.

For one cleaned page it

1. refuses pages in a language the user does not read (``extract.languages``,
   English by default: the product answers English queries, so German steps
   for an English query count as "no steps"), and keyword-stuffed pages;
2. finds candidate blocks (lists, numbered steps, menu paths, runs of
   instructions: see ``blocks.py``), leaving out a site's menu crawled as
   text (15 titles or more, most short and not instructions) and every
   block inside it;
3. scores each block against the query:

   * ``relevance = 0.6 * similarity + 0.4 * overlap``, where similarity is the
     best MiniLM cosine of the query with the block (heading + first steps)
     or with its heading alone, and overlap is the share of the query's
     content words found in the block or its heading; under a heading that
     names no task ("Gboard 7", "Here you go") the page title stands in for
     the heading, if the block's own text is close enough to the query;
   * ``howto``: the share of steps that start with an action verb (1) or at
     least name a UI element (0.5); 0 for link lists ("Related articles") and
     for the numbered headings of a "N ways to ..." listicle;
   * blocks about another platform than the query's ("On iPhone" for an
     Android question) are set aside (``other_platform: accept`` keeps them
     when nothing else fits); the platform and the phone maker come from the
     query, its device, or else the run's configured device
     (``extract.device``): a Samsung block does not answer a Pixel question;
   * on a page of tips or questions (two or more blocks under headings that
     name a task, on a page not titled for the query), a tip is relevant
     only when its heading is too: another task's steps may name the
     query's words, its title does not;
   * blocks side by side under one heading (a page's ``<h1>`` over two
     lists, the two halves of a wikiHow article) tie on it: each is also
     scored on its own text (its steps and the lower headings just above
     them), and one whose own text is far less relevant than its
     neighbour's ranks by the mean of the two relevances;

4. keeps the best block with ``relevance >= min_relevance`` and
   ``howto >= min_howto``, ranked by ``prior * relevance * (0.5 + 0.5 * howto)``
   plus a small bonus for longer blocks (priors favour a page's own lists
   over a menu path mentioned in passing); a winner that is one paragraph of a
   bigger, about as relevant candidate gives way to it; the reason records
   the block, what was set aside and how many candidates there were;
   otherwise answers "no steps" with the reason (nothing step-like, nothing
   relevant, wrong platform, language...); for a question about the Settings
   app, a winner whose steps name neither the task nor Settings is another
   app's task under the query's title, and the answer is "no steps"
   (``on_task.py``), as it is when none of the winner's steps comes near the
   query in meaning (MiniLM cosine below ``min_step_similarity``);
5. tidies the kept block's steps (``tidy.py``: another device's part, outcomes,
   trailing notes) and, when the steps end another task, starts them where the
   answer starts (``answer_part.py``).

One batch of embeddings per page (query, blocks, headings), and for a Settings
question one more of the winner's steps; the encoder's cache makes repeated
headings free.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache
from typing import Optional

import numpy as np

from extraction.answer_part import answer_start
from extraction.blocks import (HEADING_LEVELS, IMPERATIVE_VERBS, UI_WORDS, Block, describes_task, find_blocks,
                               is_imperative)
from extraction.on_task import about_settings, names_task_or_settings, same_task
from verirank_core.extraction_config import ExtractConfig
from extraction.extractor import Extractor, ExtractorOutput
from extraction.tidy import device_note, finish_steps
from verirank_core.extraction_records import CleanedPage, Query
from verirank_core.platforms import brand_of, platform_of, wanted_brand, wanted_platform
from verirank_core.text import stem, terms, words

__all__ = ["HeuristicExtractor", "query_platform", "query_brand", "block_platform", "block_brand", "ScoredBlock"]

#: query words that say nothing about the task itself
_QUERY_STOP = frozenset("""
how to do i can you my the a an on in of for with from is it be set up android phone mobile
device smartphone tablet way ways what where why when step steps guide tutorial please using use
""".split())
#: "and" / "or" join two tasks in one query ("turn off autocorrect and predictive text")
_CONJOINED = re.compile(r"\b(?:and|or)\b", re.IGNORECASE)
#: query words that any task's heading may hold ("turn", "or", "much"): a heading is matched on
#: the others, unless the query names nothing else
_GENERIC_QUERY = frozenset("""
or and have has had much many which turn change check add make get enable disable switch off
""".split())
_ENGLISH = frozenset("""
the to and of a in on your you is it that for with this then from be or at as by tap open go select
turn settings app screen menu if not are will can page next option button
""".split()) | IMPERATIVE_VERBS | UI_WORDS
#: the page title stands in for an uninformative heading at this weight, and only
#: when the block's own text is at least this similar to the query
_TITLE_WEIGHT = 0.9
_TITLE_FLOOR = 0.4
#: a list, table or set of step headings that holds the winning block stands for it down to
#: this how-to score (the winner itself needs ``min_howto``)
_HOLDER_HOWTO = 0.25
#: how much less relevant its own text must be than its neighbour's for a block under a shared
#: heading to rank as another task (two ways to one task differ less: lemon seeds in soil or in a towel)
_OWN_MARGIN = 0.2
_CONTAINERS = ("list", "numbered", "table", "deflist", "headings")
#: how much a kind of block is trusted when scores are close: a page's own list or
#: numbered steps beat a menu path mentioned in passing
_KIND_PRIOR = {"list": 1.0, "numbered": 1.0, "table": 1.0, "deflist": 0.95, "headings": 0.95, "imperative": 0.95,
               "prose": 0.95, "breadcrumb": 0.85}


def _tokens(text: str) -> list[str]:
    return words(text)


def query_platform(query: Query, default: str = "android", device: str = "") -> str:
    """The platform the user asks about: from the device, the app, the query text, then the run's device."""
    return wanted_platform(query.query, query.device or "", query.app or "", device, default)


def query_brand(query: Query, device: str = "") -> tuple[Optional[str], str]:
    """The phone maker the user asks about, and where it came from ("query", "device", "run device")."""
    return wanted_brand(query.query, query.device or "", query.app or "", device)


def block_brand(block: Block) -> Optional[str]:
    """The phone maker a block is written for, from its heading or lead-in line."""
    for text in (block.heading, block.lead):
        found = brand_of(text)
        if found:
            return found
    return None


def block_platform(block: Block) -> Optional[str]:
    """The platform a block is written for, from its heading, lead-in line or steps."""
    for text in (block.heading, block.lead, " ".join(block.steps)):
        found = platform_of(text)
        if found:
            return found
    return None


def _howto(step: str) -> float:
    if is_imperative(step):
        return 1.0
    words = set(_tokens(step))
    return 0.5 if words & UI_WORDS or ">" in step or "→" in step else 0.0


#: headings that only announce "the steps follow": the page title says what they are about
_GENERIC_HEADING = re.compile(
    r"^\W*(?:\d+\s+)?(?:steps?(?:\s+\d+)?|instructions?|directions|procedure|method|how to(?: do it)?|here'?s how|"
    r"solution|answers?|accepted answer|best answer|reply|replies|try this|what to do|the fix|fix|do this|"
    r"follow these steps|quick answer|short answer|in short|tl;?dr|guide|tutorial|"
    r"what you(?:'ll| will)? need|you(?:'ll| will) need|materials|supplies|tools|ingredients|things you(?:'ll)? need)\W*$",
    re.I)


_LISTICLE_TITLE = re.compile(r"(?:^\W*|\b(?:here are|these|our|top)\s+)\d+\s+(?:\w+\s+){0,2}(?:ways|tips|tricks|things|"
                             r"reasons|features|methods|apps|fixes|hacks|settings|secrets)\b", re.I)


def _block_howto(block: Block, page: CleanedPage) -> float:
    """How much the block reads like instructions (0..1); 0 for link lists and listicles."""
    links = [page.snippets[i].link for i in block.positions if i < len(page.snippets)]
    if links and sum(links) >= 0.5 * len(links):
        return 0.0  # "related articles", menus: links to other pages, not steps
    if ((block.numbered_headings or block.kind == "headings")
            and any(_LISTICLE_TITLE.search(t) for t in [page.title] + block.heading_path[:1])):
        return 0.0  # "8 Ways to ...": alternatives to pick from, not one sequence of steps
    if block.howto_hint is not None:
        return block.howto_hint
    per_sentence = float(np.mean([_howto(s) for s in block.steps]))
    if block.kind in ("imperative", "prose") or (block.kind in ("list", "table") and _sentence_items(block.steps)):
        # prose tells a step as an instruction and a sentence or two about it ("Open Settings.
        # You'll find it in the app drawer."): read it a step at a time; so does a list or table
        # that holds such prose one sentence per item or row (a crawl, an editor's one-line bullets)
        return max(per_sentence, _told_steps_howto(block.steps))
    return per_sentence


#: where a title list item holds several titles ("Google Mail. Auto-fit messages."); no capital is needed after
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _title_list(items: list[str], least: int = 15, longest: float = 3) -> bool:
    """A menu of titles: ``least`` items or more, half of them ``longest`` words or fewer, and
    most not instructions ("Google Mail. Auto-fit messages. Confirm before deleting. ...").
    A long procedure of short steps ("Tap Name. Enter T-Mobile. Tap OK.") is instructions."""
    titles = [t for item in items for t in _SENTENCE_END.split(item) if t.strip()]  # a step may hold several
    if len(titles) < least or float(np.median([len(t.split()) for t in titles])) > longest:
        return False
    return sum(is_imperative(t) for t in titles) < 0.5 * len(titles)


def _sentence_items(items: list[str], least: int = 4) -> bool:
    """List items that are the sentences of a telling: several, nearly all ending as sentences do
    ("Up next" titles, menus and short feature bullets do not)."""
    ended = sum(t.rstrip().endswith((".", "!")) for t in items)
    return len(items) >= least and ended >= 0.8 * len(items)


#: sentences after an instruction that still tell about it
_TELLING = 2


def _told_steps_howto(sentences: list[str]) -> float:
    """How-to of prose read as steps: a sentence and up to ``_TELLING`` non-instructions after it
    make one step, scored by its most step-like sentence (1 when it starts with an instruction)."""
    scores: list[float] = []
    i = 0
    while i < len(sentences):
        j = i + 1
        while j < len(sentences) and j - i <= _TELLING and not is_imperative(sentences[j]):
            j += 1
        scores.append(max(_howto(t) for t in sentences[i:j]))
        i = j
    return float(np.mean(scores)) if scores else 0.0


def _without_echoes(words: list[str], longest: int = 8) -> list[str]:
    """Words with a phrase repeated right after itself kept once: a crawled image caption
    ("Google Maps Restaurant Recommendations" three times over) says it once."""
    out: list[str] = []
    i = 0
    while i < len(words):
        for n in range(min(longest, len(out)), 1, -1):
            if words[i:i + n] == out[-n:]:
                i += n
                break
        else:
            out.append(words[i])
            i += 1
    return out


def _looks_stuffed(page: CleanedPage) -> Optional[str]:
    """A reason when one phrase dominates the page (SEO keyword stuffing)."""
    words = [w for s in page.snippets for w in _without_echoes(_tokens(s.text))]
    if len(words) < 60:
        return None
    bigrams = Counter(zip(words, words[1:]))
    (top, count), = bigrams.most_common(1)
    share = count / max(1, len(words) - 1)
    if count >= 8 and share >= 0.08:
        return f"keyword stuffing: '{' '.join(top)}' makes up {share:.0%} of the page's word pairs"
    return None


@lru_cache(maxsize=1024)
def _query_words(query: str) -> tuple[frozenset[str], frozenset[str]]:
    """The query's content words (stems), and those a task's own text must name ("wifi calling",
    not "turn on"). Cached: a query is asked of each of its pages, twice per page."""
    told = [w for w in _tokens(query) if w not in _QUERY_STOP]
    wanted = frozenset(stem(w) for w in told)
    return wanted, frozenset(stem(w) for w in told if w not in _GENERIC_QUERY) or wanted


def _task_words(query: str) -> tuple[frozenset[str], list[frozenset[str]]]:
    """The words that tell the query's task, and those of each task it joins with "and" / "or"
    (none when it asks one): what a tip's heading is read against (``on_task.same_task``)."""
    parts = [_query_words(part)[1] for part in _CONJOINED.split(query)]
    return _query_words(query)[1], parts if len(parts) > 1 else []


def _size(block: Block) -> int:
    """How much page text a block holds (a menu path split into "Tap X" steps holds little)."""
    return len(_tokens(" ".join(block.steps)))


def _sharing_heading(blocks: list[Block]) -> list[Block]:
    """Blocks whose heading is also over another block beside them (not around or inside them)."""
    out = []
    for b in blocks:
        if b.heading and any(c is not b and c.heading == b.heading and (c.last < b.first or c.first > b.last)
                             for c in blocks):
            out.append(b)
    return out


def _intro_headings(block: Block, blocks: list[Block], page: CleanedPage) -> list[str]:
    """The lower headings between a block's shared heading (or the block beside it before) and the
    block: "Method #2: Germinating Lemon Seeds in the Soil" under "How to Grow a Lemon Tree"."""
    heading_at = next((i for i in range(block.first - 1, -1, -1)
                       if page.snippets[i].text.strip() == block.heading.strip()), -1)
    start = max([c.last for c in blocks if c.heading == block.heading and c.last < block.first] + [heading_at])
    if start < 0:
        return []  # neither the heading nor a block beside it before: nothing introduces this one
    return [page.snippets[i].text for i in range(start + 1, block.first) if page.snippets[i].tag in HEADING_LEVELS]


def _english_share(text: str) -> float:
    words = _tokens(text)
    if not words:
        return 0.0
    return sum(w in _ENGLISH for w in words) / len(words)


def _relevance(similarity: float, share: float) -> float:
    """A text's relevance to the query: its MiniLM similarity and the share of query words it names."""
    return 0.6 * similarity + 0.4 * share


class ScoredBlock:
    """A candidate block and its scores (kept for explanations and tests)."""

    def __init__(self, block: Block, similarity: float, overlap: float, howto: float, platform: Optional[str],
                 heading_relevance: Optional[float] = None, own_relevance: Optional[float] = None):
        self.block = block
        self.similarity = similarity
        self.overlap = overlap
        self.howto = howto
        self.platform = platform
        self.relevance = _relevance(similarity, overlap)
        #: the same measure on the block's heading alone, when the heading names a task
        self.heading_relevance = heading_relevance
        #: the same measure on the block's own text (its steps and the lower headings just above them),
        #: when its heading is also over a block beside it: the heading makes both relevant
        self.own_relevance = own_relevance
        #: the relevance the block is ranked by (lower for another task's steps under a shared heading)
        self.rank_relevance = self.relevance

    @property
    def rank_score(self) -> float:
        prior = _KIND_PRIOR.get(self.block.kind, 1.0)
        return prior * self.rank_relevance * (0.5 + 0.5 * self.howto) + 0.02 * math.log1p(len(self.block.steps))

    def __repr__(self) -> str:
        return (f"ScoredBlock({self.block.kind}, steps={len(self.block.steps)}, rel={self.relevance:.2f}, "
                f"sim={self.similarity:.2f}, overlap={self.overlap:.2f}, howto={self.howto:.2f}, "
                f"platform={self.platform}, heading={self.block.heading!r})")


class HeuristicExtractor(Extractor):
    """Rule-based step extraction scored with MiniLM; see the module docstring."""

    name = "heuristic"

    def __init__(self, config: ExtractConfig = ExtractConfig(), encoder=None):
        self.config = config
        self.encoder = encoder

    # -- scoring ----------------------------------------------------------------

    def score_blocks(self, query: Query, page: CleanedPage, blocks: list[Block]) -> list[ScoredBlock]:
        """Similarity, overlap, how-to-ness and platform of every block."""
        if not blocks:
            return []
        encoder = self._encoder()
        # heading + first steps, cut to ~48 words: the encoder's cost grows with length
        reprs = [" ".join(((b.heading + ". " if b.heading else "") + " ".join(b.steps[:6])).split()[:48])
                 for b in blocks]
        headings = [page.title if not b.heading or _GENERIC_HEADING.match(b.heading) else b.heading
                    for b in blocks]
        # blocks side by side under one heading (a page's <h1> over its whole text) cannot be told
        # apart by it: their own steps say which is the query's
        shared = _sharing_heading(blocks)
        intros = {id(b): _intro_headings(b, blocks, page) for b in shared}
        own = [" ".join((" ".join(intros[id(b)] + b.steps[:6])).split()[:48]) for b in shared]
        vecs = encoder.encode([query.query, page.title or " "] + reprs + headings + own)
        q, sim_title = vecs[0], float(vecs[1] @ vecs[0])
        n = len(blocks)
        block_vecs, heading_vecs = vecs[2:2 + n], vecs[2 + n:2 + 2 * n]
        sim_block = block_vecs @ q
        sim_heading = heading_vecs @ q
        sim_own = {id(b): float(v @ q) for b, v in zip(shared, vecs[2 + 2 * n:])}

        # what a heading must name to be this task's: "wifi calling", not "turn on"
        wanted, distinctive = _query_words(query.query)

        def names(heading: str) -> float:
            return len(distinctive & set(terms(heading))) / len(distinctive) if distinctive else 0.0

        def share(text: str) -> float:
            """The share of the query's content words the text names."""
            return len(wanted & set(terms(text))) / len(wanted) if wanted else 0.0

        # a page whose title asks the query ("How to turn off notifications for one app") is
        # about it: its sections ("Use the Settings app") are ways to the answer, not other tips
        about_query = _relevance(max(sim_title, 0.0), names(page.title)) >= self.config.min_relevance
        scored = []
        for b, sb, sh in zip(blocks, sim_block, sim_heading):
            context = b.heading + " " + b.lead
            similarity = max(float(sb), float(sh), 0.0)
            # a heading that names no task ("Gboard 7", "Here you go") leaves the page
            # title to say what the block is about, if the steps themselves fit the query
            # "On iPhone", "Samsung Galaxy": a heading naming only the device says nothing of the task
            device_heading = len(b.heading.split()) <= 6 and bool(platform_of(b.heading) or brand_of(b.heading))
            generic = bool(_GENERIC_HEADING.match(b.heading))
            if generic:
                context += " " + page.title
            elif not describes_task(b.heading) and (sb >= _TITLE_FLOOR or device_heading):
                similarity = max(similarity, _TITLE_WEIGHT * sim_title)
                context += " " + page.title
            overlap = share(" ".join(b.steps) + " " + context)
            heading_relevance = None
            if not generic and not about_query and describes_task(b.heading):
                heading_relevance = _relevance(max(float(sh), 0.0), names(b.heading))
            own_relevance = None
            if id(b) in sim_own:
                own_relevance = _relevance(max(sim_own[id(b)], 0.0),
                                           share(" ".join(intros[id(b)] + b.steps + [b.lead])))
            scored.append(ScoredBlock(b, similarity, overlap, _block_howto(b, page), block_platform(b),
                                      heading_relevance, own_relevance))
        # of the blocks under one heading, one whose own text is far less relevant than the best
        # one's is another task beside the answer (a wikiHow article's other half): it ranks by the
        # mean of the two relevances, and still passes the gate on the heading's
        best_own: dict[str, float] = {}
        for s in scored:
            if s.own_relevance is not None:
                best_own[s.block.heading] = max(best_own.get(s.block.heading, 0.0), s.own_relevance)
        for s in scored:
            if s.own_relevance is not None and s.own_relevance < best_own[s.block.heading] - _OWN_MARGIN:
                s.rank_relevance = (s.relevance + s.own_relevance) / 2
        return scored

    def _encoder(self):
        """MiniLM, loaded on first use."""
        if self.encoder is None:
            from verirank_core.embed import default_encoder

            self.encoder = default_encoder()
        return self.encoder

    def _nearest_step(self, query: Query, steps: list[str]) -> float:
        """The highest MiniLM cosine between the query and one of the steps."""
        if not steps:
            return 0.0
        return float(self._encoder().similarity([query.query], steps[:self.config.max_steps]).max())

    # -- the Extractor interface --------------------------------------------------

    def extract(self, query: Query, page: CleanedPage) -> ExtractorOutput:
        cfg = self.config
        if page.lang and page.lang not in cfg.languages:
            return ExtractorOutput(reason=f"the page is in '{page.lang}'; steps are kept only in "
                                          f"{', '.join(cfg.languages)}")
        stuffed = _looks_stuffed(page)
        if stuffed:
            return ExtractorOutput(reason=stuffed)
        blocks = find_blocks(page.snippets)
        if not blocks:
            return ExtractorOutput(reason="no step-like block (list, numbered steps, menu path or instructions)")
        # a site's menu crawled as text is no block of steps, nor is a run of titles inside it
        # that happen to read as instructions ("Set date. Set time.")
        menus = [b for b in blocks if _title_list(b.steps)]
        blocks = [b for b in blocks if not any(m.first <= b.first and b.last <= m.last for m in menus)]
        if not blocks:
            return ExtractorOutput(reason=f"the page's text is a menu of titles ({len(menus[0].steps)} short items), "
                                          "not instructions")

        # only blocks that read like instructions are worth embedding
        howto = {id(b): _block_howto(b, page) for b in blocks}
        steplike = [b for b in blocks if howto[id(b)] >= cfg.min_howto and not b.holder_only]
        if not steplike:
            return ExtractorOutput(reason=f"{len(blocks)} block(s) found, none reads like instructions")
        # a page's own list whose items are mostly "Label: what it does" reads less like
        # instructions, yet a menu path inside it is only a part of the page's answer
        containers = [b for b in blocks if b.kind in _CONTAINERS and _HOLDER_HOWTO <= howto[id(b)]
                      and (howto[id(b)] < cfg.min_howto or b.holder_only)]
        scored = self.score_blocks(query, page, steplike + containers)
        howto_ok, containers_scored = scored[:len(steplike)], scored[len(steplike):]
        relevant = [s for s in howto_ok if s.relevance >= cfg.min_relevance]
        # a page of several tips or questions, each under a heading naming its task: a tip
        # answers the query only when its heading does (another task's steps may well name
        # the query's words: text-to-speech steps name "Language")
        tips = {s.block.heading for s in howto_ok if s.heading_relevance is not None}
        if len(tips) >= 2 and relevant:
            # close in meaning is not enough: "Turn on Wi-Fi and connect" is no tip for "Wi-Fi calling"
            asked = _task_words(query.query)
            relevant = [s for s in relevant if s.heading_relevance is None or (
                s.heading_relevance >= cfg.min_relevance and same_task(*asked, _query_words(s.block.heading)[1]))]
            if not relevant:
                best = max(howto_ok, key=lambda s: s.heading_relevance or 0.0)
                return ExtractorOutput(reason=f"a page of {len(tips)} tips, none titled for the query (best: "
                                              f"{best.block.heading!r}, heading relevance "
                                              f"{best.heading_relevance or 0.0:.2f} < {cfg.min_relevance})")
        if not relevant:
            best = max(howto_ok, key=lambda s: s.relevance)
            return ExtractorOutput(reason=f"no instructions relevant to the query (best block under "
                                          f"{best.block.heading!r} has relevance {best.relevance:.2f} "
                                          f"< {cfg.min_relevance})")
        platform = query_platform(query, cfg.default_platform, cfg.device)
        fitting = [s for s in relevant if s.platform in (None, platform)]
        if not fitting and cfg.other_platform == "accept":
            fitting = relevant
        if not fitting:
            others = sorted({s.platform for s in relevant})
            return ExtractorOutput(reason=f"the relevant steps are for {', '.join(others)}, the query is about {platform}")
        notes = []
        if len(fitting) < len(relevant):
            others = sorted({s.platform for s in relevant if s not in fitting})
            notes.append(f"set aside {len(relevant) - len(fitting)} block(s) for {', '.join(others)} "
                         f"(the query is about {platform})")
        # Samsung steps do not answer a Pixel question: keep the maker's block when there is one
        brand, brand_source = query_brand(query, cfg.device)
        brands = {id(s): block_brand(s.block) for s in fitting}
        if brand and any(brands[id(s)] is not None for s in fitting):
            same = [s for s in fitting if brands[id(s)] in (None, brand)]
            if same and len(same) < len(fitting):
                others = sorted({brands[id(s)] for s in fitting if s not in same})
                notes.append(f"set aside block(s) for {', '.join(others)} ({brand} from the {brand_source})")
                fitting = same
        # a block written for the query's platform (or maker) beats a neutral one of similar score
        # (rounded: a vector from the cache and one from a fresh batch differ in the eighth digit,
        # which must not pick between two blocks of one score; the earlier block wins a tie)
        best = max(fitting, key=lambda s: round(s.rank_score + (0.05 if s.platform == platform else 0.0)
                                                + (0.05 if brand and brands[id(s)] == brand else 0.0), 6))
        # a block inside a bigger candidate (a paragraph of one step's body) stands for
        # that candidate when it is about as relevant: the page's steps are the whole of it
        # (a block for another platform counts too: the winner may be the neutral tail of an
        # iPhone answer, and steps that start midway cannot start on the device at all)
        holders = relevant if cfg.other_platform == "accept" else fitting
        holders = holders + [s for s in containers_scored if s.relevance >= cfg.min_relevance
                             and (cfg.other_platform == "accept" or s.platform in (None, platform))]
        outer = [s for s in holders if s is not best and s.block.first <= best.block.first
                 and s.block.last >= best.block.last and _size(s.block) > _size(best.block)
                 and s.relevance >= best.relevance - 0.15]
        if outer:
            inner = best
            # the one spanning the most of the page: a menu path's sentence does not stand
            # for the paragraphs around it
            best = max(outer, key=lambda s: (s.block.last - s.block.first, round(s.rank_score, 6)))
            notes.append(f"took the whole {best.block.kind} block holding the best-matching {inner.block.kind} block")
        if len(fitting) > 1:
            notes.append(f"best of {len(fitting)} candidate blocks for the query")
        distinctive = _query_words(query.query)[1]
        settings_question = about_settings(query.app)
        # a Settings question's answer names the task or goes through Settings; steps that do
        # neither are another app's task under the query's words (which a title or heading may copy)
        if settings_question and not names_task_or_settings(best.block.steps, query.query, distinctive):
            return ExtractorOutput(reason=f"the best block ({best.block.kind}, relevance {best.relevance:.2f}) names "
                                          "neither the task nor the Settings app: another app's task")
        # nor is a block none of whose steps comes near the query in meaning, whatever the title
        # or heading above it says (an SEO page copies the query into both). Asked of Settings
        # questions only, whose words MiniLM knows; another app's task may be told in names it does
        # not ("Join a meeting" for "use Lync"). MiniLM reads English.
        gated = settings_question and page.lang in (None, "en")
        nearest = self._nearest_step(query, best.block.steps) if gated else 1.0
        if nearest < cfg.min_step_similarity:
            return ExtractorOutput(reason=f"no step of the best block ({best.block.kind}) comes near the query in "
                                          f"meaning (best cosine {nearest:.2f} < {cfg.min_step_similarity}): "
                                          "another task under the query's title")
        # another device's part leaves the steps; outcomes ending an action's step and trailing notes
        # do too, and with the section's heading ("How do I ...?", "On Samsung phones") and the step
        # titles they become context for the agent
        steps, dropped, elsewhere = finish_steps(best.block.steps)
        if elsewhere:
            notes.append(device_note(elsewhere))
        start = answer_start(steps, distinctive)
        if start:
            notes.append(f"left out {start} step(s) of another task before the answer ({steps[0][:40]!r} ...)")
            steps = steps[start:]
        steps = steps[: cfg.max_steps]
        heading = best.block.heading
        section = [heading] if heading and not _GENERIC_HEADING.match(heading) and heading != page.title else []
        context = list(dict.fromkeys(section + best.block.context + dropped))
        if page.lang is None and _english_share(" ".join(steps)) < 0.15:
            return ExtractorOutput(reason="the steps do not read as English")
        where = f" under {best.block.heading!r}" if best.block.heading else ""
        stated = best.platform or platform_of(page.title)
        if stated and stated != platform:
            notes.append(f"written for {stated}, kept: the device decides whether the steps work")
        return ExtractorOutput(
            steps=steps,
            reason=f"{best.block.kind} block{where} (relevance {best.relevance:.2f}, how-to {best.howto:.2f})"
                   + "".join(f"; {n}" for n in notes),
            stated_platform=stated,
            stated_device=block_brand(best.block) or brand_of(page.title),
            context=context,
        )
