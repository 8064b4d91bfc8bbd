"""The SQLite index: one file, every statement localqa runs against it. FTS5 tokenizes and keeps
the text; BM25 reads the packed per-term postings (`localqa.store.postings`).

Writing never touches the live file. A `SQLiteWriter` works on a copy (or, for a rebuild, a new
file) inside one transaction, and only a completed write is moved over the live index with
`os.replace`: a reader sees the old index or the new one, never half of one, and a build that
dies leaves the old one as it was. One writer at a time holds `<index>.lock`.

Reads use a read-only connection. Because the file is replaced rather than modified, an open
connection keeps reading the snapshot it opened, so what a `SQLiteStore` derives from it
(documents, scope tables, statistics) can be cached for the store's life.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing, contextmanager
from datetime import date
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from localqa.catalog import CATALOG_NAME, searchable_heading, searchable_title
from localqa.errors import IndexMissingError, LocalQAError, SchemaError
from localqa.settings import Chunking
from localqa.store.base import (
    IndexedFile,
    IndexedState,
    IndexStatus,
    Scope,
    StoredPassage,
    Unembedded,
    Vectors,
    Writer,
    WriteSummary,
)
from localqa.store.layout import LayoutStore
from localqa.store.postings import PackedRow, PostingsWriter, TermCounter
from localqa.store.rows import (
    DOCUMENT_COLUMNS,
    FOUND_COLUMNS,
    PASSAGE_COLUMNS,
    document_of,
    document_values,
    found_of,
    found_values,
    passage_of,
    status_of,
)
from localqa.store.schema import SCHEMA_VERSION, migrate
from localqa.text import identifiers
from localqa.types import Document, Found, Location, Passage

# Passages whose terms are counted for the postings together (see PostingsWriter.add): counted
# per file, a collection of one-page files spent most of its build counting one at a time.
_COUNT_BATCH = 1000


# --- reading -------------------------------------------------------------------------------------


class _ReadOnly(sqlite3.Connection):
    pass


def open_store(path: Path) -> SQLiteStore:
    """Open an existing index for reading (read-only: a query can never modify it)."""
    identity = _identity(path)  # before connecting: a file replaced in between reads as changed
    if identity is None:
        raise IndexMissingError(f"no index at {path}; build it with 'localqa index'")
    # An escaped URI: a '#' or '?' in the path must not be read as URI syntax.
    uri = f"{path.resolve().as_uri()}?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True, check_same_thread=False, factory=_ReadOnly)
    except sqlite3.Error as error:
        raise LocalQAError(f"{path}: {error}; check that it is a readable file") from None
    try:
        version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.DatabaseError:
        db.close()
        raise IndexMissingError(
            f"{path} is not a localqa index; rebuild it with 'localqa index --rebuild'"
        ) from None
    if version is None or int(version[0]) != SCHEMA_VERSION:
        db.close()
        raise SchemaError(
            f"{path} has schema version {version[0] if version else '?'}, this "
            f"localqa needs {SCHEMA_VERSION}; run 'localqa index' to migrate it"
        )
    return SQLiteStore(path, db, identity)


class SQLiteStore(LayoutStore):
    def __init__(self, path: Path, db: sqlite3.Connection, identity: tuple[int, ...] | None) -> None:
        super().__init__()
        self.path = str(path)
        self._db = db
        self._identity = identity
        self._matrices: dict[str, tuple[npt.NDArray[np.int64], Vectors]] = {}

    def close(self) -> None:
        self._db.close()

    def changed(self) -> bool:
        # A write replaces the file, so a new file (or none) is a new index.
        return _identity(Path(self.path)) != self._identity

    def _query(self, sql: str, *args: Any) -> list[Any]:
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as error:
            raise LocalQAError(f"{self.path}: {error}; rebuild it with 'localqa index --rebuild'") from None

    # --- documents and metadata -----------------------------------------------------------

    @cached_property
    def _documents(self) -> tuple[Document, ...]:
        return tuple(document_of(row) for row in self._query(f"SELECT {DOCUMENT_COLUMNS} FROM documents"))

    def documents(self) -> tuple[Document, ...]:
        return self._documents

    @cached_property
    def _found(self) -> dict[str, Found]:
        rows = self._query(f"SELECT doc_id, {FOUND_COLUMNS} FROM documents")
        return {doc_id: found_of(title, name, period) for doc_id, title, name, period in rows}

    def found(self) -> dict[str, Found]:
        return self._found

    def corpus_digest(self) -> str:
        row = self._query("SELECT value FROM meta WHERE key = 'corpus_digest'")
        return str(row[0][0]) if row else ""

    def status(self, doc_ids: frozenset[str] | None) -> IndexStatus:
        where, args = (
            ("", ())
            if doc_ids is None
            else (" WHERE doc_id IN (SELECT value FROM json_each(?))", (_ids(doc_ids),))
        )
        kinds = dict(self._query(f"SELECT kind, count(*) FROM passages{where} GROUP BY kind", *args))
        sidecars = self._query(
            f"SELECT count(DISTINCT origin) FROM passages{where}{' AND' if where else ' WHERE'} "
            "origin LIKE '%.ocr.txt'",
            *args,
        )[0][0]
        embedded = self._query(
            "SELECT e.model, count(*) FROM embeddings e JOIN passages p ON p.id = e.passage_id"
            f"{where.replace('doc_id', 'p.doc_id')} GROUP BY e.model",
            *args,
        )
        meta = dict(self._query("SELECT key, value FROM meta"))
        return status_of(self.path, self._documents, doc_ids, kinds, sidecars, dict(embedded), meta)

    # --- retrieval ------------------------------------------------------------------------

    def _layout_rows(self) -> list[tuple[int, str, int, int]]:
        return self._query("SELECT id, doc_id, section_len, body_len FROM passages ORDER BY id")

    def _postings_rows(self, terms: Sequence[str]) -> dict[str, tuple[bytes, bytes, bytes]]:
        found = {}
        for term in terms:  # in-process: one statement per term costs nothing extra
            rows = self._query("SELECT passages, heading, body FROM postings WHERE term = ?", term)
            if rows:
                found[term] = (rows[0][0], rows[0][1], rows[0][2])
        return found

    def _carrier_rows(self, codes: Sequence[str], chunking: Chunking) -> list[tuple[int, str]]:
        return self._query(
            "SELECT passage_id, identifier FROM identifiers "
            "WHERE identifier IN (SELECT value FROM json_each(?)) AND (col = 'body' OR ?)",
            json.dumps(list(codes)),
            chunking == "heading",
        )

    def has_vectors(self, model: str) -> bool:
        return bool(self._query("SELECT 1 FROM embeddings WHERE model = ? LIMIT 1", model))

    def lacks_vectors(self, model: str) -> bool:
        return bool(self._query("SELECT 1 FROM passages LIMIT 1")) and not self.has_vectors(model)

    def _vectors(self, model: str) -> tuple[npt.NDArray[np.int64], Vectors]:
        """Every vector of `model` in one contiguous matrix (rows in passage-id order), read once."""
        cached = self._matrices.get(model)
        if cached is None:
            rows = self._query(
                "SELECT passage_id, vector FROM embeddings WHERE model = ? ORDER BY passage_id", model
            )
            ids = np.fromiter((pid for pid, _ in rows), dtype=np.int64, count=len(rows))
            width = len(rows[0][1]) // 4 if rows else 0
            matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32).reshape(
                len(rows), width
            )
            cached = (ids, matrix)
            self._matrices[model] = cached
        return cached

    def similarities(
        self, scope: Scope, model: str, vector: Vectors, limit: int | None = None
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        # Every one: ranking them all in numpy costs less than choosing the best `limit` here.
        ids, matrix = self._vectors(model)
        if not len(ids):
            return ids, np.zeros(0, dtype=np.float32)
        inside = self._mask(scope)[ids]
        return ids[inside], (matrix @ vector)[inside]

    def passages(self, ids: Iterable[int]) -> dict[int, StoredPassage]:
        rows = self._query(
            f"SELECT {PASSAGE_COLUMNS} FROM passages WHERE id IN (SELECT value FROM json_each(?))",
            json.dumps(list(ids)),
        )
        return {row[0]: passage_of(row) for row in rows}

    def passage_at(self, location: Location) -> StoredPassage | None:
        rows = self._query(
            f"SELECT {PASSAGE_COLUMNS} FROM passages WHERE source = ? AND page IS ? AND kind = ? "
            "AND table_no IS ? AND row_no IS ? AND paragraph IS ? LIMIT 1",
            location.source,
            location.page,
            location.kind.value,
            location.table,
            location.row,
            location.paragraph,
        )
        return passage_of(rows[0]) if rows else None

    def file_hash(self, name: str) -> str | None:
        rows = self._query("SELECT sha256 FROM files WHERE name = ?", name)
        return str(rows[0][0]) if rows else None

    def page_passages(self, source: str, page: int | None) -> list[StoredPassage]:
        rows = self._query(
            f"SELECT {PASSAGE_COLUMNS} FROM passages WHERE source = ? AND page IS ? ORDER BY id",
            source,
            page,
        )
        return [passage_of(row) for row in rows]


def _varints(blob: bytes) -> list[int]:
    """FTS5's docsize record: one token count per column, as SQLite varints (big-endian, 7 bits
    a byte, the high bit set on every byte but the last)."""
    counts, value = [], 0
    for byte in blob:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            counts.append(value)
            value = 0
    return counts


def _identity(path: Path) -> tuple[int, ...] | None:
    try:
        found = path.stat()
    except FileNotFoundError:
        return None
    return (found.st_dev, found.st_ino, found.st_mtime_ns, found.st_size)


def _ids(doc_ids: frozenset[str]) -> str:
    return json.dumps(sorted(doc_ids))


# --- writing -------------------------------------------------------------------------------------


@contextmanager
def writing(path: Path, *, rebuild: bool = False, wait: Any = None) -> Iterator[SQLiteWriter]:
    """A writer on a copy of the index at `path` (a new, empty file when `rebuild`), holding the
    writer lock. Only when the block completes is the copy committed and moved over `path`; on
    any failure it is deleted and the live index is untouched.

    `indexed()` always describes the live index, also for a rebuild: what it held decides what
    may change (access labels never widen because an index was rebuilt)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with _writer_lock(path, wait):
        _remove_stale_copies(path)
        previous = _read_state(path, rebuild) if path.exists() else IndexedState()
        temporary = path.with_name(f"{path.name}.tmp-{os.getpid()}")
        try:
            target = sqlite3.connect(temporary)
        except sqlite3.Error as error:
            raise LocalQAError(f"{temporary}: {error}; check that {path.parent} is writable") from None
        try:
            if not rebuild and path.exists():
                with closing(sqlite3.connect(path)) as live:
                    live.backup(target)
            migrate(target)
            if not rebuild and path.exists():
                # The copy once migrated: what the live index holds, with the files a migration
                # marked for extraction again (their recorded hash cleared).
                previous = _state_of(target)
            with target:
                yield SQLiteWriter(target, previous)
        except sqlite3.Error as error:
            # "database or disk is full", "disk I/O error", a damaged live index: name the file.
            target.close()
            temporary.unlink(missing_ok=True)
            raise LocalQAError(f"{path}: {error}; the index was left as it was") from None
        except BaseException:
            target.close()
            temporary.unlink(missing_ok=True)
            raise
        target.close()
        os.replace(temporary, path)


