"""PDF extraction with PyMuPDF: prose paragraphs under their headings, and one passage per table
data row carrying the table's title, the row's label and the column headers.

Headings are recognised by typography (larger or bold, short, unpunctuated), measured against
the document's own body size, so a heading is never a passage of its own: it becomes the section
path of what follows it. Running headers, footers and page numbers are left out
(`layout.running_lines`); a two-column page is read column by column (`layout.column_order`).

Tables come in two kinds. Ruled tables (cells bounded by drawn vertical rules) are PyMuPDF's
`find_tables`, called only on pages whose drawings hold vertical rules, since it costs about 30x
a bare `get_text()` even on a page without a table; a "table" whose first column is list markers
is a list and stays prose. Tables without ruling lines (financial statements) are found from the
words' positions (`unruled`), on every page.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

import pymupdf

from localqa.extract.blocks import governing
from localqa.extract.cover import read_cover
from localqa.extract.layout import (
    Line,
    PageText,
    box,
    column_order,
    drop_running,
    read_page,
    running_lines,
    union,
)
from localqa.extract.unruled import UnruledTable, row_text
from localqa.extract.unruled import find_tables as find_unruled
from localqa.indexing.catalog import Problem
from localqa.language.text import squash
from localqa.types import Box, Kind, Passage, Period

# PyMuPDF would otherwise print advice and MuPDF's own error chatter on stdout/stderr; damaged
# files are reported through Problems instead.
pymupdf.no_recommend_layout()
pymupdf.TOOLS.mupdf_display_errors(False)

MIN_TEXT_CHARS = 10  # fewer visible characters than this on a page means "no usable text layer"
_BOLD = 16  # PyMuPDF span flag bit
_COUNT = itemgetter(1)
_LIST_MARKER = re.compile(
    r"^(?:[•●▪■◦‣∙·○◆►✓\-\u2013\u2014*]|\(?(?:\d{1,2}|[a-z]|[ivx]{1,4})[.)])$", re.IGNORECASE
)
_ACCESSION = re.compile(r"^\d{10}-\d{2}-\d{6}$")  # an SEC filing number, not a title
_PATH = re.compile(r"^(?:/|[A-Za-z]:\\)|\\")  # an absolute path, or any backslash
_FILE_NAME = re.compile(r"\.(?:pdf|docx?|rtf|odt|indd|pptx?|xlsx?|html?|txt|tex|dvi|ps)$", re.IGNORECASE)


class PdfUnreadable(Exception):
    """The whole file cannot be read; the message names why and the fix."""


@dataclass
class PdfExtraction:
    passages: list[Passage] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    pages_without_text: list[int] = field(default_factory=list)
    page_count: int = 0
    title: str | None = None  # the metadata title if it is a real one, else the first page's heading
    organisation: str | None = None  # the filer a cover names (`cover.registrant`)
    period: Period | None = None  # the period a cover says the document covers


@dataclass
class _Block:
    text: str
    size: float
    bold: bool
    top: float
    lines: int
    box: Box
    level: int | None = None  # heading level (0 = largest), None for body text
    upright: bool = True  # text set sideways (an arXiv stamp) is never a heading or a title


def open_pdf(path: Path) -> pymupdf.Document:
    """Open a PDF, or another document PyMuPDF reads itself (EPUB, XPS, MOBI, FB2, CBZ, and images,
    by their extension: `localqa.formats`), or raise `PdfUnreadable` saying what is wrong with it."""
    if path.suffix.lower() != ".pdf":
        return _open_other(path)
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


def _open_other(path: Path) -> pymupdf.Document:
    """A document PyMuPDF opens by its extension, once its content is checked to be what the
    extension says (and, for a zip archive, safe to unpack: `checks.check_file`)."""
    from localqa.extract.checks import BadFile, check_file

    try:
        fmt = check_file(path, path.name)
    except BadFile as error:
        raise PdfUnreadable(str(error)) from None
    try:
        document = pymupdf.open(path, filetype=path.suffix.lower().lstrip("."))
    except Exception as error:  # PyMuPDF raises several types for damaged files
        raise PdfUnreadable(f"is a damaged {fmt.noun} ({error}); re-export or re-download it") from None
    if document.needs_pass:
        document.close()
        raise PdfUnreadable(f"is an encrypted {fmt.noun}; save an unencrypted copy and run again")
    if document.page_count == 0:
        document.close()
        raise PdfUnreadable(f"is {fmt.label} without pages; check the file")
    if fmt.family == "image":
        try:  # an image is decoded as its page loads: a truncated one fails here, not mid-extraction
            for number in range(document.page_count):
                document.load_page(number)
        except Exception as error:
            document.close()
            raise PdfUnreadable(f"is a damaged {fmt.noun} ({error}); re-export it") from None
    return document


def has_text_layer(page: pymupdf.Page) -> bool:
    return _visible_chars(page.get_text()) >= MIN_TEXT_CHARS


def _visible_chars(text: str) -> int:
    # The one measure of "has text" for `localqa ocr` and extraction alike. `str.split()` cuts at
    # exactly the characters `str.isspace()` names, without a Python step per character.
    return sum(map(len, text.split()))


def extract_pdf(path: Path, source: str) -> PdfExtraction:
    """Prose and table-row passages of every page that has a text layer. Pages that cannot be read
    are reported by page and skipped; the rest of the file is still extracted."""
    result = PdfExtraction()
    with open_pdf(path) as document:
        result.page_count = document.page_count
        read: list[tuple[PageText, list[_Table]]] = []
        for number, page in enumerate(document, start=1):
            try:
                text = read_page(page, number)
                if sum(_visible_chars(line.text) for line in text.lines) < MIN_TEXT_CHARS:
                    result.pages_without_text.append(number)
                    continue
                read.append((text, [_read_table(page, table, rows) for table, rows in _ruled_tables(page)]))
            except Exception as error:  # a damaged page must not cost the rest of the file
                result.problems.append(Problem(source, f"page cannot be read ({error})", page=number))
        if not read and result.problems:
            raise PdfUnreadable(f"corrupt PDF (no page could be read: {result.problems[0].message})")
        running = running_lines([text for text, _ in read])
        pages = []
        for text, tables in read:
            drop_running(text, running)
            ruled = [t.bbox for t in tables]
            lines = [line for line in text.lines if not _inside_any(line.box, ruled)] if ruled else text.lines
            unruled = find_unruled(lines)
            taken = {id(line) for table in unruled for line in table.lines}
            blocks = _blocks([line for line in lines if id(line) not in taken])
            pages.append((text, blocks, tables, unruled))
        body_size = _body_size([b for _, blocks, _, _ in pages for b in blocks])
        heading_sizes = sorted(
            {round(b.size, 1) for _, bs, _, _ in pages for b in bs if _is_heading(b, body_size)}, reverse=True
        )
        ordered = [
            (text.number, _reading_order(blocks, tables, unruled, text.width))
            for text, blocks, tables, unruled in pages
        ]
        _mark_headings([item for _, items in ordered for item in items], body_size, heading_sizes)
        stack: list[tuple[int, str]] = []
        for number, items in ordered:
            stack = _page_passages(source, number, items, stack, result.passages)
        first_blocks = pages[0][1] if pages else []
        result.title = document_title(document.metadata.get("title"), first_blocks, body_size)
        if read and read[0][0].number == 1:
            result.organisation, result.period = read_cover(document[0].get_text())
    return result


def _reading_order(
    blocks: list[_Block], tables: list[_Table], unruled: list[UnruledTable], width: float
) -> list[_Item]:
    """Top to bottom; on a two-column page, the left column before the right one."""
    items: list[_Item] = [*blocks, *tables, *unruled]
    items.sort(key=_top)
    return [items[i] for i in column_order([_item_box(item) for item in items], width)]


def _top(item: _Item) -> float:
    return _item_box(item)[1]


def _item_box(item: _Item) -> Box:
    if isinstance(item, _Block):
        return item.box
    if isinstance(item, _Table):
        return box(item.bbox)
    return union([line.box for line in item.lines])


def _mark_headings(items: list[_Item], body_size: float, heading_sizes: list[float]) -> None:
    """Set each block's heading level. A heading-shaped block that governs nothing (it is last, or
    the next block is a heading of the same or a higher level) is text, not a heading: otherwise a
    short bold closing line ("Reopens Monday 3 March") would be lost."""
    for block in items:
        if isinstance(block, _Block) and _is_heading(block, body_size):
            block.level = heading_sizes.index(round(block.size, 1))
    levels = governing([item.level if isinstance(item, _Block) else None for item in items])
    for item, level in zip(items, levels, strict=True):
        if isinstance(item, _Block):
            item.level = level


def _page_passages(
    source: str, page: int, items: list[_Item], stack: list[tuple[int, str]], out: list[Passage]
) -> list[tuple[int, str]]:
    """Walk one page in reading order, keeping the heading stack; returns the stack for the next
    page. A table without ruling lines is the section of its own rows when its caption names a
    statement; the heading stack is left as it was."""
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
        if isinstance(item, _Table):
            title = previous.text if previous is not None and previous.lines == 1 else None
            out.extend(_table_rows(item, source, page, table_number, title, _path(stack)))
        else:
            out.extend(_unruled_rows(item, source, page, table_number, item.section or _path(stack)))
    return stack


def _unruled_rows(
    table: UnruledTable, source: str, page: int, number: int, section: str | None
) -> list[Passage]:
    """One passage per data row: `Caption: Row label: Header: value; Header: value`; a row under
    a sub-heading ("Current assets") has it at the end of its section."""
    return [
        Passage(
            kind=Kind.TABLE,
            source=source,
            page=page,
            section=" > ".join(p for p in (section, row.subheading) if p) or None,
            text=row_text(table, row),
            table=number,
            row=row_number,
            boxes=(row.box,),
        )
        for row_number, row in enumerate(table.rows, start=1)
    ]


@dataclass
class _Table:
    """A ruled table (PyMuPDF `find_tables`)."""

    bbox: tuple[float, float, float, float]
    header: list[str]
    rows: list[list[str]]  # data rows only
    row_boxes: list[Box]  # one per data row


_Item = _Block | _Table | UnruledTable


def _ruled_tables(page: pymupdf.Page) -> list[tuple[Any, list[list[str | None]]]]:
    """PyMuPDF's tables on a page whose drawings hold vertical rules, keeping those with at least
    two columns, a vertical rule inside them (a statement with horizontal rules only, or cell
    shading, is left to the whitespace detector) and no list markers for a first column; each
    with its cells' text (`Table.extract()`, which costs a pass over the page's characters per
    row: read once, for the list test and the rows alike)."""
    vertical = _vertical_rules(page)
    if len({round(x) for x, _, _ in vertical}) < 3:  # fewer cannot bound two columns
        return []
    # Only where the rules are: find_tables' cost grows with every character and path it is
    # given, and a chart elsewhere on the page can cost it seconds.
    clip = pymupdf.Rect(
        page.rect.x0,
        min(top for _, top, _ in vertical) - 2,
        page.rect.x1,
        max(bottom for _, _, bottom in vertical) + 2,
    )
    kept = []
    for table in page.find_tables(clip=clip).tables:
        x0, y0, x1, y1 = table.bbox
        inside = any(x0 + 2 < x < x1 - 2 and top < y1 and bottom > y0 for x, top, bottom in vertical)
        if table.col_count >= 2 and table.row_count >= 2 and inside:
            rows = table.extract()
            if not _is_list(table, rows):
                kept.append((table, rows))
    return kept


def _vertical_rules(page: pymupdf.Page) -> list[tuple[float, float, float]]:
    """(x, top, bottom) of every drawn vertical line: stroked lines and rectangle sides, and
    filled rectangles thin enough to be a line. Wide filled rectangles are shading, not rules."""
    rules = []
    for drawing in page.get_cdrawings():
        stroked = drawing.get("color") is not None and "s" in drawing.get("type", "")
        for item in drawing["items"]:
            if item[0] == "l" and stroked:
                (ax, ay), (bx, by) = item[1], item[2]
                if abs(ax - bx) < 1 and abs(ay - by) > 3:
                    rules.append((ax, min(ay, by), max(ay, by)))
            elif item[0] == "re":
                x0, y0, x1, y1 = item[1]
                if stroked and y1 - y0 > 3:
                    rules += [(x0, y0, y1), (x1, y0, y1)]
                elif x1 - x0 <= 2 and y1 - y0 > 3:
                    rules.append(((x0 + x1) / 2, y0, y1))
    return rules


def _is_list(table: Any, rows: list[list[str | None]]) -> bool:
    """Two columns, the first of them list markers only: a list drawn with rules. A table with
    more columns whose rows are numbered is still a table."""
    if table.col_count != 2:
        return False
    first = [squash(row[0] or "") for row in rows if row]
    markers = [cell for cell in first if cell]
    return bool(markers) and all(_LIST_MARKER.match(cell) for cell in markers)


def _read_table(page: pymupdf.Page, table: Any, cells: list[list[str | None]]) -> _Table:
    """Header names and data rows. PyMuPDF 1.28 sometimes misses a bold header row inside the
    table (its bold test compares bottom-up glyph coordinates with top-down row boxes) and takes
    the line above the table for an "external" header; a first row set entirely in bold is the
    header whatever it decided."""
    rows = [[squash(cell or "") for cell in row] for row in cells]
    boxes = [box(row.bbox) for row in table.rows]
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
    for row_number, (cells, row_box) in enumerate(zip(table.rows, table.row_boxes, strict=True), start=1):
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
                boxes=(row_box,),
            )
        )
    return passages


def _blocks(lines: list[Line]) -> list[_Block]:
    """Prose blocks: PyMuPDF's text blocks, less the lines that tables and running headers took,
    with their dominant font size and boldness."""
    grouped: dict[int, list[Line]] = {}
    for line in lines:
        grouped.setdefault(line.block, []).append(line)
    blocks = []
    for members in grouped.values():
        chars: Counter[float] = Counter()
        for line in members:
            chars.update(line.chars)
        box = union([line.box for line in members])
        blocks.append(
            _Block(
                text=squash(" ".join([line.text for line in members])),
                size=max(chars.items(), key=_COUNT)[0],  # as Counter.most_common(1), in C
                bold=all(line.bold for line in members),
                top=box[1],
                lines=len(members),
                box=box,
                upright=all(line.upright for line in members),
            )
        )
    return blocks


def document_title(metadata: str | None, first_page: list[_Block], body_size: float) -> str | None:
    """The metadata title when it reads like one (not blank, not an SEC accession number, not a
    file name), else the first page's most prominent heading: its largest short block, if larger
    than the body text, or its first bold one."""
    title = squash(metadata or "")
    if (
        len(title) >= 3
        and any(c.isalpha() for c in title)
        and not _ACCESSION.match(title)
        and not _FILE_NAME.search(title)
        and not _PATH.search(title)
        and not ("/" in title and " " not in title)
    ):
        return title
    short = [b for b in first_page if b.upright and b.lines <= 3 and 3 <= len(b.text) <= 150]
    larger = [b for b in short if b.size >= body_size * 1.15]
    if larger:
        return max(larger, key=lambda b: (b.size, -b.top)).text
    bold = [b for b in short if b.bold]
    return min(bold, key=lambda b: b.top).text if bold else None


def _inside_any(box: Box, others: list[tuple[float, float, float, float]]) -> bool:
    x = (box[0] + box[2]) / 2
    y = (box[1] + box[3]) / 2
    return any(o[0] <= x <= o[2] and o[1] <= y <= o[3] for o in others)


def _body_size(blocks: list[_Block]) -> float:
    sizes = Counter[float]()
    for block in blocks:
        sizes[round(block.size, 1)] += len(block.text)
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _is_heading(block: _Block, body_size: float) -> bool:
    if not block.upright:
        return False
    short = block.lines <= 2 and len(block.text) <= 80 and block.text[-1:] not in ".,;:!?"
    return short and (block.size >= body_size * 1.15 or block.bold)


def _path(stack: list[tuple[int, str]]) -> str | None:
    return " > ".join(name for _, name in stack) or None
