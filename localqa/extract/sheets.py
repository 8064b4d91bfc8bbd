"""Spreadsheets: Excel workbooks (.xlsx, read with python-calamine) and CSV files (the standard
library's reader). Every sheet is a table; every data row is a `table` passage with its header
cells (`Item ID: EQ-314; Loan limit: 45 minutes`), cited by sheet and row.

- The row number is the one the spreadsheet application shows (the sheet's own row, 1-based; for
  a CSV file, its record number), so a citation can be looked up as it is written. The passage's
  `section` is the sheet's name (none for a CSV file, which has one sheet) and its `table` the
  sheet's position in the workbook.
- The header row is found, not assumed to be the first: among the first rows, the first that
  fills at least half as many columns as the widest of them, with only distinct text cells (no
  numbers, no dates). Rows above it (a title such as "Equipment register 2026") are the table's
  title, as a PDF table's title line; without such a row, columns are named by their letters.
- Formulas are read as the values the file has cached for them (what the application last
  showed); a formula never calculated has none and its cell is empty.
- A sheet is read only when its cells are within `MAX_SHEET_CELLS`: the cells its XML stores and
  the range its cells span are counted in one streamed pass over the sheet first, since calamine
  holds a sheet's whole range in memory; a workbook with a sheet over the bound is named, with the
  sheet, and not indexed (its dimension, which the file declares, is not trusted either).
- One rule for what is hidden: hidden and very hidden sheets, hidden rows and hidden columns
  (the hidden flag, or a height or width Excel draws as no pixel), and cells whose style shows
  them as nothing (a `;;;` number format, white on white: `localqa.extract.cell_styles`) are not
  indexed, and the index says how many were left out. Hiding is no access control, but what an
  author hid is not what they meant a reader to see; an access label in the catalog is the way to
  narrow who sees a file.
"""

from __future__ import annotations

import csv
import datetime as dt
import functools
import io
import math
import posixpath
import re
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lxml import etree

from localqa.extract.cell_styles import NUMBER, OTHER, TEXT, WHITE_ON_WHITE, Blank, blank_styles
from localqa.extract.checks import BadFile
from localqa.extract.structured import row_text
from localqa.types import Kind, Passage

HEADER_SEARCH = 30  # rows looked at for the header
# Cells per sheet, counted two ways, both bounded: the cells its XML stores, and the range its cells
# with content span (calamine holds that whole range in memory, about 32 bytes a cell, before a row
# is read; one cell at XFD1048576 is 512 GiB). 2,000,000 is a 100,000-row sheet of 20 columns.
MAX_SHEET_CELLS = 2_000_000
_NUMBER = re.compile(r"^[-+(]?[$€£¥]?\s*\d[\d,.\s]*%?\)?$")
_CSV_SAMPLE = 64 * 1024
_X = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PR = "{http://schemas.openxmlformats.org/package/2006/relationships}"
# A column narrower than this (in characters of the default font) or a row lower than this (in
# points) is drawn by Excel as no pixel: hidden as the hidden flag hides it. Excel draws a column
# of width w < 1 as round(12 w) pixels, a row of h points as round(h * 4 / 3).
_NO_PIXEL_WIDTH = 1 / 24
_NO_PIXEL_HEIGHT = 0.375
_TEXT_TYPES = frozenset({"s", "str", "inlineStr"})


@dataclass
class SheetExtraction:
    passages: list[Passage] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # what was hidden, for a warning


@dataclass(frozen=True)
class SheetFacts:
    """What a sheet's XML says, read before calamine reads the sheet: its hidden rows (sheet row
    numbers) and columns (0-based), which calamine does not report; its cells shown as nothing
    ((row, column) -> why: `cell_styles.Blank.hides`); how many cells it stores; and how many
    cells the range of its cells with content spans (`span`, e.g. "A1:XFD1000")."""

    hidden_rows: frozenset[int] = frozenset()
    hidden_columns: frozenset[int] = frozenset()
    blank_cells: dict[tuple[int, int], str] = field(default_factory=dict)
    stored: int = 0
    spanned: int = 0
    span: str = ""


@dataclass(frozen=True)
class Sheet:
    """One sheet's cells: `rows[i]` is the sheet's row `first_row + i` (1-based), cells from
    column A; `hidden_rows` are sheet row numbers, `hidden_columns` 0-based column indices, and
    `blank_cells` (sheet row, column) the cells shown as nothing, with why."""

    name: str | None
    rows: list[list[Any]]
    first_row: int = 1
    hidden_rows: frozenset[int] = frozenset()
    hidden_columns: frozenset[int] = frozenset()
    blank_cells: dict[tuple[int, int], str] = field(default_factory=dict)


