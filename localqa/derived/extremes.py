"""Extremes over the rows of one table: "Which type of debt received the largest investment among
the short term investments?", "Which region's revenue fell most in FY2022?", "Which segment grew
fastest?". The table is the one the part's own quote (or its first table candidate) is a row of;
every row of it the caller may see is compared (totals aside), each by a figure computed from its
cells: the cell at the year asked (or its first figure), or its growth between the year asked and
the year before when the part asks how much something grew or fell. The extreme row is the answer,
and every row compared is shown as a cited operand; ties and rows with no cell to compare are said.
`extreme_check` recomputes the extreme from the figures, the rule every shown extreme passes.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from localqa.derived import arithmetic, computing
from localqa.derived.glossary import contains, fold
from localqa.language.tokenizer import tokenizer
from localqa.question import cues
from localqa.question.asked import wanted
from localqa.types import Comparison, Kind, Location, Operand, Passage, Value
from localqa.values.cells import Cell, Row, cell_value, choose_cell, read_row
from localqa.values.choosing import Context
from localqa.values.numbers import read_number, read_quantity

# A row that sums others is not one of the items compared, in any of the spellings filings and
# reports use: "Total net sales", "Totals", "Subtotal", "Grand total", "All regions" (but not "All
# other", a segment of its own), "Consolidated", "Worldwide", "Combined", "Overall".
_TOTAL = re.compile(
    r"\b(?:totals?|sub-?totals?|sums?)\b"
    r"|^\W*(?:all\s+(?!others?\b)\w|consolidated\b|worldwide\b|combined\b|overall\b|company[-\s]wide\b)",
    re.IGNORECASE,
)
MAX_ROWS = 40
GROWTH_DECIMALS = 2


@dataclass(frozen=True)
class ExtremePlan:
    lowest: bool  # the smallest figure is the extreme
    growth: bool  # each row's growth between two years, not one cell
    word: str  # as the part says it ("largest")
    year: int | None  # the year asked about, if any
    asked: str = ""  # the part's asking words: the column it names is read from them
    over_periods: bool = False  # which period (a column of one row), not which row


def plan(part: str) -> ExtremePlan | None:
    """The extreme a part asks for (`cues.extreme_asked`), or None when it asks for none."""
    cue = cues.extreme_asked(part)
    if cue is None:
        return None
    years = sorted(wanted(part).years)
    return ExtremePlan(
        cue.lowest, cue.growth, cue.word, years[-1] if years else None, cues.asking(part), cue.over_periods
    )


def table_rows(passages: Sequence[Passage], table: int) -> list[Passage]:
    """The rows of `table` among a page's passages (as the caller may see them), in order: at most
    MAX_ROWS and one more, which tells that the table goes on past what is compared."""
    rows = [p for p in passages if p.kind is Kind.TABLE and p.table == table]
    return sorted(rows, key=lambda p: p.row or 0)[: MAX_ROWS + 1]


# The next pages a table that ends its page is read on over, at most: past them it is not read to
# its end, and no extreme of it is given.
MAX_CONTINUED_PAGES = 5
_CONTINUED = re.compile(r"\bcontinued\b|\(cont(?:'d|\.)\)", re.IGNORECASE)


def headers_of(row: Passage) -> tuple[str | None, ...]:
    """The headers of a row's columns of figures: what a table continued on the next page repeats."""
    return tuple(c.header for c in _value_cells(read_row(row.text)))


def continuation(table: Sequence[Passage], following: Sequence[Passage]) -> list[Passage] | None:
    """The rows on the next page (`following`, its passages in order) that continue `table`, which
    ends its page: the next page's first table when it is marked continued ("NET SALES BY STORE
    (continued)") or opens the page, under the same headers; [] when that page holds no such table
    (the table ended with its page); None when it cannot be told (a table of the same headers after
    other text, not marked continued: another table, or the same one)."""
    first_table = next((p for p in following if p.kind is Kind.TABLE), None)
    if first_table is None or not table or headers_of(first_table) != headers_of(table[-1]):
        return []
    rows = sorted(
        (p for p in following if p.kind is Kind.TABLE and p.table == first_table.table),
        key=lambda p: p.row or 0,
    )
    label = row_label(read_row(first_table.text)) or ""
    caption = first_table.text[: max(0, first_table.text.find(label))] if label else first_table.text
    if _CONTINUED.search(caption) or following[0] is first_table:
        return rows
    return None


