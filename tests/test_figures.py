"""Derived figures: how a question becomes line items and an expression (the glossary, the
question's own definition, one line item), how operands are read from rows, how the figure is
computed and rounded, what is said when an operand is missing, and the check every shown figure
passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from localqa.derived import computing, glossary, operands
from localqa.derived.computing import FigureProblem, figure_check
from localqa.derived.figures import plan
from localqa.types import Candidate, Kind, Location, Operand, Value
from localqa.values.choosing import Alone
from localqa.values.numbers import read_quantity


def row(text: str, page: int = 1, section: str | None = None, source: str = "filing.pdf") -> Candidate:
    location = Location(
        source=source,
        page=page,
        kind=Kind.TABLE,
        section=section,
        table=1,
        row=1,
        paragraph=None,
        effective=None,
    )
    return Candidate(
        rank=1, score=1.0, location=location, text=text, doc_id=f"default/{source}", tenant="default"
    )


# --- planning ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "origin", "expression"),
    [
        (
            "What is the FY2018 capital expenditure amount (in USD millions) for 3M?",
            "item",
            "capex_fy2018",
        ),
        (
            "What is the FY2019 - FY2020 total revenue growth rate for Block? Answer in units of percents.",
            "glossary",
            "(revenue_fy2020 - revenue_fy2019) / revenue_fy2019 * 100",
        ),
        (
            "What is Lockheed Martin's 2 year total revenue CAGR from FY2020 to FY2022?",
            "glossary",
            "((revenue_fy2022 / revenue_fy2020) ^ (1 / 2) - 1) * 100",
        ),
        (
            "What is Lockheed Martin's FY2021 net working capital? Define net working capital as total "
            "current assets less total current liabilities.",
            "definition",
            "current_assets_fy2021 - current_liabilities_fy2021",
        ),
        (
            "What is the FY2019 fixed asset turnover ratio? Fixed asset turnover ratio is defined as: FY2019 "
            "revenue / (average PP&E between FY2018 and FY2019).",
            "definition",
            "revenue_fy2019 / (average(ppe_fy2018, ppe_fy2019))",
        ),
        (
            "What is the FY2017 - FY2019 3 year average of capex as a % of revenue?",
            "glossary",
            "average((capex_fy2017 / revenue_fy2017 * 100), (capex_fy2018 / revenue_fy2018 * 100), "
            "(capex_fy2019 / revenue_fy2019 * 100))",
        ),
    ],
)
def test_a_question_becomes_line_items_and_an_expression(question: str, origin: str, expression: str) -> None:
    found = plan(question)
    assert found is not None
    assert (found.origin, found.expression.text) == (origin, expression)


def test_the_questions_own_definition_wins_over_the_glossary() -> None:
    glossary = plan("What is the FY2020 current ratio?")
    defined = plan(
        "What is the FY2020 current ratio? Current ratio is defined as: total current assets / "
        "(total current liabilities + inventories)."
    )
    assert glossary is not None and defined is not None
    assert glossary.expression.text == "current_assets_fy2020 / current_liabilities_fy2020"
    assert defined.origin == "definition"
    assert (
        defined.expression.text == "current_assets_fy2020 / (current_liabilities_fy2020 + inventory_fy2020)"
    )


def test_a_definition_of_a_term_inside_a_glossary_metric_is_used_for_that_term() -> None:
    found = plan(
        "What is the FY2020 unadjusted EBITDA % margin? Define unadjusted EBITDA as unadjusted operating "
        "income + depreciation and amortization from the cash flow statement."
    )
    assert found is not None and found.origin == "glossary"
    assert "operating_income_fy2020 + depreciation_amortization_fy2020" in found.expression.text


@pytest.mark.parametrize(
    "question",
    [
        "How many days does a standard book loan last?",  # no period: no figure
        "What was the key agenda of the 8-K filing dated 1st July 2022?",  # no figure asked
        "Does Adobe have an improving operating margin profile as of FY2022?",  # yes or no
    ],
)
def test_a_question_that_asks_no_figure_gets_no_plan(question: str) -> None:
    assert plan(question) is None


def test_a_users_glossary_extends_and_overrides_the_built_in_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    extra = tmp_path / "glossary.toml"
    extra.write_text(
        '[metrics.rule_of_40]\nnames = ["rule of 40"]\n'
        'formula = "revenue_growth + ebitda_margin"\nunit = "%"\n'
        '[items.revenue]\nnames = ["turnover"]\nrows = ["turnover"]\nstatement = "income statement"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv(glossary.GLOSSARY_ENV, str(extra))
    found = plan("What is the FY2022 rule of 40 score?")
    assert found is not None and found.origin == "glossary"
    assert {n.item.key for n in found.needs} == {"revenue", "operating_income", "depreciation_amortization"}
    assert glossary.glossary().items["revenue"].rows == ("turnover",)


def test_a_broken_glossary_is_an_error_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    extra = tmp_path / "glossary.toml"
    extra.write_text('[metrics.bad]\nnames = ["bad"]\nformula = "revenue +"\n', encoding="utf-8")
    monkeypatch.setenv(glossary.GLOSSARY_ENV, str(extra))
    with pytest.raises(glossary.GlossaryError, match=r"glossary.toml: metrics.bad.formula: .*ends too early"):
        glossary.glossary()


# --- reading operands and computing --------------------------------------------------------------

INCOME = "CONSOLIDATED STATEMENTS OF OPERATIONS (In millions)"
BALANCE = "CONSOLIDATED BALANCE SHEETS (In millions)"


def read(question: str, candidates: list[Candidate]) -> computing.Computed:
    found = plan(question)
    assert found is not None
    keys = {n.item.key for n in found.needs}
    read = operands.read_operands(found, {key: candidates for key in keys}, Alone())
    return computing.compute(found, read)


def test_a_ratio_is_computed_from_the_cells_of_the_statement_rows_and_rounded_as_asked() -> None:
    computed = read(
        "What is the FY2019 fixed asset turnover ratio? Fixed asset turnover ratio is defined as: FY2019 "
        "revenue / (average PP&E between FY2018 and FY2019). Round your answer to two decimal places.",
        [
            row(f"{INCOME}: Total net revenues: 2019: 6,489; 2018: 7,500", page=70),
            row("Segment data: Net effect of deferred net revenues: 2019: 52; 2018: 100", page=102),
            row(
                f"{BALANCE}: Property and equipment, net: At December 31, 2019: 253; "
                "At December 31, 2018: 282",
                69,
            ),
        ],
    )
    value = computed.value
    assert value is not None and value.text == "24.26" and value.number == 24.26
    assert [o.value.text for o in value.operands or ()] == ["6,489", "282", "253"]
    assert computing.substituted(value) == "6,489 / average(282, 253)"
    assert figure_check(value, "") is None


def test_an_outflow_counts_by_its_size_and_a_percentage_is_rounded_as_asked() -> None:
    computed = read(
        "What is the FY2019 capex as a % of revenue? Answer in units of percents and round to one "
        "decimal place.",
        [
            row(
                "STATEMENTS OF CASH FLOWS (In millions): Capital expenditures: 2019: (116); 2018: (131)",
                page=73,
            ),
            row(f"{INCOME}: Total net revenues: 2019: 6,489; 2018: 7,500", page=70),
        ],
    )
    assert computed.value is not None
    assert (computed.value.text, computed.value.unit) == ("1.8 %", "%")  # 116 / 6,489 = 1.79 %


def test_a_sum_or_difference_keeps_the_tables_scale_and_a_ratio_has_none() -> None:
    working = read(
        "What is the FY2021 net working capital?",
        [row(f"{BALANCE}: Total current assets: 2021: 19,815; 2020: 19,378"),
         row(f"{BALANCE}: Total current liabilities: 2021: 13,997; 2020: 11,871")],
    )  # fmt: skip
    assert working.value is not None and (working.value.text, working.value.scale) == ("5,818.00", "millions")
    ratio = read(
        "What is the FY2021 current ratio?",
        [
            row(f"{BALANCE}: Total current assets: 2021: 19,815"),
            row(f"{BALANCE}: Total current liabilities: 2021: 13,997"),
        ],
    )  # fmt: skip
    assert ratio.value is not None and (ratio.value.text, ratio.value.scale) == ("1.42", None)


def test_a_missing_operand_means_no_figure_and_names_it() -> None:
    computed = read(
        "What is the FY2019 - FY2020 total revenue growth rate?",
        [row(f"{INCOME}: Total net revenues: 2020: 9,498")],
    )
    assert computed.value is None
    assert computed.why == "no figure computed: the evidence gives FY2020 revenue but not FY2019 revenue"


def test_a_row_that_only_mentions_the_item_is_not_its_row() -> None:
    found = plan("What is the FY2022 retention ratio?")
    assert found is not None
    net_income = next(n for n in found.needs if n.item.key == "net_income")
    assert operands.row_match(net_income.item, "Net earnings attributable to General Mills") is not None
    assert (
        operands.row_match(net_income.item, "Net earnings attributable to noncontrolling interests") is None
    )
    assert (
        operands.row_match(net_income.item, "Net effect of net income on deferred taxes and others") is None
    )


# --- the check of a derived figure ------------------------------------------------------------------


def operand(name: str, text: str, quote: str) -> Operand:
    read = read_quantity(text)
    assert read is not None
    return Operand(
        name=name,
        value=Value(text=text, number=float(read[0].number)),
        quote=quote,
        citation=row(quote).location,
    )


RATE = "(revenue_fy2020 - revenue_fy2019) / revenue_fy2019 * 100"
GROWTH = (
    operand("revenue_fy2020", "1,800", "Revenue: 2020: 1,800; 2019: 1,600"),
    operand("revenue_fy2019", "1,600", "Revenue: 2020: 1,800; 2019: 1,600"),
)


@pytest.mark.parametrize(
    ("text", "number", "expression", "operands", "problem"),
    [
        ("12.5 %", 12.5, RATE, GROWTH, None),
        ("12.50 %", 12.5, RATE, GROWTH, None),
        # A result the expression does not give, at the decimals shown.
        ("12.6 %", 12.6, RATE, GROWTH, FigureProblem.RECOMPUTED),
        ("13 %", 13.0, RATE, GROWTH, None),  # rounded
        ("14 %", 14.0, RATE, GROWTH, FigureProblem.RECOMPUTED),
        ("12.5 %", 12.6, RATE, GROWTH, FigureProblem.MISREAD),
        # An expression over a name no operand has, or no arithmetic at all.
        ("12.5 %", 12.5, RATE.replace("fy2020", "fy2021"), GROWTH, FigureProblem.EXPRESSION),
        ("12.5 %", 12.5, "__import__('os')", GROWTH, FigureProblem.EXPRESSION),
        # An operand whose value is not in its quote.
        (
            "12.5 %",
            12.5,
            RATE,
            (GROWTH[0], operand("revenue_fy2019", "1,600", "Revenue: 2020: 1,800; 2019: 1,500")),
            FigureProblem.OPERAND,
        ),
    ],
)  # fmt: skip
def test_a_derived_figure_is_shown_only_when_it_recomputes_from_verified_operands(
    text: str, number: float, expression: str, operands: tuple[Operand, ...], problem: FigureProblem | None
) -> None:
    value = Value(text=text, number=number, unit="%", operands=operands, expression=expression)
    assert figure_check(value, operands[0].quote) is problem
