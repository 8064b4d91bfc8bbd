"""The index: incremental refresh by content hash, corpus digest, schema, bad input, atomicity.

Real PyMuPDF on real PDFs and real SQLite throughout; the only stand-in is a spy around
`localqa.extract.extract_file` that records (and then runs) each extraction.
"""

from __future__ import annotations

import itertools
import os
import pty
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from contextlib import closing
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pymupdf
import pytest
from backends import BOTH, NewIndex, execute, query
from click.testing import CliRunner
from index_oracle import assert_consistent, index_files, passages_with

import localqa.extract
import localqa.extract.pool
from localqa.cli import cli
from localqa.errors import IndexMissingError, LocalQAError, SchemaError
from localqa.extract import Extracted
from localqa.indexing.catalog import Problem
from localqa.indexing.index import Quietly, open_index, refresh_index
from localqa.library import index_status, search_parts
from localqa.retrieval.embeddings import MODEL_NAME
from localqa.settings import RetrievalSettings
from localqa.store import Db, describe, postgres_url, writing
from localqa.store.schema import MIGRATIONS, SCHEMA_VERSION, migrate
from localqa.types import Caller

# Every test that reads or writes an index runs on SQLite and on PostgreSQL; the ones about
# SQLite's own file, FTS5 table, lock file and migrations in memory are marked sqlite_only.
BACKENDS = BOTH

REPO = Path(__file__).resolve().parent.parent
HANDBOOK = "library-handbook.pdf"
SIDECAR = "library-handbook.page-4.ocr.txt"
NOTICE = "opening-hours-notice.pdf"
STAFF = "staff-procedures.pdf"
EVENTS = "community-events.pdf"
FINES = "fines-and-fees.md"
SAMPLE_UNITS = 12  # 7 PDFs, 1 Markdown, 1 Word, 1 Excel and 1 CSV file, 1 sidecar
SAMPLE_PASSAGES = 73
DOCUMENT_COLUMNS = "doc_id, source, series, version, effective, status, access, tenant, title"
PASSAGE_COLUMNS = "id, doc_id, origin, kind, source, page, section, paragraph, table_no, row_no, boxes, text"
NOV_14 = date(2026, 11, 14)

Row = tuple[Any, ...]


# --- helpers --------------------------------------------------------------------------------------


def passages(db: Db) -> dict[int, Row]:
    """Every passage by id: (doc_id, origin, kind, source, page, section, ..., text)."""
    return {row[0]: row[1:] for row in query(db, f"SELECT {PASSAGE_COLUMNS} FROM passages")}


def documents(db: Db) -> dict[str, Row]:
    return {row[1]: row for row in query(db, f"SELECT {DOCUMENT_COLUMNS} FROM documents")}


ACCESS = 6  # documents: doc_id, source, series, version, effective, status, access, tenant, title


def without_access(docs: dict[str, Row], *sources: str) -> dict[str, Row]:
    """`docs` with the access of `sources` set to NULL (visible to nobody)."""
    return {
        source: (*row[:ACCESS], None, *row[ACCESS + 1 :]) if source in sources else row
        for source, row in docs.items()
    }


def digest_of(db: Path) -> str:
    return str(index_status(db).corpus_digest)


def make_pdf(path: Path, title: str, paragraphs: list[str], pages: int = 1) -> None:
    """A small text PDF: a bold title line (a heading) and one text box per paragraph."""
    with pymupdf.open() as document:
        for _ in range(pages):
            page = document.new_page()
            page.insert_text((60, 72), title, fontname="hebo", fontsize=16)
            y = 100.0
            for text in paragraphs:
                page.insert_textbox(pymupdf.Rect(60, y, 535, y + 60), text, fontname="helv", fontsize=11)
                y += 70
        document.save(path)