def cut(table: Sequence[Passage], rows: Sequence[Passage]) -> bool:
    """Whether the `rows` compared of `table` (`table_rows`) run on past its cut: then an extreme
    of them ("the largest of 40 rows") is not the table's, and none is given."""
    return len(table) > MAX_ROWS and bool(rows) and rows[-1] is table[-1]


def is_total(label: str) -> bool:
    """Whether a row so labelled sums others ("Total", "Subtotal"): not one of the items."""
    return _TOTAL.search(label) is not None


_DASH = re.compile(r"^[\u2014\u2013-]+$")
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")


def _value_cells(read: Row) -> list[Cell]:
    """A row's cells that hold a figure or a dash (no figure), in order: its columns of values."""
    return [c for c in read.cells if read_number(c.text) is not None or _DASH.match(c.text.strip())]


def row_label(read: Row) -> str | None:
    """A row's label: the label before its first header, or in a ruled table (whose first column
    reads as a cell) its first cell that holds no figure."""
    if read.label:
        return read.label
    values_read = _value_cells(read)
    return next((c.text for c in read.cells if c not in values_read and c.text.strip()), None)


def rows_under(part: str, rows: Sequence[Passage]) -> list[Passage]:
    """The rows under the section row the part names ("among the short term investments": the
    rows after "Short-term investments:" up to the next section row or its subtotal), else all."""
    folded = fold(cues.asking(part))
    for index, row in enumerate(rows):
        read = read_row(row.text)
        label = fold((row_label(read) or "").rstrip(":"))
        if _value_cells(read) or not label or not contains(folded, label):
            continue
        under = []
        for later in rows[index + 1 :]:
            read_later = read_row(later.text)
            if not _value_cells(read_later) or fold((row_label(read_later) or "").rstrip(":")) == label:
                break
            under.append(later)
        return under
    return list(rows)


def extreme(
    chosen: ExtremePlan,
    rows: Sequence[Passage],
    effective: Location,
    context: Context,
) -> tuple[Value, Passage] | str:
    """The extreme row's figure, carrying every row's figure (`Comparison`, direction "largest" or
    "smallest"), and its row; or why none is computed. Its preconditions, each checked here: no
    sum row is an item (by its label, `is_total`, or because its figure is the sum of the others,
    `_sum_row`), each figure is read from the column the part names (`_columns`), and at least two
    rows give one."""
    if chosen.over_periods:
        return _over_periods(chosen, rows, effective, context)
    figures: list[tuple[Value, Passage]] = []
    missing: list[str] = []
    # Every item row's cell at the year, growth or not: a sum row is found by them, among all the
    # rows (a total's growth may be the extreme where its parts give no growth).
    cells: list[Value] = []
    plain = dataclasses.replace(chosen, growth=False)
    for number, row in enumerate(rows, start=1):
        read = read_row(row.text)
        label = row_label(read) or f"row {row.row}"
        if is_total(label):
            continue
        location = row.located(effective)
        cell = _figure(plain, read, row, location, f"row_{number}", context) if chosen.growth else None
        if isinstance(cell, Value):
            cells.append(cell.model_copy(update={"row": label}))
        figure = _figure(chosen, read, row, location, f"row_{number}", context)
        if not chosen.growth and isinstance(figure, Value):
            cells.append(figure.model_copy(update={"row": label}))
        if isinstance(figure, str):
            if figure != NO_FIGURE:
                return figure
            missing.append(label)
        else:
            figures.append((figure.model_copy(update={"row": label}), row))
    if len(figures) < 2:
        return "fewer than two rows of the table give a figure"
    summed = _sum_row(cells)
    if summed is not None:
        return f"the row {summed} is the sum of the others: a total, not one of the items"
    return _decided(chosen, figures, missing, "rows of one table")


