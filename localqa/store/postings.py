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
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from localqa.store.tokenizer import TOKENIZE

Ids = npt.NDArray[np.int32]
Counts = npt.NDArray[np.uint16]
_COLUMNS = {"section": 0, "body": 1}
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
        """Count the terms of (passage id, heading text, body) rows just indexed."""
        for term, passage, column, count in self._counted(passages):
            number = self._vocabulary.setdefault(term, len(self._vocabulary))
            self._term.append(number)
            self._passage.append(passage)
            self._column.append(_COLUMNS[column])
            self._count.append(count)
            self._added.add(passage)

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

    def _counted(self, passages: Sequence[tuple[int, str, str]]) -> Iterable[tuple[str, int, str, int]]:
        if not passages:
            return []
        self._db.executemany("INSERT INTO temp.scratch (rowid, section, body) VALUES (?, ?, ?)", passages)
        rows: list[tuple[str, int, str, int]] = self._db.execute(
            "SELECT term, doc, col, count(*) FROM temp.scratch_terms GROUP BY term, doc, col"
        ).fetchall()
        self._db.execute("DELETE FROM temp.scratch")
        return rows

    def flush(self) -> None:
        """Rewrite the postings of every touched term: its old passages minus the removed ones,
        plus the added ones, in passage-id order."""
        terms = np.frombuffer(self._term, dtype=np.int32) if self._term else np.zeros(0, np.int32)
        passages = np.frombuffer(self._passage, dtype=np.int32) if self._passage else np.zeros(0, np.int32)
        columns = np.frombuffer(self._column, dtype=np.int8) if self._column else np.zeros(0, np.int8)
        counts = np.frombuffer(self._count, dtype=np.int32) if self._count else np.zeros(0, np.int32)
        order = np.lexsort((passages, terms))
        terms, passages, columns, counts = terms[order], passages[order], columns[order], counts[order]
        bounds = np.flatnonzero(np.diff(terms)) + 1
        starts = np.concatenate(([0], bounds)) if len(terms) else np.zeros(0, np.int64)
        ends = np.concatenate((bounds, [len(terms)])) if len(terms) else np.zeros(0, np.int64)
        names = list(self._vocabulary)
        added = {names[terms[s]]: (s, e) for s, e in zip(starts, ends, strict=True)}
        removed = np.fromiter(self._removed, dtype=np.int32, count=len(self._removed))
        for term in sorted(set(added) | self._removed_terms):
            old = self._db.execute(
                "SELECT passages, heading, body FROM postings WHERE term = ?", (term,)
            ).fetchone()
            ids, heading, body = (
                unpack(*old) if old else (np.zeros(0, np.int32),) + (np.zeros(0, np.uint16),) * 2
            )
            keep = ~np.isin(ids, removed)
            ids, heading, body = ids[keep], heading[keep], body[keep]
            if term in added:
                start, end = added[term]
                new_ids, new_heading, new_body = _merge_columns(
                    passages[start:end], columns[start:end], counts[start:end]
                )
                ids = np.concatenate((ids, new_ids))
                heading = np.concatenate((heading, new_heading))
                body = np.concatenate((body, new_body))
                order = np.argsort(ids, kind="stable")
                ids, heading, body = ids[order], heading[order], body[order]
            if len(ids):
                self._db.execute(
                    "INSERT OR REPLACE INTO postings (term, passages, heading, body) VALUES (?, ?, ?, ?)",
                    (
                        term,
                        ids.astype("<i4").tobytes(),
                        heading.astype("<u2").tobytes(),
                        body.astype("<u2").tobytes(),
                    ),
                )
            else:
                self._db.execute("DELETE FROM postings WHERE term = ?", (term,))


def _merge_columns(
    passages: npt.NDArray[np.int32], columns: npt.NDArray[np.int8], counts: npt.NDArray[np.int32]
) -> tuple[Ids, Counts, Counts]:
    """One row per passage from rows per (passage, column), sorted by passage."""
    ids, index = np.unique(passages, return_inverse=True)
    heading = np.zeros(len(ids), dtype=np.int64)
    body = np.zeros(len(ids), dtype=np.int64)
    np.add.at(heading, index[columns == 0], counts[columns == 0])
    np.add.at(body, index[columns == 1], counts[columns == 1])
    clip = np.uint16(_MAX_COUNT)
    return (
        ids.astype(np.int32),
        np.minimum(heading, clip).astype(np.uint16),
        np.minimum(body, clip).astype(np.uint16),
    )
