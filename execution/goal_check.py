"""Did an episode reach the question's goal control, and in what state did it leave it?

:func:`check_goal` reads a :class:`~execution.goal.Goal` against the screens the
agent recorded (never a world's goals):

1. **The goal control.** Every control on every recorded screen is scored by how
   well it names the goal (:func:`execution.goal.fit`, or a knowledge card's title).
   The best-named label is the goal control. A row of the app's home screen (a
   category such as "Apps & Notifications") is the goal only when it says exactly
   what the question asks, or a card names it for the question's whole head
   ("android version" -> "About Phone"). For an action on an item ("forget a wifi
   network", "clear app cache") only a control naming the action is the goal ("Forget",
   "Clear cache"). A switch named after the asked action
   ("Turn off when charged") is the goal and must be on; a goal row that opens a
   switch page ("Dark mode") is read through that page's main switch ("Manual").
2. **Reached.** A switch the question wants on or off is read in its *final net
   state* (the last screen that shows it), and whether it already was so on the
   first screen that showed it (``met_before``). Anything else (open, see, change,
   a row that opens its own page) is reached when the page's steps tapped it, or a
   screen titled like it was reached; "check/see X" when a screen showing X was
   reached. "Set X to V" needs V chosen or shown as X's summary. A dry run (the
   irreversible confirm reached, visible and enabled, not pressed) reaches its own
   control.
3. **By the page.** The action that reached it must serve one of the page's steps
   and not be a repair the page did not state (UI map, blind search): the page's
   steps have to lead there.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Optional, Sequence

from execution.distill import Control
from execution.goal import Goal, fit, names_action, names_head, words_of
from execution.predict.match import lexical_score, normalise
from execution.predict.steps import parse_step
from verirank_core.execution_records import DeviationKind, StepRecord

__all__ = ["GoalCheck", "check_goal", "Screen"]

#: deviations that take the agent somewhere the page did not say: reaching the goal that way is not the page's
_OFF_PAGE = frozenset({DeviationKind.UI_MAP.value, DeviationKind.SEARCH.value})


@dataclass
class Screen:
    """One recorded screen: its controls and summary."""

    controls: list[Control]
    title: str
    signature: str
    texts: list[str]
    #: the foreground app ("" when not recorded)
    package: str = ""

    def has_slider(self, label: Optional[str]) -> bool:
        """Is ``label`` a slider on this screen (set by a tap along it; its level is not in the dump)?"""
        return any(c.role == "slider" and c.label == label for c in self.controls)


@dataclass
class GoalCheck:
    #: the goal control's label (None: no control on any screen names the goal)
    control: Optional[str]
    reached: bool
    #: the instruction step whose action reached the goal (None: not reached, or not by a page step)
    step: Optional[int]
    #: the goal was already met on the first screen that showed it (a switch already in the asked state)
    met_before: Optional[bool]
    why: str
    #: the goal was reached by a dry run (the irreversible confirm reached, not pressed)
    dry_run: bool = False


def _score(goal: Goal, label: str, on_home: bool) -> float:
    """How well ``label`` names the goal (0: not at all); home-screen categories only when exact."""
    if goal.want == "do":
        # an action on an item: only a control that names the action does it ("Forget"); a row
        # named like the item ("Wi-Fi & network" for "forget a wifi network") is the way there
        return 1.0 if names_action(goal, label) else 0.0
    best = 0.0
    for title, whole in goal.titles:
        if lexical_score(title, label) >= 0.9 and lexical_score(label, title) >= 0.9 and (whole or not on_home):
            best = max(best, 1.0 if whole else 0.95)
    f = fit(goal, label)
    if f and (not on_home or names_head(goal, label)):
        best = max(best, f)
    return best


def _score_control(goal: Goal, c: Control, on_home: bool) -> float:
    """A control's score: its label, else (a switch) its description ("Discoverable": "Visible to
    all nearby Bluetooth devices" for "make my phone visible to other bluetooth devices")."""
    sc = _score(goal, c.label, on_home)
    if not sc and c.checked is not None and c.summary and not on_home and goal.want != "do":
        sc = 0.9 * fit(goal, c.summary)
    return sc


def _names_the_action(goal: Goal, label: str) -> bool:
    """A switch named after the asked action and its condition ("Turn off when charged")."""
    lab = normalise(label)
    lead = "turn on " if goal.want == "on" else "turn off " if goal.want == "off" else None
    if lead is None or not lab.startswith(lead):
        return False
    rest = set(words_of(lab[len(lead):]))
    return bool(rest) and rest <= goal.context and bool(rest - goal.words)


