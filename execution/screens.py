"""Screenshot copies for storage: scaled down, then PNG-encoded fast.

PNG encoding dominates a simulated step's cost (about 25 ms for a 1080x2400
screen even at zlib level 1), so copies are scaled *before* encoding: half
size costs about a quarter. Coordinates in records stay in device pixels;
a reader scales them by ``image width / screen width`` (the trajectory
stores both ``screen_size`` and ``screenshot_scale``).
"""

from __future__ import annotations

import io

from PIL import Image

from verirank.errors import DeviceError

__all__ = ["encode_png", "scale_image", "downscale_png"]

#: zlib level 1: 3-4x faster than Pillow's default 6, files about 1.5x larger
COMPRESS_LEVEL = 1


def scale_image(img: Image.Image, scale: float) -> Image.Image:
    """``img`` scaled by ``scale`` in (0, 1]; an integer factor uses Pillow's fast box ``reduce``."""
    if not 0 < scale <= 1:
        raise ValueError(f"screenshot scale must be in (0, 1], got {scale}")
    if scale == 1:
        return img
    factor = 1 / scale
    if abs(factor - round(factor)) < 1e-6:
        return img.reduce(int(round(factor)))
    size = (max(1, round(img.width * scale)), max(1, round(img.height * scale)))
    return img.resize(size, Image.Resampling.BILINEAR)


def encode_png(img: Image.Image, compress_level: int = COMPRESS_LEVEL, scale: float = 1.0) -> bytes:
    """``img`` as PNG bytes after scaling by ``scale``."""
    img = scale_image(img, scale)
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=compress_level)
    return buf.getvalue()


def downscale_png(png: bytes, scale: float) -> bytes:
    """A phone's PNG re-encoded at ``scale`` (unchanged when ``scale`` is 1)."""
    if scale == 1:
        return png
    try:
        with Image.open(io.BytesIO(png)) as img:
            return encode_png(img.convert("RGB"), scale=scale)
    except (OSError, ValueError) as exc:  # Pillow's UnidentifiedImageError is an OSError
        raise DeviceError(f"the device's screenshot is not a readable PNG ({len(png)} bytes): {exc}") from exc
