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
- One rule for what is hidden: hidden and very hidden sheets, hidden rows and hidden columns are
  not indexed, and the index says how many were left out. Hiding is no access control, but what an
  author hid is not what they meant a reader to see; an access label in the catalog is the way to
  narrow who sees a file.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
import re
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from lxml import etree

from localqa.extract.checks import BadFile
from localqa.extract.structured import row_text
from localqa.types import Kind, Passage

HEADER_SEARCH = 30  # rows looked at for the header
_NUMBER = re.compile(r"^[-+(]?[$€£¥]?\s*\d[\d,.\s]*%?\)?$")
_CSV_SAMPLE = 64 * 1024
_X = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PR = "{http://schemas.openxmlformats.org/package/2006/relationships}"


@dataclass
class SheetExtraction:
    passages: list[Passage] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # what was hidden, for a warning


@dataclass(frozen=True)
class Sheet:
    """One sheet's cells: `rows[i]` is the sheet's row `first_row + i` (1-based), cells from
    column A; `hidden_rows` are sheet row numbers, `hidden_columns` 0-based column indices."""

    name: str | None
    rows: list[list[Any]]
    first_row: int = 1
    hidden_rows: frozenset[int] = frozenset()
    hidden_columns: frozenset[int] = frozenset()


def extract_xlsx(path: Path, source: str) -> SheetExtraction:
    from python_calamine import CalamineWorkbook

    result = SheetExtraction()
    try:
        workbook = CalamineWorkbook.from_path(str(path))
    except Exception as error:  # calamine raises its own error types for every damaged file
        raise BadFile(f"is a damaged Excel workbook ({error}); re-save it and run again") from None
    hidden = _hidden_cells(path)
    try:
        for number, meta in enumerate(workbook.sheets_metadata, start=1):
            if str(meta.visible).rsplit(".", 1)[-1].lower() != "visible":
                result.left_out.append(f"hidden sheet {meta.name}")
                continue
            if str(meta.typ).rsplit(".", 1)[-1].lower() != "worksheet":
                continue  # a chart sheet has no cells
            data = workbook.get_sheet_by_name(meta.name)
            start_row, start_column = data.start or (0, 0)
            rows = [[None] * start_column + list(row) for row in data.to_python()]
            rows_hidden, columns_hidden = hidden.get(meta.name, (frozenset(), frozenset()))
            sheet = Sheet(meta.name, rows, start_row + 1, rows_hidden, columns_hidden)
            result.passages += sheet_passages(sheet, source, number, result.left_out)
    except BadFile:
        raise
    except Exception as error:
        raise BadFile(f"is a damaged Excel workbook ({error}); re-save it and run again") from None
    finally:
        workbook.close()
    return result


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
    visible = [
        (sheet.first_row + i, [_cell(v) for c, v in enumerate(row) if c not in sheet.hidden_columns])
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


def _hidden_cells(path: Path) -> dict[str, tuple[frozenset[int], frozenset[int]]]:
    """Per sheet name: its hidden rows (sheet row numbers) and hidden columns (0-based), read
    from the sheets' XML as a stream (calamine does not report them). The archive was checked
    before (`checks.check_archive`): its members unpack within bounds."""
    found: dict[str, tuple[frozenset[int], frozenset[int]]] = {}
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            for name, part in _sheet_parts(archive, names):
                if _mentions_hidden(archive, part):  # most sheets hide nothing: parsed only if one does
                    with archive.open(part) as stream:
                        found[name] = _hidden_in(stream)
    except (KeyError, zipfile.BadZipFile, etree.XMLSyntaxError) as error:
        raise BadFile(f"is a damaged Excel workbook ({error}); re-save it and run again") from None
    return found


def _sheet_parts(archive: zipfile.ZipFile, names: set[str]) -> Iterable[tuple[str, str]]:
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    book = etree.fromstring(archive.read("xl/workbook.xml"), parser)
    rels_name = "xl/_rels/workbook.xml.rels"
    rels = etree.fromstring(archive.read(rels_name), parser) if rels_name in names else None
    targets = {r.get("Id"): r.get("Target", "") for r in (rels if rels is not None else [])}
    for sheet in book.iter(f"{_X}sheet"):
        target = targets.get(sheet.get(f"{_R}id"), "")
        part = target.lstrip("/") if target.startswith("/") else str(PurePosixPath("xl") / target)
        if part in names:
            yield sheet.get("name", ""), part


def _mentions_hidden(archive: zipfile.ZipFile, part: str) -> bool:
    tail = b""
    with archive.open(part) as stream:
        while chunk := stream.read(1 << 20):
            if b"hidden=" in tail + chunk:
                return True
            tail = chunk[-8:]
    return False


def _hidden_in(stream: Any) -> tuple[frozenset[int], frozenset[int]]:
    rows: set[int] = set()
    columns: set[int] = set()
    for _, element in etree.iterparse(
        stream, events=("end",), tag=(f"{_X}row", f"{_X}col"), resolve_entities=False, no_network=True
    ):
        if element.get("hidden") in ("1", "true"):
            if element.tag == f"{_X}row" and (element.get("r") or "").isdigit():
                rows.add(int(element.get("r")))
            elif element.tag == f"{_X}col":
                low, high = int(element.get("min", "1")), int(element.get("max", "1"))
                columns.update(range(low - 1, min(high, low + 16384)))
        element.clear()
    return frozenset(rows), frozenset(columns)
