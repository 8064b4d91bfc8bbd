"""Refusals that hold on documents nobody tuned on (issue 38, round 2): a name or word refuses only
where the caller's collection lacks it (retrieval's `PartResult.unheld`); a refusal is counted
under the kind of the term that refused; and each kind's default is chosen on one dev split and
reported on the other (`localqa.evaluate.refusals.choose`)."""

from __future__ import annotations

import json
from datetime import date

import pytest
from fake_model import FakeModel

from localqa.answers import coverage
from localqa.answers.answering import answer_part
from localqa.evaluate import refusals
from localqa.settings import AnswerSettings
from localqa.types import Candidate, Coverage, Kind, Location, TermCheck

NAMED = AnswerSettings(coverage=("name", "identifier", "year", "figure"))


def candidate(text: str, *, title: str | None = None) -> Candidate:
    return Candidate(
        rank=1,
        score=1.0,
        location=Location(
            source="paper.pdf",
            page=1,
            kind=Kind.PROSE,
            section=None,
            table=None,
            row=None,
            paragraph=1,
            effective=date(2026, 1, 1),
        ),
        text=text,
        doc_id="paper.pdf",
        tenant="default",
        title=title,
    )


# --- a name or word the collection holds is retrieval's miss, a doubt ------------------------------


@pytest.mark.parametrize(
    ("name", "unheld", "held"),
    [
        ("ProgramFC", (), True),  # retrieval missed its passage; the collection holds it
        ("ProgramFC", ("programfc",), False),
        ("Lebron Brennan", ("lebron",), False),  # one word unheld: the name is not held
        ("Lebron Brennan", ("brennan",), False),
        ("AR01", ("ar03",), True),
        ("Shopee", None, None),  # retrieval did not look
    ],
)
def test_a_name_is_in_the_collection_when_every_search_term_is_held(
    name: str, unheld: tuple[str, ...] | None, held: bool | None
) -> None:
    assert coverage.in_collection(name, unheld) is held


def _term(kind: str, **fields: object) -> TermCheck:
    return TermCheck.model_validate({"term": "x", "kind": kind, "found": None, **fields})


# The refusing kinds as the defaults set them; each row: a missing term and whether it refuses.
REFUSES = [
    (_term("name"), True),  # not looked up: as before, no passage mentions it
    (_term("name", collection=False), True),  # no eligible document holds it
    (_term("name", collection=True), False),  # the collection does: retrieval's miss
    (_term("name", elsewhere=True, collection=False), False),  # another passage mentions it
    (_term("name", closest="y", collection=False), False),  # a near spelling
    (_term("word", collection=False, similarity=0.9), True),  # the collection lacks it
    (_term("word", collection=True, similarity=0.0), False),  # held: unsure, a doubt
    (_term("word", similarity=0.1), True),  # not looked up: nothing close in meaning
    (_term("word", similarity=0.3), False),
    (_term("year"), True),  # not looked up: as before
    (_term("year", collection=False), True),  # no eligible document writes it
    (_term("year", collection=True), False),  # the collection does: only the candidates lack it
    (_term("figure"), False),
    (_term("identifier"), True),
]


@pytest.mark.parametrize(("term", "refused"), REFUSES)
def test_which_missing_terms_refuse_by_default(term: TermCheck, refused: bool) -> None:
    assert coverage.refuses(term, AnswerSettings()) is refused


def test_the_default_refusing_kinds() -> None:
    assert AnswerSettings().refusals == ("identifier", "name", "year", "word")


def test_a_name_the_collection_holds_is_shown_with_its_doubt(fake_model: FakeModel) -> None:
    evidence = candidate("Our system improves on the baseline by 4.2 points on HOVER.")
    question = "What is the gap between ProgramFC and our system?"
    fake_model.enqueue(json.dumps({"source": "P1", "sentence": 1}))
    shown = answer_part(question, (evidence,), fake_model, NAMED, unheld=())
    assert shown.verified and [(d.kind, d.term) for d in shown.doubts] == [("name", "ProgramFC")]
    assert shown.doubts[0].note == (
        'the evidence never mentions "ProgramFC"; the collection holds it in a passage not retrieved'
    )
    fake_model.enqueue(json.dumps({"source": "P1", "sentence": 1}))
    refused = answer_part(question, (evidence,), fake_model, NAMED, unheld=("programfc",))
    assert refused.quote is None and refused.reason == 'the evidence never mentions "ProgramFC"'