def _decided(
    chosen: ExtremePlan, figures: list[tuple[Value, Passage]], missing: list[str], compared: str
) -> tuple[Value, Passage]:
    numbers = [Decimal(str(f.number)) for f, _ in figures]
    best = min(numbers) if chosen.lowest else max(numbers)
    tied = [f.row or "" for f, _ in figures if Decimal(str(f.number)) == best]
    measure = "growth" if chosen.growth else "figure"
    rule = f"the {'smallest' if chosen.lowest else 'largest'} {measure} of {len(figures)} {compared}"
    if len(tied) > 1:
        rule += f"; a tie between {', '.join(tied)}"
    if missing:
        rule += f"; no figure to compare in {', '.join(missing)}"
    value, row = next((f, r) for f, r in figures if Decimal(str(f.number)) == best)
    comparison = Comparison(
        direction="smallest" if chosen.lowest else "largest",
        rule=rule,
        figures=tuple(f for f, _ in figures),
    )
    return value.model_copy(update={"comparison": comparison}), row


def _sum_row(figures: Sequence[Value]) -> str | None:
    """The label of a row whose figure is the sum of all the others, within the rounding of their
    cells (a total whose label does not say so: "Net revenues" under three regions), or None. Only
    among three or more rows: of two, one may equal the other by chance."""
    if len(figures) < 3:
        return None
    numbers = [Decimal(str(f.number)) for f in figures]
    places = max((_places(f.text) for f in figures), default=0)
    tolerance = Decimal(len(figures)) * Decimal(1).scaleb(-places) / 2
    total = sum(numbers, Decimal(0))
    for figure, number in zip(figures, numbers, strict=True):
        if abs(number - (total - number)) <= tolerance:
            return figure.row
    return None


def _places(text: str) -> int:
    read = read_quantity(text)
    return max(0, -int(read[0].number.as_tuple().exponent)) if read else 0


def _over_periods(
    chosen: ExtremePlan, rows: Sequence[Passage], effective: Location, context: Context
) -> tuple[Value, Passage] | str:
    """Which period of one row had the extreme figure ("Which year had the highest operating
    income?"): the row is the one whose label the part names (exactly one), its figures the cells
    under dated headers, each a cited operand labelled by its header."""
    folded = fold(chosen.asked)
    named = [
        (len(fold(label)), row, read)
        for row in rows
        for read in [read_row(row.text)]
        for label in [row_label(read) or ""]
        if label and not is_total(label) and contains(folded, label.rstrip(":"))
    ]
    if not named:
        return "the part names no row of the table to compare the periods of"
    longest = max(n for n, _, _ in named)
    chosen_rows = [(row, read) for n, row, read in named if n == longest]
    if len(chosen_rows) > 1:
        return "the part's line item names more than one row of the table"
    row, read = chosen_rows[0]
    location = row.located(effective)
    around = [row.text, *context.around(location)]
    figures: list[tuple[Value, Passage]] = []
    for number, cell in enumerate(_value_cells(read), start=1):
        if not _YEAR.search(cell.header or "") or read_number(cell.text) is None:
            continue
        operand = Operand(
            name=f"period_{number}", value=cell_value(read, cell, around), quote=row.text, citation=location
        )
        figure = _computed((operand,), operand.name)
        if figure is not None:
            figures.append((figure.model_copy(update={"row": cell.header}), row))
    if len(figures) < 2:
        return "fewer than two dated columns of the row give a figure"
    return _decided(chosen, figures, [], f"periods of the row {row_label(read)}")


# Why a row gives no figure where another row may: its cell is empty or a dash (said in the rule).
NO_FIGURE = "no figure"


def _columns(chosen: ExtremePlan, columns: Sequence[Cell]) -> Sequence[Cell] | str:
    """The columns an extreme may read in a table whose headers name no year: the one column the
    part names by a word of its header ("Revenue" for "the largest revenue"), or the one column
    there is; a table of several undated columns the part does not tell apart (a change beside an
    amount) gives no extreme."""
    if len(columns) <= 1:
        return columns
    words = set(tokenizer().terms(chosen.asked))
    named = [c for c in columns if c.header and words & set(tokenizer().terms(c.header))]
    headers = {c.header for c in named}
    if len(headers) == 1:
        return named
    listed = ", ".join(dict.fromkeys(c.header or "(no header)" for c in columns))
    return f"the part names none of the table's columns ({listed}), or more than one"


