"""What a case expects of an answer's value, and whether the answer's `Value` meets it.

A case states its value as text, a number or a list (`cases.toml`: `value`, with `tolerance`,
`decimals`, `scale` and `unit` for a number):

- **text** ("45 minutes"): the answer's value holds it, case, spacing, quotes and a parenthesised
  aside left out, and little else: at most twice its length. A reader asked for the value, not
  the sentence around it.
- **number** (5409): the answer's number, read in the case's `scale` ("millions"), is within
  `tolerance` of it (relative, default 1 %; 0 asks for the exact number), or equals it once
  rounded to the case's `decimals` (the rounding the question states). An answer whose value has
  no scale is read in the case's. A figure written in parentheses is compared with its sign and
  by its size: "(800)" is the -800 of a net loss, and "(1,577)" the 1,577 of a capital
  expenditure (the question asks for the amount, the parentheses say which way it flowed). With
  `unit = "%"` a ratio matches too (0.019 is 1.9 %), as a percentage matches a case that states a
  plain number; any other unit must be the answer's (its unit or its text).
- **list** (["GS5002", "GS6001"]): as many items as the case lists, each matching one item of the
  answer's value by the rules above, in any order; the items of a list answer (`value.items`) as
  listed, else those its text separates.

The same rules grade the dev-set benchmarks (`benchmarks/pdfqa.py`): FinanceBench's "$1577.00"
asked "in USD millions" is 1577 in millions; MMLongBench-Doc's formats map to these rules (Int:
tolerance 0; Float: the default 1 %, a percentage or its ratio; Str and List: normalised text).
"""

from __future__ import annotations

import re
import unicodedata
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from pydantic import model_validator

from localqa.language.text import squash
from localqa.types import Frozen, Value

DEFAULT_TOLERANCE = 0.01
PERCENT = "%"
# The words a table or a question gives its scale in ("in millions", "(Millions)", "USD bn").
SCALES: dict[str, int] = {
    "thousand": 10**3,
    "thousands": 10**3,
    "k": 10**3,
    "million": 10**6,
    "millions": 10**6,
    "mn": 10**6,
    "mm": 10**6,
    "billion": 10**9,
    "billions": 10**9,
    "bn": 10**9,
    "trillion": 10**12,
    "trillions": 10**12,
}
# How long a value may be beside the text it must hold: a value, not the sentence around it.
TEXT_LENGTH_FACTOR = 2

_NUMBER = re.compile(
    r"(?P<open>\()?\s*(?P<sign>[-\u2212])?\s*\$?\s*(?P<digits>\d[\d,]*(?:\.\d+)?|\.\d+)\s*%?\s*(?P<close>\))?"
)
_ASIDE = re.compile(r"\s*\([^)]*\)")
# Spacing beside a comma, semicolon, colon or slash is spacing too: "Food Safety,Nutrition,and
# Distribution" holds the contents page's "Food Safety, Nutrition, and Distribution".
_PUNCTUATION_SPACING = re.compile(r"\s*([,;:/])\s*")
_DASHES = str.maketrans({"\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-"})
_ITEM_BREAK = re.compile(r"\s*(?:[;\n\u2022]|,(?!\d{3}\b))\s*")
_ITEM_JOINER = re.compile(r"^(?:and|or)\s+", re.IGNORECASE)


class ExpectedValue(Frozen):
    """A case's value: `text`, `number` or `items` (exactly one), and for numbers the tolerance,
    the stated rounding, the scale and the unit. Built from a case by `localqa.evaluate.suite`."""

    text: str | None = None
    number: float | None = None
    items: tuple[str | float, ...] | None = None
    tolerance: float = DEFAULT_TOLERANCE
    decimals: int | None = None
    scale: str | None = None
    unit: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> ExpectedValue:
        if [self.text, self.number, self.items].count(None) != 2:
            raise ValueError("an expected value is text, a number or a list: exactly one")
        return self

    def describe(self) -> str:
        if self.text is not None:
            return repr(self.text)
        if self.items is not None:
            return "[" + ", ".join(_shown_item(i) for i in self.items) + "]"
        return _number_shown(self)


class ValueVerdict(Frozen):
    """Whether an answer's value meets the case's, and what was compared (shown when it does not)."""

    correct: bool
    why: str


def scale_factor(scale: str | None) -> int | None:
    """The multiplier a scale word stands for ("millions" 10**6), 1 for no scale, None for a word
    that is no scale."""
    if scale is None:
        return 1
    words = squash(scale).casefold().strip("()").removeprefix("in ").split()
    found = [SCALES[w] for w in words if w in SCALES]
    return found[0] if found else None


def judge(expected: ExpectedValue, value: Value | None) -> ValueVerdict:
    """Whether `value` (an answer's, None when it gave none) meets `expected`."""
    if value is None:
        return ValueVerdict(correct=False, why=f"no value shown; expected {expected.describe()}")
    if expected.text is not None:
        return _verdict(_text_matches(expected.text, value.text), repr(value.text), expected)
    if expected.number is not None:
        if value.number is None:
            return ValueVerdict(
                correct=False, why=f"{value.text!r} is no number; expected {expected.describe()}"
            )
        return _verdict(_number_matches(expected, value), _value_shown(value), expected)
    # A list answer's items are compared as listed (`value.items`), not split back out of its text.
    listed = [i.text for i in value.items] if value.items is not None else items_of(value.text)
    return _verdict(_items_match(expected, listed), repr(value.text), expected)


def _verdict(correct: bool, shown: str, expected: ExpectedValue) -> ValueVerdict:
    relation = "meets" if correct else "does not meet"
    return ValueVerdict(correct=correct, why=f"{shown} {relation} {expected.describe()}")


# --- text -----------------------------------------------------------------------------------------


