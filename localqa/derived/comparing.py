"""Comparisons a part asks for, computed in code: whether a quantity improved, declined, increased
or decreased between two periods ("Does Adobe have an improving operating margin profile as of
FY2022?", "Has Microsoft increased its debt between FY2023 and FY2022?", "How much has the
effective tax rate changed between FY2021 and FY2022?"), and the sign of one figure ("Does Corning
have positive working capital based on FY2022 data?").

`plan` reads the kind of comparison (`cues.comparison_kind`), the figure
(`localqa.derived.figures.named`: a metric, a shape or a line item) and the periods: the two years
named, or one year and the year before it ("as of FY2022" asks against the prior year). Each figure
is planned, read and computed as a figure question's is (`localqa.derived.figures`, `.operands`,
`localqa.derived.computing`); `compared` then gives the direction from the figures' numbers as
shown, under the rule it says:
"improved" or "declined" only where the glossary states which way is better for the metric, with
its source (`better`, `better_source`: higher for a margin, lower for days outstanding or
leverage); a figure the glossary gives no such rule for (an amount, the effective tax rate, a
ratio the part defines by its shape) is only said to have increased or decreased.
`comparison_check` recomputes the direction from the figures, the rule every shown comparison
passes.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from decimal import Decimal

from localqa.derived import arithmetic, computing, figures, pairs
from localqa.derived.glossary import Glossary, glossary
from localqa.question import cues, periods
from localqa.question.asked import wanted
from localqa.types import Comparison, Value
from localqa.values.numbers import read_quantity


@dataclass(frozen=True)
class ComparisonPlan:
    """The figures a comparison computes, in the order compared, with their labels."""

    # "judge", "sign", "improve" or "change" (`cues.COMPARISON_KINDS`), or "items" (`derived.pairs`)
    kind: str
    what: str  # the figure as the part names it
    figures: tuple[figures.FigurePlan, ...]
    labels: tuple[str, ...]  # "FY2021", "FY2022"; "Q2 FY2022"; two items' phrases
    better: str | None  # "higher" or "lower": which figure is the better one, when a rule says
    rule: str  # the rule the direction is given under, said to the reader
    threshold: float | None = None  # a judgment's rule of thumb (the glossary's)


def plan(part: str, terms: Glossary | None = None) -> ComparisonPlan | None:
    """The comparison a part asks for and the figures it computes, or None when it asks for none
    (or names no figure, or no fiscal year or quarter to compare at)."""
    terms = terms or glossary()
    pair = pairs.paired(part, terms)
    if pair is not None:
        first, second = pair.labels
        rule = f"{first} against {second}: the first figure against the second"
        return ComparisonPlan("items", pair.what, pair.figures, pair.labels, None, rule)
    kind = cues.comparison_kind(part)
    if kind is None:
        return None
    at = _periods(part, kind)
    if not at:
        return None
    found = [figures.named(part, year, terms) for year, _ in at]
    if any(f is None for f in found):
        return None
    # A part asking for a ratio gets the ratio or nothing: never a line item it names (the
    # denominator of "SG&A as a % of net sales").
    if cues.asks_a_ratio(part) and any(f is not None and f[3] == "item" for f in found):
        return None
    planned = [
        figures.plan_found(part, f, [year], terms) for f, (year, _) in zip(found, at, strict=True) if f
    ]
    if any(p is None for p in planned):
        return None
    planned = [
        in_quarter(p, quarter) if p and quarter else p for p, (_, quarter) in zip(planned, at, strict=True)
    ]
    what = found[-1][0] if found[-1] else ""
    metric = figures.metric_of(found[-1], terms) if found[-1] else None
    better, rule = _rule(
        kind, what, metric.better if metric else None, metric.better_source if metric else None
    )
    threshold = None
    if kind == "judge":
        # A verdict only where the glossary states a rule of thumb with its source; otherwise the
        # figure the judgment rests on, alone (`compared`): the judgment is the reader's.
        threshold = metric.threshold if metric else None
        source = metric.threshold_source if metric else None
        rule = (
            f"the {threshold} the glossary uses for a {what} ({source})" if threshold else "no rule of thumb"
        )
    labels = tuple(f"Q{q} FY{y}" if q else f"FY{y}" for y, q in at)
    return ComparisonPlan(kind, what, tuple(p for p in planned if p), labels, better, rule, threshold)


Period = tuple[int, int | None]  # a fiscal year, and a quarter of it or None


def _periods(part: str, kind: str) -> list[Period]:
    """The periods a comparison computes its figure at, in order: the last year named for a sign
    or a judgment; else the first and the last year named, or one year and the year before it ("as
    of FY2022" asks against the prior year). A part that names quarters and no whole year compares
    quarters: the first and the last named ("Q2 of FY2023 compared to Q2 of FY2022"), or one
    quarter and the same quarter a year before."""
    years = sorted(set(wanted(part).years))
    quarters = sorted({(m.year, m.quarter) for m in periods.mentions(part) if m.quarter})
    if not years and quarters:
        if kind in ("sign", "judge"):
            return [quarters[-1]]
        if len(quarters) > 1:
            return [quarters[0], quarters[-1]]
        year, quarter = quarters[0]
        return [(year - 1, quarter), (year, quarter)]
    if not years:
        return []
    if kind in ("sign", "judge"):
        return [(years[-1], None)]
    return (
        [(years[0], None), (years[-1], None)] if len(years) > 1 else [(years[0] - 1, None), (years[0], None)]
    )


def in_quarter(figure: figures.FigurePlan, quarter: int) -> figures.FigurePlan:
    """A figure planned at a fiscal year, read at one quarter of it instead: each need's rows are
    that quarter's (`localqa.derived.operands.period_fit`), its operand named for the quarter
    (`net_income_q2fy2023`)."""
    renamed = {n.name: re.sub(r"_fy(\d{4})$", rf"_q{quarter}fy\1", n.name) for n in figure.needs}
    text = re.sub(
        r"[A-Za-z_][A-Za-z0-9_]*", lambda m: renamed.get(m.group(0), m.group(0)), figure.expression.text
    )
    needs = tuple(dataclasses.replace(n, name=renamed[n.name], quarter=quarter) for n in figure.needs)
    return dataclasses.replace(figure, expression=arithmetic.parse(text), needs=needs)


def _rule(kind: str, what: str, glossary_better: str | None, source: str | None) -> tuple[str | None, str]:
    """Which figure is the better one and the rule said to the reader: only the glossary's, with
    where it comes from; without one, no figure is the better one."""
    if kind == "sign":
        return None, f"the sign of {what}"
    if kind == "change":
        return None, f"{what}: the later figure against the earlier"
    if glossary_better is not None:
        return glossary_better, f"{glossary_better} is better for {what} (the glossary's rule: {source})"
    return None, f"no rule says whether more {what} is better: only whether it increased or decreased"


def compared(plan: ComparisonPlan, computed: list[Value]) -> Value:
    """The last figure, carrying the comparison of all of them (each labelled by its period); a
    judgment no rule of thumb decides is its figure alone."""
    labelled = tuple(
        _as_written(v).model_copy(update={"column": label})
        for v, label in zip(computed, plan.labels, strict=True)
    )
    if plan.kind == "judge" and plan.threshold is None:
        return labelled[-1].model_copy(update={"row": plan.what})
    direction = direction_of(plan.kind, plan.better, [v.number for v in labelled], plan.threshold)
    comparison = Comparison(direction=direction, rule=plan.rule, figures=labelled, threshold=plan.threshold)
    return labelled[-1].model_copy(update={"comparison": comparison, "row": plan.what})


def _as_written(value: Value) -> Value:
    """A figure that is one line item at the decimals its cell writes ("1,405", not "1,405.00")."""
    operands = value.operands or ()
    if len(operands) != 1 or value.expression != operands[0].name or value.number is None:
        return value
    read = read_quantity(operands[0].value.text)
    if read is None:
        return value
    places = max(0, -int(read[0].number.as_tuple().exponent))
    number = Decimal(str(value.number)).quantize(Decimal(1).scaleb(-places))
    return value.model_copy(update={"text": f"{number:,f}", "number": float(number)})


def direction_of(
    kind: str, better: str | None, numbers: list[float | None], threshold: float | None = None
) -> str:
    """The direction the figures' numbers (as shown) give: the last against a rule of thumb for a
    judgment, its sign for a sign question; the first item against the second (higher, lower,
    equal) for two items; else the last against the first, as improved/declined under a rule of
    which is better, or increased/decreased."""
    if any(n is None for n in numbers) or not numbers:
        raise ValueError("a comparison compares numbers")
    last = Decimal(str(numbers[-1]))
    if kind == "judge":
        if threshold is None:
            raise ValueError("a judgment needs a rule of thumb")
        bar = Decimal(str(threshold))
        return "above" if last > bar else "below" if last < bar else "at"
    if kind == "sign":
        return "positive" if last > 0 else "negative" if last < 0 else "zero"
    first = Decimal(str(numbers[0]))
    if kind == "items":  # two items in one period: the first against the second
        return "higher" if first > last else "lower" if first < last else "equal"
    if last == first:
        return "unchanged"
    if better is None:
        return "increased" if last > first else "decreased"
    return "improved" if (last > first) == (better == "higher") else "declined"


KIND_OF_DIRECTION = {
    "above": "judge",
    "below": "judge",
    "at": "judge",
    "positive": "sign",
    "negative": "sign",
    "zero": "sign",
    "improved": "improve",
    "declined": "improve",
    "increased": "change",
    "decreased": "change",
    "higher": "items",
    "lower": "items",
    "equal": "items",
}


def comparison_check(value: Value) -> str | None:
    """Why a shown comparison is not a checked one (None: it is): every figure compared passes the
    figure rule (`computing.figure_check`: each is computed from verified operands), the value is
    its last figure, and the direction is the one the figures' numbers give."""
    comparison = value.comparison
    if comparison is None:
        return None
    if comparison.direction in ("largest", "smallest"):
        from localqa.derived.extremes import extreme_check  # an extreme over rows is checked as one

        return extreme_check(value)
    if not comparison.figures:
        return "a comparison of no figures"
    problem = computing.figures_problem(comparison.figures)
    if problem is not None:
        return problem
    last = comparison.figures[-1]
    if (value.text, value.number, value.expression) != (last.text, last.number, last.expression):
        return "the value is not the comparison's last figure"
    numbers = [f.number for f in comparison.figures]
    if comparison.direction == "unchanged" and len(set(numbers)) == 1:
        return None
    kind = KIND_OF_DIRECTION.get(comparison.direction)
    if kind is None:
        return f"{comparison.direction!r} is no direction"
    better = None
    if kind == "improve":
        # Either rule gives one of the two directions; the figures give which rule was used.
        better = "higher" if comparison.rule.startswith("higher") else "lower"
    if kind == "judge" and comparison.threshold is None:
        return "a verdict without a rule of thumb"
    if direction_of(kind, better, numbers, comparison.threshold) != comparison.direction:
        return f"the figures do not give {comparison.direction!r}"
    return None
