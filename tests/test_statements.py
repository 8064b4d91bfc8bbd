"""The registrant's statements, recognised from the filing's own words (`localqa.language.statements`),
and the operands a figure about the company reads from them (issue 48): end to end on a drawn
filing whose note repeats the statements' lines for a guarantor group (tests/guarantor_filing.py),
and as a table of titles and headings."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner
from guarantor_filing import write_guarantor_filing
from hypothesis import given, settings
from hypothesis import strategies as st
from properties import examples

from localqa.cli import cli
from localqa.derived import figures
from localqa.derived.operands import read_operands
from localqa.indexing.index import refresh_index
from localqa.language.statements import Scope, asked_scopes, recognise
from localqa.library import Library
from localqa.models.extractive import ExtractiveModel
from localqa.types import Answer, Candidate, Kind, Location, Passage, Value
from localqa.values.choosing import Alone

AS_OF = date(2026, 1, 1)
SOURCE = "corvid-10k-fy2022.pdf"
CATALOG = f"""
["{SOURCE}"]
series = "corvid-10k"
access = "public"
period = "FY2022"
"""
NAME = "Corvid Packaging"


@pytest.fixture(scope="module")
def guarantor_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("guarantor")
    write_guarantor_filing(folder / SOURCE)
    (folder / "catalog.toml").write_text(CATALOG, encoding="utf-8")
    db = folder / "index.sqlite3"
    report = refresh_index(folder, db, embed=False)
    assert not report.problems, report.problems
    return db


def ask(db: Path, question: str) -> Answer:
    with Library(db) as library:
        asked = library.answer(question, as_of=AS_OF, model=ExtractiveModel())
    return asked.parts[0].answer


def operands(value: Value) -> list[tuple[str, str, int | None, str | None]]:
    figures = value.comparison.figures if value.comparison else (value,)
    return [(o.name, o.value.text, o.citation.page, o.statement) for f in figures for o in f.operands or ()]


# --- the held-out pattern ---------------------------------------------------------------------------


def test_a_margin_comes_from_the_consolidated_income_statement_not_a_guarantors(guarantor_db: Path) -> None:
    answer = ask(guarantor_db, f"What is {NAME}'s FY2022 gross margin?")
    assert answer.value is not None and answer.value.text == "18.54 %"  # 2,725 / 14,694, not 58 / 377
    assert operands(answer.value) == [
        ("revenue_fy2022", "14,694", 2, "consolidated income statement"),
        ("cogs_fy2022", "(11,969)", 2, "consolidated income statement"),
    ]


def test_a_ratio_comes_from_the_consolidated_balance_sheet_not_a_guarantors(guarantor_db: Path) -> None:
    answer = ask(guarantor_db, f"What is {NAME}'s FY2022 quick ratio?")
    assert answer.value is not None and answer.value.text == "0.69"  # (5,853 - 2,439) / 4,948
    assert {(page, statement) for _, _, page, statement in operands(answer.value)} == {
        (3, "consolidated balance sheet")
    }


def test_a_comparison_gives_the_registrants_direction(guarantor_db: Path) -> None:
    answer = ask(guarantor_db, f"Does {NAME} have an improving gross margin profile as of FY2022?")
    assert answer.value is not None and answer.value.comparison is not None
    compared = answer.value.comparison
    # The guarantor group's margin rose (13.75 % -> 15.38 %); the company's fell.
    assert [f.text for f in compared.figures] == ["21.24 %", "18.54 %"]
    assert compared.direction == "declined"
    assert {page for _, _, page, _ in operands(answer.value)} == {2}


def test_the_printed_answer_names_each_operands_statement(guarantor_db: Path) -> None:
    question = f"What is {NAME}'s FY2022 quick ratio?"
    run = CliRunner().invoke(
        cli,
        ["ask", question, "--db", str(guarantor_db), "--model", "extractive", "--as-of", AS_OF.isoformat()],
    )
    assert run.exit_code == 0, run.output
    assert f"— consolidated balance sheet, {SOURCE}, page 3" in run.output


def test_a_question_naming_the_guarantor_group_may_read_its_statements() -> None:
    assert Scope.OTHER_ENTITY in asked_scopes("What is the guarantor subsidiaries' FY2022 gross margin?")
    assert asked_scopes("What is Corvid's FY2022 gross margin?") == {Scope.PRIMARY, Scope.OTHER}


# --- the rule, as a table of the words over a table (nearest first) --------------------------------

RECOGNISED = [
    (["CONSOLIDATED BALANCE SHEETS", "ACME INC."], "balance sheet", Scope.PRIMARY),
    (["Condensed Consolidated Statements of Operations (Unaudited)"], "income statement", Scope.PRIMARY),
    (["3M Company and Subsidiaries Consolidated Statement of Cash Flow s"], "cash flow", Scope.PRIMARY),
    (["Consolidated Statement of Incom e"], "income statement", Scope.PRIMARY),
    # Management's discussion repeats a statement's figures under no consolidated title: another
    # table, read where no statement's row gives the cell (Walmart's balance sheet writes no years).
    (["Certain Balance Sheet Data"], "balance sheet", Scope.OTHER),
    (["Statement of Income for Obligor Group ($ in millions):"], "income statement", Scope.OTHER_ENTITY),
    (["Joint venture related balance sheet activity is as follows:"], "balance sheet", Scope.OTHER_ENTITY),
    (
        ["Summarized Statements of Income", "21. Guarantor Financial Information"],
        "income statement",
        Scope.OTHER_ENTITY,
    ),
    (["CONDENSED CONSOLIDATING BALANCE SHEET"], "balance sheet", Scope.OTHER_ENTITY),
    (
        ["Balance Sheets", "Schedule I - Condensed Financial Information of Registrant"],
        "balance sheet",
        Scope.OTHER_ENTITY,
    ),
    (["Statements of Income", "Parent Company Only"], "income statement", Scope.OTHER_ENTITY),
    (["Net sales by reportable segment", "Note 18. Segment Information"], None, Scope.SEGMENT),
    (["Selected Quarterly Financial Data (Unaudited)"], None, Scope.QUARTER),
    (["Item 6. Selected Financial Data"], None, Scope.SUMMARY),
    (["Reconciliation of GAAP to non-GAAP measures"], None, Scope.ADJUSTED),
    (["Results of Operations", "QUARTERLY REPORT ON FORM 10-Q"], None, Scope.OTHER),
    # A statement titled without "consolidated" may be anyone's (an investee's in a note).
    (["Statement of operations (1)"], "income statement", Scope.OTHER),
    (["INCOME STATEMENTS (In millions)"], "income statement", Scope.OTHER),
    # A note's sentence is prose, not a heading: it never decides.
    (["CONSOLIDATED STATEMENTS OF INCOME", "x" * 121 + " guarantor"], "income statement", Scope.PRIMARY),
]


# (the table's words and the prose above it, the heading paths over them): a heading path runs on
# from earlier pages, so only a note's numbered heading in it qualifies a statement.
WITH_PATHS = [
    (
        ["(Unaudited; in Millions)", "Condensed Consolidated Statement of Earnings"],
        ["SECOND QUARTER", "Consumer Health", "segment of business"],
        Scope.PRIMARY,
    ),
    (["Condensed Consolidated Balance Sheet"], ["21. Guarantor Financial Information"], Scope.OTHER_ENTITY),
    (["(In millions)"], ["CONSOLIDATED BALANCE SHEETS", "Note 18 - Segment Information"], Scope.SEGMENT),
]


@pytest.mark.parametrize(("words", "paths", "scope"), WITH_PATHS)
def test_only_a_notes_numbered_heading_in_a_heading_path_qualifies_a_statement(
    words: list[str], paths: list[str], scope: Scope
) -> None:
    assert recognise(words, paths).scope is scope


@pytest.mark.parametrize(("headings", "kind", "scope"), RECOGNISED)
def test_a_tables_statement_is_recognised_from_its_title_and_headings(
    headings: list[str], kind: str | None, scope: Scope
) -> None:
    statement = recognise(headings)
    assert (statement.kind, statement.scope) == (kind, scope)


# --- drawn tables: another entity's statement repeating the same lines ------------------------------

# Titles of the registrant's statements, and of tables that repeat their lines for someone else.
OWN_TITLES = st.sampled_from(
    [
        "CONSOLIDATED STATEMENTS OF INCOME",
        "Consolidated Statements of Operations",
        "Condensed Consolidated Statements of Earnings (Unaudited)",
        "ACME INC. AND SUBSIDIARIES CONSOLIDATED STATEMENTS OF OPERATIONS",
    ]
)
OTHER_TITLES = st.sampled_from(
    [
        "Summarized Statements of Income",
        "CONDENSED CONSOLIDATING STATEMENT OF OPERATIONS",
        "Statement of Income for Obligor Group",
        "Statements of Operations (Parent Company Only)",
        "Net sales by reportable segment",
        "Selected Quarterly Financial Data (Unaudited)",
        "Reconciliation of non-GAAP measures",
    ]
)
LABELS = st.sampled_from(["Net sales", "Total net sales", "Net sales, net of excise taxes"])


class Pages(Alone):
    def __init__(self, passages: list[Passage]) -> None:
        self.all = passages

    def passages(self, location: Location) -> Sequence[Passage]:
        return [p for p in self.all if p.page == location.page]


def drawn_row(title: str, page: int, label: str, amount: str) -> Candidate:
    text = f"{title} (In millions): {label}: December 31, 2022: {amount}; December 31, 2021: 1"
    location = Location(
        source="acme.pdf",
        page=page,
        kind=Kind.TABLE,
        section=title,
        table=1,
        row=1,
        paragraph=None,
        effective=None,
    )
    return Candidate(rank=1, score=1.0, location=location, text=text, doc_id="d", tenant="default")


@settings(max_examples=examples(60), deadline=None)
@given(
    own=OWN_TITLES,
    own_label=LABELS,
    others=st.lists(st.tuples(OTHER_TITLES, LABELS), min_size=1, max_size=4),
    order=st.randoms(use_true_random=False),
)
def test_the_registrants_row_is_read_whatever_other_tables_repeat_its_line(
    own: str, own_label: str, others: list[tuple[str, str]], order: random.Random
) -> None:
    """Whatever tables of other entities, segments, quarters or adjusted measures repeat the line,
    labelled as exactly or more so, and in whatever order retrieval returns them, a figure about
    the company reads the consolidated row (14,694), or nothing."""
    rows = [drawn_row(own, 50, own_label, "14,694")]
    rows += [drawn_row(title, 60 + n, label, f"{377 + n}") for n, (title, label) in enumerate(others)]
    order.shuffle(rows)
    context = Pages(
        [
            Passage(
                kind=Kind.TABLE,
                source="acme.pdf",
                page=c.location.page,
                text=c.text,
                section=c.location.section,
                table=1,
                row=1,
            )
            for c in rows
        ]
    )
    plan = figures.plan("What is Acme's FY2022 revenue?")
    assert plan is not None
    found = read_operands(plan, {"revenue": rows}, context)
    assert [f.value.text for f in found] in ([], ["14,694"])


def test_rows_of_one_table_under_an_adjusted_measures_heading_are_not_the_reported_rows() -> None:
    """A statement of earnings whose lower rows repeat "Net earnings" under a heading of the adjusted
    measure: the reported row is read, whichever retrieval returns first."""
    title = "Condensed Consolidated Statement of Earnings"
    adjusted = drawn_row(title, 10, "Net sales", "16,000").model_copy(
        update={
            "location": drawn_row(title, 10, "Net sales", "1").location.model_copy(
                update={"section": f"{title} > Adjusted earnings before provision for taxes", "row": 16}
            )
        }
    )
    reported = drawn_row(title, 10, "Net sales", "14,694")
    context = Pages(
        [
            Passage(
                kind=Kind.TABLE, source="acme.pdf", page=10, text=reported.text, section=title, table=1, row=1
            )
        ]
    )
    plan = figures.plan("What is Acme's FY2022 revenue?")
    assert plan is not None
    found = read_operands(plan, {"revenue": [adjusted, reported]}, context)
    assert [f.value.text for f in found] == ["14,694"]
