"""The labeller: follow an action sequence literally on a fresh simulator and check the goal.

A page is relevant iff a person doing exactly what it says reaches the task's
goal. ``replay`` plays that person: for each step it looks for the named label
on the current screen (scrolling the list down when it is not visible), taps
it, types text into the focused field, or presses a key. A label that is not
on the screen stops the replay: the person is stuck.

This module reads the world's goal predicate and is therefore LABELLING ONLY:
nothing in the pipeline (agent, judge, features) may import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from phonesim.layout import UINode, walk
from phonesim.simulator import Simulator
from phonesim.world import World
from howtobench.tasks import Step

__all__ = ["ReplayResult", "Replayer", "replay", "normalise_label"]

#: at most this many swipes to bring a label into view
MAX_SCROLLS = 12

_QUOTES = "\"'“”‘’`"
#: apps write Wi‑Fi with a non-breaking hyphen; people type a plain one
_DASHES = str.maketrans({"\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u00a0": " "})


def normalise_label(text: str) -> str:
    """Case-folded, whitespace-collapsed, without surrounding quotes or final punctuation."""
    text = str(text).translate(_DASHES)
    text = " ".join(text.split()).strip(_QUOTES).rstrip(".:!").strip(_QUOTES)
    return text.casefold()


@dataclass
class ReplayResult:
    """What happened when a sequence was followed."""

    #: the goal held before anything was done (then the task is ill-posed)
    held_at_start: bool
    #: the goal holds after following the sequence (as far as possible)
    reached: bool
    #: index of the step that could not be performed, None if all were
    failed_at: Optional[int] = None
    reason: str = ""
    steps_done: int = 0

    def to_json(self) -> dict:
        return {"held_at_start": self.held_at_start, "reached": self.reached, "failed_at": self.failed_at,
                "reason": self.reason, "steps_done": self.steps_done}


#: a low-level event hook: (kind, details) is called *before* each device input
EventHook = Callable[[str, dict], None]


@dataclass
class Replayer:
    """Performs :class:`Step` s on one simulator, the way a literal-minded person would."""

    sim: Simulator
    on_event: Optional[EventHook] = None
    max_scrolls: int = MAX_SCROLLS
    _step_index: int = field(default=0, init=False)

    # -- public

    def perform(self, step: Step, index: int = 0) -> Optional[str]:
        """Do one step; returns None when done, or why it could not be done."""
        self._step_index = index
        if step.op == "launch":
            return self._launch(step.label)
        if step.op in ("tap", "toggle", "pick", "press"):
            node = self.find(step.label)
            if node is None:
                return f"no {step.label!r} on screen {self.sim.screen_id!r}"
            target = self._switch_in_row(node) if step.op == "toggle" else None
            self._tap(target or node, step)
            return None
        if step.op == "type":
            return self._type(step)
        if step.op in ("enter", "back"):
            self._emit("key", key=step.op, step=step)
            self.sim.key(step.op)
            return None
        return f"unknown step {step.op!r}"  # pragma: no cover (the Step model forbids it)

    def find(self, label: str) -> Optional[UINode]:
        """The node showing ``label`` on the top window, scrolling its list down if needed."""
        wanted = normalise_label(label)
        for _ in range(self.max_scrolls + 1):
            node = self._visible_match(wanted)
            if node is not None:
                return node
            if not self._scroll_down():
                return None
        return None

    # -- internals

    def _visible_match(self, wanted: str) -> Optional[UINode]:
        win = self.sim.window()
        for node in walk(win.root):
            if not node.enabled or node.bounds[3] <= node.bounds[1]:
                continue
            if any(normalise_label(t) == wanted for t in (node.text, node.content_desc) if t):
                return node
        return None

    def _scroll_down(self) -> bool:
        win = self.sim.window()
        if win.list_node is None or win.scroll >= win.max_scroll:
            return False
        x1, _, x2, _ = win.list_node.bounds
        top, bottom = win.viewport
        span = bottom - top
        x = (x1 + x2) // 2
        y1, y2 = bottom - span // 5, top + span // 5
        self._emit("swipe", x=x, y=y1, x2=x, y2=y2)
        before = win.scroll
        self.sim.swipe(x, y1, x, y2)
        return self.sim.window().scroll != before

    def _switch_in_row(self, label_node: UINode) -> Optional[UINode]:
        """The Switch/CheckBox beside ``label_node`` in its row, if the row has one."""
        row = _row_of(self.sim.window().root, label_node)
        if row is None:
            return None
        for node in walk(row):
            if node.cls.endswith(("Switch", "CheckBox", "SwitchCompat")):
                return node
        return None

    def _tap(self, node: UINode, step: Step) -> None:
        x1, y1, x2, y2 = node.bounds
        x, y = (x1 + x2) // 2, (y1 + y2) // 2
        self._emit("tap", x=x, y=y, label=step.label, bounds=list(node.bounds), resource_id=node.resource_id,
                   step=step)
        self.sim.tap(x, y)

    def _type(self, step: Step) -> Optional[str]:
        edits = [n for n in walk(self.sim.window().root) if n.cls.endswith("EditText") and n.enabled]
        if not edits:
            return f"no text field on screen {self.sim.screen_id!r}"
        focused = next((n for n in edits if n.focused), None)
        if focused is None:
            self._tap(edits[0], Step(op="tap", label=edits[0].text or "text field"))
        self._emit("input", text=step.text, step=step)
        self.sim.input_text(step.text)
        return None

    def _launch(self, label: str) -> Optional[str]:
        wanted = normalise_label(label)
        for package, (app_label, _version) in self.sim.packages.items():
            if normalise_label(app_label) == wanted or wanted in (f"{normalise_label(app_label)} app",):
                self._emit("launch", package=package, label=app_label)
                self.sim.launch(package)
                return None
        return f"no app named {label!r} is installed"

    def _emit(self, kind: str, **details) -> None:
        if self.on_event is not None:
            details.setdefault("step_index", self._step_index)
            self.on_event(kind, details)


def _row_of(root: UINode, target: UINode) -> Optional[UINode]:
    """The innermost clickable ancestor of ``target`` (a settings row), or None."""
    path: list[UINode] = []

    def descend(node: UINode) -> bool:
        path.append(node)
        if node is target:
            return True
        for child in node.children:
            if descend(child):
                return True
        path.pop()
        return False

    if not descend(root):
        return None
    for node in reversed(path[:-1]):
        if node.clickable:
            return node
    return None


def replay(world: World, goal: str, actions: Sequence[Step], on_event: Optional[EventHook] = None) -> ReplayResult:
    """Follow ``actions`` on a fresh simulator of ``world`` (home screen) and evaluate ``goal``."""
    sim = Simulator(world)
    sim.reset()
    held = sim.goal_satisfied(goal)
    player = Replayer(sim, on_event=on_event)
    for i, step in enumerate(actions):
        problem = player.perform(step, i)
        if problem is not None:
            return ReplayResult(held_at_start=held, reached=sim.goal_satisfied(goal), failed_at=i,
                                reason=problem, steps_done=i)
    return ReplayResult(held_at_start=held, reached=sim.goal_satisfied(goal), steps_done=len(actions))


