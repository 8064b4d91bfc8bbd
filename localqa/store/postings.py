"""Per-term postings for BM25, kept in the index.

For every term, the passages that hold it and how often, in the heading text (document title and
heading path) and in the body, packed as arrays. A query reads a term's rows and scores with
numpy, so its cost grows with the postings of its own terms.

Terms are counted by FTS5's own tokenizer (`TermCounter`, a TEMP scratch table on a SQLite
connection), so they are the very terms questions are analysed into, whichever backend keeps the
rows. The same count gives each passage's length (`lengths`).

Two ways of keeping them: one row per term, rewritten whole by each write that touches the term
(`PostingsWriter` over a `PostingsTable`: PostgreSQL, whose refresh is one transaction), or in
segments, one per write, merged as they grow (`localqa.store.segments`: SQLite, refreshed in
place, where a write never rewrites the postings of passages it did not touch).
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from localqa.language.tokenizer import TOKENIZE

Ids = npt.NDArray[np.int32]
Counts = npt.NDArray[np.uint16]
Counted = tuple[str, int, int, int]  # (term, passage id, column: 0 heading or 1 body, count)
PackedRow = tuple[str, bytes, bytes, bytes]  # (term, passage ids, heading counts, body counts)
_MAX_COUNT = np.iinfo(np.uint16).max
# Terms whose rows are read and rewritten together when a write finishes: one statement per term
# costs a round trip each on a server; all of them at once could hold the whole table in memory.
_FLUSH_BATCH = 2000


def unpack(ids: bytes, heading: bytes, body: bytes) -> tuple[Ids, Counts, Counts]:
    return (
        np.frombuffer(ids, dtype="<i4").astype(np.int32, copy=False),
        np.frombuffer(heading, dtype="<u2").astype(np.uint16, copy=False),
        np.frombuffer(body, dtype="<u2").astype(np.uint16, copy=False),
    )


def pack(
    ids: npt.NDArray[np.integer], heading: npt.NDArray[np.integer], body: npt.NDArray[np.integer]
) -> tuple[bytes, bytes, bytes]:
    return ids.astype("<i4").tobytes(), heading.astype("<u2").tobytes(), body.astype("<u2").tobytes()


class TermCounter:
    """Counts the terms of passages with FTS5's `TOKENIZE`, in a TEMP scratch table on `db`: the
    SQLite index's own connection, or (None) a private in-memory database."""

    def __init__(self, db: sqlite3.Connection | None = None) -> None:
        self._db = db if db is not None else sqlite3.connect(":memory:")
        self._db.execute(
            f"CREATE VIRTUAL TABLE temp.scratch USING fts5(section, body, tokenize='{TOKENIZE}')"
        )
        self._db.execute("CREATE VIRTUAL TABLE temp.scratch_terms USING fts5vocab(temp, scratch, 'instance')")

    def count(self, passages: Sequence[tuple[int, str, str]]) -> list[Counted]:
        """(term, passage id, column, count) of every term in (passage id, heading text, body)
        rows: FTS5 counts a thousand passages in one statement far faster than one at a time."""
        if not passages:
            return []
        self._db.executemany("INSERT INTO temp.scratch (rowid, section, body) VALUES (?, ?, ?)", passages)
        rows: list[Counted] = self._db.execute(
            "SELECT term, doc, col = 'body', count(*) FROM temp.scratch_terms GROUP BY term, doc, col"
        ).fetchall()
        self._db.execute("DELETE FROM temp.scratch")
        return rows


def lengths(counted: Sequence[Counted]) -> dict[int, tuple[int, int]]:
    """Each passage's length in tokens, (heading, body), from its counted terms: what FTS5's
    docsize record holds for it."""
    found: dict[int, list[int]] = {}
    for _, passage, column, count in counted:
        found.setdefault(passage, [0, 0])[column] += count
    return {passage: (heading, body) for passage, (heading, body) in found.items()}


class PostingsTable(Protocol):
    """Where a backend keeps the packed rows."""

    def read(self, terms: Sequence[str]) -> dict[str, tuple[bytes, bytes, bytes]]: ...

    def write(self, rows: Sequence[PackedRow]) -> None: ...

    def delete(self, terms: Sequence[str]) -> None: ...


@dataclass(frozen=True)
class Grouped:
    """Counted postings collapsed to one per (term, passage), terms in name order, passages in
    id order within a term: `terms[i]` is `ids[spans[i][0]:spans[i][1]]`'s term."""

    terms: list[str]
    spans: list[tuple[int, int]]
    ids: Ids
    heading: Counts
    body: Counts


