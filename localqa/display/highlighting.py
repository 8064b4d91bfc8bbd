"""Where a quote is on a drawn page, and the page drawn with it highlighted: what every source is
shown with, a PDF page (`localqa.display.show`) as much as the drawn text of a source without pages
(`localqa.display.show_text`). Both build on this module; it knows neither.

A quote is found among the characters drawn inside a region (its passage's boxes, or its block of
drawn text), never guessed; `QuoteNotShownError` says why one cannot be placed.
"""

from __future__ import annotations

import io
import math
import re
import threading
import unicodedata
from collections.abc import Iterator, Sequence
from typing import Any

import pymupdf

from localqa.errors import LocalQAError
from localqa.extract.layout import box
from localqa.language.text import squash
from localqa.library import VisiblePage
from localqa.types import Box, Location, Passage

# Multiplied into the page: white paper becomes this yellow, ink stays dark and readable.
HIGHLIGHT = (255, 212, 0)
DEFAULT_DPI = 110
# The most pixels a page image has: a larger page is drawn at a lower resolution. A letter or A4
# page at 600 dpi fits; a page 14,400 points square (PDF's largest) at 110 dpi would be 484 million
# pixels, which MuPDF refuses, and 10,000 points took 5.7 s and 2.4 GB.
MAX_PIXELS = 36_000_000
# One page drawn at a time: each holds up to a few hundred MB while it is composed.
_DRAWING = threading.Lock()
TOLERANCE = 1.0  # points a glyph's centre may sit outside its passage's box (rounding)


class QuoteNotShownError(LocalQAError):
    """The quote cannot be placed on the page; nothing is highlighted."""


def find_passage(page: VisiblePage, quote: str, cited: Location | None = None) -> Passage:
    """The passage of `page` whose text contains `quote` (whitespace normalised): the cited one
    when `cited` is given, else the first in reading order."""
    wanted = squash(quote)
    if not wanted:
        raise QuoteNotShownError("the quote is blank")
    holders = [p for p in page.passages if wanted in squash(p.text)]
    if cited is not None:
        holders = [p for p in holders if _is_at(p, cited)] or holders
    if not holders:
        where = f"page {page.page} of {page.source!r}" if page.page is not None else repr(page.source)
        raise QuoteNotShownError(f"the quote is not in any passage on {where}; nothing to highlight")
    return holders[0]


def text_boxes(page: pymupdf.Page, region: Sequence[Box], quote: str) -> tuple[Box, ...]:
    """The rectangles (one per line) of the first occurrence of `quote` among the characters
    drawn inside `region`. Whitespace is ignored, and a hyphen at a line end may be in the
    quote or not, so a wrapped or hyphenated sentence is found either way."""
    chars = list(_chars_inside(page, region))
    key = "".join(c for c, _, _ in chars)
    pattern = _quote_pattern(quote)
    match = re.search(pattern, key) if pattern else None
    if match is None:
        return ()
    lines: dict[int, pymupdf.Rect] = {}
    for _, rect, line in chars[match.start() : match.end()]:
        lines[line] = lines[line] | rect if line in lines else pymupdf.Rect(rect)
    return tuple(box(rect) for rect in lines.values())


_LINE_HYPHEN = "\0"  # stands for a hyphen that ends a line in the page's character stream
_HYPHENS = "-\u00ad\u2010"


def _chars_inside(page: pymupdf.Page, region: Sequence[Box]) -> Iterator[tuple[str, pymupdf.Rect, int]]:
    """(character, its rectangle, line number) for the non-space characters whose centre lies in
    `region`, in the page's reading order; a line-end hyphen becomes `_LINE_HYPHEN`."""
    boxes = grown(region)
    line_number = 0
    for block in page.get_text("rawdict", sort=True)["blocks"]:
        for line in block.get("lines", []):
            line_number += 1
            # NFKC on both sides: a ligature glyph (U+FB01) matches the letters "fi" of the text.
            kept = [
                (letter, pymupdf.Rect(char["bbox"]))
                for span in line["spans"]
                for char in span["chars"]
                if any(centre(char["bbox"]) in box for box in boxes)
                for letter in unicodedata.normalize("NFKC", char["c"])
                if not letter.isspace()
            ]
            for index, (text, rect) in enumerate(kept):
                last = index == len(kept) - 1
                yield (_LINE_HYPHEN if last and text in _HYPHENS else text), rect, line_number


def _quote_pattern(quote: str) -> str:
    """A regular expression over the page's character stream for `quote`: any character may be
    followed by a line-end hyphen (the quote was dehyphenated), and a hyphen in the quote also
    matches one (it was kept)."""
    parts = []
    for char in re.sub(r"\s+", "", unicodedata.normalize("NFKC", quote)):
        parts.append(f"[{re.escape(_HYPHENS)}{_LINE_HYPHEN}]" if char in _HYPHENS else re.escape(char))
    return f"{_LINE_HYPHEN}?".join(parts)


def draw(page: pymupdf.Page, boxes: Sequence[Box], dpi: int = DEFAULT_DPI) -> bytes:
    """`page` as PNG, with `boxes` (page points, unrotated) highlighted, at `dpi` or at less when
    that would be over MAX_PIXELS; one page is drawn at a time (a large one takes memory)."""
    from PIL import Image, ImageChops, ImageDraw

    zoom = pymupdf.Matrix(*[_scale(page.rect, dpi)] * 2)
    with _DRAWING:
        pixmap = page.get_pixmap(matrix=zoom, alpha=False, colorspace=pymupdf.csRGB)
    # Boxes are on the unrotated page; the image is the page as displayed.
    to_pixels = page.rotation_matrix * zoom
    image = Image.frombytes("RGB", (pixmap.width, pixmap.height), pixmap.samples)
    if boxes:
        overlay = Image.new("RGB", image.size, "white")
        canvas = ImageDraw.Draw(overlay)
        for box in boxes:
            rect = pymupdf.Rect(box) * to_pixels
            canvas.rectangle(
                (round(rect.x0), round(rect.y0), round(rect.x1) - 1, round(rect.y1) - 1), HIGHLIGHT
            )
        image = ImageChops.multiply(image, overlay)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _scale(page: pymupdf.Rect, dpi: int) -> float:
    """Pixels per point: `dpi`'s, or fewer, so that the page is at most MAX_PIXELS."""
    scale = dpi / 72
    drawn = page.width * page.height * scale**2
    return scale if drawn <= MAX_PIXELS else scale * math.sqrt(MAX_PIXELS / drawn) * 0.999


def _is_at(passage: Passage, location: Location) -> bool:
    # The section too: Word, HTML and slide paragraphs are numbered within their section.
    return (passage.kind, passage.section, passage.paragraph, passage.table, passage.row) == (
        location.kind,
        location.section,
        location.paragraph,
        location.table,
        location.row,
    )


def grown(boxes: Sequence[Box]) -> list[pymupdf.Rect]:
    return [
        pymupdf.Rect(x0 - TOLERANCE, y0 - TOLERANCE, x1 + TOLERANCE, y1 + TOLERANCE)
        for x0, y0, x1, y1 in boxes
    ]


def centre(bbox: Any) -> pymupdf.Point:
    x0, y0, x1, y1 = bbox
    return pymupdf.Point((x0 + x1) / 2, (y0 + y1) / 2)