def normalised(text: str) -> str:
    """Text as compared: NFKC, case folded, dashes as "-", whitespace squashed (none beside a comma,
    semicolon, colon or slash), a parenthesised aside, surrounding quotes and punctuation, a leading
    "$" and a trailing "%" left out."""
    text = unicodedata.normalize("NFKC", text).translate(_DASHES).casefold()
    text = _PUNCTUATION_SPACING.sub(r"\1", squash(_ASIDE.sub("", text)))
    text = text.strip(" \"'`\u2018\u2019\u201c\u201d.,;:!?[]")
    return text.removeprefix("$").removesuffix("%").strip()


def _text_matches(expected: str, shown: str) -> bool:
    wanted, got = normalised(expected), normalised(shown)
    if not wanted or len(got) > TEXT_LENGTH_FACTOR * len(wanted):
        return False
    return re.search(rf"(?<!\w){re.escape(wanted)}(?!\w)", got) is not None


# --- numbers --------------------------------------------------------------------------------------


def _number_matches(expected: ExpectedValue, value: Value) -> bool:
    assert expected.number is not None and value.number is not None
    if not _unit_matches(expected.unit, value):
        return False
    wanted_scale = scale_factor(expected.scale) or 1
    # An answer without a scale is read in the case's: "1,577" asked in USD millions.
    got_scale = scale_factor(value.scale) if value.scale else None
    got = Decimal(repr(value.number)) * Decimal(got_scale or wanted_scale) / Decimal(wanted_scale)
    readings = [got, abs(got)] if _parenthesised(value.text) else [got]
    return any(
        _close(Decimal(repr(expected.number)), candidate, expected)
        for reading in readings
        for candidate in _percent_readings(reading, expected.unit == PERCENT, _is_percent(value))
    )


def _close(wanted: Decimal, got: Decimal, expected: ExpectedValue) -> bool:
    if abs(got - wanted) <= Decimal(repr(expected.tolerance)) * abs(wanted):
        return True
    if expected.decimals is None:
        return False
    step = Decimal(1).scaleb(-expected.decimals)
    return got.quantize(step, ROUND_HALF_UP) == wanted.quantize(step, ROUND_HALF_UP)


def _percent_readings(got: Decimal, wanted_percent: bool, got_percent: bool) -> list[Decimal]:
    """The answer's number as the case may mean it: as written, and when one side is a percentage
    and the other is not, converted (0.019 is 1.9 %; 1.9 % is 0.019)."""
    if wanted_percent and not got_percent:
        return [got, got * 100]
    if got_percent and not wanted_percent:
        return [got, got / 100]
    return [got]


def _unit_matches(unit: str | None, value: Value) -> bool:
    if unit is None or unit == PERCENT:
        return True
    word = normalised(unit).removesuffix("s")
    said = normalised(f"{value.unit or ''} {value.text}")
    return re.search(rf"(?<!\w){re.escape(word)}s?(?!\w)", said) is not None


def _is_percent(value: Value) -> bool:
    unit = (value.unit or "").casefold()
    return unit in (PERCENT, "percent", "per cent") or value.text.rstrip().endswith(PERCENT)


def _parenthesised(text: str) -> bool:
    stripped = text.strip()
    return stripped.startswith("(") and stripped.endswith(")")


def number_in(text: str) -> Decimal | None:
    """The one number written in `text` ("(1,577)" is -1577, "$0.40" 0.40), None when it holds
    none or several."""
    found = list(_NUMBER.finditer(text))
    if len(found) != 1:
        return None
    match = found[0]
    try:
        number = Decimal(match["digits"].replace(",", ""))
    except InvalidOperation:  # pragma: no cover - the pattern admits only digits
        return None
    negative = match["sign"] or (match["open"] and match["close"])
    return -number if negative else number


# --- lists ----------------------------------------------------------------------------------------


def items_of(text: str) -> list[str]:
    """The items a value lists: split at semicolons, line breaks, bullets and commas (not the
    thousands comma of "1,577"), brackets and quotes and a joining "and"/"or" left out."""
    inner = text.strip().removeprefix("[").removesuffix("]")
    items = [_ITEM_JOINER.sub("", i.strip(" \"'")) for i in _ITEM_BREAK.split(inner)]
    return [i for i in items if i]


def _items_match(expected: ExpectedValue, got: list[str]) -> bool:
    assert expected.items is not None
    if len(got) != len(expected.items):
        return False
    left = list(got)
    for wanted in expected.items:
        match = next((g for g in left if _item_matches(wanted, g, expected)), None)
        if match is None:
            return False
        left.remove(match)
    return True


def _item_matches(wanted: str | float, got: str, expected: ExpectedValue) -> bool:
    if isinstance(wanted, str):
        return _text_matches(wanted, got)
    number = number_in(got)
    return number is not None and _close(Decimal(repr(wanted)), number, expected)


# --- shown ----------------------------------------------------------------------------------------


def _number_shown(expected: ExpectedValue) -> str:
    assert expected.number is not None
    shown = f"{expected.number:g}"
    if expected.unit:
        shown += f" {expected.unit}" if expected.unit != PERCENT else PERCENT
    if expected.scale:
        shown += f" ({expected.scale})"
    rules = [f"within {expected.tolerance * 100:g} %" if expected.tolerance else "exactly"]
    if expected.decimals is not None:
        rules.append(f"or rounded to {expected.decimals} decimal(s)")
    return f"{shown} {' '.join(rules)}"


def _value_shown(value: Value) -> str:
    scale = f" ({value.scale})" if value.scale else ""
    return f"{value.text!r}{scale}"


def _shown_item(item: str | float) -> str:
    return repr(item) if isinstance(item, str) else f"{item:g}"
