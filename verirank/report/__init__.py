"""The HTML report of a run: ``build_report(run_dir, out_html)``.

For each query it shows the original result list beside the reranked one
with verification badges, each page's extracted steps with their grounding,
and the trajectory screenshot by screenshot with the action drawn on it.
The output is a self-contained folder: ``report.html`` (styles inlined, no
JavaScript, no external URLs) plus ``assets/`` with the screenshot copies.

Modules: :mod:`.collect` reads the run, :mod:`.annotate` draws actions,
:mod:`.assets` writes the screenshot copies, :mod:`.render` writes the HTML.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

from verirank_core.store import atomic_write_text

__all__ = ["build_report"]


def build_report(run_dir: Path | str, out_html: Path | str, *, qrels: Optional[Path] = None,
                 title: str = "verirank report", workers: int = 2,
                 progress: Optional[Callable[..., object]] = None) -> Path:
    """Write ``out_html`` and its ``assets/`` folder for the run in ``run_dir``; returns ``out_html``.

    ``qrels`` (default ``run_dir/qrels.txt`` when present) adds "relevant"
    marks; ``progress`` is the stages' tqdm-like factory (:data:`verirank_core.stages.Progress`).
    """
    from verirank.report.assets import count_screenshots, write_screenshots
    from verirank.report.collect import collect_run
    from verirank.report.render import render_html

    out_html = Path(out_html)
    data = collect_run(run_dir, qrels)
    bar = None
    if progress is not None:
        bar = progress(total=count_screenshots(data), desc="report", unit="img")
    try:
        shots = write_screenshots(data, out_html.parent, workers=workers,
                                  advance=bar.update if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
    atomic_write_text(out_html, render_html(data, shots, title))
    return out_html
