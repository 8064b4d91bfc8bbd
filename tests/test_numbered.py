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
from backends import BOTH
from drawn_reports import catalog, indexed

from localqa.answers import listing, numbered
from localqa.indexing.index import refresh_index
from localqa.library import Library
from localqa.models.extractive import ExtractiveModel
from localqa.question import ordinals
from localqa.store import Db
from localqa.types import Answer, Caller, Candidate, Kind, Location, Passage

BACKENDS = BOTH  # a document's last page read from the index, on SQLite and PostgreSQL (tests/backends.py)
AS_OF = date(2026, 1, 1)
CHAPTERS = [
    "1. Introduction: Climate and Health",
    "2. Temperature-Related Illness",
    "3. Air Quality Impacts",
    "4. Vector-Borne Diseases",
    "5. Populations of Concern",
]
APPENDICES = ["Appendix 1: Technical Support", "Appendix 2: Literature Review", "Appendix 3: Glossary"]
CATALOG = catalog(["health-report.pdf"], staff=["hidden-report.pdf"])


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
    return indexed(folder, CATALOG)


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


GRILLE = [
    "Removing the base grille",
    "To remove the grille:",
    "1. Open both doors. 2. Pull base grille forward. 3. Do not remove the Tech Sheet.",
    "To replace the grille:",
    "1. Line up grille support tabs with metal clips. 2. Push firmly to snap into place.",
    "3. Close the doors.",
    "See cleaning instructions on page 22.",
]


@pytest.mark.parametrize(
    ("noun", "task", "texts", "entries"),
    [
        # Entries inside one passage and over two: the run after the lead-in that names the task.
        (
            "steps",
            "replace the grille",
            GRILLE,
            ["1. Line up grille support tabs with metal clips.", "2. Push firmly to snap into place.",
             "3. Close the doors."],
        ),
        ("steps", "remove the grille", GRILLE, ["1. Open both doors.", "2. Pull base grille forward.",
                                                "3. Do not remove the Tech Sheet."]),
        # A task's words, "the" and "your" aside, all said by the part: "drop-in" may be more.
        (
            "steps",
            "remove the drop-in trim piece",
            ["To remove the trim piece: 1. Remove all items. 2. Pull up on the trim piece.",
             "To replace the trim piece: 1. Locate each end. 2. Push the piece down. 3. Replace items."],
            ["1. Remove all items.", "2. Pull up on the trim piece."],
        ),
        # No task named: two runs that could both be the steps; none chosen.
        ("steps", None, GRILLE, None),
        # A task no lead-in names: none.
        ("steps", "clean the coils", GRILLE, None),
        # Steps of a task are steps only: a lead-in naming a task counts no "chapters".
        ("chapters", "replace the grille", GRILLE, None),
        # A label before the first entry in its passage names the noun; bare numbers before a
        # capitalised word, inside passages, continue the run.
        (
            "levels",
            None,
            ["The quality levels influence the brewing.",
             "Quality levels 1 After pressing, the coffee swells. 2 After pressing, it is brewed.",
             "3 After pressing, a pre-infusion occurs.",
             "4 Wet pressing occurs. 5 Same as for Quality 4, but stronger.",
             "Instructions:"],
            ["1 After pressing, the coffee swells.", "2 After pressing, it is brewed.",
             "3 After pressing, a pre-infusion occurs.", "4 Wet pressing occurs.",
             "5 Same as for Quality 4, but stronger."],
        ),
        # A paragraph before a list is no label: "steps" in it names no run.
        (
            "steps",
            None,
            ["Follow the steps below to adjust the two front leveling screws, one on the right and one "
             "on the left of the refrigerator, with a screwdriver.", "1. Remove base grille. 2. Check."],
            None,
        ),
        # A short label does: "Follow these steps:".
        ("steps", None, ["Follow these steps:", "1. Remove base grille. 2. Check with level."],
         ["1. Remove base grille.", "2. Check with level."]),
        # Numbers inside an entry's text that do not continue the run are its text: "(See page
        # 16.)", "Plug 2 or 3", a stray "1" not after a lead-in's ":".
        (
            "steps",
            None,
            ["Steps:", "1. Remove base grille. (See page 16.) 2. Use Plug 2 or 3 only, see Figure 1 Above.",
             "3. Check with level."],
            ["1. Remove base grille. (See page 16.)", "2. Use Plug 2 or 3 only, see Figure 1 Above.",
             "3. Check with level."],
        ),
    ],
)  # fmt: skip
def test_entries_inside_passages_and_after_a_lead_in(
    noun: str, task: str | None, texts: list[str], entries: list[str] | None
) -> None:
    run = numbered.numbered_run(noun, _lines(*texts), CITED, task)
    assert ([e.text for e in run.entries] if run else None) == entries


