"""Draw what the agent did onto a small copy of each screenshot (Pillow).

The trajectory keeps screenshots of the screen *before* each action, stored
at ``Trajectory.screenshot_scale`` of the screen (half size by default),
while action coordinates are in device pixels. Every function here takes the
screen width, so marks land where the action was, whatever the stored size.
The report shows a downscaled copy with the action drawn on it:

* ``click``: a ring and dot at the tap point, and the target's bounds;
* ``long_press``: the same with a double ring;
* ``swipe``: an arrow from the start to the end point;
* ``input``: the typed text in a banner, and a ring at the field when known;
* ``back`` / ``home`` / ``enter`` / ``launch`` / ``wait``: a labelled pill.

A failed action is drawn in orange, a successful one in red, so the two
can be told apart at a glance. :func:`highlight` boxes a matched control in
green, for the evidence of verified pages. Originals are never modified.
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Optional

from PIL import Image, ImageDraw, ImageFont

from execution.records import Action, ActionType
from verirank.errors import StoreError

__all__ = ["THUMB_WIDTH", "action_caption", "annotate", "highlight", "thumbnail"]

#: width in pixels of the report's screenshot copies (height keeps the aspect ratio)
THUMB_WIDTH = 360

_OK = (229, 57, 53)        # red: the action as executed
_FAILED = (251, 140, 0)    # orange: the action failed on the device
_WHITE = (255, 255, 255)
_EVIDENCE = (46, 125, 50)  # green: the control a verified step matched


@lru_cache(maxsize=4)
def _font(size: int) -> ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def action_caption(action: Action) -> str:
    """A one-line description of an action, e.g. ``tap 'Display' at (540, 812)``."""
    kind = action.type
    label = f" '{action.target_label}'" if action.target_label else ""
    at = f" at ({action.x}, {action.y})" if action.x is not None and action.y is not None else ""
    if kind == ActionType.CLICK:
        return f"tap{label}{at}"
    if kind == ActionType.LONG_PRESS:
        return f"long-press{label}{at}"
    if kind == ActionType.SWIPE:
        direction = f" {action.text}" if action.text else ""
        return f"swipe{direction}{label}"
    if kind == ActionType.INPUT:
        return f"type '{action.text or ''}'{label}"
    if kind == ActionType.LAUNCH:
        return f"launch {action.package or action.text or 'app'}"
    if kind == ActionType.WAIT:
        return "no device action" + (f" ({action.rationale})" if action.rationale else "")
    return f"press {kind.value}"


def thumbnail(src: Path, dest: Path, width: int = THUMB_WIDTH) -> tuple[int, int]:
    """Write a downscaled PNG copy of ``src`` to ``dest``; returns the copy's size."""
    image, _ = _open_small(src, width)
    return _save(image, dest)


def annotate(src: Path, dest: Path, action: Optional[Action], ok: bool = True,
             width: int = THUMB_WIDTH, screen_width: Optional[int] = None) -> tuple[int, int]:
    """Write a downscaled copy of ``src`` with ``action`` drawn on it; returns its size.

    ``screen_width`` is the device's width in pixels (the unit of the action's
    coordinates); default: the screenshot's own width (a full-size capture).
    """
    image, scale = _open_small(src, width, screen_width)
    if action is not None:
        _draw_action(ImageDraw.Draw(image), image.size, action, scale, _OK if ok else _FAILED)
    return _save(image, dest)


def highlight(src: Path, dest: Path, bounds: Optional[tuple[int, int, int, int]], label: str = "",
              width: int = THUMB_WIDTH, screen_width: Optional[int] = None) -> tuple[int, int]:
    """Write a downscaled copy of ``src`` with ``bounds`` (device pixels) boxed in green and labelled."""
    image, scale = _open_small(src, width, screen_width)
    if bounds is not None:
        draw = ImageDraw.Draw(image)
        x1, y1, x2, y2 = (v * scale for v in bounds)
        draw.rectangle([x1 - 2, y1 - 2, x2 + 2, y2 + 2], outline=_WHITE, width=5)
        draw.rectangle([x1 - 2, y1 - 2, x2 + 2, y2 + 2], outline=_EVIDENCE, width=3)
        if label:
            font = _font(13)
            text = label if len(label) <= 32 else label[:31] + "…"
            left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
            tw, th = right - left + 8, bottom - top + 6
            ty = y1 - th - 3 if y1 - th - 3 >= 0 else y2 + 3
            tx = min(max(0.0, x1), max(0.0, image.width - tw))
            draw.rectangle([tx, ty, tx + tw, ty + th], fill=_EVIDENCE)
            draw.text((tx + 4 - left, ty + 3 - top), text, font=font, fill=_WHITE)
    return _save(image, dest)


# --- helpers ----------------------------------------------------------------------

