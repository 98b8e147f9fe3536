"""What the agent saw on screen, as sets of terms (inputs of F9-F18).

Two views of the screen before an action:

* the *full* screen: the ``text`` and ``content-desc`` attributes of every
  ``node`` of the uiautomator dump (``StepRecord.xml``);
* the *distilled* screen: the ``label`` of every control the predictor was
  shown (``StepRecord.controls``).

Instruction step ``i`` is matched against the union of the screens before
every action attributed to it (``StepRecord.step_index == i``), so a step that
needed a scroll first is judged on both screens.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from verirank_core.execution_records import StepRecord, Trajectory
from ranking.terms import content_terms
from verirank_core.errors import SchemaError, StoreError

__all__ = ["xml_texts", "control_texts", "screen_terms_by_step"]


def xml_texts(path: Path) -> list[str]:
    """``text`` and ``content-desc`` of every node of a uiautomator dump."""
    from lxml import etree

    if not path.exists():
        raise StoreError(f"screen dump {path} named by the trajectory does not exist")
    try:
        root = etree.parse(str(path), etree.XMLParser(recover=False, resolve_entities=False)).getroot()
    except etree.XMLSyntaxError as exc:
        raise SchemaError(f"{path}: not a valid uiautomator XML dump ({exc})") from exc
    texts = []
    for node in root.iter("node"):
        for attr in ("text", "content-desc"):
            value = node.get(attr)
            if value:
                texts.append(value)
    return texts


def control_texts(controls: Iterable[dict]) -> list[str]:
    """The ``label`` of every distilled control (missing or empty labels skipped)."""
    return [str(c["label"]) for c in controls if isinstance(c, dict) and c.get("label")]


def _terms(texts: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for text in texts:
        out.update(content_terms(text))
    return out


def screen_terms_by_step(
    trajectory: Trajectory, traj_dir: Path | None, n_steps: int
) -> tuple[dict[int, set[str]], dict[int, set[str]]]:
    """Per instruction step reached: (full-screen terms, distilled-control terms).

    Steps never acted on are absent from both maps. Actions without a
    ``step_index`` (exploration) or with one outside ``0..n_steps-1`` are
    ignored. A step record without an XML dump falls back to its controls'
    labels for the full view (the best evidence left).
    """
    full: dict[int, set[str]] = {}
    distilled: dict[int, set[str]] = {}
    for record in trajectory.steps:
        i = record.step_index
        if i is None or not 0 <= i < n_steps:
            continue
        full.setdefault(i, set()).update(_full_screen_terms(record, traj_dir))
        distilled.setdefault(i, set()).update(_terms(control_texts(record.controls)))
    return full, distilled


def _full_screen_terms(record: StepRecord, traj_dir: Path | None) -> set[str]:
    if record.xml is None:
        return _terms(control_texts(record.controls))
    if traj_dir is None:
        raise StoreError(
            f"trajectory step {record.index} names screen dump {record.xml!r} but no trajectory folder was given"
        )
    return _terms(xml_texts(Path(traj_dir) / record.xml))
