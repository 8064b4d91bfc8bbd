"""Who sees what: access is closed-world, tenants are isolated, and the eligibility filter runs
before ranking, so an ineligible passage is never returned and cannot even move a score.

The property tests compare `localqa.retrieval.eligibility.eligible` and full searches over generated
catalogs with an oracle written here from DESIGN.md, independently of the library code."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from backends import BOTH, NewIndex, query
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from localqa.indexing.catalog import visible_labels
from localqa.indexing.index import open_index, refresh_index, write_documents
from localqa.retrieval.eligibility import eligible
from localqa.retrieval.retrieve import search
from localqa.settings import RetrievalSettings
from localqa.store import Db
from localqa.types import Caller, Candidate, Document, Kind, PartResult, Passage, Status
from tests.properties import examples

BACKENDS = BOTH
SAMPLE_PDFS = Path(__file__).resolve().parent.parent / "pdfs"
# Building an index commits once per schema statement: on a RAM disk that costs nothing, on a
# real disk fsync makes it ~0.2 s per index, which adds up over generated examples.
FAST_TMP = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
AS_OF = date(2026, 11, 14)
STAFF_DOC = "staff-procedures.pdf"
STAFF_QUESTIONS = [
    "When is the cash drawer reconciled?",
    "How often is the alarm code changed?",
    "Who signs the daily cash sheet?",
    "The cash drawer is reconciled at 17:30 by two staff members.",
]
# Questions whose public candidates overlap the staff document's vocabulary (staff, book drop,
# study room, desk, 5 dollars), so that its passages would shift the statistics if counted.
SHARED_QUESTIONS = [
    "Is the book drop locked at closing?",
    "Which staff member checks the study rooms?",
    "What is the loan limit for EQ-314?",
    "How many days does a standard book loan last?",
    "When does the library open on Saturdays?",
    "What is charged above 5 dollars?",
    "library staff members desk",
]
GLOBEX_DOC = "globex-equipment-policy-2026-11-10.md"
GLOBEX_TEXT = """# Equipment Loan Policy

This policy sets the loan limit and the deposit for each item that members can borrow from the
media desk.

## Equipment loan limits

Item ID: EQ-314; Item: Portable scanner; Loan limit: 5 minutes; Deposit: 20 dollars

