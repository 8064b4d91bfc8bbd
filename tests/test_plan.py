"""The refresh plan on its own: no SQLite, no extraction. What the folder holds, what the catalog
says and what the index held go in; metadata, blocked sources and the work to do come out."""

from __future__ import annotations

from pathlib import Path

from localqa.catalog import CATALOG_NAME, Catalog
from localqa.plan import Plan, Scan, Unit, plan_refresh
from localqa.store.base import IndexedFile, IndexedState
from localqa.types import Document

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


def test_a_key_that_nearly_names_a_file_blocks_that_file() -> None:
    catalog = Catalog(entries={"Handbook.pdf": {"access": "staff"}}, exists=True)
    result = plan(scan(unit("handbook.pdf"), catalog=True), catalog)
    assert (
        result.blocked == {"handbook.pdf"} and result.extract == [] and "handbook.pdf" not in result.documents
    )
    [problem] = result.problems
    assert not problem.warning and '"Handbook.pdf", which matches no file' in problem.message


def test_an_unrelated_orphan_key_is_only_a_warning() -> None:
    catalog = Catalog(entries={"minutes-1999.pdf": {"access": "staff"}}, exists=True)
    result = plan(scan(unit("handbook.pdf"), catalog=True), catalog)
    assert result.blocked == set() and result.documents["handbook.pdf"].access == "public"
    [problem] = result.problems
    assert problem.warning and problem.source == "minutes-1999.pdf"


def test_a_removed_catalog_is_reported() -> None:
    indexed = IndexedState(files={CATALOG_NAME: IndexedFile("c"), "handbook.pdf": IndexedFile("a")})
    result = plan(scan(unit("handbook.pdf")), Catalog(exists=False), indexed)
    assert any(p.source == CATALOG_NAME and "was removed" in p.message for p in result.problems)
    assert CATALOG_NAME not in result.remove
