"""The page plan: a page's steps read once into an ordered list of named items, and the typed
per-episode state of the heuristic predictor that follows it.

``PagePlan.read(instructions)`` parses every step (``execution/predict/steps.py``) into
:class:`PlanItem` s, in page order: "Tap Apps & notifications and then Advanced and then
Special app access" is three items of one step. The predictor follows the plan with
*lookahead*: on every screen it looks for the earliest remaining named item, so an absent
grouping ("Advanced", "General", "System Settings") is skipped when the next name is on screen
(docs/agent.md, "verified", rule 3). Whether an item may be skipped is a property of the item:
a navigation tap may be, a setting (switch, checkbox, value, text) never is.

Two readings of the plan are done here too, because they need the whole page:

* "To turn on, tap the Wi-Fi switch to ON. ... To turn off, tap the Wi-Fi switch to OFF." offers
  two alternatives for one switch; the later one is marked ``alternative_of`` the first;
* repeated references to one name ("Head to System Settings", "Scroll down until you find
  System Settings", "Tap on it") count as one name when looking ahead.

:class:`PlanState` is everything the predictor remembers between two decisions of one
episode (kept in ``PredictContext.memory``), as typed records instead of string phases.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Optional

from execution.predict.match import normalise
from execution.predict.steps import Intent, parse_step_in_context
from verirank_core.platforms import COMPUTER_WORDS

__all__ = ["PlanItem", "PagePlan", "PlanState", "SearchState", "SearchPhase", "ReflectionState",
           "NavigationState", "PeekState", "TapRecord", "SKIPPABLE_KINDS"]

#: intents that only navigate: their item may be skipped when a later named item is visible
SKIPPABLE_KINDS = frozenset({"tap", "open", "scroll"})


@dataclass(frozen=True)
class PlanItem:
    """One thing the page tells the reader to do, where it sits on the page."""

    step: int
    pos: int
    intent: Intent
    #: "To turn off, ..." after "To turn on, ...": the (step, pos) of the item this is an alternative to
    alternative_of: Optional[tuple[int, int]] = None
    #: the step is done on another machine ("Open Smart Switch on your computer"): nothing to skip on the phone
    elsewhere: bool = False

    @property
    def name(self) -> Optional[str]:
        """The UI name the item is looked up by (None: a gesture, a key, an unnamed control)."""
        if self.intent.placeholder or self.intent.unnamed:
            return None
        return self.intent.target or (self.intent.value if self.intent.kind == "select" else None)

    @property
    def key(self) -> str:
        return normalise(self.name or "")

    @property
    def skippable(self) -> bool:
        """A grouping or navigation item on the phone; never a setting (switch, checkbox, value, typed
        text), nor a step done on a computer, whose name the phone may show for something else."""
        i = self.intent
        if self.elsewhere:
            return False
        if i.placeholder or i.kind in SKIPPABLE_KINDS:
            return True
        # "Select Notifications": a navigation tap written with select (no row, no choices)
        return i.kind == "select" and i.target is None and i.value is not None and not i.alternatives

    def describe(self) -> str:
        return f"step {self.step + 1}.{self.pos + 1}: {self.intent.describe()}"


#: a step done on another machine: "Open Smart Switch on your computer", "In iTunes on your Mac, click ..."
_ON_A_COMPUTER = re.compile(r"\b(?:on|from|in|using) (?:your |the |a )?(?:" + COMPUTER_WORDS + r")\b", re.IGNORECASE)
_TURN_PURPOSE_RE = re.compile(r"^to (?:turn|switch) (?:it |this |\w+ )?(on|off)$", re.IGNORECASE)


@dataclass(frozen=True)
class PagePlan:
    items: tuple[PlanItem, ...]

    @classmethod
    def read(cls, instructions: list[str]) -> "PagePlan":
        items: list[PlanItem] = []
        for step in range(len(instructions)):
            elsewhere = bool(_ON_A_COMPUTER.search(instructions[step]))
            for pos, intent in enumerate(parse_step_in_context(instructions, step)):
                items.append(PlanItem(step, pos, intent, elsewhere=elsewhere))
        return cls(tuple(_mark_alternatives(items)))

    def of_step(self, step: int) -> list[PlanItem]:
        return [it for it in self.items if it.step == step]

    def item(self, step: int, pos: int) -> Optional[PlanItem]:
        return next((it for it in self.items if it.step == step and it.pos == pos), None)

    def after(self, step: int, pos: int) -> list[PlanItem]:
        """The items after (step, pos), in page order."""
        return [it for it in self.items if (it.step, it.pos) > (step, pos)]

    def next_name(self, step: int, pos: int) -> Optional[PlanItem]:
        """The next item with a *different* name than (step, pos): the one lookahead may jump to.

        Later references to the same name ("Scroll until you find X", "Tap on it"), unnamed
        gestures and placeholders are passed over; they are not names (docs/agent.md).
        """
        here = self.item(step, pos)
        key = here.key if here is not None else ""
        for it in self.after(step, pos):
            if it.name is None or it.key == key or it.alternative_of is not None:
                continue
            return it
        return None

    def is_last_named(self, step: int, pos: int) -> bool:
        """No later item names a control: this is the page's leaf, never skipped."""
        return self.next_name(step, pos) is None


