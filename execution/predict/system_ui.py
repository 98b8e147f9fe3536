"""The phone's own UI: the Home and Menu keys, the notification shade and the app drawer.

Pages send readers through the launcher ("From the home screen, swipe up and tap Settings"); the
predictor uses these the way a person does, and treats them as done when the episode is already
in the app they lead to.
"""

from __future__ import annotations

import re
from typing import Callable, Optional, Union

from execution.predict.base import PredictContext
from execution.predict.gestures import (KNOWN_APPS, control_action, drawer_swipe, in_drawer, in_shade, on_launcher,
                                        shade_swipe)
from execution.predict.match import normalise
from execution.predict.moves import Act, Satisfied
from execution.predict.plan import PlanItem, PlanState
from execution.predict.steps import Intent
from execution.uicontext import UIContext
from verirank_core.execution_records import Action, ActionType

__all__ = ["SystemUI"]


class SystemUI:
    """Mixed into :class:`~execution.predict.heuristic.HeuristicPredictor`."""

    _in_app: Callable[[str, UIContext], bool]

    def _outside_app(self, item: PlanItem, ctx: PredictContext, st: PlanState) -> Optional[Satisfied]:
        """'From the home screen, tap Apps': already in the page's app, so the way there is done.

        The shade or the app drawer opened only to reach the app the episode is in ("Swipe down
        from the top and tap the gear") is the way there too. Items after the app's name ("From
        the home screen, tap Settings > Connections") are in the app, and are followed there.
        """
        intent = item.intent
        if not ctx.app or ctx.ui.package != ctx.app or in_shade(ctx.ui):
            return None
        if intent.kind in ("shade", "drawer") and intent.place != "home":
            nxt = st.plan.after(item.step, item.pos)[:1]
            if not (nxt and nxt[0].intent.kind in ("open", "tap") and self._in_app(nxt[0].intent.target or "", ctx.ui)):
                return None  # the shade opened for a tile: pulled down for real
        elif intent.place != "home":
            return None
        elif any(o.intent.place == "home" and o.intent.kind in ("open", "tap") and self._is_app_name(o.intent.target)
                 for o in st.plan.of_step(item.step)[:item.pos]):
            return None
        return Satisfied(f"{intent.describe()} happens outside the app, on the way to it; "
                          f"the episode is already in {ctx.app}")

    #: Back presses at most on the way to the app's home screen; past that the page is followed from where it is
    _HOME_BACKS = 8
    _APP_FILLER_RE = re.compile(r"\b(?:the|your|phone s|device s|main|menu|screen)\b|\b(?:app|application)$")

    def _names_app_itself(self, target: Optional[str], ctx: PredictContext) -> bool:
        """``target`` is the episode's app by name ("Settings", "your phone's Settings menu"), not one
        of its screens ("Wi-Fi settings")."""
        name = " ".join(self._APP_FILLER_RE.sub(" ", normalise(target or "")).split())
        return bool(name) and KNOWN_APPS.get(name) == ctx.app

    def _to_app_home(self, item: PlanItem, ctx: PredictContext, st: PlanState) -> Union[Act, Satisfied, None]:
        """'Go to Settings', 'Settings > A > B', 'In Settings, tap X' after other steps: a path rooted at
        the app starts on its home screen.

        A person told midway to go to Settings itself starts again from its main screen, not from the
        sub-screen the earlier steps left open: the app's own name roots an absolute path. Back is
        pressed until the app's first screen shows again (the same key over adb as in the simulator).
        Before anything was done (the page's first "Open Settings") the episode is there already.
        """
        intent, ui = item.intent, ctx.ui
        if st.item.home_done:
            return None  # only before the item's own moves ("turn on Wi-Fi" opens Wi-Fi & network)
        names = intent.kind in ("open", "tap") and self._names_app_itself(intent.target, ctx)
        if names and intent.kind == "tap" and intent.place != "app":
            names = False  # only the root of a path ("Settings > Apps"), never a row of that name
        rooted = names or (intent.place == "app" and self._names_app_itself("Settings", ctx))
        last = ctx.history[-1] if ctx.history else None
        if not rooted or not ctx.app or ui.package != ctx.app or in_shade(ui) or st.home_title is None \
                or ctx.nothing_done or ui.title == st.home_title \
                or st.item.home_backs >= self._HOME_BACKS or (st.item.home_backs and not last.changed):
            # there already, nothing done yet (the page's first "Open Settings"), or Back does not
            # lead there: the item is followed from this screen
            st.item.home_done = True
            if rooted and names and intent.kind == "tap" and ui.title == st.home_title:
                return Satisfied(f"{intent.target!r} roots the page's path: on its home screen {ui.title!r}")
            return None  # "open": already in the app (``_open``); "In Settings, tap X": tap X here
        st.item.home_backs += 1
        where = intent.target if names else "Settings"
        return Act(Action(type=ActionType.BACK,
                          rationale=f"the page sends the reader to {where!r} itself: back from "
                                    f"{ui.title!r} toward its home screen {st.home_title!r}"), done=False)

    @staticmethod
    def _is_app_name(target: Optional[str]) -> bool:
        return bool(target) and re.sub(r"\b(app|application)\b", "", normalise(target or "")).strip() in KNOWN_APPS

    def _system_ui(self, item: PlanItem, ctx: PredictContext) -> Union[Act, Satisfied]:
        """The phone's own UI, as a person uses it: the Home and Menu keys, the shade, the app drawer.

        The same gestures work on the simulator and on a phone over adb: a Home key press, a swipe
        down from the top edge (the notification shade with quick settings and its Settings gear), a
        swipe up on the home screen (the app drawer, where every app's icon is).
        """
        ui, kind = ctx.ui, item.intent.kind
        if kind == "home":
            if on_launcher(ui) and not in_drawer(ui):
                return Satisfied("already on the home screen")
            return Act(Action(type=ActionType.HOME, rationale="step says home"), done=True)
        if kind == "menu":
            # KEYCODE_MENU opens the screen's overflow menu when it has one; on others nothing moves
            return Act(Action(type=ActionType.MENU, rationale="step says press the Menu key"), done=True,
                       expect_change=False)
        if kind == "shade":
            if in_shade(ui):
                return Satisfied("the notification shade is open")
            return Act(shade_swipe(ui, "swipe down from the top edge: the notification shade and quick settings"),
                       done=True)
        if in_drawer(ui):
            return Satisfied("the app drawer is open")
        if not on_launcher(ui):
            # the drawer opens from the home screen (and the Home key folds the shade away)
            return Act(Action(type=ActionType.HOME, rationale="the app drawer opens from the home screen: go home"),
                       done=False)
        icon = next((c for c in ui.controls if c.label and re.fullmatch(r"(?:all )?apps|app drawer|applications",
                                                                        normalise(c.label))), None)
        if icon is not None:  # launchers with an Apps button
            return Act(control_action(ActionType.CLICK, icon, f"open the app drawer: tap {icon.label!r}"),
                       done=True, control_id=icon.id)
        return Act(drawer_swipe(ui, "swipe up on the home screen: the app drawer"), done=True)

    def _via_drawer(self, intent: Intent, ctx: PredictContext, st: PlanState) -> Optional[Act]:
        """An app not on the home screen is in the app drawer: swipe up there, as a person looks for it.

        Only for an app the page opens ("Open X", a home-screen step, a known app's name), and never
        on a home screen a repair's back press left the app for.
        """
        if intent.kind not in ("open", "tap") or not intent.target or not on_launcher(ctx.ui) or in_drawer(ctx.ui):
            return None
        if st.item.search.backs or st.reflection.phase is not None:
            return None
        if not (intent.kind == "open" or intent.place == "home" or self._is_app_name(intent.target)):
            return None
        return Act(drawer_swipe(ctx.ui, f"{intent.target!r} is not on the home screen: look in the app drawer"),
                   done=False)
