"""Counts of numbered entries (`localqa.answers.numbered`): the entries "1." to "N." under a
heading that names what is counted, or "Step 1" to "Step N", each a verified quote; the appendices
beside them not counted; a hidden document's contents never counted; end to end on a report
drawn with PyMuPDF, and the run rule as a table."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path

import pymupdf
import pytest

from localqa.answers import listing, numbered, ordinals
from localqa.indexing.index import refresh_index
from localqa.library import Library
from localqa.models.extractive import ExtractiveModel
from localqa.types import Answer, Caller, Candidate, Kind, Location, Passage

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


# --- where a run is looked for, and entries asked for by place ------------------------------------


def _candidate(rank: int, source: str, page: int, section: str) -> Candidate:
    where = CITED.model_copy(update={"source": source, "page": page, "section": section})
    return Candidate(rank=rank, score=1.0 / rank, location=where, text="v", doc_id=source, tenant="t")


CONTENTS = "Report > Contents > Chapters"


def _pages(runs: dict[tuple[str, int], list[str]]) -> Callable[[Location], list[Passage]]:
    """A page's passages as a caller may see them: each run's lines under the contents heading."""

    def page(where: Location) -> list[Passage]:
        texts = runs.get((where.source, where.page or 0), [])
        return [
            Passage(
                kind=Kind.PROSE, source=where.source, page=where.page, text=t, section=CONTENTS, paragraph=n
            )
            for n, t in enumerate([*texts, "Appendix 1: Data"], start=1)
        ]

    return page


def test_a_run_under_a_candidates_heading_is_found_when_the_quotes_heading_has_none() -> None:
    candidates = [_candidate(1, "a.pdf", 9, "Report > Methods"), _candidate(2, "a.pdf", 2, CONTENTS)]
    page = _pages({("a.pdf", 2): ["1. Intro", "2. Methods", "3. Results"]})
    cited = candidates[0].location
    run = numbered.find_run("chapters", cited, candidates, page)
    assert run is not None and [p.text for p in run.entries] == ["1. Intro", "2. Methods", "3. Results"]
    assert run.at == candidates[1].location


def test_one_documents_run_is_never_mixed_with_or_replaced_by_anothers() -> None:
    runs = {("a.pdf", 2): ["1. Intro", "2. Methods"], ("b.pdf", 4): ["1. Ocean", "2. Ice", "3. Air"]}
    candidates = [
        _candidate(1, "a.pdf", 9, "Report > Methods"),
        _candidate(2, "b.pdf", 4, CONTENTS),
        _candidate(3, "a.pdf", 2, CONTENTS),
    ]
    run = numbered.find_run("chapters", candidates[0].location, candidates, _pages(runs))
    # The first document in rank order with a run gives it: a.pdf, though b.pdf's candidate ranks higher.
    assert run is not None and {e.passage.source for e in run.entries} == {"a.pdf"}
    assert len(run.entries) == 2
    # Two runs in one document (two contents pages) are not chosen between.
    runs[("a.pdf", 3)] = ["1. Other", "2. List"]
    candidates.append(_candidate(4, "a.pdf", 3, CONTENTS))
    assert numbered.find_run("chapters", candidates[0].location, candidates, _pages(runs)) is None


@pytest.mark.parametrize(
    ("part", "position"),
    [
        ("What are the last 4 chapters listed in the table of contents?", (1, 4, True, "chapters")),
        ("List the first three steps.", (1, 3, False, "steps")),
        ("What are the last two chapters?", (1, 2, True, "chapters")),
        ("What is the second step?", (2, 1, False, "step")),
        ("What is the title of the third chapter?", (3, 1, False, "chapter")),
        ("What does the 2nd step say?", (2, 1, False, "step")),
        ("What is the last step of replacing the filter?", (1, 1, True, "step")),
        ("Which are the first twelve items?", (1, 12, False, "items")),
        ("What is the tenth step?", (10, 1, False, "step")),
        # No entry of a list: a time, a part of a period, a rank by size, a place counted from the end.
        ("When was the first time the filter was replaced?", None),
        ("What was revenue in the second half of 2023?", None),
        ("What was the revenue over the last five years?", None),
        ("Which is the second largest market?", None),
        ("What is the second to last step?", None),
        ("What are the chapters of the report?", None),
    ],
)
def test_entries_asked_for_by_place(part: str, position: tuple[int, int, bool, str] | None) -> None:
    found = ordinals.position_asked(part)
    assert (None if found is None else (found.start, found.count, found.from_end, found.noun)) == position


@pytest.mark.parametrize(
    ("position", "total", "places"),
    [
        (ordinals.Position(1, 4, True, "chapters"), 9, [5, 6, 7, 8]),
        (ordinals.Position(1, 3, False, "steps"), 4, [0, 1, 2]),
        (ordinals.Position(2, 1, False, "step"), 4, [1]),
        (ordinals.Position(1, 1, True, "step"), 4, [3]),
        (ordinals.Position(1, 4, True, "chapters"), 3, None),  # more asked for than listed
        (ordinals.Position(5, 1, False, "step"), 4, None),
    ],
)
def test_the_entries_a_place_names(position: ordinals.Position, total: int, places: list[int] | None) -> None:
    found = ordinals.placed(position, total)
    assert (list(found) if found is not None else None) == places


STEPS = [
    "Step 1 Turn off the unit.",
    "Step 2 Open the lid of the housing.",
    "Step 3 Lift the old filter out.",
]
REPORT_CHAPTERS = [*CHAPTERS, "6. Food Safety, Nutrition, and Distribution"]
CATALOG_TWO = """
["climate-report.pdf"]
series = "climate-report"
access = "public"