Standard equipment loans last seven calendar days. Staff members check the book drop and the
study rooms. On Saturdays the library opens from 08:00 to 09:00.
"""
GLOBEX_ENTRY: dict[str, Any] = {
    # The same series name and the same file-name scheme as the default tenant's policy, and an
    # effective date between November's and the as-of date: it must still not supersede it.
    "series": "equipment-policy",
    "version": "2026-11-10",
    "effective": date(2026, 11, 10),
    "status": "current",
    "access": "public",
    "tenant": "globex",
    "title": "Equipment Loan Policy",
}


# ---------------------------------------------------------------------------------------------
# Helpers: editable copies of the sample library, indexed


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, date | int | float):
        return value.isoformat() if isinstance(value, date) else str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(value)  # a TOML basic string for the plain text used here


def write_catalog(folder: Path, catalog: dict[str, dict[str, Any]]) -> None:
    lines = []
    for name, entry in catalog.items():
        lines.append(f"[{json.dumps(name)}]")
        lines += [f"{key} = {_toml_value(value)}" for key, value in entry.items()]
        lines.append("")
    (folder / "catalog.toml").write_text("\n".join(lines), encoding="utf-8")


def read_catalog(folder: Path) -> dict[str, dict[str, Any]]:
    return tomllib.loads((folder / "catalog.toml").read_text(encoding="utf-8"))


Edit = Callable[[Path, dict[str, dict[str, Any]]], None]


def build_library(root: Path, db: Db, edit: Edit | None = None) -> tuple[Db, Any]:
    """A copy of the sample library under `root`, edited, then indexed into `db`: (db, report)."""
    folder = root / "pdfs"
    shutil.copytree(SAMPLE_PDFS, folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    if edit is not None:
        catalog = read_catalog(folder)
        edit(folder, catalog)
        write_catalog(folder, catalog)
    return db, refresh_index(folder, db, embed=False)


def without_staff(folder: Path, catalog: dict[str, dict[str, Any]]) -> None:
    (folder / STAFF_DOC).unlink()
    del catalog[STAFF_DOC]


def with_globex(folder: Path, catalog: dict[str, dict[str, Any]]) -> None:
    (folder / GLOBEX_DOC).write_text(GLOBEX_TEXT, encoding="utf-8")
    catalog[GLOBEX_DOC] = dict(GLOBEX_ENTRY)


def run(db: Db, question: str, as_of: date = AS_OF, *, k: int = 100, **caller: str) -> list[PartResult]:
    with open_index(db) as connection:
        return search(
            connection, question, as_of=as_of, caller=Caller(**caller), settings=RetrievalSettings(k=k)
        )


def fingerprint(results: list[PartResult]) -> list[Any]:
    """Everything a caller can observe of a search, except the passage row ids."""
    return [
        (
            r.question,
            r.note,
            len(r.candidates),
            [c.score for c in r.candidates],  # in rank order (ties may swap places)
            sorted(
                ((c.location.model_dump_json(), c.score, c.text) for c in r.candidates),
                key=repr,
            ),
        )
        for r in results
    ]


def sources(results: list[PartResult]) -> set[str]:
    return {c.location.source for r in results for c in r.candidates}


@pytest.fixture
def fast_tmp() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(dir=FAST_TMP) as folder:
        yield Path(folder)


@pytest.fixture(scope="module")
def libraries(backend: str, request: pytest.FixtureRequest) -> Iterator[dict[str, Db]]:
    """The sample library indexed three ways: as is, without the staff document, and with a
    document of another tenant added."""
    with tempfile.TemporaryDirectory(dir=FAST_TMP) as folder:
        built: dict[str, Db] = {}
        for name, edit in (("full", None), ("no-staff", without_staff), ("globex", with_globex)):
            place: Db = Path(folder) / name / "library.sqlite3"
            if backend == "postgresql":
                place = request.getfixturevalue("postgres").create_database()
            db, report = build_library(Path(folder) / name, place, edit)
            assert not report.failed, [str(p) for p in report.problems]
            built[name] = db
        yield built


# ---------------------------------------------------------------------------------------------
# Access: public never sees staff, not even through a number


@pytest.mark.parametrize("question", STAFF_QUESTIONS)
def test_public_caller_never_gets_the_staff_document(library_db: Db, question: str) -> None:
    results = run(library_db, question)
    assert STAFF_DOC not in sources(results)
    assert all(c.tenant == "default" for r in results for c in r.candidates)


@pytest.mark.parametrize("question", STAFF_QUESTIONS[:3])
def test_staff_caller_gets_the_staff_document_first(library_db: Db, question: str) -> None:
    (result,) = run(library_db, question, role="staff")
    assert result.candidates, result.note
    assert result.candidates[0].location.source == STAFF_DOC


def test_staff_also_sees_public_documents(library_db: Db) -> None:
    (result,) = run(library_db, "How many days does a standard book loan last?", role="staff")
    assert result.candidates[0].location.source == "library-handbook.pdf"


@pytest.mark.parametrize("question", SHARED_QUESTIONS + STAFF_QUESTIONS)
def test_public_scores_do_not_depend_on_the_staff_document(libraries: dict[str, Db], question: str) -> None:
    """Same candidates, same scores, same counts and notes, to the last bit, whether or not
    the staff document is in the index: BM25 statistics come from eligible passages only."""
    with_it = run(libraries["full"], question)
    without_it = run(libraries["no-staff"], question)
    assert fingerprint(with_it) == fingerprint(without_it)


@pytest.mark.parametrize("question", SHARED_QUESTIONS + STAFF_QUESTIONS)
def test_default_scores_do_not_depend_on_another_tenants_document(
    libraries: dict[str, Db], question: str
) -> None:
    for role in ("public", "staff"):
        alone = run(libraries["full"], question, role=role)
        beside_globex = run(libraries["globex"], question, role=role)
        assert fingerprint(alone) == fingerprint(beside_globex)


def test_the_staff_document_really_shares_vocabulary_with_public_questions(
    libraries: dict[str, Db],
) -> None:
    """Guard for the two tests above: staff does see a difference, so they are not vacuous."""
    staff_view = [fingerprint(run(libraries["full"], q, role="staff")) for q in SHARED_QUESTIONS]
    public_view = [fingerprint(run(libraries["full"], q)) for q in SHARED_QUESTIONS]
    assert staff_view != public_view
    changed = [q for q, a, b in zip(SHARED_QUESTIONS, staff_view, public_view, strict=True) if a != b]
    assert len(changed) >= 2, changed


BAD_LABELS: list[tuple[str, Any]] = [
    ("missing", None),
    ("empty", ""),
    ("blank", "   "),
    ("unknown", "finance"),
    ("wrong-case", "Public"),
    ("padded", "public "),
    ("list", ["public"]),
    ("number", 1),
]


@pytest.mark.parametrize(("label", "access"), BAD_LABELS, ids=[b[0] for b in BAD_LABELS])
def test_bad_access_label_makes_a_document_visible_to_nobody(
    fast_tmp: Path, new_index: NewIndex, label: str, access: Any
) -> None:
    targets = (STAFF_DOC, "library-handbook.pdf")

    def spoil(_folder: Path, catalog: dict[str, dict[str, Any]]) -> None:
        for name in targets:
            if access is None:
                del catalog[name]["access"]
            else:
                catalog[name]["access"] = access

    db, report = build_library(fast_tmp, new_index(), spoil)
    # Reported by name, as an error, but still indexed (with no access label).
    for name in targets:
        assert any(p.source == name and "visible to nobody" in p.message for p in report.problems), (
            report.problems
        )
    rows = dict(query(db, "SELECT source, access FROM documents"))
    assert set(targets) <= set(rows)
    assert all(rows[name] is None for name in targets)
    assert rows["community-events.pdf"] == "public"

    for role in ("public", "staff"):
        for question in STAFF_QUESTIONS + SHARED_QUESTIONS:
            assert not set(targets) & sources(run(db, question, role=role)), (role, question)
    # The rest of the library is untouched.
    (result,) = run(db, "What is the loan limit for EQ-314?")
    assert result.candidates[0].location.source == "equipment-policy-2026-11-01.pdf"


def test_unknown_roles_see_nothing(library_db: Db) -> None:
    for role in ("admin", "Staff", "", "public "):
        (result,) = run(library_db, "How many days does a standard book loan last?", role=role)
        assert result.candidates == ()


def test_staff_only_newer_version_supersedes_the_public_one_for_staff_only(new_index: NewIndex) -> None:
    """Supersession is decided among the versions the caller may see: a staff-only revision in
    force replaces the public version for staff, while the public caller keeps the public version
    (if it vanished on that date, the public could tell that something hidden replaced it)."""
    old = Document(doc_id="v1", source="v1.md", series="policy", effective=date(2026, 1, 1), access="public")
    new = Document(doc_id="v2", source="v2.md", series="policy", effective=date(2026, 6, 1), access="staff")
    db = new_index()
    write_documents(db, [(d, passages_of(d)) for d in (old, new)])
    question = f"What is the {SHARED_WORDS}?"

    def doc_ids(as_of: date, role: str) -> set[str]:
        return {c.doc_id for r in run(db, question, as_of, role=role) for c in r.candidates}

    assert doc_ids(date(2026, 5, 31), "public") == {"v1"}
    assert doc_ids(date(2026, 6, 1), "public") == {"v1"}
    assert doc_ids(date(2026, 6, 1), "staff") == {"v2"}
    assert doc_ids(date(2026, 5, 31), "staff") == {"v1"}


# ---------------------------------------------------------------------------------------------
# Tenants


GLOBEX_QUESTIONS = [
    "What is the loan limit for EQ-314?",
    "What is the loan limit for the portable scanner?",
    "How long do standard equipment loans last?",
    "When does the library open on Saturdays?",
    "Which staff members check the book drop?",
]


@pytest.mark.parametrize("question", GLOBEX_QUESTIONS)
@pytest.mark.parametrize("role", ["public", "staff"])
def test_another_tenants_document_never_appears_for_the_default_tenant(
    libraries: dict[str, Db], question: str, role: str
) -> None:
    results = run(libraries["globex"], question, role=role)
    assert GLOBEX_DOC not in sources(results)
    assert all(c.tenant == "default" for r in results for c in r.candidates)
    assert all(
        "Loan limit: 5 minutes" not in c.text and "08:00" not in c.text for r in results for c in r.candidates
    )


def test_eq314_is_answered_per_tenant(libraries: dict[str, Db]) -> None:
    (default,) = run(libraries["globex"], "What is the loan limit for EQ-314?")
    assert [c.location.source for c in default.candidates] == ["equipment-policy-2026-11-01.pdf"]
    assert "45 minutes" in default.candidates[0].text

    (globex,) = run(libraries["globex"], "What is the loan limit for EQ-314?", tenant="globex")
    assert globex.candidates
    assert {c.location.source for c in globex.candidates} == {GLOBEX_DOC}
    assert {c.tenant for c in globex.candidates} == {"globex"}
    assert "5 minutes" in globex.candidates[0].text
    assert globex.candidates[0].location.page is None


@pytest.mark.parametrize("question", GLOBEX_QUESTIONS)
def test_globex_sees_only_globex(libraries: dict[str, Db], question: str) -> None:
    for as_of in (date(2026, 7, 15), AS_OF):
        results = run(libraries["globex"], question, as_of, tenant="globex")
        assert sources(results) <= {GLOBEX_DOC}
        assert all(c.tenant == "globex" for r in results for c in r.candidates)


def test_another_tenants_version_is_still_dated(libraries: dict[str, Db]) -> None:
    # Before its effective date the globex policy is invisible, and nothing of default's shows.
    (early,) = run(
        libraries["globex"], "What is the loan limit for EQ-314?", date(2026, 11, 9), tenant="globex"
    )
    assert early.candidates == ()


@pytest.mark.parametrize("tenant", ["Default", "default ", "", "globex", "nobody"])
def test_tenant_must_match_exactly(library_db: Db, tenant: str) -> None:
    (result,) = run(library_db, "How many days does a standard book loan last?", tenant=tenant)
    assert result.candidates == ()


def test_colliding_id_in_another_tenant_does_not_change_the_default_tenants_answers(
    fast_tmp: Path, new_index: NewIndex
) -> None:
    # Another tenant's file claims the default tenant's document id: ids are scoped by tenant, so
    # the two do not collide and neither displaces the other.
    def collide(folder: Path, catalog: dict[str, dict[str, Any]]) -> None:
        with_globex(folder, catalog)
        catalog[GLOBEX_DOC]["id"] = "equipment-policy-2026-11-01"

    db, report = build_library(fast_tmp, new_index(), collide)
    assert report.problems == [] and not report.failed
    ids = {d.source: d.doc_id for d in open_index(db).documents()}
    assert (ids["equipment-policy-2026-11-01.pdf"], ids[GLOBEX_DOC]) == (
        "default/equipment-policy-2026-11-01",
        "globex/equipment-policy-2026-11-01",
    )
    results = run(db, "What is the loan limit for EQ-314?")
    assert GLOBEX_DOC not in sources(results)  # never a leak
    assert [c.location.source for r in results for c in r.candidates] == ["equipment-policy-2026-11-01.pdf"]
    assert [c.doc_id for r in results for c in r.candidates] == ["default/equipment-policy-2026-11-01"]
    globex = run(db, "What is the loan limit for EQ-314?", tenant="globex")
    assert [c.location.source for r in globex for c in r.candidates] == [GLOBEX_DOC]


# ---------------------------------------------------------------------------------------------
# Property tests against an independent oracle


TENANT_POOL = ("default", "globex", "initech")
SERIES = ("alpha", "beta")
START = date(2026, 1, 1)
SHARED_WORDS = "shared loan policy wording"
# Weighted towards what is visible, so that most examples have something eligible to get wrong;
# the invalid labels, statuses, roles and tenants still come up in a good share of them.
dates = st.integers(min_value=0, max_value=8).map(lambda n: START + timedelta(days=30 * n))
statuses = st.sampled_from([Status.CURRENT] * 4 + [Status.RETIRED, Status.DRAFT])
labels = st.sampled_from(["public"] * 3 + ["staff"] * 2 + [None, "", "finance", "Public"])
as_of_dates = (
    st.just(START - timedelta(days=1))
    | dates
    | dates.map(lambda d: d - timedelta(days=1))
    | st.just(date(2027, 6, 1))
)


def oracle(documents: list[Document], as_of: date, role: str, tenant: str) -> set[str]:
    """DESIGN.md, written out: tenant equal; role may see the label (closed world); status
    current; and the document is the latest version in force (effective <= as_of, undated =
    always, losing to any dated one) among the non-draft versions of its tenant's series that the
    caller may see, ties all kept. A retired latest version therefore retires its series."""
    visible = {"public": {"public"}, "staff": {"public", "staff"}}.get(role, set())

    def key(d: Document) -> date:
        return d.effective if d.effective is not None else date.min

    def in_force(d: Document) -> bool:
        return d.status is not Status.DRAFT and (d.effective is None or d.effective <= as_of)

    chosen = set()
    for d in documents:
        if d.tenant != tenant or d.status is not Status.CURRENT or d.access not in visible or not in_force(d):
            continue
        rivals = [
            e
            for e in documents
            if e.tenant == d.tenant and e.series == d.series and e.access in visible and in_force(e)
        ]
        if key(d) == max(key(e) for e in rivals):
            chosen.add(d.doc_id)
    return chosen


@st.composite
def catalogs(draw: st.DrawFn) -> tuple[tuple[str, ...], list[Document]]:
    """2-3 tenants, each with the same series names, each series with 0-4 dated, undated,
    current, retired, draft, visible or invisible versions: collisions on every axis."""
    tenants = draw(st.sampled_from([TENANT_POOL[:2], TENANT_POOL]))
    documents: list[Document] = []
    for tenant in tenants:
        for series in SERIES:
            for _ in range(draw(st.integers(min_value=0, max_value=4))):
                i = len(documents)
                documents.append(
                    Document(
                        doc_id=f"d{i}",
                        source=f"d{i}.md",
                        series=series,
                        version=str(i),
                        effective=draw(st.none() | dates | dates),
                        status=draw(statuses),
                        access=draw(labels),
                        tenant=tenant,
                    )
                )
    return tenants, documents


def passages_of(document: Document) -> list[Passage]:
    own_code = f"EQ-{200 + int(document.doc_id[1:])}"  # d3 carries EQ-203, and only d3
    return [
        Passage(
            kind=Kind.PROSE,
            source=document.source,
            page=None,
            text=f"{SHARED_WORDS} for {document.doc_id}: item EQ-100 of series {document.series}.",
            section="Policy",
            paragraph=1,
        ),
        Passage(
            kind=Kind.TABLE,
            source=document.source,
            page=None,
            text=f"Limits: Item ID: {own_code}; Loan: {SHARED_WORDS} {document.doc_id}",
            section="Policy > Limits",
            table=1,
            row=1,
        ),
    ]


@settings(max_examples=examples(100), deadline=None)
@given(catalog=catalogs(), as_of=as_of_dates)
def test_eligible_matches_the_oracle(catalog: tuple[tuple[str, ...], list[Document]], as_of: date) -> None:
    """Every role of every tenant (and a stranger), on the drawn date and on every version's
    effective date and the day before it."""
    tenants, documents = catalog
    boundaries = {d.effective + timedelta(days=shift) for d in documents if d.effective for shift in (-1, 0)}
    for day in {as_of, *boundaries}:
        for role in ("public", "staff", "guest"):
            for tenant in (*tenants, "nobody"):
                caller = Caller(role=role, tenant=tenant)
                got = {d.doc_id for d in eligible(documents, day, caller)}
                assert got == oracle(documents, day, role, tenant), (day, caller)
                # The order of the catalog never matters.
                assert {d.doc_id for d in eligible(documents[::-1], day, caller)} == got


QUESTIONS = [
    f"What is the {SHARED_WORDS}?",
    "What is the loan limit for EQ-100?",
    f"What is the {SHARED_WORDS}, and what is the loan limit for EQ-100?",
    # These match only some passages: only the no-leak half of the check applies.
    f"{SHARED_WORDS} d0 d1 d2 d3",
    "Loan policy for EQ-203?",
]
COMPLETE = 3  # the first three match every passage of every document


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(catalog=catalogs(), extra_dates=st.lists(as_of_dates, min_size=1, max_size=2), data=st.data())
def test_search_never_returns_an_ineligible_passage(
    new_index: NewIndex,
    catalog: tuple[tuple[str, ...], list[Document]],
    extra_dates: list[date],
    data: st.DataObject,
) -> None:
    """One generated index, searched by every role of every tenant (and a stranger) on a few
    dates, one of them a version's own effective date (the <= boundary)."""
    tenants, documents = catalog
    effective = sorted({d.effective for d in documents if d.effective is not None})
    on_a_boundary = [data.draw(st.sampled_from(effective))] if effective else []
    question_index = data.draw(st.integers(min_value=0, max_value=len(QUESTIONS) - 1))
    question = QUESTIONS[question_index]
    with tempfile.TemporaryDirectory(dir=FAST_TMP) as folder:
        db = new_index()
        if isinstance(db, Path):  # SQLite: on the RAM disk
            db = Path(folder) / "index.sqlite3"
        write_documents(db, [(d, passages_of(d)) for d in documents])
        with open_index(db) as connection:
            for as_of in [*extra_dates, *on_a_boundary]:
                for role in ("public", "staff", "guest"):
                    for tenant in (*tenants, "nobody"):
                        caller = Caller(role=role, tenant=tenant)
                        allowed = oracle(documents, as_of, role, tenant)
                        results = search(
                            connection,
                            question,
                            as_of=as_of,
                            caller=caller,
                            settings=RetrievalSettings(k=100),
                        )
                        returned: list[Candidate] = [c for r in results for c in r.candidates]
                        assert {c.doc_id for c in returned} <= allowed, (as_of, caller)
                        assert all(c.tenant == tenant for c in returned)
                        if question_index < COMPLETE:
                            # Nothing eligible is lost either (k=100 > the passage count).
                            for result in results:
                                assert {c.doc_id for c in result.candidates} == allowed, (
                                    as_of,
                                    caller,
                                    result.note,
                                )


def test_visible_labels_is_closed_world() -> None:
    assert set(visible_labels("public")) == {"public"}
    assert set(visible_labels("staff")) == {"public", "staff"}
    for role in ("", "admin", "Public", "STAFF", "staff "):
        assert visible_labels(role) == ()
