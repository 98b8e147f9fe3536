"""TREC qrels for HowToBench, decided by replaying each page on the simulator.

A page is relevant (grade 1) iff replaying its gold action sequence on a fresh
simulator of the query's world makes the goal predicate true, and the goal was
false at the start. Replays are cached per (world, goal, sequence): many pages
share a sequence.

qrels file format (TREC): one line per judged page, ``qid 0 docno grade``;
the docno is the URL in the reversible encoding of verirank/docno.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping

from execution.sim.world import World
from verirank.bench.replay import ReplayResult, replay
from verirank.bench.tasks import Step
from verirank.docno import decode_docno, encode_docno
from verirank.errors import SchemaError
from verirank.store import atomic_write_text

__all__ = ["ReplayCache", "format_qrels", "write_qrels", "read_qrels"]


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


def read_qrels(path: Path | str) -> dict[str, dict[str, int]]:
    """``{qid: {url: grade}}``; a malformed line is a SchemaError naming it."""
    path = Path(path)
    out: dict[str, dict[str, int]] = {}
    for lineno, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 4:
            raise SchemaError(f"{path}:{lineno}: a qrels line is 'qid 0 docid grade', got {line!r}")
        try:
            grade = int(parts[3])
        except ValueError:
            raise SchemaError(f"{path}:{lineno}: grade {parts[3]!r} is not an integer") from None
        out.setdefault(decode_docno(parts[0]), {})[decode_docno(parts[2])] = grade
    return out


def qrels_from_mapping(qrels: Mapping[str, Mapping[str, int]]) -> list[tuple[str, str, int]]:
    return [(q, u, g) for q in sorted(qrels) for u, g in sorted(qrels[q].items())]