@contextmanager
def _writer_lock(path: Path, wait: Any) -> Iterator[None]:
    """`<index>.lock`, held with flock for the whole run: a second writer waits (and is told who
    it waits for), so two runs can never interleave their reads of the folder and their writes.
    The lock goes with the process, so a killed run never leaves it stuck."""
    lock_path = path.with_name(f"{path.name}.lock")
    with lock_path.open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            if wait is not None:
                wait(f"waiting for {holder}, which is writing {path}")
            fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        handle.truncate()
        handle.write(f"localqa index (pid {os.getpid()})")
        handle.flush()
        try:
            yield
        finally:
            handle.truncate(0)
            fcntl.flock(handle, fcntl.LOCK_UN)


def _remove_stale_copies(path: Path) -> None:
    """Copies left by a writer that was killed: with the lock held, no other writer is running,
    so every one of them is stale."""
    for stale in path.parent.glob(f"{path.name}.tmp-*"):
        stale.unlink(missing_ok=True)


def _read_state(path: Path, rebuild: bool) -> IndexedState:
    """What the live index holds. A file that is not an index holds nothing worth keeping when
    it is being rebuilt; otherwise it is refused, so that a wrong --db is not overwritten."""
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            return _state_of(db)
    except sqlite3.DatabaseError:
        if rebuild:
            return IndexedState()
        raise LocalQAError(
            f"{path} is not a localqa index; rebuild it with 'localqa index --rebuild' or choose another --db"
        ) from None


