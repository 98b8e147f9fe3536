"""Records of stage 2.

======================  ========================  ==========================
file                    record                    key
======================  ========================  ==========================
``execution.jsonl``     :class:`ExecutionResult`  (qid, url)
``trajectories.jsonl``  :class:`Trajectory`       (qid, url); the last line wins
======================  ========================  ==========================

A row's ``trajectory`` names the file that holds its trajectory
(``trajectories.jsonl``, or a page's own ``trajectory.json`` in runs made
before it and imported ones): ``verirank_core/trajectories.py`` reads both.
A step names its screen files relative to the folder of that file: the full
uiautomator dump before the step (``xml``) and, when screenshots were saved,
the screenshot (``screenshot``). Stage 2 keeps them once per distinct screen
in ``<run>/screens/`` (``screens/<hash>.xml``); a trajectory written by
``run_episode`` on its own has ``step_NNN.xml`` and ``step_NNN.png`` in its
own folder.
"""

from __future__ import annotations

from enum import Enum
from typing import ClassVar, Optional

from pydantic import Field

from verirank_core.records import Record


class ActionType(str, Enum):
    CLICK = "click"
    LONG_PRESS = "long_press"
    SWIPE = "swipe"
    INPUT = "input"
    BACK = "back"
    HOME = "home"
    ENTER = "enter"
    #: the Menu key (KEYCODE_MENU): the top screen's overflow menu, when it has one
    MENU = "menu"
    LAUNCH = "launch"
    WAIT = "wait"


class StopReason(str, Enum):
    #: every instruction step was acted on
    COMPLETED = "completed"
    #: no action could be found for the current step
    NO_ACTION = "no_action"
    #: the same screen and action kept repeating
    CYCLE = "cycle"
    MAX_STEPS = "max_steps"
    #: the safety policy refused an action
    BLOCKED = "blocked by safety policy"
    DEVICE_ERROR = "device_error"
    NO_INSTRUCTIONS = "no_instructions"


class Action(Record):
    type: ActionType
    #: screen coordinates (tap point, or swipe start)
    x: Optional[int] = None
    y: Optional[int] = None
    #: swipe end
    x2: Optional[int] = None
    y2: Optional[int] = None
    text: Optional[str] = None
    #: the control acted on, as seen in the distilled UI context
    target_label: Optional[str] = None
    target_resource_id: Optional[str] = None
    target_bounds: Optional[list[int]] = None
    package: Optional[str] = None
    #: why the predictor chose this action (free text)
    rationale: str = ""


class DeviationKind(str, Enum):
    """What the agent did beyond the letter of the page (docs/agent.md, "verified")."""

    #: scrolled the list to look for a named item (allowed by the definition, recorded)
    SCROLL = "scroll"
    #: opened a collapsed "Advanced" section to reveal a named item (allowed, recorded)
    EXPAND = "expand"
    #: pressed back to look for an item on the previous screen (blind search)
    SEARCH = "search"
    #: mapped the page's word to this device's title through a knowledge card
    KNOWLEDGE = "knowledge"
    #: went back along the recorded path after a failed step and retried there
    REFLECTION = "reflection"
    #: skipped a grouping step whose item is missing while the next named item is visible
    SKIP = "skip"
    #: followed the UI map to a screen the page did not name
    UI_MAP = "ui_map"
    #: took one of the page's alternatives ("A or B", "Do one of the following", "If you don't see X, tap Y")
    ALTERNATIVE = "alternative"
    #: resolved a placeholder or pronoun ("the app you want", "tap it") to an item on screen
    PLACEHOLDER = "placeholder"
    #: reached an irreversible confirm (erase, reset, delete, ...) and did not press it
    DRY_RUN = "dry_run"


#: deviations that repair a page (beyond what a careful person does without help)
REPAIR_KINDS = frozenset({DeviationKind.KNOWLEDGE.value, DeviationKind.REFLECTION.value,
                          DeviationKind.UI_MAP.value, DeviationKind.SEARCH.value})


class StepRecord(Record):
    """One executed action and what surrounded it."""

    index: int
    #: the instruction step (0-based) that drove this action; None for exploration
    step_index: Optional[int] = None
    action: Action
    #: files relative to the folder of the file holding the trajectory
    screenshot: Optional[str] = None
    xml: Optional[str] = None
    #: the distilled controls the predictor saw
    controls: list[dict[str, object]] = Field(default_factory=list)
    activity: Optional[str] = None
    ok: bool = True
    failure_reason: Optional[str] = None
    #: the fallback that finally worked (``tap_center``, ``long_press``), if any
    fallback: Optional[str] = None
    #: the step followed a route the page did not state (scroll, UI-map repair)
    deviation: bool = False
    #: which kind of deviation (a :class:`DeviationKind` value); None for the page's own steps
    deviation_kind: Optional[str] = None
    timings_ms: dict[str, float] = Field(default_factory=dict)
    #: the step was already satisfied (e.g. the switch was already on): nothing was sent to the device
    noop: bool = False
    #: this action completed its instruction step
    step_done: bool = False
    #: the screen changed after the action (None when not verified)
    changed: Optional[bool] = None
    #: the screen before the action: package, activity, title, signature, texts
    screen: dict[str, object] = Field(default_factory=dict)
    #: every execution method tried: [{"method", "ok", "reason"}]
    attempts: list[dict[str, object]] = Field(default_factory=list)


