"""Tables without ruling lines: a row label, then values aligned in columns by whitespace, under
column headers (financial statements, most tables in filings and reports).

A page's lines are regrouped into visual rows (lines whose heights overlap, across PyMuPDF's
blocks), and each row into segments (runs of words separated by a gap wider than most of a
space). A table is a run of rows whose right-hand segments are values (numbers, parenthesised
negatives, dashes, percentages); its columns are the union of those segments' extents, its header
the rows just above its first value row whose segments stand over the columns (multi-line header
cells are joined top down), and its caption the short lines above that (the statement's title).
A label-only row between value rows names the rows below it (a sub-heading: "Current assets"),
unless the row below it continues the label (it starts in lower case).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from localqa.extract.layout import X0, Line, Word, union
from localqa.language.text import squash
from localqa.question.periods import YEAR_DIGITS
from localqa.types import Box

_VALUE = re.compile(
    r"^(?:[$€£¥]\s?)?\(?[-\u2013\u2014]?\s?[$€£¥]?\d[\d,]*(?:\.\d+)?\)?\s?%?\)?$|^[-\u2013\u2014]+$|^\(?n/?a\)?$|^nm$",
    re.IGNORECASE,
)
_CURRENCY = {"$", "€", "£", "¥", "US$"}
_YEARISH = re.compile(rf"^(?:fy\s?|q[1-4]\s?)?{YEAR_DIGITS}[a-z]?$", re.IGNORECASE)
_STATEMENT = re.compile(
    r"statements? of|balance sheets?|income|operations|cash flows?|comprehensive|stockholders|"
    r"shareholders|equity|financial (?:position|condition)|earnings|results",
    re.IGNORECASE,
)
# A table's unit stated once, often at the left of its header rows, over no column ("(Millions)",
# "(In millions, except per share data)", "$ in thousands"): kept with the caption, where a reader
# (and a value's scale, `localqa.values`) finds it.
_SCALE_NOTE = re.compile(
    r"\(?\s*(?:[$€£]\s*)?(?:(?:in|dollars\s+in|amounts\s+in|amounts)\s+)?(?:thousands|millions|billions)\b[^)]{0,60}\)?",
    re.IGNORECASE,
)
_GAP = 0.75  # a gap wider than this many font sizes separates two segments (a space is ~0.25)
_MIN_VALUE_ROWS = 2
_HEADER_ROWS = 4
_CAPTION_ROWS = 3


@dataclass
class Segment:
    x0: float
    x1: float
    text: str
    box: Box
    value: bool = field(init=False)  # `is_value(text)`, asked of every segment many times

    def __post_init__(self) -> None:
        self.value = is_value(self.text)


@dataclass
class Row:
    lines: list[Line]
    segments: list[Segment]
    top: float
    bottom: float
    size: float
    values: list[Segment] = field(default_factory=list)  # `_values(self)`, kept: asked often

    @property
    def box(self) -> Box:
        return union([line.box for line in self.lines])


@dataclass
class TableRow:
    label: str
    values: list[str]  # one per column, "" where the row has none
    box: Box
    subheading: str | None


@dataclass
class UnruledTable:
    caption: list[str]
    section: str | None  # the caption line that names the statement, if any
    header: list[str]  # one per column, "" where none was found
    rows: list[TableRow]
    lines: list[Line] = field(default_factory=list)  # every line the table took (not prose)

    @property
    def top(self) -> float:
        return min(line.top for line in self.lines)


def is_value(text: str) -> bool:
    return bool(_VALUE.match(text.strip()))


def visual_rows(lines: list[Line]) -> list[Row]:
    """Lines grouped into rows by vertical overlap (a row may span several PyMuPDF blocks)."""
    rows: list[Row] = []
    for line in sorted(lines, key=lambda item: (item.top, item.box[0])):
        middle = (line.top + line.bottom) / 2
        if rows and rows[-1].top <= middle <= rows[-1].bottom:
            row = rows[-1]
            row.lines.append(line)
            row.bottom = max(row.bottom, line.bottom)
        else:
            rows.append(Row([line], [], line.top, line.bottom, line.size))
    for row in rows:
        row.segments = _segments(row)
        row.values = _value_segments(row.segments)
        row.size = max(line.size for line in row.lines)
    return rows


def _segments(row: Row) -> list[Segment]:
    if len(row.lines) == 1:
        words = row.lines[0].words  # already left to right
    else:
        words = sorted((w for line in row.lines for w in line.words), key=X0)
    gap = _GAP * max(row.lines[0].size, 1.0)
    segments: list[list[Word]] = []
    group: list[Word] = []
    right = 0.0  # the right edge of the word before
    for word in words:
        if group and word.x0 - right <= gap:
            group.append(word)
        else:
            group = [word]
            segments.append(group)
        right = word.x1
    found = []
    for group in segments:
        if len(group) == 1:  # most segments are one word: a figure, a short label
            word = group[0]
            found.append(Segment(word.x0, word.x1, word.text, (word.x0, word.y0, word.x1, word.y1)))
            continue
        box = (
            min([w.x0 for w in group]),
            min([w.y0 for w in group]),
            max([w.x1 for w in group]),
            max([w.y1 for w in group]),
        )
        found.append(Segment(group[0].x0, group[-1].x1, " ".join([w.text for w in group]), box))
    # A currency sign set apart from its amount belongs to the amount.
    merged: list[Segment] = []
    for segment in found:
        if merged and merged[-1].text in _CURRENCY and segment.value:
            sign = merged.pop()
            segment = Segment(sign.x0, segment.x1, segment.text, union([sign.box, segment.box]))
        merged.append(segment)
    return merged


def _values(row: Row) -> list[Segment]:
    return row.values


def _value_segments(segments: list[Segment]) -> list[Segment]:
    """The value segments of a row: every segment after the first that is a value. A row whose
    first segment is a value has no label."""
    start = 0 if segments and segments[0].value else 1
    return [s for s in segments[start:] if s.value]


def _is_value_row(row: Row) -> bool:
    """A label, then values only (or values only)."""
    segments = row.segments
    values = _values(row)
    if not values:
        return False
    labelled = not segments[0].value
    return len(values) == len(segments) - (1 if labelled else 0) and not all(
        _YEARISH.match(v.text) for v in values
    )


def _is_label_row(row: Row, right_edge: float) -> bool:
    """One short segment that stops before the value columns: a sub-heading or a wrapped label."""
    return (
        len(row.segments) == 1
        and not row.segments[0].value
        and row.segments[0].x1 < right_edge
        and len(row.segments[0].text.split()) <= 16
    )


def find_tables(lines: list[Line]) -> list[UnruledTable]:
    rows = visual_rows(lines)
    tables = []
    index = 0
    while index < len(rows):
        found = _table_at(rows, index)
        if found is None:
            index += 1
            continue
        table, end = found
        tables.append(table)
        index = end
    return tables


def _table_at(rows: list[Row], start: int) -> tuple[UnruledTable, int] | None:
    """The table whose first value row is `rows[start]`, and the index after its last row."""
    if not _is_value_row(rows[start]) or rows[start].segments[0].value:
        return None
    # Label rows right above the first value row open the table ("Cash flows from operations").
    first = start
    left_of_values = min(s.x0 for s in _values(rows[start]))
    while (
        first > 0
        and start - first < 2
        and _is_label_row(rows[first - 1], left_of_values)
        and rows[first].top - rows[first - 1].bottom <= 1.5 * rows[first].size
    ):
        first -= 1
    body = list(range(first, start + 1))
    end = start + 1
    while end < len(rows):
        row, previous = rows[end], rows[body[-1]]
        if row.top - previous.bottom > 2.5 * max(row.size, previous.size):
            break
        if _is_value_row(row):
            body.append(end)
            end += 1
            continue
        left_of_values = min(s.x0 for i in body for s in _values(rows[i]))
        # Label rows count only when value rows follow them.
        ahead = end
        while ahead < len(rows) and ahead - end < 3 and _is_label_row(rows[ahead], left_of_values):
            ahead += 1
        if ahead > end and ahead < len(rows) and _is_value_row(rows[ahead]):
            gap = rows[ahead].top - rows[ahead - 1].bottom
            if gap <= 2.5 * rows[ahead].size:
                body.extend(range(end, ahead + 1))
                end = ahead + 1
                continue
        break
    value_rows = [i for i in body if _is_value_row(rows[i])]
    if len(value_rows) < _MIN_VALUE_ROWS:
        return None
    columns = _columns([rows[i] for i in value_rows])
    if not columns:
        return None
    header_rows, caption_rows = _above(rows, first, columns)
    header = _header([rows[i] for i in header_rows], columns)
    caption = [squash(rows[i].segments[0].text) for i in caption_rows]
    caption += [
        note
        for i in header_rows
        for s in rows[i].segments
        if not _column_of(s, columns)
        and _SCALE_NOTE.fullmatch(note := squash(s.text))
        and not any(note in line for line in caption)
    ]
    section = next((line for line in caption if _STATEMENT.search(line)), None)
    table = UnruledTable(
        caption=caption,
        section=section,
        header=header,
        rows=_rows([rows[i] for i in body], columns),
        lines=[line for i in caption_rows + header_rows + body for line in rows[i].lines],
    )
    return table, end


def _columns(rows: list[Row]) -> list[tuple[float, float]]:
    """Column extents: the value segments' extents, merged where they overlap."""
    spans = sorted((s.x0, s.x1) for row in rows for s in _values(row))
    columns: list[list[float]] = []
    for x0, x1 in spans:
        if columns and x0 <= columns[-1][1] + 1.0:
            columns[-1][1] = max(columns[-1][1], x1)
        else:
            columns.append([x0, x1])
    return [(x0, x1) for x0, x1 in columns]


