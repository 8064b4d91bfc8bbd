"""Comparisons of two items in one period and of a quarter against a quarter
(`localqa.derived.pairs`, `localqa.derived.comparing`), and the rows an operand is read from
(`localqa.derived.operands`: a balance never from a statement of cash flows' change row; a row
whose heading names the period asked for before another), end to end on filings drawn with
PyMuPDF and indexed for real; and, as tables, the rules they use."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest
from filings import write_report

from localqa.derived import comparing, computing, operands, pairs
from localqa.derived.glossary import counted_by_size
from localqa.indexing.index import refresh_index
from localqa.library import Library
from localqa.models.extractive import ExtractiveModel
from localqa.types import Answer, Caller, Comparison, Kind, Location, Operand, Value

AS_OF = date(2026, 1, 1)
CATALOG = """
["orbit-10k-fy2022.pdf"]
series = "orbit-10k"
access = "public"
period = "FY2022"

["nimbus-10q-q3fy2023.pdf"]
series = "nimbus-10q"
access = "public"
period = "Q3 FY2023"

["nimbus-10q-q2fy2023.pdf"]
series = "nimbus-10q"
access = "public"
period = "Q2 FY2023"

["vega-10k-fy2022.pdf"]
series = "vega-10k"
access = "staff"
period = "FY2022"
"""
YEAR_END = ("December 31, 2022", "December 31, 2021")
# A filer that gives its sales by region for the fourth quarter (first) and the full year: the
# quarter's directions are the other way round, so reading its rows for the year shows.
ORBIT = {
    "FOURTH QUARTER SALES BY REGION (three months ended)": [
        ("U.S.", "950", "1,000"),
        ("International", "1,100", "1,000"),
    ],
    "FULL YEAR SALES BY REGION": [
        ("U.S.", "4,120", "4,000"),
        ("International", "3,880", "4,000"),
    ],
    # The statement of cash flows before the balance sheet, its change row labelled exactly as
    # the item ("Inventories"), the balance sheet's row with more words ("Inventories, net").
    "CONSOLIDATED STATEMENTS OF CASH FLOWS": [
        ("Net income", "500", "450"),
        ("Changes in operating assets and liabilities:", "", ""),
        ("Inventories", "(120)", "40"),
        ("Net cash provided by operating activities", "700", "650"),
    ],
    "CONSOLIDATED BALANCE SHEETS": [
        ("Inventories, net", "1,320", "1,200"),
        ("Total current assets", "3,000", "2,800"),
        ("Total current liabilities", "2,000", "2,100"),
    ],
    "CONSOLIDATED STATEMENTS OF OPERATIONS": [
        ("Income before income taxes", "2,000", "1,600"),
        ("Provision for income taxes", "(460)", "(320)"),
        ("Net income", "1,540", "1,280"),
    ],
}
# A food company whose fiscal year ends on May 31: its third quarter of fiscal 2023 ended on
# February 28, 2023; its report gives the quarter, then the nine months, row for row.
MAY_QUARTER = ("February 28, 2023", "February 28, 2022")
NIMBUS = {
    "THIRD QUARTER (three months ended)": [
        ("Net sales", "1,250", "1,000"),
        ("Net earnings", "150", "130"),
    ],
    "NINE MONTHS ENDED": [
        ("Net sales", "3,600", "3,000"),
        ("Net earnings", "300", "390"),
    ],
}
# Its second quarter of fiscal 2023 ended on November 30, 2022: its columns are dated a calendar
# year before the fiscal year the quarter belongs to.
MAY_SECOND_QUARTER = ("November 30, 2022", "November 30, 2021")
NIMBUS_Q2 = {
    "SECOND QUARTER (three months ended)": [
        ("Net sales", "1,100", "1,000"),
        ("Net earnings", "121", "100"),
    ],
    "SIX MONTHS ENDED": [
        ("Net sales", "2,350", "2,000"),
        ("Net earnings", "200", "260"),
    ],
}
# A filing only staff may see, with regions of its own.
VEGA = {
    "FULL YEAR SALES BY REGION": [
        ("U.S.", "2,000", "2,500"),
        ("International", "3,000", "2,000"),
    ],
}


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pairs")
    write_report(folder / "orbit-10k-fy2022.pdf", "Orbit Health Inc.", "December 31, 2022", ORBIT, YEAR_END,
                 "Orbit Health Annual Report 2022")  # fmt: skip
    write_report(folder / "nimbus-10q-q3fy2023.pdf", "Nimbus Foods Inc.", "February 28, 2023", NIMBUS,
                 MAY_QUARTER, "Nimbus Foods Quarterly Report Q3 Fiscal 2023")  # fmt: skip
    write_report(folder / "nimbus-10q-q2fy2023.pdf", "Nimbus Foods Inc.", "November 30, 2022", NIMBUS_Q2,
                 MAY_SECOND_QUARTER, "Nimbus Foods Quarterly Report Q2 Fiscal 2023")  # fmt: skip
    write_report(folder / "vega-10k-fy2022.pdf", "Vega Labs Inc.", "December 31, 2022", VEGA, YEAR_END,
                 "Vega Labs Annual Report 2022")  # fmt: skip
    (folder / "catalog.toml").write_text(CATALOG, encoding="utf-8")
    db = folder / "index.sqlite3"
    report = refresh_index(folder, db, embed=False)
    assert not report.problems, report.problems
    return db


def ask(db: Path, question: str, caller: Caller | None = None, doc: str | None = None) -> Answer:
    with Library(db) as opened:
        asked = opened.answer(
            question, as_of=AS_OF, caller=caller, model=ExtractiveModel(), documents=[doc] if doc else ()
        )
    return asked.parts[0].answer


def comparison(answer: Answer) -> Comparison:
    assert answer.verified and answer.value is not None and answer.value.comparison is not None
    return answer.value.comparison


def test_two_items_compared_in_one_year_from_the_full_years_rows(library: Path) -> None:
    answer = ask(
        library, "How did Orbit Health's US sales growth compare to international sales growth in FY2022?"
    )
    compared = comparison(answer)
    # (4,120 - 4,000) / 4,000 = 3.00 % against (3,880 - 4,000) / 4,000 = -3.00 %; the fourth
    # quarter's rows (-5.00 % against 10.00 %) come first in the filing and are not the year's.
    assert [(f.column, f.text) for f in compared.figures] == [
        ("US sales growth", "3.00 %"),
        ("international sales growth", "-3.00 %"),
    ]
    assert compared.direction == "higher"
    assert compared.rule.startswith("US sales growth against international sales growth")
    quotes = {o.quote for f in compared.figures for o in f.operands or ()}
    assert all(q.startswith("FULL YEAR SALES BY REGION") for q in quotes), quotes
    assert comparing.comparison_check(answer.value) is None  # type: ignore[arg-type]


def test_a_quarter_against_the_same_quarter_a_year_before_of_a_filer_whose_year_ends_in_may(
    library: Path,
) -> None:
    question = (
        "Did Nimbus Foods' net earnings as a percent of sales increase in Q3 of FY2023 compared to Q3 of "
        "FY2022?"
    )
    compared = comparison(ask(library, question))
    # 130 / 1,000 = 13.00 % -> 150 / 1,250 = 12.00 %: the quarter's rows, not the nine months'
    # (13.00 % -> 8.33 %).
    assert [(f.column, f.text) for f in compared.figures] == [
        ("Q3 FY2022", "13.00 %"),
        ("Q3 FY2023", "12.00 %"),
    ]
    assert compared.direction == "decreased"
    columns = [o.value.column for f in compared.figures for o in f.operands or ()]
    assert columns == ["February 28, 2022"] * 2 + ["February 28, 2023"] * 2


def test_a_second_quarter_of_a_year_that_ends_in_may_reads_the_columns_dated_a_year_before(
    library: Path,
) -> None:
    question = (
        "Did Nimbus Foods' net earnings as a percent of sales increase in Q2 of FY2023 compared to Q2 of "
        "FY2022?"
    )
    compared = comparison(ask(library, question))
    # 100 / 1,000 = 10.00 % (Q2 FY2022, November 30, 2021) -> 121 / 1,100 = 11.00 % (Q2 FY2023,
    # November 30, 2022), the catalog's "Q2 FY2023" saying which fiscal year November 2022 is.
    assert [(f.column, f.text) for f in compared.figures] == [
        ("Q2 FY2022", "10.00 %"),
        ("Q2 FY2023", "11.00 %"),
    ]
    assert compared.direction == "increased"
    columns = [o.value.column for f in compared.figures for o in f.operands or ()]
    assert columns == ["November 30, 2021"] * 2 + ["November 30, 2022"] * 2
    assert {o.citation.source for f in compared.figures for o in f.operands or ()} == {
        "nimbus-10q-q2fy2023.pdf"
    }


def test_a_balance_is_never_read_from_a_cash_flow_statements_change_row(library: Path) -> None:
    answer = ask(library, "Has Orbit Health increased its inventories between FY2021 and FY2022?")
    compared = comparison(answer)
    assert [f.text for f in compared.figures] == ["1,200", "1,320"]
    assert compared.direction == "increased"
    quotes = {o.quote for f in compared.figures for o in f.operands or ()}
    assert all(q.startswith("Inventories, net") or "Inventories, net" in q for q in quotes), quotes


def test_an_effective_tax_rate_of_a_provision_written_as_a_deduction_is_positive(library: Path) -> None:
    answer = ask(
        library, "How much has the effective tax rate of Orbit Health changed between FY2021 and FY2022?"
    )
    compared = comparison(answer)
    assert [f.text for f in compared.figures] == ["20.00 %", "23.00 %"]
    assert compared.direction == "increased"


def test_a_hidden_documents_rows_are_never_compared_as_two_items(library: Path) -> None:
    question = "How did Vega Labs' US sales growth compare to international sales growth in FY2022?"
    public = ask(library, question)
    sources = {public.citation.source} if public.citation else set()
    if public.value is not None and public.value.comparison is not None:
        sources |= {o.citation.source for f in public.value.comparison.figures for o in f.operands or ()}
    assert "vega-10k-fy2022.pdf" not in sources
    staff = comparison(ask(library, question, Caller(role="staff")))
    assert {o.citation.source for f in staff.figures for o in f.operands or ()} == {"vega-10k-fy2022.pdf"}
    assert [f.text for f in staff.figures] == ["-20.00 %", "50.00 %"] and staff.direction == "lower"


# --- the rules, as tables ---------------------------------------------------------------------------

PHRASES = [
    ("How did JnJ's US sales growth compare to international sales growth in FY2022?",
     ("US sales growth", "international sales growth")),
    ("How does Acme's U.S. revenue compare with its international revenue in FY2021?",
     ("U.S. revenue", "international revenue")),
    ("Compare Acme's US sales with international sales in FY2021.", ("US sales", "international sales")),
    ("What was Acme's FY2021 US revenue versus international revenue?",
     ("US revenue", "international revenue")),
]  # fmt: skip


@pytest.mark.parametrize(("question", "expected"), PHRASES)
def test_the_two_phrases_a_part_compares(question: str, expected: tuple[str, str]) -> None:
    assert pairs.phrases(question) == expected


def test_a_second_phrase_without_an_item_takes_the_firsts() -> None:
    pair = pairs.paired("How did Acme's US sales growth compare to international in FY2022?")
    assert pair is not None and pair.labels == ("US sales growth", "international sales growth")
    assert [f.expression.text for f in pair.figures] == [
        "(us_revenue_fy2022 - us_revenue_fy2021) / us_revenue_fy2021 * 100",
        "(international_revenue_fy2022 - international_revenue_fy2021) / international_revenue_fy2021 * 100",
    ]
    assert pair.figures[0].needs[0].item.rows[:3] == ("u.s.", "united states", "us")


@pytest.mark.parametrize(
    "question",
    [
        "How did FY2021 revenue compare to FY2022 revenue for Acme?",  # periods, not items
        "How did Acme's operating margin compare to Globex's in FY2022?",  # a metric, no qualifier
        "What is Acme's FY2022 revenue?",
    ],
)
def test_no_two_items_are_paired_where_the_part_compares_none(question: str) -> None:
    assert pairs.paired(question) is None


def test_a_quarter_comparison_names_its_operands_and_labels_by_the_quarter() -> None:
    plan = comparing.plan("Did Acme's gross margin improve in Q2 of FY2023 compared to Q2 of FY2022?")
    assert plan is not None and plan.labels == ("Q2 FY2022", "Q2 FY2023")
    assert {n.quarter for f in plan.figures for n in f.needs} == {2}
    assert plan.figures[1].expression.text == "(revenue_q2fy2023 - cogs_q2fy2023) / revenue_q2fy2023 * 100"
    single = comparing.plan("Did Acme's revenue increase in Q1 FY2024?")
    assert single is not None and single.labels == ("Q1 FY2023", "Q1 FY2024")


CHANGE_ROWS = [
    ("Inventories", "Cash Flows from Operating Activities > Changes in certain working capital items", True),
    ("Inventories", "CONSOLIDATED STATEMENTS OF CASH FLOWS", True),
    ("(Increase) decrease in inventories", "", True),
    ("Change in accounts payable", "", True),
    ("Cash and cash equivalents at end of year", "CONSOLIDATED STATEMENTS OF CASH FLOWS", False),
    ("Inventories, net", "CONSOLIDATED BALANCE SHEETS", False),
    ("Accounts payable", "Current liabilities", False),
]


@pytest.mark.parametrize(("label", "section", "change"), CHANGE_ROWS)
def test_which_rows_state_a_change_rather_than_a_balance(label: str, section: str, change: bool) -> None:
    assert operands.states_a_change(label, section) is change


PERIOD_FIT = [
    (None, "REGIONAL SALES RESULTS > Full Year % Change", 1),
    (None, "REGIONAL SALES RESULTS > Q4 % Change", 0),
    (None, "SIX MONTHS ENDED", 0),
    (None, "CONSOLIDATED BALANCE SHEETS", 1),
    (2, "Consumer Health > SECOND QUARTER", 2),
    (2, "THREE MONTHS ENDED", 2),
    (2, "SIX MONTHS ENDED", 0),
    (2, "THIRD QUARTER", 0),
    (2, "Full Year % Change", 0),
    (2, "Condensed Consolidated Statement of Earnings", 1),
]


@pytest.mark.parametrize(("quarter", "heading", "fit"), PERIOD_FIT)
def test_how_a_rows_heading_fits_the_period_asked_for(quarter: int | None, heading: str, fit: int) -> None:
    assert operands.period_fit(quarter, heading) == fit


def test_a_row_under_an_adjusted_measures_heading_ranks_after_the_reported_one() -> None:
    assert operands.as_reported("SECOND QUARTER > Adjusted earnings before provision for taxes") == 0
    assert operands.as_reported("SECOND QUARTER") == 1


@pytest.mark.parametrize(
    ("label", "number"),
    [
        ("Provision for income taxes", Decimal(411)),
        ("Income tax expense", Decimal(411)),
        ("Provision for (benefit from) income taxes", Decimal(-411)),  # a benefit keeps its sign
        ("Income taxes", Decimal(-411)),  # either sign: as written
    ],
)
def test_income_taxes_under_an_expense_label_count_by_their_size(label: str, number: Decimal) -> None:
    at = Location(source="f.pdf", page=1, kind=Kind.TABLE, section=None, table=1, row=1, paragraph=None,
                  effective=None)  # fmt: skip
    quote = f"{label}: 2022: (411); 2021: (320)"
    operand = Operand(
        name="income_tax_fy2022", value=Value(text="(411)", number=-411.0), quote=quote, citation=at
    )
    assert computing.magnitude(operand) == number
    assert counted_by_size("income_tax_fy2022", label) is (number > 0)


@pytest.mark.parametrize(
    ("end", "label", "shift", "offset"),
    [
        (date(2022, 11, 30), "Q2 FY2023", 1, None),  # a year that ends in May: Q2 ends the year before
        (date(2023, 2, 28), "Q3 FY2023", 0, None),
        (date(2023, 7, 2), "Q2 FY2023", 0, None),
        (date(2023, 1, 28), "Q4 FY2022", 0, -1),  # a January end: the offset reads it, as for a year
        (date(2022, 11, 30), None, 0, None),
    ],
)
def test_a_quarterly_reports_label_says_how_far_its_columns_years_are_from_the_fiscal_year(
    end: date, label: str | None, shift: int, offset: int | None
) -> None:
    from localqa.values.fiscal import calendar_for

    calendar = calendar_for(end, label, [])
    assert (calendar.quarter_shift, calendar.offset) == (shift, offset)