@pytest.mark.parametrize(
    ("part", "task"),
    [
        ("How many steps are required to replace the grille? Write the answer in integer format.",
         "replace the grille"),
        ("How many steps does it take to install the water filter", "install the water filter"),
        ("How many coffee quality levels can the coffee machine be set to?", None),
        ("How many chapters are in the report?", None),
    ],
)  # fmt: skip
def test_the_task_a_part_names(part: str, task: str | None) -> None:
    assert numbered.task_asked(part) == task


def test_bare_numbers_under_a_heading_that_names_the_noun() -> None:
    section = "Report > Contents > Chapters"
    cited = CITED.model_copy(update={"section": section})
    run = numbered.numbered_run(
        "chapters", _lines("1. Intro", "2. Methods", "Appendix 1: Data", section=section), cited
    )
    assert run is not None and [e.text for e in run.entries] == ["1. Intro", "2. Methods"]
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
    assert run is not None and [e.text for e in run.entries] == ["1. Intro", "2. Methods", "3. Results"]
    assert run.at == candidates[1].location


def test_the_run_is_the_quoted_documents_never_anothers() -> None:
    runs = {("a.pdf", 2): ["1. Intro", "2. Methods"], ("b.pdf", 4): ["1. Ocean", "2. Ice", "3. Air"]}
    candidates = [
        _candidate(1, "a.pdf", 9, "Report > Methods"),
        _candidate(2, "b.pdf", 4, CONTENTS),
        _candidate(3, "a.pdf", 2, CONTENTS),
    ]
    run = numbered.find_run("chapters", candidates[0].location, candidates, _pages(runs))
    # The quote's document gives it: a.pdf, though b.pdf's candidate ranks higher.
    assert run is not None and {e.passage.source for e in run.entries} == {"a.pdf"}
    assert len(run.entries) == 2
    # A quote of b.pdf's gets b.pdf's run, and a quote of a document with none gets none.
    run = numbered.find_run("chapters", candidates[1].location, candidates, _pages(runs))
    assert run is not None and {e.passage.source for e in run.entries} == {"b.pdf"}
    elsewhere = _candidate(5, "c.pdf", 1, "Guide > Moorings")
    assert numbered.find_run("chapters", elsewhere.location, [elsewhere, *candidates], _pages(runs)) is None
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
CATALOG_TWO = catalog(["climate-report.pdf", "ocean-report.pdf"], staff=["hidden-report.pdf"])


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
    return indexed(folder, CATALOG_TWO)


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


# --- a procedure's steps after the lead-in that names its task ------------------------------------

REPLACE_STEPS = [
    "1. Line up grille support tabs with metal clips.",
    "2. Push firmly to snap into place.",
    "3. Close the doors.",
]
CATALOG_MANUALS = catalog(["fridge-manual.pdf"], staff=["service-manual.pdf"])


def write_manual(path: Path, title: str, replace_steps: list[str]) -> Path:
    """A manual whose page 2 removes and replaces the base grille, each procedure after its lead-in,
    its steps on lines close enough to be read as one passage."""
    with pymupdf.open() as document:
        cover = document.new_page()
        cover.insert_text((72, 72), title, fontname="hebo", fontsize=18)
        cover.insert_text((72, 110), "Keep this manual with the refrigerator.", fontname="helv", fontsize=10)
        page = document.new_page()
        page.insert_text((72, 72), "Removing the base grille", fontname="hebo", fontsize=14)
        y = 100.0
        for lead_in, steps in (
            ("To remove the grille:", ["1. Open both doors.", "2. Pull the grille forward."]),
            ("To replace the grille:", replace_steps),
        ):
            page.insert_text((72, y), lead_in, fontname="hebo", fontsize=10)
            y += 14
            for step in steps:
                page.insert_text((72, y), step, fontname="helv", fontsize=10)
                y += 12
            y += 20
        page.insert_text(
            (72, y + 20), "See the cleaning instructions on page 3.", fontname="helv", fontsize=10
        )
        document.set_metadata({"title": title})
        document.save(path)
    return path


