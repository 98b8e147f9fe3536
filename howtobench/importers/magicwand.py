"""MagicWand trajectory JSON <-> verirank :class:`~verirank_core.execution_records.Trajectory`.

The MagicWand tool records one JSON file per executed page::

    {
      "plan": {"goal": "how to turn on dark mode",          # the query
               "receivedPlan": ["Open Settings", "Tap Display", ...]},   # the instruction steps
      "executions": [
        {"action": "click",                  # click | long_click | input | swipe | back | home | enter | launch | wait
         "image": "screens/0.png",           # screenshot before the action
         "position": [540, 1210],            # tap point (swipe: [x1, y1, x2, y2])
         "bound": [0, 1100, 1080, 1320],     # bounds of the control acted on
         "input": "",                        # typed text
         "description": "Display",           # the control's description
         "failureReason": "",                # empty when the action worked
         "attributing": {"instruction_step": 1}}   # the plan step that drove it (0-based)
      ]
    }

Optional top-level ``qid`` and ``url`` name the page; otherwise the qid is a
hash of the goal and the url is ``magicwand:<file stem>``. ``from_magicwand``
and ``to_magicwand`` are inverse on these keys (round trip tested).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any, Optional

from verirank_core.execution_records import (
    Action,
    ActionType,
    ExecutionResult,
    ExecutionStatus,
    StepRecord,
    StopReason,
    Trajectory,
)
from verirank_core.extraction_records import Extraction, ExtractionStatus, GroundedStep, Query
from verirank_core.errors import SchemaError, StoreError
from verirank_core.store import atomic_write_json, write_jsonl

__all__ = ["from_magicwand", "to_magicwand", "load_magicwand", "import_magicwand", "ACTION_NAMES"]

#: MagicWand action name -> ours (several spellings occur)
ACTION_NAMES: dict[str, ActionType] = {
    "click": ActionType.CLICK, "tap": ActionType.CLICK,
    "long_click": ActionType.LONG_PRESS, "long_press": ActionType.LONG_PRESS,
    "input": ActionType.INPUT, "type": ActionType.INPUT,
    "swipe": ActionType.SWIPE, "scroll": ActionType.SWIPE,
    "back": ActionType.BACK, "home": ActionType.HOME, "enter": ActionType.ENTER, "menu": ActionType.MENU,
    "launch": ActionType.LAUNCH, "wait": ActionType.WAIT,
}
#: ours -> the canonical MagicWand name written by the exporter
_EXPORT_NAMES = {ActionType.CLICK: "click", ActionType.LONG_PRESS: "long_click", ActionType.INPUT: "input",
                 ActionType.SWIPE: "swipe", ActionType.BACK: "back", ActionType.HOME: "home",
                 ActionType.ENTER: "enter", ActionType.MENU: "menu", ActionType.LAUNCH: "launch",
                 ActionType.WAIT: "wait"}


def _ints(value: Any, n: tuple[int, ...], where: str) -> Optional[list[int]]:
    if value in (None, [], ""):
        return None
    if not isinstance(value, list) or len(value) not in n or not all(isinstance(v, (int, float)) for v in value):
        raise SchemaError(f"{where}: expected a list of {' or '.join(map(str, n))} numbers, got {value!r}")
    return [int(v) for v in value]


def from_magicwand(data: Any, *, source: str = "<memory>", qid: Optional[str] = None,
                   url: Optional[str] = None, device: str = "magicwand") -> Trajectory:
    """Convert one MagicWand JSON document into a Trajectory."""
    if not isinstance(data, dict) or not isinstance(data.get("plan"), dict):
        raise SchemaError(f"{source}: a MagicWand trajectory is an object with 'plan' and 'executions'")
    plan = data["plan"]
    goal = plan.get("goal")
    steps_text = plan.get("receivedPlan")
    if not isinstance(goal, str) or not goal.strip():
        raise SchemaError(f"{source}: plan.goal (the query) is missing or empty")
    if not isinstance(steps_text, list) or not all(isinstance(s, str) for s in steps_text):
        raise SchemaError(f"{source}: plan.receivedPlan must be a list of instruction strings")
    executions = data.get("executions", [])
    if not isinstance(executions, list):
        raise SchemaError(f"{source}: executions must be a list")
    records, acted = [], set()
    for i, ex in enumerate(executions):
        where = f"{source}: executions[{i}]"
        if not isinstance(ex, dict):
            raise SchemaError(f"{where}: an execution is an object")
        name = str(ex.get("action", "")).lower()
        if name not in ACTION_NAMES:
            raise SchemaError(f"{where}.action: unknown action {ex.get('action')!r} "
                              f"(known: {', '.join(sorted(ACTION_NAMES))})")
        kind = ACTION_NAMES[name]
        pos = _ints(ex.get("position"), (2, 4), f"{where}.position")
        step_index = (ex.get("attributing") or {}).get("instruction_step")
        if step_index is not None and (not isinstance(step_index, int) or not 0 <= step_index < len(steps_text)):
            raise SchemaError(f"{where}.attributing.instruction_step: {step_index!r} is not a step of receivedPlan "
                              f"(0..{len(steps_text) - 1})")
        failure = ex.get("failureReason") or None
        action = Action(
            type=kind, x=pos[0] if pos else None, y=pos[1] if pos else None,
            x2=pos[2] if pos and len(pos) == 4 else None, y2=pos[3] if pos and len(pos) == 4 else None,
            text=ex.get("input") or None, target_label=ex.get("description") or None,
            target_bounds=_ints(ex.get("bound"), (4,), f"{where}.bound"),
        )
        records.append(StepRecord(index=i, step_index=step_index, action=action, screenshot=ex.get("image") or None,
                                  ok=failure is None, failure_reason=failure))
        if failure is None and step_index is not None:
            acted.add(step_index)
    if records and not records[-1].ok:
        stop, detail = StopReason.NO_ACTION, records[-1].failure_reason or ""
    elif steps_text and acted == set(range(len(steps_text))):
        stop, detail = StopReason.COMPLETED, ""
    elif not steps_text:
        stop, detail = StopReason.NO_INSTRUCTIONS, "the plan has no steps"
    else:
        stop, detail = StopReason.NO_ACTION, "not every instruction step was acted on"
    return Trajectory(
        qid=qid or data.get("qid") or "mw-" + hashlib.sha1(goal.encode("utf-8")).hexdigest()[:10],
        url=url or data.get("url") or f"magicwand:{Path(source).stem}",
        device=device, instructions=list(steps_text), steps=records, stop_reason=stop, stop_detail=detail,
        acted_steps=sorted(acted), query=goal,
    )


def to_magicwand(traj: Trajectory) -> dict[str, Any]:
    """The MagicWand JSON of a Trajectory (inverse of :func:`from_magicwand`)."""
    goal = traj.query or (traj.model_extra or {}).get("query") or ""
    executions = []
    for rec in traj.steps:
        a = rec.action
        pos = [a.x, a.y] if a.x is not None and a.y is not None else []
        if pos and a.x2 is not None and a.y2 is not None:
            pos += [a.x2, a.y2]
        executions.append({
            "action": _EXPORT_NAMES[a.type], "image": rec.screenshot or "", "position": pos,
            "bound": list(a.target_bounds or []), "input": a.text or "", "description": a.target_label or "",
            "failureReason": "" if rec.ok else (rec.failure_reason or "failed"),
            "attributing": {"instruction_step": rec.step_index},
        })
    return {"qid": traj.qid, "url": traj.url, "plan": {"goal": goal, "receivedPlan": list(traj.instructions)},
            "executions": executions}


def load_magicwand(path: Path | str) -> Trajectory:
    path = Path(path)
    try:
        data = json.loads(path.read_text("utf-8"))
    except OSError as exc:
        raise StoreError(f"{path}: cannot read ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise SchemaError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    return from_magicwand(data, source=str(path))


def import_magicwand(files: list[Path | str], run: Path | str) -> dict[str, int]:
    """Write MagicWand files as a run: queries, extraction (the plans), execution and trajectories.

    Screenshots named by ``image`` are copied next to trajectory.json when they
    exist. ``f4`` is left at 0: run ``verirank execute``'s judge or import labels
    separately; the records say ``judge: ""``.
    """
    from execution.jobs import page_id

    run = Path(run)
    trajs = [(Path(f), load_magicwand(f)) for f in files]
    keys = {}
    for path, t in trajs:
        if (t.qid, t.url) in keys:
            raise SchemaError(f"{path}: ({t.qid}, {t.url}) was already imported from {keys[(t.qid, t.url)]}")
        keys[(t.qid, t.url)] = path
    queries: dict[str, Query] = {}
    extractions, executions, ranks = [], [], {}
    for path, t in trajs:
        goal = t.query or ""
        queries.setdefault(t.qid, Query(qid=t.qid, query=goal))
        ranks[t.qid] = ranks.get(t.qid, 0) + 1
        rel = f"trajectories/{t.qid}/{page_id(t.url)}"
        folder = run / rel
        folder.mkdir(parents=True, exist_ok=True)
        for rec in t.steps:
            if rec.screenshot:
                image = path.parent / rec.screenshot
                if image.is_file():
                    target = folder / Path(rec.screenshot).name
                    shutil.copyfile(image, target)
                    rec.screenshot = target.name
        atomic_write_json(folder / "trajectory.json", t.to_json_dict())
        extractions.append(Extraction(
            qid=t.qid, url=t.url, rank=ranks[t.qid], query=goal, status=ExtractionStatus.OK,
            extractor="magicwand-import", raw_steps=list(t.instructions),
            steps=[GroundedStep(index=i, text=s, origin="ungrounded") for i, s in enumerate(t.instructions)],
        ))
        executions.append(ExecutionResult(
            qid=t.qid, url=t.url, rank=ranks[t.qid], status=ExecutionStatus.EXECUTED, device=t.device,
            n_instructions=len(t.instructions), n_actions=sum(s.ok for s in t.steps),
            n_failed_actions=sum(not s.ok for s in t.steps), stop_reason=t.stop_reason,
            reason=t.stop_detail, trajectory=f"{rel}/trajectory.json", attempts=1,
        ))
    write_jsonl(run / "queries.jsonl", queries.values())
    write_jsonl(run / "extraction.jsonl", extractions)
    write_jsonl(run / "execution.jsonl", executions)
    return {"trajectories": len(trajs), "queries": len(queries)}
