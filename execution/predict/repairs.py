"""Repairs of a page the heuristic predictor may make when an item is not on screen.

The blind search (scroll down, back up, go back a screen: ``scroll``/``search``), reflection
(go back once to the screen of the last forward tap and retry that step's runner-up, MobA:
``reflection``) and the UI map's route (``ui_map``, off by default). Each action they return is a
deviation of its kind. They read and write the typed per-item state of
:class:`~execution.predict.plan.PlanState` and the predictor's settings (``max_scrolls``,
``max_backs``, ``use_reflection``, ``match_threshold``, ``ui_map_max_actions``).
"""

from __future__ import annotations

from typing import Callable, Optional

from execution.predict.base import PredictContext
from execution.predict.gestures import control_action, main_scrollable, swipe_action
from execution.predict.match import Matcher, lexical_score
from execution.predict.moves import Act
from execution.predict.plan import PlanState, ReflectionState, SearchPhase, SearchState
from execution.predict.steps import Intent
from verirank_core.execution_records import Action, ActionType, DeviationKind

__all__ = ["Repairs"]

#: intents whose target the UI map can route to
ROUTABLE = frozenset({"open", "tap", "long_press", "toggle", "set", "select"})


class Repairs:
    """Mixed into :class:`~execution.predict.heuristic.HeuristicPredictor`."""

    max_scrolls: int
    max_backs: int
    use_reflection: bool
    match_threshold: float
    ui_map_max_actions: int
    _follow: Callable[..., object]

    def _reflect(self, intent: Intent, ctx: PredictContext, st: PlanState, matcher: Matcher) -> Optional[Act]:
        """MobA-style reflection: the item is missing, so the previous tap probably went astray.

        Go back along the recorded path to the screen of the last forward tap, then retry
        the step that tap served with its runner-up control, once. The page's current step
        checks the outcome: its item must then be found (or the episode stops).

        Only a navigation is retried. A tap whose recorded effect was a state change (it hit a
        switch or checkbox row, or a switch of its screen shows the other state afterwards, in
        place or once back there) took effect: retrying its step would undo it, so reflection
        leaves it, as a careful person stops when the next named item is not there.
        """
        if not self.use_reflection:
            return None
        r = st.reflection
        if r.phase is None:
            last = next((h for h in reversed(ctx.history)
                         if not h.noop and h.ok and h.changed and h.action.type == ActionType.CLICK
                         and h.signature and h.signature != ctx.ui.signature), None)
            tap = st.taps.get((last.signature, tuple(last.action.target_bounds or ()))) if last else None
            if last is None or (tap is not None and (tap.toggle or tap.flipped_on(ctx.ui.controls))):
                # a tap that changed a state (a switch or checkbox row, or a row that flipped one in
                # place) took effect: retrying its step would undo it; only the search goes on
                r.phase = "done"
                return self._search(intent, ctx, st)
            st.reflection = ReflectionState(phase="retry", avoid_label=last.action.target_label,
                                            avoid_bounds=last.action.target_bounds, step=last.step_index,
                                            tap=tap)
            st.item.search = SearchState(backs=self.max_backs)  # scroll the earlier screen, but no further backs
            st.item.entered = False
            return Act(Action(type=ActionType.BACK,
                               rationale=f"reflection: {intent.target or intent.kind!r} not found after tapping "
                                         f"{last.action.target_label!r}; go back to that screen and retry"),
                        done=False, deviation=True, kind=DeviationKind.REFLECTION.value)
        if r.phase == "retry":
            r.phase = "done"
            st.item.search = SearchState(backs=self.max_backs)
            if r.tap is not None and r.tap.flipped_on(ctx.ui.controls):
                # back on the tap's screen, a switch shows the other state: the tap changed it as it
                # navigated; a retry would change it back
                return None
            prev = r.step
            prev_items = st.plan.of_step(prev) if prev is not None else []
            # the intent that tap served ("Hotspot & tethering" of a breadcrumb, not its last item)
            targets = [it.intent.target for it in prev_items if it.intent.target]
            prev_target = max(targets, key=lambda t: lexical_score(t, r.avoid_label or ""), default=None)
            if not prev_target:
                return None
            # the control tapped before (twins with the same label stay candidates)
            ranked = [m for m in matcher.rank(prev_target, ctx.ui.controls)
                      if m.control.role != "scrollable"
                      and not (m.control.label == r.avoid_label and list(m.control.bounds) == list(r.avoid_bounds or []))]
            if ranked and ranked[0].score >= self.match_threshold:
                # the page's words fit the runner-up as well as the first pick: the agent erred,
                # not the page (the judge credits the retry only at this threshold)
                c = ranked[0].control
                st.item.search = SearchState()
                r.retry_step = prev
                return Act(control_action(ActionType.CLICK, c,
                                            f"reflection: retry step {prev + 1} ({prev_target!r}) with "
                                            f"{c.label!r} at {list(c.bounds)} instead of {r.avoid_label!r} at {r.avoid_bounds}"),
                            done=False, control_id=c.id, deviation=True, kind=DeviationKind.REFLECTION.value)
            return self._unskip(ctx, st, matcher)
        return None

    def _unskip(self, ctx: PredictContext, st: PlanState, matcher: Matcher) -> Optional[Act]:
        """Back on the screen of a skip within this step: look for the item passed over after all.

        "Tap System and then Gestures": "Gestures" seemed to show as "Buttons & gestures", so
        System was skipped; that screen had no next item. A careful person looks for System, which
        was further down. Only within the current step, once per item.
        """
        if st.skipped is None or st.skipped[0] != ctx.step_index:
            return None
        st.pos = st.skipped[1]
        st.unskipped.add(st.skipped)
        st.skipped = None
        st.next_item()
        st.item.search = SearchState(backs=self.max_backs)  # this screen only: scroll, no further backs
        act = self._follow(st.plan.of_step(ctx.step_index)[st.pos], ctx, st, matcher)
        if isinstance(act, Act):
            act.deviation, act.kind = True, DeviationKind.REFLECTION.value
            act.action.rationale = f"reflection: the skip led nowhere; look for the item passed over: {act.action.rationale}"
            return act
        return None

    # --- when the target is not on screen ------------------------------------------

    def _route(self, intent: Intent, ctx: PredictContext, st: PlanState) -> Optional[Act]:
        """The UI map's next move toward a screen that shows the target (None: the map cannot help)."""
        target = intent.target or intent.value
        search = st.item.search
        if ctx.ui_map is None or not target or intent.kind not in ROUTABLE or search.map_done:
            return None
        used = search.map_actions
        last = ctx.history[-1] if ctx.history else None
        stalled = (last is not None and last.deviation and last.action.type == ActionType.SWIPE
                   and not last.changed and used)
        if used >= self.ui_map_max_actions or stalled:
            st.item.search = SearchState(map_done=True)
            return None
        nav = ctx.memory.get("ui_map_navigator")
        if nav is None or nav.map is not ctx.ui_map:
            from execution.predict.uimap import MapNavigator

            nav = ctx.memory["ui_map_navigator"] = MapNavigator(ctx.ui_map)
        move = nav.next_move(target, ctx.ui)
        if move is None:
            return None
        # a new screen may come: the blind search starts afresh there
        st.item.search = SearchState(map_actions=used + 1)
        if move.kind == "tap" and move.control is not None:
            return Act(control_action(ActionType.CLICK, move.control, move.why), done=False,
                        control_id=move.control.id, deviation=True, kind=DeviationKind.UI_MAP.value)
        if move.kind == "scroll":
            return Act(swipe_action(ctx.ui, "down", move.why, main_scrollable(ctx.ui)), done=False,
                        deviation=True, expect_change=False, kind=DeviationKind.UI_MAP.value)
        return Act(Action(type=ActionType.BACK, rationale=move.why), done=False, deviation=True,
                    kind=DeviationKind.UI_MAP.value)

    def _search(self, intent: Intent, ctx: PredictContext, st: PlanState) -> Optional[Act]:
        """Blind search: scroll the list down, back up to the top, then go back a screen and look there."""
        if intent.kind == "type" and st.no_credential is not None and intent.value is None:
            return None
        sr = st.item.search
        last = ctx.history[-1] if ctx.history else None
        last_unchanged = last is not None and last.deviation and last.action.type == ActionType.SWIPE and not last.changed
        container = main_scrollable(ctx.ui)
        what = intent.target or intent.value or intent.kind
        if sr.phase == SearchPhase.DOWN:
            if container is not None and sr.down < self.max_scrolls and not (sr.down and last_unchanged):
                sr.down += 1
                return Act(swipe_action(ctx.ui, "down", f"{what!r} not on screen: scroll down to look", container),
                            done=False, deviation=True, expect_change=False, kind=DeviationKind.SCROLL.value)
            sr.phase = SearchPhase.UP
            last_unchanged = False
        if sr.phase == SearchPhase.UP:
            if container is not None and sr.up < sr.down - 1 and not (sr.up and last_unchanged):
                sr.up += 1
                return Act(swipe_action(ctx.ui, "up", f"{what!r} not found below: back to the top", container),
                            done=False, deviation=True, expect_change=False, kind=DeviationKind.SCROLL.value)
            sr.phase = SearchPhase.BACK
        if self.use_reflection and st.reflection.phase is None and ctx.history:
            return None  # reflection goes back first, along the recorded path (then this search resumes)
        if sr.backs < self.max_backs:
            st.item.search = SearchState(backs=sr.backs + 1)
            st.item.entered = False  # a new screen: "the target's own screen" no longer holds
            return Act(Action(type=ActionType.BACK, rationale=f"{what!r} not on this screen: go back and look"),
                        done=False, deviation=True, kind=DeviationKind.SEARCH.value)
        return None
