"""Home-screen counterparts: a category the page names that this phone calls otherwise.

"Sound and Notification" is "Sounds & vibration" on another phone's Settings home screen; the
one category sharing at least half of the name's distinctive words is taken (docs/agent.md).
"""

from __future__ import annotations

from typing import Optional

from execution.distill import Control
from execution.predict.base import PredictContext
from execution.predict.gestures import control_action
from execution.predict.match import Matcher, _tokens, normalise
from execution.predict.moves import Act
from execution.predict.plan import PlanState
from execution.predict.steps import Intent
from verirank_core.execution_records import ActionType
from verirank_core.text import NOT_DISTINCTIVE

__all__ = ["Counterparts"]

#: words that say nothing about which category a name means (docs/agent.md, home-screen counterparts):
#: the rule's list, plural forms, and the menu words a page puts around a name
_NOT_DISTINCTIVE = frozenset().union(*(_tokens(w) for w in NOT_DISTINCTIVE + (
    "apps", "settings", "notifications", "more", "menu")))


def _distinctive(name: str) -> frozenset[str]:
    return _tokens(name) - _NOT_DISTINCTIVE


class Counterparts:
    """Mixed into :class:`~execution.predict.heuristic.HeuristicPredictor`."""

    def _is_home(self, ctx: PredictContext, st: PlanState) -> bool:
        ui = ctx.ui
        return (st.home_title is not None and ui.title == st.home_title and ui.package == (ctx.app or ui.package)
                and not any(normalise(c.label) == "navigate up" for c in ui.controls))

    def _counterpart(self, intent: Intent, ctx: PredictContext, st: PlanState,
                     matcher: Matcher) -> Optional[Act]:
        """On the app's home screen a missing category may be taken as its one counterpart.

        "Sound and Notification" is "Sounds & vibration", "More networks" is "Wi-Fi & network":
        the single category sharing at least half of the name's distinctive words (docs/agent.md).
        """
        name = intent.target
        if intent.kind not in ("tap", "open") or not name:
            return None
        if st.reflection.phase is not None or st.item.search.backs:
            return None  # only on the home screen the page led to, never one a repair went back to
        c = self._counterpart_of(name, ctx, st)
        if c is None:
            return None
        return Act(control_action(ActionType.CLICK, c, f"{name!r} is not on the home screen; its one "
                                                         f"counterpart there is {c.label!r}"),
                    done=True, control_id=c.id)

    def _counterpart_of(self, name: str, ctx: PredictContext, st: PlanState) -> Optional[Control]:
        """The one home-screen category sharing at least half of ``name``'s distinctive words."""
        words = _distinctive(name)
        if not words or not self._is_home(ctx, st):
            return None
        hits = [c for c in ctx.ui.controls if c.label and c.role != "scrollable"
                and 2 * len(words & _distinctive(c.label)) >= len(words)]
        return hits[0] if len(hits) == 1 else None
