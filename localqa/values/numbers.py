"""Numbers as documents write them: a table cell's or a figure's text read as a number with its
sign and unit ("(1,577)" is -1577, "$ 3.2" 3.2 dollars, "4.0%" 4.0 percent), a number with the unit
words after it ("45 minutes", "two calendar days", "$1.8 billion"), and the scale a table states
once ("(in millions)").

Serves every question whose answer is a quantity: "how many", "what percentage", an amount of
money, a duration; the derived figures (`localqa.derived.computing`) read their operands with the same
rules, so a value and a computed figure agree on what a cell says.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from localqa.language.lexicon import NUMBER_WORD_VALUES

NUMBER_WORDS: tuple[str, ...] = tuple(NUMBER_WORD_VALUES)  # a count may be written in words ("nine datasets")
DASHES = "-\u2212\u2013\u2014"  # the signs read as a minus (a negative percentage span too)
# A number as tables and sentences write it: an optional currency sign, a sign or parentheses
# (a negative), digits with thousands separators, decimals, a percent sign.
_CELL_NUMBER = re.compile(
    rf"^(?P<open>\()?\s*(?P<currency>US\$|[$€£¥])?\s*(?P<sign>[{DASHES}])?\s*(?P<currency2>[$€£¥])?\s*"
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
    rf"^(?P<number>(?:US\$|[$€£¥])?\s?(?:\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?)|{'|'.join(NUMBER_WORD_VALUES)})"
    r"(?:\s+|-)(?P<unit>[A-Za-z][A-Za-z ]{0,30})$",
    re.IGNORECASE,
)


def read_quantity(text: str) -> tuple[Figure, str | None] | None:
    """A number with the unit words after it ("45 minutes", "two calendar days", "$1.8 billion"):
    the figure and the scale word when the unit is one ("billions"); else `read_number`."""
    figure = read_number(text)
    if figure is not None:
        return figure, None
    if text.strip().lower() in NUMBER_WORD_VALUES:
        return Figure(Decimal(NUMBER_WORD_VALUES[text.strip().lower()]), None), None
    found = _LEADING.match(text.strip())
    if found is None:
        return None
    number = found["number"]
    lead = read_number(number) if number[0].isdigit() or number[0] in _CURRENCY_SIGNS else None
    if lead is None and number.lower() in NUMBER_WORD_VALUES:
        lead = Figure(Decimal(NUMBER_WORD_VALUES[number.lower()]), None)
    if lead is None:
        return None
    unit = found["unit"].strip()
    scale = SCALE_WORDS.get(unit.lower())
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

# The power of ten of each scale, and the words that name one ("$1.8 billion", "5 mn").
SCALES = {"thousands": 3, "millions": 6, "billions": 9, "trillions": 12}
SCALE_WORDS = {
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
