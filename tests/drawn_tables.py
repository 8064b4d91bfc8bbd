"""Hypothesis strategies for the tables a computed shape reads, with their known answers (issue
47): rows as the index stores them (`Caption (scale): Label: Header: value; ...`), drawn to break
what a shape assumes: sum rows of every spelling and unlabelled ones, a column of changes or
shares beside the amount asked, columns in any order, loss years written in parentheses, mixed
scales, and a table that goes on over the next page (marked "(continued)", opening the page, or
another table of the same headers after other text, which no rule can tell from a continuation).

A drawn table knows its truth: the item rows (never a sum row) and the figure of each in the
column asked. A shape's answer is that truth or nothing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from hypothesis import strategies as st

from localqa.types import Kind, Passage

ITEM_LABELS = (
    "North America",
    "Europe",
    "Asia Pacific",
    "Latin America",
    "Japan",
    "Greater China",
    "Store Omega",
    "Arcade",
    "Puzzle",
    "Strategy",
    "Retail",
    "Wholesale",
    "Online",
    "Services",
    "Hardware",
    "All other",  # a segment of its own, not a sum
)
# How filings and reports spell a row that sums the others.
SUM_LABELS = (
    "Total",
    "Totals",
    "Total net sales",
    "Total revenues",
    "Subtotal",
    "Grand total",
    "All regions",
    "All segments",
    "Consolidated",
    "Worldwide",
    "Combined",
    "Overall",
)
# A sum row whose label does not say so.
UNLABELLED_SUMS = ("Net revenues", "Net sales", "Revenue")
SCALES = ("(In millions)", "(In thousands)", "(In billions)", "")
# Columns beside the amount asked that a shape must not read for it.
DISTRACTORS = ("Change from prior year", "% of total", "Units sold", "Stores")


@dataclass(frozen=True)
class DrawnTable:
    """A table as the index stores its rows, the column asked, and the truth."""

    rows: tuple[Passage, ...]
    asked: str  # the header of the column the question asks about
    question: str
    figures: dict[str, Decimal]  # item label -> its figure in the asked column (or its growth)
    lowest: bool

    def truth(self) -> set[str]:
        """The item rows with the extreme figure (several on a tie)."""
        best = (min if self.lowest else max)(self.figures.values())
        return {label for label, figure in self.figures.items() if figure == best}


def written(number: int) -> str:
    """A figure as a filing writes it: thousands separated, a loss in parentheses."""
    return f"({-number:,})" if number < 0 else f"{number:,}"


def row_text(caption: str, label: str, cells: Sequence[tuple[str, str]]) -> str:
    return f"{caption}: {label}: " + "; ".join(f"{header}: {value}" for header, value in cells)


def passage(text: str, row: int, *, page: int = 1, table: int = 1, source: str = "drawn.pdf") -> Passage:
    return Passage(kind=Kind.TABLE, source=source, page=page, text=text, table=table, row=row)


@st.composite
def tables(draw: st.DrawFn) -> DrawnTable:
    """A table of 2 to 8 items, perhaps with a sum row, perhaps with a distractor column beside
    the amount asked (in either order), dated or not, asked for its largest or smallest item."""
    count = draw(st.integers(min_value=2, max_value=8))
    labels = draw(st.lists(st.sampled_from(ITEM_LABELS), min_size=count, max_size=count, unique=True))
    dated = draw(st.booleans())
    lowest = draw(st.booleans())
    growth = False
    if dated:
        headers = ["2022", "2021"] if draw(st.booleans()) else ["2021", "2022"]
        asked = "2022"
        growth = draw(st.booleans())
        if growth:
            question = f"Which region's net revenues {'fell most' if lowest else 'grew fastest'} in 2022?"
        else:
            question = f"Which region had the {'smallest' if lowest else 'largest'} net revenues in 2022?"
    else:
        asked = "Revenue"
        distractor = draw(st.sampled_from(DISTRACTORS))
        headers = [distractor, asked] if draw(st.booleans()) else [asked, distractor]
        question = f"Which platform had the {'lowest' if lowest else 'highest'} revenue?"
    signed = (
        st.integers(min_value=-9_000, max_value=99_999) if draw(st.booleans()) else st.integers(1, 99_999)
    )
    grid = {label: {h: draw(signed) for h in headers} for label in labels}
    caption = f"{draw(st.sampled_from(('NET REVENUES BY REGION', 'REVENUE BY PLATFORM', 'SEGMENT DATA')))}"
    scale = draw(st.sampled_from(SCALES))
    caption = f"{caption} {scale}".strip()
    lines = [(label, [(h, written(grid[label][h])) for h in headers]) for label in labels]
    summed = draw(st.sampled_from(("none", "labelled", "unlabelled")))
    if summed != "none":
        label = draw(st.sampled_from(SUM_LABELS if summed == "labelled" else UNLABELLED_SUMS))
        if label not in labels:
            sums = [(h, written(sum(grid[item][h] for item in labels))) for h in headers]
            at = draw(st.sampled_from((len(lines), 0)))
            lines.insert(at, (label, sums))
    rows = tuple(passage(row_text(caption, label, cells), n) for n, (label, cells) in enumerate(lines, 1))
    if growth:
        figures = {
            label: _growth(grid[label]["2022"], grid[label]["2021"])
            for label in labels
            if grid[label]["2021"]
        }
    else:
        figures = {label: Decimal(grid[label][asked]) for label in labels}
    return DrawnTable(rows, asked, question, figures, lowest)


def _growth(now: int, before: int) -> Decimal:
    """A row's growth as the shape rounds it: (now - before) / before * 100, to 2 decimals."""
    return ((Decimal(now) - before) / before * 100).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class DrawnPages:
    """A table whose first page ends with it, and the next page's passages, with the truth: the
    item figures of the whole table when the next page continues it, of the first page's rows when
    it holds another table, and no truth (None) when nothing on the page tells which."""

    first: tuple[Passage, ...]
    following: tuple[Passage, ...]
    question: str
    figures: dict[str, int] | None


