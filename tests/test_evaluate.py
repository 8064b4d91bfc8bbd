"""The evaluation harness as a library: scores, leaks, attribution and totals, each checked on small
suites whose documents and cases sit in the test, so every expected number can be read off them.

The tenant-leak metric is proven able to fail: with the eligibility filter bypassed (a mutation of
`localqa.retrieval.retrieve.eligible`), Globex's POL-12 passage, which shares Acme's citation id and nearly
all its wording, is retrieved for an Acme caller and must be counted as a leak, from the structured
(tenant, document) reference the index holds, not from an id prefix or the text.
"""

from __future__ import annotations

import json
import textwrap
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from backends import BOTH, NewIndex

from localqa.errors import SuiteError
from localqa.evaluate.compare import SavedRun, compare
from localqa.evaluate.records import Metric, Spread, Totals
from localqa.evaluate.report import case_line, comparison_lines, markdown, terminal_summary, value_causes
from localqa.evaluate.run import Run, load_answers, run_suite
from localqa.evaluate.score import (
    AnswerScore,
    attribute,
    cited_by_figure,
    find_leaks,
    first_passage,
    score_answer,
    score_retrieval,
    score_value,
    unchecked_figure,
)
from localqa.evaluate.suite import Case, Expect, Suite, load_suite
from localqa.indexing.index import open_index, refresh_index
from localqa.library import Library
from localqa.retrieval.retrieve import search
from localqa.settings import AnswerSettings, RetrievalSettings, Settings
from localqa.store import Db
from localqa.store.base import Store
from localqa.types import Answer, Caller, Candidate, Document, Kind, Location, Operand, PartResult, Value

# The suites here index their own documents: on PostgreSQL into a temporary schema.
BACKENDS = BOTH
REPO = Path(__file__).resolve().parent.parent
LAB = REPO / "evals" / "lab"
SETTINGS = RetrievalSettings()
# The fake model's scripted replies answer every part: the evidence decides none (localqa.answers.deciding).
ASKING = Settings(retrieval=SETTINGS, answering=AnswerSettings(always_ask_model=True))


