"""The postings table (localqa/store/postings.py) always says what FTS5 itself holds.

The oracle is FTS5's own instance table in the same file (`passages_terms`: one row per token,
with its passage and column): after any sequence of writes, every term's postings must be
exactly its per-passage, per-column counts there. The writes below cross the writer's counting
batches, replace and remove files (so that rowids are reused), re-index a document's passages
when its title changes, and drop a passage added earlier in the same write.

PostgreSQL has no FTS5: the same writes made to both backends must leave it the very postings,
passage ids and lengths of the SQLite index, which holds what FTS5 holds.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections import defaultdict
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from backends import query

from localqa.store import Db, writing
from localqa.store import postgres as store_postgres
from localqa.store import sqlite as store_sqlite
from localqa.store.base import Writer
from localqa.store.postings import unpack
from localqa.types import Document, Kind, Passage

WORDS = "alpha beta gamma delta epsilon loan limit deposit scanner drawer cash staff desk".split()


def passage(source: str, number: int, salt: int = 0) -> Passage:
    words = [WORDS[(number * 7 + i * 3 + salt) % len(WORDS)] for i in range(3 + number % 5)]
    return Passage(
        kind=Kind.PROSE,
        source=source,
        page=1,
        section=f"Section {WORDS[number % len(WORDS)]}",
        text=" ".join(words) + f" EQ-{number % 9}.",
        paragraph=number + 1,
    )


def document(name: str, title: str | None = None) -> Document:
    return Document(doc_id=name, source=f"{name}.txt", series=name, title=title)


def put(writer: Writer, name: str, count: int, salt: int = 0) -> None:
    source = f"{name}.txt"
    sha = hashlib.sha256(f"{name}{count}{salt}".encode()).hexdigest()
    writer.replace_unit(source, sha, name, [passage(source, i, salt) for i in range(count)], ())


def postings(db: Db) -> dict[str, dict[int, tuple[int, int]]]:
    rows = query(db, "SELECT term, passages, heading, body FROM postings")
    found: dict[str, dict[int, tuple[int, int]]] = {}
    for term, *blobs in rows:
        ids, heading, body = unpack(*map(bytes, blobs))
        found[term] = {
            pid: (h, b) for pid, h, b in zip(ids.tolist(), heading.tolist(), body.tolist(), strict=True)
        }
        assert ids.tolist() == sorted(ids.tolist()), term
    return found


def oracle(db: Path) -> dict[str, dict[int, tuple[int, int]]]:
    counts: defaultdict[str, defaultdict[int, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    with closing(sqlite3.connect(db)) as connection:
        for term, pid, column, count in connection.execute(
            "SELECT term, doc, col, count(*) FROM passages_terms GROUP BY term, doc, col"
        ):
            counts[term][pid][0 if column == "section" else 1] = count
    return {term: {pid: (h, b) for pid, (h, b) in by_id.items()} for term, by_id in counts.items()}


Seen = tuple[dict[str, dict[int, tuple[int, int]]], list[tuple[int, ...]]]


def write_the_sequence(db: Db, check: bool = True) -> list[Seen]:
    """The writes; after each, the postings and every passage's id and lengths. `check`: each
    time, the postings are what FTS5 holds (SQLite)."""
    seen: list[Seen] = []

    def look() -> None:
        found = postings(db)
        if check:
            assert found == oracle(db)
        seen.append((found, query(db, "SELECT id, section_len, body_len FROM passages ORDER BY id")))

    with writing(db, rebuild=True) as writer:
        writer.put_documents([document("a"), document("b"), document("c"), document("one")], ())
        put(writer, "a", 30)
        put(writer, "b", 3)
        put(writer, "one", 1)
        put(writer, "one", 2, salt=1)  # the same file twice in one write: the first is dropped
        put(writer, "c", 5)
        writer.finish()
    look()

    with writing(db) as writer:
        # A new title re-indexes every passage of "a" (its heading text changes).
        writer.put_documents([document("a", title="Delta handbook"), document("d")], ())
        writer.remove_files(["c.txt"])  # the highest ids: the next passages reuse them
        put(writer, "b", 4, salt=2)
        put(writer, "d", 12, salt=3)
        writer.finish()
    look()

    with writing(db) as writer:
        writer.remove_files(["a.txt", "b.txt", "d.txt", "one.txt"])
        writer.finish()
    look()
    return seen


def test_postings_match_fts5_after_builds_replacements_removals_and_reindexing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Small batches, so that every write below spans several of them.
    monkeypatch.setattr(store_sqlite, "_COUNT_BATCH", 7)
    first, second, third = write_the_sequence(tmp_path / "index.sqlite3")
    assert first[0] != second[0]
    assert "handbook" in second[0]
    assert third[0] == {}


def test_postgresql_holds_the_postings_and_lengths_sqlite_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres: Any
) -> None:
    """The same writes on both backends: after each, the same postings (FTS5's), the same
    passage ids (PostgreSQL numbers them as SQLite gives rowids) and the same token counts."""
    monkeypatch.setattr(store_sqlite, "_COUNT_BATCH", 7)
    monkeypatch.setattr(store_postgres, "_WRITE_BATCH", 7)
    expected = write_the_sequence(tmp_path / "index.sqlite3")
    assert write_the_sequence(postgres.create_database(), check=False) == expected
