"""Counts of the people a document lists with an affiliation (`localqa.answers.affiliations`): the
lines "<name>, <organisation>" of the pages retrieval returned, each a verified quote, "at least"
their number; a line naming the organisation alone not counted; a hidden document's contributors
never counted; end to end on a report drawn with PyMuPDF, and the rules as tables."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pymupdf
import pytest

from localqa.answers import affiliations
from localqa.indexing.index import refresh_index
from localqa.library import Library
from localqa.models.extractive import ExtractiveModel
from localqa.types import Answer, Caller, Kind, Passage

AS_OF = date(2026, 1, 1)
CONTRIBUTORS = [
    "Radley Horton, Columbia University",
    "Patrick Kinney, Columbia University",
    "Ana Ruiz, National Oceanic and Atmospheric Administration",
    "Carlos Perez Garcia-Pando, Columbia University",
]
CATALOG = """
["health-report.pdf"]
series = "health-report"
access = "public"

["hidden-report.pdf"]
series = "hidden-report"
access = "staff"
"""


def write_report(path: Path, title: str, lines: list[str]) -> Path:
    with pymupdf.open() as document:
        page = document.new_page()
        page.insert_text((72, 72), title, fontname="hebo", fontsize=18)
        page.insert_text((72, 110), "LIST OF CONTRIBUTORS", fontname="hebo", fontsize=14)
        page.insert_text((72, 140), "Lead author: Jane Doe", fontname="helv", fontsize=10)
        page.insert_text((72, 156), "Columbia University", fontname="helv", fontsize=10)
        y = 190.0
        page.insert_text((72, y - 10), "Chapter authors", fontname="hebo", fontsize=12)
        for line in lines:
            y += 20
            page.insert_text((72, y), line, fontname="helv", fontsize=10)
        document.set_metadata({"title": title})
        document.save(path)
    return path


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("affiliations")
    write_report(folder / "health-report.pdf", "Climate and Human Health", CONTRIBUTORS)
    write_report(
        folder / "hidden-report.pdf",
        "Secret Ocean Study",
        [f"Diver {name}, Columbia University" for name in ("Ames", "Bell", "Cole", "Dunn", "Eden")],
    )
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


def test_the_people_listed_with_the_organisation_are_counted_each_a_verified_quote(library: Path) -> None:
    answer = ask(
        library,
        "How many chapter authors of the Climate and Human Health report come from Columbia University?",
        doc="health-report.pdf",
    )
    assert answer.verified and answer.value is not None and answer.value.items is not None, answer
    assert (answer.value.text, answer.value.number) == ("at least 3", 3.0)
    assert [i.text for i in answer.value.items] == [
        "Radley Horton",
        "Patrick Kinney",
        "Carlos Perez Garcia-Pando",
    ]
    assert answer.quote == "Radley Horton, Columbia University"


def test_a_hidden_documents_contributors_are_never_counted(library: Path) -> None:
    question = "How many authors of the report come from Columbia University?"
    public = ask(library, question)
    shown = {public.citation.source} if public.citation else set()
    if public.value is not None:
        shown |= {i.citation.source for i in public.value.items or ()}
    assert "hidden-report.pdf" not in shown
    assert public.value is None or public.value.number == 3
    staff = ask(library, question, Caller(role="staff"), doc="hidden-report.pdf")
    assert staff.value is not None and staff.value.number == 5, staff


@pytest.mark.parametrize(
    ("part", "noun", "org"),
    [
        (
            "How many chapter authors of this report come from Columbia University?",
            "authors",
            "Columbia University",
        ),
        ("How many contributors are at the University of Oxford?", "contributors", "University of Oxford"),
        ("How many members work for NOAA?", "members", "NOAA"),
        ("How many chapters come from Columbia University?", "chapters", None),  # no people
        ("How many authors are there?", "authors", None),  # no organisation
        ("How many authors are from the team?", "authors", None),  # not named in capitals
    ],
)
def test_which_counts_ask_for_people_of_an_organisation(part: str, noun: str, org: str | None) -> None:
    assert affiliations.affiliation_asked(part, noun) == org


def test_only_a_line_of_one_person_and_the_organisation_counts() -> None:
    lines = [
        "Radley Horton, Columbia University",
        "Columbia University",  # the organisation alone
        "The model was developed with Columbia University, which hosted it.",  # a sentence
        "Radley Horton, Columbia University",  # listed twice: once
        "Ana Ruiz, Columbia University Medical Center",  # another organisation
        "Patrick Kinney, Columbia University.",
    ]
    page = [
        Passage(kind=Kind.PROSE, source="r.pdf", page=1, text=t, paragraph=n) for n, t in enumerate(lines)
    ]
    found = affiliations.affiliated("Columbia University", [page])
    assert [name for name, _ in found] == ["Radley Horton", "Patrick Kinney"]
