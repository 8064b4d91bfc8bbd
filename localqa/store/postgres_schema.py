"""The PostgreSQL index's schema: the same ordered, named migrations as the SQLite index's
(`localqa.store.schema`), each the PostgreSQL form of its namesake, so that both backends have
one schema version. Recorded in the `migrations` table; applied inside the writer's transaction.

Where SQLite kept FTS5 tables (until m007), PostgreSQL keeps nothing: BM25 reads the packed
postings (m005), counted by FTS5's own tokenizer in the writer (`localqa.store.postings`). Vectors
are pgvector `vector`s (m002), with the document id beside them so a scoped search filters on one
table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from localqa.errors import SchemaError

Connection = Any  # a psycopg.Connection (imported only where the PostgreSQL store is used)
Migration = Callable[[Connection], None]
MIGRATIONS: list[tuple[str, Migration]] = []


def migration(function: Migration) -> Migration:
    MIGRATIONS.append((function.__name__, function))
    return function


@migration
def m001_initial(db: Connection) -> None:
    db.execute("""
        CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
        CREATE TABLE files (
            name text PRIMARY KEY,
            sha256 text NOT NULL,
            pages_without_text text NOT NULL DEFAULT ''
        );
        CREATE TABLE documents (
            doc_id text PRIMARY KEY,
            source text NOT NULL UNIQUE,
            series text NOT NULL,
            version text,
            effective text,
            status text NOT NULL,
            access text,
            tenant text NOT NULL,
            title text
        );
        -- Ids are given by the writer as SQLite gives rowids (one more than the largest), so
        -- that both backends number a build alike and break ranking ties alike.
        CREATE TABLE passages (
            id integer PRIMARY KEY,
            doc_id text NOT NULL,
            origin text NOT NULL,
            kind text NOT NULL,
            source text NOT NULL,
            page integer,
            section text,
            paragraph integer,
            table_no integer,
            row_no integer,
            char_start integer,
            char_end integer,
            text text NOT NULL,
            -- What SQLite's FTS5 table holds beside the text: the heading text (title and heading
            -- path) the passage's terms were counted in, so that they can be taken out again.
            heading text NOT NULL,
            section_len integer NOT NULL,
            body_len integer NOT NULL
        );
        CREATE INDEX passages_by_doc ON passages(doc_id);
        CREATE INDEX passages_by_origin ON passages(origin);
        CREATE INDEX passages_by_page ON passages(source, page);
        CREATE TABLE identifiers (
            passage_id integer NOT NULL REFERENCES passages(id) ON DELETE CASCADE,
            identifier text NOT NULL,
            col text NOT NULL,
            PRIMARY KEY (identifier, passage_id, col)
        );
        CREATE INDEX identifiers_by_passage ON identifiers(passage_id);
    """)


@migration
def m002_embeddings(db: Connection) -> None:
    # pgvector's extension needs a superuser (or the database owner where it is trusted): a
    # database prepared once by its administrator already has it, and IF NOT EXISTS asks nothing.
    db.execute("CREATE EXTENSION IF NOT EXISTS vector")
    db.execute("""
        CREATE TABLE embeddings (
            passage_id integer NOT NULL REFERENCES passages(id) ON DELETE CASCADE,
            model text NOT NULL,
            doc_id text NOT NULL,   -- the passage's, so that a scoped search reads one table
            vector vector NOT NULL,
            PRIMARY KEY (model, passage_id)
        );
        CREATE INDEX embeddings_by_passage ON embeddings(passage_id);
    """)


@migration
def m003_passage_boxes(db: Connection) -> None:
    db.execute("""
        ALTER TABLE passages ADD COLUMN boxes text NOT NULL DEFAULT '[]';
        ALTER TABLE passages DROP COLUMN char_start;
        ALTER TABLE passages DROP COLUMN char_end;
        UPDATE files SET sha256 = '' WHERE name != 'catalog.toml';
    """)


@migration
def m004_document_context(db: Connection) -> None:
    db.execute("""
        ALTER TABLE documents ADD COLUMN found_title text;
        ALTER TABLE documents ADD COLUMN context text NOT NULL DEFAULT '';
        UPDATE files SET sha256 = '' WHERE name != 'catalog.toml';
    """)


@migration
def m005_postings(db: Connection) -> None:
    db.execute("""
        CREATE TABLE postings (
            term text PRIMARY KEY,
            passages bytea NOT NULL,  -- int32 passage ids, ascending (little-endian, as SQLite's)
            heading bytea NOT NULL,   -- uint16 counts in the heading text
            body bytea NOT NULL       -- uint16 counts in the passage text
        );
        UPDATE files SET sha256 = '' WHERE name != 'catalog.toml';
    """)


@migration
def m006_document_periods(db: Connection) -> None:
    db.execute("""
        ALTER TABLE documents ADD COLUMN period text;
        ALTER TABLE documents ADD COLUMN found_period text;
        ALTER TABLE documents ADD COLUMN found_name text;
        UPDATE files SET sha256 = '' WHERE lower(name) LIKE '%.pdf';
    """)


@migration
def m007_in_place(db: Connection) -> None:
    # Refreshing in place (issue 21): SQLite's form moves postings into segments and vectors into
    # a file. Here the tables stay as they are (each write rewrites the postings it touches, in
    # its transaction); the index now records which models it is embedded with, so that readers
    # know while vectors are still coming: an index embedded before says so from its vectors.
    db.execute(
        "INSERT INTO meta (key, value) SELECT DISTINCT 'vectors:' || model, '' FROM embeddings "
        "ON CONFLICT (key) DO NOTHING"
    )


def migrate(db: Connection) -> None:
    """Apply the migrations this database has not had yet (inside the caller's transaction)."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL)"
    )
    applied = {name for (name,) in db.execute("SELECT name FROM migrations")}
    known = {name for name, _ in MIGRATIONS}
    if applied - known:
        raise SchemaError(
            f"the index was written by a newer localqa (migrations {', '.join(sorted(applied - known))}); "
            "upgrade localqa"
        )
    for name, function in MIGRATIONS:
        if name not in applied:
            function(db)
            db.execute("INSERT INTO migrations VALUES (%s, now())", (name,))
