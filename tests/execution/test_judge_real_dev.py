"""The judge on real help-site texts: episodes driven along real-dev's labelled device traces.

``../shared/real-dev/`` labels each real text with whether a careful person reaches the task's goal
on the OnePlus phone, and with ``device_trace``: the phone's items the text's names were matched to,
cut at the goal. Here a scripted agent (``TracePredictor``, tests only) follows that trace on
``sim:imported/oneplus-settings-android11`` through the real ``run_episode``, so the judge alone is
tested, apart from the predictor. The judge sees the trajectory and the question only; the labels
are read here to build the episodes and to score the verdicts.

* A **working** text's episode follows its trace to the goal and stops there (later steps, which
  the labels say happen after the goal, are not attempted).
* A **non-working** text's episode follows its trace as far as it goes, then claims every remaining
  step done without acting (an over-eager agent): the judge must still not give 1, because nothing
  reached the goal control. A non-working text whose trace does reach a goal control (a text that
  is not instructions for this goal but passes the goal's row on the way to another option, e.g. a
  Samsung page going through Fingerprint) is left out: its scripted episode is the same as a working
  one, so it tests the trace, not the judge.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Optional

import pytest

from execution.agent import EpisodeConfig, run_episode
from execution.judge import HeuristicJudge
from execution.predict.base import ActionPredictor, PredictContext, Prediction
from execution.predict.match import normalise
from verirank_core.execution_records import Action, ActionType, DeviationKind

DEV = Path(__file__).resolve().parents[2].parent / "shared" / "real-dev"
WORLD = "imported/oneplus-settings-android11"
APP = "com.android.settings"

pytestmark = pytest.mark.skipif(not (DEV / "pages.jsonl").is_file(), reason="../shared/real-dev not present")


def _norm(text: str) -> str:
    return normalise(text.replace("\u2011", "-").replace("\xa0", " "))


def trace_plan(steps: list[str], trace: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """(instruction step, phone item) per trace entry: the step that names the entry's name."""
    plan: list[tuple[int, str]] = []
    k, prev = 0, None
    for t in trace:
        name = _norm(t["name"])
        start = k + 1 if name == prev else k  # the same name again is a later step ("tap Wi-Fi", "the Wi-Fi switch")
        prev = name
        j = next((i for i in range(start, len(steps)) if name in _norm(steps[i])), None)
        if j is None:
            j = next((i for i in range(len(steps)) if name in _norm(steps[i])), k)
        k = max(k, j)
        plan.append((k, t["item"]))
    return plan


class TracePredictor(ActionPredictor):
    """Taps the trace's items in order (scrolling to find them); steps in between are skipped."""

    name = "trace"

    def __init__(self, plan: list[tuple[int, str]], claim_rest: bool):
        self.plan = plan
        self.claim_rest = claim_rest

    def predict(self, ctx: PredictContext) -> Optional[Prediction]:
        m = ctx.memory.setdefault("trace", {"i": 0, "scrolls": 0, "flipped": False})
        i = m["i"]
        if i > 0 and not m["flipped"]:
            # a switch the step turns on whose row opened its own page: the person flips it there
            step, item = self.plan[i - 1]
            sw = next((c for c in ctx.ui.controls if c.checked is False and _norm(c.label) == _norm(item)), None)
            if sw is not None and re.search(r"\b(on|enable)\b", ctx.instructions[step], re.IGNORECASE):
                m["flipped"] = True
                return self._tap(sw, step, True)
        if i >= len(self.plan):
            if self.claim_rest:
                return Prediction(Action(type=ActionType.WAIT, rationale="claimed"), ctx.step_index, True,
                                  noop=True, expect_change=False)
            return None
        step, item = self.plan[i]
        if ctx.step_index < step:
            return Prediction(Action(type=ActionType.WAIT, rationale="not on this phone"), ctx.step_index, True,
                              noop=True, expect_change=False, deviation=True, deviation_kind=DeviationKind.SKIP.value)
        same = [c for c in ctx.ui.controls if c.role != "scrollable" and _norm(c.label) == _norm(item)]
        wants_switch = re.search(r"\b(switch|toggle|on|off|enable|disable)\b", ctx.instructions[step], re.IGNORECASE)
        c = next((x for x in same if x.checked is not None), None) if wants_switch else None
        c = c or (same[0] if same else None)
        if c is None:
            if m["scrolls"] >= 8:
                return None
            m["scrolls"] += 1
            box = next((x.bounds for x in ctx.ui.controls if x.role == "scrollable"), (0, 0, ctx.ui.width, ctx.ui.height))
            x, h = (box[0] + box[2]) // 2, box[3] - box[1]
            return Prediction(Action(type=ActionType.SWIPE, x=x, y=box[1] + int(h * .75), x2=x, y2=box[1] + int(h * .25),
                                     text="down"), step, False, deviation=True,
                              deviation_kind=DeviationKind.SCROLL.value, expect_change=False)
        m.update(i=i + 1, scrolls=0, flipped=False)
        nxt = self.plan[i + 1][0] if i + 1 < len(self.plan) else None
        return self._tap(c, step, nxt != step)

    @staticmethod
    def _tap(c: Any, step: int, advance: bool) -> Prediction:
        return Prediction(Action(type=ActionType.CLICK, x=c.center[0], y=c.center[1], target_label=c.label,
                                 target_bounds=list(c.bounds)), step, advance, control_id=c.id)


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def verdicts() -> list[tuple[str, bool, float, str]]:
    from phonesim.device import SimDevice

    tasks = {t["qid"]: t for t in _rows(DEV / "tasks.jsonl")}
    queries = {qid: t["query"] for qid, t in tasks.items()}
    judge = HeuristicJudge(use_knowledge=True, use_embeddings=False)
    out = []
    for page in _rows(DEV / "pages.jsonl"):
        works = bool(page["works_on_device"])
        goal_keys = set(tasks[page["qid"]]["goal_keys"])
        if not works and any(t.get("key") in goal_keys for t in page["device_trace"] or []):
            continue  # the trace itself reaches the goal (see the module docstring)
        steps = list(page["steps"] or page["sentences"])
        plan = trace_plan(steps, page["device_trace"] or [])
        device = SimDevice.open(WORLD)
        try:
            traj = run_episode(steps, TracePredictor(plan, claim_rest=not works), device,
                               EpisodeConfig(max_steps=40), qid=page["qid"], url=page["pid"], app=APP,
                               query=queries[page["qid"]])
        finally:
            device.close()
        res = judge.judge(traj)
        out.append((page["pid"], works, res.score, res.detail[-1].get("why", "")))
    return out


def test_working_traces_are_verified(verdicts):
    working = [v for v in verdicts if v[1]]
    verified = [v for v in working if v[2] >= 1.0]
    assert len(working) == 21
    # measured 2026-11-25: 16/21; the misses are screens the world lacks (the screen-lock chooser,
    # Gboard's settings) and a goal the question does not name (autocorrect -> Virtual Keyboard)
    assert len(verified) >= 15, [v for v in working if v[2] < 1.0]


def test_non_working_traces_are_never_verified(verdicts):
    false = [v for v in verdicts if not v[1] and v[2] >= 1.0]
    assert not false, false
    assert all(0.0 <= v[2] <= 1.0 for v in verdicts)
