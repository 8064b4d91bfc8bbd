"""What both SQL backends read alike, written once: documents, what extraction found, the digest,
the counts `status` reports, passages by id, by location, by page and by a text they contain, and
input files' hashes.

Every statement is written in one dialect, SQLite's, and run by the backend's `_query`:

- parameters are `?`; `x IS ?` is true when both are NULL too;
- a list is one parameter, `Values([...])`, read as `x IN (SELECT value FROM json_each(?))` (or
  `NOT IN`);
- `%` is a character like any other (in `LIKE` patterns);
- `instr(text, ?)` is where a text first holds another, as written (PostgreSQL's `strpos`).

The PostgreSQL store translates this to its own (`IS NOT DISTINCT FROM`, `= ANY(%s)`,
`<> ALL(%s)`, `%s`, `%%`, `strpos`); SQLite runs it as written. What differs on purpose stays in the
backends: their files, transactions and snapshots, how postings and vectors are fetched, how
vectors are searched and counted.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from localqa.store.base import IndexStatus, Scope, StoredPassage
from localqa.store.layout import LayoutStore
from localqa.store.rows import (
    DOCUMENT_COLUMNS,
    FOUND_COLUMNS,
    PASSAGE_COLUMNS,
    document_of,
    found_of,
    status_of,
)
from localqa.types import Document, Found, Location

# A list parameter, as the dialect writes it.
IN_VALUES = "IN (SELECT value FROM json_each(?))"


@dataclass(frozen=True)
class Values:
    """A list given as one parameter (`IN_VALUES`)."""

    items: Sequence[Any]


class SqlStore(LayoutStore):
    """A store that reads its index with SQL in the dialect above."""

    @abstractmethod
    def _query(self, sql: str, *args: Any) -> list[Any]:
        """The rows of one statement in the dialect above, run in this store's snapshot; a
        failure is an IndexUnavailableError naming the index and the fix."""

    @abstractmethod
    def _embedded_counts(self, doc_ids: frozenset[str] | None) -> dict[str, int]:
        """Per model, how many passages of these documents (None: all) have their vector."""

    def _forget(self) -> None:
        super()._forget()
        self.__dict__.pop("_documents", None)
        self.__dict__.pop("_found", None)

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
        rows = self._query("SELECT value FROM meta WHERE key = 'corpus_digest'")
        return str(rows[0][0]) if rows else ""

    def status(self, doc_ids: frozenset[str] | None) -> IndexStatus:
        where, args = "", []
        if doc_ids is not None:
            where, args = f" WHERE doc_id {IN_VALUES}", [Values(sorted(doc_ids))]
        kinds = dict(self._query(f"SELECT kind, count(*) FROM passages{where} GROUP BY kind", *args))
        sidecars = self._query(
            f"SELECT count(DISTINCT origin) FROM passages{where}{' AND' if where else ' WHERE'} "
            "origin LIKE '%.ocr.txt'",
            *args,
        )[0][0]
        meta = dict(self._query("SELECT key, value FROM meta"))
        embedded = self._embedded_counts(doc_ids)
        sources = dict(self._query(f"SELECT source, count(*) FROM passages{where} GROUP BY source", *args))
        return status_of(
            self.path, self._documents, doc_ids, kinds, sidecars, embedded, meta, sources=sources
        )

    def lacks_vectors(self, model: str) -> bool:
        return not self.has_vectors(model) and bool(self._query("SELECT 1 FROM passages LIMIT 1"))

    # --- passages ---------------------------------------------------------------------------

    def _passage_rows(self, stored: Sequence[int]) -> list[Any]:
        return self._query(f"SELECT {PASSAGE_COLUMNS} FROM passages WHERE id {IN_VALUES}", Values(stored))

    def passage_at(self, location: Location) -> StoredPassage | None:
        rows = self._query(
            f"SELECT {PASSAGE_COLUMNS} FROM passages WHERE source = ? AND page IS ? AND kind = ? "
            "AND table_no IS ? AND row_no IS ? AND paragraph IS ? ORDER BY section IS ? DESC, id LIMIT 1",
            location.source,
            location.page,
            location.kind.value,
            location.table,
            location.row,
            location.paragraph,
            # Word, HTML and slide paragraphs are numbered within their section: the one in the
            # citation's section first (a citation that omits its section still finds one).
            location.section,
        )
        return self._numbered(rows)[0] if rows else None

    def page_passages(self, source: str, page: int | None) -> list[StoredPassage]:
        rows = self._query(
            f"SELECT {PASSAGE_COLUMNS} FROM passages WHERE source = ? AND page IS ? ORDER BY id", source, page
        )
        return self._numbered(rows)

    def passages_containing(self, scope: Scope, source: str, text: str, limit: int) -> list[StoredPassage]:
        # `instr` compares as written, case and all (PostgreSQL's `strpos`: `_dialect`), where
        # `LIKE` would fold ASCII case in SQLite and not in PostgreSQL.
        rows = self._query(
            f"SELECT {PASSAGE_COLUMNS} FROM passages WHERE source = ? AND doc_id {IN_VALUES} "
            "AND instr(text, ?) > 0 ORDER BY id LIMIT ?",
            source,
            Values(sorted(scope.doc_ids)),
            text,
            limit,
        )
        return self._numbered(rows)

    def last_page(self, scope: Scope, source: str) -> int | None:
        if not scope.doc_ids:
            return None
        rows = self._query(
            f"SELECT MAX(page) FROM passages WHERE source = ? AND doc_id {IN_VALUES}",
            source,
            Values(sorted(scope.doc_ids)),
        )
        if not rows or rows[0][0] is None:
            return None
        files = self._query("SELECT pages_without_text FROM files WHERE name = ?", source)
        without = [int(n) for n in str(files[0][0]).split(",") if n.strip()] if files else []
        return max([int(rows[0][0]), *without])

    def file_hash(self, name: str) -> str | None:
        rows = self._query("SELECT sha256 FROM files WHERE name = ?", name)
        return str(rows[0][0]) if rows else None
