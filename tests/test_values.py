"""The value a quote gives: numbers as tables write them, table rows read back into cells, the
column a fiscal year selects (with the filer's calendar), the span of a sentence a part asks for,
and the rule that a value is always a span of its quote."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from localqa.derived.computing import FigureProblem, figure_check
from localqa.question.asked import wanted
from localqa.types import Kind, Location, Value
from localqa.values.cells import Cell, Row, choose_cell, read_row
from localqa.values.choosing import is_span, value_of
from localqa.values.fiscal import FiscalCalendar, calendar_for, header_years
from localqa.values.numbers import read_quantity, stated_scale
from localqa.values.phrases import choose_phrase
from localqa.values.spans import choose_span

CAPEX_ROW = (
    "3M Company and Subsidiaries Consolidated Statement of Cash Flows Years ended December 31: Purchases of "
    "property, plant and equipment (PP&E): 2018: (1,577); 2017: (1,373); 2016: (1,420)"
)
LOAN_ROW = "; ".join(
    [
        "Equipment loan limits: Item ID: EQ-314",
        "Item: Portable scanner",
        "Loan limit: 45 minutes",
        "Deposit: 20 dollars",
    ]
)

# A ruled table read without its headers ("Column 1", ...): no header names what a cell is.
UNHEADED_ROW = (
    "Column 1: 4.; Column 2: Buddy Scheme; Column 3: 10 hours; "
    "Column 4: It is mandatory for students to participate in the buddy scheme."
)
TWO_HOURS_ROW = "Column 1: Buddy Scheme; Column 2: 10 hours; Column 3: 20 hours"


def at(kind: Kind, source: str = "report.pdf", section: str | None = None) -> Location:
    return Location(
        source=source, page=1, kind=kind, section=section, table=1, row=1, paragraph=None, effective=None
    )


@pytest.mark.parametrize(
    ("text", "number", "unit", "scale"),
    [
        ("(1,577)", "-1577", None, None),  # parentheses mark a negative
        ("$ 3,223.9", "3223.9", "USD", None),
        ("(0.7)%", "-0.7", "%", None),
        ("4.0%", "4.0", "%", None),
        ("\u2014 12", "-12", None, None),
        ("45 minutes", "45", "minutes", None),
        ("two calendar days", "2", "calendar days", None),
        ("nine", "9", None, None),
        ("$1.83 billion", "1.83", "USD", "billions"),
        ("\u2014", None, None, None),  # a dash is no number
        ("n/a", None, None, None),
        ("(1,577", None, None, None),  # an unclosed parenthesis is no number either
    ],
)
def test_numbers_are_read_as_tables_and_sentences_write_them(
    text: str, number: str | None, unit: str | None, scale: str | None
) -> None:
    read = read_quantity(text)
    if number is None:
        assert read is None
        return
    assert read is not None
    assert (read[0].number, read[0].unit, read[1]) == (Decimal(number), unit, scale)


def test_a_row_is_read_back_into_its_label_and_cells() -> None:
    assert read_row(CAPEX_ROW) == Row(
        "Purchases of property, plant and equipment (PP&E)",
        (Cell("2018", "(1,577)"), Cell("2017", "(1,373)"), Cell("2016", "(1,420)")),
    )
    assert read_row(LOAN_ROW).cells[2] == Cell("Loan limit", "45 minutes")
    # A row without column headers, and a label with dot leaders.
    assert read_row("Total revenues: 523,964; 514,405").cells == (
        Cell(None, "523,964"),
        Cell(None, "514,405"),
    )
    assert read_row("Revenue: Total revenue .........: Fiscal 2015: 4,795.5").label == "Total revenue"


@pytest.mark.parametrize(
    ("header", "calendar", "years"),
    [
        ("2019", FiscalCalendar(), (2019,)),
        ("Fiscal 2015", FiscalCalendar(), (2015,)),
        ("FY2021", FiscalCalendar(), (2021,)),
        ("MAY 31, 2018", FiscalCalendar(), (2018,)),  # Nike's fiscal 2018 ended on May 31, 2018
        ("Year Ended December 31, 2020", FiscalCalendar(), (2020,)),
        ("% Change 2015-2014", FiscalCalendar(), ()),  # a change between years is no year's column
        ("Increase (Decrease)", FiscalCalendar(), ()),
        # A year ending in January or early February: both readings count until the calendar is known.
        ("February 2, 2019", FiscalCalendar(), (2018, 2019)),
        ("February 2, 2019", FiscalCalendar(offset=-1), (2018,)),  # named by the year it starts in
        ("January 31, 2020", FiscalCalendar(offset=0), (2020,)),  # Walmart's FY2020
    ],
)
def test_a_column_header_names_the_fiscal_year_it_reports(
    header: str, calendar: FiscalCalendar, years: tuple[int, ...]
) -> None:
    assert tuple(sorted(header_years(header, calendar))) == years


def test_the_filers_calendar_comes_from_its_period_and_the_year_asked_about() -> None:
    end = date(2019, 2, 2)
    assert calendar_for(end, "FY2018", ()) == FiscalCalendar(offset=-1)  # the catalog says
    assert calendar_for(end, None, (2018,)) == FiscalCalendar(offset=-1)  # routed for FY2018
    assert calendar_for(date(2020, 1, 31), None, (2020,)) == FiscalCalendar(offset=0)
    assert calendar_for(date(2019, 12, 31), None, (2019,)) == FiscalCalendar()  # no ambiguity


RETAILER_ROW = "Net sales: February 2, 2019: 7,939; February 3, 2018: 7,782; January 28, 2017: 7,766"


@pytest.mark.parametrize(
    ("calendar", "year", "cell"),
    [
        (FiscalCalendar(offset=-1), 2018, "7,939"),  # fiscal 2018 ended February 2, 2019
        (FiscalCalendar(offset=-1), 2017, "7,782"),
        (FiscalCalendar(offset=0), 2018, "7,782"),  # named by its end: FY2018 ended February 3, 2018
        (FiscalCalendar(), 2018, None),  # not known: two columns could be fiscal 2018, none is chosen
    ],
)
def test_the_cell_at_a_fiscal_year_for_a_filer_whose_year_ends_in_february(
    calendar: FiscalCalendar, year: int, cell: str | None
) -> None:
    choice = choose_cell("", read_row(RETAILER_ROW), wanted(""), calendar, year=year)
    assert (choice.cell.text if choice.cell else None) == cell
    if cell is None:
        assert choice.why == f"the row has 2 columns for {year}"


@pytest.mark.parametrize(
    ("part", "row", "cell", "why"),
    [
        ("What is the loan limit for EQ-314?", LOAN_ROW, "45 minutes", None),
        ("What deposit does EQ-314 need?", LOAN_ROW, "20 dollars", None),
        ("What is the FY2017 capital expenditure?", CAPEX_ROW, "(1,373)", None),
        ("What was capital expenditure in FY2015?", CAPEX_ROW, None, "the row has no column for 2015"),
        ("What is the change from FY2017 to FY2018?", CAPEX_ROW, None, "the question names 2 years"),
        ("What is capital expenditure?", CAPEX_ROW, None, "does not say which column"),  # never guessed
        # Headers that say nothing: the one figure in the unit the part names.
        ("What is the maximum hours of the buddy scheme?", UNHEADED_ROW, "10 hours", None),
        ("How many students join the buddy scheme?", UNHEADED_ROW, None, "does not say which column"),
        ("What is the maximum hours of the buddy scheme?", TWO_HOURS_ROW, None, "does not say which column"),
    ],
)
def test_the_cell_is_the_one_at_the_column_the_part_asks_about(
    part: str, row: str, cell: str | None, why: str | None
) -> None:
    choice = choose_cell(part, read_row(row), wanted(part), FiscalCalendar())
    assert (choice.cell.text if choice.cell else None) == cell
    if why is not None:
        assert choice.why is not None and why in choice.why


@pytest.mark.parametrize(
    ("part", "sentence", "span"),
    [
        ("How many days does a standard book loan last?", "Standard book loans last 21 days.", "21 days"),
        (
            "When does the desk accept maps for the community map exchange?",
            "The desk accepts maps for the community map exchange from 12:00 to 15:00 on weekdays.",
            "from 12:00 to 15:00",
        ),
        (
            "How long may fragile equipment be borrowed?",
            "Fragile equipment may be borrowed for two calendar days only.",
            "two calendar days",
        ),
        (
            "What percentage of tweets were in English?",
            "Of 60 tweets in 2015, 41.67% were in English and 12 in German.",
            "41.67%",
        ),
        (
            "How much was net cash provided by operating activities in 2019?",
            "Net cash provided by operating activities for 2019 was $1.83 billion, as compared to $1.79 "
            "billion for 2018.",
            "$1.83 billion",  # the figure nearest the words the sentence shares with the part
        ),
        ("How many datasets are used?", "We run experiments on nine widely-used datasets.", "nine"),
        ("How many tweets were there?", "There were 1,234 tweets on the first day.", "1,234 tweets"),
        (
            "How much is the fine for an overdue book?",
            "Overdue books incur a fine of 20 cents per day.",
            "20 cents per day",
        ),
        ("How often is the alarm code changed?", "The alarm code is changed every 90 days.", "every 90 days"),
        (
            "When does story time run?",
            "Story time runs on Wednesdays at 10:30 in the hall.",
            "Wednesdays at 10:30",
        ),
        (
            "When does the book club meet?",
            "The book club meets on the first Thursday of each month at 18:00.",
            "first Thursday of each month at 18:00",
        ),
        (
            "On which day does payroll run?",
            "Payroll runs on the last working day of each month.",
            "last working day of each month",
        ),
        ("When is the summer party?", "The summer party is on 18 July in the garden.", "18 July"),
        (
            "Where can the projector be used?",
            "The projector may be used only in the seminar room.",
            "only in the seminar room",
        ),
        ("What is the hotel cap?", "Hotels are capped at 180 dollars per night.", "180 dollars per night"),
        (
            "How many unused days carry over?",
            "Employees may carry over up to 5 unused days.",
            "up to 5 unused",
        ),
        (
            "How many days per week may staff work remotely?",
            "Staff may work remotely up to 2 days per week.",
            "up to 2 days per week",
        ),
        (
            "Who approves salary advances?",
            "Advances of up to 1,000 dollars are approved by the finance controller.",
            "the finance controller",
        ),
        ("How many times can a book be renewed?", "A book can be renewed twice.", "twice"),
        (  # the measure in the unit asked ("grams": "16 g"), not another number of the sentence
            "How many grams of coffee can be put in the manual insert?",
            "6 Open manual insert lid 6 Insert ground coffee (max. 16 g) 6 Close manual insert lid",
            "16 g",
        ),
        ("How many litres does the tank hold?", "Fill 2 Tanks with up to 1.5 l of water.", "up to 1.5 l"),
        (
            "When must I bring back a camera lens?",  # no time or date: the duration
            "Camera lenses may be borrowed for two calendar days only.",
            "two calendar days",
        ),
        ("Who leads the program?", "Allison Crimmins leads the program.", None),  # no role or agent phrase
        ("How many days does a loan last?", "Loans are renewed once.", None),  # no span of the kind
    ],
)
def test_a_sentence_gives_the_span_the_part_asks_for(part: str, sentence: str, span: str | None) -> None:
    found = choose_span(part, sentence, wanted(part))
    assert (found.text if found else None) == span


@pytest.mark.parametrize(
    ("part", "sentence", "phrase"),
    [
        (
            "Which flights are booked in economy class under POL-16?",
            "Under POL-16, flights shorter than 6 hours are booked in economy class.",
            "shorter than 6 hours",  # what the sentence says of the flights asked about
        ),
        (
            "What colour badge do visitors wear?",
            "Under POL-22, visitors wear a red badge and are escorted at all times.",
            "red badge",
        ),
        (
            "What does POL-21 require for company laptops?",
            "Under POL-21, every company laptop uses full-disk encryption and locks its screen after 5 "
            "minutes.",
            "uses full-disk encryption and locks its screen after 5 minutes",
        ),
        (
            "How are software requests approved under POL-25?",
            "Under POL-25, new software is requested through the service portal and approved within 3 "
            "working days.",
            "within 3 working days",
        ),
        (
            "When are approved expenses reimbursed?",  # a "when" answered by no time
            "Approved expenses are reimbursed with the next monthly salary payment.",
            "with the next monthly salary payment",
        ),
        (
            "What is NARL stand for in this document?",  # the words whose initials spell it
            "The National Atmospheric Research Laboratory (NARL) at Gadanki is an autonomous society.",
            "National Atmospheric Research Laboratory",
        ),
        (
            "What is the full form of DOS?",
            "The Department of Space (DOS) was set up in 1972.",
            "Department of Space",
        ),
        (
            "What does ISRO stand for?",
            "ISRO (Indian Space Research Organisation) built it.",
            "Indian Space Research Organisation",
        ),
        ("What does NARL stand for?", "NARL is at Gadanki.", None),  # the sentence never defines it
        ("How should a damaged book be reported?", "Report damage at the desk.", None),  # a procedure
        ("What is the hotel cap?", "Hotel stays are reimbursed in full.", None),  # a number or nothing
        ("Which room is booked?", "Bookings are made online.", None),  # the thing asked about is not named
        ("Which of the rooms is booked?", "Most of the rooms are booked online.", None),
    ],
)
def test_a_part_asking_which_thing_or_what_is_done_gets_the_phrase_that_says_it(
    part: str, sentence: str, phrase: str | None
) -> None:
    found = choose_phrase(part, sentence, wanted(part))
    assert (found.text if found else None) == phrase
    if found is not None:
        assert is_span(found.text, sentence)


def test_a_year_the_part_names_is_not_its_answer() -> None:
    part = "How many tweets were posted in 2015?"
    found = choose_span(part, "In 2015, 1,234 tweets were posted.", wanted(part))
    assert found is not None and found.text == "1,234 tweets"


@pytest.mark.parametrize(
    ("texts", "scale"),
    [
        (["CONSOLIDATED BALANCE SHEETS (In thousands, except share data)"], "thousands"),
        (["3M Company (Millions)"], "millions"),
        (["Revenue (dollars in millions)"], "millions"),
        (["A summary of our debt (amounts in millions):"], "millions"),
        (["Net sales grew by 5 percent"], None),
    ],
)
def test_a_tables_scale_is_read_where_it_states_it(texts: list[str], scale: str | None) -> None:
    assert stated_scale(texts) == scale


def test_a_cell_value_carries_its_headers_and_the_tables_scale() -> None:
    value = value_of(
        "What is the FY2018 capital expenditure (in USD millions) for 3M?",
        CAPEX_ROW,
        at(Kind.TABLE, section="Consolidated Statement of Cash Flows (Millions)"),
    )
    assert value == Value(
        text="(1,577)",
        number=-1577.0,
        scale="millions",
        row="Purchases of property, plant and equipment (PP&E)",
        column="2018",
    )


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        ("Answer in USD millions.", {"scale": "millions", "quantity": True}),
        ("Round your answer to two decimal places.", {"decimals": 2}),
        ("Answer in units of percents and round to one decimal place.", {"percent": True, "decimals": 1}),
        ("What is the FY2017 - FY2019 average?", {"years": (2017, 2019)}),
        ("When does the desk open?", {"when": True}),
        ("How long is a loan?", {"duration": True, "quantity": True}),
    ],
)
def test_what_a_part_asks_for(part: str, expected: dict[str, object]) -> None:
    found = wanted(part)
    assert {name: getattr(found, name) for name in expected} == expected


# --- the one check ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (Value(text="45 minutes", number=45.0, unit="minutes"), None),
        (Value(text="45 minutes"), None),  # a value that is no number
        (Value(text="50 minutes", number=50.0), FigureProblem.NOT_A_SPAN),  # not in the quote
        (Value(text="45 minutes", number=46.0), FigureProblem.MISREAD),  # a number the text does not state
        (Value(text="Portable", number=None), None),  # any span
    ],
)
def test_a_value_that_is_not_a_span_of_its_quote_is_refused(
    value: Value, problem: FigureProblem | None
) -> None:
    assert figure_check(value, LOAN_ROW) is problem
