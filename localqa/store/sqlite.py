"""The SQLite index: one database file (and its vectors beside it, `localqa.store.vectors`), every
statement localqa runs against it. BM25 reads the packed per-term postings, in segments
(`localqa.store.segments`), counted by FTS5's own tokenizer.

Writing happens in place, in WAL mode: a refresh changes only what changed, in transactions, and
commits twice or more (the lexical index as soon as extraction ends, then the vectors in batches).
WAL readers keep the snapshot they started with while a writer commits, so the previous index
stays readable throughout; a write that dies (killed, a full disk) is rolled back by SQLite and
leaves the index as of its last commit. One writer at a time holds `<index>.lock`.

Reads use a read-only connection holding one read transaction for the store's life, so what a
`SQLiteStore` derives from it (documents, scope masks, statistics, lengths) is cached safely;
`changed()` tells a long-lived reader that a newer snapshot exists.

Passage ids are SQLite rowids handed out from a counter that never goes back, so an id always
names the same passage text: postings and vectors are keyed by it and never rewritten for
passages a refresh did not touch; readers skip the ids of removed passages. The store hands out
canonical numbers instead (`localqa.store.layout`), read from one `units` row per input file.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sqlite3
import struct
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from localqa.errors import IndexMissingError, IndexUnavailableError, LocalQAError, SchemaError
from localqa.indexing.catalog import CATALOG_NAME, searchable_heading, searchable_title
from localqa.language.text import identifiers
from localqa.settings import Chunking
from localqa.store import segments as postings_segments
from localqa.store import vectors
from localqa.store.base import (
    IndexedFile,
    IndexedState,
    Scope,
    Unembedded,
    Vectors,
    Writer,
    WriteSummary,
)
from localqa.store.layout import Unit
from localqa.store.reads import IN_VALUES, SqlStore, Values
from localqa.store.rows import (
    DOCUMENT_COLUMNS,
    FOUND_COLUMNS,
    PASSAGE_COLUMNS,
    document_of,
    document_values,
    found_of,
    found_values,
    passage_of,
)
from localqa.store.schema import SCHEMA_VERSION, migrate
from localqa.store.segments import SegmentWriter
from localqa.types import Document, Found, Passage

# What is embedded for a passage (embeddings.passage_text), and its id.
_UNEMBEDDED = (
    "SELECT p.id, d.context, p.section, p.text FROM passages p JOIN documents d ON d.doc_id = p.doc_id"
)
# Passages whose terms are counted for the postings together (see SegmentWriter.add): counted
# per file, a collection of one-page files spent most of its build counting one at a time.
_COUNT_BATCH = 1000
# Postings counted in one write are written out as a segment of their own once they are this many
# (term, passage, column) entries (about 200,000 passages): a build's memory stays bounded, and
# the write's segments are merged into one when it commits.
_FLUSH_ENTRIES = 30_000_000
# A vector file is rewritten without the rows of removed passages once they are this share of it.
_DEAD_VECTORS = 0.25


# --- reading -------------------------------------------------------------------------------------


class _ReadOnly(sqlite3.Connection):
    pass


def open_store(path: Path) -> SQLiteStore:
    """Open an existing index for reading (read-only: a query can never modify it), on the
    snapshot committed last."""
    if not path.exists():
        raise IndexMissingError(f"no index at {path}; build it with 'localqa index'")
    # An escaped URI: a '#' or '?' in the path must not be read as URI syntax.
    uri = f"{path.resolve().as_uri()}?mode=ro"

    def connect() -> sqlite3.Connection:
        try:
            return sqlite3.connect(
                uri, uri=True, check_same_thread=False, factory=_ReadOnly, isolation_level=None
            )
        except sqlite3.Error as error:
            raise LocalQAError(f"{path}: {error}; check that it is a readable file") from None

    for attempt in range(3):
        # The watcher's version is taken before the snapshot: a commit in between makes the
        # store say it changed (a needless reopen), never miss a change.
        watcher = connect()
        db = connect()
        try:
            file_state = _FileState.of(path)
            version = watcher.execute("PRAGMA data_version").fetchone()[0]
            db.execute("BEGIN")
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError:
            db.close()
            watcher.close()
            raise IndexMissingError(
                f"{path} is not a localqa index; rebuild it with 'localqa index --rebuild'"
            ) from None
        schema = meta.get("schema_version")
        if schema is None or int(schema) != SCHEMA_VERSION:
            db.close()
            watcher.close()
            raise SchemaError(
                f"{path} has schema version {schema or '?'}, this "
                f"localqa needs {SCHEMA_VERSION}; run 'localqa index' to migrate it"
            )
        expected = {
            k.removeprefix(vectors.META_PREFIX): v
            for k, v in meta.items()
            if k.startswith(vectors.META_PREFIX)
        }
        mapped: dict[str, vectors.MappedRows] = {}
        missing = False
        for model, record in expected.items():
            state = vectors.VectorFile.parse(record)
            if state.token:
                try:
                    mapped[model] = vectors.MappedRows(path, state)
                except FileNotFoundError:
                    missing = True
        if missing and attempt < 2:
            # A writer replaced the vector file after this snapshot began: take a newer one. (A
            # file still missing then was not copied with the index: read without its vectors.)
            for rows in mapped.values():
                rows.close()
            db.close()
            watcher.close()
            continue
        return SQLiteStore(path, db, watcher, version, file_state, set(expected), mapped)
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class _FileState:
    """What a reader compares to know the index file changed under it: the file (device and
    inode: replaced by a rename), its stamp (size, modification and change times: written), and
    its write-ahead log as SQLite's wal-index (`<index>-shm`) counts it: frames in the log, and
    how many of them are folded into the file."""

    identity: tuple[int, int]
    stamp: tuple[int, int, int]
    log: tuple[int, int]

    @classmethod
    def of(cls, path: Path) -> _FileState:
        log = _log_state(path)  # first: a checkpoint after it shows in the stamp and the log both
        found = path.stat()
        return cls((found.st_dev, found.st_ino), (found.st_size, found.st_mtime_ns, found.st_ctime_ns), log)


def _log_state(path: Path) -> tuple[int, int]:
    """(frames in the write-ahead log, frames folded into the database file), from the wal-index
    header (sqlite.org/walformat.html: mxFrame at byte 16, nBackfill at 96, native byte order);
    (0, 0) when there is none."""
    try:
        with path.with_name(f"{path.name}-shm").open("rb") as shm:
            header = shm.read(100)
    except OSError:
        return 0, 0
    if len(header) < 100:
        return 0, 0
    return struct.unpack_from("=I", header, 16)[0], struct.unpack_from("=I", header, 96)[0]


class SQLiteStore(SqlStore):
    def __init__(
        self,
        path: Path,
        db: sqlite3.Connection,
        watcher: sqlite3.Connection,
        version: int,
        state: _FileState,
        embedded_with: set[str],
        mapped: dict[str, vectors.MappedRows],
    ) -> None:
        super().__init__()
        self.path = str(path)
        self._db = db
        self._watcher = watcher
        self._version = version
        self._state = state
        self._refused: str | None = None  # why the file cannot be read (see `changed`)
        self._embedded_with = embedded_with  # models the index is embedded with (vectors may still be coming)
        self._mapped = mapped
        self._matrices: dict[str, tuple[npt.NDArray[np.int64], Vectors]] = {}
        self._have: dict[str, npt.NDArray[np.bool_]] = {}

    def close(self) -> None:
        self._db.close()
        self._watcher.close()
        for mapped in self._mapped.values():
            mapped.close()

    def _query(self, sql: str, *args: Any) -> list[Any]:
        """As `SqlStore._query`: the dialect is SQLite's own (a list goes as JSON)."""
        given = [json.dumps(list(arg.items)) if isinstance(arg, Values) else arg for arg in args]
        try:
            return self._db.execute(sql, given).fetchall()
        except sqlite3.DatabaseError as error:  # damaged ("no such table", "malformed")
            raise IndexUnavailableError(
                f"{self.path}: {error}; rebuild it with 'localqa index --rebuild'"
            ) from None

    def changed(self) -> bool:
        """Also when the file was written without a commit: copied over (`cp backup.sqlite3
        library.sqlite3` changes neither the inode nor data_version), or a checkpoint folded the
        log into it. A copy over a file whose log holds frames not folded into it yet cannot be
        read: SQLite would read those frames, of the index it replaced, over the copy. That is
        an IndexUnavailableError, for as long as the log is there; the store closes, so that
        nothing of the log stays open in this process once it is removed."""
        path = Path(self.path)
        if self._refused is not None:
            frames, folded = _log_state(path)
            if frames > folded:
                raise IndexUnavailableError(self._refused)
            return True
        try:
            now = _FileState.of(path)
            if now.identity != self._state.identity:
                return True  # replaced by a rename (an older localqa's refresh, a restored backup)
            if self._watcher.execute("PRAGMA data_version").fetchone()[0] != self._version:
                return True  # a refresh committed
        except (OSError, sqlite3.Error):
            return True  # gone or unreadable: reopening says why
        if now.stamp == self._state.stamp:
            return False
        (frames, folded), (_, folded_before) = now.log, self._state.log
        if frames > folded and folded == folded_before:  # nothing folded, yet the file changed
            log, shm = (f"{path.name}-{suffix}" for suffix in ("wal", "shm"))
            self._refused = (
                f"{path} was replaced while {log} of the index it replaced was beside it, and the "
                f"two cannot be read together; stop every localqa using it, delete {log} and {shm}, "
                "and start again (docs/usage.md, 'Restoring a backup')"
            )
            self.close()
            raise IndexUnavailableError(self._refused)
        return True

    def _embedded_counts(self, doc_ids: frozenset[str] | None) -> dict[str, int]:
        layout = self._layout
        counted = layout.mask(doc_ids) if doc_ids is not None else np.arange(layout.size + 1) < layout.size
        models = sorted(self._embedded_with)
        return {model: int((self._vector_mask(model) & counted).sum()) for model in models}

    # --- retrieval ------------------------------------------------------------------------

    def _layout_units(self) -> list[Unit]:
        return self._query(
            "SELECT u.name, u.source, u.ids, u.heading, u.body, d.doc_id FROM units u "
            "LEFT JOIN documents d ON d.source = u.source"
        )

    def _postings_rows(self, terms: Sequence[str]) -> dict[str, tuple[bytes, bytes, bytes]]:
        found = {}
        for term in terms:  # in-process: one statement per term costs nothing extra
            rows = self._query("SELECT passages, heading, body FROM postings WHERE term = ?", term)
            if rows:  # a term's segments, one after another
                ids, heading, body = (b"".join(column) for column in zip(*rows, strict=True))
                found[term] = (ids, heading, body)
        return found

    def _carrier_rows(self, codes: Sequence[str], chunking: Chunking) -> list[tuple[int, str]]:
        return self._query(
            "SELECT passage_id, identifier FROM identifiers "
            f"WHERE identifier {IN_VALUES} AND (col = 'body' OR ?)",
            Values(codes),
            chunking == "heading",
        )

    def has_vectors(self, model: str) -> bool:
        return model in self._embedded_with

    def _vectors(self, model: str) -> tuple[npt.NDArray[np.int64], Vectors]:
        """The model's committed vectors (a memory-mapped matrix) and each row's passage, by
        canonical number (removed passages: the layout's size, outside every scope)."""
        cached = self._matrices.get(model)
        if cached is None:
            mapped = self._mapped.get(model)
            matrix = mapped.matrix() if mapped is not None else None
            if matrix is None:
                cached = (np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32))
            else:
                rows = self._query("SELECT ids FROM vector_batches WHERE model = ? ORDER BY first_row", model)
                internal = np.concatenate(
                    [np.frombuffer(blob, dtype="<i4") for (blob,) in rows] or [np.zeros(0, np.int32)]
                )[: len(matrix)]
                cached = (self._layout.numbers(internal), matrix[: len(internal)])
            self._matrices[model] = cached
        return cached

    def _vector_mask(self, model: str) -> npt.NDArray[np.bool_]:
        """Which passages have a vector of `model`, by canonical number (one slot more: none)."""
        have = self._have.get(model)
        if have is None:
            numbers, _ = self._vectors(model)
            have = np.zeros(self._layout.size + 1, dtype=bool)
            have[numbers] = True
            have[-1] = False
            self._have[model] = have
        return have

    def similarities(
        self, scope: Scope, model: str, vector: Vectors, limit: int | None = None
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        # Every one: ranking them all in numpy costs less than choosing the best `limit` here.
        ids, matrix = self._vectors(model)
        if not len(ids):
            return ids, np.zeros(0, dtype=np.float32)
        inside = self._mask(scope)[ids]
        return ids[inside], (matrix @ vector)[inside]

    def missing_vectors(self, model: str, ids: Iterable[int]) -> list[Unembedded]:
        have = self._vector_mask(model)
        wanted = sorted(number for number in ids if not have[number])
        if not wanted:
            return []
        internal = self._layout.internal[np.array(wanted, dtype=np.int64)].tolist()
        rows = self._query(f"{_UNEMBEDDED} WHERE p.id {IN_VALUES}", Values(internal))
        number_of = dict(zip(internal, wanted, strict=True))
        return sorted((Unembedded(number_of[pid], *rest) for pid, *rest in rows), key=lambda u: u.id)


# --- writing -------------------------------------------------------------------------------------


@contextmanager
def writing(path: Path, *, rebuild: bool = False, wait: Any = None) -> Iterator[SQLiteWriter]:
    """The writer of the index at `path`, holding the writer lock, in place: what the block writes
    becomes visible at each `commit()` and when the block completes; on any failure what was not
    committed is rolled back (a reader never sees half a write). `rebuild` starts from an empty
    index, in the same transaction as what follows.

    `indexed()` always describes the index as it was, also for a rebuild: what it held decides
    what may change (access labels never widen because an index was rebuilt). A file at `path`
    that is not an index is refused, or, with `rebuild`, replaced once the new index is complete."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with _writer_lock(path, wait):
        _remove_stale_copies(path)
        previous = _read_state(path, rebuild) if path.exists() else IndexedState()
        # A new index is removed again if the write fails before its first commit; one that is
        # not an index and is rebuilt is written beside it and moved over it when complete.
        new = not path.exists()
        replacing = rebuild and not new and not previous.files and not _is_index(path)
        target = path.with_name(f"{path.name}.tmp-{os.getpid()}") if replacing else path
        writer: SQLiteWriter | None = None
        try:
            db = sqlite3.connect(target, isolation_level=None)
        except sqlite3.Error as error:
            raise LocalQAError(f"{target}: {error}; check that {path.parent} is writable") from None
        try:
            db.execute("PRAGMA journal_mode = WAL")
            migrate(db)
            if previous.files:
                # What the index holds once migrated: the files a migration marked for extraction
                # again (their recorded hash cleared) are extracted again.
                previous = _state_of(db)
            writer = SQLiteWriter(db, path, previous, rebuild=rebuild)
            yield writer
            writer.commit()
        except BaseException as error:
            committed = writer is not None and writer.commits > 0
            if writer is not None:
                writer.abort()
            db.close()
            if replacing or (new and not committed):
                _remove_index(target)
            if not isinstance(error, (sqlite3.Error, OSError)):
                raise
            # "database or disk is full", "disk I/O error", a damaged index: name the file.
            reason = error.strerror if isinstance(error, OSError) and error.strerror else error
            kept = (
                "the index keeps what was committed before it; run 'localqa index' again to finish"
                if committed and not replacing
                else "the index was left as it was"
            )
            raise LocalQAError(f"{path}: {reason}; {kept}") from None
        _close(db)
        if replacing:
            for suffix in ("-wal", "-shm"):  # a damaged index's, which must not pair with the new one
                path.with_name(path.name + suffix).unlink(missing_ok=True)
            os.replace(target, path)


def _remove_index(path: Path) -> None:
    """An index file that never held a commit, with its log and vector files."""
    for companion in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        companion.unlink(missing_ok=True)
    vectors.remove_others(path, set())


def _close(db: sqlite3.Connection) -> None:
    """Fold the write-ahead log into the database file (so that the file alone is the whole
    index: it can be copied), then close. Readers still reading an older snapshot (a web app
    between two questions) keep the log from being folded completely: the fold takes what it can
    without waiting for them, and the next writer finishes the job."""
    with suppress(sqlite3.Error):
        db.execute("PRAGMA busy_timeout = 0")
        db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


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
    """Copies left by a writer that was killed (older versions wrote every refresh to a copy; a
    rebuild over a file that is no index still does): with the lock held, no other writer is
    running, so every one of them is stale."""
    for stale in path.parent.glob(f"{path.name}.tmp-*"):
        stale.unlink(missing_ok=True)


def _is_index(path: Path) -> bool:
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            db.execute("SELECT name, sha256 FROM files LIMIT 1").fetchall()
            db.execute("SELECT key, value FROM meta LIMIT 1").fetchall()
        return True
    except sqlite3.DatabaseError:
        return False


def _read_state(path: Path, rebuild: bool) -> IndexedState:
    """What the index holds. A file that is not an index holds nothing worth keeping when it is
    being rebuilt; otherwise it is refused, so that a wrong --db is not overwritten."""
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
    """`columns` of the documents table, NULL for those an index of an older schema lacks (an
    index is read before it is migrated)."""
    present = {row[1] for row in db.execute("PRAGMA table_info(documents)")}
    return ", ".join(c if c in present else "NULL" for c in columns.split(", "))


class SQLiteWriter(Writer):
    def __init__(self, db: sqlite3.Connection, index: Path, previous: IndexedState, *, rebuild: bool) -> None:
        self._db = db
        self._index = index  # vector files are named after it
        self._previous = previous
        self.commits = 0
        db.execute("BEGIN IMMEDIATE")
        self._postings = SegmentWriter(db)
        self._added: list[tuple[int, str, str]] = []  # (id, heading, body) waiting to be counted
        self._units: dict[str, tuple[str, list[int]]] = {}  # written, waiting for their lengths
        self._lengths: dict[int, tuple[int, int]] = {}  # counted, waiting for their unit's row
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        top = db.execute("SELECT coalesce(max(id), 0) + 1 FROM passages").fetchone()[0]
        self._next_id = max(int(meta.get("next_passage_id", 1)), top)
        self._first_new = self._next_id  # ids from here on are this write's (in no segment yet)
        top = db.execute("SELECT coalesce(max(segment), 0) + 1 FROM segments").fetchone()[0]
        self._next_segment = int(top)
        self._written: list[postings_segments.Segment] = []  # this write's segments, not committed
        self._committed = {
            key.removeprefix(vectors.META_PREFIX): vectors.VectorFile.parse(value)
            for key, value in meta.items()
            if key.startswith(vectors.META_PREFIX)
        }
        self._vectors = dict(self._committed)
        self._vector_ids: dict[str, list[npt.NDArray[np.int32]]] = {}
        self._obsolete: set[str] = set()  # tokens of vector files to delete once no commit names them
        self._removed = False  # passages were removed (their vectors may now be worth compacting)
        for model, state in self._committed.items():
            self._check_vector_file(model, state)
        vectors.remove_others(index, {s.token for s in self._vectors.values()} | self._obsolete)
        if rebuild:
            self._clear()

    def _check_vector_file(self, model: str, state: vectors.VectorFile) -> None:
        """Cut off rows a dead writer left beyond the committed ones; a file that lost committed
        rows (copied without them) is dropped, and its passages count as not embedded yet."""
        if not state.token:
            return
        path = state.path(self._index)
        size = path.stat().st_size if path.exists() else -1
        if size >= state.size:
            vectors.cut(self._index, state)
            return
        self._db.execute("DELETE FROM vector_batches WHERE model = ?", (model,))
        self._vectors[model] = vectors.VectorFile("", 0, 0)
        self._obsolete.add(state.token)

    def _clear(self) -> None:
        for table in (
            "passages",
            "identifiers",
            "units",
            "postings",
            "segments",
            "documents",
            "files",
            "vector_batches",
        ):
            self._db.execute(f"DELETE FROM {table}")
        for model, state in self._vectors.items():
            if state.token:
                self._obsolete.add(state.token)
            self._vectors[model] = vectors.VectorFile("", 0, 0)
        self._first_new = self._next_id

    def indexed(self) -> IndexedState:
        return self._previous

    def _flush_postings(self) -> None:
        written = self._postings.flush(self._next_segment)
        if written is not None:
            self._written.append(written)
            self._next_segment += 1

    def commit(self) -> None:
        self._count_added()
        self._flush_postings()
        if len(self._written) > 1:  # a large write, flushed in parts: one segment again
            postings_segments.merge(self._db, self._written, self._next_segment, self._live_ids())
            self._next_segment += 1
        if self._written:
            self._first_new = self._next_id
            self._written = []
        self._next_segment = postings_segments.compact(self._db, self._live_ids, self._next_segment)
        self._db.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('next_passage_id', ?)", (str(self._next_id),)
        )
        for model, state in self._vectors.items():
            if state != self._committed.get(model) and state.token:
                vectors.sync(self._index, state)
            self._db.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                (vectors.META_PREFIX + model, json.dumps(state.record())),
            )
        for model in set(self._committed) - set(self._vectors):
            self._db.execute("DELETE FROM meta WHERE key = ?", (vectors.META_PREFIX + model,))
        self._db.execute("COMMIT")
        self.commits += 1
        self._committed = dict(self._vectors)
        for token in self._obsolete - {s.token for s in self._committed.values()}:
            vectors.path_of(self._index, token).unlink(missing_ok=True)
        self._obsolete = set()
        self._db.execute("BEGIN IMMEDIATE")

    def abort(self) -> None:
        """Roll back what was not committed, and cut the vector files back to their committed rows."""
        with suppress(sqlite3.Error):  # some errors end the transaction themselves
            self._db.execute("ROLLBACK")
        committed = {s.token for s in self._committed.values()}
        for model, state in self._vectors.items():
            if state.token and state.token not in committed:
                state.path(self._index).unlink(missing_ok=True)
            elif model in self._committed:
                vectors.cut(self._index, self._committed[model])

    def _live_ids(self) -> npt.NDArray[np.bool_]:
        """Which rowids are passages now (for merging postings and compacting vectors)."""
        ids = np.array([pid for (pid,) in self._db.execute("SELECT id FROM passages")], dtype=np.int64)
        live = np.zeros(int(ids.max(initial=0)) + 1, dtype=bool)
        live[ids] = True
        return live

    def remove_files(self, names: Iterable[str]) -> None:
        for name in names:
            self._drop_origin(name)
            self._db.execute("DELETE FROM files WHERE name = ?", (name,))

    def _drop_origin(self, origin: str) -> None:
        """Take the passages extracted from `origin` out of the index. Their postings and vectors
        stay where they are, under ids no passage will have again, until merged or compacted."""
        ids = [i for (i,) in self._db.execute("SELECT id FROM passages WHERE origin = ?", (origin,))]
        if not ids:
            return
        gone = set(ids)
        self._removed = True
        self._postings.forget(gone)
        self._added = [row for row in self._added if row[0] not in gone]
        self._units.pop(origin, None)
        for pid in ids:
            self._lengths.pop(pid, None)
        marks = json.dumps(ids)
        self._db.execute(
            "DELETE FROM identifiers WHERE passage_id IN (SELECT value FROM json_each(?))", (marks,)
        )
        self._db.execute("DELETE FROM passages WHERE origin = ?", (origin,))
        self._db.execute("DELETE FROM units WHERE name = ?", (origin,))
        postings_segments.count_removed(self._db, [pid for pid in ids if pid < self._first_new])

    def put_documents(self, documents: Iterable[Document], blocked: Iterable[str]) -> None:
        documents = list(documents)
        present = {name for (name,) in self._db.execute("SELECT name FROM files")}
        # What extraction found, and what the passages are indexed with, stays with the source.
        stored = {
            row[1]: row
            for row in self._db.execute(
                f"SELECT {DOCUMENT_COLUMNS}, {FOUND_COLUMNS}, context FROM documents "
                "WHERE source IN (SELECT value FROM json_each(?))",
                (json.dumps([d.source for d in documents]),),
            )
        }
        # A document whose row says what it says already is left alone: a refresh that changes
        # nothing writes nothing (and a million passages are not walked for their document ids).
        width = len(DOCUMENT_COLUMNS.split(", "))
        documents = [d for d in documents if stored.get(d.source, ())[:width] != document_values(d)]
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
            old = stored.get(document.source)
            if old is not None and old[0] != document.doc_id:
                # A catalog edit gave the document a new id: move what is indexed under the old one.
                self._db.execute(
                    "UPDATE passages SET doc_id = ? WHERE source = ?", (document.doc_id, document.source)
                )
            kept = (found_of(*old[width:-1]), old[-1]) if old is not None else (Found(), "")
            self._insert_document(document, *kept)
            self._sync_context(document.doc_id)
        self._db.executemany("UPDATE documents SET access = NULL WHERE source = ?", ((s,) for s in blocked))

    def _insert_document(self, document: Document, found: Found, context: str) -> None:
        self._db.execute(
            f"INSERT INTO documents ({DOCUMENT_COLUMNS}, {FOUND_COLUMNS}, context) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*document_values(document), *found_values(found), context),
        )

    def _source_wanted_and_indexed(self, doc_id: str) -> tuple[str, str, str]:
        """(the document's source, the context its passages should be indexed with, the one
        they are)."""
        source, title, found_title, indexed = self._db.execute(
            "SELECT source, title, found_title, context FROM documents WHERE doc_id = ?", (doc_id,)
        ).fetchone()
        return source, searchable_title(source, title or found_title), indexed

    def _sync_context(self, doc_id: str) -> None:
        """Re-index the document's passages when its context (title, file name) changed. Their
        searchable heading text changes, so they become new passages (new ids: an id never
        changes its text), with new postings, identifiers and (later) vectors."""
        source, wanted, indexed = self._source_wanted_and_indexed(doc_id)
        if wanted == indexed:
            return
        self._db.execute("UPDATE documents SET context = ? WHERE doc_id = ?", (wanted, doc_id))
        rows = self._db.execute(
            f"SELECT origin, {PASSAGE_COLUMNS} FROM passages WHERE doc_id = ? ORDER BY origin, id", (doc_id,)
        ).fetchall()
        by_origin: dict[str, list[Passage]] = {}
        for origin, *row in rows:
            stored = passage_of(row)
            by_origin.setdefault(origin, []).append(
                Passage.model_construct(**stored.model_dump(exclude={"id", "doc_id"}))
            )
        for origin, passages in by_origin.items():
            self._drop_origin(origin)
            self._insert_unit(origin, source, doc_id, passages, wanted)

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
        source, context, _ = self._source_wanted_and_indexed(doc_id)
        self._insert_unit(name, source, doc_id, passages, context)
        self._db.execute(
            "INSERT OR REPLACE INTO files (name, sha256, pages_without_text) VALUES (?, ?, ?)",
            (name, sha256, ",".join(map(str, pages_without_text))),
        )

    def _insert_unit(
        self, name: str, source: str, doc_id: str, passages: Sequence[Passage], context: str
    ) -> None:
        ids = []
        for passage in passages:
            pid = self._next_id
            self._next_id += 1
            ids.append(pid)
            self._db.execute(
                "INSERT INTO passages (id, doc_id, origin, kind, source, page, section, paragraph, table_no, "
                "row_no, boxes, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    pid,
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
                ),
            )
            heading = searchable_heading(context, passage.section)
            self._added.append((pid, heading, passage.text))
            for column, text in (("section", heading), ("body", passage.text)):
                self._db.executemany(
                    "INSERT OR IGNORE INTO identifiers (passage_id, identifier, col) VALUES (?, ?, ?)",
                    ((pid, code, column) for code in identifiers(text)),
                )
            if len(self._added) >= _COUNT_BATCH:
                self._count_added()
        if ids:
            self._units[name] = (source, ids)
            self._write_units([name])

    def _count_added(self) -> None:
        """Count the terms of the passages written since the last count (their postings, and
        the lengths BM25 needs), and write the rows of the units now fully counted."""
        if self._added:
            self._lengths.update(self._postings.add(self._added))
            self._added = []
            if self._postings.entries >= _FLUSH_ENTRIES:
                self._flush_postings()
        self._write_units()

    def _write_units(self, names: Iterable[str] | None = None) -> None:
        """The `units` rows of the files (`names`, else all waiting) whose passages are all counted."""
        for name in list(self._units if names is None else names):
            source, ids = self._units[name]
            if any(pid not in self._lengths for pid in ids):
                continue
            lengths = [self._lengths.pop(pid) for pid in ids]
            self._db.execute(
                "INSERT OR REPLACE INTO units (name, source, ids, heading, body) VALUES (?, ?, ?, ?, ?)",
                (
                    name,
                    source,
                    np.array(ids, dtype="<i4").tobytes(),
                    np.array([h for h, _ in lengths], dtype="<i4").tobytes(),
                    np.array([b for _, b in lengths], dtype="<i4").tobytes(),
                ),
            )
            del self._units[name]

    def record_catalog(self, sha256: str | None) -> None:
        if sha256 is None:
            self._db.execute("DELETE FROM files WHERE name = ?", (CATALOG_NAME,))
        else:
            self._db.execute(
                "INSERT OR REPLACE INTO files (name, sha256, pages_without_text) VALUES (?, ?, '')",
                (CATALOG_NAME, sha256),
            )

    # --- vectors --------------------------------------------------------------------------------

    def has_vectors(self, model: str) -> bool:
        return model in self._vectors

    def expect_vectors(self, model: str) -> None:
        self._vectors.setdefault(model, vectors.VectorFile("", 0, 0))

    def _embedded_ids(self, model: str) -> npt.NDArray[np.int32]:
        """Rowids that have a row in the model's vector file (committed or written since)."""
        if model not in self._vector_ids:
            rows = self._db.execute(
                "SELECT ids FROM vector_batches WHERE model = ? ORDER BY first_row", (model,)
            ).fetchall()
            self._vector_ids[model] = [np.frombuffer(blob, dtype="<i4") for (blob,) in rows]
        found = self._vector_ids[model]
        return np.concatenate(found) if found else np.zeros(0, np.int32)

    def passages_without_vectors(self, model: str, limit: int | None = None) -> list[Unembedded]:
        live = np.array(
            [pid for (pid,) in self._db.execute("SELECT id FROM passages ORDER BY id")], dtype=np.int64
        )
        missing = live[~np.isin(live, self._embedded_ids(model))][:limit].tolist()
        rows = self._db.execute(
            f"{_UNEMBEDDED} WHERE p.id IN (SELECT value FROM json_each(?)) ORDER BY p.id",
            (json.dumps(missing),),
        ).fetchall()
        return [Unembedded(*row) for row in rows]

    def put_vectors(self, model: str, ids: Sequence[int], vectors_: Vectors) -> None:
        if len(ids) != len(vectors_):
            raise ValueError(f"{len(ids)} ids for {len(vectors_)} vectors")
        if not len(ids):
            return
        chosen = np.asarray(ids, dtype=np.int32)
        if np.isin(chosen, self._embedded_ids(model)).any() or len(np.unique(chosen)) < len(chosen):
            raise ValueError("a passage given a vector has one already")
        state = self._vectors.get(model, vectors.VectorFile("", 0, 0))
        if not state.token:
            self._obsolete.discard(state.token)
            state = vectors.create(self._index, int(vectors_.shape[1]))
        first_row = state.rows
        self._vectors[model] = vectors.append(self._index, state, vectors_)
        self._db.execute(
            "INSERT INTO vector_batches (model, first_row, ids) VALUES (?, ?, ?)",
            (model, first_row, chosen.astype("<i4").tobytes()),
        )
        self._vector_ids.setdefault(model, []).append(chosen)

    def drop_vectors(self, model: str) -> None:
        state = self._vectors.pop(model, None)
        if state is not None and state.token:
            self._obsolete.add(state.token)
        self._vector_ids.pop(model, None)
        self._db.execute("DELETE FROM vector_batches WHERE model = ?", (model,))

    def _compact_vectors(self, live: npt.NDArray[np.bool_]) -> None:
        """Rewrite a vector file without the rows of removed passages once they are a quarter of it."""
        for model, state in list(self._vectors.items()):
            if not state.token or not state.rows:
                continue
            ids = self._embedded_ids(model)
            keep = (ids < len(live)) & live[np.minimum(ids, len(live) - 1)]
            if (len(ids) - keep.sum()) <= _DEAD_VECTORS * len(ids):
                continue
            old = np.memmap(state.path(self._index), dtype="<f4", mode="r", shape=(state.rows, state.width))
            fresh = vectors.create(self._index, state.width)
            rows = np.flatnonzero(keep)
            for start in range(0, len(rows), 65536):
                fresh = vectors.append(self._index, fresh, np.asarray(old[rows[start : start + 65536]]))
            del old
            self._db.execute("DELETE FROM vector_batches WHERE model = ?", (model,))
            if len(rows):
                self._db.execute(
                    "INSERT INTO vector_batches (model, first_row, ids) VALUES (?, 0, ?)",
                    (model, ids[rows].astype("<i4").tobytes()),
                )
            self._vector_ids[model] = [ids[rows]]
            self._obsolete.add(state.token)
            self._vectors[model] = fresh

    def finish(self) -> WriteSummary:
        self._count_added()
        # Documents whose source is gone lose their row; their passages went with their files.
        self._db.execute(
            "DELETE FROM documents WHERE NOT EXISTS "
            "(SELECT 1 FROM passages p WHERE p.doc_id = documents.doc_id) "
            "AND NOT EXISTS (SELECT 1 FROM files f WHERE f.name = documents.source)"
        )
        if self._removed and any(state.rows for state in self._vectors.values()):
            self._compact_vectors(self._live_ids())
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