def _column_of(segment: Segment, columns: list[tuple[float, float]]) -> list[int]:
    """The columns a segment stands over (more than a third of the narrower of the two)."""
    found = []
    for number, (x0, x1) in enumerate(columns):
        overlap = min(x1, segment.x1) - max(x0, segment.x0)
        if overlap > 0.33 * min(x1 - x0, segment.x1 - segment.x0):
            found.append(number)
    return found


def _above(rows: list[Row], start: int, columns: list[tuple[float, float]]) -> tuple[list[int], list[int]]:
    """Header rows (segments over the value columns, no values but years) and caption rows (short
    single lines) directly above row `start`, each list top down."""
    header: list[int] = []
    index = start - 1
    left = columns[0][0]
    while index >= 0 and len(header) < _HEADER_ROWS:
        row, below = rows[index], rows[index + 1]
        if below.top - row.bottom > 2.0 * max(row.size, below.size):
            break
        over = [s for s in row.segments if s.x1 > left and _column_of(s, columns)]
        if not over or any(s.value and not _YEARISH.match(s.text) for s in over):
            break
        if any(len(s.text.split()) > 8 for s in row.segments):
            break
        header.insert(0, index)
        index -= 1
    caption: list[int] = []
    while index >= 0 and len(caption) < _CAPTION_ROWS:
        row, below = rows[index], rows[index + 1]
        if below.top - row.bottom > 2.0 * max(row.size, below.size) or len(row.segments) != 1:
            break
        text = squash(row.segments[0].text)
        if len(text) > 100 or text[-1:] in ".;:!?" or is_value(text):
            break
        caption.insert(0, index)
        index -= 1
    return header, caption


