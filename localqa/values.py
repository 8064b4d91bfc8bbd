"""The value a verified quote gives: the shortest span of it that answers the part, or for a table
row the cell at the column the part asks about.

What a part asks for is read from its words (`Wanted`): the fiscal years it names (a year selects
a table's column), whether it asks for a quantity ("how many", "what percentage", "Answer in USD
millions"), a duration ("how long", "how many days"), a time or a date ("when"), and the scale and
rounding its instruction asks for. Nothing here calls a model, and nothing here makes up a figure:

- **A table row** (`Row`, read back from the row text extraction writes: `Caption: Row label:
  Header: value; Header: value`) gives the cell whose column header holds the fiscal year asked
  about (a header "2019", "Fiscal 2019", "May 31, 2019" or "Year Ended December 31, 2019", a date
  read with the filer's fiscal-year end: `FiscalCalendar`), or, when the part names no period,
  the one cell whose header shares a word with the part ("Loan limit" for "What is the loan limit
  for EQ-314?"). A cell the part itself names (EQ-314) is never the answer. Two columns for one
  year, or none chosen by the part's words, is ambiguous: no value, and the quote stands alone.
- **A sentence** gives the span of the wanted kind (an amount of money, a percentage, a number
  with its unit, a duration, a time or a range of times, a date, a place, who does it) closest to
  the words the sentence shares with the part; for a part that asks which thing, what it does or
  what an abbreviation stands for, the phrase that says it (`choose_phrase`); for a part that asks
  what drove or caused a change, the cause as written, from its cue ("due to", "driven by") to the
  sentence's end (`cause_value`, `localqa.causes`).

Every value is a span of the quote (`is_span`): `localqa.computing.figure_check` checks it again
before anything is shown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Protocol

from localqa import causes, periods
from localqa.lexicon import CONNECTIVES, DOERS, MONTHS, WEEKDAYS
from localqa.store.tokenizer import tokenizer
from localqa.text import identifiers, squash
from localqa.types import Kind, Location, Value
from localqa.words import ALNUM, WORD, is_name, singular

# --- numbers ------------------------------------------------------------------------------------

_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "ninety": 90, "hundred": 100, "once": 1, "twice": 2,
    "thrice": 3,
}  # fmt: skip
NUMBER_WORDS: tuple[str, ...] = tuple(_NUMBER_WORDS)  # a count may be written in words ("nine datasets")
_DASHES = "-\u2212\u2013\u2014"
# A number as tables and sentences write it: an optional currency sign, a sign or parentheses
# (a negative), digits with thousands separators, decimals, a percent sign.
_CELL_NUMBER = re.compile(
    rf"^(?P<open>\()?\s*(?P<currency>US\$|[$€£¥])?\s*(?P<sign>[{_DASHES}])?\s*(?P<currency2>[$€£¥])?\s*"
    r"(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)\s*(?P<percent>%)?\s*(?P<close>\))?\s*"
    r"(?P<percent2>%)?$"
)
_CURRENCIES = {"$": "USD", "US$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}


@dataclass(frozen=True)
class Figure:
    """A number read from its text: `number` with its sign, and the unit its text carries."""

    number: Decimal
    unit: str | None


_LEADING = re.compile(
    rf"^(?P<number>(?:US\$|[$€£¥])?\s?(?:\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?)|{'|'.join(_NUMBER_WORDS)})"
    r"(?:\s+|-)(?P<unit>[A-Za-z][A-Za-z ]{0,30})$",
    re.IGNORECASE,
)


def read_quantity(text: str) -> tuple[Figure, str | None] | None:
    """A number with the unit words after it ("45 minutes", "two calendar days", "$1.8 billion"):
    the figure and the scale word when the unit is one ("billions"); else `read_number`."""
    figure = read_number(text)
    if figure is not None:
        return figure, None
    if text.strip().lower() in _NUMBER_WORDS:
        return Figure(Decimal(_NUMBER_WORDS[text.strip().lower()]), None), None
    found = _LEADING.match(text.strip())
    if found is None:
        return None
    number = found["number"]
    lead = read_number(number) if number[0].isdigit() or number[0] in _CURRENCY_SIGNS else None
    if lead is None and number.lower() in _NUMBER_WORDS:
        lead = Figure(Decimal(_NUMBER_WORDS[number.lower()]), None)
    if lead is None:
        return None
    unit = found["unit"].strip()
    scale = _SCALE_WORDS.get(unit.lower())
    if scale is not None:
        return lead, scale
    return Figure(lead.number, lead.unit or unit), None


_CURRENCY_SIGNS = "$€£¥U"


def read_number(text: str) -> Figure | None:
    """The number a table cell or a figure's text states: "(1,577)" is -1577 (parentheses mark a
    negative), "$ 3.2" 3.2 dollars, "4.0%" 4.0 percent. None for anything else ("—", "n/a")."""
    found = _CELL_NUMBER.match(text.strip())
    if found is None:
        return None
    try:
        number = Decimal(found["digits"].replace(",", ""))
    except InvalidOperation:
        return None
    negative = bool(found["sign"]) or (bool(found["open"]) and bool(found["close"]))
    if bool(found["open"]) != bool(found["close"]):
        return None
    currency = found["currency"] or found["currency2"]
    unit = "%" if found["percent"] or found["percent2"] else _CURRENCIES.get(currency or "")
    return Figure(-number if negative else number, unit)


# --- scale --------------------------------------------------------------------------------------

SCALES = {"thousands": 3, "millions": 6, "billions": 9, "trillions": 12}
_SCALE_WORDS = {
    "thousand": "thousands", "million": "millions", "billion": "billions", "trillion": "trillions",
    "mn": "millions", "bn": "billions", "k": "thousands", "m": "millions", "b": "billions",
}  # fmt: skip
# How a table states its unit once: "(in millions)", "(Millions)", "(dollars in millions, except
# per share data)", "$ in millions", "(amounts in thousands)".
_STATED_SCALE = re.compile(
    r"(?:\(|\b(?:in|dollars in|amounts in|\$\s*in)\s+)(?:[a-z$ ]*\bin\s+)?"
    r"(?P<scale>thousands|millions|billions)\b",
    re.IGNORECASE,
)


def stated_scale(texts: Iterable[str]) -> str | None:
    """The scale a table's own text states ("(in millions)", "(Millions)"), the first found."""
    for text in texts:
        found = _STATED_SCALE.search(text)
        if found:
            return found["scale"].lower()
    return None


