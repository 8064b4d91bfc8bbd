"""Extremes over the rows of one table (`localqa.derived.extremes`), end to end on filings drawn with
PyMuPDF: the row with the largest figure, the row whose figure fell most (growth computed per row),
a row with a missing cell said, the total row left out, and a hidden filing's rows never compared."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pymupdf
import pytest

from localqa.derived import extremes
from localqa.indexing.index import refresh_index
from localqa.library import Library
from localqa.models.extractive import ExtractiveModel
from localqa.types import Answer, Caller, Comparison, Kind, Passage
from localqa.values.cells import read_row

AS_OF = date(2026, 1, 1)
COLUMNS = ("2022", "2021")
# Net revenues by geographic region; Latin America reports no 2021 figure (a new region).
REGIONS = {
    "zenith": [
        ("North America", "5,000", "4,500"),
        ("Europe", "2,000", "2,200"),
        ("Asia Pacific", "1,500", "1,400"),
        ("Latin America", "300", ""),
        ("Total net revenues", "8,800", "8,100"),
    ],
    "hidden": [
        ("North America", "1,000", "900"),
        ("Antarctica", "90,000", "99,000"),
        ("Total net revenues", "91,000", "99,900"),
    ],
}
CATALOG = """
["zenith-10k-fy2022.pdf"]
series = "zenith-10k"
access = "public"
period = "FY2022"

["hidden-10k-fy2022.pdf"]
series = "hidden-10k"
access = "staff"
period = "FY2022"
"""


def write_segments(path: Path, company: str, rows: list[tuple[str, str, str]]) -> Path:
    with pymupdf.open() as document:
        page = document.new_page()
        page.insert_text((72, 72), company.upper(), fontname="hebo", fontsize=11)
        page.insert_text((72, 88), "NET REVENUES BY GEOGRAPHIC REGION", fontname="hebo", fontsize=11)
        page.insert_text((72, 104), "(In millions)", fontname="helv", fontsize=9)
        for x, header in zip((420.0, 520.0), COLUMNS, strict=True):
            width = pymupdf.get_text_length(header, fontname="hebo", fontsize=9)
            page.insert_text((x - width, 130), header, fontname="hebo", fontsize=9)
        for number, (label, *cells) in enumerate(rows):
            y = 150 + 16 * number
            page.insert_text((72, y), label, fontname="helv", fontsize=9)
            for x, cell in zip((420.0, 520.0), cells, strict=True):
                width = pymupdf.get_text_length(cell, fontname="helv", fontsize=9)
                page.insert_text((x - width, y), cell, fontname="helv", fontsize=9)
        document.set_metadata({"title": f"{company} Annual Report 2022"})
        document.save(path)
    return path


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("extremes")
    write_segments(folder / "zenith-10k-fy2022.pdf", "Zenith Games Inc.", REGIONS["zenith"])
    write_segments(folder / "hidden-10k-fy2022.pdf", "Hidden Games Inc.", REGIONS["hidden"])
    (folder / "catalog.toml").write_text(CATALOG, encoding="utf-8")
    db = folder / "index.sqlite3"
    report = refresh_index(folder, db, embed=False)
    assert not report.problems, report.problems
    return db


def ask(db: Path, question: str, caller: Caller | None = None) -> Answer:
    with Library(db) as opened:
        return opened.answer(question, as_of=AS_OF, caller=caller, model=ExtractiveModel()).parts[0].answer


def compared(answer: Answer) -> Comparison:
    assert answer.verified and answer.value is not None and answer.value.comparison is not None, answer
    return answer.value.comparison


def test_the_row_with_the_largest_figure_with_every_row_an_operand(library: Path) -> None:
    answer = ask(library, "Which region of Zenith Games had the largest net revenues in FY2022?")
    comparison = compared(answer)
    assert (answer.value.row, answer.value.text, comparison.direction) == (
        "North America",
        "5,000",
        "largest",
    )  # type: ignore[union-attr]
    assert [f.row for f in comparison.figures] == ["North America", "Europe", "Asia Pacific", "Latin America"]
    assert answer.quote is not None and answer.quote.startswith("NET REVENUES BY GEOGRAPHIC REGION")
    assert extremes.extreme_check(answer.value) is None  # type: ignore[arg-type]


def test_the_row_that_fell_most_by_growth_with_the_missing_cell_said(library: Path) -> None:
    answer = ask(library, "Which region's net revenues fell most at Zenith Games in FY2022?")
    comparison = compared(answer)
    assert answer.value is not None and (answer.value.row, answer.value.text) == ("Europe", "-9.09 %")
    assert comparison.direction == "smallest"
    assert [f.row for f in comparison.figures] == ["North America", "Europe", "Asia Pacific"]
    assert "no figure to compare in Latin America" in comparison.rule
    assert "Total net revenues" not in {f.row for f in comparison.figures}


def test_a_hidden_filings_rows_are_never_compared(library: Path) -> None:
    answer = ask(library, "Which region of Hidden Games had the largest net revenues in FY2022?")
    shown = {answer.citation.source} if answer.citation else set()
    if answer.value is not None and answer.value.comparison is not None:
        shown |= {o.citation.source for f in answer.value.comparison.figures for o in f.operands or ()}
    assert "hidden-10k-fy2022.pdf" not in shown
    staff = ask(
        library, "Which region of Hidden Games had the largest net revenues in FY2022?", Caller(role="staff")
    )
    assert staff.value is not None and staff.value.row == "Antarctica"


def test_which_questions_ask_for_an_extreme() -> None:
    fell = extremes.plan("Which region's revenue fell most in FY2022?")
    assert fell is not None and fell.lowest and fell.growth
    largest = extremes.plan(
        "Which type of debt received the largest investment among the short term investments?"
    )
    assert largest is not None and not largest.lowest and not largest.growth
    fastest = extremes.plan("Which segment grew fastest in FY2023?")
    assert fastest is not None and not fastest.lowest and fastest.growth
    assert extremes.plan("What is the largest risk the company names?") is None


def _row(number: int, text: str) -> Passage:
    return Passage(kind=Kind.TABLE, source="a.pdf", page=1, text=text, table=1, row=number)


def test_the_rows_under_the_section_the_part_names_up_to_its_subtotal() -> None:
    # A ruled table whose first column reads as a cell: its labels are the cells with no figure.
    rows = [
        _row(1, "Funds: Cash and cash equivalents; $: 2,195; $: 18,001"),
        _row(2, "Funds: Short-term investments:"),
        _row(3, "Funds: U.S. government securities; Level 1: Level 1; $: 57,696; $: 56,835"),
        _row(4, "Funds: Corporate bonds; Level 1: Level 2; $: 416,420; $: 213,875"),
        _row(5, "Funds: Short-term investments; $: 474,116; $: 270,710"),
        _row(6, "Funds: Total debt investments; $: 476,311; $: 288,711"),
    ]
    question = "Which type of debt received the largest investment among the short term investments?"
    under = extremes.rows_under(question, rows)
    assert [r.row for r in under] == [3, 4]
    assert [extremes.row_label(read_row(r.text)) for r in under] == [
        "U.S. government securities",
        "Corporate bonds",
    ]
    assert extremes.rows_under("Which fund is largest?", rows) == rows