class Trajectory(Record):
    qid: str
    url: str
    device: str
    world: Optional[str] = None
    app: Optional[str] = None
    app_version: Optional[str] = None
    os_version: Optional[str] = None
    #: the device's own identity as it reports it (``ro.serialno``, ``ro.product.model``)
    device_serial: Optional[str] = None
    device_model: Optional[str] = None
    instructions: list[str]
    steps: list[StepRecord] = Field(default_factory=list)
    stop_reason: StopReason
    stop_detail: str = ""
    #: the final screen, after the last action
    final_screenshot: Optional[str] = None
    #: which screenshots were saved: every_step, final or none (a step's ``screenshot`` is null without one)
    screenshots: Optional[str] = None
    #: screenshots are stored at this fraction of ``screen_size``; coordinates are in device pixels
    screenshot_scale: float = 1.0
    #: (width, height) of the device screen in pixels
    screen_size: Optional[list[int]] = None
    final_xml: Optional[str] = None
    #: instruction steps the agent acted on
    acted_steps: list[int] = Field(default_factory=list)
    elapsed_s: float = 0.0
    #: the query the page answers (read by the judge's final-state check; never the goal)
    query: Optional[str] = None
    #: the predictor that drove the episode
    predictor: str = ""
    #: distilled controls and summary of the final screen
    final_controls: list[dict[str, object]] = Field(default_factory=list)
    final_screen: dict[str, object] = Field(default_factory=dict)
    #: the UI map the agent consulted ("world NAME", "ui_map PATH"), or why it had none
    ui_map: Optional[str] = None
    #: the knowledge cards the agent could consult ("cards FILE (N)"), or why it had none
    knowledge: Optional[str] = None
    #: deviation kind -> count over the episode (also the no-op skips, which send no action)
    deviations: dict[str, int] = Field(default_factory=dict)


class ExecutionStatus(str, Enum):
    EXECUTED = "executed"
    #: extraction found no steps, nothing to run
    SKIPPED = "skipped"
    #: every attempt on every device failed
    DEVICE_FAILED = "device_failed"


class ExecutionResult(Record):
    key_fields: ClassVar[tuple[str, ...]] = ("qid", "url")

    qid: str
    url: str
    rank: int = Field(ge=1)
    status: ExecutionStatus
    reason: str = ""
    #: the device spec the page ran on (``adb:SERIAL``, ``sim:WORLD``)
    device: Optional[str] = None
    world: Optional[str] = None
    #: what the device said about itself before the page: its serial (``ro.serialno``), model,
    #: Android version, and the version of the page's app with its package
    device_serial: Optional[str] = None
    device_model: Optional[str] = None
    app: Optional[str] = None
    app_version: Optional[str] = None
    os_version: Optional[str] = None
    n_instructions: int = 0
    n_actions: int = 0
    n_failed_actions: int = 0
    n_deviations: int = 0
    #: deviation kind -> count (``DeviationKind`` values; docs/agent.md)
    deviation_kinds: dict[str, int] = Field(default_factory=dict)
    stop_reason: Optional[StopReason] = None
    #: settings isolation could not put these back after the page (``NS/KEY``, or why none could be);
    #: empty when every change was undone or isolation is off (docs/agent.md)
    settings_unrestored: list[str] = Field(default_factory=list)
    #: the judge's instruction-completion degree in [0, 1] (feature F4)
    f4: float = 0.0
    judge: str = ""
    #: per-instruction-step judgement, e.g. [{"step": 0, "acted": true, "effect": true}]
    judge_detail: list[dict[str, object]] = Field(default_factory=list)
    #: the judge found the question's goal already met when the page's steps reached it (e.g. the
    #: switch was already on); None when it read no goal. The ranker can tell such a page apart.
    goal_met_before: Optional[bool] = None
    #: the file holding the page's trajectory, relative to the run directory (``trajectories.jsonl``)
    trajectory: Optional[str] = None
    attempts: int = 0
    elapsed_s: float = 0.0
    #: the verdict was taken from the verdict cache, made by an earlier run on a device of the same
    #: model, Android and app version with the same agent and judge (no device ran it this time)
    reused: bool = False
    #: when a reused verdict was made (ISO 8601, UTC); None for a page run in this run
    verified_at: Optional[str] = None
