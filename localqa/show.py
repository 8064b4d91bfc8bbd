"""Showing a quote in place: its page rendered with the quote's own rectangles highlighted.

Where a quote is drawn is found, never guessed, inside the boxes extraction recorded for its
passage:

- prose: the quote's own characters on the page's text layer (a sentence that wraps, or a word
  hyphenated at a line end, included), one rectangle per line;
- a table row: the row (its text is the row's cells with their header names, not a run of
  characters on the page);
- OCR (a scanned page): tesseract's words on the page image, aligned with the quote's words;
  only words that match (or were corrected in place) are highlighted.

If the quote cannot be placed this way, nothing is highlighted and `QuoteNotShownError` says
why. A source without page images is drawn as its own text (`localqa.show_text`); `mark` splits
its paragraph around the quote for the terminal.
"""

from __future__ import annotations

import functools
import io
import math
import re
import threading
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pymupdf

from localqa.errors import LocalQAError
from localqa.extract import ocr
from localqa.extract.layout import box
from localqa.extract.pdf import PdfUnreadable, open_pdf
from localqa.extract.tesseract import TesseractMissing
from localqa.files import sha256_file
from localqa.formats import format_of
from localqa.library import VisiblePage
from localqa.text import squash
from localqa.types import Box, Kind, Location, Passage

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


@dataclass(frozen=True)
class Placed:
    """A quote found on a page: the passage it belongs to and the rectangles it covers."""

    passage: Passage
    boxes: tuple[Box, ...]


def source_file(folder: Path, page: VisiblePage) -> Path:
    """The indexed file for `page`, checked to be the one that was indexed. The name comes from
    the index (a plain file name in `folder`); a path-like name is refused all the same."""
    name = page.source
    if Path(name).name != name or name in {"", ".", ".."} or "\\" in name or "\0" in name:
        raise QuoteNotShownError(f"{name!r} is not a file name of the indexed folder")
    path = folder / name
    if not path.is_file():
        # Named by its source only: this message reaches web callers, who need not know the
        # server's folders.
        raise QuoteNotShownError(f"{name}: not found; pass --pdfs with the folder that was indexed")
    if page.sha256 is not None and _sha256(*_stamp(path)) != page.sha256:
        raise QuoteNotShownError(f"{name} has changed since it was indexed; run 'localqa index'")
    return path


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


