"""A page's text as lines with their words and positions, the running headers and footers of a
document, and the reading order of a page laid out in two columns.

Everything here works on one PyMuPDF text page per page (`dict` for fonts, `words` for word
positions, read from the same text page so that their block and line numbers agree). Measured on
the FinanceBench filings, that costs about 1.8x a bare `page.get_text()`; the layout analysis of
PyMuPDF 2.x costs several hundred times that (benchmarks/README.md, "Layout").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from itertools import groupby
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple

import pymupdf

from localqa.language.text import squash
from localqa.types import Box

_BOLD = 16  # PyMuPDF span flag bit
# Image blocks are not read: without them, `dict` and `words` number blocks alike.
_FLAGS = pymupdf.TEXTFLAGS_DICT & ~pymupdf.TEXT_PRESERVE_IMAGES


class Word(NamedTuple):
    """One word as PyMuPDF's `words` output gives it (box, text, block, line, word number), kept
    as that very tuple: a page holds hundreds of words, and building an object per word in
    Python was most of `read_page`'s own time."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    block: int
    line: int
    number: int


X0 = attrgetter("x0")  # the sort key of words, left to right
_COUNT = itemgetter(1)
_BLOCK_LINE = itemgetter(5, 6)  # a PyMuPDF word tuple's (block, line)

_RawWord = tuple[float, float, float, float, str, int, int, int]
_as_word: Callable[[_RawWord], Word] = partial(tuple.__new__, Word)  # Word(*raw), all in C


@dataclass
class Line:
    """One PyMuPDF text line: its words left to right, its text as the spans give it, its
    dominant font size and whether every span is bold."""

    block: int
    words: list[Word]
    text: str
    size: float
    bold: bool
    box: Box
    chars: dict[float, int] = field(default_factory=dict)  # characters per font size (rounded)
    upright: bool = True  # False for text set sideways (a margin stamp, a rotated label)

    @property
    def top(self) -> float:
        return self.box[1]

    @property
    def bottom(self) -> float:
        return self.box[3]


@dataclass
class PageText:
    number: int
    width: float
    height: float
    lines: list[Line]  # in PyMuPDF's sorted block order, lines within a block in order


def read_page(page: pymupdf.Page, number: int) -> PageText:
    textpage = page.get_textpage(flags=_FLAGS)
    get_text: Any = page.get_text  # PyMuPDF's get_text is untyped
    blocks: list[dict[str, Any]] = get_text("dict", textpage=textpage)["blocks"]
    words: dict[tuple[int, int], list[Word]] = {}
    # The words come line by line; grouping and wrapping them stays in C.
    for key, group in groupby(map(_as_word, get_text("words", textpage=textpage)), _BLOCK_LINE):
        words.setdefault(key, []).extend(group)
    # PyMuPDF's own `sort=True` order: by bottom, then left edge.
    order = sorted(range(len(blocks)), key=lambda i: (blocks[i]["bbox"][3], blocks[i]["bbox"][0]))
    lines = []
    for index in order:
        block = blocks[index]
        if block.get("type") != 0:
            continue
        for line_number, raw in enumerate(block["lines"]):
            spans = [s for s in raw["spans"] if s["text"].strip()]
            if not spans:
                continue
            chars: dict[float, int] = {}
            for span in spans:
                size = round(span["size"], 1)
                chars[size] = chars.get(size, 0) + len(span["text"])
            line_words = words.get((index, line_number))
            lines.append(
                Line(
                    block=index,
                    words=sorted(line_words, key=X0) if line_words else [],
                    text="".join([s["text"] for s in raw["spans"]]),
                    size=max(chars.items(), key=_COUNT)[0],  # the first of the commonest sizes
                    bold=all(s["flags"] & _BOLD or "bold" in s["font"].lower() for s in spans),
                    box=box(raw["bbox"]),
                    chars=chars,
                    upright=abs(raw["dir"][1]) < 0.01,
                )
            )
    return PageText(number, page.rect.width, page.rect.height, lines)


def box(rect: Any) -> Box:
    x0, y0, x1, y1 = rect
    return (round(float(x0), 2), round(float(y0), 2), round(float(x1), 2), round(float(y1), 2))


