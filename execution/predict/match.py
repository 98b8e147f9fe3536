"""Match a phrase from a step ("Dark mode") to the controls on screen ("Dark theme").

Two signals, cheapest first:

* **lexical**: normalised equality (1.0; Unicode variants, case, "&"/"and" and
  plurals do not count, see ``verirank_core.text``), equal word sets (0.97), whole-phrase
  containment (0.75-0.95), word overlap (up to 0.8);
* **semantic**: MiniLM cosine similarity (``verirank_core.embed``), consulted only
  when no control matches lexically with >= ``strong`` (0.9), scaled by 0.92
  so an exact word match always wins a tie.

Label embeddings are cached by the shared encoder (an LRU shared by the
predictor and the judge), so a label seen before costs no model call, and
lexical scores are memoised per (phrase, label) pair. Model time is returned separately so the agent can
report its own overhead without it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Optional, Sequence

from execution.distill import Control
from verirank_core.text import normalise, stem

__all__ = ["normalise", "lexical_score", "Matcher", "Match"]

_STOP = frozenset({
    "the", "a", "an", "your", "my", "on", "of", "to", "for", "in", "option", "options", "button",
    "menu", "item", "entry", "icon", "and", "or", "is", "it",
})


def _stems(normalised: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in normalised.split())


@lru_cache(maxsize=8192)
def _tokens(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in normalise(text).split() if w not in _STOP)


#: one-word names too generic to match anything but themselves (docs/agent.md, "verified")
GENERIC_ONE_WORD = frozenset({"advanced", "more", "general", "system", "other", "setting", "settings",
                              "option", "options"})


@lru_cache(maxsize=65536)
def lexical_score(target: str, label: str) -> float:
    """How well ``label`` spells ``target``, in [0, 1]."""
    t, l = normalise(target), normalise(label)
    if not t or not l:
        return 0.0
    if t == l or _stems(t) == _stems(l):
        return 1.0
    tt, lt = _tokens(target), _tokens(label)
    if tt and tt == lt:
        return 0.97
    if t in GENERIC_ONE_WORD or l in GENERIC_ONE_WORD:
        # "System" is not "System settings", "Advanced" not "Advanced calling": generic words match exactly
        return 0.0
    best = 0.0
    if f" {t} " in f" {l} ":
        best = 0.75 + 0.2 * len(t) / len(l)
    elif len(l) >= 3 and f" {l} " in f" {t} ":
        # the label names only part of the target ("Battery" for "battery percentage")
        best = 0.55 + 0.3 * len(l) / len(t)
    if tt and lt:
        common = len(tt & lt)
        if common:
            best = max(best, 0.8 * common / max(len(tt), len(lt)))
        small, big = (tt, lt) if len(tt) <= len(lt) else (lt, tt)
        if small <= big and 2 * len(small) >= len(big):
            # the words of one name are all in the other and cover half of it ("Notification Sounds"
            # for "Default notification sound"): the definition's loose match (docs/agent.md)
            best = max(best, 0.62 + 0.2 * len(small) / len(big))
    return best


@dataclass(slots=True)
class Match:
    control: Control
    score: float
    #: "lexical", "summary" or "semantic"
    how: str


class Matcher:
    """Scores controls against a phrase; holds no per-screen state."""

    def __init__(self, use_embeddings: bool = True, strong: float = 0.9, encoder=None):
        self.use_embeddings = use_embeddings
        self.strong = strong
        self.encoder = encoder
        #: total time spent in the embedding model (ms), read by the predictor
        self.model_ms = 0.0

    def _encoder(self):
        if self.encoder is None:
            from verirank_core.embed import default_encoder

            self.encoder = default_encoder()
        return self.encoder

    def rank(
        self, target: str, controls: Sequence[Control], roles: Optional[Iterable[str]] = None,
        lexical_only: bool = False,
    ) -> list[Match]:
        """Controls scored against ``target``, best first (only those with a label)."""
        allowed = set(roles) if roles is not None else None
        pool = [c for c in controls if c.label and (allowed is None or c.role in allowed)]
        matches: list[Match] = []
        for c in pool:
            lex = lexical_score(target, c.label)
            how = "lexical"
            if c.summary and lex < 0.75 and _tokens(target) <= _tokens(c.summary):
                # a summary names the item only when it holds all of the item's words
                s = 0.8 * lexical_score(target, c.summary)
                if s > lex:
                    lex, how = s, "summary"
            matches.append(Match(c, lex, how))
        if self.use_embeddings and not lexical_only and pool and max(m.score for m in matches) < self.strong:
            started = time.perf_counter()
            sims = self._encoder().similarity([target], [c.label for c in pool])[0]
            self.model_ms += (time.perf_counter() - started) * 1000
            for m, sim in zip(matches, sims):
                if normalise(m.control.label) in GENERIC_ONE_WORD or normalise(target) in GENERIC_ONE_WORD:
                    continue  # generic one-word names match exactly or not at all
                sem = 0.92 * float(sim)
                if sem > m.score:
                    m.score, m.how = sem, "semantic"
        for m in matches:
            # a list container or a screen-sized background is a poor tap target
            if m.control.role == "scrollable":
                m.score *= 0.6
        matches.sort(key=lambda m: -m.score)
        return matches

    def best(
        self, target: str, controls: Sequence[Control], threshold: float,
        roles: Optional[Iterable[str]] = None,
    ) -> Optional[Match]:
        ranked = self.rank(target, controls, roles)
        if ranked and ranked[0].score >= threshold:
            return ranked[0]
        return None
