"""The embedded default predictor: follow the page plan, find each item on screen, act.

The page is read once into a :class:`~execution.predict.plan.PagePlan` (ordered named items
with their intents, ``execution/predict/steps.py``). ``predict`` takes the current item and
``_follow`` tries, in this order:

1. the page's other choice ("To turn off, ..." after "To turn on, ..."): not done (``alternative``);
2. a step outside the app ("From the home screen, tap Apps"): done when already in the app;
3. the item's condition ("If you don't see X, tap Y": satisfied when X is on screen); then, after
   other steps, a path rooted at the app ("Go to Settings", "Settings > A", "In Settings, tap X")
   starts again on its home screen: Back until it shows (``system_ui.py``);
4. **lookahead**: the item is absent or only loosely there and the next named item is visible:
   skip to it (``skip``), never past a setting or the page's last named item; a loose match first
   scrolls its screen for the next name below the fold (``scroll``), as a person would;
5. a knowledge card when unsure (``knowledge``), then the item itself:

   * ``open X``: satisfied when the foreground app is X; else tap an icon X, else launch it;
   * ``tap X`` / ``long_press X``: the best-matching control; satisfied when the screen's title is X;
   * ``toggle X on|off``: tapped only if not already in the asked state; a row without a switch
     is opened and the switch on the next screen is set;
   * ``set X to V`` / ``select V``: tap the option V if visible (satisfied if checked or shown as
     the row's summary), else open X;
   * ``type V [in X]``: type into the matching, focused or first edit field (values come from
     ``extra["credentials"]``, never from the page);
   * ``scroll``, ``back``, ``home``, ``enter``: the gesture or key;

6. the page's alternatives ("A or B", ``alternative``), a placeholder ("the app you want",
   ``placeholder``), an unmet condition (satisfied), a card title seen after nothing matched,
   an "Advanced" row that hides the item (``expand``), the home-screen counterpart;
7. repairs: the UI map (``ui_map``, off by default), the blind search (scroll down, back up, go
   back: ``scroll``/``search``) and reflection (go back once and retry the earlier step's
   runner-up: ``reflection``). An item found only after going back is recorded as that repair.

Lookahead is in ``peek.py``, the phone's own UI in ``system_ui.py``, home-screen counterparts in
``counterparts.py`` and the repairs in ``repairs.py``, each mixed into the predictor.
When nothing is left it returns None and leaves the reason in ``ctx.stuck_reason``.
All per-episode state is the typed :class:`~execution.predict.plan.PlanState` in
``ctx.memory["heuristic"]``, so one predictor object can serve many episodes and threads.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Optional, Union

from execution.distill import Control
from execution.goal import fit, read_goal, words_of
from execution.predict.base import ActionPredictor, PredictContext, Prediction
from execution.predict.moves import Act, Satisfied, Skip
from execution.predict.repairs import ROUTABLE as _ROUTABLE, Repairs
from execution.predict.counterparts import Counterparts
from execution.predict.gestures import (
    KNOWN_APPS, control_action, in_shade, main_scrollable, on_launcher, slide_action, swipe_action,
)
from execution.predict.match import Match, Matcher, lexical_score, normalise
from execution.predict.peek import Lookahead
from execution.predict.plan import (PagePlan, PlanItem, PlanState, ReflectionState, TapRecord)
from execution.predict.steps import Intent
from execution.predict.system_ui import SystemUI
from verirank_core.execution_config import AgentConfig, HeuristicPredictorConfig
from verirank_core.execution_records import Action, ActionType, DeviationKind
from execution.uicontext import UIContext

__all__ = ["HeuristicPredictor", "KNOWN_APPS", "swipe_action"]


class HeuristicPredictor(Lookahead, SystemUI, Counterparts, Repairs, ActionPredictor):
    """Rule-based action prediction over distilled controls (no model server needed)."""

    name = "heuristic"

    def __init__(
        self,
        match_threshold: float = 0.62,
        use_embeddings: bool = True,
        max_scrolls: int = 4,
        max_backs: int = 1,
        encoder: Any = None,
        use_ui_map: bool = False,
        ui_map: Optional[str] = None,
        ui_map_max_actions: int = 8,
        use_knowledge: bool = False,
        knowledge: Optional[str] = None,
        curiosity_threshold: float = 0.35,
        use_reflection: bool = False,
        skip_grouping_steps: bool = False,
        use_lookahead: bool = False,
    ):
        self.match_threshold = match_threshold
        self.use_embeddings = use_embeddings
        self.max_scrolls = max_scrolls
        self.max_backs = max_backs
        self.encoder = encoder
        #: ask run_episode for the app's UI map (ui_map: a configured source, else the sim's world)
        self.use_ui_map = use_ui_map
        self.ui_map = ui_map
        self.ui_map_max_actions = ui_map_max_actions
        #: ask run_episode for the device's knowledge cards (knowledge: a configured cards file)
        self.use_knowledge = use_knowledge
        self.knowledge = knowledge
        self.curiosity_threshold = curiosity_threshold
        self.use_reflection = use_reflection
        self.skip_grouping_steps = skip_grouping_steps
        #: follow the page plan with lookahead (within and across steps); off: only whole grouping steps
        self.use_lookahead = use_lookahead

    @classmethod
    def from_config(cls, cfg: HeuristicPredictorConfig, agent: Optional[AgentConfig] = None) -> "HeuristicPredictor":
        """From ``ExecutionConfig.agent.heuristic`` (and the UI-map settings of ``agent``)."""
        maps = {}
        if agent is not None:
            maps = dict(use_ui_map=agent.use_ui_map, ui_map=agent.ui_map,
                        ui_map_max_actions=agent.ui_map_max_actions,
                        use_knowledge=agent.use_knowledge, knowledge=agent.knowledge,
                        curiosity_threshold=agent.curiosity_threshold,
                        use_reflection=agent.use_reflection, skip_grouping_steps=agent.skip_grouping_steps,
                        use_lookahead=agent.use_lookahead)
        return cls(
            match_threshold=cfg.match_threshold, use_embeddings=cfg.use_embeddings,
            max_scrolls=cfg.max_scrolls, max_backs=cfg.max_backs, **maps,
        )

    def __repr__(self) -> str:
        return (f"HeuristicPredictor(match_threshold={self.match_threshold}, "
                f"use_embeddings={self.use_embeddings}, max_scrolls={self.max_scrolls}, "
                f"max_backs={self.max_backs}, use_ui_map={self.use_ui_map}, "
                f"use_knowledge={self.use_knowledge}, use_reflection={self.use_reflection}, "
                f"use_lookahead={self.use_lookahead})")

    # --- the decision ---------------------------------------------------------

    def predict(self, ctx: PredictContext) -> Optional[Prediction]:
        st = self._state(ctx)
        items = st.plan.of_step(ctx.step_index)
        matcher = Matcher(self.use_embeddings, encoder=self.encoder)
        notes: list[str] = []
        while True:
            if st.pos >= len(items):
                why = "; ".join(notes) if notes else "informational step: nothing to do"
                return self._noop(ctx, why, matcher)
            item = items[st.pos]
            result = self._follow(item, ctx, st, matcher)
            if isinstance(result, Skip):
                return self._skip_to(result, ctx, st, matcher, notes)
            if isinstance(result, Satisfied):
                st.pos += 1
                st.next_item()
                if result.kind is not None:
                    # a deviation is a record of its own (a no-op: nothing is sent to the device)
                    return self._noop(ctx, "; ".join(notes + [result.why]), matcher, kind=result.kind,
                                      advance=st.pos >= len(items))
                notes.append(result.why)
                continue
            if result is None:
                ctx.stuck_reason = self._stuck_reason(item.intent, ctx, st, matcher)
                return None
            if notes:
                result.action.rationale = "; ".join(notes + [result.action.rationale])
            if result.done:
                st.pending = st.pos + 1
            retry, st.reflection.retry_step = st.reflection.retry_step, None
            self._remember_tap(result, ctx, st)
            return Prediction(
                action=result.action,
                # a reflection retry redoes an earlier step: it is recorded under that step
                step_index=ctx.step_index if retry is None else retry,
                advance=result.done and st.pos + 1 == len(items),
                deviation=result.deviation,
                deviation_kind=result.kind if result.deviation else None,
                control_id=result.control_id,
                expect_change=result.expect_change,
                model_ms=matcher.model_ms,
            )

    def _follow(self, item: PlanItem, ctx: PredictContext, st: PlanState,
                matcher: Matcher) -> Union[Act, Satisfied, Skip, None]:
        """The next move for one plan item, trying the page's own reading first, repairs last."""
        intent = item.intent
        if item.alternative_of is not None:
            return Satisfied(f"{intent.describe()} is the page's other choice to "
                              f"step {item.alternative_of[0] + 1}; that one was followed",
                              kind=DeviationKind.ALTERNATIVE.value)
        outside = self._outside_app(item, ctx, st)
        if outside is not None:
            return outside
        if intent.kind in ("home", "menu", "shade", "drawer"):
            return self._system_ui(item, ctx)
        if st.reflection.phase == "retry":
            # reflection went back a screen: only the earlier step's runner-up is tried there, never
            # the current item itself (found there, the page's route would not have led to it)
            return self._reflect(intent, ctx, st, matcher)
        result: Union[Act, Satisfied, Skip, None] = self._condition(intent, ctx, matcher)
        if result is None:
            result = self._to_app_home(item, ctx, st)
        if result is None:
            result = self._lookahead(item, ctx, st, matcher)
        if result is None:
            result = self._knowledge(intent, ctx, st, matcher, before=True)
        if result is None and not intent.placeholder:
            result = self._plan(intent, ctx, st, matcher)
        for alt in intent.alternatives if result is None else ():
            # "Tap Security or Security & location": any name the page offers is the page's word
            if alt != intent.target:
                result = self._plan(dataclasses.replace(intent, target=alt, alternatives=()), ctx, st, matcher)
                if isinstance(result, Act):
                    result.deviation, result.kind = True, DeviationKind.ALTERNATIVE.value
                    result.action.rationale = f"the page's alternative {alt!r}: {result.action.rationale}"
                if result is not None:
                    break
        if result is None and intent.placeholder and st.reflection.phase is None and not st.item.search.backs:
            # only on the screen the page led to, never on one a repair went back to
            result = self._placeholder(intent, ctx, matcher)
        if result is None and intent.condition:
            result = Satisfied(f"if {intent.condition}: {intent.describe()} is not on this screen; "
                                "the condition does not apply")
        if result is None:
            result = self._knowledge(intent, ctx, st, matcher, before=False)
        if result is None:
            result = self._expand(intent, ctx)
        if result is None:
            result = self._counterpart(intent, ctx, st, matcher)
        if result is None:
            result = self._route(intent, ctx, st)
        if result is None:
            result = self._via_drawer(intent, ctx, st)
        if result is None:
            result = self._search(intent, ctx, st)
        if result is None:
            result = self._reflect(intent, ctx, st, matcher)
        if isinstance(result, Act) and not result.deviation and result.action.type != ActionType.WAIT:
            # found only after a repair went back a screen: the page's route did not lead here
            repair = (DeviationKind.REFLECTION if st.reflection.phase is not None
                      else DeviationKind.SEARCH if st.item.search.backs else None)
            if repair is not None:
                result.deviation, result.kind = True, repair.value
                result.action.rationale = f"after going back ({repair.value}): {result.action.rationale}"
        return result

    @staticmethod
    def _remember_tap(result: Act, ctx: PredictContext, st: PlanState) -> None:
        """Record a tap with the screen's on/off states, so reflection can tell whether it changed one."""
        if result.action.type != ActionType.CLICK or result.control_id is None:
            return
        c = next((c for c in ctx.ui.controls if c.id == result.control_id), None)
        if c is None:
            return
        states = tuple((o.label, tuple(o.bounds), bool(o.checked)) for o in ctx.ui.controls if o.checked is not None)
        st.taps[(ctx.ui.signature or "", tuple(c.bounds))] = TapRecord(
            label=c.label, bounds=tuple(c.bounds), toggle=c.checked is not None, states=states)

    def _state(self, ctx: PredictContext) -> PlanState:
        st: Optional[PlanState] = ctx.memory.get("heuristic")
        if st is None:
            st = ctx.memory["heuristic"] = PlanState(plan=PagePlan.read(ctx.instructions))
        if st.home_title is None and not (on_launcher(ctx.ui) or in_shade(ctx.ui)) \
                and ctx.ui.package == (ctx.app or ctx.ui.package):
            # the app's first screen: at the start, or where the page's way from the home screen led
            st.home_title = ctx.ui.title or ""
        if st.step != ctx.step_index:
            st.step, st.pos, st.pending = ctx.step_index, 0, None
            st.next_item()
            st.reflection = ReflectionState()
        elif st.pending is not None:
            last = ctx.history[-1] if ctx.history else None
            if last is not None and last.ok:
                st.pos = st.pending
                st.next_item()
            st.pending = None
        return st

    def _noop(self, ctx: PredictContext, why: str, matcher: Matcher, kind: Optional[str] = None,
              advance: bool = True) -> Prediction:
        return Prediction(
            action=Action(type=ActionType.WAIT, rationale=why),
            step_index=ctx.step_index, advance=advance, noop=True, expect_change=False,
            deviation=kind is not None, deviation_kind=kind, model_ms=matcher.model_ms,
        )

    def _threshold(self, ui: UIContext) -> float:
        """How close a name must be: in the shade only a tile of that name ("Wi-Fi" is not "Wi-Fi Calling")."""
        return max(self.match_threshold, 0.9) if in_shade(ui) else self.match_threshold

    def _best(self, target: str, ui: UIContext, matcher: Matcher, roles=None, threshold=None):
        pool = [c for c in ui.controls if c.role != "scrollable"] if roles is None else ui.controls
        return matcher.best(target, pool, self._threshold(ui) if threshold is None else threshold, roles)

    def _plan(
        self, intent: Intent, ctx: PredictContext, st: PlanState, matcher: Matcher
    ) -> Union[Act, Satisfied, None]:
        ui = ctx.ui
        kind = intent.kind
        if kind in ("back", "enter"):
            return Act(Action(type=ActionType(kind), rationale=f"step says {kind}"), done=True)
        if kind == "open":
            return self._open(intent, ctx, st, matcher)
        if kind in ("tap", "long_press"):
            m = self._best(intent.target or "", ui, matcher)
            if m and m.how == "summary" and normalise(m.control.label) == "advanced":
                # AndroidX's "Advanced" row lists the rows it hides: expand it, then tap the target
                return Act(control_action(ActionType.CLICK, m.control,
                                            f"{intent.target!r} is hidden under {m.control.label!r}: expand it"),
                            done=False, control_id=m.control.id, deviation=True, kind=DeviationKind.EXPAND.value)
            if m and m.how == "summary":
                m = None  # a row whose summary mentions the name is a menu the page does not name
            if m:
                t = ActionType.CLICK if kind == "tap" else ActionType.LONG_PRESS
                return Act(control_action(t, m.control, f"{kind} {m.control.label!r} (matches {intent.target!r}, {m.how} {m.score:.2f})"),
                            done=True, control_id=m.control.id)
            if intent.target and ui.title and lexical_score(intent.target, ui.title) >= 0.9:
                return Satisfied(f"already on the {ui.title!r} screen")
            if intent.target and self._in_app(intent.target, ui) and ctx.nothing_done:
                # "Tap System settings" (the app by another of its names) before anything was done:
                # the episode opened that app already
                return Satisfied(f"already in {intent.target!r}, the app the episode opened")
            return None
        if kind == "toggle":
            return self._toggle(intent, ctx, st, matcher)
        if kind in ("set", "select"):
            return self._set(intent, ctx, st, matcher)
        if kind == "type":
            return self._type(intent, ctx, st, matcher)
        if kind == "scroll":
            return self._scroll(intent, ctx, st, matcher)
        return None

    def _in_app(self, target: str, ui: UIContext) -> bool:
        name = re.sub(r"\b(app|application)\b", "", normalise(target)).strip()
        if not name or in_shade(ui):
            return False
        if KNOWN_APPS.get(name) == ui.package:
            return True
        parts = set(re.split(r"[._]", ui.package.lower()))
        words = name.split()
        return name.replace(" ", "") in parts or all(w in parts for w in words)

    @staticmethod
    def _names_app(target: str, ctx: PredictContext) -> bool:
        """``target`` says the episode's app by one of its names ("main Settings") or its gear icon."""
        t = f" {normalise(target)} "
        names = {n for n, p in KNOWN_APPS.items() if p == ctx.app} | {(ctx.app or "").rsplit(".", 1)[-1].lower()}
        names |= {n.removesuffix("s") for n in names}
        return any(n and f" {n} " in t for n in names) or bool(re.search(r" (?:gear|cog|cogwheel) ", t))

    def _open(self, intent: Intent, ctx: PredictContext, st: PlanState, matcher: Matcher):
        ui, target = ctx.ui, intent.target or ""
        if self._in_app(target, ui):
            return Satisfied(f"already in {target}")
        m = self._best(target, ui, matcher)
        if m:
            return Act(control_action(ActionType.CLICK, m.control, f"open {target!r} by tapping {m.control.label!r}"),
                        done=True, control_id=m.control.id)
        if ui.title and lexical_score(target, ui.title) >= 0.9:
            return Satisfied(f"already on the {ui.title!r} screen")
        pkg = KNOWN_APPS.get(re.sub(r"\b(app|application)\b", "", normalise(target)).strip())
        if ctx.app and ctx.step_index == 0 and ctx.nothing_done and self._names_app(target, ctx):
            # the episode launched the page's app; "Open the main Settings" is the first thing pages say
            # (never another app: "open Datally", "open the Google Maps app")
            return Satisfied(f"the episode started in {ctx.app}; taking {target!r} as that app")
        if ctx.ui_map is not None and ctx.ui_map.find(target) and ctx.ui.package == ctx.ui_map.app:
            return None  # a screen of this app has that name ("Open Settings" in a calendar): route to it
        via = self._via_drawer(intent, ctx, st)
        if via is not None:
            return via
        if pkg:
            return Act(Action(type=ActionType.LAUNCH, package=pkg, rationale=f"launch {target!r} ({pkg})"), done=True)
        return None

    def _toggle(self, intent: Intent, ctx: PredictContext, st: PlanState, matcher: Matcher):
        ui, target = ctx.ui, intent.target or ""
        ranked = [m for m in matcher.rank(target, ui.controls) if m.score >= self._threshold(ui)]
        switch = next((m for m in ranked if m.control.checked is not None and m.score >= ranked[0].score - 0.1), None)
        if switch is None and (st.item.entered or (ui.title and lexical_score(target, ui.title) >= 0.9)):
            # inside the target's own screen: its main switch is the first checkable control
            checkables = [c for c in ui.controls if c.checked is not None]
            scored = matcher.rank(target, checkables) if checkables else []
            if scored and scored[0].score >= 0.3:
                switch = scored[0]
            elif len(checkables) == 1:
                switch = Match(checkables[0], 0.0, "the screen's only switch")
        if switch is not None:
            c = switch.control
            if intent.state is not None and c.checked == intent.state:
                return Satisfied(f"{c.label!r} is already {'on' if c.checked else 'off'}; not toggled")
            want = "flip" if intent.state is None else ("on" if intent.state else "off")
            act = control_action(ActionType.CLICK, c, f"turn {want} {c.label!r} (was {'on' if c.checked else 'off'})")
            widget = next((m for m in c.members if m.checkable and m.area > 0), None)
            if widget is not None:
                # a row that also opens a screen (Wi-Fi, Bluetooth) toggles only on its switch
                act.x, act.y = widget.center
            return Act(act, done=True, control_id=c.id)
        if ranked and ranked[0].score >= 0.75 and not st.item.entered:
            # a row named like the switch (no switch of its own) leads to the switch's screen
            c = ranked[0].control
            st.item.entered = True
            return Act(control_action(ActionType.CLICK, c, f"open {c.label!r} to find its switch"),
                        done=False, control_id=c.id)
        return None

    def _set(self, intent: Intent, ctx: PredictContext, st: PlanState, matcher: Matcher):
        ui = ctx.ui
        if intent.value:
            v = self._best(intent.value, ui, matcher)
            if v and v.how == "summary":
                return Satisfied(f"{v.control.label!r} already shows {v.control.summary!r}")
            if v and (v.control.checked or v.control.selected):
                return Satisfied(f"{v.control.label!r} is already selected")
            if v:
                return Act(control_action(ActionType.CLICK, v.control, f"choose {v.control.label!r}"),
                            done=True, control_id=v.control.id)
        if intent.target:
            t = self._best(intent.target, ui, matcher)
            if t and t.control.role == "slider" and not intent.value:
                # a slider's level is not in the screen's dump: no change to wait for
                return Act(slide_action(t.control, intent.direction, intent.target), done=True, control_id=t.control.id,
                           expect_change=False)
            if t and intent.value and t.control.summary and lexical_score(intent.value, t.control.summary) >= 0.9:
                return Satisfied(f"{t.control.label!r} already shows {t.control.summary!r}")
            if t and not st.item.entered:
                st.item.entered = bool(intent.value)
                return Act(control_action(ActionType.CLICK, t.control, f"open {t.control.label!r}"),
                            done=not intent.value, control_id=t.control.id)
        return None

    def _type(self, intent: Intent, ctx: PredictContext, st: PlanState, matcher: Matcher):
        ui = ctx.ui
        value = intent.value
        if value is None and intent.credential:
            value = (ctx.extra.get("credentials") or {}).get(intent.credential)
            if value is None:
                st.no_credential = f"no {intent.credential!r} in the credentials for a type step"
                return None
        if st.item.typed:
            return Act(Action(type=ActionType.ENTER, rationale="submit what was typed"), done=True)
        edits = [c for c in ui.controls if c.role == "edit"]
        edit = None
        if intent.target and edits:
            m = matcher.best(intent.target, edits, self.match_threshold * 0.8)
            edit = m.control if m else None
        if edit is None:
            edit = ui.focused_edit()
        if edit is None and intent.target:
            m = self._best(intent.target, ui, matcher)
            if m and not st.item.entered:
                st.item.entered = True
                return Act(control_action(ActionType.CLICK, m.control, f"open {m.control.label!r} to type into"),
                            done=False, control_id=m.control.id)
        if edit is None:
            return None
        if edit.value and normalise(edit.value) == normalise(value or "") and not intent.submit:
            return Satisfied(f"{edit.label!r} already holds the text")
        act = control_action(ActionType.INPUT, edit, f"type into {edit.label!r}")
        act.text = value
        if intent.submit:
            st.item.typed = True
        return Act(act, done=not intent.submit, control_id=edit.id)

    def _scroll(self, intent: Intent, ctx: PredictContext, st: PlanState, matcher: Matcher):
        ui = ctx.ui
        if intent.target:
            if self._best(intent.target, ui, matcher):
                return Satisfied(f"{intent.target!r} is visible")
            last = ctx.history[-1] if ctx.history else None
            if st.item.scrolls >= self.max_scrolls or (st.item.scrolls and last is not None and not last.changed):
                return None
        st.item.scrolls += 1
        direction = intent.direction or "down"
        container = main_scrollable(ui)
        return Act(swipe_action(ui, direction, f"scroll {direction}", container),
                    done=not intent.target, expect_change=False)

    # --- knowledge, skipped grouping steps, reflection ---------------------------------

    @staticmethod
    def _visible(title: str, ui: UIContext) -> Optional[Control]:
        """The control spelled like ``title`` (a rename's exact title), if on screen."""
        best, score = None, 0.0
        for c in ui.controls:
            if c.label and c.role != "scrollable":
                s = lexical_score(title, c.label)
                if s > score:
                    best, score = c, s
        return best if score >= 0.9 else None

    def _knowledge(self, intent: Intent, ctx: PredictContext, st: PlanState, matcher: Matcher,
                   before: bool) -> Union[Act, Satisfied, None]:
        """Map the page's word to this device's title through a knowledge card (AppCards).

        ``before``: the agent is unsure (curiosity above the threshold) and a card's title
        is on screen: use it instead of a weak match. Otherwise (nothing matched): walk
        the card's path toward the screen that shows the title.
        """
        kb = ctx.knowledge
        target = intent.target
        if kb is None or not self.use_knowledge or not target or intent.kind not in _ROUTABLE:
            return None
        ui = ctx.ui
        if st.item.renamed is not None:
            cards = [c for c in kb.lookup(target) if c.title == st.item.renamed[0]] or kb.lookup(target)
        else:
            cards = kb.lookup(target)
        if not cards:
            return None
        if before and st.item.renamed is None:
            from execution.knowledge import curiosity

            scores = sorted((lexical_score(target, c.label) for c in ui.controls if c.label), reverse=True)
            stalled = sum(1 for h in ctx.history if h.step_index == ctx.step_index and not h.noop)
            cur = curiosity(scores[:2] + ([1.0] if ui.title and lexical_score(target, ui.title) >= 0.9 else []),
                            stalled)
            if cur.score < self.curiosity_threshold:
                return None
            why_cur = cur.describe()
        else:
            why_cur = "nothing matched" if st.item.renamed is None else "continuing a rename"
        if intent.kind in ("tap", "open") and st.item.renamed is None:
            twin = self._counterpart_of(target, ctx, st)
            if twin is not None and not any(lexical_score(card.title, twin.label) >= 0.9 for card in cards):
                # the home screen shows a category in the page's own words ("Connections" ->
                # "Bluetooth & device connection"): a person reads that, not another vendor's naming
                return None
        for card in cards:
            shown = self._visible(card.title, ui) or (
                ui.title and lexical_score(card.title, ui.title) >= 0.9)
            if not shown and not (st.item.entered and st.item.renamed and st.item.renamed[0] == card.title):
                continue
            renamed = dataclasses.replace(intent, target=card.title)
            result = self._plan(renamed, ctx, st, matcher)
            if result is None:
                continue
            st.item.renamed = (card.title, card.source)
            note = f"knowledge card: {target!r} is {card.title!r} on this device ({card.source}); {why_cur}"
            if isinstance(result, Satisfied):
                return Satisfied(f"{note}; {result.why}")
            result.deviation, result.kind = True, DeviationKind.KNOWLEDGE.value
            result.action.rationale = f"{note}; {result.action.rationale}"
            return result
        # A card's title that is not on screen is not followed into menus the page does not
        # name (docs/agent.md, "verified"); the UI map (use_ui_map) may route there instead.
        return None

    @staticmethod
    def _expand(intent: Intent, ctx: PredictContext) -> Optional[Act]:
        """The target is hidden in a collapsed section whose "Advanced" row lists it: expand it."""
        target = intent.target or intent.value
        if not target or intent.kind not in _ROUTABLE:
            return None
        for c in ctx.ui.controls:
            if normalise(c.label) == "advanced" and c.summary:
                listed = [t.strip() for t in c.summary.split(",")]
                if any(lexical_score(target, t) >= 0.9 for t in listed):
                    return Act(control_action(ActionType.CLICK, c, f"{target!r} is hidden under "
                                                                   f"{c.label!r}: expand it"),
                                done=False, control_id=c.id, deviation=True, kind=DeviationKind.EXPAND.value)
        return None

    _NOT_SEE_RE = re.compile(r"^(?:you )?(?:do not|don't|can't|cannot|do n't) (?:see|find)\s+(?:the |an? )?(.+)$",
                             re.IGNORECASE)

    def _condition(self, intent: Intent, ctx: PredictContext, matcher: Matcher) -> Optional[Satisfied]:
        """"If you don't see X, tap Y": satisfied without acting when X is on screen."""
        if not intent.condition:
            return None
        m = self._NOT_SEE_RE.match(intent.condition.strip())
        if m and self._best(m.group(1), ctx.ui, matcher, threshold=0.85):
            return Satisfied(f"{m.group(1)!r} is on screen, so 'if {intent.condition}' does not apply")
        return None

    # --- lookahead, placeholders, steps outside the app ------------------------------

    def _placeholder(self, intent: Intent, ctx: PredictContext, matcher: Matcher) -> Optional[Act]:
        """'Tap the app you want', 'Select a preference: A B C': take an item of the list on screen."""
        ui = ctx.ui
        if intent.choices:
            for c in ui.controls:
                if c.label and c.role != "scrollable" and lexical_score(c.label, intent.choices) >= 0.75:
                    return Act(control_action(ActionType.CLICK, c, f"{c.label!r} is one of the choices the "
                                                                     f"page lists ({intent.choices!r})"),
                                done=True, control_id=c.id, deviation=True, kind=DeviationKind.PLACEHOLDER.value)
            return None
        container = main_scrollable(ui)
        if container is None:
            # a short list of options that does not scroll ("System navigation": three modes)
            rows = [c for c in ui.controls if c.role == "radio" and c.label]
        else:
            x1, y1, x2, y2 = container.bounds
            rows = [c for c in ui.controls
                    if c.role in ("list item", "button", "radio") and c.label and c is not container
                    and x1 <= c.center[0] <= x2 and y1 <= c.center[1] <= y2
                    and normalise(c.label) not in ("navigate up", "more options", "search")]
        if len(rows) < 2:
            return None  # not a list of items of one kind
        what = intent.target or intent.value or ""
        asked = self._asked_row(rows, what, ctx)
        c = asked or rows[0]
        why = (f"{what or 'an item'!r} is the reader's pick: the question asks for {c.label!r}" if asked else
               f"{what or 'an item'!r} means any item of the list: taking {c.label!r}")
        return Act(control_action(ActionType.CLICK, c, why), done=True, control_id=c.id, deviation=True,
                   kind=DeviationKind.PLACEHOLDER.value)

    def _asked_row(self, rows: list[Control], kind: str, ctx: PredictContext) -> Optional[Control]:
        """The one row of the kind the page names that names the whole of what the question asks
        ("Gesture navigation" for "your new navigation option" and "turn on gesture navigation"),
        else None: the reader picks what they came for, among what the page offers."""
        goal = read_goal(ctx.query, ctx.knowledge if self.use_knowledge else None) if ctx.query else None
        if goal is None:
            return None
        of_kind = set(words_of(kind))  # none for "option" ("the one you want"): any row
        named = [c for c in rows if fit(goal, c.label or "") >= 0.99 and of_kind <= set(words_of(c.label or ""))]
        return named[0] if len(named) == 1 else None

    def _stuck_reason(self, intent: Intent, ctx: PredictContext, st: PlanState, matcher: Matcher) -> str:
        if st.no_credential is not None and intent.kind == "type":
            return st.no_credential
        target = intent.target or intent.value
        base = f"step {ctx.step_index + 1} ({ctx.step_text!r}): "
        if not target:
            return base + f"cannot {intent.describe()} on this screen"
        ranked = matcher.rank(target, ctx.ui.controls)
        near = f"; closest control {ranked[0].control.label!r} ({ranked[0].score:.2f})" if ranked else ""
        return base + f"no control matches {target!r} after searching{near}"
