"""Signs of derived figures, end to end on a filing with a loss year (tests/loss_filing.py) indexed
for real: a figure in parentheses is negative, so a loss gives a negative margin and a fall into a
loss a negative growth; an outflow counts by its size only where the glossary marks the line item
so (capital expenditure, dividends paid, repurchases); the printed expression shows the sign used.
Every metric of the glossary and every shape of figure is run against the loss year."""

from __future__ import annotations

from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner
from filings import write_filing
from loss_filing import COLUMNS, STATEMENTS, write_loss_filing

from localqa.cli import cli
from localqa.derived import arithmetic, computing, figures, glossary
from localqa.derived.operands import row_match
from localqa.indexing.index import refresh_index
from localqa.library import Library
from localqa.models.extractive import ExtractiveModel
from localqa.types import Answer
from localqa.values.numbers import read_number, read_quantity

AS_OF = date(2026, 1, 1)
CATALOG = """
["zorblax-10k-fy2019.pdf"]
series = "zorblax-10k"
access = "public"
period = "FY2019"

["acme-10k-fy2018.pdf"]
series = "acme-10k"
access = "public"
period = "FY2018"
"""
COMPANY = "Zorblax Widgets"


@pytest.fixture(scope="module")
def loss_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("loss")
    write_loss_filing(folder / "zorblax-10k-fy2019.pdf")
    write_filing(folder / "acme-10k-fy2018.pdf")  # another filer: the question names which
    (folder / "catalog.toml").write_text(CATALOG, encoding="utf-8")
    db = folder / "index.sqlite3"
    report = refresh_index(folder, db, embed=False)
    assert not report.problems, report.problems
    return db


def ask(db: Path, question: str) -> Answer:
    with Library(db) as library:
        asked = library.answer(question, as_of=AS_OF, model=ExtractiveModel())
    return asked.parts[0].answer


def printed(db: Path, question: str) -> str:
    result = CliRunner().invoke(
        cli, ["ask", question, "--db", str(db), "--model", "extractive", "--as-of", AS_OF.isoformat()]
    )
    assert result.exit_code == 0, result.output
    return next(line.strip() for line in result.output.splitlines() if line.strip().startswith("Answer:"))


# --- the reproduction -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "line"),
    [
        (
            f"What is {COMPANY}' FY2019 net profit margin?",
            "Answer: -10.00 % = -800 / 8,000 \u00d7 100",
        ),
        (
            f"What is {COMPANY}' FY2019 operating margin?",
            "Answer: -7.50 % = -600 / 8,000 \u00d7 100",
        ),
        (  # from a profit of 200 to a loss of 800
            f"What is {COMPANY}' FY2019 growth in net income?",
            "Answer: -500.00 % = (-800 \u2212 200) / 200 \u00d7 100",
        ),
        (  # an outflow the metric counts by its size: shown by its size
            f"What is {COMPANY}' FY2019 capex as a % of revenue?",
            "Answer: 15.00 % = 1,200 / 8,000 \u00d7 100",
        ),
        (  # a negative operand after a minus is bracketed; the outflow is its size
            f"What is {COMPANY}' FY2019 free cash flow?",
            "Answer: -1,500.00 (millions) = -300 \u2212 1,200",
        ),
    ],
)
def test_a_loss_in_parentheses_is_negative_and_the_expression_shows_the_sign(
    loss_db: Path, question: str, line: str
) -> None:
    assert printed(loss_db, question) == line


# --- every metric of the glossary, against the loss year ---------------------------------------------


def cells(year: int) -> dict[str, Decimal]:
    """Each glossary line item's number at `year` as the filing writes it, signed (parentheses are
    a negative): the cell of the row that names the item best."""
    column = 1 if year == 2019 else 2
    rows = [row for statement in STATEMENTS.values() for row in statement]
    found: dict[str, Decimal] = {}
    for item in glossary.glossary().items.values():
        matches = [(match, row) for row in rows if (match := row_match(item, row[0])) is not None]
        if matches:
            best = max(matches, key=lambda m: (m[0][0], -m[0][1]))[1]
            read = read_number(best[column])
            assert read is not None
            found[item.key] = read.number
    return found


def expected(figure: figures.FigurePlan) -> Decimal:
    """The figure by its definition: each operand signed, an outflow the glossary marks counted by
    its size."""
    numbers = {}
    for need in figure.needs:
        number = cells(need.year)[need.item.key]
        numbers[need.name] = abs(number) if need.item.outflow else number
    return figure.expression.evaluate(numbers).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


METRICS = sorted(glossary.glossary().metrics.values(), key=lambda m: m.key)


def question_for(metric: glossary.Metric) -> str:
    years = "FY2018 - FY2019" if "_start" in metric.formula else "FY2019"
    return f"What is {COMPANY}' {years} {metric.names[0]}?"


def test_the_loss_filing_has_a_row_for_every_line_item_of_the_glossary() -> None:
    assert set(cells(2019)) == set(glossary.glossary().items)
    assert cells(2019)["net_income"] == Decimal(-800) and cells(2018)["net_income"] == Decimal(200)
    assert COLUMNS[0].endswith("2019")


@pytest.mark.parametrize("metric", METRICS, ids=[m.key for m in METRICS])
def test_every_glossary_metric_is_computed_with_the_signs_of_a_loss_year(
    loss_db: Path, metric: glossary.Metric
) -> None:
    question = question_for(metric)
    figure = figures.plan(question)
    assert figure is not None and figure.origin == "glossary"
    answer = ask(loss_db, question)
    value = answer.value
    assert answer.verified and value is not None and value.derived, answer.reason
    assert read_quantity(value.text.replace(" %", "%")) is not None
    shown = read_number(value.text.replace(" %", "%"))
    assert shown is not None and shown.number == expected(figure), computing.substituted(value)
    assert computing.figure_check(value, answer.quote or "") is None


