"""The value a verified quote gives: the shortest span of it that answers the part, or for a table
row the cell at the column the part asks about. Nothing here calls a model, and nothing here makes
up a figure: what a part asks for is read from its words (`localqa.question.asked`); a table row
gives its cell (`localqa.values.cells`), a sentence its span of the wanted kind
(`localqa.values.spans`), or the phrase that says it (`localqa.values.phrases`).

Every value is a span of the quote (`is_span`): `localqa.derived.computing.figure_check` checks it again
before anything is shown. Serves every question kind that asks for a value; the answer stage
(`localqa.answers.answering`) calls `value_of` for each verified quote.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from localqa.language.text import squash
from localqa.question import cues
from localqa.question.asked import wanted
from localqa.types import Kind, Location, Passage, Value
from localqa.values.cells import cell_value, choose_cell, read_row
from localqa.values.fiscal import FiscalCalendar
from localqa.values.numbers import read_quantity
from localqa.values.phrases import cause_value, choose_phrase
from localqa.values.spans import choose_span


@dataclass(frozen=True)
class VisibleTable:
    """The rows of one table as the caller may see them, in row order, read whole from the index
    (not only the rows retrieval returned), and whether the table may run on past them: its last
    row is the last passage of a page, so the next page may continue it (`runs_on`)."""

    rows: tuple[Passage, ...] = ()
    runs_on: bool = False


class Context(Protocol):
    """What a value may also read beyond its quote: the filer's fiscal calendar (which year a
    column dated in January belongs to), the text around a passage, where a table states its
    scale ("(in millions)"), the whole table a row is in, which a list or a count of rows
    reads (`localqa.answers.listing`), the passages of a page, whose numbered entries a count
    reads (`localqa.answers.numbered`), a document's last page, where such a run ends, and the
    passages of a document that hold a word, where what an acronym stands for is looked for
    (`localqa.answers.definitions`). `localqa.library` reads each from the index, as the caller
    may."""

    def calendar(self, source: str) -> FiscalCalendar: ...

    def around(self, location: Location) -> Sequence[str]: ...

    def table(self, location: Location) -> VisibleTable: ...

    def passages(self, location: Location) -> Sequence[Passage]: ...

    def passages_containing(self, source: str, text: str, limit: int) -> Sequence[Passage]: ...

    def last_page(self, source: str) -> int | None: ...


class Alone:
    """No context: the quote and its heading path only; no table beyond the rows retrieved."""

    def calendar(self, source: str) -> FiscalCalendar:
        return FiscalCalendar()

    def around(self, location: Location) -> Sequence[str]:
        return [location.section] if location.section else []

    def table(self, location: Location) -> VisibleTable:
        return VisibleTable()

    def passages(self, location: Location) -> Sequence[Passage]:
        return ()

    def passages_containing(self, source: str, text: str, limit: int) -> Sequence[Passage]:
        return ()

    def last_page(self, source: str) -> int | None:
        return None


def value_of(part: str, quote: str, citation: Location, context: Context | None = None) -> Value | None:
    """The value `quote` (a verified whole sentence, or a whole table row, at `citation`) gives
    for the part, or None when the part asks for none or the quote gives no such span."""
    asked = wanted(part)
    context = context or Alone()
    if citation.kind is Kind.TABLE:
        row = read_row(quote)
        choice = choose_cell(part, row, asked, context.calendar(citation.source))
        if choice.cell is None:
            return None
        return cell_value(row, choice.cell, [quote, *context.around(citation)])
    if cues.asks_cause(part) is not None:
        return cause_value(quote)
    span = choose_span(part, quote, asked) or choose_phrase(part, quote, asked)
    if span is None:
        return None
    read = read_quantity(span.text) if span.kind not in ("time", "date", "phrase", "free") else None
    return Value(
        text=span.text,
        number=float(read[0].number) if read else None,
        unit=read[0].unit if read else None,
        scale=read[1] if read else None,
    )


def is_span(text: str, quote: str) -> bool:
    """Whether `text` is a span of `quote`, whitespace squashed (the value rule)."""
    return bool(squash(text)) and squash(text) in squash(quote)
