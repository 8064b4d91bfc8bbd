"""The sentence scorer: the quotable units of a part's passages, ranked by BM25 over the units
fused with the MiniLM cosine and the passage's retrieval rank (reciprocal rank), ties to the
better passage, then the earlier unit; a unit that cannot be the answer (it repeats the question,
or states no quantity for a question asking one) ranks below every unit that can."""

from __future__ import annotations

from typing import Any

import pytest

from localqa.answers import sentences
from localqa.question import cues
from localqa.retrieval import embeddings
from localqa.settings import AnswerSettings
from localqa.types import Candidate, Kind, Location

needs_semantic = pytest.mark.skipif(not embeddings.is_available(), reason="needs localqa[semantic]")
LEXICAL_ONLY = AnswerSettings(unit_semantic_weight=0)


def candidate(
    text: str,
    *,
    source: str = "rules.pdf",
    kind: Kind = Kind.PROSE,
    rank: int = 1,
    section: str | None = None,
) -> Candidate:
    table = kind is Kind.TABLE
    return Candidate(
        rank=rank,
        score=1.0,
        location=Location(
            source=source,
            page=1,
            kind=kind,
            section=section,
            table=1 if table else None,
            row=2 if table else None,
            paragraph=None if table else rank,
            effective=None,
        ),
        text=text,
        doc_id=source,
        tenant="default",
    )


RULES = candidate(
    "The reading room opens at 09:00. Bags go in the lockers by the entrance. Laptops are welcome "
    "at every desk. Food is not allowed in the reading room. Quiet phone calls may be made in the "
    "lobby. The lockers are emptied every night at closing time. Lost property is kept for a month."
)
SENTENCES = sentences.units(RULES.text, Kind.PROSE)
ROW = candidate(
    "Equipment loan limits: Item ID: EQ-314; Item: Portable scanner. Loan limit: 45 minutes; "
    "Deposit: 20 dollars",
    source="equipment-policy.pdf",
    kind=Kind.TABLE,
    rank=2,
)


def ranked(question: str, candidates: list[Candidate], settings: AnswerSettings = LEXICAL_ONLY) -> list[Any]:
    return [(u.label, u.sentence) for u in sentences.rank(question, candidates, settings).units]


# --- the units ------------------------------------------------------------------------------------


def test_prose_is_its_sentences_and_a_table_row_is_one_unit() -> None:
    assert SENTENCES[:2] == ["The reading room opens at 09:00.", "Bags go in the lockers by the entrance."]
    assert len(SENTENCES) == 7
    assert sentences.units(ROW.text, Kind.TABLE) == [ROW.text]  # full stops inside it change nothing


def test_times_and_decimals_do_not_end_a_sentence() -> None:
    text = "The desk accepts maps from 12:00 to 15:00 on weekdays. Fines are 0.20 dollars a day."
    assert sentences.units(text, Kind.PROSE) == [
        "The desk accepts maps from 12:00 to 15:00 on weekdays.",
        "Fines are 0.20 dollars a day.",
    ]


def test_every_unit_is_ranked_once_with_its_label_number_location_and_text() -> None:
    ranking = sentences.rank("Where do bags go?", [RULES, ROW], LEXICAL_ONLY)
    assert [u.rank for u in ranking.units] == list(range(1, 9))
    assert sorted((u.label, u.sentence) for u in ranking.units) == [("P1", n) for n in range(1, 8)] + [
        ("P2", 1)
    ]
    row = next(u for u in ranking.units if u.label == "P2")
    assert (row.text, row.location, row.sentence) == (ROW.text, ROW.location, 1)
    assert next(u for u in ranking.units if (u.label, u.sentence) == ("P1", 2)).text == SENTENCES[1]


# --- BM25 over the units --------------------------------------------------------------------------


def test_bm25_prefers_the_unit_with_the_rarer_terms_and_ties_go_to_passage_then_unit_order() -> None:
    """ "locker" is in two sentences, "emptied" in one: the sentence with both comes first, then
    the other "locker" sentence; the units sharing no term follow in passage and sentence order."""
    order = ranked("When are the lockers emptied?", [RULES, ROW])
    assert order[:2] == [("P1", 6), ("P1", 2)]
    assert order[2:] == [("P1", 1), ("P1", 3), ("P1", 4), ("P1", 5), ("P1", 7), ("P2", 1)]


def test_the_same_sentence_in_two_passages_ranks_the_better_passage_first() -> None:
    twin = candidate(RULES.text, source="rules-copy.pdf", rank=2)
    order = ranked("When are the lockers emptied?", [RULES, twin])
    assert order[:4] == [("P1", 6), ("P2", 6), ("P1", 2), ("P2", 2)]
    no_prior = AnswerSettings(unit_semantic_weight=0, unit_passage_weight=0)
    units = sentences.rank("When are the lockers emptied?", [RULES, twin], no_prior).units
    assert units[0].score == units[1].score > units[2].score == units[3].score  # tied ranks share a score


