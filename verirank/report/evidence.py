"""Evidence for a verified page: for each of its steps, the screenshot where the step's effect shows.

Like DroidRetriever cites the screenshots that support an answer, the report
cites, for every instruction step of a verified page:

* the **matched** screen: the screenshot the agent acted on, with the control
  it matched to the step boxed;
* the **effect** screen: the next screenshot (or the final one), where the
  action's result is visible, with the same control boxed when it is still
  on screen (a switch that is now on, a selected option).

A step the agent found already done ("'Dark mode' is already on") cites the
screen where that was seen, with the control named in its reason boxed.
Everything here is read from the trajectory; nothing is inferred from the
simulator. Screenshots may be missing (``execution.screenshots: final`` or
``none``), so every file is optional and the report says what is missing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from verirank_core.execution_records import StepRecord, Trajectory

__all__ = ["StepEvidence", "page_evidence", "evidence_file"]

_QUOTED = re.compile(r"""(['"])(.+?)\1""")


@dataclass(frozen=True)
class StepEvidence:
    """Where one instruction step's effect can be seen."""

    #: 0-based instruction step
    step: int
    instruction: str
    #: the record that completed the step (None: the agent did not complete it)
    record: Optional[int] = None
    #: "acted" or "already done"
    how: str = ""
    #: the label of the matched control and its bounds on the matched screen (device pixels)
    label: Optional[str] = None
    bounds: Optional[tuple[int, int, int, int]] = None
    #: screenshot files (relative to the trajectory folder) of the matched and the effect screen
    matched_shot: Optional[str] = None
    effect_shot: Optional[str] = None
    #: the control's bounds on the effect screen, when it is still there
    effect_bounds: Optional[tuple[int, int, int, int]] = None
    #: which screen shows the effect: "screen #N" or "final screen"
    effect_where: str = ""
    #: the agent's reason for a step found already done ("already on the 'Settings' screen")
    note: str = ""


def step_shot(index: int) -> str:
    """Asset name of the screenshot before action ``index`` (its own drawing: the same screen seen
    twice, stored once by stage 2, gets a copy per action)."""
    return f"step_{index:03d}.png"


#: asset name of the final screen's screenshot
FINAL_SHOT = "final.png"


def evidence_file(step: int, kind: str) -> str:
    """Asset name of one evidence image (``kind``: matched or effect)."""
    return f"evidence_{step + 1:02d}_{kind}.png"


def _bounds(value: object) -> Optional[tuple[int, int, int, int]]:
    if isinstance(value, (list, tuple)) and len(value) == 4 and all(isinstance(v, (int, float)) for v in value):
        x1, y1, x2, y2 = (int(v) for v in value)
        if x2 > x1 and y2 > y1:
            return x1, y1, x2, y2
    return None


def _find(controls: list[dict[str, object]], label: Optional[str],
          resource_id: Optional[str]) -> Optional[dict[str, object]]:
    """The control with ``label`` (and ``resource_id`` when both have one) on a screen."""
    if not label:
        return None
    for c in controls:
        if c.get("label") == label and (not resource_id or not c.get("resource_id")
                                        or c.get("resource_id") == resource_id):
            return c
    return None


def _completing_record(traj: Trajectory, step: int) -> Optional[StepRecord]:
    """The last record that completed ``step`` (a page's own action preferred over a deviation)."""
    done = [r for r in traj.steps if r.step_index == step and r.step_done and r.ok]
    own = [r for r in done if not r.deviation]
    return (own or done or [None])[-1]


def page_evidence(traj: Trajectory) -> list[StepEvidence]:
    """One :class:`StepEvidence` per instruction step of ``traj``."""
    by_index = {r.index: r for r in traj.steps}
    out: list[StepEvidence] = []
    for step, instruction in enumerate(traj.instructions):
        rec = _completing_record(traj, step)
        if rec is None:
            out.append(StepEvidence(step=step, instruction=instruction))
            continue
        if rec.noop:
            # already done: the evidence is the screen where the agent saw it; box the control it named
            control = next((c for _, name in _QUOTED.findall(rec.action.rationale or "")
                            if (c := _find(rec.controls, name, None)) is not None), None)
            bounds = _bounds(control.get("bounds")) if control else None
            out.append(StepEvidence(
                step=step, instruction=instruction, record=rec.index, how="already done",
                label=control.get("label") if control else None, bounds=bounds,
                matched_shot=rec.screenshot, effect_shot=rec.screenshot, effect_bounds=bounds,
                effect_where=f"screen #{rec.index + 1}", note=rec.action.rationale or "",
            ))
            continue
        nxt = by_index.get(rec.index + 1)
        if nxt is not None:
            effect_shot, effect_controls, where = nxt.screenshot, nxt.controls, f"screen #{nxt.index + 1}"
        else:
            effect_shot, effect_controls, where = traj.final_screenshot, traj.final_controls, "final screen"
        action = rec.action
        after = _find(effect_controls, action.target_label, action.target_resource_id)
        out.append(StepEvidence(
            step=step, instruction=instruction, record=rec.index, how="acted",
            label=action.target_label, bounds=_bounds(action.target_bounds),
            matched_shot=rec.screenshot, effect_shot=effect_shot,
            effect_bounds=_bounds(after.get("bounds")) if after else None, effect_where=where,
        ))
    return out