def _header(rows: list[Row], columns: list[tuple[float, float]]) -> list[str]:
    """Per column, the header segments standing over it alone, top down; a segment spanning
    several columns ("Years ended December 31") names a column only if nothing else does."""
    own: list[list[str]] = [[] for _ in columns]
    spanning: list[list[str]] = [[] for _ in columns]
    for row in rows:
        for segment in row.segments:
            over = _column_of(segment, columns)
            for number in over:
                (own if len(over) == 1 else spanning)[number].append(squash(segment.text))
    return [" ".join(o) or " ".join(s) for o, s in zip(own, spanning, strict=True)]


def _rows(rows: list[Row], columns: list[tuple[float, float]]) -> list[TableRow]:
    """Data rows with their labels; label-only rows become sub-headings or join the label below."""
    found: list[TableRow] = []
    subheading: str | None = None
    pending: list[Row] = []  # label-only rows: a sub-heading, or a label wrapped onto the next line
    for row in rows:
        values = _values(row)
        label = squash(" ".join(s.text for s in row.segments if s not in values))
        if not values:
            pending.append(row)
            continue
        box = row.box
        if pending:
            above = squash(" ".join(s.text for r in pending for s in r.segments))
            if label[:1].islower() or not label:
                label = squash(f"{above} {label}")
                box = union([box, *(r.box for r in pending)])
            else:
                subheading = above.rstrip(":")
            pending = []
        cells = [""] * len(columns)
        for segment in values:
            over = _column_of(segment, columns) or [
                min(range(len(columns)), key=lambda n: abs(columns[n][1] - segment.x1))
            ]
            cells[over[0]] = squash(f"{cells[over[0]]} {segment.text}")
        found.append(TableRow(label, cells, box, subheading))
    return found


def row_text(table: UnruledTable, row: TableRow) -> str:
    """`Caption: Row label: Header: value; Header: value` (a value without a header stands alone)."""
    pairs = "; ".join(
        f"{name}: {value}" if name else value
        for name, value in zip(table.header, row.values, strict=True)
        if value
    )
    parts = [" ".join(table.caption), row.label, pairs]
    return ": ".join(p for p in parts if p)
