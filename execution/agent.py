"""The agent loop: run one page's instruction steps on one device and record everything.

``run_episode(instructions, predictor, device, config, qid=..., url=...)``
resets the device, launches the page's app when known, then repeats

    observe (dump + lazy screenshot) -> distill -> predict -> safety check
    -> act through the proxy -> record a StepRecord

until one of the stop reasons (``verirank_core.execution_records.StopReason``),
returned as data: ``Trajectory.stop_reason`` and ``stop_detail``.

* ``completed``: every instruction step was done (acted on or found satisfied);
* ``no_action``: the predictor found nothing to do for the current step
  (``stop_detail`` says which step and the closest control);
* ``cycle``: the same action on the same screen came up ``cycle_repeats``
  times (screen = ``UIContext.signature``; action = type, target label,
  resource id, typed text and swipe direction); the repeat is not executed;
* ``max_steps``: ``max_steps`` device actions were sent (no-op records of
  already-satisfied steps do not count);
* ``blocked by safety policy``: the safety policy refused an action; the
  category is in ``stop_detail`` and the action was *not* executed;
* ``device_error``: the device failed (``DeviceError``). The episode
  **returns** (it does not raise) with the partial trajectory saved, so a
  pool can re-queue the page on another device by checking ``stop_reason``;
* ``no_instructions``: the page had no steps; the device is not touched.

How an episode runs (step budget, cycle limit, screenshots, credentials) is
one :class:`EpisodeConfig`, built once from the run config
(``EpisodeConfig.from_execution``). What the predictor can use is declared on
it (``ActionPredictor.use_ui_map``, ``use_knowledge``). Knowledge cards
(``knowledge=``, or found for the device: ``execution/knowledge``) let the
predictor map a page's word to this device's title; reflection lets it go back
and retry once. Each such action is a deviation with its kind
(``StepRecord.deviation_kind``, ``verirank_core.execution_records.DeviationKind``);
``Trajectory.deviations`` counts them. With a UI map (``ui_map=``, or found for
the device: ``execution/predict/uimap.py``) the predictor may repair a page's
steps by following the map; ``Trajectory.ui_map`` says which map was used (or
why there was none).

With ``out_dir`` the folder receives ``trajectory.json`` (written
atomically) and the screens: the dump before each action (``step_NNN.xml``),
the last screen's dump (``final.xml``), and screenshots as
``config.screenshots`` says: ``every_step`` (``step_NNN.png`` and
``final.png``), ``final`` (``final.png`` only) or ``none``. A screenshot the
predictor asked for is saved in any mode (it is already taken). With
``screens`` (a :class:`~execution.screen_store.ScreenStore`; stage 2 passes
one on ``<run>/screens`` and the run directory as ``out_dir``) the screens go
there instead, one file per distinct content, and no ``trajectory.json`` is
written: the caller appends the returned trajectory to the run's
``trajectories.jsonl`` (``verirank_core/trajectories.py``). Either way each
StepRecord's ``xml`` and ``screenshot`` name their file relative to
``out_dir``, or are null. Screenshots are stored at ``screenshot_scale`` of
the screen (``Trajectory.screen_size``); action coordinates stay in device
pixels. Without ``out_dir`` nothing touches the disk and screenshots are
taken only if the predictor asks for one.
"""

from __future__ import annotations

import os
import time
from collections import Counter, deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, TypeVar

from verirank_core.device import Device
from verirank_core.errors import DeviceError, SchemaError, StoreError
from verirank_core.execution_config import ExecutionConfig
from verirank_core.execution_records import Action, DeviationKind, StepRecord, StopReason, Trajectory
from verirank_core.screens import scaled_screenshot
from verirank_core.store import atomic_write_json
from execution.predict.base import ActionPredictor, HistoryItem, PredictContext
from execution.proxy import ExecutionProxy
from execution.safety import SafetyPolicy
from execution.screen_store import ScreenStore
from execution.uicontext import UIContext

if TYPE_CHECKING:
    from phonesim.worlds.uimap import UIMap
    from execution.knowledge.cards import KnowledgeBase

__all__ = ["run_episode", "EpisodeConfig", "save_trajectory", "load_trajectory", "action_key", "TRAJECTORY_FILE",
           "SCREENSHOT_MODES"]

TRAJECTORY_FILE = "trajectory.json"
#: which screens are captured and saved when there is an ``out_dir``
SCREENSHOT_MODES = ("every_step", "final", "none")
T = TypeVar("T")


