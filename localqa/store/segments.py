"""The SQLite index's postings, in segments (`localqa.store.postings` for what a posting is).

A write adds one segment holding the postings of the passages it added, and never rewrites the
postings of passages it did not touch: a refresh that adds a 10-page PDF to a million passages
writes that PDF's postings, not every common term's whole list. Passage ids are never reused, so
the postings of a removed passage can stay where they are until their segment is merged: readers
drop ids that are no longer passages (`localqa.store.layout`). Segments are merged when the newest
one grows to a quarter of the one before (so there are O(log n) of them), and a segment is
rewritten alone once half of its passages are gone.
"""

from __future__ import annotations

import heapq
import itertools
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from localqa.store.postings import CountedTerms, TermCounter, lengths, pack, unpack

# A new segment is merged into the one before it once it holds at least this share of its passages.
MERGE_SHARE = 0.25


class SegmentWriter:
    """Counts the terms of the passages added during one write (and forgets those removed again
    before the write ends), and writes them as a new segment when asked."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._counter = TermCounter(db)
        self._counted = CountedTerms()

    def add(self, passages: Sequence[tuple[int, str, str]]) -> dict[int, tuple[int, int]]:
        """Count the terms of (passage id, heading text, body) rows; returns their lengths, (heading,
        body) by id. The writer hands them over in batches (see `TermCounter.count`)."""
        rows = self._counter.count(passages)
        self._counted.add(rows)
        found = lengths(rows)
        return {pid: found.get(pid, (0, 0)) for pid, _, _ in passages}

    def forget(self, ids: Iterable[int]) -> None:
        """Drop passages counted earlier in this write that are being removed again."""
        self._counted.forget(ids)

    @property
    def entries(self) -> int:
        """(term, passage, column) entries counted and not written yet: what the memory holds."""
        return self._counted.entries

    def flush(self, segment: int) -> Segment | None:
        """Write the counted postings as `segment` (one row per term) and record it; returns it
        (None: nothing was added, nothing written)."""
        counted, self._counted = self._counted, CountedTerms()
        if not counted.added:
            return None
        new = counted.grouped()
        self._db.executemany(
            "INSERT INTO postings (term, segment, passages, heading, body) VALUES (?, ?, ?, ?, ?)",
            (
                (term, segment, *pack(new.ids[s:e], new.heading[s:e], new.body[s:e]))
                for term, (s, e) in zip(new.terms, new.spans, strict=True)
            ),
        )
        written = Segment(segment, min(counted.added), max(counted.added), len(counted.added), 0)
        self._db.execute(
            "INSERT INTO segments (segment, first_id, last_id, passages, dead) VALUES (?, ?, ?, ?, 0)",
            (written.number, written.first_id, written.last_id, written.passages),
        )
        return written


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
