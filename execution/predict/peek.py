"""Lookahead: when the current item is absent or only loosely there, the next named item decides.

A person following "Apps & notifications > Advanced > Special app access" on a phone without
"Advanced" sees Special app access and taps it; one who finds only a loose match scrolls the
screen for the next name before taking it. Reads the predictor's settings (``use_lookahead``,
``skip_grouping_steps``, ``match_threshold``, ``max_scrolls``) and the per-item ``peek`` state.
"""

from __future__ import annotations

from typing import Callable, Optional, Union

from execution.distill import Control
from execution.predict.base import PredictContext, Prediction
from execution.predict.gestures import main_scrollable, swipe_action
from execution.predict.match import Match, Matcher, lexical_score
from execution.predict.moves import Act, Skip
from execution.predict.plan import PlanItem, PlanState, SearchPhase
from verirank_core.execution_records import ActionType, DeviationKind

__all__ = ["Lookahead"]

#: the definition's loose match: one name's words all in the other's, covering half of it
#: (``match.lexical_score`` gives it 0.72 and up; docs/agent.md, "verified")
_WORD_RULE = 0.72


def _written_as_a_name(name: str) -> bool:
    """Capitalised ("Storage"), a number ("4G"), or a brand's camel case ("iPhone Storage")."""
    first = (name.split() or [""])[0]
    return first[:1].isupper() or first[:1].isdigit() or (first[:1].islower() and any(ch.isupper() for ch in first[1:]))


