"""The predictor interface: what a predictor sees and what it answers."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from verirank_core.execution_records import Action
from execution.uicontext import UIContext

__all__ = ["HistoryItem", "PredictContext", "Prediction", "ActionPredictor"]


@dataclass(slots=True)
class HistoryItem:
    """One earlier action and what came of it."""

    step_index: Optional[int]
    action: Action
    ok: bool
    #: the screen signature changed after the action
    changed: bool
    noop: bool = False
    deviation: bool = False
    #: ``verirank_core.execution_records.DeviationKind`` value when ``deviation``
    deviation_kind: Optional[str] = None
    failure_reason: Optional[str] = None
    #: screen signature before the action
    signature: str = ""


@dataclass
class PredictContext:
    """Everything a predictor may look at for one decision."""

    instructions: list[str]
    #: the instruction step (0-based) the agent is working on
    step_index: int
    ui: UIContext
    history: list[HistoryItem] = field(default_factory=list)
    #: page-independent context, e.g. ``{"credentials": {"email": ..., "password": ...}}``
    extra: dict[str, Any] = field(default_factory=dict)
    #: package the episode launched (the app the query is about), if known
    app: Optional[str] = None
    #: the question the page was found for: the reader's own pick when the page leaves one open
    #: ("Choose your new navigation option"); never its answer
    query: Optional[str] = None
    #: scratch space owned by the episode; predictors keep per-episode state here
    memory: dict[str, Any] = field(default_factory=dict)
    #: screenshots of earlier steps (PNG bytes, oldest first, bounded by the agent)
    previous_screenshots: list[bytes] = field(default_factory=list)
    #: the app's UI map (``phonesim.worlds.UIMap``) when the episode has one: screens and links
    #: a user can see, never goals (see ``execution/predict/uimap.py``)
    ui_map: Optional[Any] = None
    #: the knowledge cards of this app on this device (``execution.knowledge.KnowledgeBase``)
    knowledge: Optional[Any] = None
    #: why ``predict`` returned None, set by the predictor: the episode's no_action detail
    stuck_reason: Optional[str] = None
    _screenshot_fn: Optional[Callable[[], bytes]] = None
    _screenshot: Optional[bytes] = None

    @property
    def nothing_done(self) -> bool:
        """No action has reached the device yet (only steps already satisfied)."""
        return not any(not h.noop for h in self.history)

    @property
    def screenshot(self) -> Optional[bytes]:
        """The current screen as PNG, taken on first access (heuristics never pay for it)."""
        if self._screenshot is None and self._screenshot_fn is not None:
            self._screenshot = self._screenshot_fn()
        return self._screenshot

    @property
    def step_text(self) -> str:
        return self.instructions[self.step_index]


@dataclass
class Prediction:
    """The next action, the instruction step it serves, and whether it completes that step."""

    action: Action
    step_index: int
    #: this action completes the step (the agent moves on if it succeeds)
    advance: bool
    #: the action follows a route the page did not state (scrolling to search, going back)
    deviation: bool = False
    #: which kind of deviation (``verirank_core.execution_records.DeviationKind`` value)
    deviation_kind: Optional[str] = None
    #: the step is already satisfied: nothing is sent to the device
    noop: bool = False
    #: the distilled control acted on, if any
    control_id: Optional[int] = None
    #: a visible change is expected (the proxy verifies it and tries fallbacks)
    expect_change: bool = True
    #: time spent inside models (embeddings, LLM calls), excluded from agent overhead
    model_ms: float = 0.0

    @property
    def rationale(self) -> str:
        return self.action.rationale


class ActionPredictor(ABC):
    """Chooses the next action for the current instruction step."""

    #: short name recorded in trajectories
    name: str = "predictor"
    #: capabilities ``run_episode`` reads, declared here rather than probed with ``getattr``:
    #: ask for the app's UI map (from ``ui_map``, a configured source, else the simulator's world)
    use_ui_map: bool = False
    ui_map: Optional[str] = None
    #: ask for the device's knowledge cards (from ``knowledge``, a configured cards file)
    use_knowledge: bool = False
    knowledge: Optional[str] = None

    @abstractmethod
    def predict(self, ctx: PredictContext) -> Optional[Prediction]:
        """The next action, or None when no action can be found (stop reason no_action).

        Before returning None a predictor may say why in ``ctx.stuck_reason``.
        """

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
