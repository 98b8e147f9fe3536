"""Curiosity: how unsure the agent is about the current step (AppCards' trigger for knowledge).

Three signals, each in [0, 1]; the score is the largest:

* **miss** = ``1 - best match score`` of the step's target on screen;
* **ambiguity** = how close the runner-up is to the best (two rows equally good
  and neither strong: "Display" vs "Display Size" for "display size settings");
* **stall** = steps of the episode's history that ended with no progress
  (actions attributed to this step that did not complete it), ``/ 3``.

Above ``threshold`` the agent consults the knowledge cards.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

__all__ = ["Curiosity", "curiosity"]


@dataclass(frozen=True)
class Curiosity:
    score: float
    miss: float
    ambiguity: float
    stall: float

    def describe(self) -> str:
        return (f"curiosity {self.score:.2f} (miss {self.miss:.2f}, ambiguity {self.ambiguity:.2f}, "
                f"stall {self.stall:.2f})")


def curiosity(scores: Sequence[float], stalled_actions: int = 0, strong: float = 0.9) -> Curiosity:
    """The curiosity for a target whose candidates scored ``scores`` (best first)."""
    best = scores[0] if scores else 0.0
    miss = max(0.0, 1.0 - best)
    ambiguity = 0.0
    if len(scores) > 1 and best < strong:
        gap = best - scores[1]
        ambiguity = max(0.0, 1.0 - gap / 0.1) * (1.0 - best)  # a tie between weak matches
    stall = min(1.0, stalled_actions / 3)
    return Curiosity(round(max(miss, ambiguity, stall), 4), round(miss, 4), round(ambiguity, 4), round(stall, 4))
