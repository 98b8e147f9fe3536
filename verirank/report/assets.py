"""The report's ``assets/`` folder: annotated copies of every trajectory screenshot.

Copies are written once: a copy newer than its source is kept, so building
the report again after a resumed run only draws the new screenshots.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Optional

from verirank_core.execution_records import Action
from verirank.report.annotate import annotate
from verirank.report.collect import ReportData
from verirank.report.render import Shot

__all__ = ["ASSETS_DIR", "count_screenshots", "write_screenshots"]

ASSETS_DIR = "assets"


def _jobs(data: ReportData, assets: Path) -> list[tuple[tuple[str, str], Path, Path, Optional[Action], bool]]:
    """(key, source, destination, action, ok) for every screenshot of every trajectory."""
    jobs = []
    for q in data.queries:
        for page in q.original:
            traj, folder = page.trajectory, page.trajectory_dir
            if traj is None or folder is None:
                continue
            for step in traj.steps:
                if step.screenshot:
                    jobs.append(((page.anchor, step.screenshot), folder / step.screenshot,
                                 assets / page.anchor / step.screenshot, step.action, step.ok))
            if traj.final_screenshot:
                jobs.append(((page.anchor, traj.final_screenshot), folder / traj.final_screenshot,
                             assets / page.anchor / traj.final_screenshot, None, True))
    return jobs


def count_screenshots(data: ReportData) -> int:
    """How many screenshot copies :func:`write_screenshots` will handle."""
    return len(_jobs(data, Path(ASSETS_DIR)))


def _png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG header (no decoding)."""
    with open(path, "rb") as fh:
        head = fh.read(24)
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def write_screenshots(data: ReportData, html_dir: Path, workers: int = 2,
                      progress: Optional[Callable[[int], object]] = None) -> dict[tuple[str, str], Shot]:
    """Draw every screenshot's action into ``html_dir/assets``; returns the map the renderer uses.

    A screenshot missing from the trajectory folder is left out of the map
    (the report then says "no screenshot") rather than failing the report.
    """
    assets = Path(html_dir) / ASSETS_DIR
    shots: dict[tuple[str, str], Shot] = {}

    def work(job) -> None:
        key, src, dest, action, ok = job
        if not src.is_file():
            return
        if dest.is_file() and dest.stat().st_mtime >= src.stat().st_mtime:
            width, height = _png_size(dest)
        else:
            width, height = annotate(src, dest, action, ok)
        shots[key] = (dest.relative_to(html_dir).as_posix(), width, height)

    jobs = _jobs(data, assets)
    # Pillow releases the GIL while decoding and scaling, so threads use both cores
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="report-img") as pool:
        for _ in pool.map(work, jobs):
            if progress:
                progress(1)
    return shots
