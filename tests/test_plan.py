"""The refresh plan on its own: no SQLite, no extraction. What the folder holds, what the catalog
says and what the index held go in; metadata, blocked sources and the work to do come out."""

from __future__ import annotations

from pathlib import Path

import pytest

from localqa.errors import CatalogError
from localqa.indexing.catalog import CATALOG_NAME, Catalog
from localqa.indexing.plan import Plan, Scan, Unit, plan_refresh
from localqa.store.base import IndexedFile, IndexedState
from localqa.types import Document, Status

FOLDER = Path("/library")


def unit(name: str, sha256: str = "a", doc_source: str | None = None) -> Unit:
    return Unit(name, FOLDER / name, sha256, doc_source or name)


def scan(*units: Unit, catalog: bool = False) -> Scan:
    return Scan(FOLDER, list(units), [], "c" if catalog else None)


def plan(
    found: Scan, catalog: Catalog | None = None, indexed: IndexedState | None = None, rebuild: bool = False
) -> Plan:
    return plan_refresh(found, catalog or Catalog(), indexed or IndexedState(), rebuild=rebuild)


def staff_handbook() -> Document:
    return Document(doc_id="default/handbook", source="handbook.pdf", series="handbook", access="staff")


def test_a_new_folder_without_a_catalog_is_public_and_extracts_sources_before_sidecars() -> None:
    result = plan(scan(unit("handbook.page-4.ocr.txt", doc_source="handbook.pdf"), unit("handbook.pdf")))
    assert [u.name for u in result.extract] == ["handbook.pdf", "handbook.page-4.ocr.txt"]
    assert result.documents["handbook.pdf"].access == "public"
    assert result.blocked == set() and result.remove == [] and result.problems == []


def test_only_changed_files_are_extracted_and_vanished_ones_removed() -> None:
    indexed = IndexedState(
        files={"same.md": IndexedFile("a"), "edited.md": IndexedFile("a"), "gone.md": IndexedFile("a")}
    )
    result = plan(scan(unit("same.md"), unit("edited.md", sha256="b")), indexed=indexed)
    assert [u.name for u in result.extract] == ["edited.md"]
    assert result.remove == ["gone.md"]
    rebuilt = plan(scan(unit("same.md"), unit("edited.md", sha256="b")), indexed=indexed, rebuild=True)
    assert sorted(u.name for u in rebuilt.extract) == ["edited.md", "same.md"]


def test_a_vanished_entry_keeps_the_narrower_access_it_was_indexed_with() -> None:
    indexed = IndexedState(
        files={"handbook.pdf": IndexedFile("a")}, documents={"handbook.pdf": staff_handbook()}
    )
    for rebuild in (False, True):  # a rebuild re-extracts, but history still counts
        result = plan(scan(unit("handbook.pdf")), Catalog(exists=True), indexed, rebuild=rebuild)
        assert result.documents["handbook.pdf"].access == "staff"
        [problem] = result.problems
        assert problem.warning and "keeps the metadata it was indexed with (access staff" in problem.message


@pytest.mark.parametrize(
    "key", ["Handbook.pdf", "handbok.pdf", "staff-handbook.pdf", "Handbook (2026).pdf", "pdfs/Handbook.pdf"]
)
def test_a_key_that_matches_no_file_while_a_file_has_no_entry_stops_the_refresh(key: str) -> None:
    # Near or far from the file's name: which entry was meant for which file cannot be known.
    catalog = Catalog(entries={key: {"access": "staff"}}, exists=True)
    with pytest.raises(CatalogError) as error:
        plan(scan(unit("handbook.pdf"), unit("rules.pdf"), catalog=True), catalog)
    assert str(error.value) == (
        f"/library/catalog.toml: 2 files have no entry (handbook.pdf, rules.pdf) while 1 entry matches no "
        f"file ({key}); was a file renamed? Name each entry exactly as its file, give every file an "
        "entry, or remove the entries that match no file (the index was not changed)"
    )


def test_a_key_that_matches_no_file_is_only_a_warning_when_every_file_has_an_entry() -> None:
    catalog = Catalog(
        entries={"minutes-1999.pdf": {"access": "staff"}, "handbook.pdf": {"access": "public"}}, exists=True
    )
    result = plan(scan(unit("handbook.pdf"), catalog=True), catalog)
    assert result.blocked == set() and result.documents["handbook.pdf"].access == "public"
    [problem] = result.problems
    assert problem.warning and problem.source == "minutes-1999.pdf"


