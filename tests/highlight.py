"""Reading `localqa.display.show`'s highlight back from a PNG, by pixels.

The highlight multiplies the page by yellow: paper becomes yellow, ink stays dark. The sample
library is black on white, so a pixel whose red and green stand well above its blue is highlight.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from PIL import Image, ImageChops, ImageDraw

Rect = tuple[float, float, float, float]


def mask(png: bytes) -> Image.Image:
    """255 where the pixel carries the highlight colour, 0 elsewhere."""
    red, green, blue = Image.open(io.BytesIO(png)).convert("RGB").split()
    warm = ImageChops.darker(ImageChops.subtract(red, blue), ImageChops.subtract(green, blue))
    return warm.point(lambda value: 255 if value > 100 else 0)


def to_pixels(rect: Sequence[float], dpi: int) -> Rect:
    zoom = dpi / 72
    x0, y0, x1, y1 = rect
    return (x0 * zoom, y0 * zoom, x1 * zoom, y1 * zoom)


def share_inside(highlight: Image.Image, rect: Rect) -> float:
    """The share of the pixels of `rect` that are highlighted."""
    box = tuple(round(v) for v in rect)
    region = highlight.crop(box)
    width, height = region.size
    return region.histogram()[255] / max(1, width * height)


def stray_pixels(highlight: Image.Image, rects: Sequence[Rect], margin: float = 2) -> int:
    """Highlighted pixels outside every one of `rects` (grown by `margin` pixels)."""
    rest = highlight.copy()
    draw = ImageDraw.Draw(rest)
    for x0, y0, x1, y1 in rects:
        draw.rectangle((x0 - margin, y0 - margin, x1 + margin, y1 + margin), fill=0)
    return rest.histogram()[255]


def highlighted(png: bytes) -> int:
    return mask(png).histogram()[255]
