"""Counts of numbered entries (`localqa.answers.numbered`): the entries "1." to "N." under a
heading that names what is counted, or "Step 1" to "Step N", each a verified quote; the appendices
beside them not counted; a hidden document's contents never counted; end to end on a report
drawn with PyMuPDF, and the run rule as a table."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pymupdf
import pytest

from localqa.answers import numbered
from localqa.indexing.index import refresh_index
from localqa.library import Library
from localqa.models.extractive import ExtractiveModel
from localqa.types import Answer, Caller, Kind, Location, Passage

AS_OF = date(2026, 1, 1)
CHAPTERS = [
    "1. Introduction: Climate and Health",
    "2. Temperature-Related Illness",
    "3. Air Quality Impacts",
    "4. Vector-Borne Diseases",
    "5. Populations of Concern",
]
APPENDICES = ["Appendix 1: Technical Support", "Appendix 2: Literature Review", "Appendix 3: Glossary"]
CATALOG = """
["health-report.pdf"]
series = "health-report"
access = "public"

["hidden-report.pdf"]
series = "hidden-report"
access = "staff"
"""


def write_report(path: Path, title: str, chapters: list[str]) -> Path:
    with pymupdf.open() as document:
        page = document.new_page()
        page.insert_text((72, 72), title, fontname="hebo", fontsize=18)
        page.insert_text((72, 110), "TABLE OF CONTENTS", fontname="hebo", fontsize=14)
        page.insert_text((72, 140), "CHAPTERS", fontname="hebo", fontsize=12)
        y = 160.0
        for entry in ["Executive Summary", *chapters, *APPENDICES]:
            page.insert_text((72, y), f"{entry} {'.' * 30} {int(y)}", fontname="helv", fontsize=10)
            y += 24
        body = document.new_page()
        body.insert_text((72, 72), "About this report", fontname="hebo", fontsize=14)
        body.insert_text(
            (72, 100),
            "The report assesses how a changing climate affects human health.",
            fontname="helv",
            fontsize=10,
        )
        document.set_metadata({"title": title})
        document.save(path)
    return path


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("numbered")
    write_report(folder / "health-report.pdf", "Climate and Human Health", CHAPTERS)
    write_report(
        folder / "hidden-report.pdf", "Secret Ocean Study", [f"{n}. Ocean part {n}" for n in range(1, 8)]
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


def test_the_chapters_a_contents_page_numbers_are_counted_each_a_verified_quote(library: Path) -> None:
    answer = ask(
        library, "How many chapters are in the Climate and Human Health report?", doc="health-report.pdf"
    )
    assert answer.verified and answer.value is not None and answer.value.items is not None, answer
    assert (answer.value.text, answer.value.number) == ("5", 5.0)
    assert [i.text for i in answer.value.items] == CHAPTERS  # the dot leaders and page numbers left out
    assert all(i.citation.source == "health-report.pdf" for i in answer.value.items)
    assert answer.quote == answer.value.items[0].quote


def test_a_hidden_documents_contents_are_never_counted(library: Path) -> None:
    question = "How many chapters are in the Secret Ocean Study?"
    public = ask(library, question)
    shown = {public.citation.source} if public.citation else set()
    shown |= (
        {i.citation.source for i in (public.value.items or ()) if public.value} if public.value else set()
    )
    assert "hidden-report.pdf" not in shown
    staff = ask(library, question, Caller(role="staff"), doc="hidden-report.pdf")
    assert staff.value is not None and staff.value.text == "7", staff


SECTION = "Guide > Replacing the filter"


def _lines(*texts: str, section: str = SECTION) -> list[Passage]:
    return [
        Passage(kind=Kind.PROSE, source="guide.pdf", page=3, text=t, section=section, paragraph=n)
        for n, t in enumerate(texts, start=1)
    ]


CITED = Location(
    source="guide.pdf",
    page=3,
    kind=Kind.PROSE,
    section=SECTION,
    table=None,
    row=None,
    paragraph=1,
    effective=None,
)


@pytest.mark.parametrize(
    ("noun", "texts", "counted"),
    [
        # "Step N" entries say the noun; lines between them are their own text.
        (
            "steps",
            ["Step 1 Turn off the unit.", "Wait a minute.", "Step 2 Open the lid.", "Step 3 Lift it."],
            3,
        ),
        # Bare numbers count only what their heading names: "steps" is not in "Replacing the filter".
        ("steps", ["1. Turn off the unit.", "2. Open the lid."], None),
        # Appendices are not chapters, whatever their numbers.
        ("chapters", ["Appendix 1: Data", "Appendix 2: Methods"], None),
        # Out of order: no run.
        ("steps", ["Step 1 Turn off.", "Step 3 Lift it."], None),
        # Two runs that could both be the count: neither is chosen.
        ("steps", ["Step 1 Off.", "Step 2 Open.", "Step 1 Close.", "Step 2 On."], None),
        # A bare number before a unit ("5 pages") or a figure is no entry.
        ("pages", ["1 page max", "2 pages max"], None),
    ],
)
def test_numbered_runs(noun: str, texts: list[str], counted: int | None) -> None:
    run = numbered.numbered_run(noun, _lines(*texts), CITED)
    assert (len(run.entries) if run else None) == counted


def test_bare_numbers_under_a_heading_that_names_the_noun() -> None:
    section = "Report > Contents > Chapters"
    cited = CITED.model_copy(update={"section": section})
    run = numbered.numbered_run(
        "chapters", _lines("1. Intro", "2. Methods", "Appendix 1: Data", section=section), cited
    )
    assert run is not None and [p.text for p in run.entries] == ["1. Intro", "2. Methods"]
    assert numbered.entry_text("1. Introduction ........ 25") == "1. Introduction"