def test_a_key_with_a_folder_is_an_error_that_blocks_the_file_it_names() -> None:
    catalog = Catalog(entries={"/srv/library/pdfs/handbook.pdf": {"access": "public"}}, exists=True)
    result = plan(scan(unit("handbook.pdf"), catalog=True), catalog)
    assert result.blocked == {"handbook.pdf"} and result.extract == []
    [problem] = result.problems
    assert str(problem) == (
        'handbook.pdf: catalog.toml names this file with a folder ("/srv/library/pdfs/handbook.pdf"); a key '
        'is the file name alone: ["handbook.pdf"] (the file is not indexed until then)'
    )


def test_a_name_written_twice_in_two_unicode_forms_blocks_the_file() -> None:
    nfc, nfd = "caf\u00e9.md", "cafe\u0301.md"
    catalog = Catalog(duplicates={nfc: (nfc, nfd)}, exists=True)
    result = plan(scan(unit(nfc), catalog=True), catalog)
    assert result.blocked == {nfc} and nfc not in result.documents
    [problem] = result.problems
    assert problem.message == (
        "catalog.toml has 2 entries for this name, written in different Unicode forms ('caf\\xe9.md' and "
        "'cafe\\u0301.md'); keep one (the file is not indexed until then)"
    )


def indexed_staff_handbook(sha256: str = "h") -> IndexedState:
    return IndexedState(
        files={"handbook.pdf": IndexedFile(sha256)}, documents={"handbook.pdf": staff_handbook()}
    )


def test_a_renamed_file_keeps_the_access_its_content_had() -> None:
    result = plan(
        scan(unit("keys.pdf", sha256="h"), catalog=True), Catalog(exists=True), indexed_staff_handbook()
    )
    keys = result.documents["keys.pdf"]
    assert (keys.access, keys.status, keys.tenant, keys.doc_id) == (
        "staff",
        Status.CURRENT,
        "default",
        "default/keys",
    )
    [problem] = result.problems
    assert problem.warning and str(problem) == (
        "keys.pdf: has the same content as handbook.pdf, so it is indexed as narrowly (access staff, "
        "status current, tenant default) until catalog.toml has an entry for it"
    )
    # Another content is a new document, public by default; an explicit entry decides.
    other = plan(scan(unit("keys.pdf", sha256="k")), Catalog(), indexed_staff_handbook())
    assert other.documents["keys.pdf"].access == "public"
    named = Catalog(entries={"keys.pdf": {"access": "public"}}, exists=True)
    assert (
        plan(scan(unit("keys.pdf", sha256="h")), named, indexed_staff_handbook()).documents["keys.pdf"].access
        == "public"
    )


def test_a_copy_takes_the_narrowest_of_every_holder_of_its_content() -> None:
    retired = Document(
        doc_id="acme/old", source="old.pdf", series="old", status=Status.RETIRED, tenant="acme"
    )
    indexed = IndexedState(files={"old.pdf": IndexedFile("h")}, documents={"old.pdf": retired})
    catalog = Catalog(entries={"new.pdf": {"access": "staff", "tenant": "acme"}}, exists=True)
    result = plan(scan(unit("new.pdf", sha256="h"), unit("copy.pdf", sha256="h")), catalog, indexed)
    copy = result.documents["copy.pdf"]
    # staff from this run's entry, retired and tenant acme from the index
    assert (copy.access, copy.status, copy.tenant, copy.doc_id) == (
        "staff",
        Status.RETIRED,
        "acme",
        "acme/copy",
    )
    # Held by two tenants: visible to nobody.
    catalog = Catalog(entries={"new.pdf": {"access": "public", "tenant": "globex"}}, exists=True)
    result = plan(scan(unit("new.pdf", sha256="h"), unit("copy.pdf", sha256="h")), catalog, indexed)
    assert result.documents["copy.pdf"].access is None


def test_a_removed_catalog_is_reported() -> None:
    indexed = IndexedState(files={CATALOG_NAME: IndexedFile("c"), "handbook.pdf": IndexedFile("a")})
    result = plan(scan(unit("handbook.pdf")), Catalog(exists=False), indexed)
    assert any(p.source == CATALOG_NAME and "was removed" in p.message for p in result.problems)
    assert CATALOG_NAME not in result.remove
