"""Computing a derived figure from its operands, exactly, in the scale asked for; and the one
check every shown value passes (`figure_check`), here and in evaluation."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum

from localqa.derived import arithmetic
from localqa.derived.figures import FigurePlan, Need
from localqa.derived.glossary import counted_by_size
from localqa.derived.operands import Found
from localqa.types import Kind, Operand, Value
from localqa.values.cells import read_row
from localqa.values.choosing import is_span
from localqa.values.numbers import SCALES, read_quantity


@dataclass(frozen=True)
class Computed:
    """A figure computed, or the reason none could be."""

    value: Value | None
    why: str | None = None


def compute(figure: FigurePlan, found: Sequence[Found]) -> Computed:
    """The figure from its operands: exact arithmetic, rounded as the question asks."""
    by_name = {f.need.name: f for f in found}
    missing = [n for n in figure.needs if n.name not in by_name]
    if missing:
        return Computed(None, _missing(missing, found))
    operands = tuple(_operand(by_name[n.name]) for n in figure.needs)
    numbers = {o.name: magnitude(o) for o in operands}
    expression, scale = _in_scale_asked(figure, _result_scale(figure, operands, numbers))
    decimals = figure.decimals if figure.decimals is not None else 2
    try:
        rounded = arithmetic.rounded(expression.evaluate(_common_scale(operands, numbers)), decimals)
    except arithmetic.ExpressionError as error:
        return Computed(None, f"no figure computed: {error}")
    unit = "%" if figure.unit == "%" else None
    text = f"{rounded:,f}" + (" %" if unit == "%" else "")
    return Computed(
        Value(
            text=text,
            number=float(rounded),
            unit=unit,
            scale=scale,
            operands=operands,
            expression=expression.text,
        )
    )


def _in_scale_asked(figure: FigurePlan, scale: str | None) -> tuple[arithmetic.Expression, str | None]:
    """The expression, and the result's scale: brought to the scale the part asks for ("Answer in
    USD billions" of a table in millions: `/ 1000`, written into the expression, so that the check
    recomputes it) when both scales are known."""
    if figure.scale is None or scale is None or figure.scale == scale:
        return figure.expression, scale
    shift = SCALES[scale] - SCALES[figure.scale]
    factor = "1000 * " * (shift // 3) if shift > 0 else ""
    divisor = " / 1000" * (-shift // 3) if shift < 0 else ""
    text = f"{factor}({figure.expression.text}){divisor}" if shift else figure.expression.text
    return arithmetic.parse(text), figure.scale


def substituted(value: Value) -> str:
    """A derived value's expression with each operand's value written in (`(1,800 - 1,600) /
    1,600`, with the signs `localqa.derived.arithmetic` writes)."""
    expression = arithmetic.parse(value.expression or "")
    return expression.render({o.name: _shown(o) for o in value.operands or ()})


def _operand(found: Found) -> Operand:
    statement = found.statement.describe() if found.candidate.location.kind is Kind.TABLE else None
    return Operand(
        name=found.need.name,
        value=found.value,
        quote=found.quote,
        citation=found.candidate.location,
        statement=statement,
    )


def magnitude(operand: Operand) -> Decimal:
    """An operand's number as the expression uses it: with its sign ("(800)" is -800, a loss),
    except an outflow the glossary counts by its size (`glossary.counted_by_size`: a statement of
    cash flows writes capital expenditure as "(1,577)")."""
    read = read_quantity(operand.value.text)
    assert read is not None
    number = read[0].number
    label = read_row(operand.quote).label or "" if operand.citation.kind is Kind.TABLE else ""
    return abs(number) if counted_by_size(operand.name, label) else number


def _shown(operand: Operand) -> str:
    """An operand as the printed expression writes it: with the sign `magnitude` uses, "-800" for a
    loss written "(800)", "1,200" for an outflow counted by its size; as the document writes it
    otherwise."""
    read = read_quantity(operand.value.text)
    text = operand.value.text.strip()
    if read is None or read[0].number >= 0:
        return text
    parenthesised = text.startswith("(") and text.endswith(")")
    size = text[1:-1].strip() if parenthesised else re.sub(f"[{_SIGNS}]\\s*", "", text, count=1)
    return size if magnitude(operand) >= 0 else f"-{size}"


_SIGNS = "-\u2212\u2013\u2014"  # the signs `read_number` reads as a minus


def _common_scale(operands: Sequence[Operand], numbers: Mapping[str, Decimal]) -> dict[str, Decimal]:
    """The operands' numbers in one scale: as written when they share one, else each brought to
    the smallest scale among them."""
    scales = {o.value.scale for o in operands}
    if len(scales) <= 1 or None in scales:  # one scale, or one not stated: as written
        return dict(numbers)
    least = min(SCALES.get(s or "", 0) for s in scales)
    return {
        o.name: numbers[o.name] * Decimal(10) ** (SCALES.get(o.value.scale or "", 0) - least)
        for o in operands
    }


def _result_scale(
    figure: FigurePlan, operands: Sequence[Operand], numbers: Mapping[str, Decimal]
) -> str | None:
    """The result's scale: the operands' when the figure grows with them (a sum, a difference),
    None for a ratio (it does not)."""
    scales = {o.value.scale for o in operands}
    if len(scales) != 1 or None in scales:
        return None
    try:
        base = figure.expression.evaluate(numbers)
        grown = figure.expression.evaluate({k: v * 1000 for k, v in numbers.items()})
    except arithmetic.ExpressionError:
        return None
    return next(iter(scales)) if base != 0 and grown / base == 1000 else None


def _missing(missing: Sequence[Need], found: Sequence[Found]) -> str:
    wanted = _listed([f"{_period(n)} {n.item.names[0] if n.item.names else n.item.key}" for n in missing])
    if not found:
        return f"no figure computed: the evidence gives no {wanted}"
    given = _listed([f"{_period(f.need)} {f.need.item.names[0]}" for f in found])
    return f"no figure computed: the evidence gives {given} but not {wanted}"


def _period(need: Need) -> str:
    return f"Q{need.quarter} FY{need.year}" if need.quarter else f"FY{need.year}"


def _listed(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


# --- the one check ----------------------------------------------------------------------------------


class FigureProblem(Enum):
    NOT_A_SPAN = "its text is not a span of its quote"
    MISREAD = "its number is not the number its text states"
    OPERAND = "an operand is not a verified span of its quote"
    EXPRESSION = "its expression does not parse over its operands"
    RECOMPUTED = "its expression, recomputed from its operands, does not give it"


def figure_check(value: Value, quote: str) -> FigureProblem | None:
    """The rule every shown value passes (None when it does): a value is a span of `quote` (the
    verified quote it comes from) and its number is the one its text states; a derived value's
    operands each pass this rule against their own quotes, and its expression, computed again
    from their texts, gives its number at the decimals its text shows."""
    if value.operands is None:
        return _span_check(value, quote)
    if any(o.value.number is None or _span_check(o.value, o.quote) for o in value.operands):
        return FigureProblem.OPERAND
    try:
        expression = arithmetic.parse(value.expression or "")
        names = {o.name: magnitude(o) for o in value.operands}
        if not set(expression.names()) <= set(names):
            return FigureProblem.EXPRESSION
        result = expression.evaluate(_common_scale(value.operands, names))
    except (arithmetic.ExpressionError, AssertionError):
        return FigureProblem.EXPRESSION
    shown = read_quantity(value.text.replace(" %", "%"))
    if shown is None or value.number is None or not _states(value.number, shown[0].number):
        return FigureProblem.MISREAD
    places = -shown[0].number.as_tuple().exponent  # type: ignore[operator]
    try:
        recomputed = arithmetic.rounded(result, places)
    except arithmetic.ExpressionError:
        return FigureProblem.RECOMPUTED
    if recomputed != shown[0].number:
        return FigureProblem.RECOMPUTED
    return None


def _states(number: float, stated: Decimal) -> bool:
    """Whether `number` (a value's number, a float) is the number its text states: the float
    nearest it. The comparison is of that float with the value's, never of `str(number)` with the
    text, which differ for a right figure above 2^53 (a float keeps 17 significant digits)."""
    return number == float(stated)


def _span_check(value: Value, quote: str) -> FigureProblem | None:
    if not is_span(value.text, quote):
        return FigureProblem.NOT_A_SPAN
    if value.number is None:
        return None
    read = read_quantity(value.text)
    if read is None or not _states(value.number, read[0].number):
        return FigureProblem.MISREAD
    return None


def figures_problem(figures: Sequence[Value]) -> str | None:
    """What is wrong with figures a comparison or an extreme shows side by side, or None: each must
    be computed from operands and pass the figure rule (`figure_check`)."""
    for figure in figures:
        if not figure.derived:
            return f"{figure.text!r} is not computed from operands"
        problem = figure_check(figure, "")
        if problem is not None:
            return f"{figure.text!r}: {problem.value}"
    return None
