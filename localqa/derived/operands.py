"""Reading a derived figure's operands: each line item's candidate rows (retrieved by the row labels
it is reported under, `search_texts`), ranked by how surely each is the item's row, and the cell at
each fiscal year the figure needs (`read_operands`); for an item no row gives, a sentence that
states its amount for the year ("... totaled $396 million in 2018, $411 million in 2017")."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from localqa.answers import sentences
from localqa.derived.figures import FigurePlan, Need
from localqa.derived.glossary import Item, contains, fold
from localqa.language.statements import STATEMENT_WORDS, UNRECOGNISED, Statement, recognise
from localqa.language.tokenizer import tokenizer
from localqa.question.asked import wanted
from localqa.types import Candidate, Kind, Location, Value
from localqa.values.cells import cell_value, choose_cell, read_row
from localqa.values.choosing import Context
from localqa.values.numbers import read_number, read_quantity

# What a statement's title says, searched with a line item: a row label alone shares its words
# with dozens of rows in notes and tables of other statements.
_STATEMENT_TITLES = {
    "balance sheet": "balance sheets financial position",
    "income statement": "statements of operations income earnings",
    "cash flow": "statements of cash flows",
    "equity": "statements of shareholders equity",
}
# Row labels searched for at most per line item (its `rows`, in order).
MAX_ROW_SEARCHES = 8


def search_texts(item: Item, statements: Sequence[str] = ()) -> list[str]:
    """What is searched for a line item, in order: each row label it is reported under, with the
    title words of the statement it is read from, then alone (statement captions share those words
    with every row of every statement, which can crowd the row out)."""
    statement = item.statement or (statements[0] if statements else None)
    title = _STATEMENT_TITLES.get(statement or "", "")
    texts = [text for row in item.rows[:MAX_ROW_SEARCHES] for text in (f"{row} {title}".strip(), row)]
    return list(dict.fromkeys(texts))


@dataclass(frozen=True)
class Found:
    """An operand read: the passage it is read from (its candidate), the verified quote (the whole
    row, or the sentence of a prose passage) and the value at the need's year, a span of it."""

    need: Need
    candidate: Candidate
    value: Value
    quote: str
    statement: Statement = UNRECOGNISED  # its table's (`statements.recognise`); prose: none


@dataclass(frozen=True)
class _Row:
    """A candidate row of a line item, with what ranks it."""

    candidate: Candidate
    level: int  # `row_match`
    alias: int
    statement: int  # `in_statement`
    order: int
    heading: str  # `heading_of`
    recognised: Statement  # `statement_of`

    @property
    def page(self) -> tuple[str, int]:
        return self.candidate.location.source, self.candidate.location.page or 0


def read_operands(
    figure: FigurePlan, candidates: Mapping[str, Sequence[Candidate]], context: Context
) -> list[Found]:
    """Each need's cell, read from the best row among its item's `candidates` (by item key) that
    has a number at the need's year. Rows rank by how exactly their label is the item's
    (`row_match`), how many of the figure's items have rows on the same page (a statement lists them
    together; a statement's title is not always read as its heading; after how well the period
    their heading names fits the need's, `period_fit`), whether they sit in the
    statement the item is read from (`in_statement`), an earlier row label of the item, then the
    earlier page (a filing's own statements come before its subsidiaries') and retrieval's order.
    After the label, the period and the adjusted measure, a row of the registrant's own
    statements ranks first; a row of another entity's, a segment's, a quarter's, a summary's or an
    adjusted measure's table is read only when the question names it (`FigurePlan.scopes`,
    `statement_of`): a guarantor group's "Net sales 377" is labelled as exactly as the
    consolidated "Net sales 14,694", or more so."""
    # Only the figure's own items: the candidates may hold another figure's (two items compared).
    keys = {need.item.key for need in figure.needs}
    recognised: dict[
        tuple[str, int | None, int | None, str | None], Statement
    ] = {}  # each table's, read once
    rows = {
        key: _rows(figure, key, found, context, recognised)
        for key, found in candidates.items()
        if key in keys
    }
    stated: dict[str, dict[int, Stated]] = {}  # an item's amounts by year in prose, read once
    support: dict[tuple[str, int], int] = {}
    for found in rows.values():
        for page in {r.page for r in found if r.level >= 2}:
            support[page] = support.get(page, 0) + 1
    read = []
    for need in figure.needs:
        ranked = sorted(
            rows.get(need.item.key, []),
            key=lambda r: (
                -r.level,
                -period_fit(need.quarter, r.heading),
                -as_reported(r.heading),
                not r.recognised.primary,
                -support.get(r.page, 0),
                -r.statement,
                r.alias,
                r.page[1],
                r.order,
            ),
        )
        chosen = next((f for r in ranked if (f := _cell(need, r, context)) is not None), None)
        if chosen is None:
            if need.item.key not in stated:
                stated[need.item.key] = _stated(need.item, candidates.get(need.item.key, []))
            said = stated[need.item.key].get(need.year)
            chosen = None if said is None else Found(need, *said)
        if chosen is not None:
            read.append(chosen)
    return read