# --- what a part asks for -------------------------------------------------------------------------

_QUANTITY = re.compile(
    r"\bhow (?:many|much)\b|%|\b(?:percent(?:age)?s?|ratios?|rates?|margins?|amounts?|totals?|"
    r"averages?|sums?|number of|figures?|values?|in (?:usd|eur|gbp|us\$|dollars)|round(?:ed)?|"
    r"how (?:long|old|often|far)|fees?|charges?|charged|costs?|prices?|deposits?|fines?|salar(?:y|ies)|"
    r"caps?|allowances?|limits?|budgets?)\b",
    re.IGNORECASE,
)
_DURATION = re.compile(
    r"\bhow (?:long|often)\b|\bhow many (?:days|weeks|months|years|hours|minutes)\b|\bwithin how\b", re.I
)
_WHEN = re.compile(
    r"^\W*(?:when|what time|what date|until when|by when|on what date)\b|\bwhat (?:time|date)\b"
    r"|\b(?:opening|closing|office|desk)\s+hours\b|\bschedule\b|\b(?:on\s+)?which\s+(?:day|date|month)\b",
    re.IGNORECASE,
)
_WHO = re.compile(r"^\W*(?:who|by whom)\b", re.IGNORECASE)
_WHERE = re.compile(r"^\W*where\b|\bin which (?:room|place|building|floor|office)\b", re.IGNORECASE)
_ASKED_SCALE = re.compile(
    r"\b(?:in\s+)?(?:usd|us\$|\$|dollars|eur|gbp)?\s*(?P<scale>thousands|millions|billions)\b", re.I
)
_DECIMALS = re.compile(
    r"\bround(?:ed)?\b[^.?]*?\b(?:to\s+)?(?:the\s+)?(?:nearest\s+)?(?P<n>one|two|three|four|zero|no|\d)\s+"
    r"decimal(?:\s+places?|s)?\b|\bround(?:ed)?\b[^.?]*?\bwhole number\b",
    re.IGNORECASE,
)
_PERCENT_ASKED = re.compile(r"%|\bpercent(?:age|s)?\b|\bin units of percents?\b", re.I)