def union(boxes: list[Box]) -> Box:
    if len(boxes) == 1:
        return boxes[0]
    x0s, y0s, x1s, y1s = zip(*boxes, strict=True)
    return (min(x0s), min(y0s), max(x1s), max(y1s))


# --- running headers, footers and page numbers ---------------------------------------------------

_DIGITS = re.compile(r"\d+")
_EDGE_LINES = 2  # lines at the top and at the bottom of a page that may be running text
_MIN_PAGES = 4
_MAX_WORDS = 12  # running text is short; a repeated sentence in the body is not running text
_MASKED_WORDS = 6  # only a short line keeps its identity with its numbers masked ("Page 7")


def _edge_key(line: Line) -> str | None:
    text = squash(line.text).lower()
    words = len(text.split())
    if words > _MAX_WORDS:
        return None
    # Page numbers and dates change from page to page; the rest of a short running line does not.
    return _DIGITS.sub("#", text) if words <= _MASKED_WORDS else text


def _edges(page: PageText) -> list[Line]:
    rows = sorted(page.lines, key=lambda line: line.top)
    if len(rows) <= 2 * _EDGE_LINES:
        return rows
    return rows[:_EDGE_LINES] + rows[-_EDGE_LINES:]


def running_lines(pages: list[PageText]) -> set[str]:
    """The text (numbers masked in short lines) of short lines among the first and last two of
    at least four pages and of a third of the pages with text: running headers, footers and
    page numbers. A running line is the same on every page but for one number (the page's); a
    line whose numbers differ in two places ("Page 7 says code Z-7.") says something different
    on each page, and is text."""
    counts = Counter[str]()
    numbers: dict[str, list[set[str]]] = {}
    for page in pages:
        keys: dict[str, Line] = {}
        for line in _edges(page):
            key = _edge_key(line)
            if key is not None:
                keys[key] = line
        counts.update(keys.keys())
        for key, line in keys.items():
            found = _DIGITS.findall(line.text)
            places = numbers.setdefault(key, [set() for _ in found])
            for place, value in zip(places, found, strict=False):
                place.add(value)
    needed = max(_MIN_PAGES, len(pages) / 3)
    return {
        key
        for key, count in counts.items()
        if count >= needed and sum(len(values) > 1 for values in numbers[key]) <= 1
    }


def drop_running(page: PageText, running: set[str]) -> None:
    if not running:
        return
    edges = {id(line) for line in _edges(page) if _edge_key(line) in running}
    page.lines = [line for line in page.lines if id(line) not in edges]


# --- two-column pages ------------------------------------------------------------------------------


def column_order(boxes: list[Box], width: float) -> list[int]:
    """Indexes of `boxes` (text blocks, already top to bottom) in reading order. On a page laid
    out in two columns (blocks on both sides of a gutter near the middle, overlapping in height),
    the left column is read before the right one; a block that spans the gutter (a title, a
    full-width paragraph) separates what comes before it from what comes after."""
    order = list(range(len(boxes)))
    gutter = _gutter(boxes, width)
    if gutter is None:
        return order
    result: list[int] = []
    left: list[int] = []
    right: list[int] = []
    for index in order:
        x0, _, x1, _ = boxes[index]
        if x1 <= gutter:
            left.append(index)
        elif x0 >= gutter:
            right.append(index)
        else:
            result += left + right + [index]
            left, right = [], []
    return result + left + right


def _gutter(boxes: list[Box], width: float) -> float | None:
    """An x in the middle third of the page with at least two blocks wholly on each side, whose
    heights overlap, and no block crossing it within that overlap: the space between two
    columns. Blocks that cross it above or below the columns (a title, a full-width paragraph)
    are allowed."""
    if len(boxes) < 4:
        return None
    for step in range(0, 41):
        for x in (width / 2 + step * width / 240, width / 2 - step * width / 240):
            left = [b for b in boxes if b[2] <= x]
            right = [b for b in boxes if b[0] >= x]
            if len(left) < 2 or len(right) < 2:
                continue
            top = max(min(b[1] for b in left), min(b[1] for b in right))
            bottom = min(max(b[3] for b in left), max(b[3] for b in right))
            crossing = [b for b in boxes if b[0] < x < b[2] and b[1] < bottom and b[3] > top]
            if bottom > top and not crossing:
                return x
    return None
