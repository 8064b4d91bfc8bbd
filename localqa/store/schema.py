"""The index's SQLite schema, as ordered, named migrations recorded in the `migrations` table.

Each migration runs in its own transaction with the row that records it, so that an upgrade cut
short (killed, a full disk) leaves the index at the previous migration, never between two: the
index is migrated in place, and readers keep reading it meanwhile.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from itertools import groupby
from pathlib import Path
from typing import Any

from localqa.errors import SchemaError
from localqa.language.tokenizer import TOKENIZE

Migration = Callable[[Any], None]  # given the connection (its `executescript` stays in the transaction)
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
def m006_document_periods(db: Any) -> None:
    # What routing matches a question against besides a document's names (localqa/question/routing.py):
    # the reporting period its catalog entry gives (`period`, a localqa.types.Period as JSON) or
    # its cover states (`found_period`), and the organisation its cover names (`found_name`).
    # Every PDF is re-extracted on the next `localqa index`, which reads its cover.
    db.executescript("""
        ALTER TABLE documents ADD COLUMN period TEXT;
        ALTER TABLE documents ADD COLUMN found_period TEXT;
        ALTER TABLE documents ADD COLUMN found_name TEXT;
        UPDATE files SET sha256 = '' WHERE lower(name) LIKE '%.pdf';
    """)


@migration
def m007_in_place(db: Any) -> None:
    # Refreshing in place (issue 21; localqa/store/sqlite.py, postings.py, vectors.py):
    # - postings in segments: a write adds the postings of what it added, it never rewrites a
    #   common term's whole list; `segments` says which passage ids each segment was written with;
    # - `units`: per input file, its passages' ids and token counts (heading, body) as packed
    #   arrays, so that a reader loads a million passages' lengths from a thousand rows; the
    #   columns on `passages` and FTS5's own copy of the text go (nothing read them but the
    #   writer: terms are counted by FTS5's tokenizer in a scratch table);
    # - vectors in a file beside the index, read memory-mapped (`vector_batches`: which passage
    #   each row of the file belongs to, one row per committed batch); the table's rows move there;
    # - passages found by page (a page image, a citation) without walking a million of them.
    db.executescript("""
        ALTER TABLE postings RENAME TO postings_whole;
        CREATE TABLE postings (
            term TEXT NOT NULL,
            segment INTEGER NOT NULL,
            passages BLOB NOT NULL,  -- int32 passage ids
            heading BLOB NOT NULL,   -- uint16 count in the heading text (title and heading path)
            body BLOB NOT NULL,      -- uint16 count in the passage text
            PRIMARY KEY (term, segment)
        ) WITHOUT ROWID;
        CREATE INDEX postings_by_segment ON postings(segment, term);
        CREATE TABLE segments (
            segment INTEGER PRIMARY KEY,
            first_id INTEGER NOT NULL,  -- written with passage ids first_id..last_id
            last_id INTEGER NOT NULL,
            passages INTEGER NOT NULL,
            dead INTEGER NOT NULL       -- of those, removed since
        );
        INSERT INTO postings SELECT term, 1, passages, heading, body FROM postings_whole;
        DROP TABLE postings_whole;
        INSERT INTO segments SELECT 1, min(id), max(id), count(*), 0 FROM passages HAVING count(*) > 0;
        CREATE TABLE units (
            name TEXT PRIMARY KEY,   -- the input file (a source or a sidecar): passages.origin
            source TEXT NOT NULL,    -- the source file of the document its passages belong to
            ids BLOB NOT NULL,       -- int32 passage ids, in the order extracted
            heading BLOB NOT NULL,   -- int32 token count of each one's heading text
            body BLOB NOT NULL       -- int32 token count of each one's text
        ) WITHOUT ROWID;
        CREATE INDEX passages_by_page ON passages(source, page);
        CREATE TABLE vector_batches (
            model TEXT NOT NULL,
            first_row INTEGER NOT NULL,  -- rows first_row.. of the model's vector file
            ids BLOB NOT NULL,           -- int32 passage id of each row
            PRIMARY KEY (model, first_row)
        ) WITHOUT ROWID;
    """)
    import numpy as np

    rows = db.execute("SELECT origin, source, id, section_len, body_len FROM passages ORDER BY origin, id")
    for origin, group in groupby(rows, key=lambda row: row[0]):
        found = list(group)
        db.execute(
            "INSERT INTO units VALUES (?, ?, ?, ?, ?)",
            (
                origin,
                found[0][1],
                *(np.array([row[i] for row in found], dtype="<i4").tobytes() for i in (2, 3, 4)),
            ),
        )
    next_id = db.execute("SELECT coalesce(max(id), 0) + 1 FROM passages").fetchone()[0]
    db.execute("INSERT OR REPLACE INTO meta VALUES ('next_passage_id', ?)", (str(next_id),))
    from localqa.store import vectors

    path = Path(next(row[2] for row in db.execute("PRAGMA database_list") if row[1] == "main"))
    for (model,) in db.execute("SELECT DISTINCT model FROM embeddings").fetchall():
        found = db.execute(
            "SELECT passage_id, vector FROM embeddings WHERE model = ? ORDER BY passage_id", (model,)
        ).fetchall()
        matrix = np.frombuffer(b"".join(blob for _, blob in found), dtype=np.float32)
        state = vectors.create(path, matrix.size // len(found))
        state = vectors.append(path, state, matrix.reshape(len(found), -1))
        vectors.sync(path, state)
        db.execute(
            "INSERT INTO vector_batches VALUES (?, 0, ?)",
            (model, np.array([pid for pid, _ in found], dtype="<i4").tobytes()),
        )
        db.execute(
            "INSERT INTO meta VALUES (?, ?)", (vectors.META_PREFIX + model, json.dumps(state.record()))
        )
    db.executescript("""
        DROP TABLE embeddings;
        DROP TABLE passages_terms;
        DROP TABLE passages_fts;
        ALTER TABLE passages DROP COLUMN section_len;
        ALTER TABLE passages DROP COLUMN body_len;
    """)


SCHEMA_VERSION = len(MIGRATIONS)


class _InTransaction:
    """A connection whose `executescript` runs inside the transaction already open (sqlite3's own
    commits first), so that a migration and its record commit together."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def execute(self, sql: str, args: Any = ()) -> sqlite3.Cursor:
        return self._db.execute(sql, args)

    def executescript(self, script: str) -> None:
        statement = ""
        for line in script.splitlines(keepends=True):
            statement += line
            if sqlite3.complete_statement(statement):
                self._db.execute(statement)
                statement = ""
        if statement.strip():
            self._db.execute(statement)


def migrate(db: sqlite3.Connection) -> None:
    """Apply the migrations this database has not had yet, each in its own transaction (the
    connection must be in autocommit mode: `isolation_level=None`)."""
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
            db.execute("BEGIN IMMEDIATE")
            try:
                function(_InTransaction(db))
                db.execute("INSERT INTO migrations VALUES (?, datetime('now'))", (name,))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