def _figure(
    chosen: ExtremePlan,
    read: Row,
    row: Passage,
    location: Location,
    name: str,
    context: Context,
) -> Value | str:
    """A row's figure: its cell at the year (or the column the part names), or its growth to the
    year from the year before; a derived value over the row's own cells, so each is a cited
    operand. `NO_FIGURE` for a row whose cell gives none; another text says why no row can."""
    calendar = context.calendar(row.source)
    around = [row.text, *context.around(location)]

    columns = _value_cells(read)
    dated = any(_YEAR.search(c.header or "") for c in columns)
    if not dated:
        if chosen.growth:
            return "the table's headers name no year to compute a growth between"
        readable = _columns(chosen, columns)
        if isinstance(readable, str):
            return readable
        columns = list(readable)

    def cell_at(year: int | None, position: int) -> Cell | None:
        """The cell at the year's column; in a table whose headers name no year, the column the
        part names (`_columns`), or with a year asked and none given the latest (the first, as
        filings order them); a dash is no figure."""
        if dated and year is not None:
            cell = choose_cell("", read, wanted(""), calendar, year=year).cell
        else:
            cell = columns[position] if len(columns) > position else None
        return cell if cell is not None and read_number(cell.text) is not None else None

    now = cell_at(chosen.year, 0)
    if now is None:
        return NO_FIGURE
    operands = [Operand(name=name, value=cell_value(read, now, around), quote=row.text, citation=location)]
    expression = name
    if chosen.growth:
        before = cell_at(None if chosen.year is None else chosen.year - 1, 1)
        if before is None or before == now:
            return NO_FIGURE
        prior = Operand(
            name=f"{name}_before",
            value=cell_value(read, before, around),
            quote=row.text,
            citation=location,
        )
        operands.append(prior)
        expression = f"({name} - {prior.name}) / {prior.name} * 100"
    return _computed(tuple(operands), expression) or NO_FIGURE


def _computed(operands: tuple[Operand, ...], expression: str) -> Value | None:
    if any(o.value.number is None or read_quantity(o.value.text) is None for o in operands):
        return None
    numbers = {o.name: computing.magnitude(o) for o in operands}
    try:
        result = arithmetic.parse(expression).evaluate(numbers)
    except arithmetic.ExpressionError:
        return None
    if len(operands) == 1:
        read = read_quantity(operands[0].value.text)
        assert read is not None
        places = max(0, -int(read[0].number.as_tuple().exponent))
        unit = None
    else:
        places, unit = GROWTH_DECIMALS, "%"
    rounded = result.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    text = f"{rounded:,f}" + (" %" if unit == "%" else "")
    scale = operands[0].value.scale if unit is None else None
    return Value(
        text=text, number=float(rounded), unit=unit, scale=scale, operands=operands, expression=expression
    )


def extreme_check(value: Value) -> str | None:
    """Why a shown extreme is not a checked one (None: it is): every row's figure passes the
    figure rule, and the value is a figure whose number is the largest (smallest) of them."""
    comparison = value.comparison
    if comparison is None or comparison.direction not in ("largest", "smallest"):
        return None
    if len(comparison.figures) < 2:
        return "an extreme of fewer than two rows"
    problem = computing.figures_problem(comparison.figures)
    if problem is not None:
        return problem
    numbers = [Decimal(str(f.number)) for f in comparison.figures]
    best = min(numbers) if comparison.direction == "smallest" else max(numbers)
    shown = (value.text, value.number, value.expression, value.row)
    if not any((f.text, f.number, f.expression, f.row) == shown for f in comparison.figures):
        return "the value is none of the rows compared"
    if Decimal(str(value.number)) != best:
        return f"the value is not the {comparison.direction} of the rows compared"
    return None
