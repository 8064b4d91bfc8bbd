"""Totals and differences over the cells of one table a part names (`localqa.derived.totals`), end
to end on papers drawn with PyMuPDF: the cells of the columns a part names summed at the row of its
measure, one side less the other, the rows named at a column, a named cell with no figure said
(never guessed), a hidden document's table never read; and, as tables, the parts that ask."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pymupdf
import pytest

from localqa.derived import computing, totals
from localqa.indexing.index import refresh_index
from localqa.library import Library
from localqa.models.extractive import ExtractiveModel
from localqa.types import Answer, Caller, Value

AS_OF = date(2026, 1, 1)
# A paper's dataset statistics: the datasets are the columns, the measures the rows; one dataset
# gives no word counts ("-").
DATASETS = (
    "DATASET STATISTICS",
    ("Amazon-beauty", "Amazon-music", "Personality"),
    [
        ("# of items", "85", "8,895", "21,776"),
        ("# of users", "991", "1,791", "678"),
        ("Avg. words per review", "51.01", "-", "40.20"),
    ],
)
# Recruiters are the rows, the measures the columns.
RECRUITERS = (
    "RECRUITER ACTIVITY",
    ("Profiles viewed", "InMails sent", "Non-response InMails"),
    [
        ("Recruiter A", "120", "300", "190"),
        ("Recruiter B", "109", "280", "190"),
    ],
)
# A paper only staff may see, with an Amazon dataset of its own.
HIDDEN = (
    "DATASET STATISTICS",
    ("Amazon-books", "Amazon-games", "Reddit"),
    [("# of documents", "40,000", "2,000", "9,000"), ("# of authors", "700", "90", "4,000")],
)
CATALOG = """
["recsys-paper.pdf"]
series = "recsys-paper"
access = "public"