def _main_switch(s: Screen) -> Optional[Control]:
    """The switch at the top of a screen (a switch bar: "Use Dark theme", "Manual"), if it has one."""
    body = [c for c in s.controls if c.role != "scrollable" and normalise(c.label) not in ("navigate up", "back")]
    return body[0] if body and body[0].checked is not None else None


def _same(a: str, b: str) -> bool:
    return bool(a) and bool(b) and normalise(a) == normalise(b)


#: (the goal's phrase, controls) -> the control closest in meaning, if close enough
Similar = Callable[[str, list[Control]], Optional[Control]]


def check_goal(goal: Goal, steps: Sequence[StepRecord], screens: list[Screen], final: Optional[Screen],
               similar: Optional[Similar] = None, app: Optional[str] = None,
               instructions: Optional[Sequence[str]] = None) -> GoalCheck:
    """The goal's control on the recorded screens and whether the page's steps reached it (module docstring).

    ``similar`` (a sentence-embedding match) is asked only when no label is made of the
    question's words ("Dark theme" for "dark mode"); home-screen categories are left out.
    ``app``: the app the episode is about; its first recorded screen is its home screen
    (the episode may start on the phone's launcher). ``instructions``: the page's steps; a switch
    already in the asked state counts only when one of them names it.
    """
    seq = [*screens, *([final] if final is not None else [])]
    if not seq:
        return GoalCheck(None, False, None, None, "no screen recorded")
    home = next((s for s in seq if app and s.package == app), seq[0])
    home_title = home.title

    def on_home(s: Screen) -> bool:
        return s is home or (bool(home_title) and s.title == home_title and s.package == home.package)

    # 1. the goal control: the best-named label over every screen
    best, labels = 0.0, set()
    for s in seq:
        for c in s.controls:
            if c.role == "scrollable" or not c.label:
                continue
            sc = _score_control(goal, c, on_home(s))
            if sc > best + 1e-9:
                best, labels = sc, {normalise(c.label)}
            elif sc and abs(sc - best) <= 1e-9:
                labels.add(normalise(c.label))
    # "turn off battery saver when charged": the switch named after the turning-off ("Turn off when
    # charged") is the goal, and it must be on
    named = {normalise(c.label) for s in seq for c in s.controls
             if c.checked is not None and _names_the_action(goal, c.label)}
    if named:
        best, labels = 1.0, named
        goal = replace(goal, want="on")
    if not labels and similar is not None and goal.want != "do" and not any(whole for _, whole in goal.titles):
        # a rewording ("Dark theme" for "dark mode") or an option ("Dark"); never a row named by a
        # part of the question's own name, which is a parent or a place ("Accessibility" for "the
        # accessibility shortcut"); and not when a card gives this device's title for the whole
        # question ("mobile hotspot" is "Wi-Fi hotspot"): a label near in meaning is then another row
        question = goal.words | goal.context
        pool = [c for s in seq if not on_home(s) for c in s.controls if c.role != "scrollable" and c.label
                and (c.checked is not None or not set(words_of(c.label)) <= question)]
        near = similar(goal.phrase, pool) if pool else None
        if near is not None:
            best, labels = 0.5, {normalise(near.label)}
    # a screen titled like the goal is its page; a home-screen category's page only when the category may be the goal
    home_labels = {normalise(c.label) for s in seq if on_home(s) for c in s.controls}
    titled = [i for i, s in enumerate(seq) if i > 0 and s.title
              and _score(goal, s.title, normalise(s.title) in home_labels) >= max(best, 0.6)]
    if not labels and not titled:
        dry = _dry_run(goal, steps, screens)
        if dry is not None:
            return dry
        return GoalCheck(None, False, None, None, f"no control named like {goal.phrase!r} on any screen")
    if goal.want in ("on", "off") and not any(
            c.checked is not None and normalise(c.label) in labels for s in seq for c in s.controls):
        # a goal row that opens its own page ("Dark mode"): a switch page's main switch is the goal
        pages = [seq[i] for i in titled] + [s for s in seq if normalise(s.title) in labels]
        main = next((m for p in pages for m in [_main_switch(p)] if m is not None), None)
        if main is not None:
            labels = {normalise(main.label)}

    def is_goal(label: Optional[str]) -> bool:
        return bool(label) and normalise(label or "") in labels

    def after(k: int) -> Optional[Screen]:
        return seq[k + 1] if k + 1 < len(seq) else None

    def by_page(r: StepRecord) -> bool:
        return r.step_index is not None and r.ok and r.deviation_kind not in _OFF_PAGE

    name = next(iter(sorted(labels)), "") or seq[titled[0]].title
    # 2a. a switch wanted on or off: its final net state
    shown = [(i, c) for i, s in enumerate(seq) for c in s.controls if is_goal(c.label) and c.checked is not None]
    if goal.want in ("on", "off") and shown:
        want = goal.want == "on"
        first_i, first = shown[0]
        last = _state_at_end(seq, shown, labels, steps, is_goal, by_page)
        met_before = first.checked == want
        if last.checked != want:
            return GoalCheck(last.label, False, None, met_before,
                             f"{last.label!r} is {'on' if last.checked else 'off'} at the end, asked {goal.want}")
        # the step that left it so: the last page action on it, else the step that brought its screen up
        acts = [k for k, r in enumerate(steps) if by_page(r) and not r.noop and (
            is_goal(r.action.target_label) or _same(r.action.target_label or "", last.label))]
        flips = [k for k in acts if after(k) is not None and (
            any(_same(c.label, last.label) and c.checked == want for c in after(k).controls)
            or not any(_same(c.label, last.label) for c in after(k).controls))]
        if flips:
            k = flips[-1]
            return GoalCheck(last.label, True, steps[k].step_index, met_before,
                             f"{last.label!r} turned {goal.want} by step {steps[k].step_index + 1} and left so")
        # else the page action that brought up the first screen showing it in the asked state
        # (already so, or changed through another control the page named)
        seen_i = first_i if met_before else next(
            (i for i, c in shown if c.checked == want), len(seq) - 1)
        k = _arrival(steps, seen_i)
        if k is not None and met_before and instructions is not None \
                and not _names_goal(goal, last.label, instructions):
            # steps that only pass the screen of a switch the phone happened to have so ("Tap
            # Accounts", then an account's own sync items) do not tell the reader to set it
            return GoalCheck(last.label, False, None, met_before,
                             f"{last.label!r} was already {goal.want}, and no step of the page names it")
        if k is not None:
            already = "was already" if met_before else "is"
            return GoalCheck(last.label, True, steps[k].step_index, met_before,
                             f"{last.label!r} {already} {goal.want} when the page's steps reached it")
        return GoalCheck(last.label, False, None, met_before, f"{last.label!r} is {goal.want}, but not by the page")

    # 2b. a value to choose
    if goal.want == "set" and goal.value:
        v = goal.value
        for i in range(len(seq) - 1, -1, -1):
            for c in seq[i].controls:
                chosen = lexical_score(v, c.label) >= 0.9 and (c.checked or c.selected)
                summary = is_goal(c.label) and f" {normalise(v)} " in f" {normalise(c.summary)} "
                if chosen or summary:
                    k = _arrival(steps, i)
                    if k is not None:
                        return GoalCheck(name, True, steps[k].step_index, None,
                                         f"{c.label!r} {'chosen' if chosen else 'shows ' + repr(c.summary)}")
            break  # only the final screen's choice counts (net state)
        return GoalCheck(name, False, None, None, f"{v!r} not chosen for {name!r}")

    # 2c. open / see / change / either: the goal control was opened, or its screen reached
    for k, r in enumerate(steps):
        if r.action.type.value != "click" or not is_goal(r.action.target_label) or not by_page(r):
            continue
        nxt = after(k)
        moved = nxt is not None and (nxt.signature != screens[k].signature or r.noop)
        # a tap the device took without a visible change still reached the control (a screen the
        # app builds in code may be missing from a simulated world)
        did = "set" if screens[k].has_slider(r.action.target_label) else "opened" if moved else "tapped"
        return GoalCheck(r.action.target_label, True, r.step_index, None,
                         f"step {r.step_index + 1} {did} {r.action.target_label!r}")
    if goal.want == "see":
        # "check X": the screen that shows X, reached by the page's steps (not the app's home); X is
        # shown when its row carries a value to read ("Android version: 11") or is plain text, not a
        # bare link to X's own page ("Data Usage" on the network screen)
        for i, s in enumerate(seq):
            if i > 0 and not on_home(s) and any(is_goal(c.label) and (c.summary or "click" not in c.actions)
                                                for c in s.controls):
                k = _arrival(steps, i)
                if k is not None:
                    return GoalCheck(name, True, steps[k].step_index, None,
                                     f"{name!r} shown on {s.title!r}, reached at step {steps[k].step_index + 1}")
    if goal.want == "set" and not goal.value and len(goal.alternatives) > 1:
        # "set a screen lock pin or pattern": the question names the choices (the last word of each
        # alternative); the page has done its part when its steps open the chooser offering them all
        # together (which one to take is the reader's)
        choices = {sorted(a, key=lambda w: goal.phrase.lower().rfind(w))[-1] for a in goal.alternatives}
        for i, s in enumerate(seq):
            offered = {normalise(c.label) for c in s.controls if c.role != "scrollable"} & choices
            if i > 0 and not on_home(s) and offered == choices:
                k = _arrival(steps, i)
                if k is not None:
                    return GoalCheck(name, True, steps[k].step_index, None,
                                     f"the choices {sorted(choices)} offered on {s.title!r}, opened at step "
                                     f"{steps[k].step_index + 1}")
    for i in titled:
        k = _arrival(steps, i)
        if k is not None:
            return GoalCheck(seq[i].title, True, steps[k].step_index, None,
                             f"reached the {seq[i].title!r} screen at step {steps[k].step_index + 1}")
    dry = _dry_run(goal, steps, screens)
    if dry is not None:
        return dry
    return GoalCheck(name, False, None, None, f"{name!r} was seen but not opened by the page's steps")


