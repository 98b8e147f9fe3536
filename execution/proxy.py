"""The execution proxy: carry out a predicted action on a device, robustly, and say what happened.

For an action on a control the proxy

1. **re-checks** the target when the observation is stale (older than
   ``stale_ms``, e.g. after a slow LLM call): it re-dumps the screen and
   re-locates the control by label + resource id, then label, then resource
   id, then the nearest control of the same role; if it is gone the action
   fails with "target ... is no longer on screen";
2. **acts** with the primary method (``click`` = tap the control's centre,
   ``long_press``, ``input`` = tap the field then type, ``swipe``, a key, or
   ``launch``);
3. **verifies**: it re-dumps and compares screen signatures. When a change
   was expected and none happened, it tries the configured fallbacks in
   order (``tap_center`` = tap the centre of the text that labels the
   control, ``long_press``), recording each failed attempt and its reason.

The verification dump is returned in :class:`Outcome` so the agent reuses
it as its next observation (one dump per step, not two).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from verirank_core.execution_config import AgentConfig, ExecutionConfig
from verirank_core.device import Device
from verirank_core.errors import AppNotInstalled
from execution.distill import Control
from execution.predict.base import Prediction
from verirank_core.execution_records import Action, ActionType
from execution.uicontext import UIContext

__all__ = ["ExecutionProxy", "Outcome", "relocate"]


@dataclass
class Outcome:
    """What executing one prediction did."""

    ok: bool
    #: the fallback that finally worked, if the primary method did not
    fallback: Optional[str] = None
    failure_reason: Optional[str] = None
    #: the screen signature changed
    changed: bool = False
    #: every method tried: {"method", "ok", "reason"}
    attempts: list[dict[str, Any]] = field(default_factory=list)
    #: time spent in device calls (ms)
    device_ms: float = 0.0
    #: the dump taken after acting (reused as the next observation), if any
    after_xml: Optional[str] = None
    after_ui: Optional[UIContext] = None
    #: the control was re-located on a fresh dump before acting
    relocated: bool = False
    #: the action as finally executed (coordinates may have moved)
    action: Optional[Action] = None


def relocate(control: Control, ui: UIContext) -> Optional[Control]:
    """The control on a newer screen that is the same as ``control``, or None."""
    same_label = [c for c in ui.controls if c.label == control.label and c.label]
    for c in same_label:
        if c.resource_id == control.resource_id:
            return c
    if len(same_label) >= 1:
        return min(same_label, key=lambda c: _distance(c, control))
    if control.resource_id:
        same_id = [c for c in ui.controls if c.resource_id == control.resource_id]
        if len(same_id) == 1:
            return same_id[0]
    same_role = [c for c in ui.controls if c.role == control.role]
    if same_role:
        best = min(same_role, key=lambda c: _distance(c, control))
        x1, y1, x2, y2 = control.bounds
        # only a small shift counts as "the same control, moved"
        if _distance(best, control) <= min(x2 - x1, y2 - y1) / 2:
            return best
    return None


def _distance(a: Control, b: Control) -> float:
    (ax, ay), (bx, by) = a.center, b.center
    return ((ax - bx) ** 2 + (ay - by) ** 2) ** 0.5


def _center(bounds: tuple[int, int, int, int]) -> tuple[int, int]:
    return ((bounds[0] + bounds[2]) // 2, (bounds[1] + bounds[3]) // 2)


class ExecutionProxy:
    """Executes predictions with re-location, verification and fallbacks."""

    def __init__(
        self,
        fallbacks: tuple[str, ...] | list[str] = ("tap_center", "long_press"),
        verify_change: bool = True,
        settle_ms: int = 0,
        stale_ms: int = 5000,
    ):
        self.fallbacks = fallbacks
        self.verify_change = verify_change
        self.settle_ms = settle_ms
        self.stale_ms = stale_ms

    @classmethod
    def from_config(cls, cfg: Union[ExecutionConfig, AgentConfig]) -> "ExecutionProxy":
        """From ``ExecutionConfig`` (reads ``agent.proxy``)."""
        p = getattr(cfg, "agent", cfg).proxy
        return cls(fallbacks=tuple(p.fallbacks), verify_change=p.verify_change,
                   settle_ms=p.settle_ms, stale_ms=p.stale_ms)

    def __repr__(self) -> str:
        return (f"ExecutionProxy(fallbacks={tuple(self.fallbacks)}, verify_change={self.verify_change}, "
                f"settle_ms={self.settle_ms}, stale_ms={self.stale_ms})")

    # --- the one entry point ------------------------------------------------------

    def execute(
        self, device: Device, prediction: Prediction, ui: UIContext, observed_at: Optional[float] = None
    ) -> Outcome:
        """Run ``prediction`` on ``device``; ``ui`` is the screen it was predicted on.

        Device failures raise DeviceError; everything else is an Outcome.
        """
        action = prediction.action.model_copy()
        out = Outcome(ok=False, action=action)
        if prediction.noop or action.type == ActionType.WAIT:
            out.ok = True
            return out
        control = ui.control(prediction.control_id) if prediction.control_id is not None else None

        stale = observed_at is not None and (time.perf_counter() - observed_at) * 1000 > self.stale_ms
        if control is not None and stale:
            fresh_xml = self._dev(out, device.dump_xml)
            fresh = UIContext.from_xml(fresh_xml, (ui.width, ui.height), ui.package, ui.activity)
            moved = relocate(control, fresh)
            if moved is None:
                out.failure_reason = f"target {control.label!r} is no longer on screen"
                out.attempts.append({"method": "relocate", "ok": False, "reason": out.failure_reason})
                return out
            out.relocated = moved.bounds != control.bounds
            # the same point of the control (a slider's tap is off its centre)
            dx, dy = ((action.x - control.center[0], action.y - control.center[1])
                      if action.x is not None and action.y is not None else (0, 0))
            control, ui = moved, fresh
            action.x, action.y = control.center[0] + dx, control.center[1] + dy
            action.target_bounds = list(control.bounds)

        methods = self._methods(action, control)
        before = ui.signature
        for i, method in enumerate(methods):
            try:
                performed = self._perform(device, out, method, action, control)
            except AppNotInstalled as exc:
                # the page named an app this device lacks: the action fails, the device stays in use
                out.failure_reason = str(exc)
                out.attempts.append({"method": method, "ok": False, "reason": out.failure_reason})
                break
            if not performed:
                out.attempts.append({"method": method, "ok": False, "reason": "not applicable"})
                continue
            if not self.verify_change:
                out.ok = True
                out.attempts.append({"method": method, "ok": True, "reason": "not verified"})
                break
            if self.settle_ms:
                time.sleep(self.settle_ms / 1000)
            out.after_xml = self._dev(out, device.dump_xml)
            after = UIContext.from_xml(out.after_xml, (ui.width, ui.height))
            out.after_ui = after
            out.changed = after.signature != before
            reason = None
            if action.type == ActionType.INPUT and action.text and not any(
                action.text in n.text for n in after.nodes
            ):
                reason = f"typed text {action.text!r} does not appear on screen"
            elif prediction.expect_change and not out.changed:
                reason = "screen did not change"
            out.attempts.append({"method": method, "ok": reason is None, "reason": reason or "ok"})
            if reason is None:
                out.ok = True
                out.fallback = method if i > 0 else None
                break
            out.failure_reason = f"{method}: {reason}"
            if out.changed:
                break  # something happened; another fallback would act on a different screen
            before = after.signature
        if out.ok:
            out.failure_reason = None
        elif out.failure_reason is None:
            out.failure_reason = "no applicable method"
        return out

    # --- helpers ----------------------------------------------------------------------

    def _methods(self, action: Action, control: Optional[Control]) -> list[str]:
        if action.type == ActionType.CLICK:
            return ["click", *self.fallbacks]
        return [action.type.value]

    def _dev(self, out: Outcome, fn, *args):
        started = time.perf_counter()
        try:
            return fn(*args)
        finally:
            out.device_ms += (time.perf_counter() - started) * 1000

    def _perform(self, device: Device, out: Outcome, method: str, action: Action, control: Optional[Control]) -> bool:
        """Send one method to the device; False when the method does not apply."""
        t = action.type
        if method == "click":
            self._dev(out, device.tap, action.x, action.y)
        elif method == "tap_center":
            node = control.label_node if control is not None else None
            if node is None or node.area == 0:
                return False
            x, y = _center(node.bounds)
            if (x, y) == (action.x, action.y):
                return False
            self._dev(out, device.tap, x, y)
        elif method == "long_press":
            if action.x is None:
                return False
            self._dev(out, device.long_press, action.x, action.y)
        elif t == ActionType.INPUT:
            if action.x is not None and not (control is not None and control.focused):
                self._dev(out, device.tap, action.x, action.y)
            self._dev(out, device.input_text, action.text or "")
        elif t == ActionType.SWIPE:
            self._dev(out, device.swipe, action.x, action.y, action.x2, action.y2)
        elif t in (ActionType.BACK, ActionType.HOME, ActionType.ENTER, ActionType.MENU):
            self._dev(out, device.key, t.value)
        elif t == ActionType.LAUNCH:
            if not action.package:
                return False
            self._dev(out, device.launch, action.package)
        else:
            return False
        return True