def _rows(
    figure: FigurePlan,
    key: str,
    candidates: Sequence[Candidate],
    context: Context,
    recognised: dict[tuple[str, int | None, int | None, str | None], Statement],
) -> list[_Row]:
    item = next(n.item for n in figure.needs if n.item.key == key)
    preferred = [item.statement] if item.statement else list(figure.statements)
    found = []
    for order, candidate in enumerate(candidates):
        if candidate.location.kind is not Kind.TABLE:
            continue
        label = read_row(candidate.text).label or ""
        heading = heading_of(candidate, label)
        if item.instant and states_a_change(label, heading):
            continue
        match = row_match(item, label)
        if match is None:
            continue
        at = candidate.location
        # A table's rows may sit under headings of their own ("Adjusted earnings ..." below the reported).
        table = (at.source, at.page, at.table, at.section)
        if table not in recognised:
            recognised[table] = statement_of(at, over_row(candidate.text, label), context)
        if recognised[table].scope not in figure.scopes:
            continue
        statement = in_statement(candidate, preferred, context)
        found.append(_Row(candidate, match[0], match[1], statement, order, heading, recognised[table]))
    return found


def over_row(text: str, label: str) -> list[str]:
    """What a row's text says over its cells: its caption (the text before its label) and its
    column headers, where an extraction may have read the statement's title ("Total net revenues:
    CONSOLIDATED STATEMENTS OF OPERATIONS (Amounts in millions) 2019: 6,489")."""
    # The label where it starts the row's cells ("Net sales: 2022: ..."), not where a title holds
    # its words ("Net sales by reportable segment (In millions): Net sales: ...").
    at = text.find(f"{label}:") if label else -1
    at = text.find(label) if at < 0 and label else at
    headers = [c.header for c in read_row(text).cells if c.header]
    return [text[:at] if at > 0 else "", *dict.fromkeys(headers)]


def statement_of(location: Location, over: Sequence[str], context: Context) -> Statement:
    """The statement a table row at `location` sits in (`statements.recognise`), from the words
    over it, nearest first: its caption and column headers (`over_row`) and the lines of prose
    above its table on its page; then its heading path and theirs."""
    lines: list[str] = []
    paths: list[str] = []
    for passage in context.passages(location):
        if passage.kind is Kind.TABLE and passage.table == location.table:
            break
        paths += _path(passage.section)
        if passage.kind is not Kind.TABLE:
            lines.append(passage.text)
    # The table's nearest heading is its own (often its title); the rest of its path runs on.
    own, *outer = [*reversed(_path(location.section))] or [""]
    headings = [*outer, *reversed(dict.fromkeys(paths))]
    return recognise([*over, own, *reversed(lines)], headings)


def _path(section: str | None) -> list[str]:
    """A heading path's headings, outermost first ("A > B > C")."""
    return [h for h in (section or "").split(" > ") if h.strip()]


# How a table's heading names the period its columns cover: a quarter by its number, a quarter
# unnumbered, or a span longer than a quarter and shorter than a year.
_QUARTER_NAMED = {
    1: r"\bQ1\b|\b1Q\b|\bfirst\s+quarter",
    2: r"\bQ2\b|\b2Q\b|\bsecond\s+quarter",
    3: r"\bQ3\b|\b3Q\b|\bthird\s+quarter",
    4: r"\bQ4\b|\b4Q\b|\bfourth\s+quarter",
}
_A_QUARTER = re.compile(
    r"\bthree\s+months\b|\bquarters?\s+ended\b|" + "|".join(_QUARTER_NAMED.values()), re.I
)
_PART_OF_A_YEAR = re.compile(
    r"\b(?:six|nine)\s+months\b|\byear[- ]to[- ]date\b|\bH[12]\b|\b(?:first|second)\s+half\b", re.I
)
_WHOLE_YEAR = re.compile(r"\bfull[- ]year\b|\btwelve\s+months\b|\bfiscal\s+year\b|\bannual\b", re.I)


