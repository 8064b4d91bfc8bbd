"""A case's expected value against an answer's `Value`: text, numbers (tolerance, the stated
rounding, scale, parentheses, percentages, units) and lists; and the parsing the benchmarks use
on FinanceBench's and MMLongBench-Doc's answers."""

from __future__ import annotations

from decimal import Decimal

import pytest
from pydantic import ValidationError

from localqa.evaluate.expected_value import ExpectedValue, items_of, judge, number_in, scale_factor
from localqa.types import Location, Operand, Value

TEXT = ExpectedValue(text="45 minutes")


@pytest.mark.parametrize(
    ("shown", "correct"),
    [
        ("45 minutes", True),
        ("45 Minutes.", True),  # case and trailing punctuation aside
        ("  45\nminutes ", True),  # spacing aside
        ("45 minutes , ", True),  # spacing beside punctuation aside
        ('"45 minutes"', True),
        ("45 minutes (EQ-314)", True),  # a parenthesised aside left out
        ("limit: 45 minutes", True),  # holds it, at most twice its length
        ("loan limit 45 minutes", False),  # 21 characters: more than twice
        ("145 minutes", False),  # not the same number
        ("45 minutes and more", True),
        ("The loan limit for the camera is 45 minutes", False),  # the sentence, not the value
        ("30 minutes", False),
        ("45", False),
    ],
)
def test_text_value_holds_the_expected_text_and_little_else(shown: str, correct: bool) -> None:
    assert judge(TEXT, Value(text=shown)).correct is correct


def test_spacing_beside_punctuation_is_spacing() -> None:
    """MMLongBench-Doc writes a contents page's "Food Safety, Nutrition, and Distribution" as
    "Food Safety,Nutrition,and Distribution"; the words and their order still decide."""
    expected = ExpectedValue(text="Food Safety,Nutrition,and Distribution")
    assert judge(expected, Value(text="7. Food Safety, Nutrition, and Distribution")).correct
    assert not judge(expected, Value(text="Food Safety, Nutrition; and Distribution")).correct
    assert not judge(expected, Value(text="Food Safety, Distribution, and Nutrition")).correct


def test_no_value_is_wrong_and_says_so() -> None:
    verdict = judge(TEXT, None)
    assert not verdict.correct
    assert verdict.why == "no value shown; expected '45 minutes'"


def number(text: str, value: float | None, **fields: str | None) -> Value:
    return Value(text=text, number=value, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("expected", "shown", "correct"),
    [
        # the default tolerance: 1 % relative
        (ExpectedValue(number=5409), number("5,409", 5409), True),
        (ExpectedValue(number=5409), number("5,450", 5450), True),
        (ExpectedValue(number=5409), number("5,500", 5500), False),
        (ExpectedValue(number=5409, tolerance=0), number("5,410", 5410), False),
        (ExpectedValue(number=9, tolerance=0), number("9", 9), True),
        (ExpectedValue(number=0, tolerance=0.01), number("0", 0), True),
        (ExpectedValue(number=0, tolerance=0.01), number("0.001", 0.001), False),
        # the rounding the question states
        (ExpectedValue(number=1.9, decimals=1), number("1.87", 1.87), True),
        (ExpectedValue(number=1.9, decimals=1), number("1.84", 1.84), False),
        (ExpectedValue(number=0.4, decimals=1), number("0.35", 0.35), True),  # half up, not to even
        (ExpectedValue(number=24.26, decimals=2), number("24.2625", 24.2625), True),
        # scale: "$1577.00" asked in USD millions, against a cell of a table in millions
        (ExpectedValue(number=1577, scale="millions"), number("1,577", 1577, scale="millions"), True),
        # "$0.40" asked in USD billions, against a cell in millions
        (ExpectedValue(number=0.40, scale="billions"), number("400", 400, scale="millions"), True),
        (ExpectedValue(number=0.40, scale="billions"), number("400", 400, scale="thousands"), False),
        # an answer without a scale is read in the case's
        (ExpectedValue(number=1577, scale="millions"), number("1,577", 1577), True),
        (ExpectedValue(number=1577), number("1.577", 1.577, scale="billions"), False),
        # a figure in parentheses is compared by its size (an outflow) and with its sign (a loss);
        # a minus sign is a sign
        (ExpectedValue(number=1577, scale="millions"), number("(1,577)", -1577, scale="millions"), True),
        (ExpectedValue(number=-800, scale="millions"), number("(800)", -800, scale="millions"), True),
        (ExpectedValue(number=-10, unit="%"), number("(10.0)%", -10, unit="%"), True),
        (ExpectedValue(number=-800), number("(900)", -900), False),
        (ExpectedValue(number=3.65), number("-3.65%", -3.65, unit="%"), False),
        (ExpectedValue(number=-3.7), number("-3.7", -3.7), True),
        # percentages and ratios
        (ExpectedValue(number=1.9, unit="%"), number("1.9 %", 1.9, unit="%"), True),
        (ExpectedValue(number=1.9, unit="%"), number("0.019", 0.019), True),
        (ExpectedValue(number=1.9, unit="%"), number("1.9", 1.9), True),
        (ExpectedValue(number=0.053), number("5.3%", 5.3, unit="%"), True),
        (ExpectedValue(number=41.67), number("41.67%", 41.67), True),
        (ExpectedValue(number=1.9, unit="%"), number("19 %", 19, unit="%"), False),
        # another unit must be the answer's
        (ExpectedValue(number=45, unit="minutes"), number("45 minutes", 45, unit="minutes"), True),
        (ExpectedValue(number=45, unit="minute"), number("45 minutes", 45), True),
        (ExpectedValue(number=45, unit="minutes"), number("45 days", 45, unit="days"), False),
        # a value that is no number
        (ExpectedValue(number=45), number("forty-five", None), False),
    ],
)
def test_numbers(expected: ExpectedValue, shown: Value, correct: bool) -> None:
    assert judge(expected, shown).correct is correct


