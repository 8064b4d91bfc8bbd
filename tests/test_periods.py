"""Reporting periods (localqa/question/periods.py): what a question names, what a catalog label or a cover
says, and which fiscal years a period ending on a date may be called."""

from __future__ import annotations

from datetime import date

import pytest

from localqa.extract.cover import read_cover, registrant
from localqa.question.periods import (
    UNKNOWN_QUARTER,
    Mention,
    cover_period,
    describe,
    facts,
    fiscal_years_ending,
    match,
    mentions,
    parse_label,
)
from localqa.types import Period


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("What is the FY2018 capital expenditure for 3M?", [(2018, None, "FY2018")]),
        ("the FY2019 - FY2020 revenue growth", [(2019, None, "FY2019"), (2020, None, "FY2020")]),
        ("its restructuring liability as of Q2 of FY2023 close", [(2023, 2, "Q2 of FY2023")]),
        ("As of FY2023Q1, why did guidance rise?", [(2023, 1, "FY2023Q1")]),
        ("Adjusted EBITDA for FY 2023", [(2023, None, "FY 2023")]),
        ("Interest Coverage Ratio In F2019?", [(2019, None, "F2019")]),
        ("FY22 against FY'21", [(2022, None, "FY22"), (2021, None, "FY'21")]),
        ("first quarter of 2023 results", [(2023, 1, "first quarter of 2023")]),
        ("1Q23 sales", [(2023, 1, "1Q23")]),
        ("the AGM held on May 3, 2023", [(2023, None, "2023")]),
        ("fiscal 2023 results", [(2023, None, "fiscal 2023")]),
        ("a $2019 fee, 12019 units and 2,019 items", []),
    ],
)
def test_the_periods_a_question_names(text: str, named: list[tuple[int, int | None, str]]) -> None:
    assert [(m.year, m.quarter, m.text) for m in mentions(text)] == named


@pytest.mark.parametrize(
    ("label", "named"),
    [("FY2022", (2022, None)), ("2022", (2022, None)), ("Q2 2024", (2024, 2)), ("Q2 FY2024", (2024, 2)),
     ("FY2024 Q2", (2024, 2)), ("2024Q2", (2024, 2))],
)  # fmt: skip
def test_a_catalog_label_names_one_period(label: str, named: tuple[int, int | None]) -> None:
    found = parse_label(label)
    assert found is not None and (found.year, found.quarter) == named


@pytest.mark.parametrize("label", ["FYxx", "Q2", "FY2022 and FY2023", "H1 2023", "fiscal", "", "2022-12-31x"])
def test_anything_else_is_not_a_label(label: str) -> None:
    assert parse_label(label) is None


@pytest.mark.parametrize(
    ("end", "years"),
    [
        (date(2022, 12, 31), (2022,)),
        (date(2023, 6, 30), (2023,)),  # Microsoft's FY2023
        (date(2020, 1, 31), (2019, 2020)),  # Walmart calls it FY2020, Foot Locker would say 2019
        (date(2023, 1, 1), (2022,)),  # a 52/53-week year ending in the first days of January
    ],
)
def test_the_fiscal_years_a_year_ending_on_a_date_may_be_called(end: date, years: tuple[int, ...]) -> None:
    assert fiscal_years_ending(end) == years


def test_a_quarter_does_not_say_which_fiscal_year_it_belongs_to() -> None:
    quarter = Period(end=date(2022, 12, 31), kind="quarter")  # Amcor's Q2 FY2023
    assert facts(quarter) == {(2022, UNKNOWN_QUARTER), (2023, UNKNOWN_QUARTER)}
    assert match(Mention(2023, 2, "Q2 FY2023"), (2023, UNKNOWN_QUARTER)) == 1.0
    assert match(Mention(2023, 2, "Q2 FY2023"), (2023, 4)) == 0.0
    assert match(Mention(2023, None, "FY2023"), (2023, None)) == 2.0
    assert describe(quarter) == "quarter ended 2022-12-31"


def test_dates_from_a_catalog_are_a_year_or_not() -> None:
    year = Period(start=date(2022, 1, 1), end=date(2022, 12, 31))
    assert facts(year) == {(2022, None)} and describe(year) == "FY2022 (year ended 2022-12-31)"
    half = Period(start=date(2022, 1, 1), end=date(2022, 6, 30))
    assert facts(half) == {(2022, None)} and describe(half) == "2022-01-01 to 2022-06-30"
    assert describe(Period(label="Q2 2024")) == "Q2 2024" and facts(Period(label="Q2 2024")) == {(2024, 2)}


COVER = """UNITED STATES
SECURITIES AND EXCHANGE COMMISSION
FORM 10-K
ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
For the fiscal year ended December 31, 2022
OR
TRANSITION REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
For the transition period from ___ to ___
Commission file number: 1-3247
CORNING INCORPORATED
(Exact\xa0name\xa0of\xa0registrant\xa0as\xa0specified\xa0in\xa0its\xa0charter)
"""


def test_a_cover_gives_its_period_and_its_registrant() -> None:
    assert read_cover(COVER) == ("CORNING INCORPORATED", Period(end=date(2022, 12, 31), kind="year"))
    quarterly = "FORM 10-Q\nFor the Quarterly Period Ended December 31, 2022\nOR"
    assert cover_period(quarterly) == Period(end=date(2022, 12, 31), kind="quarter")
    assert cover_period("FOR THE FISCAL YEAR ENDED May 26, 2019") == Period(
        end=date(2019, 5, 26), kind="year"
    )
    assert cover_period("For the three months ended 31 March 2023") == Period(
        end=date(2023, 3, 31), kind="quarter"
    )


def test_a_name_split_over_lines_is_joined_and_anything_else_is_no_name() -> None:
    assert registrant(
        "Date of Report: July 1, 2022\nAMCOR\nPLC\n(Exact\nname of registrant as specified)"
    ) == ("AMCOR PLC")
    assert registrant("A press release with no cover") is None
    assert cover_period("Date of Report (Date of earliest event reported): July 1, 2022") is None
    assert cover_period("For the fiscal year ended February 30, 2022") is None
