"""Visual terms (issue 38's last goal; localqa/language/appearance.py, the "visual" kind of
localqa/answers/coverage.py): localqa reads the documents' text, never colours, typefaces or
pictures, so a question's word naming how something looks ("the green box", "the italic
numerals") must be written by the quote's evidence; otherwise the quote is refused where the kind
refuses, and shown with the doubt named beside it where it does not."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest
from fake_model import FakeModel

from localqa.answers import coverage
from localqa.answers.answering import answer_part
from localqa.evaluate import refusals
from localqa.indexing.index import refresh_index
from localqa.language import appearance
from localqa.library import answer
from localqa.models.base import AnswerRequest
from localqa.retrieval import embeddings
from localqa.settings import AnswerSettings
from localqa.types import Caller, Candidate, Kind, Location, TermCheck

# The visual kind alone among the word-like checks: the word rule's verdict (which depends on
# whether embeddings are installed) stays out of these tests.
VISUAL = AnswerSettings(coverage=("name", "identifier", "year", "figure", "visual"))
REFUSING = VISUAL.model_copy(update={"refusals": ("identifier", "name", "year", "visual")})
DOUBTING = VISUAL.model_copy(update={"refusals": ("identifier", "name", "year")})
NEVER_WRITES_GREEN = 'localqa reads the documents\' text, and the evidence never writes "green"'


def candidate(text: str, *, paragraph: int = 1, source: str = "guide.pdf") -> Candidate:
    return Candidate(
        rank=paragraph,
        score=1.0,
        location=Location(
            source=source,
            page=17,
            kind=Kind.PROSE,
            section=None,
            table=None,
            row=None,
            paragraph=paragraph,
            effective=date(2026, 1, 1),
        ),
        text=text,
        doc_id=source,
        tenant="default",
        title=None,
    )


def choosing(text: str) -> Callable[[AnswerRequest], str]:
    def choose(request: AnswerRequest) -> str:
        unit = next(u for u in request.units if u.text == text)
        return json.dumps({"source": unit.label, "sentence": unit.sentence})

    return choose


# --- which words name an appearance: the table ----------------------------------------------------


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("What is the word written in Green box on page 17?", ["Green"]),
        ("The quote colored in green is said by whom?", ["green"]),  # "colored" beside a colour: once
        ("What colour badge do visitors wear?", ["colour"]),
        ("In which paragraph is the green italic numeral located?", ["green", "italic"]),
        ("Which words are in bold?", ["bold"]),
        ("What does the dark-green bar show?", ["green"]),
        ("Which line is grey and which is gray?", ["grey"]),  # one colour, two spellings
        # A colour inside a name, a compound or an idiom names no colour.
        ("How many games did the Green Bay Packers win?", []),
        ("What did Red Hat earn in 2019?", []),
        ("Was Mr Green at the meeting?", []),
        ("Which method integrates knowledge into white-box models?", []),
        ("Which blue-chip stocks does the fund hold?", []),
        ("What does the white paper propose?", []),
        ("Is the policy a grey area?", []),
        ("Was the company in the black in 2019?", []),
        # ... nor a word of a label the question quotes, which the document writes as it is.
        ('What share of adults is in the "White, Non-Hispanic" category?', []),
        ("What's the colour of the Bank's logo?", ["colour"]),  # apostrophes quote nothing
        # Not appearances: pointing at a picture, and "highlighted" as "stressed".
        ("In the picture on page 50, what time does the bar start?", []),
        ("Which risks are highlighted in the report?", []),
    ],
)
def test_the_words_that_name_an_appearance(question: str, named: list[str]) -> None:
    assert [a.text for a in appearance.appearances(question)] == named
    assert [t.text for t in coverage.question_terms(question) if t.kind == "visual"] == named


@pytest.mark.parametrize(
    ("question", "evidence", "carried"),
    [
        ("What colour badge do visitors wear?", "Visitors wear a green badge.", True),
        ("What colour badge do visitors wear?", "Visitors wear a badge.", False),
        ("Which line is grey?", "The gray line shows the baseline.", True),
        ("Which numerals are in italics?", "Italic numerals mark estimates.", True),
        ("The quote colored in green is said by whom?", "GREEN QUOTES are by staff.", True),
    ],
)
def test_what_carries_an_appearance(question: str, evidence: str, carried: bool) -> None:
    [named] = appearance.appearances(question)
    assert appearance.carried(named, evidence) is carried


# --- refused, shown, doubted ----------------------------------------------------------------------

QUESTION = "What is the word written in the green box on page 17?"


def test_a_colour_the_evidence_never_writes_refuses(fake_model: FakeModel) -> None:
    evidence = candidate("Welcome to the guide: start here.")
    fake_model.enqueue(choosing(evidence.text))
    found = answer_part(QUESTION, (evidence,), fake_model, REFUSING)
    assert found.quote is None and found.reason == NEVER_WRITES_GREEN
    assert refusals.reason_kind(found.reason, found.coverage) == "visual"


def test_a_colour_the_evidence_writes_is_shown(fake_model: FakeModel) -> None:
    evidence = candidate("The green box reads: start here.")
    fake_model.enqueue(choosing(evidence.text))
    found = answer_part(QUESTION, (evidence,), fake_model, REFUSING)
    assert found.quote == evidence.text and not found.doubts
    assert found.coverage is not None
    assert [(t.term, t.found) for t in found.coverage.terms] == [("green", "quote")]


def test_a_colour_inside_a_name_is_no_visual_term(fake_model: FakeModel) -> None:
    evidence = candidate("Packers fans filled the stadium for every home game.")
    fake_model.enqueue(choosing(evidence.text))
    found = answer_part("Where do Green Bay fans watch games?", (evidence,), fake_model, REFUSING)
    assert found.quote == evidence.text
    assert found.coverage is not None and all(t.kind != "visual" for t in found.coverage.terms)


def test_a_kind_that_does_not_refuse_names_its_doubt(fake_model: FakeModel) -> None:
    evidence = candidate("Welcome to the guide: start here.")
    fake_model.enqueue(choosing(evidence.text))
    found = answer_part(QUESTION, (evidence,), fake_model, DOUBTING)
    assert found.quote == evidence.text
    assert [(d.kind, d.term, d.note) for d in found.doubts] == [("visual", "green", NEVER_WRITES_GREEN)]


def test_a_colour_another_passage_writes_is_a_doubt(fake_model: FakeModel) -> None:
    """The quote may be the wrong one of the part's passages: not what the evidence plainly lacks."""
    quoted = candidate("Welcome to the guide: start here.")
    other = candidate("The green box is on the back cover.", paragraph=2)
    fake_model.enqueue(choosing(quoted.text))
    found = answer_part(QUESTION, (quoted, other), fake_model, REFUSING)
    assert found.quote == quoted.text
    said = 'localqa reads the documents\' text, and the quoted passage never writes "green"'
    assert [(d.kind, d.term, d.note) for d in found.doubts] == [("visual", "green", said)]
    assert refusals.reason_kind(said) == "visual"