def write_suite(root: Path, docs: dict[str, str], catalog: str, cases: str) -> Path:
    """A suite folder: docs/*.md, docs/catalog.toml and cases.toml (texts dedented)."""
    (root / "docs").mkdir(parents=True)
    for name, text in docs.items():
        (root / "docs" / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    (root / "docs" / "catalog.toml").write_text(textwrap.dedent(catalog).lstrip(), encoding="utf-8")
    (root / "cases.toml").write_text(textwrap.dedent(cases).lstrip(), encoding="utf-8")
    return root


# --- A tenants-style suite: Acme and Globex share the citation id POL-12 and its wording ---------

TENANT_DOCS = {
    "acme-travel.md": """
        # Acme travel policy

        This policy covers business travel booked by Acme employees.

        ## POL-12 Hotel nightly cap

        Under POL-12, employee hotel stays are reimbursed up to 180 dollars per night.
        """,
    "globex-travel.md": """
        # Globex travel policy

        This policy covers business travel booked by Globex employees.

        ## POL-12 Hotel nightly cap

        Under POL-12, employee hotel stays are reimbursed up to 240 dollars per night.
        """,
    # Acme's own document, although its file name (hence document id) starts with "globex-" and its
    # text says "globex:": for an Acme caller it is not a leak.
    "globex-partner-desk.md": """
        # Partner desk

        ## Partner bookings

        Bookings for partner globex: partner staff book hotel stays through the Acme partner desk.
        """,
}

TENANT_CATALOG = """
    ["acme-travel.md"]
    series = "travel-policy"
    effective = 2026-01-01
    status = "current"
    access = "public"
    tenant = "acme"

    ["globex-travel.md"]
    series = "travel-policy"
    effective = 2026-01-01
    status = "current"
    access = "public"
    tenant = "globex"

    ["globex-partner-desk.md"]
    series = "partner-desk"
    effective = 2026-01-01
    status = "current"
    access = "public"
    tenant = "acme"
    """

TENANT_CASES = """
    [[case]]
    id = "acme-pol12"
    as_of = 2026-06-15
    question = "What is the hotel cap under POL-12?"
    tenant = "acme"
    role = "public"
    expect = [{ source = "acme-travel.md", kind = "prose", paragraph = 2 }]
    phrase = "180 dollars per night"

    [[case]]
    id = "globex-pol12"
    as_of = 2026-06-15
    question = "What is the hotel cap under POL-12?"
    tenant = "globex"
    role = "public"
    expect = [{ source = "globex-travel.md", kind = "prose", paragraph = 2 }]
    phrase = "240 dollars per night"

    [[case]]
    id = "acme-partner-desk"
    as_of = 2026-06-15
    question = "Where do partner staff book hotel stays?"
    tenant = "acme"
    role = "public"
    expect = [{ source = "globex-partner-desk.md", kind = "prose", paragraph = 1 }]
    """

GLOBEX_POL12 = "Under POL-12, employee hotel stays are reimbursed up to 240 dollars per night."


@pytest.fixture
def tenant_suite(tmp_path: Path) -> Suite:
    return load_suite(write_suite(tmp_path / "tenants", TENANT_DOCS, TENANT_CATALOG, TENANT_CASES))


def bypass_eligibility(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mutation: retrieval's eligibility filter lets every document through."""

    def everything(store: Store, as_of: date, caller: Caller) -> dict[str, Document]:
        return {d.doc_id: d for d in store.documents()}

    monkeypatch.setattr(Store, "eligible", everything)


@pytest.fixture
def beside(new_index: NewIndex) -> Db:
    """Where a suite's own documents are indexed: a temporary SQLite file, or (PostgreSQL) a
    temporary schema in this database."""
    return new_index()


def case(run: Run, case_id: str) -> Any:
    return next(c for c in run.cases if c.id == case_id)


def texts(record: Any) -> list[str]:
    return [c.text for c in record.candidates]


def candidates(record: Any) -> list[dict[str, Any]]:
    return [c.model_dump(mode="json") for c in record.candidates]


def part_candidates(record: Any, number: int) -> list[dict[str, Any]]:
    """The candidates of the record's part `number` (1-based), in rank order."""
    return [c for c in candidates(record) if c["part"] == number]


def totals(run: Run) -> dict[str, Any]:
    return run.totals.model_dump(mode="json")


def test_tenant_suite_has_no_leaks_with_the_filter_in_place(tenant_suite: Suite, beside: Db) -> None:
    run = run_suite(tenant_suite, db=beside, settings=SETTINGS)

    assert totals(run)["leaks"] == 0
    assert run.gates_failed == []
    assert all(c.passed for c in run.cases), [(c.id, c.attribution) for c in run.cases]
    assert GLOBEX_POL12 not in texts(case(run, "acme-pol12"))


def test_bypassed_eligibility_filter_is_counted_as_a_tenant_leak(
    tenant_suite: Suite, monkeypatch: pytest.MonkeyPatch, beside: Db
) -> None:
    bypass_eligibility(monkeypatch)

    run = run_suite(tenant_suite, db=beside, settings=SETTINGS)

    acme = case(run, "acme-pol12")
    assert GLOBEX_POL12 in texts(acme), "the mutation should put Globex's POL-12 in Acme's candidates"
    globex_leaks = [leak for leak in acme.leaks if leak.tenant == "globex"]
    assert len(globex_leaks) == 1
    [leak] = globex_leaks
    assert (leak.doc_id, leak.source, leak.part) == ("globex/globex-travel", "globex-travel.md", 1)
    assert "tenant globex" in leak.why and "caller is tenant acme" in leak.why
    # the leaked candidate is the one at the leak's rank
    leaked = part_candidates(acme, leak.part)[leak.rank - 1]
    assert (leaked["source"], leaked["rank"]) == ("globex-travel.md", leak.rank)
    assert not acme.passed
    # and the other way round: Acme's passage leaks to the Globex caller
    globex_leaks = {(lk.tenant, lk.doc_id) for lk in case(run, "globex-pol12").leaks}
    assert globex_leaks >= {("acme", "acme/acme-travel")}
    assert totals(run)["leaks"] == sum(len(c.leaks) for c in run.cases) >= 2
    assert run.gates_failed and "leak" in run.gates_failed[0]


def test_a_leak_is_never_inferred_from_an_id_prefix_or_the_text(tenant_suite: Suite, beside: Db) -> None:
    run = run_suite(tenant_suite, db=beside, settings=SETTINGS)

    desk = case(run, "acme-partner-desk")
    top = candidates(desk)[0]
    assert (top["part"], top["rank"], top["source"]) == (1, 1, "globex-partner-desk.md")
    assert "globex:" in top["text"]
    assert desk.leaks == []
    assert desk.passed


def _location(source: str, paragraph: int = 1) -> Location:
    return Location(
        source=source,
        page=None,
        kind=Kind.PROSE,
        section=None,
        table=None,
        row=None,
        paragraph=paragraph,
        effective=None,
    )


def _candidate(doc_id: str, source: str, rank: int, tenant: str) -> Candidate:
    return Candidate(
        rank=rank,
        score=1.0,
        location=_location(source),
        text="Under POL-12 ...",
        doc_id=doc_id,
        tenant=tenant,
    )


def test_find_leaks_trusts_the_index_owner_not_the_candidate_or_its_id() -> None:
    acme = Caller(role="public", tenant="acme")
    owners = {
        "globex-partner-desk": Document(
            doc_id="globex-partner-desk", source="globex-partner-desk.md", series="desk", tenant="acme"
        ),
        "acme-mirror": Document(
            doc_id="acme-mirror", source="acme-mirror.md", series="travel", tenant="globex"
        ),
        "acme-staff": Document(
            doc_id="acme-staff", source="acme-staff.md", series="staff", tenant="acme", access="staff"
        ),
    }
    visible = {"globex-partner-desk"}
    part = PartResult(
        question="q",
        candidates=(
            _candidate("globex-partner-desk", "globex-partner-desk.md", 1, tenant="acme"),
            # named like Acme and claiming to be Acme's, but the index says Globex owns it
            _candidate("acme-mirror", "acme-mirror.md", 2, tenant="acme"),
            _candidate("acme-staff", "acme-staff.md", 3, tenant="acme"),
            _candidate("nowhere", "nowhere.md", 4, tenant="acme"),
        ),
    )

    leaks = find_leaks([part], owners, visible, acme, date(2026, 6, 1))

    assert [(lk.rank, lk.tenant, lk.doc_id) for lk in leaks] == [
        (2, "globex", "acme-mirror"),
        (3, "acme", "acme-staff"),
        (4, "?", "nowhere"),
    ]
    assert "tenant globex" in leaks[0].why
    assert "access staff, caller is role public" in leaks[1].why
    assert leaks[2].why == "unknown document"


def test_find_leaks_does_not_trust_the_eligibility_filter_either() -> None:
    """Even when `visible` (the filter's verdict) wrongly includes another tenant's document, a
    staff-only one, a retired one or a future version, the gate counts each as a leak."""
    caller = Caller(role="public", tenant="acme")
    owners = {
        "globex": Document(doc_id="globex", source="g.md", series="g", tenant="globex"),
        "staff": Document(doc_id="staff", source="s.md", series="s", tenant="acme", access="staff"),
        "retired": Document(doc_id="retired", source="r.md", series="r", tenant="acme", status="retired"),
        "future": Document(
            doc_id="future", source="f.md", series="f", tenant="acme", effective=date(2027, 1, 1)
        ),
        "fine": Document(doc_id="fine", source="ok.md", series="ok", tenant="acme"),
    }
    part = PartResult(
        question="q",
        candidates=tuple(
            _candidate(doc, owners[doc].source, rank, tenant="acme")
            for rank, doc in enumerate(owners, start=1)
        ),
    )
    leaks = find_leaks([part], owners, set(owners), caller, date(2026, 6, 1))
    assert [(lk.doc_id, lk.why) for lk in leaks] == [
        ("globex", "tenant globex, caller is tenant acme"),
        ("staff", "access staff, caller is role public"),
        ("retired", "status retired"),
        ("future", "effective 2027-01-01, after 2026-06-01"),
    ]


# --- Attribution and metrics with their denominators ----------------------------------------------

HANDBOOK_DOCS = {
    "handbook.md": """
        # Library handbook

        This handbook sets out the lending rules of the library.

        ## Loan period

        A standard book loan lasts 21 days.

        ## Loan renewals

        A book loan may be renewed twice.

        ## Lost cards

        A lost library card is replaced for 5 dollars.
        """,
}

HANDBOOK_CATALOG = """
    ["handbook.md"]
    series = "handbook"
    status = "current"
    access = "public"
    """

# loan-length: evidence retrieved (paragraph 2 first, the renewals paragraph second).
# lost-card-paraphrase: shares no word (and no stem) with its evidence: nothing retrieved (retrieval).
# renewals-said-absent: claims nothing supports an answer, yet the renewals paragraph is retrieved.
# architect: nothing supports an answer and nothing shares a word with it: nothing is retrieved.
HANDBOOK_CASES = """
    [[case]]
    id = "loan-length"
    as_of = 2026-07-01
    question = "How many days does a standard book loan last?"
    expect = [{ source = "handbook.md", kind = "prose", paragraph = 2 }]
    phrase = "21 days"

    [[case]]
    id = "lost-card-paraphrase"
    as_of = 2026-07-01
    question = "What does a mislaid membership pass cost?"
    expect = [{ source = "handbook.md", kind = "prose", paragraph = 4 }]
    phrase = "5 dollars"

    [[case]]
    id = "renewals-said-absent"
    as_of = 2026-07-01
    question = "How many times may a book loan be renewed?"
    expect = []

    [[case]]
    id = "architect"
    as_of = 2026-07-01
    question = "Who designed the building?"
    expect = []
    """

LOAN = "A standard book loan lasts 21 days."
RENEWALS = "A book loan may be renewed twice."


@pytest.fixture
def handbook_suite(tmp_path: Path) -> Suite:
    return load_suite(write_suite(tmp_path / "handbook", HANDBOOK_DOCS, HANDBOOK_CATALOG, HANDBOOK_CASES))


def label_of(suite: Suite, folder: Path, question: str, text: str) -> str:
    """The label (P1, P2, ...) the model will see `text` under for `question`."""
    db_path = folder / "labels.sqlite3"
    if not db_path.exists():
        assert not refresh_index(suite.docs or folder, db_path).failed
    with open_index(db_path) as db:
        [part] = search(db, question, as_of=date(2026, 7, 1), caller=Caller(), settings=SETTINGS)
    ranks = [c.rank for c in part.candidates if c.text == text]
    assert ranks, f"{text!r} is not a candidate for {question!r}"
    return f"P{ranks[0]}"


def reply(source: str | None, sentence: int | None) -> str:
    return json.dumps({"source": source, "sentence": sentence})


def test_retrieval_only_attribution_and_metrics_with_denominators(handbook_suite: Suite, beside: Db) -> None:
    run = run_suite(handbook_suite, db=beside, settings=SETTINGS)

    assert {c.id: c.attribution for c in run.cases} == {
        "loan-length": None,
        "lost-card-paraphrase": "retrieval",
        "renewals-said-absent": "contract",
        "architect": None,
    }
    loan = case(run, "loan-length")
    assert [(c["part"], c["rank"], c["paragraph"]) for c in candidates(loan)] == [(1, 1, 2), (1, 2, 3)]
    assert [p.model_dump() for p in loan.parts] == [
        {
            "question": "How many days does a standard book loan last?",
            "note": None,
            "routed_to": [],
            "route": None,
        }
    ]
    assert loan.retrieval.model_dump() == {
        "hit_at_1": True,
        "recall": 1.0,
        "reciprocal_rank": 1.0,
        "precision": 0.5,
        "no_answer_correct": None,
    }
    lost_card = case(run, "lost-card-paraphrase")
    assert lost_card.candidates == []
    assert [p.note for p in lost_card.parts] == [
        "no eligible passage shares a meaningful word with the question"
    ]
    assert case(run, "renewals-said-absent").retrieval.no_answer_correct is False

    t = totals(run)
    assert (t["cases"], t["passed"], t["leaks"]) == (4, 2, 0)
    assert t["hit_at_1"] == {"numerator": 1, "denominator": 2, "value": 0.5}
    assert t["recall"] == {"numerator": 1.0, "denominator": 2, "value": 0.5}
    assert t["mrr"] == {"numerator": 1.0, "denominator": 2, "value": 0.5}
    # precision is over answerable cases that returned something: only loan-length
    assert t["precision"] == {"numerator": 0.5, "denominator": 1, "value": 0.5}
    assert t["no_answer"] == {"numerator": 1, "denominator": 2, "value": 0.5}
    assert t["attribution"] == {"retrieval": 1, "generation": 0, "contract": 1}
    assert t["verified"] is None and t["unverified_shown"] is None
    assert run.gates_failed == []


def test_report_shows_the_top_candidate_of_each_part(tmp_path: Path, beside: Db) -> None:
    two_parts = HANDBOOK_CASES + textwrap.dedent("""
        [[case]]
        id = "loan-and-lost-card"
        as_of = 2026-07-01
        question = "How long is a loan, and what does a mislaid membership pass cost?"
        parts = [
            "How many days does a standard book loan last?",
            "What does a mislaid membership pass cost?",
        ]
        expect = [{ source = "handbook.md", kind = "prose", paragraph = 2 }]
        """)
    suite = load_suite(write_suite(tmp_path / "two", HANDBOOK_DOCS, HANDBOOK_CATALOG, two_parts))

    run = run_suite(suite, db=beside, settings=SETTINGS)

    both = case(run, "loan-and-lost-card")
    assert [c["part"] for c in candidates(both)] == [1, 1]  # the second part retrieves nothing
    assert case_line(both) == f"PASS  {'loan-and-lost-card':<34} handbook.md prose ¶2 | no candidates"
    row = (
        "| loan-and-lost-card | pass |  | handbook.md, kind prose, paragraph 2 "
        f"| handbook.md prose ¶2 | no candidates | {LOAN} |  |  |"
    )
    assert row in markdown(run, None).splitlines()


@pytest.mark.parametrize(
    ("holds", "known", "gate"),
    [
        (False, False, []),  # a suite that does not hold its answers: reported, no gate
        (True, False, ["answer stage: renewals-said-absent: a no-answer case shown a quote as its answer"]),
        (True, True, []),  # marked known_failure, with why: reported as such, not counted
    ],
)
def test_a_suite_holding_its_answers_fails_when_a_no_answer_case_is_shown_a_quote(
    tmp_path: Path, fake_model: Any, beside: Db, holds: bool, known: bool, gate: list[str]
) -> None:
    cases = HANDBOOK_CASES
    if known:
        cases = cases.replace(
            'id = "renewals-said-absent"', 'id = "renewals-said-absent"\n    known_failure = "why"'
        )
    if holds:
        cases = "hold_answers = true\n" + cases
    suite = load_suite(write_suite(tmp_path / "handbook", HANDBOOK_DOCS, HANDBOOK_CATALOG, cases))
    assert suite.hold_answers is holds
    shown = label_of(suite, suite.path, "How many times may a book loan be renewed?", RENEWALS)
    right = label_of(suite, suite.path, "How many days does a standard book loan last?", LOAN)
    fake_model.enqueue(reply(right, 1), reply(shown, 1))

    run = run_suite(suite, db=beside, settings=ASKING, model=fake_model)

    assert case(run, "renewals-said-absent").answer.quote == RENEWALS
    assert run.totals.answer_stage == (0 if known else 1)
    assert run.gates_failed == gate
    assert ("Answer stage failures:" in "\n".join(terminal_summary(run, None))) is holds


def test_a_hold_answers_that_is_no_boolean_is_a_suite_error(tmp_path: Path) -> None:
    folder = write_suite(
        tmp_path / "s", HANDBOOK_DOCS, HANDBOOK_CATALOG, 'hold_answers = "yes"\n' + HANDBOOK_CASES
    )
    with pytest.raises(SuiteError, match="hold_answers must be true or false"):
        load_suite(folder)


def test_model_attribution_and_answer_metrics(
    handbook_suite: Suite, fake_model: Any, tmp_path: Path, beside: Db
) -> None:
    folder = handbook_suite.path
    wrong = label_of(handbook_suite, folder, "How many days does a standard book loan last?", RENEWALS)
    assert wrong != "P1"
    shown = label_of(handbook_suite, folder, "How many times may a book loan be renewed?", RENEWALS)
    # loan-length: the model picks the renewals passage (verbatim); renewals-said-absent: it quotes
    # a passage although the case expects nothing. The other two cases get no model call.
    fake_model.enqueue(reply(wrong, 1), reply(shown, 1))  # each passage is one sentence

    run = run_suite(handbook_suite, db=beside, settings=ASKING, model=fake_model)

    assert len(fake_model.history) == 2
    assert {c.id: c.attribution for c in run.cases} == {
        "loan-length": "generation",
        "lost-card-paraphrase": "retrieval",
        "renewals-said-absent": "contract",
        "architect": None,
    }
    loan = case(run, "loan-length").answer
    assert (loan.quote, loan.verified, loan.citation_correct, loan.contains_phrase) == (
        RENEWALS,
        True,
        False,
        False,
    )
    assert loan.citation.paragraph == 3
    absent = case(run, "renewals-said-absent").answer
    assert (absent.verified, absent.abstention_correct, absent.citation_correct) == (True, False, None)
    assert case(run, "architect").answer.abstention_correct is True
    assert case(run, "lost-card-paraphrase").answer.reason == "no eligible passage matches this part"

    t = totals(run)
    assert t["verified"] == {"numerator": 2, "denominator": 2, "value": 1.0}
    assert t["citation_correct"] == {"numerator": 0, "denominator": 2, "value": 0.0}
    assert t["contains_phrase"] == {"numerator": 0, "denominator": 2, "value": 0.0}
    assert t["abstention"] == {"numerator": 1, "denominator": 2, "value": 0.5}
    assert t["unverified_shown"] == 0
    assert t["attribution"] == {"retrieval": 1, "generation": 1, "contract": 1}
    assert run.config.model == {"backend": "fake", "name": "fake"}
    assert run.gates_failed == []


def test_a_correct_model_answer_passes(handbook_suite: Suite, fake_model: Any, beside: Db) -> None:
    right = label_of(
        handbook_suite, handbook_suite.path, "How many days does a standard book loan last?", LOAN
    )
    fake_model.enqueue(reply(right, 1), reply(None, None))

    run = run_suite(handbook_suite, db=beside, settings=ASKING, model=fake_model)

    loan = case(run, "loan-length")
    assert loan.attribution is None and loan.passed
    assert (loan.answer.verified, loan.answer.citation_correct, loan.answer.contains_phrase) == (
        True,
        True,
        True,
    )
    # the model abstained on the case that expects nothing, so the contract holds there now
    assert case(run, "renewals-said-absent").attribution is None


def test_a_run_records_the_ranking_the_choice_and_whether_the_model_overrode_it(
    handbook_suite: Suite, fake_model: Any, tmp_path: Path, beside: Db
) -> None:
    """The model chooses the last sentence it is shown: an override wherever more than one was
    shown. The saved run keeps the scorer's ranking and the choice; totals and report show it."""
    fake_model.always(lambda request: reply(request.units[-1].label, request.units[-1].sentence))

    run = run_suite(handbook_suite, db=beside, settings=ASKING, model=fake_model)

    requests = {r.question: r for r in fake_model.history}
    loan = case(run, "loan-length").answer
    sent = requests["How many days does a standard book loan last?"]
    assert loan is not None and loan.selection is not None
    assert loan.selection.shown == sent.units and len(sent.units) == 2
    assert loan.selection.choice == sent.units[-1] and loan.selection.overrode is True
    assert loan.quote == sent.units[-1].text == RENEWALS  # the scorer put the loan sentence first
    assert sent.units[0].text == LOAN
    assert case(run, "architect").answer.selection is None  # no candidates: nothing ranked
    chose = [
        c.answer.selection for c in run.cases if c.answer and c.answer.selection and c.answer.selection.choice
    ]
    assert totals(run)["overrode"] == {
        "numerator": sum(bool(s.overrode) for s in chose),
        "denominator": len(chose),
        "value": round(sum(bool(s.overrode) for s in chose) / len(chose), 4),
    }
    saved = tmp_path / "run.json"
    run.save(saved)
    recorded = next(c for c in json.loads(saved.read_text())["cases"] if c["id"] == "loan-length")
    selection = recorded["answer"]["selection"]
    assert [u["text"] for u in selection["shown"]] == [LOAN, RENEWALS]
    assert [u["rank"] for u in selection["shown"]] == [1, 2]
    assert {"score", "lexical", "semantic", "label", "sentence", "location"} <= set(selection["shown"][0])
    assert (selection["choice"]["label"], selection["choice"]["rank"]) == (sent.units[-1].label, 2)
    assert selection["overrode"] is True
    report = markdown(run, None)
    assert f"| {sent.units[-1].label} s1 (scorer's #2: overrode) |" in report
    assert "| Model overrode scorer |" in report


def test_a_paraphrased_model_quote_is_refused_not_shown(
    handbook_suite: Suite, fake_model: Any, beside: Db
) -> None:
    """A backend ignoring the schema spells out a quote of its own: refused, never shown."""
    fake_model.enqueue(
        json.dumps({"source": "P1", "quote": "Book loans last three weeks."}), reply(None, None)
    )

    run = run_suite(handbook_suite, db=beside, settings=ASKING, model=fake_model)

    loan = case(run, "loan-length")
    assert loan.answer.quote is None
    assert (loan.answer.verified, loan.answer.shown_unverified) == (False, False)
    assert loan.answer.reason == "the model's reply is not the expected JSON"
    assert loan.attribution == "generation"
    assert totals(run)["unverified_shown"] == 0
    assert totals(run)["verified"]["denominator"] == 0  # nothing was shown
    assert run.gates_failed == []


# --- Grading answers directly ------------------------------------------------------------------------

THAW_CASE = Case(
    id="thaw",
    as_of=date(2026, 7, 15),
    question="How many times may sample S-88 be thawed?",
    expect=[Expect(source="northstar-protocols.md", kind=Kind.PROSE, paragraph=6)],
    phrase="may be thawed once",
)
THAW_TEXT = "The sample may be thawed once."


def test_score_answer_rejects_a_may_to_must_change() -> None:
    where = _location("northstar-protocols.md", 6)

    must = score_answer(THAW_CASE, "The sample must be thawed once.", where, THAW_TEXT)
    may = score_answer(THAW_CASE, "The  sample may be\nthawed once.", where, THAW_TEXT)

    assert (must.verified, must.shown_unverified, must.citation_correct, must.contains_phrase) == (
        False,
        True,
        False,
        False,
    )
    assert (may.verified, may.shown_unverified, may.citation_correct) == (True, False, True)
    # the quote is verified after whitespace normalisation only
    assert score_answer(THAW_CASE, THAW_TEXT, where, THAW_TEXT).contains_phrase is True


def test_attribute_without_answer_uses_candidates() -> None:
    nothing = THAW_CASE.model_copy(update={"expect": []})
    empty = score_retrieval(nothing, [PartResult(question="q", candidates=())])
    assert attribute(nothing, empty, None, shown_candidates=False) is None
    assert attribute(nothing, empty, None, shown_candidates=True) == "contract"


def test_recorded_answers_on_the_lab_suite(tmp_path: Path, beside: Db) -> None:
    # Only source and kind are required; the other location fields default to null.
    citation = {"source": "northstar-protocols.md", "kind": "prose", "paragraph": 6}
    suite = load_suite(LAB)
    for quote, grounded in (("The sample must be thawed once.", False), (THAW_TEXT, True)):
        file = tmp_path / f"{grounded}.jsonl"
        file.write_text(json.dumps({"id": "lab-s88-thaw", "quote": quote, "citation": citation}) + "\n")

        answers = load_answers(file)
        run = run_suite(suite, db=beside, settings=SETTINGS, answers=answers, answers_file=str(file))

        thaw = case(run, "lab-s88-thaw").answer
        assert thaw.verified is grounded
        assert thaw.shown_unverified is not grounded
        assert thaw.citation_correct is grounded
        assert thaw.contains_phrase is grounded
        assert bool(run.gates_failed) is not grounded
        # the other cases have no recorded answer: nothing shown, so no gate
        assert case(run, "lab-r17-storage").answer.reason == "no recorded answer for this case"
        assert totals(run)["unverified_shown"] == (0 if grounded else 1)


def test_a_recorded_answer_quoting_another_tenant_is_a_leak(
    tenant_suite: Suite, tmp_path: Path, beside: Db
) -> None:
    file = tmp_path / "answers.jsonl"
    citation = {
        "source": "globex-travel.md",
        "page": None,
        "kind": "prose",
        "section": None,
        "table": None,
        "row": None,
        "paragraph": 2,
        "effective": None,
    }
    file.write_text(json.dumps({"id": "acme-pol12", "quote": GLOBEX_POL12, "citation": citation}) + "\n")

    run = run_suite(tenant_suite, db=beside, settings=SETTINGS, answers=load_answers(file))

    acme = case(run, "acme-pol12")
    assert acme.answer.citation_correct is False
    [leak] = acme.leaks  # the answer's citation, not a retrieval candidate (the filter is in place)
    assert (leak.part, leak.rank, leak.tenant, leak.doc_id, leak.source) == (
        0,
        0,
        "globex",
        "globex/globex-travel",
        "globex-travel.md",
    )
    assert leak.why == "the answer cites it: tenant globex, caller is tenant acme"
    assert not acme.passed
    assert totals(run)["leaks"] == 1
    assert run.gates_failed == ["1 tenant/access leak(s)"]


def test_malformed_answers_line_names_file_and_line(tmp_path: Path) -> None:
    file = tmp_path / "answers.jsonl"
    file.write_text('{"id": "a", "quote": null, "citation": null}\n\n{"id": "b", "quote": \n')

    with pytest.raises(SuiteError) as error:
        load_answers(file)

    message = str(error.value)
    assert message.startswith(f"{file}, line 3: not a recorded answer")
    assert "\n" not in message


def test_recorded_citation_needs_only_the_identifying_fields(tmp_path: Path, beside: Db) -> None:
    file = tmp_path / "answers.jsonl"
    citation = {"source": "northstar-protocols.md", "kind": "prose", "paragraph": 6}
    file.write_text(json.dumps({"id": "lab-s88-thaw", "quote": THAW_TEXT, "citation": citation}) + "\n")

    answers = load_answers(file)

    recorded = answers["lab-s88-thaw"].citation
    assert recorded is not None
    # the omitted fields are null, so it names the same passage as a full citation
    assert recorded.location() == Location(
        source="northstar-protocols.md",
        page=None,
        kind=Kind.PROSE,
        section=None,
        table=None,
        row=None,
        paragraph=6,
        effective=None,
    )
    run = run_suite(load_suite(LAB), db=beside, settings=SETTINGS, answers=answers)
    thaw = case(run, "lab-s88-thaw").answer
    assert (thaw.verified, thaw.citation_correct, thaw.contains_phrase) == (True, True, True)


@pytest.mark.parametrize(
    ("line", "field", "msg"),
    [
        ('{"id": "b", "citation": {"kind": "prose"}}', "citation.source", "Field required"),
        ('{"id": "b", "citation": {"source": "a.md"}}', "citation.kind", "Field required"),
        (
            '{"id": "b", "citation": {"source": "a.md", "kind": "poem"}}',
            "citation.kind",
            "Input should be 'prose', 'table' or 'ocr'",
        ),
        ('{"quote": "x"}', "id", "Field required"),
    ],
)
def test_malformed_answers_line_names_the_field(tmp_path: Path, line: str, field: str, msg: str) -> None:
    file = tmp_path / "answers.jsonl"
    file.write_text(line + "\n")

    with pytest.raises(SuiteError) as error:
        load_answers(file)

    assert str(error.value) == (
        f"{file}, line 1: not a recorded answer ({field}: {msg}); "
        'expected {"id": ..., "quote": ..., "citation": {"source": ..., "kind": ..., ...}}'
    )


# --- Comparing runs -------------------------------------------------------------------------------


def test_compare_sorts_cases_by_outcome() -> None:
    def run(config: dict[str, Any], **outcomes: str | None) -> dict[str, Any]:
        return {
            "config": config,
            "cases": [
                {"id": i, "attribution": a, "leaks": [], "passed": a is None} for i, a in outcomes.items()
            ],
        }

    before = run(
        {"retrieval": {"chunking": "body"}, "created": "x"},
        a=None,
        b="retrieval",
        c=None,
        d="generation",
        gone=None,
    )
    after = run(
        {"retrieval": {"chunking": "heading"}, "created": "y"},
        a=None,
        b=None,
        c="retrieval",
        d="generation",
        fresh=None,
    )
    # A leak fails a case whatever its attribution; the run records that in `passed`, which is
    # all compare() reads.
    after["cases"][0]["leaks"] = [{"tenant": "globex"}]
    after["cases"][0]["passed"] = False

    result = compare(SavedRun.model_validate(before), SavedRun.model_validate(after), "before.json")

    assert result.fixed == ["b"]
    assert sorted(result.regressed) == ["a", "c"]
    assert result.unchanged == []
    assert result.still_blocking == ["d"]
    assert (result.new, result.dropped) == (["fresh"], ["gone"])
    assert result.config_changes == {"retrieval.chunking": ("body", "heading")}


def test_passed_is_dumped_with_each_case_and_is_what_compare_reads(
    tenant_suite: Suite, monkeypatch: pytest.MonkeyPatch, beside: Db
) -> None:
    clean = run_suite(tenant_suite, db=beside, settings=SETTINGS).model_dump(mode="json")
    bypass_eligibility(monkeypatch)
    leaking = run_suite(tenant_suite, db=beside, settings=SETTINGS).model_dump(mode="json")

    for dumped in (clean, leaking):
        for record in dumped["cases"]:
            assert record["passed"] is (record["attribution"] is None and not record["leaks"]), record["id"]
    [acme] = [c for c in leaking["cases"] if c["id"] == "acme-pol12"]
    assert acme["leaks"] and acme["passed"] is False

    result = compare(SavedRun.model_validate(clean), SavedRun.model_validate(leaking), "clean.json")
    assert "acme-pol12" in result.regressed
    assert result.fixed == [] and result.new == [] and result.dropped == []


# --- Values: correct with its denominator, the blame for a wrong one, losses and rescues ----------

VALUE_CASES = """
    [[case]]
    id = "loan-length"
    as_of = 2026-07-01
    question = "How many days does a standard book loan last?"
    expect = [{ source = "handbook.md", kind = "prose", paragraph = 2 }]
    phrase = "21 days"
    value = "21 days"

    [[case]]
    id = "renewals"
    as_of = 2026-07-01
    question = "How many times may a book loan be renewed?"
    expect = [{ source = "handbook.md", kind = "prose", paragraph = 3 }]
    value = 2
    tolerance = 0

    [[case]]
    id = "lost-card"
    as_of = 2026-07-01
    question = "How much does a lost library card cost to replace?"
    expect = [{ source = "handbook.md", kind = "prose", paragraph = 4 }]
    value = 5
    unit = "dollars"
    """


def with_values(monkeypatch: pytest.MonkeyPatch, values: dict[str, Value | None]) -> None:
    """Answers carry the value `values` gives their part's question: the evaluator is measured
    here, whatever `localqa.values` takes from a quote."""
    answer_part = Library.answer_part

    def valued(self: Library, result: PartResult, model: Any, settings: Any = None, **asked: Any) -> Answer:
        answer = answer_part(self, result, model, settings, **asked)
        value = values.get(result.question)
        return answer.model_copy(update={"value": value}) if answer.verified else answer

    monkeypatch.setattr(Library, "answer_part", valued)


def test_values_are_scored_with_their_denominator_and_a_wrong_one_is_blamed(
    tmp_path: Path, fake_model: Any, monkeypatch: pytest.MonkeyPatch, beside: Db
) -> None:
    suite = load_suite(write_suite(tmp_path / "values", HANDBOOK_DOCS, HANDBOOK_CATALOG, VALUE_CASES))
    loan_q, renew_q, card_q = (c.question for c in suite.cases)
    with_values(
        monkeypatch,
        {
            loan_q: Value(text="21 days", number=21, unit="days"),
            renew_q: Value(text="twice"),  # no number: wrong, from the right passage
            card_q: Value(text="21 days", number=21, unit="days"),  # from the loan paragraph it quotes
        },
    )
    folder = suite.path
    fake_model.enqueue(
        reply(label_of(suite, folder, loan_q, LOAN), 1),
        reply(label_of(suite, folder, renew_q, RENEWALS), 1),
        reply(label_of(suite, folder, card_q, LOAN), 1),  # quotes the loan paragraph instead
    )

    run = run_suite(suite, db=beside, settings=ASKING, model=fake_model)

    loan, renewals, card = (case(run, i).answer for i in ("loan-length", "renewals", "lost-card"))
    assert (loan.value_correct, loan.value_blame, loan.value.text) == (True, None, "21 days")
    assert (renewals.value_correct, renewals.value_blame) == (False, "span")
    assert renewals.value_why == "'twice' is no number; expected 2 exactly"
    assert (card.value_correct, card.value_blame) == (False, "quote")  # evidence retrieved, not quoted
    assert [case(run, i).attribution for i in ("loan-length", "renewals", "lost-card")] == [
        None,
        "generation",
        "generation",
    ]
    t = totals(run)
    assert t["value_correct"] == {"numerator": 1, "denominator": 3, "value": 0.3333}
    assert t["value_blame"] == {"retrieval": 0, "quote": 1, "span": 1, "arithmetic": 0}
    summary = terminal_summary(run, None)
    assert "Value correct:        0.333  (1/3)" in summary
    assert "Wrong values by cause: retrieval 0, quote 1, span 1, arithmetic 0" in summary
    [line] = [s for s in summary if "renewals" in s and s.startswith("FAIL")]
    assert line.endswith("[generation]  (value, span: 'twice' is no number; expected 2 exactly)")
    report = markdown(run, None)
    assert "| Value correct | 0.333  (1/3) |" in report
    assert "| 'twice' (wrong: span) |" in report


def test_a_run_without_values_reports_none() -> None:
    run_totals = Totals.of([])
    assert (run_totals.value_correct, run_totals.losses) == (None, None)
    assert value_causes(run_totals) is None


def value_case(**fields: Any) -> Case:
    return Case.model_validate(
        {
            "id": "c",
            "as_of": date(2026, 7, 1),
            "question": "How much?",
            "expect": [{"source": "10k.pdf", "page": 50}, {"source": "10k.pdf", "page": 51}],
            "value": 12.5,
            **fields,
        }
    )


def located(page: int) -> Location:
    return _location("10k.pdf").model_copy(update={"page": page, "kind": Kind.TABLE, "table": 1, "row": 2})


def operand(name: str, page: int) -> Operand:
    value = Value(text="1,600", number=1600)
    return Operand(name=name, value=value, quote="Net sales: 1,600", citation=located(page))


def shown(citation_correct: bool | None, page: int | None = 50) -> AnswerScore:
    return AnswerScore(
        quote=None if page is None else "Net sales: 1,600",
        citation=None if page is None else located(page),
        verified=page is not None,
        shown_unverified=False,
        citation_correct=citation_correct,
        contains_phrase=None,
        abstention_correct=None,
    )


WRONG = Value(text="13.5", number=13.5)


def derived(*pages: int) -> Value:
    operands = tuple(operand(f"x{n}", page) for n, page in enumerate(pages))
    return Value(text="13.5 %", number=13.5, unit="%", operands=operands, expression="x0 / x1")


@pytest.mark.parametrize(
    ("answer", "value", "recall", "blame"),
    [
        (shown(True), WRONG, 1.0, "span"),  # the right passage, the wrong cell
        (shown(True), None, 1.0, "span"),  # the right passage, no value taken from it
        (shown(False, page=9), WRONG, 0.0, "retrieval"),  # no expected evidence retrieved
        (shown(False, page=9), WRONG, 0.5, "quote"),  # some retrieved, quoted elsewhere
        (shown(None, page=None), None, 1.0, "quote"),  # retrieved, refused
        (shown(None, page=None), None, 0.0, "retrieval"),
        (shown(True), derived(50, 51), 1.0, "arithmetic"),  # every operand from expected evidence
        (shown(True), derived(50, 9), 0.5, "retrieval"),  # an operand from elsewhere, evidence missing
        (shown(True), derived(50, 9), 1.0, "quote"),  # an operand from elsewhere, evidence there
    ],
    ids=["cell", "no-value", "not-retrieved", "quoted-elsewhere", "refused", "refused-nothing-retrieved",
         "arithmetic", "operand-not-retrieved", "operand-quoted-elsewhere"],
)  # fmt: skip
def test_a_wrong_value_is_blamed_on_one_stage(
    answer: AnswerScore, value: Value | None, recall: float, blame: str
) -> None:
    scored = score_value(value_case(), answer, value, recall, lambda location: "Net sales: 1,600")
    assert (scored.value_correct, scored.value_blame) == (False, blame)


def test_a_right_value_has_no_blame_and_a_case_without_value_is_not_judged() -> None:
    right = Value(text="12.5 %", number=12.5, unit="%")
    scored = score_value(value_case(), shown(True), right, 1.0, lambda location: None)
    assert (scored.value_correct, scored.value_blame, scored.value_why) == (True, None, None)
    unvalued = score_value(value_case(value=None), shown(True), right, 1.0, lambda location: None)
    assert (unvalued.value, unvalued.value_correct) == (right, None)


def test_a_derived_figure_cites_expected_evidence_when_one_of_its_operands_does() -> None:
    # The answer's own citation is its first operand's (page 9); its second is the expected page 50.

    def text_at(location: Location) -> str:
        return "Net sales: 1,600"

    assert cited_by_figure(value_case(), shown(False, page=9), derived(9, 50), text_at).citation_correct
    assert not cited_by_figure(value_case(), shown(False, page=9), derived(9, 8), text_at).citation_correct
    assert not cited_by_figure(value_case(), shown(False, page=9), WRONG, text_at).citation_correct
    refused = shown(None, page=None)
    assert cited_by_figure(value_case(), refused, None, text_at).citation_correct is None


def first(page: int) -> Candidate:
    return Candidate(
        rank=1, score=1.0, location=located(page), text="Net sales: 1,600", doc_id="d", tenant="default"
    )


@pytest.mark.parametrize(
    ("top", "answer", "outcome"),
    [
        (first(50), shown(False, page=9), "loss"),  # retrieval had it first, the answer cites elsewhere
        (first(9), shown(True), "rescue"),  # retrieval's first was wrong, the answer found the evidence
        (first(50), shown(True), None),
        (first(9), shown(False, page=9), None),
        (first(50), shown(None, page=None), None),  # a refusal cites nothing
        (None, shown(True), "rescue"),
    ],
)
def test_losses_and_rescues(top: Candidate | None, answer: AnswerScore, outcome: str | None) -> None:
    assert first_passage(value_case(), top, answer) == outcome
    assert first_passage(value_case(expect=[], value=None), top, answer) is None


def test_losses_and_rescues_are_counted_and_printed(
    handbook_suite: Suite, fake_model: Any, beside: Db
) -> None:
    folder = handbook_suite.path
    # loan-length: retrieval ranks the loan paragraph first and the model quotes the renewals one.
    wrong = label_of(handbook_suite, folder, "How many days does a standard book loan last?", RENEWALS)
    fake_model.enqueue(reply(wrong, 1), reply(None, None))

    run = run_suite(handbook_suite, db=beside, settings=ASKING, model=fake_model)

    assert case(run, "loan-length").answer.first_passage == "loss"
    assert (run.totals.losses, run.totals.rescues) == (1, 0)
    assert "Losses/rescues:       1/0 (first passage right, answer cites elsewhere / the reverse)" in (
        terminal_summary(run, None)
    )
    assert "| Answer stage losses / rescues | 1 / 0 |" in markdown(run, None)


def test_every_answered_part_is_timed_and_its_decider_counted(
    handbook_suite: Suite, fake_model: Any, beside: Db
) -> None:
    # loan-length's model reply is wrong on purpose (as above); every other part is answered by
    # the fake model's default or decided by the evidence: each part has its time and decider.
    wrong = label_of(
        handbook_suite, handbook_suite.path, "How many days does a standard book loan last?", RENEWALS
    )
    fake_model.enqueue(reply(wrong, 1), reply(None, None))

    run = run_suite(handbook_suite, db=beside, settings=ASKING, model=fake_model)

    answered = [c.answer for c in run.cases if c.answer is not None]
    parts = [p for a in answered for p in a.parts]
    assert parts and all(p.seconds > 0 for p in parts)
    assert len(parts) >= len(answered)
    assert case(run, "loan-length").answer.parts[0].decided_by == "model"
    decided = [p for p in parts if p.decided_by is not None]
    assert run.totals.model_decided == Metric.of(sum(p.decided_by == "model" for p in decided), len(decided))
    assert run.totals.part_seconds is not None and run.totals.part_seconds.parts == len(parts)
    waited = f"median {run.totals.part_seconds.median:.2f}, p90 {run.totals.part_seconds.p90:.2f}"
    assert any(
        line.startswith("Seconds per part:") and waited in line for line in terminal_summary(run, None)
    )
    assert f"| Seconds per part | {waited}" in markdown(run, None)
    assert "| Model decided |" in markdown(run, None)
    saved = run.model_dump(mode="json")
    assert saved["totals"]["part_seconds"]["parts"] == len(parts)
    assert {"seconds", "decided_by"} <= set(saved["cases"][0]["answer"]["parts"][0])


def test_the_extractive_scorer_is_timed_but_never_counted_as_a_model_deciding(
    handbook_suite: Suite, beside: Db
) -> None:
    from localqa.models.extractive import ExtractiveModel

    run = run_suite(handbook_suite, db=beside, settings=ASKING, model=ExtractiveModel())

    parts = [p for c in run.cases if c.answer is not None for p in c.answer.parts]
    assert parts and all(p.decided_by is None for p in parts)
    assert run.totals.model_decided is None and run.totals.part_seconds is not None
    assert "Model decided" not in markdown(run, None)


@pytest.mark.parametrize(
    ("seconds", "median", "p90"),
    [
        ([1.0], 1.0, 1.0),
        ([3.0, 1.0, 2.0], 2.0, 3.0),
        ([float(n) for n in range(1, 11)], 5.5, 9.0),  # nearest rank: the 9th of 10
        ([float(n) for n in range(1, 42)], 21.0, 37.0),  # FinanceBench-dev's 41 parts
    ],
)
def test_spread_is_the_median_and_the_nearest_rank_p90(
    seconds: list[float], median: float, p90: float
) -> None:
    assert Spread.of(seconds) == Spread(parts=len(seconds), median=median, p90=p90)
    assert Spread.of([]) is None


def test_compare_lists_values_fixed_and_regressed() -> None:
    def run(**values: bool | None) -> SavedRun:
        cases = [
            {"id": i, "passed": bool(v), "answer": None if v is None else {"value_correct": v}}
            for i, v in values.items()
        ]
        return SavedRun.model_validate({"config": {}, "cases": cases})

    result = compare(
        run(a=False, b=True, c=True, d=None), run(a=True, b=False, c=True, d=True), "before.json"
    )

    assert (result.value_fixed, result.value_regressed) == (["a"], ["b"])
    lines = comparison_lines(result)
    assert "  value fixed (1): a" in lines and "  value regressed (1): b" in lines
    # a run saved before values were scored still compares
    old = SavedRun.model_validate({"config": {}, "cases": [{"id": "a", "passed": True, "answer": {}}]})
    assert compare(old, old, "old.json").value_fixed == []


def test_a_recorded_answer_carries_its_value(tmp_path: Path, beside: Db) -> None:
    suite = load_suite(write_suite(tmp_path / "values", HANDBOOK_DOCS, HANDBOOK_CATALOG, VALUE_CASES))
    citation = {"source": "handbook.md", "kind": "prose", "paragraph": 2}
    lines = [
        {"id": "loan-length", "quote": LOAN, "citation": citation, "value": {"text": "21 days"}},
        {
            "id": "renewals",
            "quote": RENEWALS,
            "citation": citation | {"paragraph": 3},
            "value": {"text": "2"},
        },
    ]
    answers_file = tmp_path / "answers.jsonl"
    answers_file.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")

    run = run_suite(suite, db=beside, settings=SETTINGS, answers=load_answers(answers_file))

    assert case(run, "loan-length").answer.value_correct is True
    renewals = case(run, "renewals").answer
    assert (renewals.value_correct, renewals.value_blame) == (False, "span")  # "2" holds no number field
    assert case(run, "lost-card").answer.value_blame == "quote"  # no recorded answer


# --- The unchecked-figures gate, and figures cited outside the part's candidates -------------------

CARD = "A lost library card is replaced for 5 dollars."


def handbook_location(paragraph: int) -> Location:
    return _location("handbook.md").model_copy(update={"paragraph": paragraph})


def figure(first_quote: str = CARD, second_quote: str = LOAN, text: str = "26") -> Value:
    """A derived figure over two handbook paragraphs: the card fee (paragraph 4, which the loan
    question does not retrieve) plus the loan days (paragraph 2)."""
    fee = Operand(
        name="fee", value=Value(text="5", number=5), quote=first_quote, citation=handbook_location(4)
    )
    days = Operand(
        name="days", value=Value(text="21", number=21), quote=second_quote, citation=handbook_location(2)
    )
    return Value(text=text, number=float(text), operands=(fee, days), expression="fee + days")


def answering_with(monkeypatch: pytest.MonkeyPatch, value: Value) -> None:
    """Every part that retrieved something answered with `value`, quoted and cited as its first
    operand (a derived figure's answer)."""
    assert value.operands is not None
    first = value.operands[0]

    def derived(self: Library, result: PartResult, model: Any, settings: Any = None, **asked: Any) -> Answer:
        if not result.candidates:
            return Answer.refused("no eligible passage matches this part")
        answer = Answer.verified_quote(first.quote, first.citation)
        return answer.model_copy(update={"value": value})

    monkeypatch.setattr(Library, "answer_part", derived)


def test_a_derived_figure_cited_outside_the_candidates_is_verified_from_the_index(
    handbook_suite: Suite, fake_model: Any, monkeypatch: pytest.MonkeyPatch, beside: Db
) -> None:
    answering_with(monkeypatch, figure())

    run = run_suite(handbook_suite, db=beside, settings=ASKING, model=fake_model)

    loan = case(run, "loan-length")
    assert handbook_location(4) not in {c.location for c in loan.candidates}
    assert (loan.answer.verified, loan.answer.shown_unverified, loan.answer.unchecked_figure) == (
        True,
        False,
        None,
    )
    assert not loan.leaks
    assert (run.totals.unchecked_figures, run.totals.unverified_shown, run.gates_failed) == (0, 0, [])


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (figure(text="27"), "'27': its expression, recomputed from its operands, does not give it"),
        (
            figure(second_quote="lasts 21 days"),  # a span of the passage, not a whole sentence
            "'26': operand days is not quoted from handbook.md prose ¶2",
        ),
        (
            figure(second_quote="A standard book loan lasts 21 days or more."),  # not in the passage
            "'26': operand days is not quoted from handbook.md prose ¶2",
        ),
    ],
    ids=["recomputed", "operand-partial", "operand-absent"],
)
def test_a_figure_that_fails_its_check_is_counted_and_fails_the_gate(
    handbook_suite: Suite,
    fake_model: Any,
    monkeypatch: pytest.MonkeyPatch,
    beside: Db,
    value: Value,
    why: str,
) -> None:
    answering_with(monkeypatch, value)

    run = run_suite(handbook_suite, db=beside, settings=ASKING, model=fake_model)

    assert case(run, "loan-length").answer.unchecked_figure == why
    answered = [c for c in run.cases if c.answer is not None and c.answer.unchecked_figure is not None]
    assert run.totals.unchecked_figures == len(answered) > 0
    assert f"{len(answered)} unchecked figure(s) shown" in run.gates_failed
    summary = terminal_summary(run, None)
    assert f"Unchecked figures shown: {len(answered)} (gate: must be 0)" in summary
    [line] = [s for s in summary if " loan-length " in s]
    assert line.endswith(f"  (unchecked figure {why})")