class Lookahead:
    """Mixed into :class:`~execution.predict.heuristic.HeuristicPredictor`."""

    use_lookahead: bool
    skip_grouping_steps: bool
    match_threshold: float
    max_scrolls: int
    _noop: Callable[..., Prediction]
    _in_app: Callable[..., bool]

    def _visible_name(self, name: str, ctx: PredictContext, loose: float = 0.75) -> Optional[Control]:
        """The control showing ``name`` (or a card title of it), matched by words only."""
        names = [name]
        if ctx.knowledge is not None and self.use_knowledge:
            names += ctx.knowledge.titles(name)
        best, score = None, 0.0
        for n in names:
            for c in ctx.ui.controls:
                if c.label and c.role != "scrollable":
                    sc = lexical_score(n, c.label) if n == name else (1.0 if lexical_score(n, c.label) >= 0.9 else 0.0)
                    if sc > score:
                        best, score = c, sc
        return best if score >= loose else None

    def _lookahead(self, item: PlanItem, ctx: PredictContext, st: PlanState,
                   matcher: Matcher) -> Optional[Skip]:
        """An absent (or loosely matching) grouping yields to the next named item when that is visible.

        "Apps & notifications > Advanced > Special app access" on a phone without "Advanced":
        Special app access is on screen, so Advanced is skipped. Never a setting (switch,
        checkbox, value), never the page's last named item, and only to the *next* name
        (later references to the same name are one name): two missing names end the attempt.
        """
        if not (self.use_lookahead or self.skip_grouping_steps) or not item.skippable:
            return None
        if (item.step, item.pos) in st.unskipped:
            return None  # skipped once and the page's route led nowhere: looked for in full now
        nxt = st.plan.next_name(item.step, item.pos)
        while nxt is not None and self._passed_over(nxt, ctx):
            nxt = st.plan.next_name(nxt.step, nxt.pos)
        if nxt is None:
            return None
        if st.item.peek.phase in ("down", "up"):
            return self._peek(item, nxt, None, ctx, st)
        if not self.use_lookahead:
            # the older rule: only a whole grouping step yields to the first item of the next step
            first_of_next = st.plan.of_step(item.step + 1)[:1]
            if item.pos != 0 or len(st.plan.of_step(item.step)) != 1 or first_of_next != [nxt]:
                return None
        here = None
        if item.name:
            ranked = [m for m in matcher.rank(item.name, ctx.ui.controls, lexical_only=True)
                      if m.control.role != "scrollable"]
            here = ranked[0] if ranked and ranked[0].score >= self.match_threshold else None
            if here is not None and here.score >= 0.9:
                return None  # the item itself is on screen
            if here is None and ctx.ui.title and lexical_score(item.name, ctx.ui.title) >= 0.9:
                return None  # already on its screen
        if not _written_as_a_name(nxt.name or ""):
            return None  # "turn notifications off" describes an effect; a UI name is written capitalised
        there = self._visible_name(nxt.name or "", ctx)
        if there is None and here is None and self._searched(ctx, st):
            # the item is missing from the whole screen: the next name may show by the word rule
            # alone ("iPhone Storage" as "Storage"); before the screen is searched it may not, as
            # the item may be further down ("System" below the fold, "OTG Storage" as "Storage")
            there = self._visible_name(nxt.name or "", ctx, loose=_WORD_RULE)
        if there is None and here is not None and self.use_lookahead:
            return self._peek(item, nxt, here, ctx, st)
        if there is None or (here is not None and there.id == here.control.id):
            return None
        how = "only loosely matches" if here is not None else "is not here"
        return Skip(f"{item.name or item.intent.describe()!r} {how} but the next named item "
                     f"{nxt.name!r} is ({there.label!r}): skipping to it", nxt)

    def _passed_over(self, it: PlanItem, ctx: PredictContext) -> bool:
        """A later item the lookahead does not skip to: "Go to Settings" while in Settings (the way
        into the app is no name; docs/agent.md, "verified"), or an optional item not on screen ("If you
        can't find the app, first tap See all apps")."""
        if it.intent.kind == "open" and it.name is not None and self._in_app(it.name, ctx.ui):
            return True
        return bool(it.intent.condition) and it.alternative_of is None and self._visible_name(it.name or "", ctx) is None

    @staticmethod
    def _searched(ctx: PredictContext, st: PlanState) -> bool:
        """Has the current item been looked for over the whole screen (scrolled down and back up)?"""
        sr = st.item.search
        back_at_top = sr.phase == SearchPhase.UP and sr.up >= sr.down - 1
        return back_at_top or sr.phase == SearchPhase.BACK or main_scrollable(ctx.ui) is None

    def _peek(self, item: PlanItem, nxt: PlanItem, here: Optional[Match], ctx: PredictContext,
              st: PlanState) -> Union[Act, Skip, None]:
        """A loose match yields to the next named item anywhere on its screen, below the fold too.

        "Tap Notifications" on a home screen whose "Apps & Notifications" only loosely matches,
        then "Tap Tips": a person scrolls and finds "Tips & Support" further down, so the loose
        match is not taken (docs/agent.md, "verified": scrolling is allowed, a loose match yields
        to a next name visible as a different item). Scroll down looking for the next name, then
        back up to the loose match when it is not there.
        """
        pk = st.item.peek
        container = main_scrollable(ctx.ui)
        if pk.phase == "done" or (pk.phase is None and container is None):
            return None
        if pk.phase is None:
            pk.phase, pk.label = "down", here.control.label if here is not None else None
        there = self._visible_name(nxt.name or "", ctx)
        loose = [c for c in ctx.ui.controls if pk.label and c.label == pk.label]
        if there is not None and not any(c.id == there.id for c in loose):
            pk.phase = "done"
            return Skip(f"{item.name!r} only loosely matches {pk.label!r}; the next named item {nxt.name!r} "
                        f"is further down this screen ({there.label!r}): skipping to it", nxt)
        last = ctx.history[-1] if ctx.history else None
        stalled = last is not None and last.action.type == ActionType.SWIPE and not last.changed
        if pk.phase == "down":
            if container is not None and pk.down < self.max_scrolls and not (pk.down and stalled):
                pk.down += 1
                return Act(swipe_action(ctx.ui, "down", f"{item.name!r} only loosely matches {pk.label!r}: look "
                                                        f"further down for the next named item {nxt.name!r}",
                                        container),
                           done=False, deviation=True, expect_change=False, kind=DeviationKind.SCROLL.value)
            pk.phase = "up"
            stalled = False
        if pk.phase == "up" and container is not None and pk.up < pk.down and not loose and not (pk.up and stalled):
            pk.up += 1
            return Act(swipe_action(ctx.ui, "up", f"{nxt.name!r} is not on this screen: back to {pk.label!r}",
                                    container),
                       done=False, deviation=True, expect_change=False, kind=DeviationKind.SCROLL.value)
        pk.phase = "done"
        return None

    def _skip_to(self, skip: Skip, ctx: PredictContext, st: PlanState, matcher: Matcher,
                 notes: list[str]) -> Prediction:
        """Record the skip as a no-op; the plan resumes at the visible item (or the step ends)."""
        why = "; ".join(notes + [skip.why])
        if skip.to.step == ctx.step_index:
            st.skipped = (ctx.step_index, st.pos)
            st.pos = skip.to.pos
            st.next_item()
            return self._noop(ctx, why, matcher, kind=DeviationKind.SKIP.value, advance=False)
        st.pos = len(st.plan.of_step(ctx.step_index))
        return self._noop(ctx, why, matcher, kind=DeviationKind.SKIP.value, advance=True)