def _state_at_end(seq: list[Screen], shown: list[tuple[int, Control]], labels: set[str], steps: Sequence[StepRecord],
                  is_goal: Callable[[Optional[str]], bool], by_page: Callable[[StepRecord], bool]) -> Control:
    """The goal switch as the episode left it (its net state).

    On the final screen if it shows it; on the goal's own screen (titled like it: "Dark
    theme" > "Use Dark theme"), its main switch; an option the page chose in a list that
    then closed ("Select Dark") counts as checked; else its last sighting.
    """
    end = seq[-1]
    on_end = [c for c in end.controls if is_goal(c.label) and c.checked is not None]
    if on_end:
        return on_end[0]
    if end.title and normalise(end.title) in labels:
        main = next((c for c in end.controls if c.checked is not None and c.role == "switch"), None)
        if main is not None:
            return main
    last_i, last = shown[-1]
    if last_i < len(steps):
        r = steps[last_i]
        nxt = seq[last_i + 1] if last_i + 1 < len(seq) else None
        gone = nxt is not None and not any(_same(c.label, last.label) for c in nxt.controls)
        if gone and by_page(r) and r.action.type.value == "click" and is_goal(r.action.target_label):
            return Control(id=last.id, label=last.label, role=last.role, bounds=last.bounds,
                           resource_id=last.resource_id, actions=last.actions, checked=True)
    return last


