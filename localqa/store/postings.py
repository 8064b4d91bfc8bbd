"""Per-term postings for BM25, in segments.

For every term, the passages that hold it and how often, in the heading text (document title and
heading path) and in the body, packed as arrays in one row per term and segment. A query reads a
term's few rows and scores with numpy, so its cost grows with the postings of its own terms.

A write adds one segment holding the postings of the passages it added, and never rewrites the
postings of passages it did not touch: a refresh that adds a 10-page PDF to a million passages
writes that PDF's postings, not every common term's whole list. Passage ids are never reused, so
the postings of a removed passage can stay where they are until their segment is merged: readers
drop ids that are no longer passages (`localqa.store.sqlite`). Segments are merged when the newest
one grows to a quarter of the one before (so there are O(log n) of them), and a segment is
rewritten alone once half of its passages are gone.

Terms are counted by FTS5's own tokenizer (a TEMP scratch table on the writer's connection), so
they are the very terms questions are analysed into; the same count gives each passage's length.
"""

from __future__ import annotations

import heapq
import itertools
import sqlite3
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from localqa.store.tokenizer import TOKENIZE

Ids = npt.NDArray[np.int32]
Counts = npt.NDArray[np.uint16]
_MAX_COUNT = np.iinfo(np.uint16).max
# A new segment is merged into the one before it once it holds at least this share of its passages.
MERGE_SHARE = 0.25


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


def read(db: sqlite3.Connection, term: str) -> tuple[Ids, Counts, Counts]:
    """A term's postings over every segment (ids of removed passages included)."""
    rows = db.execute("SELECT passages, heading, body FROM postings WHERE term = ?", (term,)).fetchall()
    if len(rows) == 1:
        return unpack(*rows[0])
    parts = [unpack(*row) for row in rows]
    if not parts:
        return np.zeros(0, np.int32), np.zeros(0, np.uint16), np.zeros(0, np.uint16)
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]),
    )


@dataclass(frozen=True)
class Lengths:
    """Token counts of passages just counted: heading text and body, by passage id."""

    heading: dict[int, int]
    body: dict[int, int]


