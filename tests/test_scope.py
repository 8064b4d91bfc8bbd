"""Scope by name (localqa/question/scope.py): `--doc NAME` and the API's `documents` narrow a search to the
eligible documents they name (a file name, a glob or a series), never widen it; a document the
caller may not see answers exactly as a missing one. On both index backends."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from backends import BOTH, SAMPLE_PDFS
from click.testing import CliRunner, Result

from localqa.cli import cli
from localqa.library import Library
from localqa.question.scope import MAX_NAMES, Chosen, UnknownDocumentError, named
from localqa.store import Db
from localqa.types import Caller, Document

BACKENDS = BOTH

NOV = "2026-11-14"
HOURS = "What are the Saturday opening hours?"
NOTICE = "opening-hours-notice.pdf"
EQ314 = "What is the loan limit for EQ-314?"


def search(runner: CliRunner, db: Db, *args: str) -> Result:
    return runner.invoke(cli, ["search", *args, "--db", str(db), "--as-of", NOV])


def sources(runner: CliRunner, db: Db, *args: str) -> set[str]:
    result = search(runner, db, *args, "--json", "-k", "10")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return {c["source"] for part in data["parts"] for c in part["candidates"]}


def test_without_doc_every_eligible_document_is_searched(runner: CliRunner, library_db: Db) -> None:
    assert {"library-handbook.pdf", "opening-hours-notice.pdf"} <= sources(runner, library_db, HOURS)


def test_a_file_name_scopes_the_search_to_that_document(runner: CliRunner, library_db: Db) -> None:
    assert sources(runner, library_db, HOURS, "--doc", NOTICE) == {"opening-hours-notice.pdf"}
    # Without its extension, and in another case, it is the same document.
    assert sources(runner, library_db, HOURS, "--doc", "Opening-Hours-Notice") == {NOTICE}


def test_a_glob_scopes_the_search_to_the_eligible_documents_it_matches(
    runner: CliRunner, library_db: Db
) -> None:
    found = sources(runner, library_db, EQ314, "--doc", "equipment-policy-*.pdf")
    # Both files match; only the version in force on the date is eligible.
    assert found == {"equipment-policy-2026-11-01.pdf"}


def test_a_series_scopes_the_search_to_its_version_in_force(runner: CliRunner, library_db: Db) -> None:
    found = sources(runner, library_db, EQ314, "--doc", "equipment-policy")
    assert found == {"equipment-policy-2026-11-01.pdf"}


def test_several_names_add_up(runner: CliRunner, library_db: Db) -> None:
    found = sources(
        runner, library_db, HOURS, "--doc", "opening-hours-notice.pdf", "--doc", "library-handbook"
    )
    assert found == {"opening-hours-notice.pdf", "library-handbook.pdf"}


def test_the_text_header_says_where_the_search_was_narrowed_to(runner: CliRunner, library_db: Db) -> None:
    result = search(runner, library_db, HOURS, "--doc", NOTICE)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].endswith(" · only in opening-hours-notice.pdf")


def test_a_name_that_matches_nothing_is_an_error_naming_the_fix(runner: CliRunner, library_db: Db) -> None:
    result = search(runner, library_db, HOURS, "--doc", "annual-report.pdf")
    assert result.exit_code == 1
    assert result.output == (
        "Error: no document named 'annual-report.pdf' can be searched by role public, tenant default on "
        "2026-11-14; list the documents with 'localqa status --documents' (or on the library page) and "
        "give a file name, a glob or a series\n"
    )


@pytest.mark.parametrize("hidden", ["staff-procedures.pdf", "staff-*", "staff-procedures"])
def test_a_hidden_document_is_the_same_error_as_a_missing_one(
    runner: CliRunner, library_db: Db, hidden: str
) -> None:
    missing = search(runner, library_db, HOURS, "--doc", "no-such-document.pdf")
    refused = search(runner, library_db, HOURS, "--doc", hidden)
    assert refused.exit_code == missing.exit_code == 1
    assert refused.output.replace(hidden, "NAME") == missing.output.replace("no-such-document.pdf", "NAME")
    # Staff may name it.
    assert sources(
        runner, library_db, "When is the cash drawer reconciled?", "--doc", hidden, "--role", "staff"
    ) == {"staff-procedures.pdf"}


def test_a_document_not_in_force_is_the_same_error_as_a_missing_one(library_db: Db) -> None:
    with Library(library_db) as library:
        with pytest.raises(UnknownDocumentError) as retired:
            library.search(HOURS, as_of=date(2026, 11, 14), documents=["reading-room-rules-2024.pdf"])
        with pytest.raises(UnknownDocumentError) as missing:
            library.search(HOURS, as_of=date(2026, 11, 14), documents=["reading-room-rules-2025.pdf"])
    assert str(retired.value).replace("2024", "2025") == str(missing.value)


def test_naming_documents_never_widens_what_another_tenant_sees(library_db: Db) -> None:
    with Library(library_db) as library, pytest.raises(UnknownDocumentError):
        library.search(HOURS, as_of=date(2026, 11, 14), caller=Caller(tenant="other"), documents=["*"])


def test_status_lists_the_documents_a_caller_may_name(runner: CliRunner, library_db: Db) -> None:
    result = runner.invoke(cli, ["status", "--db", str(library_db), "--documents"])
    assert result.exit_code == 0, result.output
    assert (
        "  opening-hours-notice.pdf · series opening-hours-notice · effective 2026-09-01 · in force"
        in result.output
    )
    assert "staff-procedures.pdf" not in result.output
    data = json.loads(runner.invoke(cli, ["status", "--db", str(library_db), "--documents", "--json"]).stdout)
    assert "opening-hours-notice.pdf" in {row["source"] for row in data["listed"]}
    both = runner.invoke(cli, ["status", "--db", str(library_db), "--documents", "--all"])
    assert both.exit_code == 2 and "--documents lists what one caller may search" in both.output


# --- the web app: the API's documents field and the pages' picker ------------------------------


@pytest.fixture
def client(library_db: Db) -> Any:
    from fastapi.testclient import TestClient

    from localqa.serve.app import ServeConfig, create_app

    with TestClient(create_app(ServeConfig(db=library_db, pdfs=SAMPLE_PDFS, model="extractive"))) as test:
        yield test


def test_the_api_documents_field_scopes_the_search(client: Any, runner: CliRunner, library_db: Db) -> None:
    body = {"question": HOURS, "as_of": NOV, "documents": ["opening-hours-notice.pdf"]}
    response = client.post("/api/search", json=body)
    assert response.status_code == 200
    data = response.json()
    assert data["documents"] == ["opening-hours-notice.pdf"]
    assert {c["source"] for c in data["parts"][0]["candidates"]} == {NOTICE}
    cli = search(runner, library_db, HOURS, "--doc", "opening-hours-notice.pdf", "--json")
    assert data == json.loads(cli.stdout)
    asked = client.post("/api/ask", json={**body, "model": "extractive"}).json()
    assert asked["parts"][0]["answer"]["citation"]["source"] == "opening-hours-notice.pdf"


def test_the_api_answers_a_hidden_document_as_a_missing_one(client: Any) -> None:
    hidden = client.post(
        "/api/search", json={"question": HOURS, "as_of": NOV, "documents": ["staff-procedures.pdf"]}
    )
    missing = client.post(
        "/api/search", json={"question": HOURS, "as_of": NOV, "documents": ["nothing-here.pdf"]}
    )
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json()["error"].replace("staff-procedures.pdf", "X") == missing.json()["error"].replace(
        "nothing-here.pdf", "X"
    )


def test_the_pages_offer_the_documents_in_force_and_search_the_ones_chosen(client: Any) -> None:
    page = client.get("/search", params={"as_of": NOV}).text
    assert '<select name="doc" multiple' in page
    assert '<option value="opening-hours-notice.pdf">' in page
    assert "staff-procedures.pdf" not in page  # not the caller's to see
    assert "equipment-policy-2026-06-01.pdf" not in page  # superseded on that date
    chosen = client.get(
        "/search", params={"question": HOURS, "as_of": NOV, "doc": "opening-hours-notice.pdf"}
    ).text
    assert '<option value="opening-hours-notice.pdf" selected>' in chosen
    assert " · only in opening-hours-notice.pdf</p>" in chosen
    assert "library-handbook.pdf, page" not in chosen
    asked = client.get(
        "/ask", params={"question": HOURS, "as_of": NOV, "doc": "opening-hours-notice.pdf"}
    ).text
    assert " · only in opening-hours-notice.pdf</p>" in asked and "— opening-hours-notice.pdf" in asked
    assert '<select name="doc" multiple' in client.get("/ask").text


# --- a suite case asked within its documents --------------------------------------------------


def test_a_suite_case_is_asked_within_the_documents_it_names(
    runner: CliRunner, library_db: Db, tmp_path: Path
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "cases.toml").write_text(
        f'[[case]]\nid = "notice"\nas_of = {NOV}\nquestion = "{HOURS}"\ndocuments = ["{NOTICE}"]\n'
        f'expect = [{{ source = "{NOTICE}" }}]\n\n'
        f'[[case]]\nid = "everywhere"\nas_of = {NOV}\nquestion = "{HOURS}"\n'
        f'expect = [{{ source = "{NOTICE}" }}, {{ source = "library-handbook.pdf" }}]\n',
        encoding="utf-8",
    )
    run = tmp_path / "run.json"
    result = runner.invoke(cli, ["eval", str(suite), "--db", str(library_db), "--save", str(run), "-k", "10"])
    assert result.exit_code == 0, result.output
    scoped, everywhere = json.loads(run.read_text(encoding="utf-8"))["cases"]
    assert scoped["documents"] == [NOTICE] and everywhere["documents"] == []
    assert {c["source"] for c in scoped["candidates"]} == {NOTICE}
    assert {c["source"] for c in everywhere["candidates"]} > {NOTICE}


@pytest.mark.parametrize(
    ("documents", "complaint"),
    [
        ('["staff-procedures.pdf"]', "documents: no document named 'staff-procedures.pdf' can be searched"),
        ('[" "]', "documents: Value error, a document name is blank; give a file name, a glob or a series"),
    ],
)
def test_a_suite_case_naming_no_document_it_may_search_is_an_error_naming_the_case(
    runner: CliRunner, library_db: Db, tmp_path: Path, documents: str, complaint: str
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "cases.toml").write_text(
        f'[[case]]\nid = "hidden"\nas_of = {NOV}\nquestion = "{HOURS}"\n'
        f"documents = {documents}\nexpect = []\n",
        encoding="utf-8",
    )
    result = runner.invoke(cli, ["eval", str(suite), "--db", str(library_db)])
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {suite / 'cases.toml'}: case hidden: {complaint}")


# --- what the store keeps per scope --------------------------------------------------------------


def test_the_store_keeps_what_it_derives_for_the_most_recently_used_scopes_only(library_db: Db) -> None:
    """Named and routed scopes come and go for the life of a server: each scope's mask and BM25
    statistics are kept for KEPT_SCOPES of them, and a scope asked again is derived again alike."""
    from itertools import combinations

    from localqa.store import open_store
    from localqa.store.base import Scope
    from localqa.store.layout import KEPT_SCOPES, LayoutStore

    store = open_store(library_db)
    try:
        assert isinstance(store, LayoutStore)
        doc_ids = sorted(d.doc_id for d in store.documents())
        scopes = [Scope(doc_ids=frozenset(c)) for n in (1, 2, 3) for c in combinations(doc_ids, n)]
        assert len(scopes) > KEPT_SCOPES
        first = store.lexical_statistics(scopes[0], "heading")
        for scope in scopes:
            store.lexical_statistics(scope, "heading")
            assert len(store._scopes) <= KEPT_SCOPES
        assert scopes[0].doc_ids not in store._scopes  # the least recently used went first
        assert store.lexical_statistics(Scope(doc_ids=scopes[0].doc_ids), "heading") == first
    finally:
        store.close()


# --- how a name is read: as written first, then as a glob ----------------------------------------

ON = date(2026, 11, 14)
REPORT = Document(doc_id="default/report-bracket", source="Annual Report [2019].pdf", series="annual-report")
LOOKALIKE = Document(doc_id="default/report-2", source="Annual Report 2.pdf", series="annual-report")
STAR = Document(doc_id="default/star", source="ADOBE_*.pdf", series="ADOBE_*")
ADOBE = Document(doc_id="default/adobe-2022", source="ADOBE_2022_10K.pdf", series="adobe-10k")
LATER = Document(
    doc_id="default/later", source="Later [v2].pdf", series="later", effective=date(2027, 1, 1), version="2"
)
LATER_LOOKALIKE = Document(doc_id="default/later-lookalike", source="Later v.pdf", series="later-v")
LIBRARY = (REPORT, LOOKALIKE, STAR, ADOBE, LATER_LOOKALIKE)

# (name, the sources it names among LIBRARY, why)
NAME_READINGS = [
    ("Annual Report [2019].pdf", {"Annual Report [2019].pdf"}, "a file name, as written"),
    ("annual report [2019]", {"Annual Report [2019].pdf"}, "without its extension, in another case"),
    ("Annual Report [0-9].pdf", {"Annual Report 2.pdf"}, "no file is named so: a glob"),
    ("annual-report", {"Annual Report [2019].pdf", "Annual Report 2.pdf"}, "a series"),
    ("ADOBE_*.pdf", {"ADOBE_*.pdf"}, "a file named like a glob is that file"),
    ("ADOBE_2*", {"ADOBE_2022_10K.pdf"}, "a glob"),
]


@pytest.mark.parametrize(("name", "sources", "why"), NAME_READINGS, ids=[r[2] for r in NAME_READINGS])
def test_a_name_is_read_as_written_before_as_a_glob(name: str, sources: set[str], why: str) -> None:
    allowed = {d.doc_id: d for d in LIBRARY}
    assert {d.source for d in named([name], allowed, ON, Caller()).values()} == sources, why


def test_the_exact_name_of_a_document_not_in_force_is_that_error_not_a_lookalike() -> None:
    allowed = {d.doc_id: d for d in LIBRARY}
    with pytest.raises(UnknownDocumentError, match=r"in force from 2027-01-01 \(Later \[v2\]\.pdf\)"):
        named(["Later [v2].pdf"], allowed, ON, Caller(), listed=[*LIBRARY, LATER])
    # A document the caller may not see is not listed for them: the name is then a glob, as if it
    # did not exist.
    assert set(named(["Later [v2].pdf"], allowed, ON, Caller(), listed=LIBRARY)) == {LATER_LOOKALIKE.doc_id}


def test_documents_the_program_chose_are_matched_by_source_only_and_never_widen() -> None:
    allowed = {d.doc_id: d for d in (LOOKALIKE, ADOBE)}
    chosen = Chosen.of(["Annual Report [2019].pdf", "ADOBE_2022_10K.pdf", "adobe_2022_10k.pdf"])
    assert set(chosen.within(allowed)) == {ADOBE.doc_id}  # not REPORT's lookalike, not by case
    many = Chosen.of(f"filing-{n}.pdf" for n in range(MAX_NAMES * 4))
    assert many.within(allowed) == {}  # any number: the caller typed none of them
