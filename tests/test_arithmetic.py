"""The arithmetic grammar of derived figures: what it parses, what it computes exactly, and what it
refuses (anything that is not arithmetic over the operands' names, and unbounded work)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from localqa.derived.arithmetic import MAX_LENGTH, ExpressionError, parse

D = Decimal


@pytest.mark.parametrize(
    ("text", "values", "result"),
    [
        ("(b - a) / a * 100", {"a": D(1600), "b": D(1800)}, D("12.5")),
        (
            "(b \u2212 a) \u00f7 a \u00d7 100",
            {"a": D(1600), "b": D(1800)},
            D("12.5"),
        ),  # as a reader writes it
        ("365 * average(p0, p1) / c", {"p0": D(10), "p1": D(20), "c": D(365)}, D(15)),
        ("a - b - c", {"a": D(10), "b": D(3), "c": D(2)}, D(5)),  # left to right
        ("a / b / c", {"a": D(100), "b": D(5), "c": D(2)}, D(10)),
        ("2 ^ 3 ^ 2", {}, D(512)),  # a power binds to the right
        ("-a ^ 2", {"a": D(3)}, D(-9)),
        ("((e / s) ^ (1 / 2) - 1) * 100", {"e": D(121), "s": D(100)}, D(10)),  # a CAGR
        ("1,577 + 0.5", {}, D("1577.5")),
        ("0.1 + 0.2", {}, D("0.3")),  # exact, not binary floating point
    ],
)
def test_expressions_are_computed_exactly(text: str, values: dict[str, Decimal], result: Decimal) -> None:
    assert parse(text).evaluate(values) == result


def test_names_come_in_order_of_first_use() -> None:
    assert parse("(b - a) / a + average(c, b)").names() == ["b", "a", "c"]


@pytest.mark.parametrize(
    ("text", "shown", "written"),
    [
        ("(b - a) / a * 100", {"a": "1,600", "b": "1,800"}, "(1,800 \u2212 1,600) / 1,600 \u00d7 100"),
        ("a - (b - c)", {}, "a \u2212 (b \u2212 c)"),
        ("a / (b * c)", {}, "a / (b \u00d7 c)"),
        ("365 * average(x, y) / z", {"x": "1", "y": "2"}, "365 \u00d7 average(1, 2) / z"),
        ("(a / b) ^ (1 / 2) - 1", {}, "(a / b)^(1 / 2) \u2212 1"),
    ],
)
def test_render_writes_the_values_in_and_keeps_the_parentheses_that_matter(
    text: str, shown: dict[str, str], written: str
) -> None:
    assert parse(text).render(shown) == written


@given(st.integers(-(10**9), 10**9), st.integers(-(10**9), 10**9), st.integers(1, 10**6))
def test_a_rendered_expression_parses_back_to_the_same_value(a: int, b: int, c: int) -> None:
    expression = parse("(a - b) / c * 100 + average(a, b)")
    values = {"a": D(a), "b": D(b), "c": D(c)}
    shown = {name: str(number) for name, number in values.items()}
    again = parse(expression.render(shown).replace("\u2212", "-").replace("\u00d7", "*"))
    assert again.evaluate({}) == expression.evaluate(values)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('__import__("os").system("true")', "unexpected"),  # no calls, strings or attributes
        ("a.b", "unexpected"),
        ("eval(a)", "unexpected"),  # only average() is a function
        ("a +", "ends too early"),
        ("(a", "ends too early|expected"),
        ("a b", "unexpected"),
        ("1e309", "unexpected"),  # no exponent notation
        ("a ; b", "unexpected"),
        ("lambda: 1", "unexpected"),
        ("[1]", "unexpected"),
        ("x" * (MAX_LENGTH + 1), "at most"),
        ("(" * 200 + "1" + ")" * 200, "levels deep"),
    ],
)
def test_anything_but_arithmetic_is_refused(text: str, why: str) -> None:
    with pytest.raises(ExpressionError, match=why):
        parse(text)


@pytest.mark.parametrize(
    ("text", "values", "why"),
    [
        ("a / b", {"a": D(1), "b": D(0)}, "division by zero"),
        ("0 / 0", {}, "division by zero|undefined"),
        ("(0 - a) ^ 0.5", {"a": D(4)}, "undefined"),
        ("a + c", {"a": D(1)}, "'c' is not one of the operands"),
        ("10 ^ 1000", {}, "exponent is at most"),
    ],
)
def test_undefined_arithmetic_is_an_error_that_says_why(
    text: str, values: dict[str, Decimal], why: str
) -> None:
    with pytest.raises(ExpressionError, match=why):
        parse(text).evaluate(values)