@pytest.fixture(scope="module")
def manuals(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("manuals")
    write_manual(folder / "fridge-manual.pdf", "Refrigerator Use and Care Guide", REPLACE_STEPS)
    hidden = [f"{n}. Service step {n} of the grille." for n in range(1, 6)]
    write_manual(folder / "service-manual.pdf", "Refrigerator Service Guide", hidden)
    return indexed(folder, CATALOG_MANUALS)


def test_the_steps_after_the_lead_in_that_names_the_task_are_counted(manuals: Path) -> None:
    answer = ask(manuals, "How many steps are required to replace the grille?", doc="fridge-manual.pdf")
    assert answer.verified and answer.value is not None and answer.value.items is not None, answer
    assert (answer.value.text, answer.value.number) == ("3", 3.0)
    assert [i.text for i in answer.value.items] == REPLACE_STEPS
    assert {(i.citation.source, i.citation.page) for i in answer.value.items} == {("fridge-manual.pdf", 2)}
    assert listing.list_problem(answer.value, lambda item: True) is None


def test_a_hidden_manuals_steps_are_never_counted(manuals: Path) -> None:
    question = "How many steps are required to replace the grille?"
    public = ask(manuals, question)
    listed = public.value.items if public.value is not None and public.value.items else ()
    shown = {i.citation.source for i in listed} | ({public.citation.source} if public.citation else set())
    assert "service-manual.pdf" not in shown
    assert "Service step" not in f"{public.quote} {public.value} {public.figure_note}"
    staff = ask(manuals, question, Caller(role="staff"), doc="service-manual.pdf")
    assert staff.value is not None and staff.value.text == "5", staff


def test_a_tasks_lead_in_on_a_page_retrieval_did_not_return_is_looked_up_in_the_document() -> None:
    grille = _lines(*GRILLE)
    candidates = [_candidate(1, "guide.pdf", 8, "Guide > Leveling it")]

    def page(where: Location) -> list[Passage]:
        return grille if where.page == 3 else []

    asked: list[tuple[str, str]] = []

    def containing(source: str, text: str, limit: int) -> list[Passage]:
        asked.append((source, text))
        return [p for p in grille if text in p.text][:limit]

    cited = candidates[0].location
    assert numbered.find_run("steps", cited, candidates, page) is None  # not without the lookup
    run = numbered.find_run("steps", cited, candidates, page, "replace the grille", containing)
    assert run is not None and len(run.entries) == 3 and run.at.page == 3
    assert asked == [("guide.pdf", "replace the grille")]
    # On a page found by the task's words, only the run after the lead-in that names it: "Step 1"
    # entries of another task under the same heading are not its steps.
    other = _lines("Replace the grille as shown.", "Step 1 Clean the coils.", "Step 2 Dry them.")
    assert numbered.numbered_run("steps", other, CITED, "replace the grille") is not None
    assert numbered.numbered_run("steps", other, CITED, "replace the grille", named=True) is None
    grille[:] = other
    assert numbered.find_run("steps", cited, candidates, page, "replace the grille", containing) is None
    grille[:] = _lines(*GRILLE)
    # Only a procedure's steps are looked up so, and only in the candidates' documents.
    asked.clear()
    assert numbered.find_run("chapters", cited, candidates, page, "replace the grille", containing) is None
    assert asked == []


# --- a run that ends its page, read on at the next ------------------------------------------------


def _page_of(number: int, *texts: str, section: str = SECTION) -> list[Passage]:
    return [
        Passage(kind=Kind.PROSE, source="guide.pdf", page=number, text=t, section=section, paragraph=n)
        for n, t in enumerate(texts, start=1)
    ]


THREE_STEPS = ("Step 1 Turn off.", "Step 2 Open the lid.", "Step 3 Lift the filter.")


@pytest.mark.parametrize(
    ("following", "counted", "ends_page"),
    [
        # The next entry after a running header, under another heading: the run goes on there.
        (_page_of(4, "Software | USB", "Step 4 Insert the filter.", "Step 5 Close the lid.", "Notes",
                  section="Guide > Filters"), 5, False),
        # The run goes on to the end of the next page too: it may go on further.
        (_page_of(4, "Step 4 Insert the filter.", "Step 5 Close the lid."), 5, True),
        # The next page's first ordinal numbers something else: the run ended with its page.
        (_page_of(4, "Chapter 1 Cleaning", "Step 1 Wipe."), 3, False),
        (_page_of(4, "Step 1 Wipe the shelf.", "Step 2 Dry it."), 3, False),
        # No ordinal among the first passages, or no next page the caller may see: it may go on.
        (_page_of(4, "A paragraph.", "Another.", "A third.", "Step 4 Insert."), 3, True),
        ([], 3, True),
    ],
)  # fmt: skip
def test_a_run_that_ends_its_page_is_read_on_at_the_next(
    following: list[Passage], counted: int, ends_page: bool
) -> None:
    pages = {3: _page_of(3, "Replacing the filter", *THREE_STEPS), 4: following}
    cited = CITED.model_copy(update={"page": 3})
    run = numbered.find_run("steps", cited, [], lambda where: pages.get(where.page or 0, []))
    assert run is not None and (len(run.entries), run.ends_page) == (counted, ends_page)
    assert [e.passage.page for e in run.entries] == [3, 3, 3] + [4] * (counted - 3)


FILTER_STEPS = [
    f"Step {n} {text}"
    for n, text in enumerate(
        [
            "Turn off the unit.",
            "Open the lid of the housing.",
            "Lift the old filter out.",
            "Insert the new filter.",
            "Close the lid.",
        ],
        start=1,
    )
]


def test_steps_that_go_on_at_the_next_page_are_all_counted(tmp_path: Path) -> None:
    with pymupdf.open() as document:
        first = document.new_page()
        first.insert_text((72, 72), "Replacing the filter", fontname="hebo", fontsize=14)
        for n, step in enumerate(FILTER_STEPS[:3]):
            first.insert_text((72, 700 + 30 * n), step, fontname="helv", fontsize=10)
        second = document.new_page()
        for n, step in enumerate(FILTER_STEPS[3:]):
            second.insert_text((72, 72 + 30 * n), step, fontname="helv", fontsize=10)
        second.insert_text(
            (72, 300), "Dispose of the old filter with household waste.", fontname="helv", fontsize=10
        )
        document.save(tmp_path / "filter-guide.pdf")
    db = tmp_path / "index.sqlite3"
    assert not refresh_index(tmp_path, db, embed=False).problems
    answer = ask(db, "How many steps are there for replacing the filter?")
    assert answer.value is not None and answer.value.items is not None, answer
    assert [i.text for i in answer.value.items] == FILTER_STEPS
    assert (answer.value.text, [i.citation.page for i in answer.value.items]) == ("5", [1, 1, 1, 2, 2])


@pytest.mark.parametrize(
    ("last_page", "ends_page"),
    [
        (3, False),  # its page is the document's last: the run ended there
        (4, True),  # a next page the caller may not read past (or without an ordinal): may go on
        (None, True),  # no last page known (a hidden document, or no context): may go on
    ],
)
def test_a_run_on_its_documents_last_page_ended_there(last_page: int | None, ends_page: bool) -> None:
    pages = {3: _page_of(3, "Replacing the filter", *THREE_STEPS)}
    cited = CITED.model_copy(update={"page": 3})
    asked: list[str] = []

    def last(source: str) -> int | None:
        asked.append(source)
        return last_page

    run = numbered.find_run("steps", cited, [], lambda where: pages.get(where.page or 0, []), last_page=last)
    assert run is not None and (len(run.entries), run.ends_page) == (3, ends_page)
    assert asked == ["guide.pdf"]


LAST_PAGE_CATALOG = catalog(["climate-report.pdf"], staff=["hidden-report.pdf"])


def write_contents_last(path: Path, title: str, chapters: list[str]) -> Path:
    """A report whose contents list is the last thing on its last page (no appendix after it)."""
    with pymupdf.open() as document:
        about = document.new_page()
        about.insert_text((72, 72), title, fontname="hebo", fontsize=18)
        about.insert_text(
            (72, 110),
            "The report assesses how a changing climate affects health.",
            fontname="helv",
            fontsize=10,
        )
        about.insert_text(
            (72, 130),
            f"Each chapter listed in the table of contents of the {title} report was written by experts.",
            fontname="helv",
            fontsize=10,
        )
        contents = document.new_page()
        contents.insert_text((72, 72), "TABLE OF CONTENTS", fontname="hebo", fontsize=14)
        contents.insert_text((72, 100), "CHAPTERS", fontname="hebo", fontsize=12)
        for n, entry in enumerate(chapters):
            contents.insert_text(
                (72, 130 + 24 * n), f"{entry} {'.' * 30} {n + 3}", fontname="helv", fontsize=10
            )
        document.set_metadata({"title": title})
        document.save(path)
    return path


@pytest.fixture(scope="module")
def contents_last(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("contents-last")
    write_contents_last(folder / "climate-report.pdf", "Climate and Human Health", REPORT_CHAPTERS)
    write_contents_last(
        folder / "hidden-report.pdf", "Secret Ocean Study", [f"{n}. Ocean part {n}" for n in range(1, 8)]
    )
    return indexed(folder, LAST_PAGE_CATALOG)


def test_the_last_chapters_of_a_contents_list_ending_the_documents_last_page_are_given(
    contents_last: Path,
) -> None:
    answer = ask(contents_last, "What are the last 2 chapters listed in the table of contents?", doc=CLIMATE)
    assert answer.value is not None and answer.value.items is not None, answer
    assert [i.text for i in answer.value.items] == REPORT_CHAPTERS[-2:]
    assert {(i.citation.source, i.citation.page) for i in answer.value.items} == {(CLIMATE, 2)}
    count = ask(contents_last, "How many chapters are in the Climate and Human Health report?", doc=CLIMATE)
    assert count.value is not None and count.value.text == str(len(REPORT_CHAPTERS)), count  # not "at least"


def test_a_hidden_documents_last_page_is_never_read(contents_last: Path) -> None:
    question = "What are the last 2 chapters of the Secret Ocean Study?"
    public = ask(contents_last, question)
    listed = public.value.items if public.value is not None and public.value.items else ()
    shown = {i.citation.source for i in listed} | ({public.citation.source} if public.citation else set())
    assert "hidden-report.pdf" not in shown
    assert "Ocean part" not in f"{public.quote} {public.value} {public.figure_note}"
    with Library(contents_last) as opened:
        assert opened.last_page("hidden-report.pdf", as_of=AS_OF) is None
        assert opened.last_page("hidden-report.pdf", as_of=AS_OF, caller=Caller(role="staff")) == 2
    staff = ask(contents_last, question, Caller(role="staff"), doc="hidden-report.pdf")
    assert staff.value is not None and staff.value.text == "6. Ocean part 6; 7. Ocean part 7", staff


def test_both_backends_read_a_documents_last_page_as_the_caller_may_see_it(library_db: Db) -> None:
    staff = Caller(role="staff")
    with Library(library_db) as opened:
        assert opened.last_page("library-handbook.pdf", as_of=AS_OF) == 4  # its page 4 read by OCR
        assert opened.last_page("staff-procedures.pdf", as_of=AS_OF) is None  # hidden: none
        assert opened.last_page("staff-procedures.pdf", as_of=AS_OF, caller=staff) == 1
        assert opened.last_page("fines-and-fees.md", as_of=AS_OF) is None  # no pages
        assert opened.last_page("no-such-file.pdf", as_of=AS_OF) is None
