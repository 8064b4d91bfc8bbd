"""What an acronym stands for (`localqa.answers.definitions`, `localqa.language.acronyms`): the
sentence that defines it, on another page of the document retrieval returned, becomes the quote
and its long form the value; a hidden document's definition is never read; a part that asks no
such thing is unchanged. End to end on reports drawn with PyMuPDF, and the rules as tables."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from backends import BOTH
from drawn_reports import catalog, indexed, write_report

from localqa.answers import definitions
from localqa.answers.answering import quote_check
from localqa.language.acronyms import Definition, long_form
from localqa.language.acronyms import definitions as found_definitions
from localqa.library import IndexContext, Library
from localqa.models.extractive import ExtractiveModel
from localqa.question import acronyms
from localqa.store import Db
from localqa.types import Answer, Caller, Candidate, Kind, Location

BACKENDS = BOTH  # the index read, on SQLite and PostgreSQL (tests/backends.py)
AS_OF = date(2026, 1, 1)
DEFINING = (
    "The department implements these programmes through, mainly, the Physical Research Laboratory "
    "(PRL), the National Atmospheric Research Laboratory (NARL) and the Semi-Conductor Laboratory (SCL)."
)
PAGES = [
    [
        "The Space Commission formulates the policies of the space programme.",
        DEFINING,
        "Antrix Corporation markets the space products and services.",
    ],
    [
        "NARL at Gadanki is a centre for atmospheric research.",
        "The MST Radar facility at NARL observes the winds.",
    ],
]
HIDDEN = [["NARL (Northern Aviation Rescue League) is the club the staff join.", "NARL meets on Fridays."]]
CATALOG = catalog(["space-report.pdf"], staff=["staff-notes.pdf"])


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("definitions")
    write_report(folder / "space-report.pdf", "Department of Space", PAGES)
    write_report(folder / "staff-notes.pdf", "Staff Notes", HIDDEN)
    return indexed(folder, CATALOG)


def ask(db: Path, question: str, doc: str | None, caller: Caller | None = None, k: int = 1) -> Answer:
    with Library(db) as opened:
        asked = opened.answer(
            question, as_of=AS_OF, caller=caller, model=ExtractiveModel(), documents=[doc] if doc else (), k=k
        )
    return asked.parts[0].answer


def test_the_definition_on_another_page_is_the_quote_and_the_long_form_the_value(library: Path) -> None:
    question = "What does NARL stand for?"
    with Library(library) as opened:
        retrieved = opened.search(question, as_of=AS_OF, documents=["space-report.pdf"], k=1)
    assert [c.location.page for c in retrieved[0].candidates] == [2]  # the definition is not retrieved
    answer = ask(library, question, "space-report.pdf")
    assert answer.verified and answer.citation is not None and answer.value is not None, answer
    assert answer.value.text == "National Atmospheric Research Laboratory"
    assert (answer.citation.source, answer.citation.page) == ("space-report.pdf", 1)
    assert answer.quote is not None and "(NARL)" in answer.quote
    assert answer.quote in " ".join(DEFINING.split())


def test_a_hidden_documents_definition_is_never_read(library: Path) -> None:
    with Library(library) as opened:
        public = opened.passages_containing("staff-notes.pdf", "NARL", as_of=AS_OF, limit=10)
        staff = opened.passages_containing(
            "staff-notes.pdf", "NARL", as_of=AS_OF, caller=Caller(role="staff"), limit=10
        )
        context = IndexContext(opened, AS_OF, Caller(), "What does NARL stand for?")
        assert context.passages_containing("staff-notes.pdf", "NARL", 10) == ()
    assert public == () and len(staff) == 2
    # The public, asking of every document, never get the staff's definition.
    public_answer = ask(library, "What does NARL stand for?", None, k=5)
    assert public_answer.value is not None and public_answer.citation is not None, public_answer
    assert public_answer.value.text == "National Atmospheric Research Laboratory"
    assert public_answer.citation.source == "space-report.pdf"
    answer = ask(library, "What does NARL stand for?", "space-report.pdf", Caller(role="staff"))
    assert answer.value is not None and answer.value.text == "National Atmospheric Research Laboratory"
    # The staff see their own document's definition when they ask within it.
    own = ask(library, "What does NARL stand for?", "staff-notes.pdf", Caller(role="staff"))
    assert own.value is not None and own.value.text == "Northern Aviation Rescue League", own


def test_the_read_is_bounded_and_compares_as_written(library: Path) -> None:
    with Library(library) as opened:
        assert len(opened.passages_containing("space-report.pdf", "NARL", as_of=AS_OF, limit=1)) == 1
        assert opened.passages_containing("space-report.pdf", "narl", as_of=AS_OF, limit=10) == ()
        assert opened.passages_containing("no-such.pdf", "NARL", as_of=AS_OF, limit=10) == ()
        assert len(opened.passages_containing("space-report.pdf", "NARL", as_of=AS_OF, limit=2**64)) == 3


def test_both_backends_read_the_passages_holding_a_text_as_the_caller_may_see_them(library_db: Db) -> None:
    staff = Caller(role="staff")
    with Library(library_db) as opened:
        hidden = opened.passages_containing("staff-procedures.pdf", "cash drawer", as_of=AS_OF, limit=5)
        seen = opened.passages_containing(
            "staff-procedures.pdf", "cash drawer", as_of=AS_OF, caller=staff, limit=5
        )
        folded = opened.passages_containing(
            "staff-procedures.pdf", "Cash Drawer", as_of=AS_OF, caller=staff, limit=5
        )
    assert hidden == () and folded == ()
    assert seen and all("cash drawer" in p.text and p.source == "staff-procedures.pdf" for p in seen)


def test_a_part_that_asks_no_long_form_is_unchanged(library: Path) -> None:
    answer = ask(library, "Where is the MST Radar facility?", "space-report.pdf")
    assert answer.citation is not None and answer.citation.page == 2, answer
    assert answer.value is None or "National" not in answer.value.text


@pytest.mark.parametrize(
    ("part", "acronym"),
    [
        ("What does NARL stand for?", "NARL"),
        ("What is NARL stand for in this document?", "NARL"),
        ("what is the full form of GCIS?", "GCIS"),
        ("What is EPS short for?", "EPS"),
        ("What does the abbreviation RAG mean?", "RAG"),
        ("What does 'NE-SAC' stand for?", "NE-SAC"),
        ("Tell me what COVID-19 stands for", "COVID-19"),
        ("What is the full name of the acronym NARL?", "NARL"),
        ("Expand NARL", "NARL"),
        ("What is the revenue of NARL?", None),  # names an acronym, asks another thing
        ("What does the bank stand for?", None),  # no acronym
        ("What does A stand for?", None),  # one capital is a word
        ("What does NARL mean by monsoon onset?", None),  # what it means by something
        ("How many staff does NARL have?", None),
        # What is meant by an acronym: its long form.
        ("What is meant by ESG?", "ESG"),
        ("What does the company mean by EBITDA?", "EBITDA"),
        ("What is meant by the abbreviation RAG?", "RAG"),
        ("What is meant by 'NARL' in this report?", "NARL"),
        ("what is meant by a strong balance sheet", None),  # no acronym
        ("What is meant by ESG investing?", None),  # a phrase the acronym begins, not the acronym
        ("What does EBITDA mean for the company?", None),  # its bearing, not its words
        ("What does the company mean by strong EBITDA growth?", None),
        ("What is meant by A?", None),  # one capital is a word
        # One capital and a digit is no acronym: the definition rule cannot match "5" to "fifth" in
        # "fifth generation (5G)", and "Q3" is most often a period's label.
        ("What does 5G stand for?", None),
        ("What does Q3 stand for?", None),
    ],
)
def test_which_parts_ask_what_an_acronym_stands_for(part: str, acronym: str | None) -> None:
    assert acronyms.acronym_asked(part) == acronym


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (DEFINING, ["PRL", "NARL", "SCL"]),
        ("PRL (Physical Research Laboratory) was founded in 1947.", ["PRL"]),
        ("Retrieval-augmented generation (RAG) helps.", ["RAG"]),
        ("Earnings per share (EPS) rose.", ["EPS"]),
        ("The report (2019) says so.", []),  # no letter
        ("Costs rose (see page 4).", []),  # no definition before it
        ("We read the annual report (NARL) today.", []),  # initials do not match
        ("The value f(x) is positive.", []),  # no space before the parenthesis
        ("The fee (USD 5) is due.", []),
        ("Operating income (loss) fell.", []),  # a word, not a short form of the words before
    ],
)
def test_which_parentheses_define_an_abbreviation(text: str, found: list[str]) -> None:
    assert [d.short for d in found_definitions(text)] == found


def test_the_long_form_is_written_as_the_text_writes_it() -> None:
    assert list(found_definitions("the heart rate variability (HRV) was")) == [
        Definition(short="HRV", long="heart rate variability")
    ]
    assert long_form("NARL", DEFINING) == "National Atmospheric Research Laboratory"
    assert long_form("Narl", DEFINING) is None  # compared as written
    assert long_form("NE-SAC", "North Eastern-Space Applications Centre (NE-SAC) opened.") == (
        "North Eastern-Space Applications Centre"
    )


def test_a_definition_from_the_candidates_is_verified_by_the_one_rule() -> None:
    where = Location(
        source="r.pdf",
        page=3,
        kind=Kind.PROSE,
        section=None,
        table=None,
        row=None,
        paragraph=1,
        effective=None,
    )
    candidate = Candidate(rank=1, score=1.0, location=where, text=DEFINING, doc_id="d", tenant="t")
    found = definitions.definition("SCL", where, [candidate], None, lambda d: True)
    assert found is not None and found.long_form == "Semi-Conductor Laboratory"
    assert quote_check(found.quote, found.passage, Kind.PROSE) is None
    assert definitions.definition("SCL", where, [candidate], None, lambda d: False) is None


@pytest.mark.parametrize(
    ("part", "blanked"),
    [
        ("What does NARL stand for?", "What does  NARL ?"),
        ("what is the full form of GCIS?", "what is the  GCIS ?"),
        ("What does the abbreviation RAG mean?", "What does  RAG ?"),
        ("What is meant by ESG?", "What is  ESG ?"),
        ("What does the bank stand for?", "What does the bank stand for?"),  # no acronym: unchanged
    ],
)
def test_the_words_that_ask_for_a_long_form_frame_the_request(part: str, blanked: str) -> None:
    assert acronyms.cue_blanked(part) == blanked