def period_fit(quarter: int | None, heading: str) -> int:
    """How well the period a row's heading names fits a need's: for a year (`quarter` None), 0
    when the heading names a quarter or part of a year and not the whole year ("REGIONAL SALES >
    Q4 % Change" beside "Full Year % Change"), else 1; for a quarter, 2 when it names that
    quarter or "three months", 0 when it names another quarter or a longer span ("SIX MONTHS"),
    else 1. Serves figures at a year read from reports that also give a quarter's columns, and
    comparisons of one quarter against the same quarter a year before."""
    if quarter is None:
        partial = _A_QUARTER.search(heading) or _PART_OF_A_YEAR.search(heading)
        return 0 if partial and not _WHOLE_YEAR.search(heading) else 1
    if re.search(_QUARTER_NAMED[quarter], heading, re.I):
        return 2
    if _A_QUARTER.search(heading) and not any(
        re.search(_QUARTER_NAMED[q], heading, re.I) for q in _QUARTER_NAMED if q != quarter
    ):
        return 2
    if _A_QUARTER.search(heading) or _PART_OF_A_YEAR.search(heading) or _WHOLE_YEAR.search(heading):
        return 0
    return 1


# A heading over a measure the filer adjusts: its rows repeat the reported items' labels ("Net
# earnings" under "Adjusted earnings before provision for taxes and net earnings").
_ADJUSTED = re.compile(r"\badjusted\b|\bnon[- ]?gaap\b|\bpro\s+forma\b|\bexcluding\b", re.I)


def as_reported(heading: str) -> int:
    """1 for a row under a heading of the reported figures, 0 under one of an adjusted measure
    (`_ADJUSTED`): a line item is the reported one unless the part defines it otherwise."""
    return 0 if _ADJUSTED.search(heading) else 1


# Where a row states how a balance changed over the year rather than the balance at its end: the
# working-capital rows of a statement of cash flows ("Changes in certain working capital items:
# Inventories 423"), under a heading that says so, or a row label that does ("(Increase) decrease in
# inventories"). A row that names the balance at a date ("Cash at end of year") still states one.
_CHANGE_HEADING = re.compile(
    r"\bchanges?\s+in\b|\badjustments\s+to\s+reconcile\b|\bcash\s+flows?\s+(?:from|used|provided)\b|"
    r"\b(?:operating|investing|financing)\s+activities\b|" + STATEMENT_WORDS["cash flow"],
    re.IGNORECASE,
)
_CHANGE_LABEL = re.compile(r"\bchanges?\s+in\b|\bincrease\b|\bdecrease\b", re.IGNORECASE)
_BALANCE_AT = re.compile(
    r"\b(?:end|beginning|start)\s+of\s+(?:the\s+)?(?:fiscal\s+)?(?:year|period|quarter)\b", re.I
)


def states_a_change(label: str, section: str) -> bool:
    """Whether a row states a change over the year, not a balance at a date (`_CHANGE_HEADING`,
    `_CHANGE_LABEL`): an instant item (a balance sheet's inventory, payables, debt) is never read
    from one. Serves every figure with a balance among its operands ("days payable outstanding",
    "working capital"): 423, how much a filer's inventories fell, is not its inventories."""
    if _BALANCE_AT.search(label):
        return False
    return _CHANGE_LABEL.search(label) is not None or _CHANGE_HEADING.search(section) is not None


def heading_of(candidate: Candidate, label: str) -> str:
    """What stands over a row: its heading path and its table's caption (the row's text before its
    label: "FOURTH QUARTER SALES BY REGION (three months ended) (In millions)"), never its cells,
    whose headers may name other periods ("Q4 2021")."""
    at = candidate.text.find(label) if label else -1
    caption = candidate.text[:at] if at > 0 else ""
    return f"{candidate.location.section or ''} {caption}".strip()


def _cell(need: Need, row: _Row, context: Context) -> Found | None:
    found = read_cell(need, row.candidate, context)
    return None if found is None else Found(need, found.candidate, found.value, found.quote, row.recognised)