def _mark_alternatives(items: list[PlanItem]) -> list[PlanItem]:
    """'To turn on, tap X to ON.' then 'To turn off, tap X to OFF.': the second is the other choice."""
    out: list[PlanItem] = []
    for it in items:
        i = it.intent
        m = _TURN_PURPOSE_RE.match(i.condition or "")
        if m and i.kind == "toggle":
            first = next((o for o in out if o.intent.kind == "toggle" and o.key == it.key
                          and _TURN_PURPOSE_RE.match(o.intent.condition or "")
                          and o.intent.state is not None and o.intent.state != i.state), None)
            if first is not None:
                it = replace(it, alternative_of=(first.step, first.pos))
        out.append(it)
    return out


# --- the predictor's memory of one episode ------------------------------------------------------


class SearchPhase(str, Enum):
    """The blind search for an item that is not on screen: scroll down, back up, then go back."""

    DOWN = "down"
    UP = "up"
    BACK = "back"


@dataclass
class SearchState:
    phase: SearchPhase = SearchPhase.DOWN
    down: int = 0
    up: int = 0
    backs: int = 0
    #: UI-map route: actions spent, and whether the map gave up
    map_actions: int = 0
    map_done: bool = False


@dataclass(frozen=True)
class TapRecord:
    """A tap the predictor sent, with the on/off states of the screen it was sent on.

    Reflection reads it to tell a tap that changed a state (a switch or checkbox row, or a row
    whose tap flipped a checked state) from one that only navigated: retrying the former would
    undo it (docs/agent.md, "Reflection").
    """

    label: str
    bounds: tuple[int, ...]
    #: the tapped control was a switch or checkbox (its tap toggles a state)
    toggle: bool
    #: (label, bounds) -> checked, for every switch/checkbox/radio of that screen
    states: tuple[tuple[str, tuple[int, ...], bool], ...] = ()

    def flipped_on(self, controls) -> bool:
        """Some switch of the tap's screen now shows the other state (``controls`` of a later screen)."""
        now = {(c.label, tuple(c.bounds)): c.checked for c in controls if c.checked is not None}
        return any(now.get((label, bounds), checked) != checked for label, bounds, checked in self.states)


@dataclass
class ReflectionState:
    """Going back once after a failed step and retrying the earlier step's runner-up (MobA)."""

    #: None: not started; "retry": went back, retry next; "done": used up for this step
    phase: Optional[str] = None
    avoid_label: Optional[str] = None
    avoid_bounds: Optional[list[int]] = None
    #: the earlier step the retry serves (the action is recorded under it)
    step: Optional[int] = None
    retry_step: Optional[int] = None
    #: the tap reflection went back from, as recorded when it was sent
    tap: Optional[TapRecord] = None


@dataclass
class PeekState:
    """Lookahead below the fold: a loosely matching item yields to the next name anywhere on its screen.

    The screen is scrolled down to look for the next named item, then back up to the loose match.
    """

    #: the loose match's label, scrolled back to when the next name is not found
    label: Optional[str] = None
    down: int = 0
    up: int = 0
    #: "down", "up", or "done" (None: not started)
    phase: Optional[str] = None


@dataclass
class NavigationState:
    """Progress on the current item: what the predictor did for it so far."""

    #: set/toggle/type: the target's own screen or dialog was opened
    entered: bool = False
    typed: bool = False
    scrolls: int = 0
    search: SearchState = field(default_factory=SearchState)
    #: knowledge: the device's title the item was mapped to, and the card's source
    renamed: Optional[tuple[str, str]] = None
    peek: PeekState = field(default_factory=PeekState)
    #: Back presses sent to return to the app's home screen ("Go to Settings" after other steps)
    home_backs: int = 0
    #: the way home is over for this item (reached, or not needed): the item's own moves start
    home_done: bool = False


@dataclass
class PlanState:
    """Where the episode is in the plan (kept in ``ctx.memory["heuristic"]``)."""

    plan: PagePlan
    step: int = -1
    pos: int = 0
    #: the position to move to if the last emitted action succeeds
    pending: Optional[int] = None
    item: NavigationState = field(default_factory=NavigationState)
    reflection: ReflectionState = field(default_factory=ReflectionState)
    #: the title of the app's first screen (its home screen), seen at the start of the episode
    home_title: Optional[str] = None
    #: every tap sent, by (screen signature, control bounds): what reflection may not redo
    taps: dict[tuple[str, tuple[int, ...]], TapRecord] = field(default_factory=dict)
    #: a type step asked for a credential the run was not given: the reason, kept to the episode's end
    no_credential: Optional[str] = None
    #: (step, pos) of the item the last skip within a step passed over, and the items a failed skip
    #: brought back (looked for in full, never skipped again)
    skipped: Optional[tuple[int, int]] = None
    unskipped: set[tuple[int, int]] = field(default_factory=set)

    def next_item(self) -> None:
        self.item = NavigationState()
