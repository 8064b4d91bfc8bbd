"""Each check of a computed figure against the document's own arithmetic (`localqa.derived.crosschecks`,
issue 48), as a table: operands read for real (`operands.read_cell`) from statement rows written as
the index stores them, the figure computed (`computing.compute`), then checked. A figure whose
operands break a check is refused with the note naming it; the same figure with consistent
operands passes and names the checks it passed. End to end, a margin that disagrees with the one
management's discussion states is not shown, and the quote stands with the note."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path

import pytest
from guarantor_filing import write_guarantor_filing

from localqa.derived import computing, crosschecks, figures
from localqa.derived.glossary import glossary
from localqa.derived.operands import Found, read_cell
from localqa.indexing.index import refresh_index
from localqa.language.statements import Statement, recognise
from localqa.library import Library
from localqa.models.extractive import ExtractiveModel
from localqa.types import Candidate, Kind, Location, Passage
from localqa.values.choosing import Alone

SOURCE = "corvid-10k-fy2022.pdf"
HEADERS = ("December 31, 2022", "December 31, 2021")
INCOME = "CONSOLIDATED STATEMENTS OF INCOME"
BALANCE = "CONSOLIDATED BALANCE SHEETS"
CASH = "CONSOLIDATED STATEMENTS OF CASH FLOWS"


def row(
    title: str, page: int, number: int, label: str, cells: Sequence[str], scale: str = "millions"
) -> Passage:
    written = "; ".join(f"{h}: {c}" for h, c in zip(HEADERS, cells, strict=True))
    return Passage(
        kind=Kind.TABLE,
        source=SOURCE,
        page=page,
        text=f"{title} (In {scale}): {label}: {written}",
        section=title,
        table=1,
        row=number,
    )


def table(
    title: str, page: int, rows: Sequence[tuple[str, str, str]], scale: str = "millions"
) -> list[Passage]:
    return [row(title, page, n, label, cells, scale) for n, (label, *cells) in enumerate(rows, 1)]


class Document(Alone):
    """The pages of a drawn document and its prose, as `Context` reads them."""

    def __init__(self, passages: Sequence[Passage]) -> None:
        self.all = list(passages)

    def passages(self, location: Location) -> Sequence[Passage]:
        return [p for p in self.all if p.page == location.page]

    def passages_containing(self, source: str, text: str, limit: int) -> Sequence[Passage]:
        return [p for p in self.all if text in p.text][:limit]


def candidate(passage: Passage) -> Candidate:
    location = Location(
        source=passage.source,
        page=passage.page,
        kind=passage.kind,
        section=passage.section,
        table=passage.table,
        row=passage.row,
        paragraph=passage.paragraph,
        effective=None,
    )
    return Candidate(rank=1, score=1.0, location=location, text=passage.text, doc_id="d", tenant="default")


def label(passage: Passage) -> str:
    return passage.text.split(": ")[1]


def check(question: str, document: Document, choose: dict[str, Passage]) -> crosschecks.Checked:
    """The question's figure, from the rows `choose` names by line item, checked."""
    plan = figures.plan(question)
    assert plan is not None
    found = []
    for need in plan.needs:
        passage = choose[need.item.key]
        read = read_cell(need, candidate(passage), document)
        assert read is not None, need
        title = recognise([passage.section or ""])
        found.append(Found(read.need, read.candidate, read.value, read.quote, title))
    value = computing.compute(plan, found).value
    assert value is not None
    candidates = {key: [candidate(p) for p in document.all if p.kind is Kind.TABLE] for key in choose}
    return crosschecks.check(plan, found, value, candidates, document, glossary())


INCOME_ROWS = [
    ("Net sales", "14,694", "12,861"),
    ("Cost of sales", "(11,969)", "(10,129)"),
    ("Gross profit", "2,725", "2,732"),
    ("Net income", "805", "939"),
]
BALANCE_ROWS = [
    ("Inventories", "2,439", "2,291"),
    ("Total current assets", "5,853", "5,626"),
    ("Total assets", "17,165", "16,525"),
    ("Total current liabilities", "4,948", "5,086"),
    ("Total liabilities", "12,346", "11,822"),
    ("Total liabilities and equity", "17,165", "16,525"),
]
MARGIN = "What is Corvid's FY2022 gross margin?"
QUICK = "What is Corvid's FY2022 quick ratio?"