@dataclass(frozen=True)
class Wanted:
    """What a question part asks for, read from its words."""

    years: tuple[int, ...]  # fiscal years it names, in order
    quantity: bool  # a number ("how many", "what percentage", "in USD millions")
    duration: bool  # "how long", "how many days"
    when: bool  # a time or a date
    scale: str | None  # "millions" when it asks "in USD millions"
    decimals: int | None  # "round to one decimal place": 1
    percent: bool  # the answer is asked as a percentage
    where: bool = False  # a place ("where can ...")
    who: bool = False  # a person or a role ("who approves ...")


def wanted(part: str) -> Wanted:
    """What `part` asks for (see `Wanted`)."""
    scale = _ASKED_SCALE.search(part)
    return Wanted(
        years=tuple(m.year for m in periods.mentions(part) if m.quarter is None),
        quantity=_QUANTITY.search(part) is not None,
        duration=_DURATION.search(part) is not None,
        when=_WHEN.search(part) is not None,
        scale=scale["scale"].lower() if scale else None,
        decimals=_decimals(part),
        percent=_PERCENT_ASKED.search(part) is not None,
        where=_WHERE.search(part) is not None,
        who=_WHO.search(part) is not None,
    )


def _decimals(part: str) -> int | None:
    found = _DECIMALS.search(part)
    if found is None:
        return None
    n = found["n"]
    if n is None or n in ("no", "zero"):
        return 0
    return int(n) if n.isdigit() else _NUMBER_WORDS[n]


# --- table rows ---------------------------------------------------------------------------------


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
class FiscalCalendar:
    """How a filer names its fiscal years: the year a year-end date belongs to. `offset` is the
    fiscal year minus the calendar year of the end date for an end in January or early February
    (0 when a retailer names the year by its end, Walmart's FY2020 ended 2020-01-31; -1 when by
    its start, Foot Locker's fiscal 2022 ended 2023-01-28); None when not known, and then both
    readings count (`periods.fiscal_years_ending`)."""

    offset: int | None = None

    def years_ending(self, end: date) -> tuple[int, ...]:
        years = periods.fiscal_years_ending(end)
        if len(years) == 2 and self.offset is not None:
            return (end.year + self.offset,)
        return years


def calendar_for(period_end: date | None, period_label: str | None, years: Sequence[int]) -> FiscalCalendar:
    """The filer's calendar, from its document's period: a catalog label names the year of a dated
    end outright; else a year the question names that the end date may be called (the routing
    chose the document for it) fixes which reading the filer uses."""
    if period_end is None or len(periods.fiscal_years_ending(period_end)) < 2:
        return FiscalCalendar()
    label = periods.parse_label(period_label) if period_label else None
    if label is not None:
        return FiscalCalendar(label.year - period_end.year)
    named = [y for y in years if y in periods.fiscal_years_ending(period_end)]
    if named:
        return FiscalCalendar(max(named) - period_end.year)
    return FiscalCalendar()