class CountedTerms:
    """The term counts of the passages added during one write, as flat arrays (a build appends
    ~150 entries per passage: no per-passage objects), until they are written out."""

    def __init__(self) -> None:
        self._vocabulary: dict[str, int] = {}
        self._term = array("i")  # one entry per (term, passage, column): term number ...
        self._passage = array("i")  # ... passage id ...
        self._column = array("b")  # ... 0 heading, 1 body ...
        self._count = array("i")  # ... and how often
        self.added: set[int] = set()  # the passages counted in the arrays above

    @property
    def entries(self) -> int:
        """(term, passage, column) entries held: what the memory holds."""
        return len(self._term)

    def add(self, rows: Sequence[Counted]) -> None:
        if not rows:
            return
        terms, ids, columns, counts = zip(*rows, strict=True)
        vocabulary = self._vocabulary
        # Column by column rather than row by row.
        self._term.extend([vocabulary.setdefault(term, len(vocabulary)) for term in terms])
        self._passage.extend(ids)
        self._column.extend(columns)
        self._count.extend(counts)
        self.added.update(ids)

    def forget(self, ids: Iterable[int]) -> None:
        """Drop passages counted earlier that are being removed again (a passage re-indexed twice
        in one write)."""
        gone = self.added.intersection(ids)
        if not gone:
            return
        keep = ~np.isin(np.frombuffer(self._passage, dtype=np.int32), np.fromiter(gone, np.int32))
        for name in ("_term", "_passage", "_column", "_count"):
            column = getattr(self, name)
            setattr(
                self,
                name,
                array(column.typecode, np.frombuffer(column, dtype=column.typecode)[keep].tobytes()),
            )
        self.added -= gone

    def grouped(self) -> Grouped:
        names = list(self._vocabulary)
        # Terms numbered in name order, so that sorting by number below writes them in that order.
        by_name = np.zeros(len(names), dtype=np.int32)
        by_name[np.argsort(np.array(names, dtype=object), kind="stable")] = np.arange(
            len(names), dtype=np.int32
        )
        terms = by_name[np.frombuffer(self._term, dtype=np.int32)] if self._term else np.zeros(0, np.int32)
        passages = np.frombuffer(self._passage, dtype=np.int32) if self._passage else np.zeros(0, np.int32)
        columns = np.frombuffer(self._column, dtype=np.int8) if self._column else np.zeros(0, np.int8)
        counts = np.frombuffer(self._count, dtype=np.int32) if self._count else np.zeros(0, np.int32)
        order = np.lexsort((passages, terms))
        terms, passages, columns, counts = terms[order], passages[order], columns[order], counts[order]
        del order
        # One posting per (term, passage) with its heading and body counts, for every term at
        # once: numpy calls per term cost more than the rest of a build's flush.
        first = np.ones(len(terms), dtype=bool)
        first[1:] = (terms[1:] != terms[:-1]) | (passages[1:] != passages[:-1])
        posting = np.cumsum(first) - 1
        heading = np.zeros(int(first.sum()), dtype=np.int64)
        body = np.zeros(len(heading), dtype=np.int64)
        np.add.at(heading, posting[columns == 0], counts[columns == 0])
        np.add.at(body, posting[columns == 1], counts[columns == 1])
        clip = np.uint16(_MAX_COUNT)
        new_heading = np.minimum(heading, clip).astype(np.uint16)
        new_body = np.minimum(body, clip).astype(np.uint16)
        new_ids, new_terms = passages[first], terms[first]
        del terms, passages, columns, counts, first, posting, heading, body
        bounds = np.flatnonzero(np.diff(new_terms)) + 1
        starts = np.concatenate(([0], bounds)).tolist() if len(new_terms) else []
        ends = np.concatenate((bounds, [len(new_terms)])).tolist() if len(new_terms) else []
        ordered = sorted(names)
        return Grouped(
            [ordered[int(new_terms[s])] for s in starts],
            list(zip(starts, ends, strict=True)),
            new_ids,
            new_heading,
            new_body,
        )


class PostingsWriter:
    """Collects the term counts of passages added and the passages removed during one write, and
    rewrites the postings rows of every term they touch when the write finishes."""

    def __init__(self, counter: TermCounter, table: PostingsTable) -> None:
        self._counter = counter
        self._table = table
        self._counted = CountedTerms()
        self._removed: set[int] = set()
        self._removed_terms: set[str] = set()

    def add(self, passages: Sequence[tuple[int, str, str]]) -> list[Counted]:
        """Count the terms of (passage id, heading text, body) rows just indexed, and return
        the counts. The writer hands them over in batches (see `TermCounter.count`)."""
        rows = self._counter.count(passages)
        self._counted.add(rows)
        return rows

    def remove(self, passages: Sequence[tuple[int, str, str]]) -> None:
        """Forget passages about to be deleted (their id, heading text and body): in the index as
        it was, and among those added earlier in this write (a passage re-indexed twice)."""
        ids = {passage for passage, _, _ in passages}
        self._counted.forget(ids)
        self._removed |= ids
        self._removed_terms.update(term for term, _, _, _ in self._counter.count(passages))

    def flush(self) -> None:
        """Rewrite the postings of every touched term: its old passages minus the removed ones,
        plus the added ones, in passage-id order; then start over (a write may flush again)."""
        new = self._counted.grouped()
        added = dict(zip(new.terms, new.spans, strict=True))
        removed = np.fromiter(self._removed, dtype=np.int32, count=len(self._removed))
        touched = sorted(set(added) | self._removed_terms)
        self._counted, self._removed, self._removed_terms = CountedTerms(), set(), set()
        for start in range(0, len(touched), _FLUSH_BATCH):
            batch = touched[start : start + _FLUSH_BATCH]
            old_rows = self._table.read(batch)
            written: list[PackedRow] = []
            emptied: list[str] = []
            for term in batch:
                first, last = added.get(term, (0, 0))
                ids, heading_counts, body_counts = (
                    new.ids[first:last],
                    new.heading[first:last],
                    new.body[first:last],
                )
                old = old_rows.get(term)
                if old:
                    old_ids, old_heading, old_body = unpack(*old)
                    keep = ~np.isin(old_ids, removed)
                    ids = np.concatenate((old_ids[keep], ids))
                    heading_counts = np.concatenate((old_heading[keep], heading_counts))
                    body_counts = np.concatenate((old_body[keep], body_counts))
                    order = np.argsort(ids, kind="stable")
                    ids, heading_counts, body_counts = ids[order], heading_counts[order], body_counts[order]
                if len(ids):
                    written.append((term, *pack(ids, heading_counts, body_counts)))
                elif old:
                    emptied.append(term)
            self._table.write(written)
            self._table.delete(emptied)