def extract_xlsx(path: Path, source: str) -> SheetExtraction:
    from python_calamine import CalamineWorkbook

    result = SheetExtraction()
    try:
        workbook = CalamineWorkbook.from_path(str(path))
    except Exception as error:  # calamine raises its own error types for every damaged file
        raise BadFile(f"is a damaged Excel workbook ({error}); re-save it and run again") from None
    facts = _sheet_facts(path)
    try:
        for number, meta in enumerate(workbook.sheets_metadata, start=1):
            if str(meta.visible).rsplit(".", 1)[-1].lower() != "visible":
                result.left_out.append(f"hidden sheet {meta.name}")
                continue
            if str(meta.typ).rsplit(".", 1)[-1].lower() != "worksheet":
                continue  # a chart sheet has no cells
            known = facts.get(meta.name)
            if known is None:  # never read unchecked: calamine found a sheet the check did not
                raise BadFile(
                    f"sheet {meta.name} could not be found in the workbook's parts to be checked; re-save it "
                    "and run again"
                )
            _check_bounds(meta.name, known)
            data = workbook.get_sheet_by_name(meta.name)
            start_row, start_column = data.start or (0, 0)
            rows = [[None] * start_column + list(row) for row in data.to_python()]
            sheet = Sheet(
                meta.name, rows, start_row + 1, known.hidden_rows, known.hidden_columns, known.blank_cells
            )
            result.passages += sheet_passages(sheet, source, number, result.left_out)
    except BadFile:
        raise
    except Exception as error:
        raise BadFile(f"is a damaged Excel workbook ({error}); re-save it and run again") from None
    finally:
        workbook.close()
    return result


def _check_bounds(name: str, facts: SheetFacts) -> None:
    """`BadFile` naming the sheet when its cells are over `MAX_SHEET_CELLS`, either way counted."""
    if facts.stored > MAX_SHEET_CELLS:
        raise BadFile(
            f"sheet {name} stores {facts.stored:,} cells (more than {MAX_SHEET_CELLS:,}); refused: split "
            "the sheet or export it as CSV"
        )
    if facts.spanned > MAX_SHEET_CELLS:
        raise BadFile(
            f"sheet {name} has cells as far apart as {facts.span} ({facts.spanned:,} cells, more than "
            f"{MAX_SHEET_CELLS:,}); refused: delete the stray cells outside the table and save it again"
        )