def test_a_word_no_eligible_document_holds_refuses(fake_model: FakeModel) -> None:
    evidence = candidate("The meal allowance is 45 dollars per travel day.")
    question = "When does the canteen serve breakfast?"
    fake_model.enqueue(json.dumps({"source": "P1", "sentence": 1}))
    refused = answer_part(question, (evidence,), fake_model, unheld=("canteen", "breakfast"))
    assert refused.quote is None and "canteen" in (refused.reason or "")
    fake_model.enqueue(json.dumps({"source": "P1", "sentence": 1}))
    shown = answer_part(question, (evidence,), fake_model, unheld=())  # held elsewhere: a doubt
    assert shown.verified and {d.kind for d in shown.doubts} == {"word"}


# --- a refusal counted under the kind of the term that refused -----------------------------------


def test_a_refusal_is_counted_under_the_term_that_refused() -> None:
    verdict = Coverage(
        terms=(
            TermCheck(term="10.6", kind="figure", found=None),  # first missing, only a doubt
            TermCheck(term="Disneyland", kind="name", found=None),
        )
    )
    assert refusals.reason_kind('the evidence never mentions "Disneyland"', verdict) == "name"
    assert refusals.reason_kind('the evidence never mentions "10.6"', verdict) == "number"


# --- choosing on one split, reporting on the other -----------------------------------------------


def _case(answerable: bool, *terms: TermCheck, fixed: str | None = None) -> refusals.Recorded:
    return refusals.Recorded(answerable, fixed, terms)  # type: ignore[arg-type]


NAME = _term("name", collection=False)
YEAR = _term("year", collection=False)
WORD_FAR = _term("word", similarity=0.1)


def test_a_kind_refuses_only_when_clearly_better_than_chance_on_enough_cases() -> None:
    # Chance 0.5 (4 of 8 unanswerable); name flags 3 unanswerable: precision 1.0, chosen. Year
    # flags 1 and 1: 0.5, not above chance. The word flags 1 unanswerable at any floor: too few.
    cases = [
        _case(False, NAME),
        _case(False, NAME),
        _case(False, NAME, YEAR),
        _case(False, WORD_FAR),
        _case(True, YEAR),
        _case(True, WORD_FAR.model_copy(update={"similarity": 0.3})),
        _case(True),
        _case(True, fixed="other"),
    ]
    base = AnswerSettings()
    scores = {k: refusals.score(cases, k, base) for k in ("name", "year", "word")}
    assert (scores["name"].precision, scores["name"].clear) == (1.0, True)
    assert (scores["year"].answerable, scores["year"].unanswerable, scores["year"].clear) == (1, 1, False)
    assert (scores["word"].unanswerable, scores["word"].clear) == (1, False)
    choice = refusals.choose(cases, base)
    assert choice.refusals == ("name",)
    done = refusals.outcome(cases, choice.settings(base))
    assert (done.answerable_refused, done.unanswerable_refused) == (1, 3)  # the fixed refusal counts


def test_the_word_floor_is_chosen_where_the_word_is_clear() -> None:
    words = [_case(False, _term("word", similarity=s)) for s in (0.1, 0.12, 0.18, 0.22)]
    cases = [*words, _case(True, _term("word", similarity=0.28)), *[_case(True) for _ in range(5)]]
    choice = refusals.choose(cases, AnswerSettings())
    assert choice.refusals == ("word",) and choice.word_floor == 0.25  # 4 unanswerable, none answerable


def test_the_default_is_what_every_split_chose_and_what_none_exercises() -> None:
    base = AnswerSettings(refusals=("identifier", "name", "year", "word"))
    splits = [[_case(False, NAME), _case(True, YEAR)], [_case(False, NAME)]]
    choices = [refusals.Choice(("name", "year"), 0.25), refusals.Choice(("name",), 0.25)]
    # year was chosen on one split only; identifier and word no case exercises and both refuse in base.
    assert refusals.default_refusals(choices, splits, base) == ("identifier", "name", "word")


def test_a_word_is_measured_by_meaning_alone_with_the_collection_dropped() -> None:
    held_far = _term("word", similarity=0.1, collection=True)
    cases = [_case(False, held_far), _case(True, _term("name", collection=True))]
    base = AnswerSettings()
    assert refusals.score(cases, "word", base).unanswerable == 0  # held: a doubt
    assert refusals.score(refusals.by_meaning(cases), "word", base).unanswerable == 1  # far in meaning
    assert refusals.by_meaning(cases)[1].terms[0].collection is True  # names keep theirs