class PostingsWriter:
    """Counts the terms of the passages added during one write (and forgets those removed again
    before the write ends), and writes them as a new segment when the write commits."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        db.execute(f"CREATE VIRTUAL TABLE temp.scratch USING fts5(section, body, tokenize='{TOKENIZE}')")
        db.execute("CREATE VIRTUAL TABLE temp.scratch_terms USING fts5vocab(temp, scratch, 'instance')")
        self._reset()

    def _reset(self) -> None:
        self._vocabulary: dict[str, int] = {}
        self._term = array("i")  # one entry per (term, passage, column): term number ...
        self._passage = array("i")  # ... passage id ...
        self._column = array("b")  # ... 0 heading, 1 body ...
        self._count = array("i")  # ... and how often
        self._added: set[int] = set()  # the passages counted in the arrays above

    def add(self, passages: Sequence[tuple[int, str, str]]) -> Lengths:
        """Count the terms of (passage id, heading text, body) rows; returns their lengths. The
        writer hands them over in batches: FTS5 counts a thousand passages in one statement far
        faster than one at a time."""
        rows = self._counted(passages)
        lengths = Lengths({pid: 0 for pid, _, _ in passages}, {pid: 0 for pid, _, _ in passages})
        if not rows:
            return lengths
        terms, ids, columns, counts = zip(*rows, strict=True)
        for pid, column, count in zip(ids, columns, counts, strict=True):
            side = lengths.body if column else lengths.heading
            side[pid] += count
        vocabulary = self._vocabulary
        # Column by column rather than row by row: a build appends ~150 entries per passage.
        self._term.extend([vocabulary.setdefault(term, len(vocabulary)) for term in terms])
        self._passage.extend(ids)
        self._column.extend(columns)
        self._count.extend(counts)
        self._added.update(ids)
        return lengths

    def forget(self, ids: Iterable[int]) -> None:
        """Drop passages counted earlier in this write that are being removed again (a passage
        re-indexed twice in one write)."""
        gone = self._added.intersection(ids)
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
        self._added -= gone

    def _counted(self, passages: Sequence[tuple[int, str, str]]) -> list[tuple[str, int, int, int]]:
        """(term, passage id, column: 0 heading or 1 body, count) of every term in `passages`."""
        if not passages:
            return []
        self._db.executemany("INSERT INTO temp.scratch (rowid, section, body) VALUES (?, ?, ?)", passages)
        rows: list[tuple[str, int, int, int]] = self._db.execute(
            "SELECT term, doc, col = 'body', count(*) FROM temp.scratch_terms GROUP BY term, doc, col"
        ).fetchall()
        self._db.execute("DELETE FROM temp.scratch")
        return rows

    @property
    def entries(self) -> int:
        """(term, passage, column) entries counted and not written yet: what the memory holds."""
        return len(self._term)

    def flush(self, segment: int) -> Segment | None:
        """Write the counted postings as `segment` (one row per term) and record it; returns it
        (None: nothing was added, nothing written)."""
        if not self._added:
            self._reset()
            return None
        names = list(self._vocabulary)
        terms = np.frombuffer(self._term, dtype=np.int32)
        passages = np.frombuffer(self._passage, dtype=np.int32)
        columns = np.frombuffer(self._column, dtype=np.int8)
        counts = np.frombuffer(self._count, dtype=np.int32)
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
        starts = np.concatenate(([0], bounds)).tolist()
        ends = np.concatenate((bounds, [len(new_terms)])).tolist()
        self._db.executemany(
            "INSERT INTO postings (term, segment, passages, heading, body) VALUES (?, ?, ?, ?, ?)",
            (
                (names[int(new_terms[s])], segment, *pack(new_ids[s:e], new_heading[s:e], new_body[s:e]))
                for s, e in zip(starts, ends, strict=True)
            ),
        )
        written = Segment(segment, min(self._added), max(self._added), len(self._added), 0)
        self._db.execute(
            "INSERT INTO segments (segment, first_id, last_id, passages, dead) VALUES (?, ?, ?, ?, 0)",
            (written.number, written.first_id, written.last_id, written.passages),
        )
        self._reset()
        return written


# --- segments ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Segment:
    number: int
    first_id: int  # the passage ids it was written with lie in [first_id, last_id]
    last_id: int
    passages: int
    dead: int  # of those, passages removed since


def segments(db: sqlite3.Connection) -> list[Segment]:
    return [
        Segment(*row)
        for row in db.execute(
            "SELECT segment, first_id, last_id, passages, dead FROM segments ORDER BY first_id"
        )
    ]


def count_removed(db: sqlite3.Connection, ids: Sequence[int]) -> None:
    """Passages removed: each segment that holds their postings counts them as dead."""
    if not ids:
        return
    found = segments(db)
    firsts = np.array([s.first_id for s in found], dtype=np.int64)
    where = np.searchsorted(firsts, np.asarray(ids, dtype=np.int64), side="right") - 1
    for index, dead in zip(*np.unique(where[where >= 0], return_counts=True), strict=True):
        db.execute(
            "UPDATE segments SET dead = dead + ? WHERE segment = ?", (int(dead), found[int(index)].number)
        )


def merge(db: sqlite3.Connection, chosen: list[Segment], into: int, live: npt.NDArray[np.bool_]) -> None:
    """Rewrite `chosen` as one segment `into`, without the postings of removed passages."""
    _merge(db, chosen, into, live)


def compact(db: sqlite3.Connection, live_ids: Callable[[], npt.NDArray[np.bool_]], next_segment: int) -> int:
    """Merge segments as the policy in the module docstring says, dropping the postings of
    removed passages (`live_ids()[id]` is False for them: asked for only when something is to be
    merged); returns the next free segment number."""
    live: npt.NDArray[np.bool_] | None = None
    while True:
        found = segments(db)
        alive = [s.passages - s.dead for s in found]
        if len(found) >= 2 and alive[-1] >= MERGE_SHARE * alive[-2]:
            chosen = found[-2:]
        else:
            chosen = [s for s in found if s.dead * 2 > s.passages][:1]
        if not chosen:
            return next_segment
        if live is None:
            live = live_ids()
        _merge(db, chosen, next_segment, live)
        next_segment += 1


def _merge(db: sqlite3.Connection, chosen: list[Segment], into: int, live: npt.NDArray[np.bool_]) -> None:
    """Rewrite `chosen` as one segment `into`, term by term: each segment is read in term order
    and the readings are merged, so a merge of the largest segments holds one term's postings at
    a time, and a merge of small ones reads only their rows."""
    numbers = [s.number for s in chosen]
    readings = [
        db.execute(
            "SELECT term, ?, passages, heading, body FROM postings WHERE segment = ? ORDER BY term",
            (order, number),
        )
        for order, number in enumerate(numbers)
    ]
    # Rows are written under `into`, which none of the readings selects.
    insert = db.cursor()
    for term, group in itertools.groupby(
        heapq.merge(*readings, key=lambda row: (row[0], row[1])), key=lambda row: row[0]
    ):
        parts = [unpack(*row[2:]) for row in group]
        ids = np.concatenate([p[0] for p in parts])
        keep = (ids < len(live)) & live[np.minimum(ids, len(live) - 1)]
        if keep.any():
            heading = np.concatenate([p[1] for p in parts])
            body = np.concatenate([p[2] for p in parts])
            insert.execute(
                "INSERT INTO postings (term, segment, passages, heading, body) VALUES (?, ?, ?, ?, ?)",
                (term, into, *pack(ids[keep], heading[keep], body[keep])),
            )
    for number in numbers:
        db.execute("DELETE FROM postings WHERE segment = ?", (number,))
        db.execute("DELETE FROM segments WHERE segment = ?", (number,))
    first, last = min(s.first_id for s in chosen), max(s.last_id for s in chosen)
    alive = int(live[first : last + 1].sum())
    if alive:
        db.execute(
            "INSERT INTO segments (segment, first_id, last_id, passages, dead) VALUES (?, ?, ?, ?, 0)",
            (into, first, last, alive),
        )
