"""Review of this stop's answer-stage code (definitions of acronyms, numbered entries by place):
the doubts beside a replaced quote are the new quote's; hidden documents are never read through
the new index read, whatever their names; nothing unverified is shown. End to end on reports drawn
with PyMuPDF through `localqa.Library`."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pymupdf
import pytest
from drawn_reports import catalog, indexed, write_report

from localqa.library import Library
from localqa.models.extractive import ExtractiveModel
from localqa.types import Answer, Caller

AS_OF = date(2026, 1, 1)
DEFINING = (
    "The department implements these programmes through, mainly, the Physical Research Laboratory "
    "(PRL), the National Atmospheric Research Laboratory (NARL) and the Semi-Conductor Laboratory (SCL)."
)
SPACE = [
    ["The Space Commission formulates the policies of the space programme.", DEFINING],
    [
        "NARL at Gadanki is a centre for atmospheric research.",
        "The MST Radar facility at NARL observes the winds.",
    ],
]


def ask(
    db: Path, question: str, docs: tuple[str, ...] = (), caller: Caller | None = None, k: int = 1
) -> Answer:
    with Library(db) as opened:
        asked = opened.answer(
            question, as_of=AS_OF, caller=caller, model=ExtractiveModel(), documents=docs, k=k
        )
    return asked.parts[0].answer


@pytest.fixture(scope="module")
def space(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("review37-space")
    write_report(folder / "space-report.pdf", "Department of Space", SPACE)
    return indexed(folder, catalog(["space-report.pdf"]))


def test_no_doubt_of_the_replaced_quote_is_left_beside_the_definition(space: Path) -> None:
    # Retrieval returns the Space Commission's sentence, which never says "NARL": coverage doubts
    # it. The definition that replaces it says "NARL": that doubt is no longer true.
    answer = ask(space, "What does NARL stand for in the Space Commission?", ("space-report.pdf",))
    assert answer.value is not None and answer.value.text == "National Atmospheric Research Laboratory", (
        answer
    )
    assert answer.quote is not None and "(NARL)" in answer.quote
    assert not [d for d in answer.doubts if d.term and d.term.lower() == "narl"], answer.doubts
    assert answer.coverage is None or all(
        not t.missing for t in answer.coverage.terms if t.term.lower() == "narl"
    )


CHAPTERS = ["1. Introduction: Climate and Health", "2. Temperature-Related Illness", "3. Air Quality Impacts"]


def write_contents(path: Path, title: str, chapters: list[str]) -> Path:
    """A report whose first page is a contents page numbering its chapters under "CHAPTERS"."""
    with pymupdf.open() as document:
        page = document.new_page()
        page.insert_text((72, 72), title, fontname="hebo", fontsize=18)
        page.insert_text((72, 110), "TABLE OF CONTENTS", fontname="hebo", fontsize=14)
        page.insert_text((72, 140), "CHAPTERS", fontname="hebo", fontsize=12)
        for n, entry in enumerate(chapters):
            page.insert_text((72, 160 + 24 * n), f"{entry} {'.' * 30} {n + 3}", fontname="helv", fontsize=10)
        document.set_metadata({"title": title})
        document.save(path)
    return path


@pytest.fixture(scope="module")
def guides(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("review37-guides")
    write_report(
        folder / "marine-guide.pdf",
        "Marine Turbines Guide",
        [["The Marine Turbines Guide explains in its chapters how tidal turbines are moored at sea."]],
    )
    write_contents(folder / "climate-report.pdf", "Climate and Human Health", CHAPTERS)
    return indexed(folder, catalog(["marine-guide.pdf", "climate-report.pdf"]))


def test_another_documents_chapters_are_never_the_list(guides: Path) -> None:
    """The guide the part names has no contents page; the climate report's, though retrieved, is
    another document's: no list, and the quote of the guide stands."""
    answer = ask(guides, "What are the chapters of the Marine Turbines Guide?", k=5)
    assert answer.verified and answer.citation is not None, answer
    assert answer.citation.source == "marine-guide.pdf"
    assert answer.value is None or not answer.value.items, answer
    # Asked of the report, the same contents are its list, judged on the quote they become: the
    # notes beside it are that quote's, and other evidence is of other documents.
    report = ask(guides, "What are the chapters of Climate and Human Health?", k=5)
    assert report.value is not None and report.value.items, report
    assert report.citation is not None and report.citation.source == "climate-report.pdf"
    assert report.quote == report.value.items[0].quote
    assert all(where.source != report.citation.source for where in report.other_evidence)
    assert report.coverage is not None and all(
        t.found != "quote" or t.term.lower() in report.quote.lower() for t in report.coverage.terms
    )
