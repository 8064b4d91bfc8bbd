"""The index's SQLite schema, as ordered, named migrations recorded in the `migrations` table."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from localqa.errors import SchemaError
from localqa.store.tokenizer import TOKENIZE

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[tuple[str, Migration]] = []


def migration(function: Migration) -> Migration:
    MIGRATIONS.append((function.__name__, function))
    return function


@migration
def m001_initial(db: sqlite3.Connection) -> None:
    db.executescript(f"""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        -- Every input file (source, sidecar, catalog) with its content hash: the basis of
        -- incremental refresh and of the corpus digest.
        CREATE TABLE files (
            name TEXT PRIMARY KEY,
            sha256 TEXT NOT NULL,
            pages_without_text TEXT NOT NULL DEFAULT ''
        );
        CREATE TABLE documents (
            doc_id TEXT PRIMARY KEY,
            source TEXT NOT NULL UNIQUE,
            series TEXT NOT NULL,
            version TEXT,
            effective TEXT,
            status TEXT NOT NULL,
            access TEXT,            -- NULL: indexed, visible to nobody
            tenant TEXT NOT NULL,
            title TEXT
        );
        CREATE TABLE passages (
            id INTEGER PRIMARY KEY,
            doc_id TEXT NOT NULL REFERENCES documents(doc_id),
            origin TEXT NOT NULL,   -- the file it was extracted from (the PDF or a sidecar)
            kind TEXT NOT NULL,
            source TEXT NOT NULL,
            page INTEGER,
            section TEXT,
            paragraph INTEGER,
            table_no INTEGER,
            row_no INTEGER,
            char_start INTEGER,
            char_end INTEGER,
            text TEXT NOT NULL,
            section_len INTEGER NOT NULL,
            body_len INTEGER NOT NULL
        );
        CREATE INDEX passages_by_doc ON passages(doc_id);
        CREATE INDEX passages_by_origin ON passages(origin);
        -- Code-shaped identifiers (EQ-314) for exact matching; `col` says whether the passage
        -- carries it in its heading path ('section') or its text ('body'), like the FTS columns.
        CREATE TABLE identifiers (
            passage_id INTEGER NOT NULL REFERENCES passages(id) ON DELETE CASCADE,
            identifier TEXT NOT NULL,
            col TEXT NOT NULL,
            PRIMARY KEY (identifier, passage_id, col)
        ) WITHOUT ROWID;
        CREATE VIRTUAL TABLE passages_fts USING fts5(section, body, tokenize='{TOKENIZE}');
        CREATE VIRTUAL TABLE passages_terms USING fts5vocab(passages_fts, 'instance');
    """)


@migration
def m002_embeddings(db: sqlite3.Connection) -> None:
    # One vector per passage and embedding model (float32 bytes, L2-normalised); rows go with
    # their passage, so a changed passage is re-embedded and a removed one leaves nothing behind.
    db.executescript("""
        CREATE TABLE embeddings (
            passage_id INTEGER NOT NULL REFERENCES passages(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (model, passage_id)
        ) WITHOUT ROWID;
    """)


@migration
def m003_passage_boxes(db: sqlite3.Connection) -> None:
    # Where each passage is drawn on its page (JSON list of [x0, y0, x1, y1]), for showing a quote
    # in place. Character spans go: they were never read. Every file is re-extracted on the next
    # `localqa index` (its recorded hash no longer matches), which fills the boxes in.
    db.executescript("""
        ALTER TABLE passages ADD COLUMN boxes TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE passages DROP COLUMN char_start;
        ALTER TABLE passages DROP COLUMN char_end;
        UPDATE files SET sha256 = '' WHERE name != 'catalog.toml';
    """)


@migration
def m004_document_context(db: sqlite3.Connection) -> None:
    # A document's title (from the catalog, else found in the file) and its file name are
    # searchable with each of its passages, like the heading path: real questions name the
    # document ("3M's capital expenditure"). `found_title` is the title extraction found;
    # `context` is the text indexed with every passage, so a catalog edit can tell whether the
    # passages must be re-indexed. Every file is re-extracted on the next `localqa index`.
    db.executescript("""
        ALTER TABLE documents ADD COLUMN found_title TEXT;
        ALTER TABLE documents ADD COLUMN context TEXT NOT NULL DEFAULT '';
        UPDATE files SET sha256 = '' WHERE name != 'catalog.toml';
    """)


@migration
def m005_postings(db: sqlite3.Connection) -> None:
    # Per-term postings for BM25 (localqa/store/postings.py): one row per term with its passages
    # and counts as packed arrays, so a query reads one row per term. Filled as passages are
    # written: every file is re-extracted on the next `localqa index`.
    db.executescript("""
        CREATE TABLE postings (
            term TEXT PRIMARY KEY,
            passages BLOB NOT NULL,  -- int32 passage ids, ascending
            heading BLOB NOT NULL,   -- uint16 count in the heading text (title and heading path)
            body BLOB NOT NULL       -- uint16 count in the passage text
        ) WITHOUT ROWID;
        UPDATE files SET sha256 = '' WHERE name != 'catalog.toml';
    """)


@migration
def m006_document_periods(db: sqlite3.Connection) -> None:
    # What routing matches a question against besides a document's names (localqa/routing.py):
    # the reporting period its catalog entry gives (`period`, a localqa.types.Period as JSON) or
    # its cover states (`found_period`), and the organisation its cover names (`found_name`).
    # Every PDF is re-extracted on the next `localqa index`, which reads its cover.
    db.executescript("""
        ALTER TABLE documents ADD COLUMN period TEXT;
        ALTER TABLE documents ADD COLUMN found_period TEXT;
        ALTER TABLE documents ADD COLUMN found_name TEXT;
        UPDATE files SET sha256 = '' WHERE lower(name) LIKE '%.pdf';
    """)


SCHEMA_VERSION = len(MIGRATIONS)


def migrate(db: sqlite3.Connection) -> None:
    """Apply the migrations this database has not had yet."""
    db.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    applied = {name for (name,) in db.execute("SELECT name FROM migrations")}
    known = {name for name, _ in MIGRATIONS}
    if applied - known:
        raise SchemaError(
            f"the index was written by a newer localqa (migrations {', '.join(sorted(applied - known))}); "
            "upgrade localqa or run 'localqa index --rebuild'"
        )
    for name, function in MIGRATIONS:
        if name not in applied:
            function(db)
            db.execute("INSERT INTO migrations VALUES (?, datetime('now'))", (name,))
