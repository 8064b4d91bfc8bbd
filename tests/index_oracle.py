"""What an index's side tables must say, recomputed from its passages alone (either backend).

The oracle tokenizes every passage afresh (its heading text as indexed: the document's context
and the passage's heading path, then its text) with FTS5's own tokenizer, in a scratch table of
its own. After any sequence of writes, the postings of the live passages (SQLite: all segments
together) and each passage's token counts (SQLite: its input file's row in `units`; PostgreSQL:
the passage's row) must be exactly that: incremental bookkeeping (segments, merges, removed ids
left behind) may never show.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from contextlib import closing
from pathlib import Path

import numpy as np
from backends import query

from localqa.indexing.catalog import searchable_heading
from localqa.language.tokenizer import TOKENIZE
from localqa.store import Db, postgres_url
from localqa.store.postings import unpack

Counts = dict[str, dict[int, tuple[int, int]]]  # term -> passage id -> (heading count, body count)


def _read(db: Db, sql: str, *args: object) -> list[tuple[object, ...]]:
    return query(db, sql, *args)


def live_ids(db: Db) -> set[int]:
    return {int(row[0]) for row in _read(db, "SELECT id FROM passages")}  # type: ignore[call-overload]


def stored_postings(db: Db) -> Counts:
    """Every term's postings over all segments, restricted to passages that exist (a removed
    passage's postings may stay behind until its segment is merged: readers skip them)."""
    live = live_ids(db)
    found: defaultdict[str, dict[int, tuple[int, int]]] = defaultdict(dict)
    order = "term" if postgres_url(db) else "term, segment"
    for term, *blobs in _read(db, f"SELECT term, passages, heading, body FROM postings ORDER BY {order}"):
        ids, heading, body = unpack(*map(bytes, blobs))  # type: ignore[call-overload]
        for pid, h, b in zip(ids.tolist(), heading.tolist(), body.tolist(), strict=True):
            assert pid not in found[str(term)], f"{term}: passage {pid} in two segments"
            if pid in live:
                found[str(term)][pid] = (h, b)
    return {term: by_id for term, by_id in found.items() if by_id}


def _tokenized(db: Db) -> tuple[Counts, dict[int, tuple[int, int]]]:
    rows = _read(
        db,
        "SELECT p.id, d.context, p.section, p.text FROM passages p JOIN documents d ON d.doc_id = p.doc_id",
    )
    counts: defaultdict[str, defaultdict[int, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    lengths: dict[int, list[int]] = {int(row[0]): [0, 0] for row in rows}  # type: ignore[call-overload]
    with closing(sqlite3.connect(":memory:")) as scratch:
        scratch.execute(f"CREATE VIRTUAL TABLE t USING fts5(section, body, tokenize='{TOKENIZE}')")
        scratch.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        scratch.executemany(
            "INSERT INTO t (rowid, section, body) VALUES (?, ?, ?)",
            ((pid, searchable_heading(str(context), section), text) for pid, context, section, text in rows),  # type: ignore[arg-type]
        )
        for term, pid, column, count in scratch.execute(
            "SELECT term, doc, col, count(*) FROM v GROUP BY term, doc, col"
        ):
            side = 0 if column == "section" else 1
            counts[term][pid][side] = count
            lengths[pid][side] += count
    return (
        {term: {pid: (h, b) for pid, (h, b) in by_id.items()} for term, by_id in counts.items()},
        {pid: (h, b) for pid, (h, b) in lengths.items()},
    )


def oracle(db: Db) -> Counts:
    """Every term's postings as a fresh tokenization of the live passages gives them."""
    return _tokenized(db)[0]


def passages_with(db: Db, word: str) -> set[int]:
    """The passages whose postings hold `word` (stemmed as the index stems)."""
    from localqa.language.tokenizer import tokenizer

    (term,) = tokenizer().tokens(word)
    return set(stored_postings(db).get(term, {}))


def assert_consistent(db: Db) -> None:
    """The side tables agree with `passages`, every passage has its document, the database is
    happy."""
    ids = live_ids(db)
    assert {row[0] for row in _read(db, "SELECT passage_id FROM identifiers")} <= ids
    orphans = _read(db, "SELECT id, origin FROM passages WHERE doc_id NOT IN (SELECT doc_id FROM documents)")
    assert orphans == []
    terms, lengths = _tokenized(db)
    assert stored_postings(db) == terms
    if postgres_url(db) is not None:
        assert {row[0] for row in _read(db, "SELECT passage_id FROM embeddings")} <= ids
        assert (
            dict((pid, (h, b)) for pid, h, b in _read(db, "SELECT id, section_len, body_len FROM passages"))
            == lengths
        )
        return
    assert _read(db, "PRAGMA integrity_check") == [("ok",)]
    # One row per input file in `units`, listing its passages in order, with their lengths.
    origins = dict(_read(db, "SELECT id, origin FROM passages"))
    listed: dict[int, tuple[int, int]] = {}
    for name, source, *blobs in _read(db, "SELECT name, source, ids, heading, body FROM units"):
        unit_ids, heading, body = (np.frombuffer(blob, dtype="<i4").tolist() for blob in blobs)  # type: ignore[call-overload]
        assert unit_ids == sorted(unit_ids) and {origins[pid] for pid in unit_ids} == {name}
        assert {
            row[0] for row in _read(db, "SELECT DISTINCT source FROM passages WHERE origin = ?", name)
        } == {source}
        listed.update(zip(unit_ids, zip(heading, body, strict=True), strict=True))
    assert listed == lengths


def index_files(folder: Path) -> list[str]:
    """The files in `folder`, without SQLite's write-ahead log and its index (`-wal`, `-shm`):
    they come and go with the connections that read the index."""
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(("-wal", "-shm")))