["ocean-report.pdf"]
series = "ocean-report"
access = "public"

["hidden-report.pdf"]
series = "hidden-report"
access = "staff"
"""


def write_guide(path: Path, title: str, chapters: list[str]) -> Path:
    """A report whose contents page is one page, a page about it another (whose sentence a list of
    its chapters quotes before its entries are found), and steps a third."""
    write_report(path, title, chapters)
    with pymupdf.open(path) as document:
        about = document[1]
        about.insert_text(
            (72, 130),
            f"Each chapter listed in the table of contents of the {title} report was written by experts.",
            fontname="helv",
            fontsize=10,
        )
        steps = document.new_page()
        steps.insert_text((72, 72), "Replacing the filter", fontname="hebo", fontsize=14)
        for n, step in enumerate(STEPS):
            steps.insert_text((72, 100 + 30 * n), step, fontname="helv", fontsize=10)
        document.saveIncr()
    return path


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ordinals")
    write_guide(folder / "climate-report.pdf", "Climate and Human Health", REPORT_CHAPTERS)
    write_guide(folder / "ocean-report.pdf", "Ocean Currents", ["1. Tides", "2. Currents", "3. Ice Shelves"])
    write_guide(
        folder / "hidden-report.pdf", "Secret Ocean Study", [f"{n}. Ocean part {n}" for n in range(1, 8)]
    )
    (folder / "catalog.toml").write_text(CATALOG_TWO, encoding="utf-8")
    db = folder / "index.sqlite3"
    report = refresh_index(folder, db, embed=False)
    assert not report.problems, report.problems
    return db


CLIMATE = "climate-report.pdf"


def test_a_list_of_chapters_reads_a_contents_page_that_is_a_candidate_not_the_quotes_page(
    reports: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    question = "What are the chapters listed in the table of contents?"
    with monkeypatch.context() as patched:  # the quote today's rules choose, before any list
        patched.setattr(listing, "list_answer", lambda part, answer, *args, **kwargs: answer)
        quoted = ask(reports, question, doc=CLIMATE)
    assert quoted.citation is not None and quoted.citation.page == 2, quoted
    answer = ask(reports, question, doc=CLIMATE)
    assert answer.value is not None and answer.value.items is not None, answer
    assert [i.text for i in answer.value.items] == REPORT_CHAPTERS
    assert {(i.citation.source, i.citation.page) for i in answer.value.items} == {(CLIMATE, 1)}
    assert answer.value.number is None and answer.quote == answer.value.items[0].quote


def test_the_last_two_chapters_are_the_runs_last_two_entries(reports: Path) -> None:
    answer = ask(reports, "What are the last 2 chapters listed in the table of contents?", doc=CLIMATE)
    assert answer.value is not None and answer.value.items is not None, answer
    assert [i.text for i in answer.value.items] == REPORT_CHAPTERS[-2:]
    assert answer.value.text == "; ".join(REPORT_CHAPTERS[-2:])
    assert answer.citation is not None and answer.citation.page == 1


def test_the_second_step_is_one_entry(reports: Path) -> None:
    answer = ask(reports, "What is the second step of replacing the filter?", doc=CLIMATE)
    assert answer.value is not None and answer.value.text == STEPS[1], answer
    assert answer.quote == STEPS[1]


def test_more_entries_asked_for_than_the_run_lists_give_no_value(reports: Path) -> None:
    answer = ask(reports, "What are the last 9 chapters listed in the table of contents?", doc=CLIMATE)
    assert answer.verified and answer.value is None, answer  # the quote stands
    assert answer.figure_note is not None and "last 9 chapters" in answer.figure_note
    assert f"the numbered entries found are {len(REPORT_CHAPTERS)}" in answer.figure_note


def test_a_hidden_documents_contents_page_is_never_read(reports: Path) -> None:
    question = "What are the last 2 chapters of the Secret Ocean Study?"
    public = ask(reports, question)
    listed = public.value.items if public.value is not None and public.value.items else ()
    shown = {i.citation.source for i in listed} | ({public.citation.source} if public.citation else set())
    assert "hidden-report.pdf" not in shown
    assert "Ocean part" not in f"{public.quote} {public.value} {public.figure_note}"
    staff = ask(reports, question, Caller(role="staff"), doc="hidden-report.pdf")
    assert staff.value is not None and staff.value.text == "6. Ocean part 6; 7. Ocean part 7", staff


def test_a_list_of_chapters_is_one_documents(reports: Path) -> None:
    answer = ask(reports, "What are the chapters listed in the table of contents?")
    assert answer.value is not None and answer.value.items is not None, answer
    assert len({i.citation.source for i in answer.value.items}) == 1