# --- every shape of figure ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "text", "origin"),
    [
        (f"What is {COMPANY}' FY2019 net income to revenue ratio?", "-0.10", "shape"),
        (f"What is {COMPANY}' FY2019 net income as a % of revenue?", "-10.00 %", "shape"),
        (f"What is the FY2019 growth of {COMPANY}' operating income?", "-250.00 %", "shape"),
        (f"What is {COMPANY}' FY2019 net profit margin?", "-10.00 %", "glossary"),
        # the average of a profitable and a loss year: (2.86 % + -10.00 %) / 2
        (f"What is {COMPANY}' FY2018 - FY2019 average net profit margin?", "-3.57 %", "glossary"),
        (
            f"What is {COMPANY}' FY2019 loss ratio? Loss ratio is defined as: net income / net sales * 100.",
            "-10.00",
            "definition",
        ),
        (f"What was {COMPANY}' FY2019 net income?", "(800)", "item"),  # the cell as written
    ],
)
def test_every_shape_of_figure_keeps_the_sign_of_a_loss(
    loss_db: Path, question: str, text: str, origin: str
) -> None:
    figure = figures.plan(question)
    assert figure is not None and figure.origin == origin
    answer = ask(loss_db, question)
    assert answer.value is not None and answer.value.text == text, answer.reason
    assert computing.figure_check(answer.value, answer.quote or "") is None


# --- the rule and the check ------------------------------------------------------------------------


def test_the_glossary_marks_the_outflows_counted_by_their_size() -> None:
    marked = sorted(k for k, item in glossary.glossary().items.items() if item.outflow)
    assert marked == [
        "capex",
        "cogs",
        "depreciation_amortization",
        "dividends_paid",
        "interest_expense",
        "research_development",
        "share_repurchases",
    ]


def test_a_figure_that_counts_a_loss_by_its_size_fails_the_check(loss_db: Path) -> None:
    answer = ask(loss_db, f"What is {COMPANY}' FY2019 net profit margin?")
    assert answer.value is not None
    forged = answer.value.model_copy(update={"text": "10.00 %", "number": 10.0})
    assert computing.figure_check(forged, answer.quote or "") is computing.FigureProblem.RECOMPUTED
    assert arithmetic.parse(answer.value.expression or "").names() == ["net_income_fy2019", "revenue_fy2019"]


@pytest.mark.parametrize(
    ("expression", "shown", "written"),
    [
        ("a / b * 100", {"a": "-800", "b": "8,000"}, "-800 / 8,000 \u00d7 100"),
        ("(a - b) / b", {"a": "-800", "b": "200"}, "(-800 \u2212 200) / 200"),
        ("b - a", {"a": "-800", "b": "200"}, "200 \u2212 (-800)"),
        ("b + a", {"a": "-800", "b": "200"}, "200 + (-800)"),
        ("b * a", {"a": "-800", "b": "200"}, "200 \u00d7 (-800)"),
        ("a ^ 2", {"a": "-2"}, "(-2)^2"),
        ("-a", {"a": "-800"}, "\u2212(-800)"),
        ("average(a, b)", {"a": "-800", "b": "200"}, "average(-800, 200)"),
    ],
)
def test_a_negative_operand_is_bracketed_where_a_sign_would_read_as_an_operator(
    expression: str, shown: dict[str, str], written: str
) -> None:
    assert arithmetic.parse(expression).render(shown) == written


@pytest.mark.parametrize(
    ("name", "text", "number", "written"),
    [
        ("net_income_fy2019", "(800)", Decimal(-800), "-800"),
        ("net_income_fy2019", "-800", Decimal(-800), "-800"),
        ("net_income_fy2019", "($800)", Decimal(-800), "-$800"),
        ("net_income_fy2019", "$\u2212800", Decimal(-800), "-$800"),
        ("net_income_fy2019", "800", Decimal(800), "800"),
        ("capex_fy2019", "(1,200)", Decimal(1200), "1,200"),
        ("dividends_paid", "(160)", Decimal(160), "160"),  # a model's name for the item
        ("capital_expenditures", "-1,200", Decimal(1200), "1,200"),
        ("share_repurchases_fy2019", "(250)", Decimal(250), "250"),
        # An expense written as a deduction is an expense of its size: "Cost of sales (5,000)"
        # never makes a gross margin above 100 %, nor "Interest expense (120)" a negative coverage.
        ("cogs_fy2019", "(5,000)", Decimal(5000), "5,000"),
        ("interest_expense_fy2019", "(120)", Decimal(120), "120"),
        ("research_development_fy2019", "(900)", Decimal(900), "900"),
        ("depreciation_amortization_fy2019", "(300)", Decimal(300), "300"),
        ("income_tax_fy2019", "(50)", Decimal(-50), "-50"),  # a benefit: kept with its sign
    ],
)
def test_an_operand_counts_and_shows_with_its_sign_unless_the_glossary_counts_it_by_size(
    name: str, text: str, number: Decimal, written: str
) -> None:
    from localqa.types import Kind, Location, Operand, Value

    at = Location(source="f.pdf", page=1, kind=Kind.TABLE, section=None, table=1, row=1, paragraph=None,
                  effective=None)  # fmt: skip
    operand = Operand(name=name, value=Value(text=text, number=float(-abs(number))), quote=text, citation=at)
    assert computing.magnitude(operand) == number
    shown = computing.substituted(Value(text="1", number=1.0, operands=(operand,), expression=name))
    assert shown == written
