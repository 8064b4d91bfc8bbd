"""The PostgreSQL index: one index a team shares, read by any number of `localqa serve` processes
on any number of machines and written by one `localqa index` at a time.

It holds what the SQLite index holds, in the same shape (`localqa.store.postgres_schema`):
documents, passages, identifiers, the packed per-term postings BM25 reads (counted by FTS5's own
tokenizer in the writer, so both backends hold the very same terms), and pgvector vectors. BM25,
scoping and identifier matching are computed by the same code as for SQLite
(`localqa.store.layout`), never by PostgreSQL's `ts_rank`; a semantic search runs in the server,
exact, over the eligible documents' vectors only.

Writing: a writer takes a session advisory lock (one writer per database schema; a second one
waits and is told so) and writes in transactions, as SQLite's does (issue 21): the lexical index
commits as soon as extraction ends, the vectors follow in batches, each its own commit, so
readers see the index as of one commit, never a mix, and a writer that dies leaves it as of its
last commit (an interrupted embedding resumes where it stopped). Every commit stamps a new
`generation`, which readers compare to know the index changed. The index records which models
it is embedded with (`meta` rows `vectors:<model>`), so that a reader knows while vectors are
still coming; a passage without its vector yet is embedded at question time
(`missing_vectors`). Passage ids are reused after a removal (each write rewrites the postings
it touches, inside its transaction); the store hands out canonical numbers
(`localqa.store.layout`).

Reading: a store reads in snapshots (REPEATABLE READ, read-only transactions), so that every
statement of a search sees one version. A command's store keeps one for its life; a long-lived
reader (the `Library` behind `localqa serve`) asks `changed()` before each request, which starts
a new snapshot at the generation it checks, and `release()` after it, which ends it: an idle
server holds no transaction, which would hold back vacuum and any schema change.

The URL is libpq's: the password comes from it, from PGPASSWORD or from ~/.pgpass, and is never
shown: every message names the database by `localqa.store.address.describe`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import secrets
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import date
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.pq import TransactionStatus

from localqa.errors import IndexMissingError, IndexUnavailableError, LocalQAError, SchemaError
from localqa.indexing.catalog import CATALOG_NAME, searchable_heading, searchable_title
from localqa.language.text import identifiers
from localqa.settings import Chunking
from localqa.store.address import describe, redact
from localqa.store.base import (
    IndexedFile,
    IndexedState,
    Scope,
    Unembedded,
    Vectors,
    Writer,
    WriteSummary,
)
from localqa.store.layout import KEPT_SCOPES, Unit
from localqa.store.postgres_schema import migrate
from localqa.store.postings import PackedRow, PostingsWriter, TermCounter, lengths
from localqa.store.reads import IN_VALUES, SqlStore, Values
from localqa.store.rows import (
    DOCUMENT_COLUMNS,
    FOUND_COLUMNS,
    document_of,
    document_values,
    found_of,
    found_values,
)
from localqa.store.schema import SCHEMA_VERSION
from localqa.types import Document, Found, Passage

Connection = psycopg.Connection[tuple[Any, ...]]

# The first key of the writer's advisory lock (the second is the schema's): "lqa" in ASCII.
_LOCK_CLASS = 0x6C7161
# The meta row saying the index is embedded with a model (+ its name), as SQLite's.
_VECTORS = "vectors:"
# New passages are counted and copied into the server together, like SQLite's counting batches.
_WRITE_BATCH = 1000
_CONNECT_HINT = (
    "check the URL and that the server is running (the password comes from the URL, PGPASSWORD or ~/.pgpass)"
)


# --- connecting ----------------------------------------------------------------------------------


def _connect(url: str, application: str) -> Connection:
    try:
        given = conninfo_to_dict(url)
    except psycopg.Error as error:
        raise _failure(url, error, "see libpq's connection URI format") from None
    extra = {
        key: value
        for key, value in (("application_name", application), ("connect_timeout", "10"))
        if key not in given
    }
    try:
        return psycopg.connect(make_conninfo(url, **extra))
    except psycopg.Error as error:
        raise _failure(url, error, _CONNECT_HINT) from None


def _failure(
    url: str, error: psycopg.Error, hint: str, kind: type[LocalQAError] = LocalQAError
) -> LocalQAError:
    """A one-line error naming the database (without its password) and the fix. libpq's message
    may quote the URL or a piece of it (a malformed one), and a server's may quote a password:
    both are redacted."""
    detail = " ".join(line.strip() for line in str(error).splitlines() if line.strip())
    return kind(f"{describe(url)}: {redact(detail, url)}; {hint}")


def _generation(db: Connection) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    return None if row is None else str(row[0])


@contextmanager
def temporary_schema(url: str) -> Iterator[str]:
    """A new schema in the database at `url`, dropped afterwards; the URL that works in it."""
    name = f"localqa_tmp_{os.getpid()}_{secrets.token_hex(4)}"
    with _connect(url, "localqa") as db:
        db.autocommit = True
        try:
            db.execute(f'CREATE SCHEMA "{name}"')
        except psycopg.Error as error:
            raise _failure(url, error, "a temporary index needs the right to create a schema there") from None
    try:
        yield in_schema(url, name)
    finally:
        with _connect(url, "localqa") as db:
            db.autocommit = True
            try:
                db.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
            except psycopg.Error as error:
                raise _failure(url, error, f"drop the schema {name} by hand") from None


def in_schema(url: str, schema: str) -> str:
    """`url` working in `schema`: its search path starts with it (every table localqa creates
    goes there), then has what the database's had (where pgvector's type is)."""
    with _connect(url, "localqa") as db:
        (path,) = db.execute("SELECT current_schemas(false)").fetchone() or ([],)
    return _with_options(url, f"-csearch_path={','.join([schema, *path])}")


def _with_options(url: str, option: str) -> str:
    """`url` with one more backend option (libpq's `options` parameter)."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    given = " ".join(value for key, value in query if key == "options")
    query = [(key, value) for key, value in query if key != "options"]
    query.append(("options", f"{given} {option}".strip()))
    return urlunsplit(parts._replace(query=urlencode(query)))


# --- reading -------------------------------------------------------------------------------------


def open_store(url: str) -> PostgresStore:
    """Open the index in the database at `url` for reading (read-only transactions)."""
    db = _connect(url, "localqa")
    db.read_only = True
    db.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    try:
        version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        generation = _generation(db)
    except psycopg.errors.UndefinedTable:
        db.close()
        raise IndexMissingError(
            f"no index in {describe(url)}; build it with 'localqa index --db {describe(url)}'"
        ) from None
    except psycopg.Error as error:
        db.close()
        raise _failure(url, error, _CONNECT_HINT) from None
    if version is None or int(version[0]) != SCHEMA_VERSION:
        db.close()
        raise SchemaError(
            f"{describe(url)} has schema version {version[0] if version else '?'}, this "
            f"localqa needs {SCHEMA_VERSION}; run 'localqa index' to migrate it"
        )
    return PostgresStore(url, db, generation)


class PostgresStore(SqlStore):
    def __init__(self, url: str, db: Connection, generation: str | None) -> None:
        super().__init__()
        self.path = describe(url)
        self._url = url
        self._db = db
        self._generation = generation
        self._filters: dict[frozenset[str], tuple[bool, list[str]]] = {}

    def close(self) -> None:
        self._db.close()

    def changed(self) -> bool:
        try:
            self._db.rollback()
            # A new snapshot starts here: the reads that follow see the version checked.
            generation = _generation(self._db)
        except psycopg.Error:  # the connection is gone (a restarted server): reopen
            return True
        if generation == self._generation:
            return False
        self._forget()  # read on or reopen: either way nothing derived from the old version stays
        self._generation = generation
        return True

    def release(self) -> None:
        with suppress(psycopg.Error):
            self._db.rollback()

    def _forget(self) -> None:
        super()._forget()
        self._filters = {}

    def _query(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        """As `SqlStore._query`: the statement translated to PostgreSQL's dialect (`_dialect`)."""
        given = [list(arg.items) if isinstance(arg, Values) else arg for arg in args]
        try:
            if self._db.info.transaction_status == TransactionStatus.IDLE:
                # A read after release() without changed(): a new snapshot, checked all the same.
                generation = _generation(self._db)
                if generation != self._generation:
                    self._forget()
                    self._generation = generation
            return self._db.execute(_dialect(sql), given).fetchall()
        except psycopg.Error as error:
            raise _failure(
                self._url,
                error,
                "check the server, or rebuild with 'localqa index --rebuild'",
                IndexUnavailableError,
            ) from None

    def _embedded_counts(self, doc_ids: frozenset[str] | None) -> dict[str, int]:
        where, args = "", []
        if doc_ids is not None:
            where, args = f" WHERE p.doc_id {IN_VALUES}", [Values(sorted(doc_ids))]
        rows = self._query(
            f"SELECT e.model, count(*) FROM embeddings e JOIN passages p ON p.id = e.passage_id{where} "
            "GROUP BY e.model",
            *args,
        )
        return dict(rows)

    # --- retrieval ------------------------------------------------------------------------

    def _layout_units(self) -> list[Unit]:
        rows = self._query(
            "SELECT origin, source, array_agg(id ORDER BY id), array_agg(section_len ORDER BY id), "
            "array_agg(body_len ORDER BY id), min(doc_id) FROM passages GROUP BY origin, source"
        )
        return [
            (origin, source, *(np.array(column, dtype="<i4").tobytes() for column in arrays), doc_id)
            for origin, source, *arrays, doc_id in rows
        ]

    def _postings_rows(self, terms: Sequence[str]) -> dict[str, tuple[bytes, bytes, bytes]]:
        rows = self._query(
            f"SELECT term, passages, heading, body FROM postings WHERE term {IN_VALUES}", Values(terms)
        )
        return {term: (bytes(ids), bytes(heading), bytes(body)) for term, ids, heading, body in rows}

    def _carrier_rows(self, codes: Sequence[str], chunking: Chunking) -> list[tuple[int, str]]:
        return self._query(
            "SELECT passage_id, identifier FROM identifiers "
            f"WHERE identifier {IN_VALUES} AND (col = 'body' OR ?)",
            Values(codes),
            chunking == "heading",
        )

    def has_vectors(self, model: str) -> bool:
        return bool(self._query("SELECT 1 FROM meta WHERE key = ?", _VECTORS + model))

    def _filter(self, scope: Scope) -> tuple[bool, list[str]]:
        """The scope as a filter on document ids the server can apply: (True, the ids in it) or
        (False, the ids outside it), whichever list is shorter (a tenant's few documents, or
        all but a few superseded ones)."""
        found = self._filters.get(scope.doc_ids)
        if found is None:
            indexed = self._layout.names
            inside = sorted(d for d in scope.doc_ids if d in indexed)
            outside = sorted(d for d in indexed if d not in scope.doc_ids)
            found = (True, inside) if len(inside) <= len(outside) else (False, outside)
            if len(self._filters) >= KEPT_SCOPES:  # named and routed scopes come and go
                del self._filters[next(iter(self._filters))]
            self._filters[scope.doc_ids] = found
        return found

    def similarities(
        self, scope: Scope, model: str, vector: Vectors, limit: int | None = None
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        # Exact: every eligible vector is compared (`<#>` is the negative inner product); ties
        # go to the lower id, as in the ranking that reads them.
        inside, ids = self._filter(scope)
        rows = self._query(
            "SELECT passage_id, -(vector <#> ?::vector) AS similarity FROM embeddings "
            f"WHERE model = ? AND doc_id {'' if inside else 'NOT '}{IN_VALUES} "
            f"ORDER BY similarity DESC, passage_id{' LIMIT ?' if limit is not None else ''}",
            _vector_text(vector),
            model,
            Values(ids),
            *([limit] if limit is not None else []),
        )
        return (
            self._numbers([pid for pid, _ in rows]),
            np.fromiter((similarity for _, similarity in rows), dtype=np.float32, count=len(rows)),
        )

    def missing_vectors(self, model: str, ids: Iterable[int]) -> list[Unembedded]:
        stored = self._stored(np.fromiter(ids, dtype=np.int64))
        rows = self._query(
            "SELECT p.id, d.context, p.section, p.text FROM passages p "
            f"JOIN documents d ON d.doc_id = p.doc_id WHERE p.id {IN_VALUES} AND NOT EXISTS "
            "(SELECT 1 FROM embeddings e WHERE e.model = ? AND e.passage_id = p.id)",
            Values(stored),
            model,
        )
        numbers = self._numbers([row[0] for row in rows]).tolist()
        found = [Unembedded(number, *row[1:]) for number, row in zip(numbers, rows, strict=True)]
        return sorted(found, key=lambda u: u.id)


@functools.cache
def _dialect(sql: str) -> str:
    """A statement of the shared dialect (`localqa.store.reads`) as PostgreSQL reads it."""
    sql = sql.replace("%", "%%")
    sql = sql.replace(f"NOT {IN_VALUES}", "<> ALL(?)").replace(IN_VALUES, "= ANY(?)")
    sql = sql.replace("instr(", "strpos(")  # the same arguments: the text, then what it holds
    return re.sub(r"\bIS \?", "IS NOT DISTINCT FROM ?", sql).replace("?", "%s")


def _vector_text(vector: Vectors) -> str:
    # A float32's shortest repr reads back as the same float32 in pgvector.
    return "[" + ",".join(map(repr, vector.astype(np.float32).tolist())) + "]"


# --- writing -------------------------------------------------------------------------------------


@contextmanager
def writing(
    url: str, *, rebuild: bool = False, wait: Callable[[str], None] | None = None
) -> Iterator[PostgresWriter]:
    """A writer on the index in the database at `url` (created on first use), holding the
    writer lock: what the block writes becomes visible at each `commit()` and when the block
    completes; on any failure what was not committed is rolled back.

    `indexed()` always describes the index as it was, also for a rebuild (which empties the
    tables inside the first transaction): what it held decides what may change."""
    db = _connect(url, "localqa index")
    db.autocommit = True  # the lock is the session's; the writer opens and commits transactions
    writer: PostgresWriter | None = None
    try:
        with _writer_lock(db, url, wait):
            db.execute("BEGIN")
            try:
                _refuse_foreign_tables(db, url)
                migrate(db)
                previous = _state_of(db)
                if rebuild:
                    db.execute(
                        "DELETE FROM files; DELETE FROM passages; DELETE FROM documents; DELETE FROM postings"
                    )
                writer = PostgresWriter(db, previous)
                yield writer
                writer.commit()
            finally:
                if not db.closed and not db.broken and db.info.transaction_status != TransactionStatus.IDLE:
                    with suppress(psycopg.Error):
                        db.execute("ROLLBACK")
    except psycopg.Error as error:
        kept = (
            "the index keeps what was committed before it; run 'localqa index' again to finish"
            if writer is not None and writer.commits
            else "the index was left as it was"
        )
        raise _failure(url, error, kept) from None
    finally:
        db.close()


@contextmanager
def _writer_lock(db: Connection, url: str, wait: Callable[[str], None] | None) -> Iterator[None]:
    """A session advisory lock per schema: a second writer waits (and is told so). It goes with
    the connection, so a killed writer never leaves it held."""
    key = "%s, hashtext(current_schema())"
    (taken,) = db.execute(f"SELECT pg_try_advisory_lock({key})", (_LOCK_CLASS,)).fetchone() or (False,)
    if not taken:
        if wait is not None:
            wait(f"waiting for another localqa index, which is writing {describe(url)}")
        db.execute(f"SELECT pg_advisory_lock({key})", (_LOCK_CLASS,))
    try:
        yield
    finally:
        if not db.closed and not db.broken:
            db.execute(f"SELECT pg_advisory_unlock({key})", (_LOCK_CLASS,))


def _refuse_foreign_tables(db: Connection, url: str) -> None:
    """A schema that holds tables but no localqa index is someone else's: never write into it."""
    ours = db.execute("SELECT to_regclass('migrations') IS NOT NULL").fetchone()
    others = db.execute("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()").fetchone()
    if not (ours and ours[0]) and others and others[0]:
        raise LocalQAError(
            f"{describe(url)} holds tables that are not a localqa index; choose another database "
            "(or a schema of its own: options=-csearch_path=NAME in the URL)"
        )


def _state_of(db: Connection) -> IndexedState:
    files = db.execute("SELECT name, sha256, pages_without_text FROM files").fetchall()
    documents = db.execute(f"SELECT {DOCUMENT_COLUMNS} FROM documents").fetchall()
    return IndexedState(
        files={
            name: IndexedFile(sha, tuple(int(p) for p in pages.split(",") if p)) for name, sha, pages in files
        },
        documents={row[1]: document_of(row) for row in documents},
    )


class _PostingsRows:
    """The postings table (`localqa.store.postings.PostingsTable`) in the writer's transaction."""

    def __init__(self, db: Connection) -> None:
        self._db = db

    def read(self, terms: Sequence[str]) -> dict[str, tuple[bytes, bytes, bytes]]:
        rows = self._db.execute(
            "SELECT term, passages, heading, body FROM postings WHERE term = ANY(%s)", (list(terms),)
        ).fetchall()
        return {term: (bytes(ids), bytes(heading), bytes(body)) for term, ids, heading, body in rows}

    def write(self, rows: Sequence[PackedRow]) -> None:
        with self._db.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO postings (term, passages, heading, body) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (term) DO UPDATE SET passages = EXCLUDED.passages, "
                "heading = EXCLUDED.heading, body = EXCLUDED.body",
                rows,
            )

    def delete(self, terms: Sequence[str]) -> None:
        if terms:
            self._db.execute("DELETE FROM postings WHERE term = ANY(%s)", (list(terms),))


# (id, doc_id, origin, kind, source, page, section, paragraph, table_no, row_no, boxes, text, heading)
_NewPassage = tuple[
    int, str, str, str, str, int | None, str | None, int | None, int | None, int | None, str, str, str
]
_NEW_COLUMNS = (
    "id, doc_id, origin, kind, source, page, section, paragraph, table_no, row_no, boxes, text, heading"
)


class PostgresWriter(Writer):
    """What `SQLiteWriter` does, to the same effect, in fewer round trips to the server: new
    passages (and their files' rows) wait in memory and go in batches of `_WRITE_BATCH`, their
    terms counted, their lengths taken from the counts, the rows copied; documents are written a
    call at a time; nothing is asked of the server that the writer already knows (which files
    have passages, each document's context). Anything that reads or removes passages sends the
    waiting ones first."""

    def __init__(self, db: Connection, previous: IndexedState) -> None:
        self._db = db
        self._previous = previous
        self._postings = PostingsWriter(TermCounter(), _PostingsRows(db))
        self._waiting: list[_NewPassage] = []
        self._waiting_files: dict[str, tuple[str, str]] = {}  # name -> (sha256, pages without text)
        self._origins = {origin for (origin,) in self._execute("SELECT DISTINCT origin FROM passages")}
        self._contexts: dict[str, tuple[str, str]] = {}  # doc_id -> `_wanted_and_indexed`
        self._next_id: int | None = None
        self.commits = 0

    def commit(self) -> None:
        self._send()
        self._postings.flush()
        generation = int(
            self._execute("SELECT coalesce(max(value::bigint), 0) FROM meta WHERE key = 'generation'")[0][0]
        )
        self._execute(
            "INSERT INTO meta (key, value) VALUES ('generation', %s) "
            "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            str(generation + 1),
        )
        self._db.execute("COMMIT")
        self.commits += 1
        self._db.execute("BEGIN")

    def indexed(self) -> IndexedState:
        return self._previous

    def _execute(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        cursor = self._db.execute(sql, args)
        return cursor.fetchall() if cursor.description else []

    # --- passages ---------------------------------------------------------------------------

    def _new_id(self) -> int:
        """One more than the largest id, as SQLite gives a rowid (ids freed by a removal are
        reused exactly as there)."""
        if self._next_id is None:
            self._next_id = int(self._execute("SELECT coalesce(max(id), 0) + 1 FROM passages")[0][0])
        given, self._next_id = self._next_id, self._next_id + 1
        return given

    def _send(self) -> None:
        """Count, measure and copy the waiting passages into the server, with their files' rows."""
        waiting, self._waiting = self._waiting, []
        files, self._waiting_files = self._waiting_files, {}
        if waiting:
            counted = self._postings.add([(row[0], row[12], row[11]) for row in waiting])
            sizes = lengths(counted)
            with self._db.cursor() as cursor:
                with cursor.copy(f"COPY passages ({_NEW_COLUMNS}, section_len, body_len) FROM STDIN") as copy:
                    for row in waiting:
                        copy.write_row((*row, *sizes.get(row[0], (0, 0))))
                with cursor.copy("COPY identifiers (passage_id, identifier, col) FROM STDIN") as copy:
                    for row in waiting:
                        for column, text in (("section", row[12]), ("body", row[11])):
                            for code in identifiers(text):
                                copy.write_row((row[0], code, column))
            self._origins.update(row[2] for row in waiting)
        if files:
            with self._db.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO files (name, sha256, pages_without_text) VALUES (%s, %s, %s) "
                    "ON CONFLICT (name) DO UPDATE SET sha256 = EXCLUDED.sha256, "
                    "pages_without_text = EXCLUDED.pages_without_text",
                    [(name, *row) for name, row in files.items()],
                )

    def remove_files(self, names: Iterable[str]) -> None:
        for name in names:
            self._drop_origin(name)
            self._waiting_files.pop(name, None)
            self._execute("DELETE FROM files WHERE name = %s", name)

    def _drop_origin(self, origin: str) -> None:
        if origin not in self._origins and all(row[2] != origin for row in self._waiting):
            return  # nothing indexed from it
        self._send()  # before the ids change: a removal may lower the largest id
        rows = self._execute("SELECT id, heading, text FROM passages WHERE origin = %s", origin)
        if rows:
            self._unindex(rows)
            self._execute("DELETE FROM passages WHERE origin = %s", origin)  # embeddings go with them
            self._next_id = None
        self._origins.discard(origin)

    def _unindex(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Take passages, given as (id, heading text, body), out of the postings and the
        identifiers."""
        self._postings.remove([(pid, heading, body) for pid, heading, body in rows])
        self._execute("DELETE FROM identifiers WHERE passage_id = ANY(%s)", [row[0] for row in rows])

    def put_documents(self, documents: Iterable[Document], blocked: Iterable[str]) -> None:
        self._send()
        documents = list(documents)
        sources = [d.source for d in documents]
        present = {name for (name,) in self._execute("SELECT name FROM files")}
        # What extraction found, and what the passages are indexed with, stays with the source.
        kept: dict[str, tuple[Found, str]] = {
            source: (found_of(*found), context)
            for source, context, *found in self._execute(
                f"SELECT source, context, {FOUND_COLUMNS} FROM documents WHERE source = ANY(%s)", sources
            )
        }
        # Forget the rows being rewritten first, so that ids can move between documents (a swap).
        self._execute("DELETE FROM documents WHERE source = ANY(%s)", sources)
        holders: dict[str, str] = dict(
            self._execute(
                "SELECT doc_id, source FROM documents WHERE doc_id = ANY(%s)", [d.doc_id for d in documents]
            )
        )
        for document in documents:
            holder = holders.get(document.doc_id)
            if holder is not None and holder in present:
                # Planning blocks every contested id; reaching this would hand one file's passages
                # (and their access) to another, so stop rather than write.
                raise LocalQAError(f"{document.source}: document id {document.doc_id!r} is held by {holder}")
            holders[document.doc_id] = document.source
        # A removed file's rows under these ids go; a catalog edit may give a document a new id:
        # what is indexed under the old one moves with its source.
        doc_ids = [d.doc_id for d in documents]
        self._execute("DELETE FROM documents WHERE doc_id = ANY(%s)", doc_ids)
        if self._origins:
            moved = self._execute(
                "UPDATE passages p SET doc_id = m.doc_id "
                "FROM unnest(%s::text[], %s::text[]) AS m(doc_id, source) "
                "WHERE p.source = m.source AND p.doc_id <> m.doc_id RETURNING p.id",
                doc_ids,
                sources,
            )
            self._execute(
                "UPDATE embeddings e SET doc_id = p.doc_id FROM passages p "
                "WHERE p.id = e.passage_id AND p.id = ANY(%s)",
                [pid for (pid,) in moved],
            )
        with self._db.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO documents ({DOCUMENT_COLUMNS}, {FOUND_COLUMNS}, context) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [
                    (*document_values(d), *found_values(found), context)
                    for d in documents
                    for found, context in [kept.get(d.source, (Found(), ""))]
                ],
            )
        for document in documents:
            found, indexed = kept.get(document.source, (Found(), ""))
            wanted = searchable_title(document.source, document.title or found.title)
            self._contexts[document.doc_id] = (wanted, indexed)
            self._sync_context(document.doc_id)
        self._execute("UPDATE documents SET access = NULL WHERE source = ANY(%s)", list(blocked))

    def _wanted_and_indexed(self, doc_id: str) -> tuple[str, str]:
        """(the document context its passages should be indexed with, the one they are)."""
        if doc_id not in self._contexts:
            ((source, title, found_title, indexed),) = self._execute(
                "SELECT source, title, found_title, context FROM documents WHERE doc_id = %s", doc_id
            )
            self._contexts[doc_id] = (searchable_title(source, title or found_title), indexed)
        return self._contexts[doc_id]

    def _sync_context(self, doc_id: str) -> None:
        """Re-index the document's passages when its context (title, file name) changed: their
        heading text, identifiers, postings and lengths, and their vectors (re-embedded later)."""
        wanted, indexed = self._wanted_and_indexed(doc_id)
        if wanted == indexed:
            return
        self._send()
        self._execute("UPDATE documents SET context = %s WHERE doc_id = %s", wanted, doc_id)
        self._contexts[doc_id] = (wanted, wanted)
        rows = self._execute(
            "SELECT id, heading, text, section FROM passages WHERE doc_id = %s ORDER BY id", doc_id
        )
        for start in range(0, len(rows), _WRITE_BATCH):
            batch = rows[start : start + _WRITE_BATCH]
            self._unindex([(pid, heading, text) for pid, heading, text, _ in batch])
            fresh = [(pid, searchable_heading(wanted, section), text) for pid, _, text, section in batch]
            sizes = lengths(self._postings.add(fresh))
            with self._db.cursor() as cursor:
                cursor.executemany(
                    "UPDATE passages SET heading = %s, section_len = %s, body_len = %s WHERE id = %s",
                    [(heading, *sizes.get(pid, (0, 0)), pid) for pid, heading, _ in fresh],
                )
                cursor.executemany(
                    "INSERT INTO identifiers (passage_id, identifier, col) VALUES (%s, %s, %s) "
                    "ON CONFLICT DO NOTHING",
                    [
                        (pid, code, column)
                        for pid, heading, text in fresh
                        for column, part in (("section", heading), ("body", text))
                        for code in identifiers(part)
                    ],
                )
            self._execute("DELETE FROM embeddings WHERE passage_id = ANY(%s)", [row[0] for row in batch])

    def replace_unit(
        self,
        name: str,
        sha256: str,
        doc_id: str,
        passages: Sequence[Passage],
        pages_without_text: Sequence[int],
        found: Found | None = None,
    ) -> None:
        self._drop_origin(name)
        if found is not None:
            self._execute(
                "UPDATE documents SET found_title = %s, found_name = %s, found_period = %s WHERE doc_id = %s",
                *found_values(found),
                doc_id,
            )
            self._contexts.pop(doc_id, None)
            self._sync_context(doc_id)
        context, _ = self._wanted_and_indexed(doc_id)
        for passage in passages:
            self._waiting.append(
                (
                    self._new_id(),
                    doc_id,
                    name,
                    passage.kind.value,
                    passage.source,
                    passage.page,
                    passage.section,
                    passage.paragraph,
                    passage.table,
                    passage.row,
                    json.dumps(passage.boxes),
                    passage.text,
                    searchable_heading(context, passage.section),
                )
            )
        self._waiting_files[name] = (sha256, ",".join(map(str, pages_without_text)))
        if len(self._waiting) >= _WRITE_BATCH:
            self._send()

    def record_catalog(self, sha256: str | None) -> None:
        if sha256 is None:
            self._execute("DELETE FROM files WHERE name = %s", CATALOG_NAME)
        else:
            self._execute(
                "INSERT INTO files (name, sha256, pages_without_text) VALUES (%s, %s, '') "
                "ON CONFLICT (name) DO UPDATE SET sha256 = EXCLUDED.sha256",
                CATALOG_NAME,
                sha256,
            )

    # --- vectors ----------------------------------------------------------------------------

    def has_vectors(self, model: str) -> bool:
        return bool(self._execute("SELECT 1 FROM meta WHERE key = %s", _VECTORS + model))

    def expect_vectors(self, model: str) -> None:
        self._execute(
            "INSERT INTO meta (key, value) VALUES (%s, '') ON CONFLICT (key) DO NOTHING", _VECTORS + model
        )

    def passages_without_vectors(self, model: str, limit: int | None = None) -> list[Unembedded]:
        self._send()
        rows = self._execute(
            "SELECT p.id, d.context, p.section, p.text FROM passages p "
            "JOIN documents d ON d.doc_id = p.doc_id "
            "WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.model = %s AND e.passage_id = p.id) "
            "ORDER BY p.id LIMIT %s",
            model,
            limit,
        )
        return [Unembedded(*row) for row in rows]

    def put_vectors(self, model: str, ids: Sequence[int], vectors: Vectors) -> None:
        self._send()
        ids = [int(pid) for pid in ids]
        owners = dict(self._execute("SELECT id, doc_id FROM passages WHERE id = ANY(%s)", ids))
        self._execute("DELETE FROM embeddings WHERE model = %s AND passage_id = ANY(%s)", model, ids)
        with (
            self._db.cursor() as cursor,
            cursor.copy("COPY embeddings (passage_id, model, doc_id, vector) FROM STDIN") as copy,
        ):
            for pid, vector in zip(ids, vectors, strict=True):
                copy.write_row((pid, model, owners[pid], _vector_text(vector)))

    def drop_vectors(self, model: str) -> None:
        self._execute("DELETE FROM embeddings WHERE model = %s", model)
        self._execute("DELETE FROM meta WHERE key = %s", _VECTORS + model)

    def finish(self) -> WriteSummary:
        self._send()
        self._postings.flush()
        # Documents whose source is gone lose their row; their passages went with their files.
        self._execute(
            "DELETE FROM documents WHERE doc_id NOT IN (SELECT doc_id FROM passages) "
            "AND source NOT IN (SELECT name FROM files)"
        )
        digest = hashlib.sha256()
        for name, sha in self._execute('SELECT name, sha256 FROM files ORDER BY name COLLATE "C"'):
            digest.update(f"{name}\0{sha}\n".encode())
        with self._db.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO meta (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                [
                    ("corpus_digest", digest.hexdigest()),
                    ("schema_version", str(SCHEMA_VERSION)),
                    ("built", date.today().isoformat()),
                ],
            )
        return WriteSummary(
            documents=int(self._execute("SELECT count(*) FROM documents")[0][0]),
            passages=int(self._execute("SELECT count(*) FROM passages")[0][0]),
            digest=digest.hexdigest(),
        )