def _state_of(db: sqlite3.Connection) -> IndexedState:
    files = db.execute("SELECT name, sha256, pages_without_text FROM files").fetchall()
    documents = db.execute(f"SELECT {_columns_in(db, DOCUMENT_COLUMNS)} FROM documents").fetchall()
    return IndexedState(
        files={
            name: IndexedFile(sha, tuple(int(p) for p in pages.split(",") if p)) for name, sha, pages in files
        },
        documents={row[1]: document_of(row) for row in documents},
    )


def _columns_in(db: sqlite3.Connection, columns: str) -> str:
    """`columns` of the documents table, NULL for those an index of an older schema lacks (the
    live index is read before the copy being written is migrated)."""
    present = {row[1] for row in db.execute("PRAGMA table_info(documents)")}
    return ", ".join(c if c in present else "NULL" for c in columns.split(", "))


class _PostingsRows:
    """The postings table of the index being written (`localqa.store.postings.PostingsTable`)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def read(self, terms: Sequence[str]) -> dict[str, tuple[bytes, bytes, bytes]]:
        rows = self._db.execute(
            "SELECT term, passages, heading, body FROM postings "
            "WHERE term IN (SELECT value FROM json_each(?))",
            (json.dumps(list(terms)),),
        )
        return {term: (ids, heading, body) for term, ids, heading, body in rows}

    def write(self, rows: Sequence[PackedRow]) -> None:
        self._db.executemany(
            "INSERT OR REPLACE INTO postings (term, passages, heading, body) VALUES (?, ?, ?, ?)", rows
        )

    def delete(self, terms: Sequence[str]) -> None:
        self._db.executemany("DELETE FROM postings WHERE term = ?", ((term,) for term in terms))


class SQLiteWriter(Writer):
    def __init__(self, db: sqlite3.Connection, previous: IndexedState) -> None:
        self._db = db
        self._previous = previous
        self._postings = PostingsWriter(TermCounter(db), _PostingsRows(db))
        self._added: list[tuple[int, str, str]] = []  # (id, heading, body) waiting to be counted

    def indexed(self) -> IndexedState:
        return self._previous

    def remove_files(self, names: Iterable[str]) -> None:
        for name in names:
            self._drop_origin(name)
            self._db.execute("DELETE FROM files WHERE name = ?", (name,))

    def _drop_origin(self, origin: str) -> None:
        ids = [i for (i,) in self._db.execute("SELECT id FROM passages WHERE origin = ?", (origin,))]
        self._unindex(ids)
        self._db.executemany("DELETE FROM embeddings WHERE passage_id = ?", ((i,) for i in ids))
        self._db.execute("DELETE FROM passages WHERE origin = ?", (origin,))

    def _unindex(self, ids: list[int]) -> None:
        """Take passages out of the full-text index, the postings and the identifiers."""
        if not ids:
            return
        self._count_added()  # counted before any of them can be removed again (or its id reused)
        indexed = self._db.execute(
            "SELECT rowid, section, body FROM passages_fts WHERE rowid IN (SELECT value FROM json_each(?))",
            (json.dumps(ids),),
        ).fetchall()
        self._postings.remove(indexed)
        self._db.executemany("DELETE FROM passages_fts WHERE rowid = ?", ((i,) for i in ids))
        self._db.executemany("DELETE FROM identifiers WHERE passage_id = ?", ((i,) for i in ids))

    def _count_added(self) -> None:
        self._postings.add(self._added)
        self._added = []

    def put_documents(self, documents: Iterable[Document], blocked: Iterable[str]) -> None:
        documents = list(documents)
        present = {name for (name,) in self._db.execute("SELECT name FROM files")}
        # What extraction found, and what the passages are indexed with, stays with the source.
        kept = {
            source: (found_of(*found), context)
            for source, context, *found in self._db.execute(
                f"SELECT source, context, {FOUND_COLUMNS} FROM documents "
                "WHERE source IN (SELECT value FROM json_each(?))",
                (json.dumps([d.source for d in documents]),),
            )
        }
        # Forget the rows being rewritten first, so that ids can move between documents (a swap).
        self._db.executemany("DELETE FROM documents WHERE source = ?", ((d.source,) for d in documents))
        for document in documents:
            holder = self._db.execute(
                "SELECT source FROM documents WHERE doc_id = ?", (document.doc_id,)
            ).fetchone()
            if holder is not None and holder[0] in present:
                # Planning blocks every contested id; reaching this would hand one file's passages
                # (and their access) to another, so stop rather than write.
                raise LocalQAError(
                    f"{document.source}: document id {document.doc_id!r} is held by {holder[0]}"
                )
            self._db.execute("DELETE FROM documents WHERE doc_id = ?", (document.doc_id,))  # a removed file's
            # A catalog edit may give the document a new id: move what is indexed under the old one.
            self._db.execute(
                "UPDATE passages SET doc_id = ? WHERE source = ?", (document.doc_id, document.source)
            )
            self._insert_document(document, *kept.get(document.source, (Found(), "")))
            self._sync_context(document.doc_id)
        self._db.executemany("UPDATE documents SET access = NULL WHERE source = ?", ((s,) for s in blocked))

    def _insert_document(self, document: Document, found: Found, context: str) -> None:
        self._db.execute(
            f"INSERT INTO documents ({DOCUMENT_COLUMNS}, {FOUND_COLUMNS}, context) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*document_values(document), *found_values(found), context),
        )

    def _context(self, doc_id: str) -> tuple[str, str]:
        """(the document context its passages should be indexed with, the one they are)."""
        source, title, found_title, indexed = self._db.execute(
            "SELECT source, title, found_title, context FROM documents WHERE doc_id = ?", (doc_id,)
        ).fetchone()
        return searchable_title(source, title or found_title), indexed

    def _sync_context(self, doc_id: str) -> None:
        """Re-index the document's passages when its context (title, file name) changed: their
        searchable heading text and its identifiers, and their vectors (re-embedded later)."""
        wanted, indexed = self._context(doc_id)
        if wanted == indexed:
            return
        self._db.execute("UPDATE documents SET context = ? WHERE doc_id = ?", (wanted, doc_id))
        rows = self._db.execute(
            "SELECT id, section, text FROM passages WHERE doc_id = ?", (doc_id,)
        ).fetchall()
        self._unindex([passage_id for passage_id, _, _ in rows])
        for passage_id, section, text in rows:
            self._db.execute("DELETE FROM embeddings WHERE passage_id = ?", (passage_id,))
            self._index_text(passage_id, searchable_heading(wanted, section), text)

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
            self._db.execute(
                "UPDATE documents SET found_title = ?, found_name = ?, found_period = ? WHERE doc_id = ?",
                (*found_values(found), doc_id),
            )
            self._sync_context(doc_id)
        context, _ = self._context(doc_id)
        for passage in passages:
            self._insert_passage(doc_id, name, passage, context)
            if len(self._added) >= _COUNT_BATCH:
                self._count_added()
        self._db.execute(
            "INSERT OR REPLACE INTO files (name, sha256, pages_without_text) VALUES (?, ?, ?)",
            (name, sha256, ",".join(map(str, pages_without_text))),
        )

    def _insert_passage(self, doc_id: str, origin: str, passage: Passage, context: str) -> None:
        cursor = self._db.execute(
            "INSERT INTO passages (doc_id, origin, kind, source, page, section, paragraph, table_no, "
            "row_no, boxes, text, section_len, body_len) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0)",
            (
                doc_id,
                origin,
                passage.kind.value,
                passage.source,
                passage.page,
                passage.section,
                passage.paragraph,
                passage.table,
                passage.row,
                json.dumps(passage.boxes),
                passage.text,
            ),
        )
        assert cursor.lastrowid is not None
        self._index_text(cursor.lastrowid, searchable_heading(context, passage.section), passage.text)

    def _index_text(self, passage_id: int, heading: str, body: str) -> None:
        """Full-text and identifier entries of one passage; its token counts come back from FTS5
        itself (its docsize record), so lengths and postings are counted by the same tokenizer."""
        self._db.execute(
            "INSERT INTO passages_fts (rowid, section, body) VALUES (?, ?, ?)", (passage_id, heading, body)
        )
        (sizes,) = self._db.execute(
            "SELECT sz FROM passages_fts_docsize WHERE id = ?", (passage_id,)
        ).fetchone()
        section_len, body_len = _varints(sizes)
        self._db.execute(
            "UPDATE passages SET section_len = ?, body_len = ? WHERE id = ?",
            (section_len, body_len, passage_id),
        )
        self._added.append((passage_id, heading, body))
        for column, text in (("section", heading), ("body", body)):
            self._db.executemany(
                "INSERT OR IGNORE INTO identifiers (passage_id, identifier, col) VALUES (?, ?, ?)",
                ((passage_id, code, column) for code in identifiers(text)),
            )

    def record_catalog(self, sha256: str | None) -> None:
        if sha256 is None:
            self._db.execute("DELETE FROM files WHERE name = ?", (CATALOG_NAME,))
        else:
            self._db.execute(
                "INSERT OR REPLACE INTO files (name, sha256, pages_without_text) VALUES (?, ?, '')",
                (CATALOG_NAME, sha256),
            )

    def has_vectors(self, model: str) -> bool:
        return (
            self._db.execute("SELECT 1 FROM embeddings WHERE model = ? LIMIT 1", (model,)).fetchone()
            is not None
        )

    def passages_without_vectors(self, model: str) -> list[Unembedded]:
        rows = self._db.execute(
            "SELECT p.id, d.context, p.section, p.text FROM passages p "
            "JOIN documents d ON d.doc_id = p.doc_id "
            "WHERE p.id NOT IN (SELECT passage_id FROM embeddings WHERE model = ?) ORDER BY p.id",
            (model,),
        ).fetchall()
        return [Unembedded(*row) for row in rows]

    def put_vectors(self, model: str, ids: Sequence[int], vectors: Vectors) -> None:
        self._db.executemany(
            "INSERT OR REPLACE INTO embeddings (passage_id, model, vector) VALUES (?, ?, ?)",
            ((pid, model, vector.tobytes()) for pid, vector in zip(ids, vectors, strict=True)),
        )

    def drop_vectors(self, model: str) -> None:
        self._db.execute("DELETE FROM embeddings WHERE model = ?", (model,))

    def finish(self) -> WriteSummary:
        self._count_added()
        self._postings.flush()
        # Documents whose source is gone lose their row; their passages went with their files.
        self._db.execute(
            "DELETE FROM documents WHERE doc_id NOT IN (SELECT doc_id FROM passages) "
            "AND source NOT IN (SELECT name FROM files)"
        )
        digest = hashlib.sha256()
        for name, sha in self._db.execute("SELECT name, sha256 FROM files ORDER BY name"):
            digest.update(f"{name}\0{sha}\n".encode())
        self._db.executemany(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            [
                ("corpus_digest", digest.hexdigest()),
                ("schema_version", str(SCHEMA_VERSION)),
                ("built", date.today().isoformat()),
            ],
        )
        return WriteSummary(
            documents=self._db.execute("SELECT count(*) FROM documents").fetchone()[0],
            passages=self._db.execute("SELECT count(*) FROM passages").fetchone()[0],
            digest=digest.hexdigest(),
        )