def extract_csv(path: Path, source: str) -> SheetExtraction:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise BadFile(
            f"is not UTF-8 text ({error.reason} at byte {error.start}); save it as UTF-8 CSV"
        ) from None
    try:
        dialect: Any = csv.Sniffer().sniff(text[:_CSV_SAMPLE], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    try:
        rows: list[list[Any]] = list(csv.reader(io.StringIO(text, newline=""), dialect))
    except csv.Error as error:
        raise BadFile(f"is not a well-formed CSV file ({error}); check its quoting") from None
    result = SheetExtraction()
    result.passages = sheet_passages(Sheet(None, rows), source, 1, result.left_out)
    return result


def sheet_passages(sheet: Sheet, source: str, number: int, left_out: list[str]) -> list[Passage]:
    """One `table` passage per data row of `sheet`, the `number`th of its workbook."""
    hidden_rows = [r for r in sheet.hidden_rows if sheet.first_row <= r < sheet.first_row + len(sheet.rows)]
    blank = sheet.blank_cells
    visible = [
        (
            sheet.first_row + i,
            [
                "" if blank and (sheet.first_row + i, c) in blank else _cell(v)
                for c, v in enumerate(row)
                if c not in sheet.hidden_columns
            ],
        )
        for i, row in enumerate(sheet.rows)
        if sheet.first_row + i not in sheet.hidden_rows
    ]
    width = max((len(r) for r in sheet.rows), default=0)
    kept_columns = [c for c in range(width) if c not in sheet.hidden_columns]
    where = f"sheet {sheet.name}" if sheet.name else "the file"
    if hidden_rows:
        left_out.append(f"{len(hidden_rows)} hidden row(s) of {where}")
    if width > len(kept_columns):
        left_out.append(f"{width - len(kept_columns)} hidden column(s) of {where}")
    # Only cells a reader would otherwise see are counted: a blank cell in a hidden row or column
    # is counted with its row or column.
    why = [w for (r, c), w in blank.items() if r not in sheet.hidden_rows and c not in sheet.hidden_columns]
    for reason in sorted(set(why)):
        left_out.append(f"{why.count(reason)} cell(s) of {where} {reason}")
    filled = [(row, cells) for row, cells in visible if any(cells)]
    if not filled:
        return []
    header_at = find_header([cells for _, cells in filled[:HEADER_SEARCH]])
    if header_at is None:
        header = [f"Column {_letters(c)}" for c in kept_columns]
        title, data = None, filled
    else:
        header = [
            name or f"Column {_letters(c)}"
            for name, c in zip(filled[header_at][1], kept_columns, strict=False)
        ]
        above = [" ".join(cell for cell in cells if cell) for _, cells in filled[:header_at]]
        title, data = (" ".join(above) or None), filled[header_at + 1 :]
    return [
        Passage(
            kind=Kind.TABLE,
            source=source,
            page=None,
            text=row_text(header, cells, title),
            section=sheet.name,
            table=number,
            row=row,
        )
        for row, cells in data
    ]


def find_header(rows: Sequence[Sequence[str]]) -> int | None:
    """The index of the header row among the first rows of a sheet (see the module docstring)."""
    width = max((_filled(row) for row in rows), default=0)
    for index, row in enumerate(rows):
        cells = [cell for cell in row if cell]
        wide = len(cells) >= max(2, math.ceil(width / 2)) and len(set(cells)) == len(cells)
        if wide and not any(_NUMBER.match(cell) or _is_date(cell) for cell in cells):
            return index
    return None


def _filled(row: Sequence[str]) -> int:
    return sum(1 for cell in row if cell)


def _is_date(text: str) -> bool:
    return bool(re.match(r"^\d{4}-\d{2}-\d{2}", text))


def _cell(value: Any) -> str:
    """A cell as text: whole numbers without a decimal point, other numbers to 15 significant
    digits (what a spreadsheet shows at most), dates in ISO form."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value) and abs(value) < 1e15:
            return str(int(value))
        return format(value, ".15g")
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return " ".join(str(value).split())


def _letters(column: int) -> str:
    """0 -> A, 25 -> Z, 26 -> AA."""
    letters = ""
    column += 1
    while column:
        column, rest = divmod(column - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def _sheet_facts(path: Path) -> dict[str, SheetFacts]:
    """Per sheet name: what its XML says, read as a stream before calamine reads the sheet (see
    `SheetFacts`). The archive was checked before (`checks.check_archive`): its members unpack
    within bounds."""
    found: dict[str, SheetFacts] = {}
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            targets = _book_targets(archive, names)
            blank = blank_styles(
                archive, _part_of(targets, "/styles", names), _part_of(targets, "/theme", names)
            )
            for name, part in _sheet_parts(archive, names, targets):
                with archive.open(part) as stream:
                    facts = _facts_of(stream, blank)
                if name in found:  # two sheets of one name: each is checked against the larger
                    facts = _larger(found[name], facts)
                found[name] = facts
    except (KeyError, ValueError, zipfile.BadZipFile, etree.XMLSyntaxError) as error:
        raise BadFile(f"is a damaged Excel workbook ({error}); re-save it and run again") from None
    return found


def _book_targets(archive: zipfile.ZipFile, names: set[str]) -> dict[str, tuple[str, str]]:
    """The workbook's relationships: id -> (type, the part it targets, as a path in the archive)."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    rels_name = "xl/_rels/workbook.xml.rels"
    rels = etree.fromstring(archive.read(rels_name), parser) if rels_name in names else None
    found = {}
    for rel in rels if rels is not None else []:
        target = rel.get("Target", "").replace("\\", "/")
        part = target.lstrip("/") if target.startswith("/") else posixpath.normpath(f"xl/{target}")
        found[rel.get("Id", "")] = (rel.get("Type", ""), part)
    return found


def _part_of(targets: dict[str, tuple[str, str]], kind: str, names: set[str]) -> str | None:
    """The workbook's part of a relationship type ending in `kind` ("/styles"), if the archive has it."""
    return next((part for typ, part in targets.values() if typ.endswith(kind) and part in names), None)


def _sheet_parts(
    archive: zipfile.ZipFile, names: set[str], targets: dict[str, tuple[str, str]]
) -> Iterable[tuple[str, str]]:
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    book = etree.fromstring(archive.read("xl/workbook.xml"), parser)
    for sheet in book.iter(f"{_X}sheet"):
        part = targets.get(sheet.get(f"{_R}id") or "", ("", ""))[1]
        if part in names:
            yield sheet.get("name", ""), part


def _larger(one: SheetFacts, other: SheetFacts) -> SheetFacts:
    """Facts that hide all either hides and count as many cells as the larger."""
    larger = max(one, other, key=lambda facts: (facts.spanned, facts.stored))
    return SheetFacts(
        one.hidden_rows | other.hidden_rows,
        one.hidden_columns | other.hidden_columns,
        {**one.blank_cells, **other.blank_cells},
        max(one.stored, other.stored),
        larger.spanned,
        larger.span,
    )


def _facts_of(stream: Any, blank: dict[str, Blank]) -> SheetFacts:
    """One pass over a sheet's XML in constant memory: its hidden rows and columns, its cells whose
    style (one of `blank`) shows them as nothing (each cell's style is looked at only when some
    style does), how many cells it stores, and the range its cells with content span (a value, an
    inline string or a formula: what calamine places). Each cell is placed where its own reference
    says, row included (as calamine places it, whatever row holds it); one without a reference goes
    after the cell before it in its row. A reference that is not letters and digits is a damaged
    file (`ValueError`). Rows are read whole as they end, then dropped: an event per cell cost ten
    times calamine's own read of the sheet."""
    rows: set[int] = set()
    columns: set[int] = set()
    blank_cells: dict[tuple[int, int], str] = {}
    stored = 0
    top = left = 1 << 62
    bottom = right = -1
    row_number = 0
    recoloured = False  # a table or a conditional format may colour the sheet's cells
    tags = (f"{_X}row", f"{_X}col", f"{_X}tablePart", f"{_X}conditionalFormatting")
    for _, element in etree.iterparse(
        stream, events=("end",), tag=tags, resolve_entities=False, no_network=True
    ):
        if element.tag in (f"{_X}tablePart", f"{_X}conditionalFormatting"):
            recoloured = True
            element.clear()
            continue
        hidden = element.get("hidden") in ("1", "true")
        if element.tag == f"{_X}col":
            width = element.get("width")
            if hidden or (width is not None and _below(width, _NO_PIXEL_WIDTH)):
                low, high = int(element.get("min", "1")), int(element.get("max", "1"))
                columns.update(range(low - 1, min(high, low + 16384)))
            element.clear()
            continue
        reference = element.get("r") or ""
        row_number = int(reference) if reference.isdigit() else row_number + 1
        height = element.get("ht")  # most rows have none: no call for them, the pass is per row
        if hidden or (height is not None and _below(height, _NO_PIXEL_HEIGHT)):
            rows.add(row_number)
        stored += len(element)
        column = -1
        for cell in element:
            reference = cell.get("r")
            if reference:
                found = _REFERENCE.fullmatch(reference)
                if found is None:
                    raise ValueError(f"cell reference {reference[:20]!r} is not a column and a row")
                letters, at_row = found.groups()
                column = _column_number(letters.upper())
                at = int(at_row)
            else:
                column, at = column + 1, row_number
            if len(cell):
                top, bottom = min(top, at), max(bottom, at)
                left, right = min(left, column), max(right, column)
                if blank:  # only when some style shows a value as nothing: no cost otherwise
                    style = blank.get(cell.get("s") or "0")  # by the index as written: no call a cell
                    why = style.hides(*_kind_and_value(cell)) if style is not None else None
                    if why is not None:
                        blank_cells[(at, column)] = why
        element.clear()
        while element.getprevious() is not None:
            del element.getparent()[0]  # rows read are dropped: memory stays constant
    spanned = (bottom - top + 1) * (right - left + 1) if bottom >= 0 else 0
    span = f"{_letters(left)}{top}:{_letters(right)}{bottom}" if bottom >= 0 else ""
    if recoloured:  # the cell's style alone no longer says what colour it is drawn in
        blank_cells = {at: why for at, why in blank_cells.items() if why != WHITE_ON_WHITE}
    return SheetFacts(frozenset(rows), frozenset(columns), blank_cells, stored, spanned, span)


def _below(size: str, least: float) -> bool:
    """Is a width or height the XML gives under `least`? One that is not a number is not (the
    default size, as Excel reads it)."""
    try:
        return float(size) < least
    except ValueError:
        return False


def _kind_and_value(cell: Any) -> tuple[str, str]:
    """A stored cell's kind (text, number or other) and its stored value, for its number format."""
    typ = cell.get("t", "n")
    if typ in _TEXT_TYPES:
        return TEXT, ""
    if typ in ("b", "e"):
        return OTHER, ""
    return NUMBER, cell.findtext(f"{_X}v") or ""


_REFERENCE = re.compile(r"([A-Za-z]+)([0-9]+)")


@functools.lru_cache(maxsize=4096)
def _column_number(letters: str) -> int:
    """The 0-based column of its letters ("C" -> 2, "XFD" -> 16383), however many there are."""
    column = 0
    for letter in letters:
        column = column * 26 + ord(letter) - 64
    return column - 1
