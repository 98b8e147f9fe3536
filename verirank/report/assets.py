"""The report's ``assets/`` folder: annotated copies of every trajectory screenshot.

Besides one copy per screenshot with its action drawn, verified pages get
evidence copies (``evidence_NN_matched.png`` / ``evidence_NN_effect.png``,
:mod:`verirank.report.evidence`) with the matched control boxed. Copies are
written once: a copy newer than its source is kept, so building
the report again after a resumed run only draws the new screenshots.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Callable, Optional

from verirank_core.execution_records import Action
from verirank_core.errors import StoreError
from verirank.report.annotate import annotate, highlight
from verirank.report.collect import ReportData
from verirank.report.evidence import FINAL_SHOT, evidence_file, page_evidence, step_shot
from verirank.report.render import Shot

log = logging.getLogger(__name__)

__all__ = ["ASSETS_DIR", "count_screenshots", "write_screenshots"]

ASSETS_DIR = "assets"


#: (key, source, destination, draw): draw(src, dest) writes the copy and returns its size
_Job = tuple[tuple[str, str], Path, Path, Callable[[Path, Path], tuple[int, int]]]


def _jobs(data: ReportData, assets: Path) -> list[_Job]:
    """One job per screenshot copy of every trajectory, plus the evidence of verified pages."""
    jobs: list[_Job] = []
    for q in data.queries:
        for page in q.original:
            traj, folder = page.trajectory, page.trajectory_dir
            if traj is None or folder is None:
                continue
            # coordinates are in device pixels; the stored screenshot may be scaled
            screen_w = traj.screen_size[0] if traj.screen_size else None
            for step in traj.steps:
                if step.screenshot:
                    name = step_shot(step.index)
                    jobs.append(((page.anchor, name), folder / step.screenshot,
                                 _copy_path(assets / page.anchor, name, step.screenshot),
                                 partial(_draw_action, action=step.action, ok=step.ok, screen_w=screen_w)))
            if traj.final_screenshot:
                jobs.append(((page.anchor, FINAL_SHOT), folder / traj.final_screenshot,
                             _copy_path(assets / page.anchor, FINAL_SHOT, traj.final_screenshot),
                             partial(_draw_action, action=None, ok=True, screen_w=screen_w)))
            if page.verified:
                for ev in page_evidence(traj):
                    for kind, shot, bounds in (("matched", ev.matched_shot, ev.bounds),
                                               ("effect", ev.effect_shot, ev.effect_bounds)):
                        if shot:
                            name = evidence_file(ev.step, kind)
                            jobs.append(((page.anchor, name), folder / shot, _copy_path(assets / page.anchor, name, shot),
                                         partial(_draw_box, bounds=bounds, label=ev.label or "", screen_w=screen_w)))
    return jobs


def _copy_path(folder: Path, name: str, source: str) -> Path:
    """Where the drawn copy of ``source`` goes: named by what it shows (``step_002.png``) and by its
    source file, so that a page run again over screens stored earlier gets fresh copies."""
    stem = Path(source).stem
    return folder / (name if stem == Path(name).stem else f"{Path(name).stem}-{stem[:12]}.png")


def _draw_action(src: Path, dest: Path, *, action: Optional[Action], ok: bool, screen_w: Optional[int]):
    return annotate(src, dest, action, ok, screen_width=screen_w)


def _draw_box(src: Path, dest: Path, *, bounds, label: str, screen_w: Optional[int]):
    return highlight(src, dest, bounds, label, screen_width=screen_w)


def count_screenshots(data: ReportData) -> int:
    """How many screenshot copies :func:`write_screenshots` will handle."""
    return len(_jobs(data, Path(ASSETS_DIR)))


def _png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG header (no decoding)."""
    with open(path, "rb") as fh:
        head = fh.read(24)
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def write_screenshots(data: ReportData, html_dir: Path, workers: int = 2,
                      advance: Optional[Callable[[int], object]] = None) -> dict[tuple[str, str], Shot]:
    """Draw every screenshot's action into ``html_dir/assets``; returns the map the renderer uses.

    ``advance(1)`` is called per screenshot (a progress bar's ``update``).

    A screenshot missing from the trajectory folder is left out of the map
    (the report then says "no screenshot") rather than failing the report.
    """
    assets = Path(html_dir) / ASSETS_DIR
    shots: dict[tuple[str, str], Shot] = {}

    def work(job) -> None:
        key, src, dest, draw = job
        if not src.is_file():
            return
        if dest.is_file() and dest.stat().st_mtime >= src.stat().st_mtime:
            width, height = _png_size(dest)
        else:
            try:
                width, height = draw(src, dest)
            except StoreError as exc:  # one unreadable screenshot must not sink the report
                log.warning("report: %s", exc)
                return
        shots[key] = (dest.relative_to(html_dir).as_posix(), width, height)

    jobs = _jobs(data, assets)
    # Pillow releases the GIL while decoding and scaling, so threads use both cores
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="report-img") as pool:
        for _ in pool.map(work, jobs):
            if advance:
                advance(1)
    return shots