def _open_small(src: Path, width: int, screen_width: Optional[int] = None) -> tuple[Image.Image, float]:
    """A copy of the image scaled to at most ``width``, and the factor from device pixels to its pixels.

    One screenshot feeds several copies (its trajectory card, evidence), so the
    decoded and scaled image is kept for the next caller."""
    try:
        stamp = src.stat().st_mtime_ns
    except OSError as exc:
        raise StoreError(f"cannot read screenshot {src}: {exc}") from exc
    image, scale = _decoded(src, stamp, width, screen_width)
    return image.copy(), scale


@lru_cache(maxsize=32)
def _decoded(src: Path, stamp: int, width: int, screen_width: Optional[int]) -> tuple[Image.Image, float]:
    try:
        with Image.open(src) as raw:
            raw.load()
            image = raw.convert("RGB")
    except (OSError, ValueError) as exc:
        raise StoreError(f"cannot read screenshot {src}: {exc}") from exc
    device_width = screen_width or image.width
    if image.width <= width:
        return image, image.width / device_width
    factor = image.width // width
    # integer reduce is fast and sharp; a final resize fixes any remainder
    small = image.reduce(factor) if factor > 1 else image
    if small.width != width:
        small = small.resize((width, max(1, round(small.height * width / small.width))), Image.Resampling.BILINEAR)
    return small, small.width / device_width


def _save(image: Image.Image, dest: Path) -> tuple[int, int]:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".tmp")
    image.save(tmp, format="PNG", compress_level=3)  # fast; thumbnails are small anyway
    tmp.replace(dest)
    return image.size


def _draw_action(draw: ImageDraw.ImageDraw, size: tuple[int, int], action: Action, scale: float,
                 color: tuple[int, int, int]) -> None:
    def pt(x: Optional[int], y: Optional[int]) -> Optional[tuple[float, float]]:
        return None if x is None or y is None else (x * scale, y * scale)

    bounds = action.target_bounds
    if bounds and len(bounds) == 4 and action.type in (ActionType.CLICK, ActionType.LONG_PRESS, ActionType.INPUT):
        x1, y1, x2, y2 = (v * scale for v in bounds)
        draw.rectangle([x1, y1, x2, y2], outline=color, width=2)

    start = pt(action.x, action.y)
    kind = action.type
    if kind in (ActionType.CLICK, ActionType.LONG_PRESS) and start:
        _ring(draw, start, 14, color)
        if kind == ActionType.LONG_PRESS:
            _ring(draw, start, 22, color)
    elif kind == ActionType.SWIPE and start:
        end = pt(action.x2, action.y2)
        if end:
            _arrow(draw, start, end, color)
        else:
            _ring(draw, start, 14, color)
    elif kind == ActionType.INPUT:
        if start:
            _ring(draw, start, 14, color)
        _pill(draw, size, f"type: {action.text or ''}", color, top=True)
    else:
        _pill(draw, size, action_caption(action) if kind != ActionType.WAIT else "no action (step already done)",
              color if kind != ActionType.WAIT else (96, 96, 96), top=False)


def _ring(draw: ImageDraw.ImageDraw, c: tuple[float, float], r: float, color: tuple[int, int, int]) -> None:
    x, y = c
    draw.ellipse([x - r, y - r, x + r, y + r], outline=_WHITE, width=5)
    draw.ellipse([x - r, y - r, x + r, y + r], outline=color, width=3)
    draw.ellipse([x - 4, y - 4, x + 4, y + 4], fill=color)


def _arrow(draw: ImageDraw.ImageDraw, a: tuple[float, float], b: tuple[float, float],
           color: tuple[int, int, int]) -> None:
    draw.line([a, b], fill=_WHITE, width=7)
    draw.line([a, b], fill=color, width=4)
    angle = math.atan2(b[1] - a[1], b[0] - a[0])
    head = 16
    left = (b[0] - head * math.cos(angle - 0.45), b[1] - head * math.sin(angle - 0.45))
    right = (b[0] - head * math.cos(angle + 0.45), b[1] - head * math.sin(angle + 0.45))
    draw.polygon([b, left, right], fill=color, outline=_WHITE)
    draw.ellipse([a[0] - 5, a[1] - 5, a[0] + 5, a[1] + 5], fill=color)


def _pill(draw: ImageDraw.ImageDraw, size: tuple[int, int], text: str, color: tuple[int, int, int],
          top: bool) -> None:
    font = _font(15)
    text = text if len(text) <= 40 else text[:39] + "…"
    left, tp, right, bottom = draw.textbbox((0, 0), text, font=font)
    w, h = right - left + 20, bottom - tp + 12
    x = (size[0] - w) / 2
    y = 40 if top else size[1] - h - 40
    draw.rounded_rectangle([x, y, x + w, y + h], radius=h / 2, fill=color, outline=_WHITE, width=2)
    draw.text((x + 10 - left, y + 6 - tp), text, font=font, fill=_WHITE)