def test_a_hidden_document_writing_the_colour_never_counts(tmp_path: Path, fake_model: FakeModel) -> None:
    """A staff-only memo writes "green". For a public caller it is no candidate: the check reads
    only the candidates retrieval drew from what the caller may see, so the quote is refused as the
    evidence never writing "green" (and no passage is said to write it). For staff the memo is a
    candidate: another passage writes the colour, so the stage is only unsure, and the quote is
    refused as its closest passage (the contract's "Unsure is not an answer"); the public caller's
    refusal carries none."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "keys.md").write_text("# Keys\n\nThe spare keys are kept in the cabinet at reception.\n")
    (docs / "memo.md").write_text("# Memo\n\nThe green cabinet at reception keeps the spare keys.\n")
    (docs / "catalog.toml").write_text(
        '["keys.md"]\naccess = "public"\n\n["memo.md"]\naccess = "staff"\n', encoding="utf-8"
    )
    db = tmp_path / "index.sqlite3"
    refresh_index(docs, db, embed=False)
    quote = "The spare keys are kept in the cabinet at reception."
    for role in ("public", "staff"):
        fake_model.enqueue(choosing(quote))
        found = answer(
            "Where are the spare keys of the green cabinet kept?",
            as_of=date(2026, 11, 14),
            caller=Caller(role=role),
            model=fake_model,
            db=db,
            answer_settings=REFUSING,
        )
        [part] = found.parts
        sources = {c.location.source for c in part.result.candidates}
        assert ("memo.md" in sources) is (role == "staff")
        assert part.answer.quote is None
        if role == "public":
            assert part.answer.reason == NEVER_WRITES_GREEN and part.answer.closest is None
        else:
            closest = part.answer.closest
            assert closest is not None and closest.quote == quote
            assert [(d.kind, d.term) for d in closest.doubts] == [("visual", "green")]
            assert closest.label() == 'Closest passage, which does not mention "green"'


def test_an_appearance_found_singles_out_no_passage(monkeypatch: pytest.MonkeyPatch) -> None:
    """ "Green St" writes "green" as a street's word: the word rule still judges the question's other
    words, as it would were no colour named (a name or year found would single out passages)."""
    monkeypatch.setattr(embeddings, "is_available", lambda: False)
    evidence = candidate("Green St")
    verdict = coverage.check(QUESTION, evidence.text, evidence, (evidence,), AnswerSettings())
    assert [(t.term, t.kind, t.found) for t in verdict.terms] == [
        ("green", "visual", "quote"),
        ("word", "word", None),
    ]


def test_the_choice_weighs_the_visual_kind_like_the_others() -> None:
    """`refusals.choose` tries the visual kind as it tries names: it refuses on a split where it is
    clearly better than chance, and a saved run's visual refusal is read as that kind."""
    missing = (TermCheck(term="green", kind="visual", found=None),)
    cases = [refusals.Recorded(False, None, missing)] * 3 + [refusals.Recorded(True, None, ())] * 3
    assert "visual" in refusals.choose(cases, AnswerSettings()).refusals
    assert refusals.reason_kind(NEVER_WRITES_GREEN) == "visual"
