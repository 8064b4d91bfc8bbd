"""Retrieval on the sample library, no model: the expected record comes first, question parts
are split and searched on their own, supersession and retirement hide what they should,
conflicts stay visible, and no question text (FTS5 syntax included) can break a search."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest
from backends import BOTH, NewIndex

from localqa.errors import QuestionError
from localqa.library import search_parts
from localqa.retrieval.retrieve import question_parts
from localqa.settings import MAX_PARTS
from localqa.store import Db
from localqa.types import Caller, Candidate, Kind, PartResult

BACKENDS = BOTH
REPO = Path(__file__).resolve().parent.parent
JUNE = "equipment-policy-2026-06-01.pdf"
NOVEMBER = "equipment-policy-2026-11-01.pdf"
HANDBOOK = "library-handbook.pdf"
NOTICE = "opening-hours-notice.pdf"
RETIRED = "reading-room-rules-2024.pdf"

EQ314 = "What is the loan limit for EQ-314?"
MAPS = "When does the desk accept maps for the community map exchange?"
BOOK_LOAN = "How many days does a standard book loan last?"
COMPOUND = (
    "What is the loan limit for EQ-314, when does the desk accept maps for the community map "
    "exchange, and how many days does a standard book loan last?"
)


def search(db: Db, question: str, as_of: date, *, k: int = 5, **kwargs: object) -> list[PartResult]:
    return search_parts(question, as_of=as_of, db=db, k=k, **kwargs)  # type: ignore[arg-type]


def one_part(db: Db, question: str, as_of: date, **kwargs: object) -> PartResult:
    results = search(db, question, as_of, **kwargs)
    assert len(results) == 1, [r.question for r in results]
    return results[0]


def where(candidate: Candidate) -> tuple[str, int | None, str, int | None]:
    loc = candidate.location
    return (loc.source, loc.page, loc.kind.value, loc.row)


# ---------------------------------------------------------------------------------------------
# The expected record first


@pytest.mark.parametrize(
    ("as_of", "question", "source", "page", "kind", "row", "phrase"),
    [
        (date(2026, 7, 15), EQ314, JUNE, 1, Kind.TABLE, 2, "30 minutes"),
        (date(2026, 11, 14), EQ314, NOVEMBER, 1, Kind.TABLE, 2, "45 minutes"),
        (date(2026, 11, 14), MAPS, HANDBOOK, 4, Kind.OCR, None, "12:00 to 15:00"),
        (date(2026, 11, 14), BOOK_LOAN, HANDBOOK, 1, Kind.PROSE, None, "21 days"),
    ],
    ids=["eq314-june", "eq314-november", "maps-ocr", "book-loan-prose"],
)
def test_expected_record_is_ranked_first(
    library_db: Db,
    as_of: date,
    question: str,
    source: str,
    page: int,
    kind: Kind,
    row: int | None,
    phrase: str,
) -> None:
    result = one_part(library_db, question, as_of)
    assert result.candidates, result.note
    top = result.candidates[0]
    assert top.rank == 1
    assert (top.location.source, top.location.page, top.location.kind) == (source, page, kind)
    if row is not None:
        assert top.location.row == row
        assert top.location.table == 1
    assert phrase in top.text
    assert top.score == max(c.score for c in result.candidates)
    assert [c.rank for c in result.candidates] == list(range(1, len(result.candidates) + 1))


def test_identifier_channel_returns_only_the_row_in_force(library_db: Db) -> None:
    june = one_part(library_db, EQ314, date(2026, 7, 15))
    november = one_part(library_db, EQ314, date(2026, 11, 14))
    assert {c.location.source for c in june.candidates} == {JUNE}
    assert {c.location.source for c in november.candidates} == {NOVEMBER}
    assert all("EQ-314" in c.text for c in june.candidates + november.candidates)
    assert "45 minutes" not in " ".join(c.text for c in june.candidates)
    assert "30 minutes" not in " ".join(c.text for c in november.candidates)


def test_supersession_switches_exactly_on_the_effective_date(library_db: Db) -> None:
    day_before = one_part(library_db, EQ314, date(2026, 10, 31))
    on_the_day = one_part(library_db, EQ314, date(2026, 11, 1))
    assert where(day_before.candidates[0]) == (JUNE, 1, "table", 2)
    assert where(on_the_day.candidates[0]) == (NOVEMBER, 1, "table", 2)


@pytest.mark.parametrize(
    ("question", "note"),
    [
        # Withdrawn in November: only the June row carries it.
        ("What is the loan limit for EQ-073?", "no eligible passage carries EQ-073"),
        # Not one meaningful word in common with any eligible passage.
        ("How tall is Mount Kilimanjaro?", "no eligible passage shares a meaningful word with the question"),
        ("What is the?", "the question has no searchable words"),
    ],
)
def test_retrieval_abstains_on_evidence_of_absence(library_db: Db, question: str, note: str) -> None:
    result = one_part(library_db, question, date(2026, 11, 14))
    assert result.candidates == ()
    assert result.note == note


def test_a_question_the_library_does_not_answer_still_gets_its_nearest_passages(library_db: Db) -> None:
    # "Who founded the library?" shares "library" with many passages. Whether any of them answers
    # it is the answer stage's call (the model may pick none); retrieval does not guess from how
    # many words a passage shares with the question, which on real documents says little.
    result = one_part(library_db, "Who founded the library?", date(2026, 11, 14))
    assert result.candidates and result.note is None


def test_withdrawn_identifier_is_not_answered_by_a_lookalike(library_db: Db) -> None:
    result = one_part(library_db, "What is the loan limit for EQ-073?", date(2026, 11, 14))
    assert result.candidates == ()
    assert "EQ-073" in (result.note or "")
    # It was there in June, so the abstention comes from the date, not from a broken channel.
    june = one_part(library_db, "What is the loan limit for EQ-073?", date(2026, 7, 15))
    assert where(june.candidates[0]) == (JUNE, 1, "table", 3)


def test_identifier_match_is_case_insensitive(library_db: Db) -> None:
    result = one_part(library_db, "what is the loan limit for eq-314?", date(2026, 11, 14))
    assert where(result.candidates[0]) == (NOVEMBER, 1, "table", 2)


# ---------------------------------------------------------------------------------------------
# Question parts


def test_compound_question_splits_into_three_parts_each_finding_its_record(library_db: Db) -> None:
    results = search(library_db, COMPOUND, date(2026, 11, 14))
    assert [r.question for r in results] == [EQ314, MAPS, BOOK_LOAN]
    assert where(results[0].candidates[0]) == (NOVEMBER, 1, "table", 2)
    assert where(results[1].candidates[0]) == (HANDBOOK, 4, "ocr", None)
    assert where(results[2].candidates[0]) == (HANDBOOK, 1, "prose", None)
    # Each part is retrieved on its own: same candidates as asking it alone.
    for result, alone in zip(results, (EQ314, MAPS, BOOK_LOAN), strict=True):
        single = one_part(library_db, alone, date(2026, 11, 14))
        assert [where(c) for c in result.candidates] == [where(c) for c in single.candidates]
        assert [c.score for c in result.candidates] == [c.score for c in single.candidates]


def test_explicit_parts_win_over_splitting(library_db: Db) -> None:
    assert question_parts(COMPOUND, [MAPS]) == [MAPS]
    assert question_parts("", ["  What is  X? "]) == ["What is X?"]
    results = search(library_db, COMPOUND, date(2026, 11, 14), parts=[MAPS, "EQ-314 loan limit"])
    assert [r.question for r in results] == [MAPS, "EQ-314 loan limit"]
    assert where(results[0].candidates[0]) == (HANDBOOK, 4, "ocr", None)
    assert where(results[1].candidates[0]) == (NOVEMBER, 1, "table", 2)


def test_explicit_blank_part_is_a_question_error() -> None:
    with pytest.raises(QuestionError, match="blank"):
        question_parts(EQ314, [MAPS, "   "])


def test_a_question_has_at_most_max_parts_parts() -> None:
    """Each part is a search, and a model call under `ask`: one question cannot queue hundreds."""
    assert len(question_parts("Loan period? " * MAX_PARTS)) == MAX_PARTS
    assert len(question_parts("", ["Loan period?"] * MAX_PARTS)) == MAX_PARTS
    with pytest.raises(QuestionError) as split:
        question_parts("Loan period? " * 300)
    assert str(split.value) == f"the question has 300 parts; ask at most {MAX_PARTS} at a time"
    with pytest.raises(QuestionError) as given:
        question_parts("", ["Loan period?"] * (MAX_PARTS + 1))
    assert str(given.value) == f"the question has {MAX_PARTS + 1} parts; ask at most {MAX_PARTS} at a time"


@pytest.mark.parametrize("question", ["", " ", "\t\n  "])
def test_blank_question_is_a_question_error(library_db: Db, question: str) -> None:
    with pytest.raises(QuestionError, match="the question is blank"):
        search(library_db, question, date(2026, 11, 14))


@pytest.mark.parametrize("question", [",", " ; ", ", ,"])
def test_question_without_words_is_a_question_error(library_db: Db, question: str) -> None:
    # Punctuation only splits into zero parts: that is a blank question, not an empty result.
    message = "the question is blank; ask something, e.g. 'What is the loan limit for EQ-314?'"
    with pytest.raises(QuestionError) as raised:
        question_parts(question)
    assert str(raised.value) == message
    with pytest.raises(QuestionError) as raised:
        search(library_db, question, date(2026, 11, 14))
    assert str(raised.value) == message


# ---------------------------------------------------------------------------------------------
# Supersession and retirement


def test_later_version_is_invisible_before_its_date_even_when_it_matches_best(library_db: Db) -> None:
    # EQ-502 (audio recorder) exists only in the November policy.
    before = one_part(library_db, "What is the loan limit for EQ-502?", date(2026, 10, 31))
    assert before.candidates == ()
    after = one_part(library_db, "What is the loan limit for EQ-502?", date(2026, 11, 14))
    assert where(after.candidates[0]) == (NOVEMBER, 1, "table", 5)
    assert "Audio recorder" in after.candidates[0].text

    words = "What is the loan limit for the audio recorder?"
    before = one_part(library_db, words, date(2026, 10, 31))
    assert all(c.location.source != NOVEMBER for c in before.candidates)
    assert all("EQ-502" not in c.text for c in before.candidates)
    after = one_part(library_db, words, date(2026, 11, 14))
    assert where(after.candidates[0]) == (NOVEMBER, 1, "table", 5)
    # And once November is in force, June is gone.
    assert all(c.location.source != JUNE for c in after.candidates)


@pytest.mark.parametrize(
    "as_of", [date(2024, 1, 1), date(2024, 6, 1), date(2025, 12, 31), date(2026, 11, 14)]
)
@pytest.mark.parametrize("role", ["public", "staff"])
@pytest.mark.parametrize(
    "question",
    [
        "Rare books may be viewed only on Tuesdays",
        "When may rare books be viewed in the reading room?",
        "Must reading room visitors sign the paper register?",
    ],
)
def test_retired_document_never_appears(
    library_db: Db, unretired_db: Path, as_of: date, role: str, question: str
) -> None:
    for result in search(library_db, question, as_of, k=50, caller=Caller(role=role)):
        assert all(c.location.source != RETIRED for c in result.candidates)
        assert all("Tuesdays" not in c.text for c in result.candidates)
    # The control: the same search finds it first, on every one of these dates, once it is current
    # again. Its status is all that hides it.
    (control,) = search(unretired_db, question, as_of, k=50, caller=Caller(role=role))
    assert control.candidates[0].location.source == RETIRED


def test_unheld_terms_are_those_no_eligible_document_holds(library_db: Db, unretired_db: Path) -> None:
    """Only the retired reading-room rules write "rare": to a caller who may not see them the
    collection lacks it (coverage then refuses the quote); once they are current it holds it."""
    question = "When may rare books be viewed in the reading room?"
    (retired,) = search(library_db, question, date(2026, 11, 14), k=5, caller=Caller())
    assert retired.unheld is not None and "rare" in retired.unheld and "book" not in retired.unheld
    (current,) = search(unretired_db, question, date(2026, 11, 14), k=5, caller=Caller())
    assert current.unheld is not None and "rare" not in current.unheld


@pytest.fixture(scope="module")
def unretired_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample library with the retired reading-room rules marked current."""
    from localqa.indexing.index import refresh_index

    folder = tmp_path_factory.mktemp("unretired") / "pdfs"
    shutil.copytree(REPO / "pdfs", folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    catalog = folder / "catalog.toml"
    text = catalog.read_text(encoding="utf-8")
    catalog.write_text(text.replace('status = "retired"', 'status = "current"'), encoding="utf-8")
    db = folder.parent / "unretired.sqlite3"
    refresh_index(folder, db, embed=False)
    return db


def test_nothing_is_eligible_before_the_library_existed(library_db: Db) -> None:
    result = one_part(library_db, BOOK_LOAN, date(2025, 6, 1))
    assert result.candidates == ()
    assert result.note


# ---------------------------------------------------------------------------------------------
# Conflicts and exceptions stay visible


def test_conflicting_current_passages_are_both_returned(library_db: Db) -> None:
    result = one_part(library_db, "When does the library open on Saturdays?", date(2026, 11, 14))
    texts = [c.text for c in result.candidates]
    assert any(c.location.source == NOTICE and "09:00 to 13:00" in c.text for c in result.candidates), texts
    assert any(c.location.source == HANDBOOK and "10:00 to 16:00" in c.text for c in result.candidates), texts
    top_two = {c.location.source for c in result.candidates[:2]}
    assert top_two == {NOTICE, HANDBOOK}


def test_rule_and_its_exception_are_both_within_k3(library_db: Db) -> None:
    result = one_part(library_db, "How long can fragile equipment be borrowed?", date(2026, 11, 14), k=3)
    assert len(result.candidates) <= 3
    texts = [c.text for c in result.candidates]
    assert any("Standard equipment loans last seven calendar days" in t for t in texts), texts
    assert any("two calendar days" in t for t in texts), texts
    assert "two calendar days" in texts[0]  # the exception answers the question; it comes first


def test_k_caps_the_number_of_candidates(library_db: Db) -> None:
    for k in (1, 2, 5):
        result = one_part(library_db, "When does the library open on Saturdays?", date(2026, 11, 14), k=k)
        assert 1 <= len(result.candidates) <= k
    scores = [c.score for c in one_part(library_db, BOOK_LOAN, date(2026, 11, 14), k=20).candidates]
    assert scores == sorted(scores, reverse=True)


# ---------------------------------------------------------------------------------------------
# Question text is never interpreted as FTS5 syntax


HOSTILE = [
    '"',
    '""',
    '"loan limit',
    'loan limit"',
    "*",
    "loan*",
    "NEAR(loan limit)",
    "NEAR(loan limit, 2)",
    "loan OR limit",
    "loan AND limit",
    "NOT loan",
    "loan NOT limit",
    "-loan",
    "loan -limit",
    "(loan",
    "loan)",
    "((()))",
    "body:loan",
    "section:Equipment",
    "{section body}: loan",
    "^loan",
    "loan + limit",
    "What is the? And the of?",
    "the of and a an",
    "?",
    "'; DROP TABLE passages; --",
    "EQ-314 OR EQ-073",
    '"EQ-314"*',
    "\x00loan",
    "loan \u200b limit \ufeff",
    "прокат ноутбуков 貸出",
    "x" * 10_000,
    "How many days does a standard book loan last? " * MAX_PARTS,  # the most parts a question may have
    " ".join(f"word{i}" for i in range(1_500)),
]


@pytest.mark.parametrize("question", HOSTILE, ids=range(len(HOSTILE)))
def test_fts_syntax_and_odd_questions_never_raise(library_db: Db, question: str) -> None:
    results = search(library_db, question, date(2026, 11, 14))
    for result in results:
        assert len(result.candidates) <= 5
        if not result.candidates:
            assert result.note


def test_fts_operators_are_plain_words(library_db: Db) -> None:
    """Quotes, stars and operators change nothing: the same terms give the same candidates."""
    plain = one_part(library_db, "standard book loan days", date(2026, 11, 14))
    for noisy in (
        '"standard book" loan* days',
        "standard AND book OR loan NOT days",
        "NEAR(standard book) (loan) ^days",
        "standard: -book +loan days",
    ):
        result = one_part(library_db, noisy, date(2026, 11, 14))
        assert [where(c) for c in result.candidates[:1]] == [where(c) for c in plain.candidates[:1]], noisy
        assert where(result.candidates[0]) == (HANDBOOK, 1, "prose", None)


def test_operator_words_are_not_stripped_into_a_match(library_db: Db) -> None:
    """`NOT`, `OR`, `NEAR` alone are words (stop words or not), never operators matching all."""
    for question in ("NOT", "OR", "NEAR", "AND", "NOT NOT", "* OR *"):
        result = one_part(library_db, question, date(2026, 11, 14))
        assert result.candidates == (), question


def test_question_with_a_lone_surrogate_does_not_crash(library_db: Db) -> None:
    # A lone surrogate is what Python makes of non-UTF-8 bytes in argv; it is replaced, and the
    # words around it are still searched.
    results = search(library_db, "loan\udcff limit", date(2026, 11, 14))
    assert results and all(r.candidates for r in results)
    asked = " ".join(r.question for r in results)
    asked.encode("utf-8")  # raises if a surrogate survived
    assert "loan" in asked.lower() and "limit" in asked.lower()
    assert all(len(r.candidates) <= 5 for r in results)


def test_explicit_part_with_a_lone_surrogate_is_cleaned() -> None:
    (part,) = question_parts("", ["loan\udcff limit"])
    part.encode("utf-8")  # raises if a surrogate survived
    assert part.startswith("loan") and part.endswith(" limit") and len(part) == len("loan? limit")


@pytest.mark.parametrize("question", ["loan\udcff limit", "caf\udce9 opening hours"])
def test_a_lone_surrogate_does_not_split_the_question(question: str) -> None:
    assert len(question_parts(question)) == 1


# ---------------------------------------------------------------------------------------------
# Candidates spread over pages


def spread_library(tmp_path: Path, new_index: NewIndex) -> Db:
    """One file where every paragraph matches, and a weaker match in another file."""
    from localqa.indexing.index import refresh_index

    folder = tmp_path / "docs"
    folder.mkdir()
    paragraphs = [f"Rule {n}: the reading room deposit for item {n} is refundable." for n in range(1, 7)]
    (folder / "rules.md").write_text("# Deposits\n\n" + "\n\n".join(paragraphs) + "\n", encoding="utf-8")
    (folder / "fees.md").write_text("# Fees\n\nA deposit is charged for some items.\n", encoding="utf-8")
    db = new_index()
    refresh_index(folder, db, embed=False)
    return db


def test_at_most_per_page_candidates_come_from_one_page(tmp_path: Path, new_index: NewIndex) -> None:
    from localqa.settings import RetrievalSettings

    db = spread_library(tmp_path, new_index)
    question = "Is the reading room deposit refundable?"
    capped = one_part(db, question, date(2026, 1, 1), k=3)
    assert [c.location.source for c in capped.candidates] == ["rules.md", "rules.md", "fees.md"]
    assert [c.rank for c in capped.candidates] == [1, 2, 3]
    uncapped = one_part(
        db, question, date(2026, 1, 1), k=3, settings=RetrievalSettings(retriever="lexical", per_page=0)
    )
    assert [c.location.source for c in uncapped.candidates] == ["rules.md"] * 3


def test_the_cap_never_returns_fewer_candidates_than_there_are(tmp_path: Path, new_index: NewIndex) -> None:
    db = spread_library(tmp_path, new_index)
    result = one_part(db, "Is the reading room deposit refundable?", date(2026, 1, 1), k=6)
    sources = [c.location.source for c in result.candidates]
    assert len(sources) == 6 and sources.count("fees.md") == 1
    scores = [c.score for c in result.candidates]
    assert scores == sorted(scores, reverse=True)  # still in rank order


def test_the_shared_tokenizer_serves_many_threads_at_once() -> None:
    """`localqa serve` analyses questions on several threads; the tokenizer keeps one scratch
    row, so unguarded callers collided ("constraint failed") or read each other's terms."""
    import threading

    from localqa.language.tokenizer import tokenizer

    texts = [f"What is the loan limit for item number {n} in room {n * 7}?" for n in range(40)]
    alone = [tokenizer().tokens(t) for t in texts]
    found: dict[int, object] = {}

    def analyse(n: int) -> None:
        try:
            for _ in range(20):
                found[n] = tokenizer().tokens(texts[n])
        except BaseException as error:  # reported below: a thread's exception is otherwise lost
            found[n] = error

    threads = [threading.Thread(target=analyse, args=(n,)) for n in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [found[n] for n in range(len(texts))] == alone


def test_stop_words_are_tokenized_together_as_one_at_a_time() -> None:
    """The stop words' stems come from one statement over all of them; each word alone gives the
    same stems."""
    from localqa.language.tokenizer import STOP_WORDS, tokenizer

    assert tokenizer().terms(" ".join(sorted(STOP_WORDS))) == []
    one_at_a_time = {stem for word in STOP_WORDS for stem in tokenizer().tokens(word)}
    assert tokenizer()._stop == one_at_a_time
