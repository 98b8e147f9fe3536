"""HowToBench task definitions: what a query asks, and the UI path that answers it.

One YAML file per world under ``datasets/howtobench/tasks/``::

    world: oneui5-settings          # a world name (datasets/worlds/) or file
    domain: Settings                # the Table 3 "domain" column
    app_name: Settings              # how pages name the app ("Open the Settings app")
    platform: Samsung One UI 5      # how pages name the phone/OS in titles
    tasks:
      - id: oneui5-dark-mode
        goal: dark_mode_on          # a goal of the world (LABELLING ONLY)
        topic: turn on dark mode    # short phrase used in page titles
        split: test                 # test (HowToBench) or pretrain
        queries: [how to turn on dark mode samsung, ...]
        path: [Display, {toggle: Dark mode}]
        outdated: [{platform: One UI 1, path: [Display, {toggle: Night mode}]}]
        other_platforms: [{platform: iPhone, path: [Display & Brightness, {pick: Dark}]}]

A path step is a bare label (tap it) or a one-key mapping: ``tap``, ``toggle``
(a switch or checkbox row), ``pick`` (an option), ``press`` (a button),
``type`` (text into the focused field), or the bare words ``enter``/``back``.
The path never includes opening the app: every rendered page adds it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Optional

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from verirank_core.errors import SchemaError
from verirank_core.resources import TASKS_DIR

__all__ = ["Step", "AltPath", "Task", "TaskFile", "TASKS_DIR", "load_task_file", "load_tasks", "gold_actions"]


StepOp = Literal["launch", "tap", "toggle", "pick", "press", "type", "enter", "back"]
_LABEL_OPS = ("launch", "tap", "toggle", "pick", "press")
_BARE_OPS = ("enter", "back")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Step(_Model):
    """One UI action a person performs: tap a label, type text, press a key."""

    op: StepOp
    #: the UI label to act on (launch/tap/toggle/pick/press)
    label: str = ""
    #: the text to type (type)
    text: str = ""

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: object) -> object:
        if isinstance(data, str):
            return {"op": data} if data in _BARE_OPS else {"op": "tap", "label": data}
        if isinstance(data, dict) and "op" not in data and len(data) == 1:
            (op, value), = data.items()
            if op == "type":
                return {"op": "type", "text": str(value)}
            return {"op": op, "label": str(value)}
        return data

    @model_validator(mode="after")
    def _needs_argument(self) -> "Step":
        if self.op in _LABEL_OPS and not self.label.strip():
            raise ValueError(f"a {self.op} step needs a label")
        if self.op == "type" and not self.text:
            raise ValueError("a type step needs text")
        return self

    def short(self) -> str:
        """Compact form for logs and sidecars: ``tap:Display``, ``type:abc``, ``enter``."""
        if self.op in _BARE_OPS:
            return self.op
        return f"{self.op}:{self.text if self.op == 'type' else self.label}"


class AltPath(_Model):
    """A path that answers the question for another version or platform."""

    platform: str
    path: list[Step] = Field(min_length=1)
    #: the app the page tells you to open, when not the task's app (e.g. iPhone "Settings")
    app: str = ""


class Task(_Model):
    id: str
    goal: str
    topic: str
    split: Literal["test", "pretrain"] = "test"
    queries: list[str] = Field(min_length=1)
    path: list[Step] = Field(min_length=1)
    outdated: list[AltPath] = Field(default_factory=list)
    other_platforms: list[AltPath] = Field(default_factory=list)
    # filled from the file header
    world: str = ""
    domain: str = ""
    app_name: str = ""
    platform: str = ""

    @field_validator("queries")
    @classmethod
    def _distinct(cls, v: list[str]) -> list[str]:
        cleaned = [" ".join(q.split()) for q in v]
        if any(not q for q in cleaned):
            raise ValueError("a query phrasing is empty")
        if len({q.lower() for q in cleaned}) != len(cleaned):
            raise ValueError("query phrasings repeat")
        return cleaned


class TaskFile(_Model):
    world: str
    domain: str
    app_name: str
    platform: str
    tasks: list[Task] = Field(min_length=1)


def gold_actions(task: Task, path: Optional[list[Step]] = None, app: str = "") -> list[Step]:
    """What a person following ``path`` (default: the correct one) does: open the app, then the path."""
    return [Step(op="launch", label=app or task.app_name), *(task.path if path is None else path)]


def load_task_file(path: Path | str) -> list[Task]:
    """Parse one task file; every problem is a SchemaError naming the file and field."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text("utf-8"))
    except OSError as exc:
        raise SchemaError(f"{path}: cannot read task file ({exc})") from exc
    except yaml.YAMLError as exc:
        raise SchemaError(f"{path}: not valid YAML: {exc}") from exc
    try:
        parsed = TaskFile.model_validate(data)
    except ValidationError as exc:
        problems = [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:8]]
        raise SchemaError(f"{path}: invalid task file: " + "; ".join(problems)) from exc
    out = []
    for task in parsed.tasks:
        out.append(task.model_copy(update={
            "world": parsed.world, "domain": parsed.domain, "app_name": parsed.app_name,
            "platform": parsed.platform,
        }))
    return out


def load_tasks(tasks_dir: Path | str = TASKS_DIR, split: Optional[str] = None) -> list[Task]:
    """Every task of every ``*.yaml`` file in ``tasks_dir`` (sorted by file name), optionally one split."""
    tasks_dir = Path(tasks_dir)
    files = sorted(tasks_dir.glob("*.yaml"))
    if not files:
        raise SchemaError(f"{tasks_dir}: no task files (*.yaml)")
    tasks: list[Task] = []
    seen_ids: dict[str, Path] = {}
    seen_queries: dict[str, str] = {}
    for f in files:
        for task in load_task_file(f):
            if task.id in seen_ids:
                raise SchemaError(f"{f}: task id {task.id!r} already defined in {seen_ids[task.id]}")
            seen_ids[task.id] = f
            for q in task.queries:
                other = seen_queries.setdefault(q.lower(), task.id)
                if other != task.id:
                    raise SchemaError(f"{f}: query {q!r} of task {task.id!r} repeats one of task {other!r}")
            tasks.append(task)
    return [t for t in tasks if split is None or t.split == split]
