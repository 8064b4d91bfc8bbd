"""The index: incremental refresh by content hash, corpus digest, schema, bad input, atomicity.

Real PyMuPDF on real PDFs and real SQLite throughout; the only stand-in is a spy around
`localqa.index.extract_file` that records (and then runs) each extraction.
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
import time
from contextlib import closing
from datetime import date
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from backends import BOTH, NewIndex, execute, query

import localqa.index
from localqa.catalog import Problem
from localqa.errors import IndexMissingError, LocalQAError, SchemaError
from localqa.extract import Extracted
from localqa.index import open_index, refresh_index
from localqa.library import index_status, search_parts
from localqa.store import Db, postgres_url
from localqa.store.postings import unpack
from localqa.store.schema import MIGRATIONS, SCHEMA_VERSION, migrate
from localqa.store.tokenizer import tokenizer
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
SAMPLE_UNITS = 9  # 7 PDFs, 1 Markdown file, 1 sidecar
SAMPLE_PASSAGES = 51
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


def fts(db: Db, word: str) -> set[int]:
    """The passages a word is searchable in: FTS5's own answer in SQLite, the postings (which
    must agree with it) in PostgreSQL, which has no FTS5."""
    if postgres_url(db) is None:
        rows = query(db, "SELECT rowid FROM passages_fts WHERE passages_fts MATCH ?", f'"{word}"')
        return {r[0] for r in rows}
    (term,) = tokenizer().tokens(word)
    rows = query(db, "SELECT passages, heading, body FROM postings WHERE term = ?", term)
    return set(unpack(*map(bytes, rows[0]))[0].tolist()) if rows else set()


def assert_consistent(db: Db) -> None:
    """The side tables agree with `passages`, every passage has its document, the postings
    count exactly each passage's tokens, and the database is happy."""
    ids = {r[0] for r in query(db, "SELECT id FROM passages")}
    if postgres_url(db) is None:
        assert query(db, "PRAGMA integrity_check") == [("ok",)]
        assert {r[0] for r in query(db, "SELECT rowid FROM passages_fts")} == ids
    assert {r[0] for r in query(db, "SELECT passage_id FROM identifiers")} <= ids
    assert {r[0] for r in query(db, "SELECT passage_id FROM embeddings")} <= ids
    orphans = query(db, "SELECT id, origin FROM passages WHERE doc_id NOT IN (SELECT doc_id FROM documents)")
    assert orphans == []
    counted: dict[int, list[int]] = {}
    for blobs in query(db, "SELECT passages, heading, body FROM postings"):
        for pid, heading, body in zip(*(a.tolist() for a in unpack(*map(bytes, blobs))), strict=True):
            counts = counted.setdefault(pid, [0, 0])
            counts[0] += heading
            counts[1] += body
    lengths = {r[0]: [r[1], r[2]] for r in query(db, "SELECT id, section_len, body_len FROM passages")}
    assert counted == {pid: length for pid, length in lengths.items() if length != [0, 0]}


def digest_of(db: Db) -> str:
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
    original = localqa.index.extract_file

    def spy(path: Path, name: str, doc_source: str) -> Extracted:
        calls.append(name)
        return original(path, name, doc_source)

    monkeypatch.setattr(localqa.index, "extract_file", spy)
    # The spy sees calls in this process only: one extraction worker, no pool.
    monkeypatch.setattr(localqa.index, "default_jobs", lambda: 1)
    return calls


# --- the starting point ---------------------------------------------------------------------------


def test_sample_index_is_complete_and_consistent(library_db: Db) -> None:
    assert len(passages(library_db)) == SAMPLE_PASSAGES
    assert len(documents(library_db)) == 8
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
    assert fts(db, "donor") == set()
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
    assert fts(db, "donor") and fts(db, "cartographers") == set()
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
    assert fts(db, "donor") == set()  # the old text is gone
    new = fts(db, "cartographers")
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
    assert report.problems == []
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
    assert report.documents == 9 and report.passages == SAMPLE_PASSAGES + 4
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
            "passages_fts",
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
    assert sorted(p.name for p in db.parent.iterdir()) == [db.name, f"{db.name}.lock"]


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
    by_one = refresh_index(sample_pdfs, one, jobs=1)
    by_two = refresh_index(
        sample_pdfs, two, jobs=2, progress=lambda done, total, _: seen.append((done, total))
    )
    assert by_one.problems == by_two.problems and by_two.failed
    assert (by_one.added, by_one.passages) == (by_two.added, by_two.passages)
    assert passages(one) == passages(two)  # same rows, same ids: results are written in order
    assert digest_of(one) == digest_of(two)
    # Progress is in pages, ending at the whole.
    assert seen[0][0] == 0 and seen[-1][0] == seen[-1][1] >= 48
    assert all(a[0] <= b[0] for a, b in itertools.pairwise(seen))


def _writing(db: Db, pid: int) -> bool:
    """Whether the build in process `pid` is writing: SQLite's copy of the index exists, or the
    PostgreSQL writer's transaction has written (it has a transaction id)."""
    if postgres_url(db) is None:
        return Path(db).with_name(f"{Path(db).name}.tmp-{pid}").exists()
    rows = query(
        db,
        "SELECT 1 FROM pg_stat_activity WHERE application_name = 'localqa index' AND backend_xid IS NOT NULL",
    )
    return bool(rows)


@pytest.mark.parametrize("phase", ["extracting", "writing"])
def test_killed_build_leaves_the_previous_index_intact(indexed: tuple[Path, Db], phase: str) -> None:
    folder, db = indexed
    before, digest = passages(db), digest_of(db)
    _bulk_folder(folder, pdfs=16, markdown=20)
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
        if phase == "writing":
            # Kill the moment the build writes (SQLite: its copy of the index exists).
            while not _writing(db, process.pid) and process.poll() is None:
                if time.monotonic() - started > 60:
                    break
                time.sleep(0.002)
        else:
            # Kill while the 4th of 16 PDFs is being extracted.
            progress = b""
            while b"bulk-03.pdf" not in progress and time.monotonic() - started < 60:
                if select.select([terminal], [], [], 1.0)[0]:
                    try:
                        progress += os.read(terminal, 4096)
                    except OSError:  # the build ended: the assertions below say how
                        break
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
        os.close(terminal)
    assert process.returncode == -signal.SIGKILL, "the build finished before it could be killed"
    temporary = Path(db).with_name(f"{Path(db).name}.tmp-{process.pid}")
    if postgres_url(db) is None:
        # Extracted passages go straight into the copy: in both phases it is there, half-written.
        assert temporary.exists()

    # The live index is the previous one, complete and readable.
    assert passages(db) == before
    assert digest_of(db) == digest
    assert len(passages(db)) == SAMPLE_PASSAGES
    assert sources_found(db, "What is the loan limit for EQ-314?") == {"equipment-policy-2026-11-01.pdf"}
    assert_consistent(db)

    # The killed build's leftovers do not break the next run, which removes them.
    report = refresh_index(folder, db)
    assert not report.failed
    assert len(report.added) == 36 and report.unchanged == SAMPLE_UNITS
    assert report.passages == SAMPLE_PASSAGES + 16 * 24 + 20 * 150
    assert_consistent(db)
    assert not temporary.exists()


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
    assert sorted(p.name for p in db.parent.iterdir()) == [db.name, f"{db.name}.lock"]


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
        assert sorted(p.name for p in Path(db).parent.iterdir()) == [Path(db).name, f"{Path(db).name}.lock"]