def test_a_table_row_is_scored_as_one_unit() -> None:
    ranking = sentences.rank("What is the deposit for the portable scanner?", [RULES, ROW], LEXICAL_ONLY)
    first = ranking.units[0]
    assert (first.label, first.sentence, first.text) == ("P2", 1, ROW.text)
    assert first.lexical > 0 and all(u.lexical == 0 for u in ranking.units[1:])


def test_a_question_of_stop_words_only_leaves_passage_order() -> None:
    assert ranked("Is it?", [RULES, ROW]) == [("P1", n) for n in range(1, 8)] + [("P2", 1)]


# --- fused with the MiniLM cosine -----------------------------------------------------------------


@pytest.mark.semantic
@needs_semantic
def test_fusion_is_reciprocal_rank_of_bm25_and_the_cosine() -> None:
    """Restated independently: weight / (rrf_k + rank) from each ranking (tied scores share the
    better rank), no lexical share for a unit sharing no term, a share for the passage's rank
    (P2 is second); order by the fused score (no unit here is demoted)."""
    settings = AnswerSettings()
    ranking = sentences.rank("Can I eat my lunch in the reading room?", [RULES, ROW], settings)
    assert ranking.scorer == "bm25+minilm" and ranking.note is None
    units = ranking.units
    assert all(u.semantic is not None and -1 <= u.semantic <= 1 for u in units)

    def rank_of(value: float, values: list[float]) -> int:
        return 1 + sum(v > value for v in values)

    lexical = [u.lexical for u in units]
    semantic = [u.semantic or 0.0 for u in units]
    k = settings.unit_rrf_k
    for unit in units:
        expected = 1 / (k + rank_of(unit.semantic or 0.0, semantic))
        expected += 1 / (k + sentences.passage_rank(unit.label))
        assert unit.demoted is None
        if unit.lexical > 0:
            expected += 1 / (k + rank_of(unit.lexical, lexical))
        assert unit.score == pytest.approx(expected)
    assert [u.score for u in units] == sorted((u.score for u in units), reverse=True)


@pytest.mark.semantic
@needs_semantic
def test_meaning_lifts_the_answer_that_shares_no_word_with_the_question() -> None:
    """ "Can I have a snack at my desk?" shares "desk" with the laptops sentence only; the food
    rule shares no word at all. By BM25 alone the food rule ties with every other sentence
    sharing nothing; fused with the cosine it comes second, above them all."""
    question = "Can I have a snack at my desk?"
    lexical = sentences.rank(question, [RULES], LEXICAL_ONLY).units
    assert (lexical[0].label, lexical[0].sentence) == ("P1", 3)
    food = next(u for u in lexical if u.text == SENTENCES[3])
    assert food.lexical == 0 and food.rank > 2
    fused = sentences.rank(question, [RULES], AnswerSettings()).units
    assert [u.text for u in fused[:2]] == [SENTENCES[2], SENTENCES[3]]
    assert fused[1].semantic == max(u.semantic or 0.0 for u in fused)


def test_without_the_semantic_extra_the_scorer_is_bm25_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "is_available", lambda: False)

    def never(*_: Any, **__: Any) -> Any:
        raise AssertionError("embedded without the semantic extra")

    monkeypatch.setattr(embeddings, "embed", never)
    ranking = sentences.rank("When are the lockers emptied?", [RULES], AnswerSettings())
    assert ranking.scorer == "bm25"
    assert ranking.note is not None and "semantic extra is not installed" in ranking.note
    assert "pip install 'localqa[semantic]'" in ranking.note
    assert all(u.semantic is None for u in ranking.units)
    assert [(u.label, u.sentence) for u in ranking.units] == ranked("When are the lockers emptied?", [RULES])


def test_turning_the_cosine_off_is_bm25_without_a_note() -> None:
    ranking = sentences.rank("When are the lockers emptied?", [RULES], LEXICAL_ONLY)
    assert (ranking.scorer, ranking.note) == ("bm25", None)
    assert ranking.seconds >= 0


# --- the passage's retrieval rank -----------------------------------------------------------------


def test_the_passage_rank_decides_between_units_the_unit_rankings_tie() -> None:
    """Without the passage's share the second passage's row and the first passage's sentence tie
    on BM25 alone (one shared term each, same length): the earlier passage wins only on the tie
    break. With the share, a unit of a better-ranked passage gains, and its score says so."""
    first = candidate("Deposits are refunded at the desk.", rank=1)
    second = candidate("Deposits are refunded by the post.", source="post.pdf", rank=2)
    question = "Are deposits refunded?"
    units = sentences.rank(question, [first, second], LEXICAL_ONLY).units
    assert [u.label for u in units] == ["P1", "P2"]
    assert units[0].score - units[1].score == pytest.approx(1 / 61 - 1 / 62)
    no_prior = AnswerSettings(unit_semantic_weight=0, unit_passage_weight=0)
    flat = sentences.rank(question, [first, second], no_prior)
    assert flat.units[0].score == flat.units[1].score


