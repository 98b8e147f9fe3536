"""TREC qrels for HowToBench, decided by replaying each page on the simulator.

A page is relevant (grade 1) iff replaying its gold action sequence on a fresh
simulator of the query's world makes the goal predicate true, and the goal was
false at the start. Replays are cached per (world, goal, sequence): many pages
share a sequence.

qrels file format (TREC): one line per judged page, ``qid 0 docno grade``; the docno
is the URL in the reversible encoding of verirank_core/docno.py. Read it back with
:func:`ranking.metrics.read_qrels`, the one qrels reader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from phonesim.world import World
from howtobench.replay import ReplayResult, replay
from howtobench.tasks import Step
from verirank_core.docno import encode_docno
from verirank_core.store import atomic_write_text

__all__ = ["ReplayCache", "format_qrels", "write_qrels"]


class ReplayCache:
    """Replays sequences once per (world, goal, actions)."""

    def __init__(self) -> None:
        self._memo: dict[tuple, ReplayResult] = {}
        self.replays = 0

    def judge(self, world: World, goal: str, actions: list[Step]) -> ReplayResult:
        key = (world.name, goal, tuple(s.short() for s in actions))
        if key not in self._memo:
            self._memo[key] = replay(world, goal, actions)
            self.replays += 1
        return self._memo[key]


def format_qrels(rows: Iterable[tuple[str, str, int]]) -> str:
    """``qid 0 docno grade`` lines (ids encoded by :func:`encode_docno`)."""
    lines = []
    for qid, url, grade in rows:
        lines.append(f"{encode_docno(qid)} 0 {encode_docno(url)} {int(grade)}\n")
    return "".join(lines)


def write_qrels(path: Path, rows: Iterable[tuple[str, str, int]]) -> None:
    atomic_write_text(Path(path), format_qrels(rows))
