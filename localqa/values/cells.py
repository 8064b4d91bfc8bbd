"""A table row's value: the row read back from the text extraction writes (`Caption: Row label:
Header: value; Header: value`: `read_row`), the cell at the column the part asks about
(`choose_cell`), and that cell as a value with its row and column (`cell_value`).

The cell chosen is the one whose column header holds the fiscal year asked about (by the filer's
calendar, `localqa.values.fiscal`), or, when the part names no period, the one cell whose header
shares a word with the part ("Loan limit" for "What is the loan limit for EQ-314?"); when no
header does (a table headed "Column 1", "Column 2"), the one cell that is a figure in the unit the
part names ("10 hours" for "the maximum hours of the buddy scheme"). A cell the part itself names
(EQ-314) is never the answer. Two columns for one year, or none chosen by the
part's words, is ambiguous: no value, and the quote stands alone.

Serves every question whose quote is a table row: a figure of a year, a limit or a fee of a named
item, and the operands of derived figures, comparisons and extremes (`localqa.derived.operands`,
`localqa.derived.extremes`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from localqa.language.text import identifiers, squash
from localqa.language.tokenizer import tokenizer
from localqa.question.asked import Wanted
from localqa.types import Value
from localqa.values.fiscal import FiscalCalendar, header_years
from localqa.values.numbers import read_number, read_quantity, stated_scale


@dataclass(frozen=True)
class Cell:
    header: str | None
    text: str


@dataclass(frozen=True)
class Row:
    """A table row read back from its text: the label before its first header (the row label, or
    a ruled table's title) and its cells in order."""

    label: str | None
    cells: tuple[Cell, ...]


# A cell that states a measure is short ("10 hours", "Min 30 MCs"); a longer one is a sentence
# that happens to hold a number.
MEASURE_CELL_LENGTH = 40
_LEADER = re.compile(r"\s*\.{2,}[\s.]*$")


def read_row(text: str) -> Row:
    """`Caption: Row label: Header: value; Header: value` (extraction's row text) as a `Row`. The
    caption and the row label cannot be told apart in the text: the label is the last of them."""
    chunks = squash(text).split("; ")
    first = chunks[0].split(": ")
    headed = any(": " in chunk for chunk in chunks[1:]) or len(chunks) == 1
    if len(first) >= 3 or (len(first) == 2 and headed):
        label_parts, cells = first[:-2], [Cell(_clean(first[-2]), first[-1])]
    elif len(first) == 2:
        label_parts, cells = first[:-1], [Cell(None, first[-1])]
    else:
        label_parts, cells = [], [Cell(None, first[0])]
    for chunk in chunks[1:]:
        header, separator, value = chunk.partition(": ")
        cells.append(Cell(_clean(header), value) if separator else Cell(None, chunk))
    label = _clean(label_parts[-1]) if label_parts else None
    return Row(label, tuple(cells))


def _clean(text: str) -> str:
    return _LEADER.sub("", text).strip()


@dataclass(frozen=True)
class CellChoice:
    """The cell chosen for a part, or why none was (`why`: said to the reader, in their words)."""

    cell: Cell | None
    why: str | None = None


def choose_cell(
    part: str, row: Row, asked: Wanted, calendar: FiscalCalendar, year: int | None = None
) -> CellChoice:
    """The cell of `row` at the column the part asks about: the one whose header holds `year` (or
    the one year the part names); else the one whose header shares a word with the part. A cell
    the part itself names is never chosen."""
    named = {code.upper() for code in identifiers(part)}
    cells = [c for c in row.cells if c.text and c.text.upper() not in named and c.text not in part]
    years = (year,) if year is not None else tuple(dict.fromkeys(asked.years))
    dated = [c for c in cells if header_years(c.header, calendar)]
    if years and dated:
        matching = [c for c in dated if set(header_years(c.header, calendar)) & set(years)]
        if len(years) > 1 and year is None:
            return CellChoice(None, f"the question names {len(years)} years; a row gives one cell each")
        if not matching:
            return CellChoice(None, f"the row has no column for {years[0]}")
        if len(matching) > 1:
            return CellChoice(None, f"the row has {len(matching)} columns for {years[0]}")
        return CellChoice(matching[0])
    if len(cells) == 1 and not dated:
        return CellChoice(cells[0])
    words = set(tokenizer().terms(part))
    overlaps = [(len(words & set(tokenizer().terms(c.header or ""))), c) for c in cells]
    best = max((n for n, _ in overlaps), default=0)
    chosen = [c for n, c in overlaps if n == best]
    if best == 0 or len(chosen) > 1:
        measured = [c for c in cells if _measures(c.text, words)]
        if len(measured) == 1:
            return CellChoice(measured[0])
        return CellChoice(None, "the question does not say which column of the row it asks about")
    return CellChoice(chosen[0])


def _measures(text: str, words: set[str]) -> bool:
    """Whether a cell is a number in the unit the part names ("10 hours" for "the maximum hours
    of the buddy scheme"): a cell of a table whose headers say nothing ("Column 3") that states
    the very measure asked. A figure only: a cell that holds no number names something, and a
    word it shares with the part ("students") is no measure."""
    found = read_quantity(text)
    if found is None or len(text) > MEASURE_CELL_LENGTH:
        return False
    return bool({t for t in tokenizer().terms(text) if read_number(t) is None} & words)


def row_name(row: Row) -> str | None:
    """What names a row: its label; in a table whose first column is headed like the others (a
    ruled table: "Item ID: EQ-314; Item: ...") its first cell, with that header ("Item ID EQ-314"),
    since the label there is the table's title."""
    first = row.cells[0] if row.cells else None
    if first is None or first.header is None or header_years(first.header, FiscalCalendar()):
        return row.label
    if read_number(first.text) is not None:
        return row.label
    return f"{first.header} {first.text}"


def cell_value(row: Row, cell: Cell, scale_texts: Sequence[str] = ()) -> Value:
    """A cell as a value: its text as written, its number, the table's scale, and both headers."""
    read = read_quantity(cell.text)
    figure = read[0] if read else None
    return Value(
        text=cell.text,
        number=float(figure.number) if figure else None,
        unit=figure.unit if figure else None,
        scale=(read[1] if read else None)
        or (stated_scale(scale_texts) if figure and figure.unit is None else None),
        row=row_name(row) if cell is not row.cells[0] else row.label,
        column=cell.header,
    )