def test_a_plain_value_that_is_not_a_span_of_its_quote_is_unchecked() -> None:
    text_at = lambda location: LOAN  # noqa: E731
    assert unchecked_figure(Value(text="21 days", number=21), LOAN, text_at) is None
    assert unchecked_figure(None, LOAN, text_at) is None
    assert unchecked_figure(Value(text="22 days", number=22), LOAN, text_at) == (
        "'22 days': its text is not a span of its quote"
    )
    assert unchecked_figure(Value(text="21 days", number=12), LOAN, text_at) == (
        "'21 days': its number is not the number its text states"
    )


def test_a_figure_citing_another_tenants_document_is_a_leak(
    tenant_suite: Suite, fake_model: Any, monkeypatch: pytest.MonkeyPatch, beside: Db
) -> None:
    acme = "Under POL-12, employee hotel stays are reimbursed up to 180 dollars per night."
    globex = "Under POL-12, employee hotel stays are reimbursed up to 240 dollars per night."
    at = _location("acme-travel.md").model_copy(update={"paragraph": 2})
    elsewhere = _location("globex-travel.md").model_copy(update={"paragraph": 2})
    mine = Operand(name="acme", value=Value(text="180", number=180), quote=acme, citation=at)
    theirs = Operand(name="globex", value=Value(text="240", number=240), quote=globex, citation=elsewhere)
    answering_with(
        monkeypatch, Value(text="420", number=420, operands=(mine, theirs), expression="acme + globex")
    )

    run = run_suite(tenant_suite, db=beside, settings=ASKING, model=fake_model)

    acme_case = case(run, "acme-pol12")
    assert [(lk.source, lk.why) for lk in acme_case.leaks] == [
        ("globex-travel.md", "the answer cites it: tenant globex, caller is tenant acme")
    ]
    assert run.totals.leaks >= 1 and run.gates_failed
