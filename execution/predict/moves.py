"""What one decision of the heuristic predictor comes to: an action, "already done", or a skip."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from execution.predict.plan import PlanItem
from verirank_core.execution_records import Action

__all__ = ["Act", "Satisfied", "Skip"]


@dataclass
class Act:
    action: Action
    done: bool
    control_id: Optional[int] = None
    deviation: bool = False
    expect_change: bool = True
    #: ``DeviationKind`` value when ``deviation``
    kind: Optional[str] = None


@dataclass
class Satisfied:
    why: str
    #: a ``DeviationKind`` value when satisfying the item went beyond the page (an alternative not taken)
    kind: Optional[str] = None


@dataclass
class Skip:
    """Lookahead: the item is absent (or only loosely there) and a later named item is visible."""

    why: str
    to: PlanItem
