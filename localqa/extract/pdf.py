"""PDF extraction with PyMuPDF: prose paragraphs under their headings, and one passage per table
data row carrying the table's title and header names.

Headings are recognised by typography (larger or bold, short, unpunctuated), measured against
the document's own body size, so a heading is never a passage of its own: it becomes the section
path of what follows it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymupdf

from localqa.catalog import Problem
from localqa.extract.text import squash
from localqa.types import Box, Kind, Passage

# PyMuPDF would otherwise print advice and MuPDF's own error chatter on stdout/stderr; damaged
# files are reported through Problems instead.
pymupdf.no_recommend_layout()
pymupdf.TOOLS.mupdf_display_errors(False)

MIN_TEXT_CHARS = 10  # fewer characters than this on a page means "no usable text layer"
_BOLD = 16  # PyMuPDF span flag bit


class PdfUnreadable(Exception):
    """The whole file cannot be read; the message names why and the fix."""


@dataclass
class PdfExtraction:
    passages: list[Passage] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    pages_without_text: list[int] = field(default_factory=list)
    page_count: int = 0


@dataclass
class _Block:
    text: str
    size: float
    bold: bool
    top: float
    lines: int
    box: Box
    level: int | None = None  # heading level (0 = largest), None for body text


def open_pdf(path: Path) -> pymupdf.Document:
    """Open a PDF or raise `PdfUnreadable` saying what is wrong with it."""
    size = path.stat().st_size
    if size == 0:
        raise PdfUnreadable("empty file (0 bytes); replace it with the real PDF or remove it")
    with path.open("rb") as handle:
        head = handle.read(1024)
    if b"%PDF-" not in head:
        raise PdfUnreadable("not a PDF (no %PDF- header); rename it or remove it from the folder")
    try:
        document = pymupdf.open(path, filetype="pdf")
    except Exception as error:  # PyMuPDF raises several types for damaged files
        raise PdfUnreadable(f"corrupt PDF ({error}); re-export or re-download it") from None
    if document.needs_pass:
        document.close()
        raise PdfUnreadable("encrypted PDF; save an unencrypted copy (e.g. qpdf --decrypt) and run again")
    if document.page_count == 0 or document.is_repaired:
        document.close()
        # MuPDF can "repair" a truncated or garbled file into fewer pages or paragraphs; indexing
        # that would silently replace good passages with a fraction of them.
        raise PdfUnreadable("corrupt PDF (damaged structure); re-export or re-download it")
    return document


def has_text_layer(page: pymupdf.Page) -> bool:
    return len(page.get_text().strip()) >= MIN_TEXT_CHARS


def extract_pdf(path: Path, source: str) -> PdfExtraction:
    """Prose and table-row passages of every page that has a text layer. Pages that cannot be read
    are reported by page and skipped; the rest of the file is still extracted."""
    result = PdfExtraction()
    with open_pdf(path) as document:
        result.page_count = document.page_count
        pages: list[tuple[int, list[_Block], list[_Table]]] = []
        for number, page in enumerate(document, start=1):
            try:
                if not has_text_layer(page):
                    result.pages_without_text.append(number)
                    continue
                # Tables are found from ruling lines: a page without drawings has none, and
                # find_tables is most of the extraction time.
                found = page.find_tables().tables if page.get_cdrawings() else []
                tables = [_read_table(page, table) for table in found]
                pages.append((number, _text_blocks(page, [t.bbox for t in tables]), tables))
            except Exception as error:  # a damaged page must not cost the rest of the file
                result.problems.append(Problem(source, f"page cannot be read ({error})", page=number))
        if not pages and result.problems:
            raise PdfUnreadable(f"corrupt PDF (no page could be read: {result.problems[0].message})")
        body_size = _body_size([b for _, blocks, _ in pages for b in blocks])
        heading_sizes = sorted(
            {round(b.size, 1) for _, bs, _ in pages for b in bs if _is_heading(b, body_size)}, reverse=True
        )
        ordered = [(number, _reading_order(blocks, tables)) for number, blocks, tables in pages]
        _mark_headings([item for _, items in ordered for item in items], body_size, heading_sizes)
        stack: list[tuple[int, str]] = []
        for number, items in ordered:
            stack = _page_passages(source, number, items, stack, result.passages)
    return result


def _reading_order(blocks: list[_Block], tables: list[_Table]) -> list[_Block | _Table]:
    items: list[tuple[float, _Block | _Table]] = [(b.top, b) for b in blocks]
    items += [(t.bbox[1], t) for t in tables]
    return [item for _, item in sorted(items, key=lambda item: item[0])]


def _mark_headings(items: list[_Block | _Table], body_size: float, heading_sizes: list[float]) -> None:
    """Set each block's heading level. A heading-shaped block that governs nothing (it is last, or
    the next block is a heading of the same or a higher level) is text, not a heading: otherwise a
    short bold closing line ("Reopens Monday 3 March") would be lost."""
    for block in items:
        if isinstance(block, _Block) and _is_heading(block, body_size):
            block.level = heading_sizes.index(round(block.size, 1))
    for index, block in enumerate(items):
        if not isinstance(block, _Block) or block.level is None:
            continue
        following = items[index + 1] if index + 1 < len(items) else None
        if following is None or (
            isinstance(following, _Block) and following.level is not None and following.level <= block.level
        ):
            block.level = None


def _page_passages(
    source: str, page: int, items: list[_Block | _Table], stack: list[tuple[int, str]], out: list[Passage]
) -> list[tuple[int, str]]:
    """Walk one page top to bottom, keeping the heading stack; returns the stack for the next page."""
    paragraph = table_number = 0
    previous: _Block | None = None
    for item in items:
        if isinstance(item, _Block):
            if item.level is not None:
                stack = [(lvl, name) for lvl, name in stack if lvl < item.level] + [(item.level, item.text)]
            else:
                paragraph += 1
                out.append(
                    Passage(
                        kind=Kind.PROSE,
                        source=source,
                        page=page,
                        text=item.text,
                        section=_path(stack),
                        paragraph=paragraph,
                        boxes=(item.box,),
                    )
                )
            previous = item
            continue
        table_number += 1
        title = previous.text if previous is not None and previous.lines == 1 else None
        out.extend(_table_rows(item, source, page, table_number, title, _path(stack)))
    return stack


@dataclass
class _Table:
    bbox: tuple[float, float, float, float]
    header: list[str]
    rows: list[list[str]]  # data rows only
    row_boxes: list[Box]  # one per data row


def _read_table(page: pymupdf.Page, table: Any) -> _Table:
    """Header names and data rows. PyMuPDF 1.28 sometimes misses a bold header row inside the
    table (its bold test compares bottom-up glyph coordinates with top-down row boxes) and takes
    the line above the table for an "external" header; a first row set entirely in bold is the
    header whatever it decided."""
    rows = [[squash(cell or "") for cell in row] for row in table.extract()]
    boxes = [_box(row.bbox) for row in table.rows]
    if table.header.external and not (rows and table.rows and _all_bold(page, table.rows[0].bbox)):
        names = table.header.names
    else:
        names, rows, boxes = (rows[0] if rows else []), rows[1:], boxes[1:]
    header = [squash(name or "") or f"Column {i}" for i, name in enumerate(names, 1)]
    return _Table(bbox=tuple(table.bbox), header=header, rows=rows, row_boxes=boxes)


def _all_bold(page: pymupdf.Page, box: tuple[float, float, float, float]) -> bool:
    spans = [
        span
        for block in page.get_text("dict", clip=box)["blocks"]
        for line in block.get("lines", [])
        for span in line["spans"]
        if span["text"].strip()
    ]
    return bool(spans) and all(span["flags"] & _BOLD or "bold" in span["font"].lower() for span in spans)


def _table_rows(
    table: _Table, source: str, page: int, number: int, title: str | None, section: str | None
) -> list[Passage]:
    """One passage per data row: `Title: Header: value; Header: value`. Row 1 is the first row
    under the header."""
    passages = []
    for row_number, (cells, box) in enumerate(zip(table.rows, table.row_boxes, strict=True), start=1):
        if not any(cells):
            continue
        pairs = "; ".join(
            f"{name}: {value}" for name, value in zip(table.header, cells, strict=False) if value
        )
        passages.append(
            Passage(
                kind=Kind.TABLE,
                source=source,
                page=page,
                section=section,
                text=f"{title}: {pairs}" if title else pairs,
                table=number,
                row=row_number,
                boxes=(box,),
            )
        )
    return passages


def _text_blocks(page: pymupdf.Page, table_boxes: list[tuple[float, float, float, float]]) -> list[_Block]:
    """Text blocks outside tables, in reading order, with their dominant font size and boldness."""
    blocks = []
    for block in page.get_text("dict", sort=True)["blocks"]:
        if block.get("type") != 0 or _inside_any(block["bbox"], table_boxes):
            continue
        spans = [s for line in block["lines"] for s in line["spans"] if s["text"].strip()]
        if not spans:
            continue
        text = squash(" ".join("".join(s["text"] for s in line["spans"]) for line in block["lines"]))
        chars = Counter[float]()
        for span in spans:
            chars[round(span["size"], 1)] += len(span["text"])
        blocks.append(
            _Block(
                text=text,
                size=chars.most_common(1)[0][0],
                bold=all(s["flags"] & _BOLD or "bold" in s["font"].lower() for s in spans),
                top=block["bbox"][1],
                lines=len(block["lines"]),
                box=_box(block["bbox"]),
            )
        )
    return blocks


def _box(rect: Any) -> Box:
    x0, y0, x1, y1 = (round(float(v), 2) for v in rect)
    return (x0, y0, x1, y1)


def _inside_any(
    box: tuple[float, float, float, float], others: list[tuple[float, float, float, float]]
) -> bool:
    x = (box[0] + box[2]) / 2
    y = (box[1] + box[3]) / 2
    return any(o[0] <= x <= o[2] and o[1] <= y <= o[3] for o in others)


def _body_size(blocks: list[_Block]) -> float:
    sizes = Counter[float]()
    for block in blocks:
        sizes[round(block.size, 1)] += len(block.text)
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _is_heading(block: _Block, body_size: float) -> bool:
    short = block.lines <= 2 and len(block.text) <= 80 and block.text[-1:] not in ".,;:!?"
    return short and (block.size >= body_size * 1.15 or block.bold)


def _path(stack: list[tuple[int, str]]) -> str | None:
    return " > ".join(name for _, name in stack) or None