@st.composite
def continued_tables(draw: st.DrawFn) -> DrawnPages:
    labels = draw(st.lists(st.sampled_from(ITEM_LABELS), min_size=4, max_size=10, unique=True))
    split = draw(st.integers(min_value=2, max_value=len(labels) - 2))
    figures = {label: draw(st.integers(1, 99_999)) for label in labels}
    other = {label: draw(st.integers(1, 99_999)) for label in labels}

    def line(label: str, caption: str, page: int, row: int, table: int = 1) -> Passage:
        cells = [("2022", written(figures[label])), ("2021", written(other[label]))]
        return passage(row_text(caption, label, cells), row, page=page, table=table)

    first = tuple(
        line(label, "NET SALES BY STORE (In thousands)", 1, n) for n, label in enumerate(labels[:split], 1)
    )
    how = draw(st.sampled_from(("marked", "opening", "other-headers", "unmarked-after-text")))
    prose = Passage(
        kind=Kind.PROSE, source="drawn.pdf", page=2, text="Results of operations discussed below."
    )
    caption = "NET SALES BY STORE (continued) (In thousands)" if how == "marked" else "NET SALES BY STORE"
    rest = [line(label, caption, 2, n) for n, label in enumerate(labels[split:], 1)]
    question = "Which store had the largest net sales in 2022?"
    if how in ("marked", "opening"):
        following = tuple(([prose] if how == "marked" and draw(st.booleans()) else []) + rest)
        return DrawnPages(first, following, question, figures)
    if how == "other-headers":
        cells = [("Units", "12"), ("Stores", "3")]
        another = tuple(
            passage(row_text("UNIT DATA", label, cells), n, page=2)
            for n, label in enumerate(labels[split:], 1)
        )
        return DrawnPages(first, another, question, {label: figures[label] for label in labels[:split]})
    return DrawnPages(first, (prose, *rest), question, None)


@dataclass(frozen=True)
class DrawnPeriods:
    """An income statement's rows over several dated columns, the row asked and its truth."""

    rows: tuple[Passage, ...]
    question: str
    figures: dict[str, int]  # column header -> the asked row's figure
    lowest: bool


STATEMENT_ROWS = ("Net sales", "Cost of sales", "Gross profit", "Operating income", "Net income")


@st.composite
def statement_periods(draw: st.DrawFn) -> DrawnPeriods:
    years = draw(st.lists(st.integers(2015, 2024), min_size=2, max_size=4, unique=True))
    headers = [str(y) for y in sorted(years, reverse=draw(st.booleans()))]
    asked = draw(st.sampled_from(STATEMENT_ROWS))
    lowest = draw(st.booleans())
    grid = {label: {h: draw(st.integers(-5_000, 99_999)) for h in headers} for label in STATEMENT_ROWS}
    caption = "CONSOLIDATED STATEMENTS OF OPERATIONS (In millions)"
    rows = tuple(
        passage(row_text(caption, label, [(h, written(grid[label][h])) for h in headers]), n)
        for n, label in enumerate(STATEMENT_ROWS, 1)
    )
    word = "lowest" if lowest else "highest"
    return DrawnPeriods(rows, f"Which year had the {word} {asked.lower()}?", grid[asked], lowest)