def action_key(action: Action) -> tuple:
    """What makes two actions "the same" for cycle detection."""
    return (
        action.type.value, action.target_label, action.target_resource_id,
        action.text, action.package,
        None if action.target_label or action.x is None else (action.x // 20, action.y // 20),
    )


def save_trajectory(out_dir: Path, trajectory: Trajectory) -> Path:
    """Write ``out_dir/trajectory.json`` atomically; returns its path.

    The file of an episode run on its own (stage 2 appends its trajectories
    to the run's trajectories.jsonl instead: ``verirank_core/trajectories.py``).
    """
    path = Path(out_dir) / TRAJECTORY_FILE
    atomic_write_json(path, trajectory.to_json_dict(), compact=True)  # `jq .` reads it
    return path


def load_trajectory(path: Path) -> Trajectory:
    """Read a trajectory from its file or its folder; SchemaError/StoreError name the file."""
    import json

    path = Path(path)
    if path.is_dir():
        path = path / TRAJECTORY_FILE
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError as exc:
        raise StoreError(f"{path} does not exist") from exc
    except json.JSONDecodeError as exc:
        raise SchemaError(f"{path}: not valid JSON ({exc.msg})") from exc
    return Trajectory.parse(data, where=str(path))


class _Clock:
    """Sums the time spent in device calls."""

    def __init__(self) -> None:
        self.device_ms = 0.0

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        started = time.perf_counter()
        try:
            return fn(*args)
        finally:
            self.device_ms += (time.perf_counter() - started) * 1000


@dataclass(frozen=True)
class EpisodeConfig:
    """How an episode runs: built once from the run config (:meth:`from_execution`), the same for every page."""

    #: stop after this many device actions (no-op records of satisfied steps do not count)
    max_steps: int = 28
    #: stop when the same action on the same screen comes up this many times
    cycle_repeats: int = 3
    #: earlier screenshots offered to predictors that want them
    keep_screens: int = 2
    #: which screenshots ``out_dir`` receives: every_step, final or none (:data:`SCREENSHOT_MODES`)
    screenshots: str = "every_step"
    #: saved screenshots are scaled by this; coordinates stay in device pixels
    screenshot_scale: float = 1.0
    #: page-independent context for the predictor, e.g. ``{"credentials": {"email": ...}}``
    extra_context: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.screenshots not in SCREENSHOT_MODES:
            raise ValueError(f"screenshots must be one of {', '.join(SCREENSHOT_MODES)}, got {self.screenshots!r}")

    @classmethod
    def from_execution(cls, cfg: ExecutionConfig) -> "EpisodeConfig":
        """The episode settings of ``execution``; credentials are read from the environment now,
        so that their values never reach the manifest."""
        creds = {name: os.environ[var] for name, var in cfg.credentials_env.items() if var in os.environ}
        return cls(max_steps=cfg.max_steps, cycle_repeats=cfg.agent.cycle_repeats,
                   screenshots=cfg.screenshot_mode(), screenshot_scale=cfg.screenshot_scale,
                   extra_context={"credentials": creds} if creds else {})


@dataclass(frozen=True)
class _Ending:
    """How the loop ended: why, in words, and the last screen seen (None after a device error)."""

    stop: StopReason
    detail: str
    ui: Optional[UIContext] = None
    xml: Optional[str] = None


def run_episode(
    instructions: list[str],
    predictor: ActionPredictor,
    device: Device,
    config: EpisodeConfig = EpisodeConfig(),
    *,
    qid: str,
    url: str,
    app: Optional[str] = None,
    query: Optional[str] = None,
    safety: Optional[SafetyPolicy] = None,
    proxy: Optional[ExecutionProxy] = None,
    out_dir: Optional[Path] = None,
    screens: Optional[ScreenStore] = None,
    ui_map: Optional[UIMap] = None,
    knowledge: Optional[KnowledgeBase] = None,
) -> Trajectory:
    """Run ``instructions`` on ``device`` and return the recorded :class:`Trajectory`.

    ``qid``, ``url``, ``app`` and ``query`` say which page this is (``query`` is
    stored for the judge); ``config`` how the episode runs. ``safety`` defaults
    to a policy that allows no risky category; ``proxy`` to
    :class:`ExecutionProxy` defaults. ``out_dir``/``screens``: where the screens
    go (see the module docstring). ``ui_map`` (a ``phonesim.worlds.UIMap``) is
    offered to the predictor; without one, a predictor with ``use_ui_map`` gets
    the device's map (:func:`execution.predict.uimap.ui_map_for_device`); the
    same for ``knowledge``.
    """
    started = time.perf_counter()
    out = Path(out_dir) if out_dir is not None else None
    files: Optional[_Files] = None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        files = _Files(out, screens)
    shots = config.screenshots if out is not None else "none"
    safety = safety if safety is not None else SafetyPolicy()
    proxy = proxy if proxy is not None else ExecutionProxy()
    spec = device.spec or type(device).__name__
    fields: dict[str, Any] = {
        "qid": qid, "url": url, "device": spec, "app": app, "instructions": list(instructions),
        "query": query, "predictor": predictor.name,
        "world": device.target if device.kind == "sim" else None,
        "screenshots": shots, "screenshot_scale": config.screenshot_scale,
    }
    if ui_map is not None:
        fields["ui_map"] = f"given ({ui_map.app})"
    elif predictor.use_ui_map and instructions:
        from execution.predict.uimap import ui_map_for_device

        ui_map, fields["ui_map"] = ui_map_for_device(device, predictor.ui_map)
    if knowledge is not None:
        fields["knowledge"] = f"given ({len(knowledge)} cards)"
    elif predictor.use_knowledge and instructions:
        from execution.knowledge import knowledge_for_device

        knowledge, fields["knowledge"] = knowledge_for_device(device, predictor.knowledge)
    steps: list[StepRecord] = []
    acted: set[int] = set()
    end = _Ending(StopReason.NO_INSTRUCTIONS, "the page has no instruction steps")
    try:
        info = device.info((app,) if app else ())
        fields["os_version"] = info.os_version or None
        fields["app_version"] = info.app_versions.get(app) if app else None
        fields["device_serial"], fields["device_model"] = info.serial or None, info.model or None
        if instructions:
            size = device.screen_size()
            fields["screen_size"] = list(size)
            loop = _Loop(instructions, predictor, device, config, app=app, query=query, safety=safety,
                         proxy=proxy, files=files, every_step=shots == "every_step", size=size,
                         ui_map=ui_map, knowledge=knowledge)
            end = loop.run()
            steps, acted = loop.steps, loop.acted
            if end.ui is None and end.stop != StopReason.DEVICE_ERROR:  # the final screen, for the judge
                clock = _Clock()
                xml = clock.call(device.dump_xml)
                end = replace(end, ui=_observe_ui(device, clock, xml), xml=xml)
    except DeviceError as exc:
        end = _Ending(StopReason.DEVICE_ERROR, str(exc))
    if end.ui is not None:
        fields["final_controls"] = [c.to_json() for c in end.ui.controls]
        fields["final_screen"] = end.ui.summary()
        if files is not None and end.xml is not None:
            fields["final_xml"] = files.save("final.xml", end.xml.encode("utf-8"))
            if config.screenshots != "none":
                try:
                    fields["final_screenshot"] = files.save("final.png",
                                                            scaled_screenshot(device, config.screenshot_scale))
                except DeviceError:
                    pass
    kinds = Counter(s.deviation_kind or "other" for s in steps if s.deviation)
    trajectory = Trajectory(
        **fields, deviations=dict(sorted(kinds.items())), steps=steps, stop_reason=end.stop,
        stop_detail=end.detail, acted_steps=sorted(acted), elapsed_s=round(time.perf_counter() - started, 4),
    )
    if out is not None and screens is None:  # with a screen store the caller keeps the trajectory
        save_trajectory(out, trajectory)
    return trajectory


class _Files:
    """Where an episode's dumps and screenshots go: its own folder, or a shared screen store.

    Plain writes (an fsync per file cost ~5 ms a step): the trajectory is
    written last (its file, or its line in the run's trajectories.jsonl), so a
    killed run leaves none for the page, and the stage redoes it.
    """

    def __init__(self, out: Path, store: Optional[ScreenStore]):
        self.out = out
        self.store = store
        # the store's folder as seen from the trajectory's, so that `out / name` finds the file
        self.prefix = os.path.relpath(store.root, out) if store is not None else ""

    def save(self, name: str, data: bytes) -> str:
        """Keep one file (``step_NNN.xml``, ``final.png``...); returns its name relative to ``out``."""
        if self.store is None:
            (self.out / name).write_bytes(data)
            return name
        path = self.store.put(data, Path(name).suffix)
        return f"{self.prefix}/{path.name}"


def _observe_ui(device: Device, clock: _Clock, xml: str, size: Optional[tuple[int, int]] = None) -> UIContext:
    app = clock.call(device.current_app)
    return UIContext.from_xml(xml, size, app.package or None, app.activity)


class _Loop:
    """observe -> predict -> check -> act, until a stop reason; ``steps`` and ``acted`` fill as it goes.

    Made once per episode with everything that stays fixed; :meth:`run` returns
    how it ended. A ``DeviceError`` ends it too (stop reason ``device_error``),
    with the steps recorded so far kept.
    """

    def __init__(self, instructions: list[str], predictor: ActionPredictor, device: Device,
                 config: EpisodeConfig, *, app: Optional[str], query: Optional[str], safety: SafetyPolicy,
                 proxy: ExecutionProxy, files: Optional[_Files], every_step: bool, size: tuple[int, int],
                 ui_map: Optional[UIMap], knowledge: Optional[KnowledgeBase]):
        self.instructions, self.predictor, self.device, self.config = instructions, predictor, device, config
        self.app, self.query, self.safety, self.proxy = app, query, safety, proxy
        self.files, self.every_step, self.size = files, every_step, size
        self.ui_map, self.knowledge = ui_map, knowledge
        self.steps: list[StepRecord] = []
        #: the instruction steps acted on as the page said (no deviation)
        self.acted: set[int] = set()

    def run(self) -> _Ending:
        try:
            return self._run()
        except DeviceError as exc:
            return _Ending(StopReason.DEVICE_ERROR, str(exc))

    def _run(self) -> _Ending:
        instructions, predictor, device, config = self.instructions, self.predictor, self.device, self.config
        evidence, steps, safety, app = self.files, self.steps, self.safety, self.app
        clock = _Clock()
        clock.call(device.reset, app)
        if app:
            clock.call(device.launch, app)
        memory: dict[str, Any] = {}
        extra = dict(self.config.extra_context)
        history: list[HistoryItem] = []
        moves: Counter = Counter()
        keep_screens = config.keep_screens
        screens: deque[bytes] = deque(maxlen=max(keep_screens, 0) or None)
        step_index = 0
        n_actions = 0
        next_ui: Optional[UIContext] = None
        next_xml: Optional[str] = None

        while True:
            if step_index >= len(instructions):
                return _Ending(StopReason.COMPLETED, f"all {len(instructions)} steps done", next_ui, next_xml)
            if n_actions >= config.max_steps:
                return _Ending(StopReason.MAX_STEPS,
                               f"{config.max_steps} actions sent; stopped at step {step_index + 1}", next_ui, next_xml)

            # --- observe
            t0 = time.perf_counter()
            clock.device_ms = 0.0
            if next_ui is not None and next_xml is not None:
                xml, ui = next_xml, next_ui
                info = clock.call(device.current_app)
                ui.package = info.package or ui.package
                ui.activity = info.activity
            else:
                xml = clock.call(device.dump_xml)
                ui = _observe_ui(device, clock, xml, self.size)
            index = len(steps)
            shot: dict[str, bytes] = {}

            def screenshot() -> bytes:
                if "png" not in shot:
                    shot["png"] = clock.call(scaled_screenshot, device, config.screenshot_scale)
                return shot["png"]

            io_started = time.perf_counter()
            files: dict[str, str] = {}
            if evidence is not None:
                files["xml"] = evidence.save(f"step_{index:03d}.xml", xml.encode("utf-8"))
                if self.every_step:
                    screenshot()
            io_ms = (time.perf_counter() - io_started) * 1000
            t_observed = time.perf_counter()

            # --- predict
            ctx = PredictContext(
                instructions=instructions, step_index=step_index, ui=ui, history=history,
                extra=extra, app=app, query=self.query, memory=memory, previous_screenshots=list(screens),
                ui_map=self.ui_map, knowledge=self.knowledge, _screenshot_fn=screenshot,
            )
            pred = predictor.predict(ctx)
            t_predicted = time.perf_counter()
            if pred is None:
                reason = ctx.stuck_reason or f"no action found for step {step_index + 1}"
                return _Ending(StopReason.NO_ACTION, reason, ui, xml)
            attributed = min(max(pred.step_index, 0), len(instructions) - 1)
            if evidence is not None and "png" in shot:
                # taken for every_step, or by a predictor that looked at the screen: keep it
                io_started = time.perf_counter()
                files["png"] = evidence.save(f"step_{index:03d}.png", shot["png"])
                io_ms += (time.perf_counter() - io_started) * 1000

            # --- cycle check (the repeat is not executed)
            if not pred.noop:
                move = (ui.signature, action_key(pred.action))
                moves[move] += 1
                if moves[move] >= config.cycle_repeats:
                    what = pred.action.target_label or pred.action.type.value
                    return _Ending(StopReason.CYCLE,
                                   f"{pred.action.type.value} {what!r} on the same screen {moves[move]} times "
                                   f"(step {attributed + 1})", ui, xml)

            # --- safety
            control = ui.control(pred.control_id) if pred.control_id is not None else None
            target_text = control.description if control is not None else ""
            verdict = safety.check(instructions[attributed], pred.action, target_text)
            base = dict(
                index=index, step_index=attributed, screenshot=files.get("png"), xml=files.get("xml"),
                controls=[c.to_json() for c in ui.controls], activity=ui.activity, deviation=pred.deviation,
                deviation_kind=pred.deviation_kind if pred.deviation else None, screen=ui.summary(),
            )
            if safety.dry_run_of(verdict, self.query):
                # the irreversible confirm of the page's own goal: reached, visible and enabled, never pressed
                steps.append(StepRecord(
                    **{**base, "deviation": True, "deviation_kind": DeviationKind.DRY_RUN.value},
                    action=pred.action.model_copy(update={"rationale": f"dry run: {verdict.reason}; not pressed"}),
                    ok=True, noop=True, step_done=True,
                    timings_ms=_timings(t0, t_observed, t_predicted, time.perf_counter(), clock.device_ms,
                                        pred.model_ms, io_ms),
                ))
                return _Ending(StopReason.COMPLETED,
                               f"dry run: reached the irreversible {verdict.category} control "
                               f"{pred.action.target_label!r} at step {attributed + 1} and did not press it; "
                               f"{len(instructions) - attributed - 1} later steps lie beyond it", ui, xml)
            if not verdict.allowed:
                steps.append(StepRecord(
                    **base, action=pred.action, ok=False,
                    failure_reason=f"blocked by safety policy: {verdict.reason}",
                    timings_ms=_timings(t0, t_observed, t_predicted, time.perf_counter(), clock.device_ms,
                                        pred.model_ms, io_ms),
                ))
                return _Ending(StopReason.BLOCKED, verdict.category or "blocked", ui, xml)

            # --- act
            outcome = self.proxy.execute(device, pred, ui, observed_at=t_observed)
            clock.device_ms += outcome.device_ms
            t_acted = time.perf_counter()
            step_done = bool(pred.advance and outcome.ok)
            steps.append(StepRecord(
                **base, action=outcome.action or pred.action, ok=outcome.ok,
                failure_reason=outcome.failure_reason, fallback=outcome.fallback,
                noop=pred.noop, step_done=step_done,
                changed=outcome.changed if outcome.after_xml is not None else None,
                attempts=outcome.attempts,
                timings_ms=_timings(t0, t_observed, t_predicted, t_acted, clock.device_ms, pred.model_ms, io_ms),
            ))
            history.append(HistoryItem(
                step_index=attributed, action=outcome.action or pred.action, ok=outcome.ok,
                changed=outcome.changed, noop=pred.noop, deviation=pred.deviation,
                deviation_kind=pred.deviation_kind, failure_reason=outcome.failure_reason, signature=ui.signature,
            ))
            if not pred.noop:
                n_actions += 1
            if outcome.ok and not pred.deviation:
                self.acted.add(attributed)
            if step_done:
                step_index = max(step_index, attributed + 1)
            if "png" in shot and keep_screens > 0:
                screens.append(shot["png"])
            if pred.noop:
                next_ui, next_xml = ui, xml  # nothing happened on the device
            else:
                next_ui, next_xml = outcome.after_ui, outcome.after_xml


def _timings(t0: float, observed: float, predicted: float, done: float, device_ms: float,
             model_ms: float, io_ms: float) -> dict[str, float]:
    total = (done - t0) * 1000
    return {
        "observe": round((observed - t0) * 1000, 3),
        "predict": round((predicted - observed) * 1000, 3),
        "act": round((done - predicted) * 1000, 3),
        "device": round(device_ms, 3),
        "model": round(model_ms, 3),
        "io": round(io_ms, 3),
        "total": round(total, 3),
        #: the agent's own time: everything but the device and the models
        "overhead": round(max(0.0, total - device_ms - model_ms), 3),
    }
