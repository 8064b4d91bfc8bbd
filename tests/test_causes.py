"""Explanations (`localqa.answers.causes`): a part asking what drove, caused or explains a change prefers a
sentence stating a cause, in the section that discusses results, and its value is the cause as
written; no other part's ranking changes."""

from __future__ import annotations

import pytest

from localqa.answers import causes, sentences
from localqa.answers.answering import answer_part
from localqa.language import causes as language_causes
from localqa.models import get_model
from localqa.question import cues
from localqa.settings import AnswerSettings
from localqa.types import Candidate, Kind, Location
from localqa.values.phrases import cause_value

LEXICAL_ONLY = AnswerSettings(unit_semantic_weight=0)
MDA = "Item 7. Management's Discussion and Analysis > Results of Operations"


def candidate(text: str, rank: int, section: str) -> Candidate:
    return Candidate(
        rank=rank,
        score=10.0 - rank,
        location=Location(
            source="acme-10k.pdf",
            page=30 + rank,
            kind=Kind.PROSE,
            section=section,
            table=None,
            row=None,
            paragraph=1,
            effective=None,
        ),
        text=text,
        doc_id="acme",
        tenant="default",
    )


RESULTS = candidate(
    "Revenue increased 10% in 2022 to $5.2 billion, an increase in revenue across every region in 2022. "
    "The increase was driven by higher demand for cloud services, partially offset by lower hardware sales.",
    1,
    MDA,
)
NOTES = candidate(
    "Revenue in 2022 included $1.1 billion of deferred revenue recognised.", 2, "Notes > Revenue"
)
CAUSE = (
    "The increase was driven by higher demand for cloud services, partially offset by lower hardware sales."
)
QUESTION = "What drove the increase in revenue in 2022?"


@pytest.mark.parametrize(
    ("part", "rule"),
    [
        ("What drove the increase in revenue in 2022?", "what drove"),
        ("What were the drivers of gross margin in FY2023?", "what drove"),
        ("What caused the decline in operating income?", "what caused"),
        ("What led to the impairment charge?", "what caused"),
        ("What explains the change in working capital?", "what explains"),
        ("As of FY2023Q1, why did Pepsico raise full year guidance for FY2023?", "why"),
        ("What was the reason for the restructuring?", "reason for"),
        ("What was revenue in 2022?", None),
        ("Does Adobe have an improving operating margin? If not useful, state that and explain why.", None),
        ("How many stores does the company operate?", None),
    ],
)
def test_parts_that_ask_for_a_cause(part: str, rule: str | None) -> None:
    assert cues.asks_cause(part) == rule


@pytest.mark.parametrize(
    ("sentence", "cue"),
    [
        ("Sales rose, primarily due to higher volume.", "due to"),
        ("The decrease was driven by lower prices.", "driven by"),
        ("Margin fell primarily as a result of higher input costs.", "as a result of"),
        ("Expenses rose 4%, reflecting wage inflation.", "reflecting"),
        ("Gains were partially offset by currency losses.", "offset by"),
        ("Revenue was $5.2 billion in 2022.", None),
    ],
)
def test_sentences_that_state_a_cause(sentence: str, cue: str | None) -> None:
    assert language_causes.states_cause(sentence) == cue


def test_a_what_drove_part_is_answered_with_the_cause_sentence_and_the_cause_as_written() -> None:
    answer = answer_part(QUESTION, (RESULTS, NOTES), get_model("extractive"), LEXICAL_ONLY)
    assert answer.quote == CAUSE
    assert answer.value is not None
    assert (
        answer.value.text
        == "driven by higher demand for cloud services, partially offset by lower hardware sales"
    )


def test_without_the_cause_rule_another_sentence_ranks_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cues, "asks_cause", lambda part: None)
    ranking = sentences.rank(QUESTION, (RESULTS, NOTES), LEXICAL_ONLY)
    assert ranking.units[0].text != CAUSE  # the rule, not the fixture, puts the cause first


def test_a_cause_in_the_section_that_discusses_results_gains_more() -> None:
    elsewhere = RESULTS.location.model_copy(update={"section": "Notes > Revenue"})
    assert causes.bonus(RESULTS.location, CAUSE) > causes.bonus(elsewhere, CAUSE) > 0
    assert causes.bonus(RESULTS.location, "Revenue was $5.2 billion.") == 0


@pytest.mark.parametrize(
    "question",
    ["What was revenue in 2022?", "How much deferred revenue was recognised?", "Which region grew fastest?"],
)
def test_other_parts_rankings_do_not_change(monkeypatch: pytest.MonkeyPatch, question: str) -> None:
    before = [u.text for u in sentences.rank(question, (RESULTS, NOTES), LEXICAL_ONLY).units]
    monkeypatch.setattr(language_causes, "CAUSE_CUES", ())
    assert [u.text for u in sentences.rank(question, (RESULTS, NOTES), LEXICAL_ONLY).units] == before


def test_a_cause_part_naming_a_quantity_still_ranks_a_sentence_without_a_number() -> None:
    ranking = sentences.rank("What drove the decline in gross margin?", (RESULTS, NOTES), LEXICAL_ONLY)
    assert all(u.demoted != sentences.STATES_NO_QUANTITY for u in ranking.units)


def test_the_cause_value_is_a_span_of_its_sentence() -> None:
    value = cause_value("Sales rose 3%, primarily due to higher volume.")
    assert value is not None and value.text == "primarily due to higher volume"
    assert cause_value("Sales rose 3%.") is None