_HEADER_DATE = re.compile(
    r"(?P<month>[A-Za-z]{3,9})\.?\s+(?P<day>\d{1,2}),?\s+(?P<year>(?:19|20)\d\d)", re.IGNORECASE
)
_HEADER_YEAR = re.compile(r"(?<![\d.,])(?:FY\s?|F|fiscal\s+(?:year\s+)?)?((?:19|20)\d\d)(?![\d,])", re.I)
_CHANGE = re.compile(r"\bchange\b|%|\bvs\.?\b|\bincrease\b|\bdecrease\b|\bvariance\b", re.IGNORECASE)


def header_years(header: str | None, calendar: FiscalCalendar) -> tuple[int, ...]:
    """The fiscal year(s) a column header names: "2019", "Fiscal 2019", "FY2019" name 2019; a date
    ("May 31, 2019", "Year Ended January 31, 2020") names the fiscal year ending on it, by the
    filer's calendar. () for a header of no year or of a change between years."""
    if not header or _CHANGE.search(header):
        return ()
    dates = list(_HEADER_DATE.finditer(header))
    if len(dates) == 1:
        end = _date(dates[0])
        if end is not None:
            return calendar.years_ending(end)
    years = {int(y) for y in _HEADER_YEAR.findall(header)}
    return tuple(years) if len(years) == 1 else ()


def _date(found: re.Match[str]) -> date | None:
    month = periods.month_number(found["month"])
    if month is None:
        return None
    try:
        return date(int(found["year"]), month, int(found["day"]))
    except ValueError:
        return None


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
        return CellChoice(None, "the question does not say which column of the row it asks about")
    return CellChoice(chosen[0])


# --- spans of a sentence --------------------------------------------------------------------------

_TIME_UNITS = (
    r"(?:calendar\s+|business\s+|working\s+)?(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?)"
)
_WORD_NUMBER = "|".join(_NUMBER_WORDS)
_AMOUNT = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_CLOCK = r"\d{1,2}(?::\d{2})\s*(?:[ap]\.?m\.?)?|\d{1,2}\s*[ap]\.?m\.?|noon|midnight"
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?"
    r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_SCALED = r"(?:\s?(?:thousand|million|billion|trillion|mn|bn)\b)?"
