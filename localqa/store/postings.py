"""Per-term postings for BM25, kept in the index beside FTS5.

For every term, the passages that hold it and how often, in the heading text (document title and
heading path) and in the body, packed as arrays in one row. A query reads one row per term and
scores with numpy, so its cost grows with the postings of its own terms, not with a walk of FTS5's
instance table joined to the passages (hundreds of milliseconds at 100k passages).

Terms are counted by FTS5's own tokenizer (a TEMP scratch table on the writer's connection), so
they are the very terms questions are analysed into.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from localqa.store.tokenizer import TOKENIZE

Ids = npt.NDArray[np.int32]
Counts = npt.NDArray[np.uint16]
_MAX_COUNT = np.iinfo(np.uint16).max


def unpack(ids: bytes, heading: bytes, body: bytes) -> tuple[Ids, Counts, Counts]:
    return (
        np.frombuffer(ids, dtype="<i4").astype(np.int32, copy=False),
        np.frombuffer(heading, dtype="<u2").astype(np.uint16, copy=False),
        np.frombuffer(body, dtype="<u2").astype(np.uint16, copy=False),
    )


class PostingsWriter:
    """Collects the term counts of passages added and the passages removed during one write, and
    rewrites the postings rows of every term they touch when the write finishes."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        db.execute(f"CREATE VIRTUAL TABLE temp.scratch USING fts5(section, body, tokenize='{TOKENIZE}')")
        db.execute("CREATE VIRTUAL TABLE temp.scratch_terms USING fts5vocab(temp, scratch, 'instance')")
        self._vocabulary: dict[str, int] = {}
        self._term = array("i")  # one entry per (term, passage, column): term number ...
        self._passage = array("i")  # ... passage id ...
        self._column = array("b")  # ... 0 heading, 1 body ...
        self._count = array("i")  # ... and how often
        self._added: set[int] = set()  # the passages counted in the arrays above
        self._removed: set[int] = set()
        self._removed_terms: set[str] = set()

    def add(self, passages: Sequence[tuple[int, str, str]]) -> None:
        """Count the terms of (passage id, heading text, body) rows just indexed. The writer
        hands them over in batches: FTS5 counts a thousand passages in one statement far faster
        than one at a time."""
        rows = self._counted(passages)
        if not rows:
            return
        terms, ids, columns, counts = zip(*rows, strict=True)
        vocabulary = self._vocabulary
        # Column by column rather than row by row: a build appends ~150 entries per passage.
        self._term.extend([vocabulary.setdefault(term, len(vocabulary)) for term in terms])
        self._passage.extend(ids)
        self._column.extend(columns)
        self._count.extend(counts)
        self._added.update(ids)

    def remove(self, passages: Sequence[tuple[int, str, str]]) -> None:
        """Forget passages about to be deleted (their id, heading text and body): in the index as
        it was, and among those added earlier in this write (a passage re-indexed twice)."""
        ids = {passage for passage, _, _ in passages}
        if ids & self._added:
            keep = ~np.isin(np.frombuffer(self._passage, dtype=np.int32), np.fromiter(ids, np.int32))
            for name in ("_term", "_passage", "_column", "_count"):
                column = getattr(self, name)
                setattr(
                    self,
                    name,
                    array(column.typecode, np.frombuffer(column, dtype=column.typecode)[keep].tobytes()),
                )
            self._added -= ids
        self._removed |= ids
        self._removed_terms.update(term for term, _, _, _ in self._counted(passages))

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

    def flush(self) -> None:
        """Rewrite the postings of every touched term: its old passages minus the removed ones,
        plus the added ones, in passage-id order."""
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
        starts = np.concatenate(([0], bounds)) if len(new_terms) else np.zeros(0, np.int64)
        ends = np.concatenate((bounds, [len(new_terms)])) if len(new_terms) else np.zeros(0, np.int64)
        ordered = sorted(names)
        added = {
            ordered[int(new_terms[s])]: (s, e) for s, e in zip(starts.tolist(), ends.tolist(), strict=True)
        }
        removed = np.fromiter(self._removed, dtype=np.int32, count=len(self._removed))
        for term in sorted(set(added) | self._removed_terms):
            old = self._db.execute(
                "SELECT passages, heading, body FROM postings WHERE term = ?", (term,)
            ).fetchone()
            start, end = added.get(term, (0, 0))
            ids, heading_counts, body_counts = new_ids[start:end], new_heading[start:end], new_body[start:end]
            if old:
                old_ids, old_heading, old_body = unpack(*old)
                keep = ~np.isin(old_ids, removed)
                ids = np.concatenate((old_ids[keep], ids))
                heading_counts = np.concatenate((old_heading[keep], heading_counts))
                body_counts = np.concatenate((old_body[keep], body_counts))
                order = np.argsort(ids, kind="stable")
                ids, heading_counts, body_counts = ids[order], heading_counts[order], body_counts[order]
            if len(ids):
                self._db.execute(
                    "INSERT OR REPLACE INTO postings (term, passages, heading, body) VALUES (?, ?, ?, ?)",
                    (
                        term,
                        ids.astype("<i4").tobytes(),
                        heading_counts.astype("<u2").tobytes(),
                        body_counts.astype("<u2").tobytes(),
                    ),
                )
            else:
                self._db.execute("DELETE FROM postings WHERE term = ?", (term,))