def income(rows: Sequence[tuple[str, str, str]] = INCOME_ROWS, scale: str = "millions") -> list[Passage]:
    return table(INCOME, 2, rows, scale)


def by_label(passages: Sequence[Passage]) -> dict[str, Passage]:
    return {label(p): p for p in passages}


def margin_rows(passages: Sequence[Passage]) -> dict[str, Passage]:
    rows = by_label(passages)
    return {"revenue": rows["Net sales"], "cogs": rows["Cost of sales"]}


def quick_rows(passages: Sequence[Passage]) -> dict[str, Passage]:
    rows = by_label(passages)
    return {
        "current_assets": rows["Total current assets"],
        "inventory": rows["Inventories"],
        "current_liabilities": rows["Total current liabilities"],
    }


# --- consistent operands pass, and say which checks ------------------------------------------------


def test_a_margin_with_consistent_operands_names_the_checks_it_passed() -> None:
    passages = income()
    checked = check(MARGIN, Document(passages), margin_rows(passages))
    assert checked.failed is None
    assert checked.passed == (
        "one scale (millions)",
        "operands from the consolidated income statement",
        "gross profit = net sales - cost of sales (December 31, 2022)",
    )


def test_a_ratio_with_consistent_operands_names_the_checks_it_passed() -> None:
    passages = table(BALANCE, 3, BALANCE_ROWS)
    checked = check(QUICK, Document(passages), quick_rows(passages))
    assert checked.failed is None
    assert "a total is at least each part (total current assets ≥ inventory)" in checked.passed
    assert "total assets = total liabilities and equity (December 31, 2022: 17,165)" in checked.passed


# --- each check, broken ----------------------------------------------------------------------------


def test_operands_that_break_gross_profit_identity_are_refused() -> None:
    broken = [
        ("Net sales", "14,694", "12,861"),
        ("Cost of sales", "(11,969)", "(10,129)"),
        ("Gross profit", "2,900", "2,732"),
    ]
    passages = income(broken)
    checked = check(MARGIN, Document(passages), margin_rows(passages))
    assert checked.failed == (
        "not computed: in the consolidated income statement at December 31, 2022, net sales 14,694 less "
        "cost of sales 11,969 is not its gross profit 2,900"
    )


@pytest.mark.parametrize(
    ("said", "failed"),
    [
        ("Gross margin was 25.0% in 2022, compared with 21.2% in 2021.", True),
        ("Gross margin was 18.5% in 2022, compared with 21.2% in 2021.", False),
        # An adjusted measure's sentence is another figure: no check is made from it.
        ("Adjusted gross margin was 25.0% in 2022.", False),
        # Another year's figure is not this year's.
        ("Gross margin was 25.0% in 2020.", False),
    ],
)
def test_a_margin_that_disagrees_with_the_one_the_document_states_is_refused(said: str, failed: bool) -> None:
    passages = income()
    prose = Passage(kind=Kind.PROSE, source=SOURCE, page=5, text=said, section="MD&A", paragraph=1)
    checked = check(MARGIN, Document([*passages, prose]), margin_rows(passages))
    if failed:
        assert checked.failed == (
            "not computed: gross margin 18.54 % disagrees with the 25.0 % the document states for 2022 "
            "(page 5)"
        )
    else:
        assert checked.failed is None
        assert any(c.startswith("agrees with the gross margin") for c in checked.passed) == (
            said.startswith("Gross margin was 18.5")
        )


def test_operands_in_mixed_scales_are_refused() -> None:
    sales = income()[:1]
    costs = table(INCOME, 2, INCOME_ROWS[1:2], scale="thousands")
    passages = [*sales, *costs]
    checked = check(MARGIN, Document(passages), margin_rows(passages))
    assert checked.failed == (
        "not computed: Net sales 14,694 is in millions and Cost of sales (11,969) in thousands: the "
        "operands are not in one scale"
    )