_WEEKDAY = r"(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day"
_QUALIFIER = (
    r"(?:(?:every|each|within|up\s+to|at\s+least|at\s+most|after|no\s+later\s+than|"
    r"(?:shorter|longer|more|less|fewer)\s+than|over|under)\s+)?"
)
# What a rate is per: "per night", "per travel day", "per week".
_PER = (
    r"(?:\s+per\s+(?:[a-z]+\s+)?(?:day|night|week|month|year|hour|guest|person|item|visit|trip|employee)s?\b"
    r"|\s+per\s+[a-z]+)?"
)
_SPANS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "time",
        # A recurring time: "the first Thursday of each month at 18:00", "Wednesdays at 10:30".
        re.compile(
            rf"\b(?:(?:every|each)\s+(?:{_MONTH}|year|quarter|month|week)\b"
            r"|\d{1,2}(?:st|nd|rd|th)\s+(?:day\s+)?of\s+(?:each|every|the)\s+month"
            r"|(?:first|last)\s+(?:working|business|calendar)\s+day(?:\s+of\s+(?:each|every|the)\s+month)?"
            rf"|(?:first|second|third|fourth|last)\s+{_WEEKDAY}\s+of\s+(?:each|every|the)\s+month"
            rf"|{_WEEKDAY}s?|weekdays|weekends)(?:\s+(?:at|from)\s+(?:{_CLOCK})(?:\s*(?:to|until|[-\u2013])\s*(?:{_CLOCK}))?)?",
            re.IGNORECASE,
        ),
    ),
    (
        "time",
        re.compile(
            rf"\b(?:from\s+)?(?:{_CLOCK})\s*(?:to|until|[-\u2013])\s*(?:{_CLOCK})|(?<![\d:])(?:{_CLOCK})(?![\d:])",
            re.IGNORECASE,
        ),
    ),
    (
        "date",
        re.compile(
            rf"\b{_MONTH}\.?\s+\d{{1,2}},?\s+(?:19|20)\d\d\b|\b\d{{1,2}}\s+{_MONTH}\.?,?\s+(?:19|20)\d\d\b"
            r"|\b(?:19|20)\d\d-\d\d-\d\d\b"
            rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\b|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?\b(?!,?\s+\d)"
        ),
    ),
    ("money", re.compile(rf"(?:US\$|[$€£¥])\s?(?:{_AMOUNT}){_SCALED}", re.IGNORECASE)),
    (
        "percent",
        re.compile(rf"(?<![\w.,])[{_DASHES}]?(?:{_AMOUNT})\s?(?:%|percent\b|per cent\b)", re.IGNORECASE),
    ),
    (
        "duration",
        re.compile(
            rf"(?<![\w.,]){_QUALIFIER}(?:{_AMOUNT}|{_WORD_NUMBER})(?:\s+|-)(?:{_TIME_UNITS})\b{_PER}",
            re.IGNORECASE,
        ),
    ),
    (
        "number",
        re.compile(
            rf"(?<![\w.,$€£¥-]){_QUALIFIER}(?:{_AMOUNT}|(?:{_WORD_NUMBER})(?=\s+[a-z])|once|twice|thrice)"
            rf"(?:\s?(?:thousand|million|billion|trillion)\b|\s+[a-z]+{_PER})?(?![\w.,]\d)",
            re.IGNORECASE,
        ),
    ),
    (
        "agent",  # who does something: "approved by the finance controller"
        re.compile(
            r"(?<=\bby\s)(?:the\s+)?[a-z][\w -]{1,40}?(?=\s*[.,;:!?]|\s+(?:and|or|but|if|when|for)\b|$)", re.I
        ),
    ),
    (
        "place",
        re.compile(
            r"\b(?:only\s+)?(?:in|at|on|from|inside|outside)\s+(?:the\s+)?[a-z][\w -]{1,40}?(?:\s+only)?"
            r"(?=\s*[.,;:!?]|\s+(?:and|or|but|if|when|while|during|for|before|after|unless)\b|$)",
            re.IGNORECASE,
        ),
    ),
)


@dataclass(frozen=True)
class Span:
    kind: str
    text: str
    start: int
    end: int


def spans(sentence: str, kinds: Sequence[str] | None = None) -> list[Span]:
    """Every value-shaped span of `sentence` of `kinds` (None: of any kind), the more specific
    kinds first where two overlap."""
    found: list[Span] = []
    for kind, pattern in _SPANS:
        if kinds is not None and kind not in kinds:
            continue
        for match in pattern.finditer(sentence):
            text = match.group(0).strip()
            start = match.start() + (len(match.group(0)) - len(match.group(0).lstrip()))
            if any(s.start < start + len(text) and start < s.end for s in found):
                continue
            found.append(Span(kind, text, start, start + len(text)))
    return sorted(found, key=lambda s: s.start)


def _wanted_kinds(asked: Wanted) -> tuple[str, ...]:
    if asked.who:
        return ("agent",)
    if asked.where:
        return ("place",)
    if asked.when:
        return ("time", "date", "duration")  # "When must I bring it back?": "for two calendar days"
    if asked.duration:
        return ("duration", "time")  # "how often": "every 90 days", "every March"
    if asked.percent:
        return ("percent",)
    if asked.quantity:
        return ("money", "percent", "duration", "number")
    return ()


# A doer is named in a few words: a longer phrase is a clause, not who did it.
_DOER_WORDS = 8