# --- units that cannot be the answer --------------------------------------------------------------

SCANNER = candidate(
    "Portable scanner. The portable scanner may be borrowed from the front desk. "
    "A portable scanner loan lasts 45 minutes.",
    source="equipment.pdf",
)


@pytest.mark.parametrize("settings", [LEXICAL_ONLY, AnswerSettings()], ids=["bm25", "fused"])
def test_a_unit_that_only_repeats_the_question_ranks_below_every_other(settings: AnswerSettings) -> None:
    """ "Portable scanner." is the question's own words: the best BM25 score per word, and the
    closest in meaning, yet it says nothing the question does not. It ranks last and says why."""
    if settings.unit_semantic_weight and not embeddings.is_available():
        pytest.skip("needs localqa[semantic]")
    units = sentences.rank("Where can I get the portable scanner?", [SCANNER], settings).units
    assert units[-1].text == "Portable scanner."
    assert units[-1].demoted == sentences.REPEATS_QUESTION
    assert all(u.demoted is None for u in units[:-1])
    assert units[-1].score == max(u.score for u in units)  # by its scores alone it would come first


@pytest.mark.parametrize("settings", [LEXICAL_ONLY, AnswerSettings()], ids=["bm25", "fused"])
def test_a_question_asking_for_a_quantity_prefers_the_unit_that_states_one(settings: AnswerSettings) -> None:
    if settings.unit_semantic_weight and not embeddings.is_available():
        pytest.skip("needs localqa[semantic]")
    question = "How long may I borrow the portable scanner from the desk?"
    units = sentences.rank(question, [SCANNER], settings).units
    assert units[0].text == "A portable scanner loan lasts 45 minutes."
    desk = next(u for u in units if "front desk" in u.text)
    assert desk.demoted == sentences.STATES_NO_QUANTITY
    words = candidate("Loans of the portable scanner last forty-five minutes. Ask at the desk for it.")
    first = sentences.rank("How long may I borrow the portable scanner?", [words], settings).units[0]
    assert first.text.startswith("Loans") and first.demoted is None  # a number in words states one


def test_when_every_unit_is_demoted_the_scores_alone_order_them() -> None:
    only = candidate("Portable scanner. The front desk.")
    units = sentences.rank("How many portable scanners has the front desk?", [only], LEXICAL_ONLY).units
    assert {u.demoted for u in units} == {sentences.REPEATS_QUESTION}
    assert [u.score for u in units] == sorted((u.score for u in units), reverse=True)


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("How many days does a standard book loan last?", True),
        ("How much is the late fee?", True),
        ("What percentage of tweets were in English?", True),
        ("What is the FY2019 fixed asset turnover ratio for Activision Blizzard?", True),
        ("What is the year end FY2018 net PPNE for 3M? Answer in USD billions.", True),
        ("Round your answer to two decimal places: what was the operating margin?", True),
        ("Who founded the library?", False),
        ("Where do bags go?", False),
        ("What is the loan limit for EQ-314?", False),
        ("Which segment dragged down 3M's growth in 2022?", False),
    ],
)
def test_which_questions_ask_for_a_quantity(question: str, asks: bool) -> None:
    assert cues.asks_for_a_number(question) is asks


@pytest.mark.parametrize(
    ("text", "states"),
    [
        ("Loans last 45 minutes.", True),
        ("Loans last forty-five minutes.", True),
        ("Renewals are allowed twice.", True),
        ("Net income: 2018: 5,349", True),
        ("Bags go in the lockers by the entrance.", False),
        ("Contact.Meet The word triggers a meeting.", False),
    ],
)
def test_which_units_state_a_quantity(text: str, states: bool) -> None:
    assert sentences.states_quantity(text) is states


def test_a_yes_or_no_question_may_be_answered_by_restating_it() -> None:
    """ "must not" are stop words: the rule sentence adds no meaningful term, yet it is the answer."""
    rule = candidate("Visitors must not bring food into the garden. The garden opens at 09:00.")
    units = sentences.rank("Can visitors bring food into the garden?", [rule], LEXICAL_ONLY).units
    assert units[0].text == "Visitors must not bring food into the garden." and units[0].demoted is None
    asked = sentences.rank("Which visitors bring food into the garden?", [rule], LEXICAL_ONLY).units
    assert asked[-1].demoted == sentences.REPEATS_QUESTION  # a wh-question's answer adds something


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("Can visitors bring food into the garden?", True),
        ("Is growth in JnJ's adjusted EPS expected to accelerate in FY2023?", True),
        ("Does the library open on Sundays?", True),
        ("Which visitors may bring food?", False),
        ("Canteen hours?", False),
        ("How many days does a loan last?", False),
    ],
)
def test_which_questions_ask_yes_or_no(question: str, asks: bool) -> None:
    assert cues.asks_yes_or_no(question) is asks
