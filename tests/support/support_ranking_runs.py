"""Hand-made stage-3 inputs: a run directory with extraction, execution and trajectories.

Everything is written through the real record classes and the real store, so
the files are exactly what stages 1 and 2 write. The first page of query
``q1`` is the worked example of ``ranking/FEATURES.md``; its feature values
(computed by hand there) are in :data:`WORKED_EXAMPLE_VALUES`.

Query q1 ("How to turn on dark mode in Android settings") has five results:

====  =========================  ============================================
rank  url                        situation
====  =========================  ============================================
1     https://a.example/no-steps  fetched, no steps extracted (execution skipped)
2     https://b.example/dark     the worked example: executed, F4 = 0.5, verified
3     https://c.example/failed   steps, but every device failed
4     https://d.example/zero     executed, 1 action, F4 = 0 (not verified)
5     https://e.example/done     executed, completed, F4 = 1 (verified)
====  =========================  ============================================

Query q2 ("turn on bluetooth") has two results, both executed; only rank 2 is
verified.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional
from xml.sax.saxutils import quoteattr

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
from verirank_core.store import atomic_write_json, atomic_write_text, write_jsonl

__all__ = [
    "WORKED_QUERY", "WORKED_STEPS", "WORKED_KEYWORDS", "WORKED_EXAMPLE_VALUES",
    "ui_xml", "worked_example_records", "make_run",
]

WORKED_QUERY = "How to turn on dark mode in Android settings"
WORKED_STEPS = [
    "Open the Settings app.",
    "Tap Display.",
    "Turn on Dark theme to save battery.",
    "Tap Schedule and choose Sunset to sunrise.",
]
#: the small keyword list of the worked example (the real list is larger)
WORKED_KEYWORDS = frozenset({"setting", "display", "dark", "theme", "battery", "schedule", "sunrise"})

#: values computed by hand in ranking/FEATURES.md ("Worked example")
WORKED_EXAMPLE_VALUES = {
    "F1": 0.75,
    "F3": 0.5,
    "F4": 0.5,
    "F5": 0.45, "F6": 0.4, "F7": 0.5, "F8": 0.01,
    "F9": 0.275, "F10": 0.0, "F11": 0.6, "F12": 0.3075,
    "F13": 0.225, "F14": 0.0, "F15": 0.5, "F16": 0.2075,
    "F17": 0.75, "F18": 1 / 3,
    "n_deviations_norm": 0.25,
    "n_repairs_norm": 0.0,
    "platform_match": 0.5, "device_match": 0.5,
}


def ui_xml(nodes: list[tuple[str, str]]) -> str:
    """A uiautomator dump whose leaf nodes have the given (text, content-desc), stacked vertically."""
    rows = []
    for i, (text, desc) in enumerate(nodes):
        top = 100 + 150 * i
        rows.append(
            f'<node index="{i}" text={quoteattr(text)} resource-id="" class="android.widget.TextView" '
            f'package="com.android.settings" content-desc={quoteattr(desc)} checkable="false" checked="false" '
            f'clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" '
            f'long-clickable="false" password="false" selected="false" bounds="[0,{top}][1080,{top + 150}]" />'
        )
    return (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
        '<hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" '
        'package="com.android.settings" content-desc="" checkable="false" checked="false" clickable="false" '
        'enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" '
        'password="false" selected="false" bounds="[0,0][1080,2400]">'
        + "".join(rows) + "</node></hierarchy>"
    )


def _controls(*labels: str) -> list[dict]:
    return [{"label": label, "role": "button", "bounds": [0, 100 + 150 * i, 1080, 250 + 150 * i]}
            for i, label in enumerate(labels)]


def _steps(texts: list[str]) -> list[GroundedStep]:
    return [GroundedStep(index=i, text=t, snippet=t, xpath=f"/html/body/ol/li[{i + 1}]") for i, t in enumerate(texts)]


def worked_example_records() -> tuple[Query, Extraction, ExecutionResult, Trajectory, dict[str, str]]:
    """The worked example page: records plus its screen dumps (file name -> XML)."""
    query = Query(qid="q1", query=WORKED_QUERY)
    url = "https://b.example/dark"
    extraction = Extraction(qid="q1", url=url, rank=2, title="Dark mode on Android", query=WORKED_QUERY,
                            status=ExtractionStatus.OK, steps=_steps(WORKED_STEPS))
    screens = {
        "step_000.xml": ui_xml([("Camera", ""), ("Clock", ""), ("", "Phone")]),
        "step_001.xml": ui_xml([("Settings", ""), ("Network & internet", ""), ("Display", ""), ("Battery", "")]),
        "step_002.xml": ui_xml([("Display", ""), ("Brightness level", ""), ("Battery saver is on", ""),
                                ("", "Navigate up")]),
        "step_003.xml": ui_xml([("Dark theme", ""), ("Screen timeout", "")]),
    }
    steps = [
        StepRecord(index=0, step_index=0, action=Action(type=ActionType.LAUNCH, package="com.android.settings"),
                   xml="step_000.xml", controls=_controls("Camera", "Clock")),
        StepRecord(index=1, step_index=1, action=Action(type=ActionType.CLICK, x=540, y=475, target_label="Display"),
                   xml="step_001.xml", controls=_controls("Network & internet", "Display", "Battery")),
        StepRecord(index=2, step_index=2, action=Action(type=ActionType.SWIPE, x=540, y=1800, x2=540, y2=600),
                   xml="step_002.xml", controls=_controls("Brightness level", "Navigate up"), deviation=True),
        StepRecord(index=3, step_index=2, action=Action(type=ActionType.CLICK, x=540, y=175, target_label="Dark theme"),
                   xml="step_003.xml", controls=_controls("Dark theme", "Screen timeout")),
    ]
    trajectory = Trajectory(qid="q1", url=url, device="sim:android13-settings", world="android13-settings",
                            os_version="13", instructions=WORKED_STEPS, steps=steps,
                            stop_reason=StopReason.NO_ACTION, acted_steps=[0, 1, 2])
    execution = ExecutionResult(
        qid="q1", url=url, rank=2, status=ExecutionStatus.EXECUTED, device="sim:android13-settings",
        world="android13-settings", os_version="13", n_instructions=4, n_actions=4, n_deviations=1,
        stop_reason=StopReason.NO_ACTION, f4=0.5, judge="heuristic",
        judge_detail=[{"step": 0, "acted": True, "effect": False}, {"step": 1, "acted": True, "effect": True},
                      {"step": 2, "acted": True, "effect": True}, {"step": 3, "acted": False, "effect": False}],
        trajectory="trajectories/q1/b/trajectory.json",
    )
    return query, extraction, execution, trajectory, screens


def _simple_page(qid: str, query: str, rank: int, url: str, steps: list[str], *, f4: float,
                 n_actions: int, stop: StopReason, screens: list[tuple[str, list[str]]], folder: str
                 ) -> tuple[Extraction, ExecutionResult, Trajectory, dict[str, str]]:
    """An executed page: one action per listed screen (step_index, on-screen texts)."""
    ext = Extraction(qid=qid, url=url, rank=rank, title=f"Page {rank}", query=query,
                     status=ExtractionStatus.OK, steps=_steps(steps))
    files, records = {}, []
    for i, (texts) in enumerate(screens[:n_actions]):
        step_index, labels = texts
        name = f"step_{i:03d}.xml"
        files[name] = ui_xml([(t, "") for t in labels])
        records.append(StepRecord(index=i, step_index=int(step_index),
                                  action=Action(type=ActionType.CLICK, x=540, y=175, target_label=labels[0]),
                                  xml=name, controls=_controls(*labels)))
    traj = Trajectory(qid=qid, url=url, device="sim:android13-settings", world="android13-settings",
                      os_version="13", instructions=steps, steps=records, stop_reason=stop)
    exe = ExecutionResult(qid=qid, url=url, rank=rank, status=ExecutionStatus.EXECUTED,
                          device="sim:android13-settings", world="android13-settings", os_version="13",
                          n_instructions=len(steps), n_actions=n_actions, stop_reason=stop, f4=f4,
                          trajectory=f"trajectories/{folder}/trajectory.json")
    return ext, exe, traj, files


def make_run(run_dir: Path, *, write_queries: bool = True) -> Path:
    """Write the two-query run described in the module docstring into ``run_dir``."""
    run_dir = Path(run_dir)
    q1, ext_b, exe_b, traj_b, screens_b = worked_example_records()
    q2 = Query(qid="q2", query="turn on bluetooth")
    extractions = [
        Extraction(qid="q1", url="https://a.example/no-steps", rank=1, title="Android tips", query=q1.query,
                   status=ExtractionStatus.NO_STEPS, reason="no list of steps"),
        ext_b,
        Extraction(qid="q1", url="https://c.example/failed", rank=3, title="Dark mode guide", query=q1.query,
                   status=ExtractionStatus.OK, steps=_steps(["Open Settings.", "Tap Display."])),
    ]
    executions: list[ExecutionResult] = [
        ExecutionResult(qid="q1", url="https://a.example/no-steps", rank=1, status=ExecutionStatus.SKIPPED,
                        reason="no steps extracted"),
        exe_b,
        ExecutionResult(qid="q1", url="https://c.example/failed", rank=3, status=ExecutionStatus.DEVICE_FAILED,
                        reason="adb: device offline", n_instructions=2, attempts=3),
    ]
    trajectories: list[tuple[Trajectory, dict[str, str], str]] = [(traj_b, screens_b, exe_b.trajectory)]
    pages = [
        ("q1", q1.query, 4, "https://d.example/zero", ["Open Settings.", "Tap Wallpaper."], 0.0, 1,
         StopReason.NO_ACTION, [(0, ["Settings"])], "q1/d"),
        ("q1", q1.query, 5, "https://e.example/done", ["Open Settings.", "Tap Display.", "Tap Dark theme."], 1.0, 3,
         StopReason.COMPLETED, [(0, ["Settings"]), (1, ["Display"]), (2, ["Dark theme"])], "q1/e"),
        ("q2", q2.query, 1, "https://f.example/bt-old", ["Swipe down.", "Long press Bluetooth."], 0.0, 1,
         StopReason.CYCLE, [(0, ["Quick settings"])], "q2/f"),
        ("q2", q2.query, 2, "https://g.example/bt", ["Open Settings.", "Tap Connected devices.", "Turn on Bluetooth."],
         0.67, 3, StopReason.COMPLETED,
         [(0, ["Settings"]), (1, ["Connected devices"]), (2, ["Bluetooth"])], "q2/g"),
    ]
    for qid, text, rank, url, steps, f4, n_actions, stop, screens, folder in pages:
        ext, exe, traj, files = _simple_page(qid, text, rank, url, steps, f4=f4, n_actions=n_actions,
                                             stop=stop, screens=screens, folder=folder)
        extractions.append(ext)
        executions.append(exe)
        trajectories.append((traj, files, exe.trajectory))

    if write_queries:
        write_jsonl(run_dir / "queries.jsonl", [q1, q2])
    write_jsonl(run_dir / "extraction.jsonl", extractions)
    write_jsonl(run_dir / "execution.jsonl", executions)
    for traj, files, rel in trajectories:
        folder = run_dir / Path(rel).parent
        atomic_write_json(folder / "trajectory.json", traj.to_json_dict())
        for name, xml in files.items():
            atomic_write_text(folder / name, xml)
    return run_dir


def write_qrels(path: Path, grades: dict[tuple[str, str], int]) -> Path:
    """TREC qrels lines ``qid 0 url grade``."""
    atomic_write_text(path, "".join(f"{q} 0 {u} {g}\n" for (q, u), g in sorted(grades.items())))
    return path


def stub_model(weights: dict[str, float], feature_names: Optional[list[str]] = None):
    """A tiny *stub* ranker with the estimator API (``feature_names_``, ``predict``): a weighted sum."""

    class StubLinearModel:
        def __init__(self) -> None:
            self.feature_names_ = feature_names or list(weights)

        def predict(self, X, groups=None):
            import numpy as np

            w = np.array([weights.get(n, 0.0) for n in self.feature_names_])
            return np.asarray(X, dtype=float) @ w

    return StubLinearModel()
