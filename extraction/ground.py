"""Ground extracted steps in the page: keep a step only if the page says it.

Every step is matched to one snippet of the cleaned page (see ``clean.py``)
and so to an XPath in the original HTML. A step **matches** a snippet when any
of these holds (thresholds in ``GroundConfig``):

``rouge``
    ROUGE-L F1 between the step and the snippet, or one sentence of the
    snippet, is above ``rouge_threshold`` (0.7). Sentences count because a
    help-centre paragraph often holds two steps and the extractor returns one.
``distance``
    the L2 distance between the unit-normalised MiniLM embeddings of the step
    and the snippet is below ``distance_threshold`` (0.25). For unit vectors
    ``d = sqrt(2 - 2 cos)``, so d lies in [0, 2] and 0.25 means cos > 0.969:
    near-identical meaning. Snippet vectors sit in a per-page
    ``faiss.IndexFlatL2`` (which reports squared distances; we take the root).
``containment``
    the step's words appear in this order in the snippet: ROUGE-L precision
    on the step side is at least ``containment_threshold`` (0.85). A step is
    often a shortened sub-sentence of a snippet ("Tap Display" from "Tap
    Display, then Dark theme"); F1 punishes that, containment does not. To
    keep short generic steps ("Tap OK") from matching anywhere, containment
    needs ``min_containment_tokens`` (3) words, except near the previous
    grounded step, where the leading action words (tap, open, go to...) are
    ignored too, so the parts of a breadcrumb ("Tap Display" in
    "Settings > Display > Dark theme") ground to their sentence.

Order and **near**: the first step that matches anywhere is the anchor; up to
``anchor_candidates`` places are tried and the one that lets most following
steps ground wins (the same "Open Settings" often appears in several lists);
on a tie, the one with the best scores, then the one keeping the steps
closest together.
Each later step is searched only *near* the previous grounded step, at or
after it in page order, among

* the snippets inside the previous match's nearest container ancestor
  (``ol``, ``ul``, ``dl``, ``table``, ``section``, ``article``, ``main``,
  ``div``, ``blockquote``, ``details``; never ``body``), and
* the ``near_window`` (8) snippets following it, whatever their container.

A step that does not match is dropped (``GroundingResult.dropped``) and the
next step is searched near the last grounded one. **Recovery**: when two
consecutive grounded steps sit in elements of the same tag with the same
parent (two ``li`` of one list, two ``h3`` of one section) and that tag is in
``recover_tags``, the same-tag siblings strictly between them (at most
``max_recovered_gap``) are inserted as steps with origin ``recovered``.

Tokens are rouge-score's (lower-cased alphanumerics, Porter-stemmed); the LCS
is computed here on pre-tokenised snippets, which gives the same numbers as
``rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)`` without
re-tokenising the page for every step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional, Sequence

import numpy as np

from verirank_core.extraction_config import GroundConfig
from verirank_core.extraction_records import CleanedPage, GroundedStep, Snippet

__all__ = ["GroundingResult", "ground_steps", "tokenize", "rouge_l", "container_of", "near_region"]

#: elements that group the items of one instruction block
CONTAINER_TAGS = frozenset({"ol", "ul", "dl", "table", "tbody", "section", "article", "main",
                            "div", "blockquote", "details"})

#: words that frame a step rather than name what to act on
_FRAMING = frozenset({
    "tap", "click", "select", "choos", "choose", "open", "go", "to", "navig", "navigate", "press",
    "touch", "hit", "then", "and", "next", "final", "finally", "first", "on", "the", "your", "a",
    "enter", "scroll", "down", "find", "look", "for", "head", "over",
})
#: function words ignored by containment: paraphrases add and drop them freely
#: ("Open the Settings app" vs "Open your device's Settings app")
_STOP = frozenset({
    "the", "a", "an", "your", "my", "its", "it", "this", "that", "these", "those", "of", "in",
    "on", "off", "at", "for", "to", "and", "or", "then", "from", "with", "by", "s", "is", "be",
    "you", "can", "will", "if", "as", "so", "there", "here",
})
#: a step may span at most this many snippets after its first one (heading + body paragraphs)
_MAX_MERGE = 12
_STEP_MARKER = re.compile(r"^\s*(?:step\s*\d{1,2}|\d{1,2})\s*[:.)\-–—]?\s*", re.I)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?;])\s+|\s+(?:→|->|>|»|›)\s+")


@dataclass
class GroundingResult:
    #: grounded (and recovered) steps in page order, re-indexed from 0
    steps: list[GroundedStep] = field(default_factory=list)
    #: step texts that could not be grounded, in the extractor's order
    dropped: list[str] = field(default_factory=list)


# --- ROUGE-L ---------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _tokenizer():
    from rouge_score import tokenizers

    return tokenizers.DefaultTokenizer(use_stemmer=True)


@lru_cache(maxsize=100_000)
def _tokenize_cached(text: str) -> tuple[str, ...]:
    return tuple(_tokenizer().tokenize(text))


def tokenize(text: str) -> list[str]:
    """rouge-score's tokens: lower-cased alphanumeric words, Porter-stemmed."""
    return list(_tokenize_cached(text))


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token lists."""
    if not a or not b:
        return 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, start=1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


def rouge_l(step: Sequence[str], reference: Sequence[str]) -> tuple[float, float, float]:
    """(precision on the step side, recall, F1) of ROUGE-L between token lists."""
    lcs = lcs_length(step, reference)
    if lcs == 0:
        return 0.0, 0.0, 0.0
    p, r = lcs / len(step), lcs / len(reference)
    return p, r, 2 * p * r / (p + r)


def _content(tokens: Sequence[str]) -> list[str]:
    """The tokens without function words (all of them if nothing else is left)."""
    kept = [t for t in tokens if t not in _STOP]
    return kept or list(tokens)


def _core(tokens: Sequence[str]) -> list[str]:
    """Content tokens after the leading framing words ("tap", "go to", "open the"...)."""
    tokens = _content(tokens)
    i = 0
    while i < len(tokens) - 1 and tokens[i] in _FRAMING:
        i += 1
    return list(tokens[i:])


# --- structure: containers and "near" -----------------------------------------------


def _tag_of(component: str) -> str:
    return component.split("[", 1)[0]


def container_of(xpath: str) -> Optional[str]:
    """The XPath of the nearest container ancestor of ``xpath`` (never html/body)."""
    parts = xpath.split("/")
    for end in range(len(parts) - 1, 2, -1):  # parts[0] == "", parts[1] == "html"
        if _tag_of(parts[end - 1]) in CONTAINER_TAGS:
            return "/".join(parts[:end])
    return None


def near_region(snippets: Sequence[Snippet], prev: int, window: int) -> list[int]:
    """Snippet positions near ``prev``: at or after it, in its container or within ``window``."""
    container = container_of(snippets[prev].xpath)
    prefix = container + "/" if container else None
    out = []
    for j in range(prev, len(snippets)):
        if j - prev <= window or (prefix and snippets[j].xpath.startswith(prefix)):
            out.append(j)
        elif prefix is None:
            break
    return out


def _parent(xpath: str) -> str:
    return xpath.rsplit("/", 1)[0]


# --- the page index ---------------------------------------------------------------------


class _PageIndex:
    """Tokens of every snippet (and of its sentences), and lazily its MiniLM/Faiss index."""

    def __init__(self, page: CleanedPage, encoder):
        self.snippets = page.snippets
        self.encoder = encoder
        self.tokens = [tokenize(s.text) for s in self.snippets]
        self.token_sets = [set(t) for t in self.tokens]
        self.content = [_content(t) for t in self.tokens]
        # the words of each snippet without a "Step 3:" marker, to tell where a merged step starts
        self.heads = [tokenize(_STEP_MARKER.sub("", s.text)) for s in self.snippets]
        self.units: list[list[list[str]]] = []
        for s, toks in zip(self.snippets, self.tokens):
            parts = [p for p in _SENTENCE_SPLIT.split(s.text) if p.strip()]
            units = [toks]
            if len(parts) > 1:
                units += [t for t in (tokenize(p) for p in parts) if t]
            self.units.append(units)
        self._index = None
        self._merged: dict[tuple[int, int], tuple[list[str], list[str]]] = {}

    def merged(self, j: int, k: int) -> tuple[list[str], list[str]]:
        """Tokens and content tokens of snippets ``j..j+k`` read as one text."""
        key = (j, k)
        if key not in self._merged:
            toks = [t for n in range(j, j + k + 1) for t in self.tokens[n]]
            self._merged[key] = (toks, [t for n in range(j, j + k + 1) for t in self.content[n]])
        return self._merged[key]

    def faiss_index(self):
        if self._index is None:
            import faiss

            vecs = self.encoder.encode([s.text for s in self.snippets])
            self._index = faiss.IndexFlatL2(vecs.shape[1])
            self._index.add(np.ascontiguousarray(vecs, dtype=np.float32))
        return self._index

    def nearest(self, vec: np.ndarray, ids: Sequence[int], k: int) -> list[tuple[int, float]]:
        """The ``k`` snippets among ``ids`` closest to ``vec``: (position, L2 distance)."""
        import faiss

        if not ids:
            return []
        index = self.faiss_index()
        params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(np.asarray(ids, dtype=np.int64)))
        k = min(k, len(ids))
        sq, found = index.search(vec.reshape(1, -1).astype(np.float32), k, params=params)
        return [(int(j), float(np.sqrt(max(d, 0.0)))) for d, j in zip(sq[0], found[0]) if j >= 0]


@dataclass
class _Match:
    pos: int
    how: str
    score: float
    rouge: float
    containment: float
    distance: Optional[float] = None


def _lexical_matches(step: list[str], page: _PageIndex, region: Sequence[int], near: bool,
                     cfg: GroundConfig) -> list[_Match]:
    """Every snippet of ``region`` the step matches on words, with one comparable score.

    The score is the best of: ROUGE-L F1; 0.97 x containment (a little below an
    equal F1, so a true copy wins); near the previous step, 0.9 x containment of
    the words after the action verb (only the object of "Tap Display" is there).
    """
    content, core = _content(step), _core(step)
    wanted = set(step)
    out = []
    for j in region:
        if not (wanted & page.token_sets[j]):
            continue
        f1 = max(rouge_l(step, unit)[2] for unit in page.units[j])
        contain = rouge_l(content, page.content[j])[0]
        # a step made of a heading and its body ("Step 3: Switch it off" + "Flip the
        # switch") spans several snippets: read the next ones with this one
        # (only from the snippet that starts the step: its words open the step, so "Tap
        # Ringtone" is no heading of "Tap the desired ringtone ..." on the list item before it)
        head = page.heads[j]
        if (f1 <= cfg.rouge_threshold and contain < cfg.containment_threshold
                and len(step) > len(head) + 1 and head
                and rouge_l(head, step[:len(head)])[0] >= 0.8):
            for k in range(1, _MAX_MERGE + 1):
                if j + k >= len(page.tokens):
                    break
                toks, cont = page.merged(j, k)
                f1 = max(f1, rouge_l(step, toks)[2])
                contain = max(contain, rouge_l(content, cont)[0])
                if len(toks) >= len(step):
                    break
        options = []  # (score, how)
        if f1 > cfg.rouge_threshold:
            options.append((f1, "rouge"))
        if cfg.use_containment:
            if contain >= cfg.containment_threshold and (near or len(content) >= cfg.min_containment_tokens):
                options.append((0.97 * contain, "containment"))
            elif near:
                core_contain = rouge_l(core, page.content[j])[0]
                if core_contain >= cfg.containment_threshold:
                    options.append((0.9 * core_contain, "containment"))
                    contain = max(contain, core_contain)
        if options:
            score = max(score for score, _ in options)
            how = "rouge" if options[0][1] == "rouge" else "containment"
            out.append(_Match(j, how, score, f1, contain))
    return out


def _matches(step_i: int, steps_tok: list[list[str]], step_vecs, page: _PageIndex,
             region: Sequence[int], near: bool, cfg: GroundConfig, k: int,
             page_order: Optional[bool] = None) -> list[_Match]:
    """Up to ``k`` matches of one step in ``region``.

    ``near`` allows the relaxed containment tests. Near the previous step the
    result is in page order among the matches scoring within 0.05 of the best
    (page order matters more than a slightly better score); elsewhere best first.
    """
    page_order = near if page_order is None else page_order
    found = _lexical_matches(steps_tok[step_i], page, region, near, cfg)
    if not found and region:
        vec = step_vecs()[step_i]
        for j, d in page.nearest(vec, region, k):
            if d < cfg.distance_threshold:
                f1 = max(rouge_l(steps_tok[step_i], u)[2] for u in page.units[j]) if steps_tok[step_i] else 0.0
                contain = rouge_l(_content(steps_tok[step_i]), page.content[j])[0]
                found.append(_Match(j, "distance", 1 - d / 2, f1, contain, d))
    if page_order and found:
        best = max(m.score for m in found)
        found = [m for m in found if m.score >= best - 0.05]
        found.sort(key=lambda m: m.pos)
    else:
        found.sort(key=lambda m: (-m.score, m.pos))
    return found[:k]


def _chain(start: int, anchor: _Match, steps_tok, step_vecs, page: _PageIndex,
           cfg: GroundConfig) -> list[tuple[int, _Match]]:
    chain = [(start, anchor)]
    prev = anchor.pos
    for i in range(start + 1, len(steps_tok)):
        if not steps_tok[i]:
            continue
        region = near_region(page.snippets, prev, cfg.near_window)
        found = _matches(i, steps_tok, step_vecs, page, region, True, cfg, 1)
        if found:
            chain.append((i, found[0]))
            prev = found[0].pos
    return chain


def _best_chain(steps_tok, step_vecs, page: _PageIndex, cfg: GroundConfig) -> list[tuple[int, _Match]]:
    everywhere = list(range(len(page.snippets)))
    for start, toks in enumerate(steps_tok):
        if not toks:
            continue
        anchors = _matches(start, steps_tok, step_vecs, page, everywhere, False, cfg, cfg.anchor_candidates)
        chains = [_chain(start, a, steps_tok, step_vecs, page, cfg) for a in anchors]
        if not anchors and cfg.use_containment:
            # a short first step ("Open Settings") may anchor only where the
            # next step grounds right after it: its successor confirms it
            weak = _matches(start, steps_tok, step_vecs, page, everywhere, True, cfg,
                            cfg.anchor_candidates, page_order=False)
            chains = [c for c in (_chain(start, a, steps_tok, step_vecs, page, cfg) for a in weak) if len(c) >= 2]
        if chains:
            # most grounded steps, then the best total score, then the steps closest
            # together, then the earliest place
            return max(chains, key=lambda c: (len(c), round(sum(m.score for _, m in c), 6),
                                              -(c[-1][1].pos - c[0][1].pos), -c[0][1].pos))
    return []


def _recover(chain: list[tuple[int, _Match]], page: _PageIndex, cfg: GroundConfig) -> list[tuple[Optional[int], _Match]]:
    """Insert same-list siblings strictly between consecutive grounded steps."""
    out: list[tuple[Optional[int], _Match]] = []
    snippets = page.snippets
    used = {m.pos for _, m in chain}
    for n, (i, m) in enumerate(chain):
        out.append((i, m))
        if n + 1 == len(chain):
            break
        a, b = snippets[m.pos], snippets[chain[n + 1][1].pos]
        if a.tag != b.tag or a.tag not in cfg.recover_tags or _parent(a.xpath) != _parent(b.xpath):
            continue
        between: dict[str, int] = {}
        for j in range(m.pos + 1, chain[n + 1][1].pos):
            s = snippets[j]
            if (s.tag == a.tag and _parent(s.xpath) == _parent(a.xpath) and s.xpath not in (a.xpath, b.xpath)
                    and j not in used):
                between.setdefault(s.xpath, j)  # the first text run of each element
        if 0 < len(between) <= cfg.max_recovered_gap:
            for j in between.values():
                out.append((None, _Match(j, "recovered", 1.0, 1.0, 1.0)))
    return out


# --- the public function ----------------------------------------------------------------


def ground_steps(steps: list[str], page: CleanedPage, encoder, config: GroundConfig = GroundConfig()) -> GroundingResult:
    """Tie each step to a snippet (and XPath) of ``page``; drop the ones the page does not support.

    ``encoder`` is a :class:`verirank_core.embed.Encoder` (anything with ``encode(texts)``
    returning unit vectors); it is used only for the distance test and the
    recorded distances, so pages whose steps match lexically cost little.
    """
    steps = [" ".join(s.split()) for s in steps if s and s.strip()]
    if not config.enabled:
        return GroundingResult(steps=[GroundedStep(index=i, text=t, origin="ungrounded") for i, t in enumerate(steps)])
    if not steps or not page.snippets:
        return GroundingResult(dropped=list(steps))

    index = _PageIndex(page, encoder)
    steps_tok = [tokenize(s) for s in steps]
    cache: dict[str, np.ndarray] = {}

    def step_vecs() -> np.ndarray:
        if "v" not in cache:
            cache["v"] = encoder.encode(steps)
        return cache["v"]

    chain = _best_chain(steps_tok, step_vecs, index, config)
    if config.recover_missed:
        placed = _recover(chain, index, config)
    else:
        placed = list(chain)

    # distances for the record: one batch for the steps and their snippets
    texts = [steps[i] if i is not None else index.snippets[m.pos].text for i, m in placed]
    snippet_texts = [index.snippets[m.pos].text for _, m in placed]
    # Identical texts are at distance 0. Steps matched on words get their
    # embedding distance only with always_embed (it costs one batch per page).
    dists: list[Optional[float]] = [m.distance for _, m in placed]
    for n, (t, st) in enumerate(zip(texts, snippet_texts)):
        if t == st:
            dists[n] = 0.0
    differ = [n for n, d in enumerate(dists) if d is None] if config.always_embed else []
    if differ:
        a = encoder.encode([texts[n] for n in differ])
        b = encoder.encode([snippet_texts[n] for n in differ])
        for n, d in zip(differ, np.sqrt(np.clip(2.0 - 2.0 * np.sum(a * b, axis=1), 0.0, 4.0))):
            dists[n] = float(d)

    grounded = []
    for n, ((i, m), d) in enumerate(zip(placed, dists)):
        s = index.snippets[m.pos]
        grounded.append(GroundedStep(
            index=n,
            text=texts[n],
            snippet=s.text,
            xpath=s.xpath,
            rouge_l=round(m.rouge, 4),
            distance=None if d is None else round(float(d), 4),
            containment=round(m.containment, 4),
            origin="recovered" if i is None else "extracted",
            match=m.how,
        ))
    kept = {i for i, _ in chain}
    dropped = [s for i, s in enumerate(steps) if i not in kept]
    return GroundingResult(steps=grounded, dropped=dropped)