["hidden-paper.pdf"]
series = "hidden-paper"
access = "staff"
"""


def write_paper(
    path: Path, title: str, tables: list[tuple[str, tuple[str, ...], list[tuple[str, ...]]]]
) -> Path:
    with pymupdf.open() as document:
        page = document.new_page()
        page.insert_text((72, 60), title, fontname="hebo", fontsize=12)
        y = 100.0
        for caption, headers, rows in tables:
            page.insert_text((72, y), caption, fontname="hebo", fontsize=11)
            y += 24
            columns = (300.0, 420.0, 540.0)
            for x, header in zip(columns, headers, strict=True):
                width = pymupdf.get_text_length(header, fontname="hebo", fontsize=9)
                page.insert_text((x - width, y), header, fontname="hebo", fontsize=9)
            for label, *cells in rows:
                y += 16
                page.insert_text((72, y), label, fontname="helv", fontsize=9)
                for x, cell in zip(columns, cells, strict=True):
                    width = pymupdf.get_text_length(cell, fontname="helv", fontsize=9)
                    page.insert_text((x - width, y), cell, fontname="helv", fontsize=9)
            y += 60
        document.set_metadata({"title": title})
        document.save(path)
    return path


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("totals")
    write_paper(folder / "recsys-paper.pdf", "Personality-aware Recommendation", [DATASETS, RECRUITERS])
    write_paper(folder / "hidden-paper.pdf", "Hidden Corpus Study", [HIDDEN])
    (folder / "catalog.toml").write_text(CATALOG, encoding="utf-8")
    db = folder / "index.sqlite3"
    report = refresh_index(folder, db, embed=False)
    assert not report.problems, report.problems
    return db


def ask(db: Path, question: str, caller: Caller | None = None) -> Answer:
    with Library(db) as opened:
        return opened.answer(question, as_of=AS_OF, caller=caller, model=ExtractiveModel()).parts[0].answer


def operands(answer: Answer) -> list[tuple[str | None, str | None, str]]:
    assert answer.value is not None
    return [(o.value.row, o.value.column, o.value.text) for o in answer.value.operands or ()]


def test_the_cells_of_the_columns_named_summed_at_the_row_of_the_measure(library: Path) -> None:
    answer = ask(library, "How many items in total of the Amazon related datasets in the paper?")
    assert answer.verified and answer.value is not None, answer
    assert (answer.value.text, answer.value.number, answer.value.expression) == (
        "8,980",
        8980.0,
        "cell_1 + cell_2",
    )
    assert operands(answer) == [
        ("# of items", "Amazon-beauty", "85"),
        ("# of items", "Amazon-music", "8,895"),
    ]
    assert computing.figure_check(answer.value, answer.quote or "") is None
    assert {o.citation.source for o in answer.value.operands or ()} == {"recsys-paper.pdf"}


def test_one_side_less_the_other(library: Path) -> None:
    answer = ask(library, "How many more users does the Amazon-music dataset have than Personality?")
    assert answer.value is not None, answer
    assert (answer.value.text, answer.value.expression) == ("1,113", "cell_1 - cell_2")
    assert operands(answer) == [("# of users", "Amazon-music", "1,791"), ("# of users", "Personality", "678")]


def test_the_rows_named_at_the_column_of_the_measure(library: Path) -> None:
    answer = ask(library, "What is the total number of non-response InMails for Recruiter A and B?")
    assert answer.value is not None, answer
    assert answer.value.text == "380"
    assert operands(answer) == [
        ("Recruiter A", "Non-response InMails", "190"),
        ("Recruiter B", "Non-response InMails", "190"),
    ]


def test_a_named_cell_with_no_figure_is_said_not_guessed(library: Path) -> None:
    answer = ask(
        library, "What is the average words per review of the Amazon-beauty and Amazon-music datasets?"
    )
    assert answer.verified and answer.value is None, answer
    assert answer.figure_note is not None and "Amazon-music" in answer.figure_note, answer.figure_note
    assert "(-)" in answer.figure_note


def test_a_hidden_documents_table_is_never_an_operand(library: Path) -> None:
    question = "How many documents in total of the Amazon related datasets?"
    public = ask(library, question)
    shown = {public.citation.source} if public.citation else set()
    if public.value is not None:
        shown |= {o.citation.source for o in public.value.operands or ()}
    assert "hidden-paper.pdf" not in shown
    staff = ask(library, question, Caller(role="staff"))
    assert staff.value is not None and staff.value.text == "42,000", staff


@pytest.mark.parametrize(
    ("part", "operation", "measure", "names"),
    [
        (
            "How many items in total of Amazon related datasets in the paper?",
            "sum",
            {"item"},
            ("How many items in total of Amazon related datasets in the paper?",),
        ),
        (
            "How many more Tweets are attributed to Germanwings than Lufthansa?",
            "difference",
            {"tweet"},
            ("How many more Tweets are attributed to Germanwings", "Lufthansa?"),
        ),
        (
            "What is the difference between Recruiter A and Recruiter B in profiles viewed?",
            "difference",
            set(),
            ("Recruiter A", "Recruiter B in profiles viewed?"),
        ),
        (
            "What is the total number of non-response InMails for Recruiter A and B?",
            "sum",
            {"non", "response", "inmail"},
            ("What is the total number of non-response InMails for Recruiter A and B?",),
        ),
    ],
)
def test_parts_that_ask_for_arithmetic_over_named_cells(
    part: str, operation: str, measure: set[str], names: tuple[str, ...]
) -> None:
    found = totals.plan(part)
    assert found is not None and (found.operation, set(found.measure), found.names) == (
        operation,
        measure,
        names,
    )


@pytest.mark.parametrize(
    "part",
    [
        "How many items does the Amazon-beauty dataset have?",  # one cell: the value rules'
        "What is the operating margin of Adobe in FY2015?",
        "Which dataset has the most items?",  # an extreme
    ],
)
def test_parts_that_ask_for_no_arithmetic_over_named_cells(part: str) -> None:
    assert totals.plan(part) is None


@pytest.mark.parametrize(
    ("part", "value", "stands"),
    [
        ("How many Tweets are attributed to Germanwings and Airbus in total?", "41 tweets", True),
        ("How many Tweets are attributed to Germanwings and Airbus in total?", "24 hours", False),
        ("How many more Tweets are attributed to Germanwings than Lufthansa?", "24 tweets", False),
        ("How many more debit card users were there in 2015 compared to 2014?", "2016", False),
        ("What is the average number of words per user in the Amazon datasets?", "990.48 words", True),
        # a count of the things averaged is not the average gap asked for
        (
            "What is the average performance gap between ProgramFC and our system?",
            "three performances",
            False,
        ),
    ],
)
def test_a_number_its_quote_states_stands_only_as_the_figure_asked(
    part: str, value: str, stands: bool
) -> None:
    chosen = totals.plan(part)
    assert chosen is not None
    assert totals.stated(chosen, Value(text=value)) is stands