def names_a_doer(text: str) -> bool:
    """Whether `text` names a person, team or organisation as a "who" question's value: a name
    ("Marcus Webb", `words.is_name`; never a day or month, "on Sundays"), or a short phrase whose
    last word is a role or body (`lexicon.DOERS`: "the finance controller", "HR director"). A
    phrase that opens with a preposition says when, where or how, not who; anything else ("and
    returned within 60 days, the fee is refunded") names no doer, and gives no value."""
    found = WORD.findall(text)
    if not found or len(found) > _DOER_WORDS or found[0].lower() in _NOT_A_DOER:
        return False
    if any(
        is_name(word, first=index == 0) and singular(word.lower()) not in _DATED
        for index, word in enumerate(found)
    ):
        return True
    return singular(found[-1].lower()) in DOERS


# A phrase opening with one of these says when, where or how ("on Sundays", "within 3 days").
_NOT_A_DOER = frozenset(
    "on in at from during for to until till before after within with without under over between "
    "and or but if when".split()
)
_DATED = MONTHS | WEEKDAYS


def choose_span(part: str, sentence: str, asked: Wanted) -> Span | None:
    """The span of `sentence` that answers the part: of the kind it asks for, and, of several,
    the one nearest to the words the sentence shares with the part. A span the part itself
    states (a year, a figure it names) is not the answer."""
    kinds = _wanted_kinds(asked)
    if not kinds:
        return None
    asked_terms = set(tokenizer().terms(part))
    found = [
        s
        for s in spans(sentence, kinds)
        if s.text not in part and not set(tokenizer().terms(s.text)) <= asked_terms
    ]
    if asked.who:
        found = [s for s in found if names_a_doer(s.text)]
    if asked.duration:
        unit = re.search(r"how many (\w+)", part, re.IGNORECASE)
        if unit:
            found = [s for s in found if unit.group(1).lower().rstrip("s") in s.text.lower()] or found
    if not found:
        return None
    found.sort(key=lambda s: kinds.index(s.kind))
    first_kind = [s for s in found if s.kind == found[0].kind]
    anchors = [m.start() for m in _shared_words(part, sentence)]
    if not anchors or len(first_kind) == 1:
        return _counted(first_kind[0], part)
    return _counted(min(first_kind, key=lambda s: min(abs(s.start - a) for a in anchors)), part)


# --- a phrase: what a part asks that is no number, time or place ---------------------------------

# "Which flights ...", "What colour badge ...": the thing asked about, and whether a trait of it is.
_WHICH = re.compile(
    r"^\W*(?:which|what)\s+(?:(?P<trait>colou?rs?|kinds?|types?|sorts?|shapes?)\s+(?:of\s+)?)?"
    r"(?P<noun>[a-z][\w-]*)\s",
    re.IGNORECASE,
)
# "What does POL-21 require ...", "What must visitors do ...", "How are requests approved ...":
# an action or a rule, answered by the rest of the sentence after the words it shares with the part.
# "How should a damaged book be reported?" asks for a procedure: its quote stands alone, no value.
_ACTION = re.compile(
    r"^\W*(?:(?:what|when)\s+(?:does|do|did|must|should|shall|will|can|may|is|are|was|were)"
    r"|how\s+(?:is|are|was|were))\b",
    re.IGNORECASE,
)
_AUXILIARIES = frozenset(
    (
        "is are was were be been do does did must may might can could should shall will would has have had"
    ).split()
)
_DETERMINERS = frozenset("a an the their its his her each every".split())
# Words after "which" that do not name the thing asked about ("Which of the following ...").
_NOT_A_THING = _AUXILIARIES | _DETERMINERS | {"of", "one", "ones"}
_PREDICATE_LIMIT = 120  # characters: a longer rest of a sentence is not a value but the sentence


# "What does NARL stand for?", "the full form of ISRO": the words an abbreviation is short for.
_ABBREVIATION_ASKED = re.compile(
    r"\b(?P<short>[A-Z][A-Za-z0-9&]*[A-Z0-9])s?\b[^?]*?\b(?:stands?\s+for|short\s+for|abbreviat)"
    r"|\bfull\s+(?:form|name)\s+of\s+(?:the\s+)?(?P<short2>[A-Z][A-Za-z0-9&]*[A-Z0-9])\b"
)