def read_cell(need: Need, candidate: Candidate, context: Context) -> Found | None:
    """The cell of a table row at the need's year (a quarter at the year its report dates its
    columns in), with a number; None when the row has none there."""
    read = read_row(candidate.text)
    calendar = context.calendar(candidate.location.source)
    # A quarter is read at the year its report dates its columns in (`FiscalCalendar.quarter_shift`).
    year = need.year - calendar.quarter_shift if need.quarter else need.year
    choice = choose_cell("", read, wanted(""), calendar, year=year)
    if choice.cell is None or read_number(choice.cell.text) is None:
        return None
    value = cell_value(read, choice.cell, [candidate.text, *context.around(candidate.location)])
    return Found(need, candidate, value, candidate.text)


# An amount a sentence gives for a year: "$396 million in 2018", "$1.2 billion for fiscal 2019".
_AMOUNT_IN_YEAR = re.compile(
    r"(?P<amount>(?:US\$|[$€£¥])\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:thousand|million|billion)\b)?)"
    r"\s+(?:in|for|during)\s+(?:fiscal\s+(?:year\s+)?)?(?P<year>(?:19|20)\d\d)\b",
    re.IGNORECASE,
)
# A sentence that says an item rose or fell by an amount states no amount of the item itself.
_CHANGE = re.compile(
    r"\b(?:increas|decreas|grew|grow|rose|rise|fell|fall|declin|chang|higher|lower|reduc|improv)", re.I
)


# An amount a sentence states for a year: the passage, the value (a span of the sentence) and the
# sentence, the operand's quote.
Stated = tuple[Candidate, Value, str]


def _stated(item: Item, candidates: Sequence[Candidate]) -> dict[int, Stated]:
    """The item's amount for each year, from the first prose sentence that states it: one that
    names the item by one of its row labels (every word of it) and gives amounts by year without
    speaking of a change. Read only where no row gives the cell: a statement's row is the surer
    source."""
    labels = [set(tokenizer().terms(row)) for row in item.rows]
    by_year: dict[int, Stated] = {}
    for candidate in candidates:
        # Only a passage that gives an amount for a year is split into sentences.
        if candidate.location.kind is Kind.TABLE or not _AMOUNT_IN_YEAR.search(candidate.text):
            continue
        for sentence in sentences.units(candidate.text, candidate.location.kind):
            if _CHANGE.search(sentence):
                continue
            terms = set(tokenizer().terms(sentence))
            if not any(label and label <= terms for label in labels):
                continue
            for found in _AMOUNT_IN_YEAR.finditer(sentence):
                read = read_quantity(found["amount"])
                if read is None or int(found["year"]) in by_year:
                    continue
                figure, scale = read
                value = Value(
                    text=found["amount"], number=float(figure.number), unit=figure.unit, scale=scale
                )
                by_year[int(found["year"])] = (candidate, value, sentence)
    return by_year


# A row label may carry this many words beyond the item's label ("Total consolidated net
# revenues"); more, and it is another row that mentions the item ("Net effect from recognition of
# deferred net revenues").
EXTRA_WORDS = 2


def row_match(item: Item, label: str) -> tuple[int, int] | None:
    """How a row label names the item: (3, i) when it is the item's i-th row label, (2, i) when it
    starts with it, (1, i) when it holds it among at most `EXTRA_WORDS` more words; None when it
    names it in none of these ways, or names one of the item's exclusions ("noncontrolling")."""
    folded = fold(label)
    if any(contains(folded, word) for word in item.exclude):
        return None
    best: tuple[int, int] | None = None
    for index, row in enumerate(item.rows):
        wanted = fold(row)
        level = 0
        if folded == wanted:
            level = 3
        elif folded.startswith(wanted + " "):
            level = 2
        elif contains(folded, wanted) and len(folded.split()) - len(wanted.split()) <= EXTRA_WORDS:
            level = 1
        if level and (best is None or level > best[0]):
            best = (level, index)
    return best


def in_statement(candidate: Candidate, statements: Sequence[str], context: Context) -> int:
    """How surely a row sits in one of `statements`: 2 when its table's caption or its heading
    path names it, 1 when only a short line of its page does (a title the heading path missed, or
    a line of a page that discusses the statement), 0 when nothing does."""

    def names(texts: Iterable[str]) -> bool:
        return any(
            re.search(STATEMENT_WORDS[s], text, re.IGNORECASE)
            for s in statements
            if s in STATEMENT_WORDS
            for text in texts
        )

    if names([candidate.location.section or "", candidate.text]):
        return 2
    return 1 if names(t for t in context.around(candidate.location) if len(t) <= 120) else 0