def place(pdf: Path, page: VisiblePage, quote: str, cited: Location | None = None) -> Placed:
    """Find `quote` on its page: the rectangles of its own text, the row, or its OCR words."""
    passage = find_passage(page, quote, cited)
    if not passage.boxes:
        raise QuoteNotShownError(
            f"{page.source}, page {page.page}: the index records no position for this passage; "
            "run 'localqa index --rebuild'"
        )
    if passage.kind is Kind.TABLE:
        return Placed(passage, passage.boxes)
    number = _page_number(page)
    if passage.kind is Kind.OCR:
        return Placed(passage, _ocr_boxes(pdf, number, passage, quote))
    with open_pdf(pdf) as document:
        boxes = text_boxes(document[number - 1], passage.boxes, quote)
    if not boxes:
        raise QuoteNotShownError(
            f"{page.source}, page {number}: the quote is in the passage's text but not drawn inside "
            "its boxes; nothing is highlighted"
        )
    return Placed(passage, boxes)


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
    boxes = _grown(region)
    line_number = 0
    for block in page.get_text("rawdict", sort=True)["blocks"]:
        for line in block.get("lines", []):
            line_number += 1
            # NFKC on both sides: a ligature glyph (U+FB01) matches the letters "fi" of the text.
            kept = [
                (letter, pymupdf.Rect(char["bbox"]))
                for span in line["spans"]
                for char in span["chars"]
                if any(_centre(char["bbox"]) in box for box in boxes)
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


def _ocr_boxes(pdf: Path, number: int, passage: Passage, quote: str) -> tuple[Box, ...]:
    """The page image's words that stand for the quote's words, one rectangle per line."""
    try:
        words = ocr.page_words(pdf, number)
    except (ocr.OcrUnavailable, TesseractMissing) as error:
        raise QuoteNotShownError(f"cannot find the quote's words on the scanned page: {error}") from None
    region = _grown(passage.boxes)
    inside = [w for w in words if any(_centre(w.box) in box for box in region)]
    located = ocr.align(passage.text.split(), inside)
    chosen = ocr.words_in(located, _word_span(passage.text, quote), whole=True)
    if not chosen:
        raise QuoteNotShownError(
            f"{passage.source}, page {number}: none of the quote's words is found on the scanned page "
            "(was the sidecar rewritten?); nothing is highlighted"
        )
    return ocr.line_boxes([inside[j] for j in chosen])


def _word_span(text: str, quote: str) -> range:
    """Which words of `text` the quote covers; it must begin and end on word boundaries."""
    words, wanted = squash(text), squash(quote)
    start = words.find(wanted)
    end = start + len(wanted)
    if start < 0 or (start > 0 and words[start - 1] != " ") or (end < len(words) and words[end] != " "):
        raise QuoteNotShownError("on a scanned page only whole words can be highlighted")
    first = words[:start].count(" ")
    return range(first, first + wanted.count(" ") + 1)


def render(pdf: Path, number: int, boxes: Sequence[Box], dpi: int = DEFAULT_DPI) -> bytes:
    """Page `number` (1-based) of `pdf` as PNG, with `boxes` (page points) highlighted: at `dpi`,
    or at less when that would be over MAX_PIXELS."""
    try:
        with open_pdf(pdf) as document:
            if not 1 <= number <= document.page_count:
                raise QuoteNotShownError(f"{pdf.name} has no page {number}")
            return draw(document[number - 1], boxes, dpi)
    except PdfUnreadable as error:
        raise QuoteNotShownError(f"{pdf.name}: {error}") from None
    except pymupdf.mupdf.FzErrorBase as error:  # whatever else MuPDF refuses to draw
        raise QuoteNotShownError(
            f"{pdf.name}, page {number}: MuPDF cannot draw it ({error}); nothing is shown"
        ) from None


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


def page_image(
    folder: Path,
    page: VisiblePage,
    quote: str | None,
    *,
    cited: Location | None = None,
    dpi: int = DEFAULT_DPI,
) -> bytes:
    """The PNG of `page` with `quote` highlighted (no quote: the page as it is). A source without
    page images (Word, spreadsheets, slides, HTML, Markdown, text) is drawn as its own text, with
    its passages around the quote (`localqa.show_text`)."""
    fmt = format_of(page.source)
    if fmt is None or not fmt.rendered:
        from localqa.show_text import text_image

        source_file(folder, page)  # the file must still be the one indexed, as for a PDF
        return text_image(page, quote, cited, dpi)
    if page.page is None:
        raise QuoteNotShownError(f"{page.source!r} is a text source and has no page to render")
    pdf = source_file(folder, page)
    boxes = place(pdf, page, quote, cited).boxes if quote is not None else ()
    return render(pdf, page.page, boxes, dpi)


def mark(page: VisiblePage, quote: str, cited: Location | None = None) -> tuple[Passage, str, str, str]:
    """For a source without pages: the passage holding `quote` and its text split into
    (before, quote, after), whitespace normalised."""
    passage = find_passage(page, quote, cited)
    text, wanted = squash(passage.text), squash(quote)
    start = text.find(wanted)
    return passage, text[:start], wanted, text[start + len(wanted) :]


def _is_at(passage: Passage, location: Location) -> bool:
    # The section too: Word, HTML and slide paragraphs are numbered within their section.
    return (passage.kind, passage.section, passage.paragraph, passage.table, passage.row) == (
        location.kind,
        location.section,
        location.paragraph,
        location.table,
        location.row,
    )


def _page_number(page: VisiblePage) -> int:
    if page.page is None:
        raise QuoteNotShownError(f"{page.source!r} is a text source and has no page to render")
    return page.page


def _grown(boxes: Sequence[Box]) -> list[pymupdf.Rect]:
    return [
        pymupdf.Rect(x0 - TOLERANCE, y0 - TOLERANCE, x1 + TOLERANCE, y1 + TOLERANCE)
        for x0, y0, x1, y1 in boxes
    ]


def _centre(bbox: Any) -> pymupdf.Point:
    x0, y0, x1, y1 = bbox
    return pymupdf.Point((x0 + x1) / 2, (y0 + y1) / 2)


def _stamp(path: Path) -> tuple[str, int, int]:
    stat = path.stat()
    return str(path.resolve()), stat.st_mtime_ns, stat.st_size


# Keyed by path, modification time and size: a long-running server hashes a file once.
@functools.lru_cache(maxsize=64)
def _sha256(path: str, _mtime: int, _size: int) -> str:
    return sha256_file(path)  # cached by (path, mtime, size): a changed file is hashed again