def expansion(part: str, sentence: str) -> Span | None:
    """The words an abbreviation the part asks about is short for, where the sentence defines it
    ("National Atmospheric Research Laboratory (NARL)", "NARL (National ...)"): the shortest run
    of words whose initials, minor words aside, spell it (after Schwartz and Hearst's rule for
    abbreviation definitions in text)."""
    asked = _ABBREVIATION_ASKED.search(part)
    if asked is None:
        return None
    short = asked["short"] or asked["short2"]
    letters = [c.lower() for c in short if c.isalnum()]
    before = re.search(rf"\(\s*{re.escape(short)}s?\s*\)", sentence)
    if before is not None:
        words = list(ALNUM.finditer(sentence[: before.start()]))
        for length in range(1, min(len(letters) + 5, 2 * len(letters)) + 1):
            run = words[-length:]
            if len(run) < length:
                break
            if _spells(run, letters):
                return Span("phrase", sentence[run[0].start() : run[-1].end()], run[0].start(), run[-1].end())
    after = re.search(rf"\b{re.escape(short)}s?\s*\((?P<long>[^)]{{3,120}})\)", sentence)
    if after is not None and _spells(list(ALNUM.finditer(after["long"])), letters):
        return Span("phrase", after["long"], after.start("long"), after.end("long"))
    return None


def _spells(words: Sequence[re.Match[str]], letters: Sequence[str]) -> bool:
    """Whether the words' initials spell `letters`, connectives ("of", "and": `lexicon.CONNECTIVES`,
    the words an initialism skips) counted or not ("Department of Space" is DOS, "National
    Institute of Technology" NIT)."""
    if not words or words[0].group(0).lower() in CONNECTIVES:
        return False
    every = [w.group(0)[0].lower() for w in words]
    major = [w.group(0)[0].lower() for w in words if w.group(0).lower() not in CONNECTIVES]
    return list(letters) in (every, major)


def choose_phrase(part: str, sentence: str, asked: Wanted) -> Span | None:
    """The words of `sentence` that answer a part asking which thing or what trait (the modifier
    of the thing asked about: "flights *shorter than 6 hours*", "a *red badge*"), or what someone
    does or must do, how a thing is done, or a "when" whose sentence states no time (what the
    sentence says after the last word it shares with the part: "approved *within 3 working
    days*", "reimbursed *with the next monthly salary payment*"). Never for a quantity: a number
    is a span of its own kind or no value."""
    if asked.quantity or asked.percent or asked.duration:
        return None
    if _ABBREVIATION_ASKED.search(part):
        return expansion(part, sentence)
    which = _WHICH.match(part)
    if which and which["noun"].lower() not in _NOT_A_THING:
        return _modifier(which["noun"], sentence, trait=which["trait"] is not None)
    if asked.who:  # the rest of the sentence, only where it names who (`names_a_doer`)
        rest = _predicate(part, sentence)
        return rest if rest is not None and names_a_doer(rest.text) else None
    if _ACTION.match(part) or asked.when or asked.where:
        return _predicate(part, sentence)
    return None


def _modifier(noun: str, sentence: str, *, trait: bool) -> Span | None:
    """What the sentence says of `noun`: the words after it up to its verb ("flights shorter than
    6 hours are booked"), or, for a trait asked ("what colour"), the word before it ("red badge")."""
    stem = re.escape(noun.lower().rstrip("s"))
    named = re.search(rf"\b{stem}(?:e?s)?\b", sentence, re.IGNORECASE)
    if named is None:
        return None
    before = re.search(r"(\w[\w-]*)\s+$", sentence[: named.start()])
    if trait and before and before.group(1).lower() not in _DETERMINERS:
        return Span("phrase", sentence[before.start(1) : named.end()], before.start(1), named.end())
    verbs = "|".join(_AUXILIARIES)
    after = re.match(rf"\s+(?P<mod>(?!and\b|or\b)[^,;.]{{1,60}}?)\s+(?:{verbs})\b", sentence[named.end() :])
    if after is None or trait:
        return None
    start = named.end() + after.start("mod")
    return Span("phrase", after["mod"], start, start + len(after["mod"]))