def test_a_wrong_number_says_what_was_compared() -> None:
    verdict = judge(
        ExpectedValue(number=1577, scale="millions", decimals=0), number("1,373", 1373, scale="millions")
    )
    assert (
        verdict.why
        == "'1,373' (millions) does not meet 1577 (millions) within 1 % or rounded to 0 decimal(s)"
    )
    exact = judge(ExpectedValue(number=9, tolerance=0), number("8", 8))
    assert exact.why == "'8' does not meet 9 exactly"


def test_a_derived_figure_is_judged_by_its_result() -> None:
    cited = Location(
        source="10k.pdf", page=50, kind="table", section=None, table=1, row=3, paragraph=None, effective=None
    )
    operand = Operand(
        name="revenue_2022", value=number("1,800", 1800), quote="Revenue: 1,800", citation=cited
    )
    derived = Value(text="12.5 %", number=12.5, unit="%", operands=(operand,), expression="x")
    assert judge(ExpectedValue(number=12.5, unit="%", decimals=1), derived).correct
    assert not judge(ExpectedValue(number=13.5, unit="%", decimals=1), derived).correct


@pytest.mark.parametrize(
    ("items", "shown", "correct"),
    [
        (("GS5002", "GS6001"), "GS6001, GS5002", True),  # any order
        (("GS5002", "GS6001"), "['GS5002', 'GS6001']", True),
        (("GS5002", "GS6001"), "GS5002; GS6001; GS5101", False),  # one too many
        (("GS5002", "GS6001"), "GS5002", False),
        (("2015-03-24", "2015-03-25"), "2015-03-24 and 2015-03-25", False),  # one item, not two
        (("2015-03-24", "2015-03-25"), "2015-03-24, 2015-03-25", True),
        (("Chapter 2", "Chapter 3", "Chapter 5"), "Chapter 2, Chapter 3, and Chapter 5", True),
        ((3.0, 4.0), "3, 4", True),
        ((3.0, 4.0), "3, 5", False),
    ],
)
def test_lists(items: tuple[str | float, ...], shown: str, correct: bool) -> None:
    assert judge(ExpectedValue(items=items, tolerance=0), Value(text=shown)).correct is correct


def test_an_expected_value_is_exactly_one_kind() -> None:
    with pytest.raises(ValidationError, match="exactly one"):
        ExpectedValue()
    with pytest.raises(ValidationError, match="exactly one"):
        ExpectedValue(text="45 minutes", number=45)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("$1577.00", Decimal("1577.00")),
        ("(1,577)", Decimal("-1577")),
        ("-3.7", Decimal("-3.7")),
        ("\u22123.7", Decimal("-3.7")),
        ("1.9%", Decimal("1.9")),
        ("24.26", Decimal("24.26")),
        ("$0.40", Decimal("0.40")),
        ("12 and 41", None),  # several numbers: no one number
        ("Not answerable", None),
    ],
)
def test_number_in(text: str, found: Decimal | None) -> None:
    assert number_in(text) == found


def test_items_of_keeps_thousands_commas_and_drops_brackets_and_joiners() -> None:
    assert items_of("['Industrial Business', 'Safety and Graphics Business']") == [
        "Industrial Business",
        "Safety and Graphics Business",
    ]
    assert items_of("1,577; 2,000") == ["1,577", "2,000"]
    assert items_of("A, B, or C") == ["A", "B", "C"]


@pytest.mark.parametrize(
    ("scale", "factor"),
    [
        (None, 1),
        ("millions", 10**6),
        ("Millions", 10**6),
        ("(in millions)", 10**6),
        ("USD bn", 10**9),
        ("thousands", 10**3),
        ("dozens", None),
    ],
)
def test_scale_factor(scale: str | None, factor: int | None) -> None:
    assert scale_factor(scale) == factor