def test_operands_from_two_statements_of_one_kind_are_refused() -> None:
    own = income()
    other = table("Summarized Statements of Income", 4, [("Cost of sales", "(319)", "(345)")])
    passages = [*own, *other]
    checked = check(MARGIN, Document(passages), {"revenue": own[0], "cogs": other[0]})
    assert checked.failed is not None and checked.failed.startswith(
        "not computed: Net sales 14,694 in the consolidated income statement and Cost of sales (319) in "
        "the Summarized Statements of Income (other entity) are not from one statement"
    )


def test_a_total_less_than_its_part_is_refused() -> None:
    rows = [("Inventories", "6,439", "2,291"), *BALANCE_ROWS[1:]]
    passages = table(BALANCE, 3, rows)
    checked = check(QUICK, Document(passages), quick_rows(passages))
    assert (
        checked.failed
        == "not computed: Total current assets 5,853 is less than Inventories 6,439, a part of it"
    )


def test_a_balance_sheet_whose_assets_are_not_its_liabilities_and_equity_is_refused() -> None:
    rows = [*BALANCE_ROWS[:-1], ("Total liabilities and equity", "17,001", "16,525")]
    passages = table(BALANCE, 3, rows)
    checked = check(QUICK, Document(passages), quick_rows(passages))
    assert checked.failed == (
        "not computed: in the consolidated balance sheet at December 31, 2022, total assets 17,165 are "
        "not total liabilities and equity 17,001"
    )


@pytest.mark.parametrize(("cash_flow_net_income", "failed"), [("905", True), ("805", False)])
def test_the_same_line_in_another_statement_must_agree(cash_flow_net_income: str, failed: bool) -> None:
    own = income()
    cash = table(CASH, 4, [("Net income", cash_flow_net_income, "939")])
    rows = by_label(own)
    question = "What is Corvid's FY2022 net profit margin?"
    checked = check(
        question, Document([*own, *cash]), {"net_income": rows["Net income"], "revenue": rows["Net sales"]}
    )
    if failed:
        assert checked.failed == (
            "not computed: Net income 805 in the consolidated income statement disagrees with the "
            "consolidated statement of cash flows's 905"
        )
    else:
        assert checked.failed is None
        assert "net income agrees with the consolidated statement of cash flows" in checked.passed


def test_a_check_the_document_has_no_rows_for_is_not_made() -> None:
    passages = income([row for row in INCOME_ROWS if row[0] != "Gross profit"])
    checked = check(MARGIN, Document(passages), margin_rows(passages))
    assert checked.failed is None
    assert not any(c.startswith("gross profit =") for c in checked.passed)


def test_an_unrecognised_table_is_no_statement() -> None:
    assert recognise([""]) == Statement(None, recognise([""]).scope) and not recognise([""]).primary


# --- end to end ------------------------------------------------------------------------------------

CATALOG = f"""
["{SOURCE}"]
series = "corvid-10k"
access = "public"
period = "FY2022"
"""


@pytest.mark.parametrize(
    ("said", "shown"),
    [("Gross margin was 25.0% in 2022.", None), ("Gross margin was 18.5% in 2022.", "18.54 %")],
)
def test_a_margin_the_filing_states_otherwise_is_not_shown_and_the_quote_stands(
    tmp_path: Path, said: str, shown: str | None
) -> None:
    write_guarantor_filing(tmp_path / SOURCE, notes=[said])
    (tmp_path / "catalog.toml").write_text(CATALOG, encoding="utf-8")
    db = tmp_path / "index.sqlite3"
    assert not refresh_index(tmp_path, db, embed=False).problems
    with Library(db) as library:
        asked = library.answer(
            "What is Corvid Packaging's FY2022 gross margin?", as_of=date(2026, 1, 1), model=ExtractiveModel()
        )
    answer = asked.parts[0].answer
    if shown is None:
        assert answer.verified and (answer.value is None or not answer.value.derived)
        assert answer.figure_note == (
            "not computed: gross margin 18.54 % disagrees with the 25.0 % the document states for 2022 "
            "(page 5)"
        )
    else:
        assert answer.value is not None and answer.value.text == shown
        assert "agrees with the gross margin of 18.5 % the document states (page 5)" in answer.value.checks
        assert answer.as_json()["value"]["checks"] == list(answer.value.checks)