def _predicate(part: str, sentence: str) -> Span | None:
    anchors = [m.end() for m in _shared_words(part, sentence)]
    if not anchors:
        return None
    rest = sentence[anchors[-1] :]
    text = rest.strip(" ,;:").rstrip(" .!?;:")
    if not text or len(text) > _PREDICATE_LIMIT or not re.search(r"\w", text):
        return None
    start = anchors[-1] + rest.index(text)
    return Span("phrase", text, start, start + len(text))


# Words that are the unit of the number before them: kept with it whatever the part asks.
UNIT_WORDS = frozenset(
    "cent cents dollar dollars euro euros pound pounds yen usd eur gbp percent item items page pages "
    "book books copy copies person people visitor visitors seat seats time times km kilometres "
    "kilometers mile miles metre metres meter meters kg kilograms gram grams litre litres liter liters "
    "tonne tonnes ton tons".split()
)


def _counted(span: Span, part: str) -> Span:
    """A plain number keeps the words after it when they are its unit ("20 cents per day") or what
    the part counts ("1,234 tweets" for "how many tweets"): "nine widely-used datasets" gives
    "nine". A qualifier before it stays ("up to 5")."""
    if span.kind != "number":
        return span
    found = re.match(
        rf"(?P<number>.*?(?:\d[\d,.]*|\b(?:{_WORD_NUMBER}|once|twice|thrice)\b))(?P<rest>.*)$",
        span.text,
        re.I,
    )
    if found is None or not found["rest"].strip():
        return span
    number, word = found["number"], found["rest"].split()[0]
    asked = set(tokenizer().terms(part))
    if word.lower() in UNIT_WORDS or word.lower() in _SCALE_WORDS or set(tokenizer().terms(word)) & asked:
        return span
    return Span(span.kind, number, span.start, span.start + len(number))


def _shared_words(part: str, sentence: str) -> list[re.Match[str]]:
    """The words of the sentence it shares with the part, where they stand."""
    terms = set(tokenizer().terms(part))
    return [m for m in re.finditer(r"\w+", sentence) if set(tokenizer().terms(m.group(0))) & terms]


# --- the value of an answer -----------------------------------------------------------------------


class Context(Protocol):
    """What a value may also read beyond its quote: the filer's fiscal calendar (which year a
    column dated in January belongs to), and the text around a passage, where a table states its
    scale ("(in millions)"). `localqa.library` reads both from the index, as the caller may."""

    def calendar(self, source: str) -> FiscalCalendar: ...

    def around(self, location: Location) -> Sequence[str]: ...


class Alone:
    """No context: the quote and its heading path only."""

    def calendar(self, source: str) -> FiscalCalendar:
        return FiscalCalendar()

    def around(self, location: Location) -> Sequence[str]:
        return [location.section] if location.section else []


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
    if causes.asks_cause(part) is not None:
        return cause_value(quote)
    span = choose_span(part, quote, asked) or choose_phrase(part, quote, asked)
    if span is None:
        return None
    read = read_quantity(span.text) if span.kind not in ("time", "date", "phrase") else None
    return Value(
        text=span.text,
        number=float(read[0].number) if read else None,
        unit=read[0].unit if read else None,
        scale=read[1] if read else None,
    )


def cause_value(sentence: str) -> Value | None:
    """The cause a sentence states, as written (`causes.cause_span`: "driven by higher net
    revenue ..."), for a part that asks what drove or caused a change; None when it states none."""
    where = causes.cause_span(sentence)
    return None if where is None else Value(text=sentence[where[0] : where[1]])


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


def is_span(text: str, quote: str) -> bool:
    """Whether `text` is a span of `quote`, whitespace squashed (the value rule)."""
    return bool(squash(text)) and squash(text) in squash(quote)