def set_catalog_field(folder: Path, name: str, field: str, value: str) -> None:
    """Set `field = value` (value written as TOML) in the table of `name` in catalog.toml."""
    path = folder / "catalog.toml"
    lines = path.read_text(encoding="utf-8").splitlines()
    start = lines.index(f'["{name}"]')
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("[")), len(lines))
    for i in range(start + 1, end):
        if lines[i].split("=")[0].strip() == field:
            lines[i] = f"{field} = {value}"
            break
    else:
        lines.insert(start + 1, f"{field} = {value}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def add_catalog_entry(folder: Path, name: str, **fields: str) -> None:
    body = "".join(f"{key} = {value}\n" for key, value in fields.items())
    with (folder / "catalog.toml").open("a", encoding="utf-8") as handle:
        handle.write(f'\n["{name}"]\n{body}')


def sources_found(db: Db, question: str, role: str = "public", as_of: date = NOV_14) -> set[str]:
    results = search_parts(question, as_of=as_of, caller=Caller(role=role), db=db)
    return {c.location.source for r in results for c in r.candidates}


@pytest.fixture
def indexed(sample_pdfs: Path, library_copy: Db) -> tuple[Path, Db]:
    """The sample folder and a private copy of its (up-to-date) index."""
    return sample_pdfs, library_copy


@pytest.fixture
def extracted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the units `refresh_index` extracts, in order (the real extraction still runs)."""
    calls: list[str] = []
    original = localqa.extract.extract_file

    def spy(path: Path, name: str, doc_source: str) -> Extracted:
        calls.append(name)
        return original(path, name, doc_source)

    monkeypatch.setattr(localqa.extract, "extract_file", spy)
    # The spy sees calls in this process only: one extraction worker, no pool.
    monkeypatch.setattr(localqa.extract.pool, "default_jobs", lambda: 1)
    return calls


# --- the starting point ---------------------------------------------------------------------------


def test_sample_index_is_complete_and_consistent(library_db: Db) -> None:
    assert len(passages(library_db)) == SAMPLE_PASSAGES
    assert len(documents(library_db)) == 11
    assert_consistent(library_db)
    files = {r[0] for r in query(library_db, "SELECT name FROM files")}
    assert SIDECAR in files and "catalog.toml" in files and "fines-and-fees.md" in files


def test_unchanged_folder_extracts_nothing(indexed: tuple[Path, Db], extracted: list[str]) -> None:
    folder, db = indexed
    before, digest = passages(db), digest_of(db)
    report = refresh_index(folder, db)
    assert (report.added, report.changed, report.removed) == ([], [], [])
    assert report.unchanged == SAMPLE_UNITS
    assert report.problems == []
    assert extracted == []
    assert passages(db) == before
    assert report.digest == digest == digest_of(db)


def test_rebuild_extracts_everything_and_gives_the_same_passages(
    indexed: tuple[Path, Db], extracted: list[str]
) -> None:
    folder, db = indexed
    before = sorted(row[1:] for row in passages(db).values())  # without doc_id: order-free
    report = refresh_index(folder, db, rebuild=True)
    assert len(report.added) == SAMPLE_UNITS and report.changed == [] and report.unchanged == 0
    assert sorted(extracted) == sorted(report.added)
    assert sorted(row[1:] for row in passages(db).values()) == before
    assert_consistent(db)


# --- sidecars -------------------------------------------------------------------------------------


def test_removing_the_sidecar_removes_exactly_page_4_ocr_passages_and_restoring_brings_them_back(
    indexed: tuple[Path, Db], extracted: list[str]
) -> None:
    folder, db = indexed
    before, digest = passages(db), digest_of(db)
    ocr = {i: row for i, row in before.items() if row[1] == SIDECAR}
    assert [(row[2], row[4]) for row in ocr.values()] == [("ocr", 4), ("ocr", 4)]
    others = {i: row for i, row in before.items() if i not in ocr}
    sidecar = folder / SIDECAR
    text = sidecar.read_bytes()

    sidecar.unlink()
    report = refresh_index(folder, db)
    assert (report.added, report.changed, report.removed) == ([], [], [SIDECAR])
    assert report.unchanged == SAMPLE_UNITS - 1
    assert extracted == []
    assert passages(db) == others  # same ids, same text, nothing else touched
    assert passages_with(db, "donor") == set()
    # The PDF is not re-extracted, but the stored record of its text-less pages still warns.
    assert [str(p) for p in report.problems] == [
        "library-handbook.pdf, page 4: no text layer and no OCR sidecar; run 'localqa ocr' to add one"
    ]
    assert digest_of(db) != digest
    assert_consistent(db)

    sidecar.write_bytes(text)
    report = refresh_index(folder, db)
    assert (report.added, report.changed, report.removed) == ([SIDECAR], [], [])
    assert extracted == [SIDECAR]
    after = passages(db)
    assert {i: row for i, row in after.items() if i in others} == others
    assert sorted(row for i, row in after.items() if i not in others) == sorted(ocr.values())
    assert digest_of(db) == digest
    assert_consistent(db)


def test_editing_a_sidecar_replaces_its_text(indexed: tuple[Path, Db], extracted: list[str]) -> None:
    folder, db = indexed
    before = passages(db)
    assert passages_with(db, "donor") and passages_with(db, "cartographers") == set()
    (folder / SIDECAR).write_text(
        "Community Map Exchange\n\nThe desk accepts maps from 12:00 to 15:00 on weekdays.\n\n"
        "Local cartographers check every donated map.\n",
        encoding="utf-8",
    )
    report = refresh_index(folder, db)
    assert (report.added, report.changed, report.removed) == ([], [SIDECAR], [])
    assert extracted == [SIDECAR]
    after = passages(db)
    ocr_texts = [row[-1] for row in after.values() if row[1] == SIDECAR]
    assert ocr_texts == [
        "The desk accepts maps from 12:00 to 15:00 on weekdays.",
        "Local cartographers check every donated map.",
    ]
    assert passages_with(db, "donor") == set()  # the old text is gone
    new = passages_with(db, "cartographers")
    assert len(new) == 1 and after[new.pop()][2:4] == ("ocr", HANDBOOK)
    assert {i: r for i, r in after.items() if r[1] != SIDECAR} == {
        i: r for i, r in before.items() if r[1] != SIDECAR
    }
    assert HANDBOOK in sources_found(db, "Who checks every donated map? cartographers")
    assert_consistent(db)


def test_sidecar_added_for_a_pdf_without_text_on_a_page(
    indexed: tuple[Path, Db], extracted: list[str]
) -> None:
    folder, db = indexed
    (folder / "library-handbook.page-2.ocr.txt").write_text("Extra Notes\n\nThe garden is open in summer.\n")
    report = refresh_index(folder, db)
    assert report.added == ["library-handbook.page-2.ocr.txt"] and extracted == report.added
    rows = [r for r in passages(db).values() if r[1] == "library-handbook.page-2.ocr.txt"]
    assert [(r[2], r[3], r[4], r[5], r[-1]) for r in rows] == [
        ("ocr", HANDBOOK, 2, "Extra Notes", "The garden is open in summer.")
    ]


def test_sidecar_without_its_pdf_is_a_warning_and_not_indexed(indexed: tuple[Path, Db]) -> None:
    folder, db = indexed
    (folder / "ghost.page-1.ocr.txt").write_text("Ghost text.\n", encoding="utf-8")
    report = refresh_index(folder, db)
    assert report.problems == [
        Problem(
            "ghost.page-1.ocr.txt",
            "OCR sidecar without its PDF (ghost.pdf); remove it or restore the PDF",
            warning=True,
        )
    ]
    assert not report.failed
    assert report.added == []
    assert len(passages(db)) == SAMPLE_PASSAGES


def test_sidecar_of_an_upper_case_pdf_is_indexed(tmp_path: Path, new_index: NewIndex) -> None:
    folder = tmp_path / "pdfs"
    folder.mkdir()
    shutil.copy(REPO / "pdfs" / HANDBOOK, folder / "SCAN.PDF")
    shutil.copy(REPO / "pdfs" / SIDECAR, folder / "SCAN.page-4.ocr.txt")
    db = new_index()
    report = refresh_index(folder, db)
    assert report.problems == []
    assert [(r[2], r[3], r[4]) for r in passages(db).values() if r[1] == "SCAN.page-4.ocr.txt"] == [
        ("ocr", "SCAN.PDF", 4)
    ] * 2


# --- sources --------------------------------------------------------------------------------------


def test_adding_one_pdf_extracts_only_that_pdf(indexed: tuple[Path, Db], extracted: list[str]) -> None:
    folder, db = indexed
    before = passages(db)
    name = "room-booking-2026-03-01.pdf"
    make_pdf(
        folder / name,
        "Room Booking",
        ["Meeting rooms seat twelve people and include a projector.", "Bookings are free for members."],
        pages=2,
    )
    report = refresh_index(folder, db)
    assert (report.added, report.changed, report.removed) == ([name], [], [])
    assert report.unchanged == SAMPLE_UNITS
    # The sample library has a catalog: a file it does not label is named as public by default.
    assert [p.message for p in report.problems] == [
        f"1 file has no catalog entry and is public by default: {name}; give each an entry, or set "
        'default_access = "staff" at the top of catalog.toml'
    ]
    assert extracted == [name]
    after = passages(db)
    assert {i: r for i, r in after.items() if i in before} == before
    new = [r for i, r in after.items() if i not in before]
    assert [(r[0], r[2], r[4], r[5], r[6], r[-1]) for r in new] == [
        (
            "default/room-booking-2026-03-01",
            "prose",
            1,
            "Room Booking",
            1,
            "Meeting rooms seat twelve people and include a projector.",
        ),
        ("default/room-booking-2026-03-01", "prose", 1, "Room Booking", 2, "Bookings are free for members."),
        (
            "default/room-booking-2026-03-01",
            "prose",
            2,
            "Room Booking",
            1,
            "Meeting rooms seat twelve people and include a projector.",
        ),
        ("default/room-booking-2026-03-01", "prose", 2, "Room Booking", 2, "Bookings are free for members."),
    ]
    # No catalog entry: series and date from the file name, public, current, default tenant.
    assert documents(db)[name] == (
        "default/room-booking-2026-03-01",
        name,
        "room-booking",
        "2026-03-01",
        "2026-03-01",
        "current",
        "public",
        "default",
        None,
    )
    assert report.documents == 12 and report.passages == SAMPLE_PASSAGES + 4
    assert_consistent(db)


def test_adding_a_markdown_file_extracts_only_it(indexed: tuple[Path, Db], extracted: list[str]) -> None:
    folder, db = indexed
    (folder / "faq.md").write_text("# FAQ\n\n## Parking\n\nParking is free after 18:00.\n", encoding="utf-8")
    report = refresh_index(folder, db)
    assert report.added == ["faq.md"] and extracted == ["faq.md"]
    assert [(*r[5:7], r[-1]) for r in passages(db).values() if r[3] == "faq.md"] == [
        ("FAQ > Parking", 1, "Parking is free after 18:00.")
    ]


def test_changed_pdf_is_re_extracted_alone(indexed: tuple[Path, Db], extracted: list[str]) -> None:
    folder, db = indexed
    before = passages(db)
    make_pdf(folder / NOTICE, "Opening Hours Notice", ["On Saturdays the library opens from 08:00 to 12:00."])
    report = refresh_index(folder, db)
    assert (report.added, report.changed, report.removed) == ([], [NOTICE], [])
    assert extracted == [NOTICE]
    after = passages(db)
    assert [r[-1] for r in after.values() if r[3] == NOTICE] == [
        "On Saturdays the library opens from 08:00 to 12:00."
    ]
    assert {i: r for i, r in after.items() if r[3] != NOTICE} == {
        i: r for i, r in before.items() if r[3] != NOTICE
    }
    assert_consistent(db)


def test_removing_a_pdf_removes_its_document_and_passages(
    indexed: tuple[Path, Db], extracted: list[str]
) -> None:
    folder, db = indexed
    before = passages(db)
    assert sources_found(db, "Saturday opening hours") >= {NOTICE}
    (folder / NOTICE).unlink()
    report = refresh_index(folder, db)
    assert (report.added, report.changed, report.removed) == ([], [], [NOTICE])
    assert extracted == []
    # Its catalog entry is now stale: a warning naming the file, not a failure.
    assert report.problems == [
        Problem(
            NOTICE,
            f"catalog.toml has an entry for a file that is not in {folder}; remove the entry or add the file",
            warning=True,
        )
    ]
    assert not report.failed
    assert NOTICE not in documents(db)
    assert passages(db) == {i: r for i, r in before.items() if r[3] != NOTICE}
    assert NOTICE not in sources_found(db, "Saturday opening hours")
    assert_consistent(db)


def test_removing_a_pdf_also_removes_its_sidecar_passages(indexed: tuple[Path, Db]) -> None:
    folder, db = indexed
    (folder / HANDBOOK).unlink()
    report = refresh_index(folder, db)
    assert report.removed == [SIDECAR, HANDBOOK]
    assert {p.source for p in report.problems} == {HANDBOOK, SIDECAR}
    assert all(p.warning for p in report.problems)
    assert HANDBOOK not in documents(db)
    assert [r for r in passages(db).values() if r[3] == HANDBOOK] == []
    assert_consistent(db)


# --- catalog edits --------------------------------------------------------------------------------


def test_catalog_status_edit_updates_the_document_without_extracting(
    indexed: tuple[Path, Db], extracted: list[str]
) -> None:
    folder, db = indexed
    before, docs, digest = passages(db), documents(db), digest_of(db)
    set_catalog_field(folder, NOTICE, "status", '"retired"')
    report = refresh_index(folder, db)
    assert (report.added, report.changed, report.removed, report.problems) == ([], [], [], [])
    assert report.unchanged == SAMPLE_UNITS
    assert extracted == []
    after = documents(db)
    assert after[NOTICE][5] == "retired"
    assert {k: v for k, v in after.items() if k != NOTICE} == {k: v for k, v in docs.items() if k != NOTICE}
    assert passages(db) == before
    assert digest_of(db) != digest  # catalog.toml is part of the corpus
    assert NOTICE not in sources_found(db, "Saturday opening hours")


def test_catalog_access_edit_changes_who_sees_the_document(
    indexed: tuple[Path, Db], extracted: list[str]
) -> None:
    folder, db = indexed
    set_catalog_field(folder, NOTICE, "access", '"staff"')
    refresh_index(folder, db)
    assert extracted == []
    assert NOTICE not in sources_found(db, "Saturday opening hours", role="public")
    assert NOTICE in sources_found(db, "Saturday opening hours", role="staff")


def test_catalog_id_edit_moves_the_passages_to_the_new_id(
    indexed: tuple[Path, Db], extracted: list[str]
) -> None:
    folder, db = indexed
    set_catalog_field(folder, HANDBOOK, "id", '"handbook-2026"')
    report = refresh_index(folder, db)
    assert not report.failed and extracted == []
    assert documents(db)[HANDBOOK][0] == "default/handbook-2026"  # scoped by the tenant
    handbook = [r for r in passages(db).values() if r[3] == HANDBOOK]
    assert len(handbook) == 15 and {r[0] for r in handbook} == {"default/handbook-2026"}
    assert_consistent(db)
    assert HANDBOOK in sources_found(db, "community map exchange weekdays")


def test_swapping_two_ids_in_one_catalog_edit(indexed: tuple[Path, Db]) -> None:
    """Ids may move between documents in one edit; each file's passages follow its own source."""
    folder, db = indexed
    set_catalog_field(folder, HANDBOOK, "id", '"fines-and-fees"')
    set_catalog_field(folder, "fines-and-fees.md", "id", '"library-handbook"')
    report = refresh_index(folder, db)
    assert not report.failed, report.problems
    assert documents(db)[HANDBOOK][0] == "default/fines-and-fees"
    assert documents(db)["fines-and-fees.md"][0] == "default/library-handbook"
    assert {r[0] for r in passages(db).values() if r[3] == HANDBOOK} == {"default/fines-and-fees"}
    assert_consistent(db)


# --- corpus digest --------------------------------------------------------------------------------


def test_corpus_digest_follows_content_only(indexed: tuple[Path, Db], new_index: NewIndex) -> None:
    folder, db = indexed
    digest = digest_of(db)
    assert len(digest) == 64
    assert refresh_index(folder, db).digest == digest  # nothing changed
    assert refresh_index(folder, db, rebuild=True).digest == digest  # re-extracted, same content
    assert refresh_index(folder, new_index()).digest == digest  # same folder, another index

    sidecar = folder / SIDECAR
    original = sidecar.read_text(encoding="utf-8")
    sidecar.write_text(original.replace("weekdays", "weekends"), encoding="utf-8")
    changed = refresh_index(folder, db).digest
    assert changed != digest
    assert digest_of(db) == changed
    assert refresh_index(folder, db).digest == changed  # stable again
    sidecar.write_text(original, encoding="utf-8")
    assert refresh_index(folder, db).digest == digest  # back to the same content, same digest

    (folder / "extra.md").write_text("# Extra\n\nMore text.\n", encoding="utf-8")
    assert refresh_index(folder, db).digest not in {digest, changed}


def test_touching_a_file_without_changing_it_keeps_the_digest(indexed: tuple[Path, Db]) -> None:
    folder, db = indexed
    digest = digest_of(db)
    handbook = folder / HANDBOOK
    handbook.write_bytes(handbook.read_bytes())  # new mtime, same bytes
    report = refresh_index(folder, db)
    assert report.changed == [] and report.digest == digest


# --- schema ---------------------------------------------------------------------------------------


@pytest.mark.sqlite_only
def test_migrating_an_empty_database_creates_the_tables() -> None:
    with closing(sqlite3.connect(":memory:")) as db:
        migrate(db)
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table')")}
        assert {
            "meta",
            "files",
            "documents",
            "passages",
            "identifiers",
            "postings",
            "segments",
            "units",
            "vector_batches",
            "migrations",
        } <= tables
        applied = [r[0] for r in db.execute("SELECT name FROM migrations ORDER BY rowid")]
        assert applied[0] == "m001_initial"
        assert applied == [name for name, _ in MIGRATIONS]
        assert len(MIGRATIONS) == SCHEMA_VERSION
        assert db.execute("SELECT applied_at FROM migrations").fetchone()[0]


@pytest.mark.sqlite_only
def test_migrating_twice_changes_nothing() -> None:
    with closing(sqlite3.connect(":memory:")) as db:
        migrate(db)
        db.commit()
        migrate(db)
        assert db.execute("SELECT count(*) FROM migrations").fetchone()[0] == len(MIGRATIONS)


def test_index_records_its_migrations_and_schema_version(library_db: Db) -> None:
    assert query(library_db, "SELECT name FROM migrations")[0] == ("m001_initial",)
    assert index_status(library_db).schema_version == SCHEMA_VERSION


@pytest.mark.sqlite_only
def test_database_from_a_newer_localqa_is_refused() -> None:
    with closing(sqlite3.connect(":memory:")) as db:
        migrate(db)
        db.execute("INSERT INTO migrations VALUES ('m999_future', datetime('now'))")
        with pytest.raises(SchemaError) as error:
            migrate(db)
    assert str(error.value) == (
        "the index was written by a newer localqa (migrations m999_future); "
        "upgrade localqa or run 'localqa index --rebuild'"
    )


def test_refreshing_from_a_missing_folder_is_an_error_and_writes_nothing(
    tmp_path: Path, new_index: NewIndex
) -> None:
    db = new_index()
    with pytest.raises(LocalQAError) as error:
        refresh_index(tmp_path / "nowhere", db)
    assert str(error.value) == f"{tmp_path / 'nowhere'}: no such folder; pass --pdfs DIR with your documents"
    if postgres_url(db) is None:
        assert [p.name for p in Path(db).parent.iterdir()] == ["library.sqlite3.lock"]
    else:  # the migrations ran in the transaction that was rolled back
        assert query(db, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'") == []


@pytest.mark.sqlite_only
def test_open_index_errors(tmp_path: Path, indexed: tuple[Path, Db]) -> None:
    with pytest.raises(IndexMissingError) as missing:
        open_index(tmp_path / "none.sqlite3")
    assert str(missing.value) == f"no index at {tmp_path / 'none.sqlite3'}; build it with 'localqa index'"
    garbage = tmp_path / "garbage.sqlite3"
    garbage.write_text("not a database at all, just some text" * 50)
    with pytest.raises(IndexMissingError) as not_index:
        open_index(garbage)
    assert (
        str(not_index.value) == f"{garbage} is not a localqa index; rebuild it with 'localqa index --rebuild'"
    )
    _, db = indexed
    with closing(sqlite3.connect(db)) as connection, connection:
        connection.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(LocalQAError) as version:
        open_index(db)
    assert str(version.value) == (
        f"{db} has schema version 99, this localqa needs {SCHEMA_VERSION}; run 'localqa index' to migrate it"
    )


# --- bad input ------------------------------------------------------------------------------------


def test_indexed_file_that_becomes_corrupt_keeps_its_passages(
    indexed: tuple[Path, Db], extracted: list[str]
) -> None:
    folder, db = indexed
    before, docs, digest = passages(db), documents(db), digest_of(db)
    notice = folder / NOTICE
    good = notice.read_bytes()
    notice.write_bytes(b"%PDF-1.7\n" + b"\x00garbled\xff" * 300)
    report = refresh_index(folder, db)
    assert report.failed
    assert len(report.problems) == 1
    problem = report.problems[0]
    assert problem.source == NOTICE and problem.page is None and not problem.warning
    assert problem.message.startswith("corrupt PDF (")
    assert problem.message.endswith("); re-export or re-download it")
    assert NOTICE not in report.changed + report.added + report.removed
    assert passages(db) == before
    assert documents(db) == docs
    assert digest_of(db) == digest  # the index still holds the old, good version
    assert NOTICE in sources_found(db, "Saturday opening hours")

    # Restoring the good file: nothing to do, it is what the index already holds.
    notice.write_bytes(good)
    extracted.clear()
    report = refresh_index(folder, db)
    assert report.problems == [] and report.unchanged == SAMPLE_UNITS and extracted == []


def test_indexed_file_damaged_beyond_repair_keeps_its_passages(indexed: tuple[Path, Db]) -> None:
    folder, db = indexed
    before = passages(db)
    notice = folder / NOTICE
    notice.write_bytes(notice.read_bytes()[:200] + b"\x00garbled\xff" * 100)
    report = refresh_index(folder, db)
    assert report.failed
    assert [p.source for p in report.problems if not p.warning] == [NOTICE]
    assert passages(db) == before


def test_catalog_entry_made_invalid_keeps_the_passages_visible_to_nobody_until_fixed(
    indexed: tuple[Path, Db], extracted: list[str]
) -> None:
    folder, db = indexed
    before, docs = passages(db), documents(db)
    question = "community map exchange weekdays"
    assert HANDBOOK in sources_found(db, question)  # control
    set_catalog_field(folder, HANDBOOK, "effective", '"2026-13-45"')
    report = refresh_index(folder, db)
    assert report.problems == [
        Problem(HANDBOOK, "catalog.toml: effective = '2026-13-45' is not a date; write it as YYYY-MM-DD")
    ]
    assert report.failed
    assert extracted == []
    assert passages(db) == before  # the handbook and its OCR page are still there
    # ... but visible to nobody: the old entry may grant wider access than the one being written.
    assert documents(db) == without_access(docs, HANDBOOK)
    assert index_status(db).invisible_documents == (HANDBOOK,)
    for role in ("public", "staff"):
        assert HANDBOOK not in sources_found(db, question, role=role)
    assert_consistent(db)

    # Fixing the entry makes it visible again, without extracting anything.
    set_catalog_field(folder, HANDBOOK, "effective", "2026-01-01")
    report = refresh_index(folder, db)
    assert report.problems == [] and not report.failed
    assert extracted == []
    assert (passages(db), documents(db)) == (before, docs)
    assert HANDBOOK in sources_found(db, question)


def test_unknown_access_label_is_indexed_but_visible_to_nobody(indexed: tuple[Path, Db]) -> None:
    folder, db = indexed
    (folder / "budget.md").write_text(
        "# Budget\n\nThe zeppelin budget allocation is 400 dollars.\n", encoding="utf-8"
    )
    question = "What is the zeppelin budget allocation?"
    # Control: with a valid staff label the document is found by staff only.
    add_catalog_entry(folder, "budget.md", access='"staff"')
    assert not refresh_index(folder, db).failed
    assert sources_found(db, question, role="staff") == {"budget.md"}
    assert sources_found(db, question, role="public") == set()

    set_catalog_field(folder, "budget.md", "access", '"finance"')
    report = refresh_index(folder, db)
    assert report.problems == [
        Problem(
            "budget.md",
            "catalog.toml: access 'finance' is not public or staff; "
            "the document is indexed but visible to nobody until it is fixed",
        )
    ]
    assert report.failed
    assert documents(db)["budget.md"][6] is None
    assert [r[-1] for r in passages(db).values() if r[3] == "budget.md"] == [
        "The zeppelin budget allocation is 400 dollars."
    ]
    assert index_status(db).invisible_documents == ("budget.md",)
    for role in ("public", "staff"):
        assert sources_found(db, question, role=role) == set()


def test_two_sources_with_one_id_are_both_reported_and_neither_replaces_the_other(
    indexed: tuple[Path, Db],
) -> None:
    folder, db = indexed
    before, docs = passages(db), documents(db)
    shutil.copy(folder / NOTICE, folder / "fines-and-fees.pdf")  # same stem as fines-and-fees.md
    report = refresh_index(folder, db)
    message = (
        "document id 'default/fines-and-fees' is also claimed by {}; "
        "give each an `id` of its own in catalog.toml"
    )
    assert report.problems == [
        Problem("fines-and-fees.md", message.format("fines-and-fees.pdf")),
        Problem("fines-and-fees.pdf", message.format("fines-and-fees.md")),
    ]
    assert report.failed and report.added == []
    assert passages(db) == before  # the Markdown file keeps its indexed version ...
    assert "fines-and-fees.pdf" not in documents(db)
    assert documents(db) == without_access(docs, FINES)  # ... visible to nobody while contested
    question = "How much is the fine for an overdue book?"
    for role in ("public", "staff"):
        assert FINES not in sources_found(db, question, role=role)

    (folder / "fines-and-fees.pdf").unlink()
    report = refresh_index(folder, db)
    assert report.problems == [] and not report.failed
    assert (passages(db), documents(db)) == (before, docs)
    assert FINES in sources_found(db, question)


CASH_DRAWER = "The cash drawer is reconciled at 17:30 by two staff members."


@pytest.mark.parametrize("together", [True, False], ids=["in-one-edit", "in-two-refreshes"])
def test_staff_passages_cannot_become_public_by_id_theft(
    indexed: tuple[Path, Db], extracted: list[str], together: bool
) -> None:
    """The staff entry breaks (a typo in its status) and a public file claims its id. The staff
    passages stay under their id, visible to nobody, and the claimant is blocked: were it let in,
    the staff passages would move under its public entry."""
    folder, db = indexed
    before, docs = passages(db), documents(db)
    staff_passages = {i: row for i, row in before.items() if row[3] == STAFF}
    assert staff_passages and {row[0] for row in staff_passages.values()} == {"default/staff-procedures"}
    assert STAFF in sources_found(db, CASH_DRAWER, role="staff")  # control
    assert STAFF not in sources_found(db, CASH_DRAWER, role="public")

    set_catalog_field(folder, STAFF, "status", '"curent"')
    if not together:
        report = refresh_index(folder, db)
        assert report.failed
        assert report.problems == [
            Problem(STAFF, "catalog.toml: status = 'curent' is not one of current, retired, draft")
        ]
        assert documents(db) == without_access(docs, STAFF)
    set_catalog_field(folder, EVENTS, "id", '"staff-procedures"')
    report = refresh_index(folder, db)

    assert report.failed
    assert report.problems == [
        Problem(STAFF, "catalog.toml: status = 'curent' is not one of current, retired, draft"),
        Problem(
            EVENTS,
            "document id 'default/staff-procedures' is also claimed by staff-procedures.pdf; "
            "give each an `id` of its own in catalog.toml",
        ),
    ]
    assert extracted == []
    assert passages(db) == before  # nothing moved: the staff passages keep the staff id
    assert documents(db) == without_access(docs, STAFF, EVENTS)
    for role in ("public", "staff"):
        results = search_parts(CASH_DRAWER, as_of=NOV_14, caller=Caller(role=role), db=db)
        candidates = [c for r in results for c in r.candidates]
        assert [c for c in candidates if c.location.source == STAFF or "cash drawer" in c.text] == []
        assert not {STAFF, EVENTS} & sources_found(db, "When does the book club meet?", role=role)
    assert_consistent(db)

    # Fixing both entries restores both documents as they were.
    set_catalog_field(folder, STAFF, "status", '"current"')
    set_catalog_field(folder, EVENTS, "id", '"community-events"')
    report = refresh_index(folder, db)
    assert report.problems == [] and not report.failed
    assert (passages(db), documents(db)) == (before, docs)
    assert STAFF in sources_found(db, CASH_DRAWER, role="staff")
    assert STAFF not in sources_found(db, CASH_DRAWER, role="public")
    assert EVENTS in sources_found(db, "When does the book club meet?")


def test_one_id_in_two_tenants_is_no_collision(indexed: tuple[Path, Db]) -> None:
    folder, db = indexed
    shutil.copy(folder / NOTICE, folder / "fines-and-fees.pdf")  # same stem as fines-and-fees.md
    add_catalog_entry(folder, "fines-and-fees.pdf", access='"public"', tenant='"globex"')
    report = refresh_index(folder, db)
    assert report.problems == []
    assert not report.failed and report.added == ["fines-and-fees.pdf"]
    docs = documents(db)
    assert (docs["fines-and-fees.md"][0], docs["fines-and-fees.pdf"][0]) == (
        "default/fines-and-fees",
        "globex/fines-and-fees",
    )
    assert_consistent(db)


def test_sidecar_of_an_unreadable_new_pdf_is_not_indexed(indexed: tuple[Path, Db]) -> None:
    folder, db = indexed
    (folder / "scan.pdf").write_bytes(b"%PDF-1.7\n" + b"\x00\xff garbage " * 200)
    (folder / "scan.page-1.ocr.txt").write_text("Archive\n\nThe basement archive opens on request.\n")
    report = refresh_index(folder, db)
    assert report.failed
    assert report.added == []
    assert_consistent(db)


# --- atomicity ------------------------------------------------------------------------------------


@pytest.mark.sqlite_only
def test_successful_refresh_leaves_no_temporary_files(indexed: tuple[Path, Db]) -> None:
    folder, db = indexed
    (folder / "faq.md").write_text("# FAQ\n\nParking is free.\n", encoding="utf-8")
    refresh_index(folder, db)
    assert index_files(db.parent) == [db.name, f"{db.name}.lock"]


def _bulk_folder(folder: Path, pdfs: int, markdown: int) -> None:
    """Enough work for a build to take a few seconds: multi-page PDFs, then long Markdown files
    (many passages, so that writing the index copy takes a while too)."""
    first = folder / "bulk-00.pdf"
    with pymupdf.open() as document:
        for number in range(3):
            page = document.new_page()
            page.insert_text((60, 60), f"Bulk page {number + 1}", fontname="hebo", fontsize=14)
            for line in range(8):
                page.insert_textbox(
                    pymupdf.Rect(60, 90 + line * 60, 535, 140 + line * 60),
                    f"Paragraph {line} of page {number + 1} is about bulk topic {line} in some detail.",
                    fontsize=10,
                )
        document.save(first)
    for i in range(1, pdfs):
        shutil.copy(first, folder / f"bulk-{i:02d}.pdf")
    body = "\n\n".join(f"Paragraph {k} discusses subject {k} at some length." for k in range(150))
    for i in range(markdown):
        (folder / f"bulk-notes-{i:02d}.md").write_text(f"# Notes {i}\n\n{body}\n", encoding="utf-8")


def test_extraction_in_worker_processes_builds_the_same_index(sample_pdfs: Path, new_index: NewIndex) -> None:
    _bulk_folder(sample_pdfs, pdfs=16, markdown=2)  # 48 pages of PDFs: enough for the pool
    (sample_pdfs / "bulk-07.pdf").write_bytes(b"%PDF-1.7 broken")  # a failure among them
    one, two = new_index(), new_index()
    seen: list[tuple[int, int]] = []

    class Watching(Quietly):
        def extracting(self, done: int, total: int, item: str) -> None:
            seen.append((done, total))

    by_one = refresh_index(sample_pdfs, one, jobs=1)
    by_two = refresh_index(sample_pdfs, two, jobs=2, events=Watching())
    assert by_one.problems == by_two.problems and by_two.failed
    assert (by_one.added, by_one.passages) == (by_two.added, by_two.passages)
    assert passages(one) == passages(two)  # same rows, same ids: results are written in order
    assert digest_of(one) == digest_of(two)
    # Progress is in pages, ending at the whole.
    assert seen[0][0] == 0 and seen[-1][0] == seen[-1][1] >= 48
    assert all(a[0] <= b[0] for a, b in itertools.pairwise(seen))


def _index_killed_at(folder: Path, db: Db, target: str, after: int, setup: str = "") -> int:
    """Run `localqa index` in a new process that kills itself with SIGKILL (no clean-up of any
    kind) the moment the `after`-th call of `target` ("module:Qualified.name") returns; `setup` is
    Python run first. Returns the exit status."""
    script = textwrap.dedent(
        f"""
        import importlib, os, signal, sys
        module, _, name = {target!r}.partition(":")
        owner = importlib.import_module(module)
        *path, attribute = name.split(".")
        for part in path:
            owner = getattr(owner, part)
        original = getattr(owner, attribute)
        calls = 0
        def killer(*args, **kwargs):
            global calls
            result = original(*args, **kwargs)
            calls += 1
            if calls == {after}:
                os.kill(os.getpid(), signal.SIGKILL)
            return result
        setattr(owner, attribute, killer)
        {setup}
        from localqa.cli import cli
        cli(["index", "--pdfs", sys.argv[1], "--db", sys.argv[2]])
        """
    )
    process = subprocess.run(
        [sys.executable, "-c", script, str(folder), str(db)], cwd=REPO, capture_output=True, check=False
    )
    return process.returncode


def _children(pid: int) -> list[int]:
    """The processes `pid` started that are still its children (Linux's /proc)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        found += [int(child) for child in task.read_text().split()]
    return found


def _running(pid: int) -> bool:
    """Whether process `pid` still runs (an ended one whose parent has not reaped it does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


def _assert_previous_index(db: Db, before: dict[int, Row], digest: str) -> None:
    """The index is the one from before the killed or failed run, complete and readable."""
    assert passages(db) == before
    assert digest_of(db) == digest
    assert len(passages(db)) == SAMPLE_PASSAGES
    assert sources_found(db, "What is the loan limit for EQ-314?") == {"equipment-policy-2026-11-01.pdf"}
    assert_consistent(db)


@pytest.mark.slow
@pytest.mark.parametrize("phase", ["extracting", "writing"])
def test_killed_build_leaves_the_previous_index_intact(indexed: tuple[Path, Db], phase: str) -> None:
    folder, db = indexed
    before, digest = passages(db), digest_of(db)
    _bulk_folder(folder, pdfs=16, markdown=20)
    if phase == "writing":
        # Every passage and posting of the run written in its transaction, not yet committed.
        flush = (
            "localqa.store.segments:SegmentWriter.flush"
            if postgres_url(db) is None
            else "localqa.store.postings:PostingsWriter.flush"
        )
        status = _index_killed_at(folder, db, flush, after=1)
        assert status == -signal.SIGKILL, "the build finished before it could be killed"
    else:
        # stderr on a terminal makes `localqa index` show its progress, naming the file being extracted.
        terminal, stderr = pty.openpty()
        process = subprocess.Popen(
            [sys.executable, "-m", "localqa", "index", "--pdfs", str(folder), "--db", str(db)],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        os.close(stderr)
        started = time.monotonic()
        try:
            # Kill while the 4th of 16 PDFs is being extracted.
            progress = b""
            while b"bulk-03.pdf" not in progress and time.monotonic() - started < 60:
                if select.select([terminal], [], [], 1.0)[0]:
                    try:
                        progress += os.read(terminal, 4096)
                    except OSError:  # the build ended: the assertions below say how
                        break
        finally:
            workers = _children(process.pid)
            process.send_signal(signal.SIGKILL)
            process.wait()
            os.close(terminal)
        assert process.returncode == -signal.SIGKILL, "the build finished before it could be killed"
        # Its extraction workers (and multiprocessing's resource tracker) end with it: nobody is
        # left waiting for work that will never come.
        assert len(workers) >= 2
        deadline = time.monotonic() + 60
        while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in workers if _running(pid)]

    _assert_previous_index(db, before, digest)
    # The next run starts from that index and completes.
    report = refresh_index(folder, db)
    assert not report.failed
    assert len(report.added) == 36 and report.unchanged == SAMPLE_UNITS
    assert report.passages == SAMPLE_PASSAGES + 16 * 24 + 20 * 150
    assert_consistent(db)


def _vectors_by_location(db: Path) -> dict[tuple[Any, ...], bytes]:
    """Every stored vector, by its passage's location (ids differ between indexes)."""
    with open_index(db) as store:
        numbers, matrix = store._vectors(MODEL_NAME)  # type: ignore[attr-defined]
        live = numbers < store._layout.size  # type: ignore[attr-defined]  # rows of removed passages: no
        numbers, matrix = numbers[live], matrix[live]
        found = store.passages(numbers.tolist())
        return {
            (p.source, p.page, p.kind, p.paragraph, p.table, p.row): matrix[i].tobytes()
            for i, p in ((i, found[n]) for i, n in enumerate(numbers.tolist()))
        }


@pytest.mark.semantic
@pytest.mark.parametrize("embed", [True, False], ids=["embedding", "not-embedding"])
def test_an_earlier_encoders_vectors_are_never_searched_and_the_next_refresh_drops_them(
    indexed: tuple[Path, Db], embed: bool
) -> None:
    """An index embedded by an earlier encoder (issue 29: the int8 model, whose vectors depended
    on the processor) is never searched with them: `--retriever hybrid` says why and what to run,
    the default searches lexically, and `status` marks them. The next `localqa index` drops them,
    and embeds every passage again when it embeds."""
    folder, db = indexed
    former = "all-MiniLM-L6-v2-int8"
    with writing(db) as writer:
        ids = [p.id for p in writer.passages_without_vectors(former)]
        unit = np.random.default_rng(29).standard_normal((len(ids), 384)).astype(np.float32)
        writer.expect_vectors(former)
        writer.put_vectors(former, ids, unit / np.linalg.norm(unit, axis=1, keepdims=True))
        writer.finish()
    assert index_status(db).embeddings == {former: SAMPLE_PASSAGES}
    question = "When must I bring back a camera lens?"
    with pytest.raises(LocalQAError) as refused:
        search_parts(question, as_of=NOV_14, db=db, settings=RetrievalSettings(retriever="hybrid"))
    assert str(refused.value) == (
        f"the index's embeddings were computed by an earlier encoder ({former}), and --retriever "
        f"hybrid needs {MODEL_NAME}'s; run 'localqa index' to compute them again"
    )
    assert search_parts(question, as_of=NOV_14, db=db)[0].retriever == "lexical"
    status = CliRunner().invoke(cli, ["status", "--all", "--db", str(db)])
    assert (
        f"Embeddings:     {SAMPLE_PASSAGES} of {SAMPLE_PASSAGES} passages ({former}, an earlier "
        "encoder's: 'localqa index' computes them again)"
    ) in status.stdout

    report = refresh_index(folder, db, embed=embed)
    assert not report.failed and report.embedded == (SAMPLE_PASSAGES if embed else 0)
    assert index_status(db).embeddings == ({MODEL_NAME: SAMPLE_PASSAGES} if embed else {})
    said = (
        f"its embeddings were computed by an earlier encoder ({former}); every passage is embedded "
        f"again with {MODEL_NAME}"
        if embed
        else "embeddings were not computed this time, so the ones it had were removed (semantic and "
        "hybrid retrieval need every passage's); run 'localqa index --embed'"
    )
    assert [str(p) for p in report.problems] == [f"{describe(db)}: {said}"]
    assert search_parts(question, as_of=NOV_14, db=db)[0].retriever == ("hybrid" if embed else "lexical")


@pytest.mark.sqlite_only  # its vector file (PostgreSQL's commits: tests/test_postgres.py)
@pytest.mark.semantic
@pytest.mark.parametrize(
    ("target", "after", "committed"),
    [
        # killed right after the second batch of 16 vectors committed
        ("localqa.store.sqlite:SQLiteWriter.commit", 3, 32),
        # killed after the second batch was written to the vector file and synced, before the
        # transaction counting it committed: the file holds rows the index does not count
        ("localqa.store.vectors:sync", 2, 16),
    ],
    ids=["after-a-commit", "rows-synced-not-committed"],
)
def test_interrupted_embedding_resumes_where_it_stopped(
    indexed: tuple[Path, Path], tmp_path: Path, target: str, after: int, committed: int
) -> None:
    folder, db = indexed
    (folder / "faq.md").write_text("# FAQ\n\nParking is free.\n", encoding="utf-8")
    status = _index_killed_at(
        folder, db, target, after, setup="import localqa.retrieval.embeddings as e; e.COMMIT_EVERY = 16"
    )
    assert status == -signal.SIGKILL
    # The lexical index was committed before embedding began: the new file is searchable, and
    # the vectors committed so far are there (status counts them).
    assert len(passages(db)) == SAMPLE_PASSAGES + 1
    assert index_status(db).embeddings == {MODEL_NAME: committed}
    assert_consistent(db)
    with open_index(db) as store:
        assert store.has_vectors(MODEL_NAME) and not store.changed()
    results = search_parts("Is parking free?", as_of=NOV_14, db=db)
    assert results[0].retriever == "hybrid" and results[0].candidates[0].location.source == "faq.md"

    # The next run embeds only what is missing, and ends where an uninterrupted run ends.
    report = refresh_index(folder, db)
    assert (report.added, report.changed, report.embedded) == ([], [], SAMPLE_PASSAGES + 1 - committed)
    assert index_status(db).embeddings == {MODEL_NAME: SAMPLE_PASSAGES + 1}
    fresh = tmp_path / "fresh.sqlite3"
    refresh_index(folder, fresh)
    assert _vectors_by_location(db) == _vectors_by_location(fresh)
    files = sorted(p.name for p in db.parent.glob(f"{db.name}.vectors-*"))
    assert len(files) == 1  # the file was cut back and reused; nothing else left behind
    assert db.with_name(files[0]).stat().st_size == (SAMPLE_PASSAGES + 1) * 384 * 4


@pytest.mark.semantic
def test_interrupting_the_embedding_keeps_a_searchable_index_and_what_was_embedded(
    indexed: tuple[Path, Path], runner: CliRunner
) -> None:
    folder, db = indexed
    (folder / "faq.md").write_text("# FAQ\n\nParking is free.\n", encoding="utf-8")
    # Batches of 8, each held up a little, so that the interrupt lands between two of them.
    # Python keeps SIGINT ignored when it starts so (a background job of a non-interactive shell,
    # as CI may run the tests): the child takes Ctrl-C as a terminal delivers it.
    setup = (
        "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "import time, localqa.retrieval.embeddings as e; e.COMMIT_EVERY = 8; slow = e.embed; "
        "e.embed = lambda texts, progress=None, **how: (time.sleep(0.5), slow(texts, progress, **how))[1]"
    )
    script = (
        f"{setup}\nimport sys\nfrom localqa.cli import cli\n"
        "cli(['index', '--pdfs', sys.argv[1], '--db', sys.argv[2]])"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script, str(folder), str(db)], cwd=REPO, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    first = process.stderr.readline()
    assert first.startswith("Searchable now: 12 documents, 74 passages; embedding 74 passages"), first
    # Meanwhile the index answers, and counts the vectors as they are committed.
    started = time.monotonic()
    while index_status(db).embeddings.get(MODEL_NAME, 0) < 16 and time.monotonic() - started < 120:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    rest = process.communicate(timeout=120)[1]
    assert process.returncode == 130
    assert rest.strip().splitlines()[-1] == (
        "Interrupted: the index is up to date and searchable; the embeddings computed so far are kept, "
        "run 'localqa index' to compute the rest."
    )
    embedded = index_status(db).embeddings[MODEL_NAME]
    assert 16 <= embedded < 74 and embedded % 8 == 0
    status = runner.invoke(cli, ["status", "--all", "--db", str(db)])
    assert f"Embeddings:     {embedded} of 74 passages ({MODEL_NAME})" in status.stdout
    assert sources_found(db, "Is parking free?") >= {"faq.md"}
    report = refresh_index(folder, db)
    assert report.embedded == 74 - embedded and index_status(db).embeddings == {MODEL_NAME: 74}


def _index_with_file_size_limit(
    folder: Path, db: Path, limit: int, setup: str = ""
) -> subprocess.CompletedProcess[str]:
    """`localqa index` in a process that may not write any file beyond `limit` bytes (RLIMIT_FSIZE):
    a write past it fails (EFBIG) as on a full disk, at whatever point the run reaches it."""
    script = textwrap.dedent(
        f"""
        import resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # fail the write instead of killing the process
        resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
        {setup}
        from localqa.cli import cli
        cli(["index", "--pdfs", sys.argv[1], "--db", sys.argv[2]])
        """
    )
    return subprocess.run(
        [sys.executable, "-c", script, str(folder), str(db)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.sqlite_only  # a size limit on the index's files
def test_disk_full_while_writing_leaves_the_previous_index_intact(indexed: tuple[Path, Path]) -> None:
    folder, db = indexed
    before, digest = passages(db), digest_of(db)
    _bulk_folder(folder, pdfs=2, markdown=3)
    # The index's log cannot grow past 64 kB: the write fails inside its transaction.
    result = _index_with_file_size_limit(folder, db, 64 * 1024)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {db}: ") and "Traceback" not in result.stderr
    assert lines[0].endswith("; the index was left as it was")
    _assert_previous_index(db, before, digest)
    report = refresh_index(folder, db)
    assert not report.failed and len(report.added) == 5
    assert_consistent(db)


@pytest.mark.sqlite_only  # a size limit on the index's files
@pytest.mark.semantic
def test_disk_full_while_embedding_keeps_the_lexical_index_and_the_vectors_committed(
    indexed: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, db = indexed
    # Nothing to extract, 73 passages to embed in batches of 16 (24 kB of vectors each): the
    # lexical commit fits, then a file (the vector file or the index's log) reaches 40 kB.
    result = _index_with_file_size_limit(
        folder, db, 40 * 1024, setup="import localqa.retrieval.embeddings as e; e.COMMIT_EVERY = 16"
    )
    assert result.returncode == 1
    ready, error = result.stderr.strip().splitlines()
    assert ready.startswith("Searchable now: 11 documents, 73 passages; embedding 73 passages")
    assert error.startswith(f"Error: {db}: ") and "Traceback" not in result.stderr
    assert error.endswith("the index keeps what was committed before it; run 'localqa index' again to finish")
    committed = index_status(db).embeddings[MODEL_NAME]
    assert committed % 16 == 0 and committed < SAMPLE_PASSAGES
    assert_consistent(db)
    report = refresh_index(folder, db)
    assert report.embedded == SAMPLE_PASSAGES - committed and not report.failed
    assert index_status(db).embeddings == {MODEL_NAME: SAMPLE_PASSAGES}
    fresh = tmp_path / "fresh.sqlite3"
    refresh_index(folder, fresh)
    assert _vectors_by_location(db) == _vectors_by_location(fresh)


@pytest.mark.sqlite_only
def test_stray_temporary_files_do_not_break_the_next_run(indexed: tuple[Path, Db]) -> None:
    folder, db = indexed
    for name in (f"{db.name}.tmp-1", f"{db.name}.tmp-1-journal", f"{db.name}.tmp-99999"):
        (db.parent / name).write_bytes(b"half-written garbage" * 100)
    (folder / "faq.md").write_text("# FAQ\n\nParking is free.\n", encoding="utf-8")
    report = refresh_index(folder, db)
    assert not report.failed and report.added == ["faq.md"]
    assert len(passages(db)) == SAMPLE_PASSAGES + 1
    assert_consistent(db)
    # Holding the writer lock, the run knew no other writer owned them, and removed them.
    assert index_files(db.parent) == [db.name, f"{db.name}.lock"]


def test_failed_build_removes_its_temporary_copy(indexed: tuple[Path, Db]) -> None:
    folder, db = indexed
    execute(db, "INSERT INTO migrations VALUES ('m999_future', '2030-01-01')")
    before = passages(db)
    live = Path(db).read_bytes() if postgres_url(db) is None else b""
    (folder / "faq.md").write_text("# FAQ\n\nParking is free.\n", encoding="utf-8")
    with pytest.raises(SchemaError):
        refresh_index(folder, db)
    assert passages(db) == before  # the live index is untouched
    if postgres_url(db) is None:
        assert Path(db).read_bytes() == live
        assert index_files(Path(db).parent) == [Path(db).name, f"{Path(db).name}.lock"]