def _names_goal(goal: Goal, label: str, instructions: Sequence[str]) -> bool:
    """Does a step of the page name the goal's switch ("Select or clear the Auto-sync data check box")?"""
    for text in instructions:
        for intent in parse_step(text):
            for name in (intent.target, intent.value):
                # the name says the goal, in its own words or with more ("the Auto-sync data check box")
                if name and (fit(goal, name) > 0 or lexical_score(name, label) >= 0.9
                             or bool(goal.words) and goal.words <= set(words_of(name))):
                    return True
    return False


def _arrival(steps: Sequence[StepRecord], i: int) -> Optional[int]:
    """The page action that brought up screen ``i`` (the last page step at or before it)."""
    for k in range(min(i, len(steps)) - 1, -1, -1):
        r = steps[k]
        if r.step_index is not None and r.ok:
            return k if r.deviation_kind not in _OFF_PAGE else None
    # the very first screen: reached by the page's first step, if it had one
    for k, r in enumerate(steps):
        if r.step_index is not None and r.ok:
            return k if r.deviation_kind not in _OFF_PAGE else None
    return None


def _dry_run(goal: Goal, steps: Sequence[StepRecord], screens: list[Screen]) -> Optional[GoalCheck]:
    """A dry run of the goal itself ("erase all data" reached and not pressed) reaches the goal."""
    for k, r in enumerate(steps):
        if r.deviation_kind != DeviationKind.DRY_RUN.value or r.step_index is None:
            continue
        label = r.action.target_label or ""
        words = set(words_of(label)) | set(words_of(screens[k].title if k < len(screens) else ""))
        if words & (goal.words | set().union(*goal.alternatives) if goal.alternatives else goal.words):
            return GoalCheck(label, True, r.step_index, None,
                             f"dry run: reached {label!r} (visible, enabled) and did not press it", dry_run=True)
    return None
