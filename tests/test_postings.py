"""The postings (localqa/store/postings.py, segments.py) always say what a fresh tokenization of
the passages says (`tests.index_oracle`), however they were written: in SQLite in segments, one
per write, merged as the segments grow, with the postings of removed passages left behind until a
merge; in PostgreSQL one row per term, rewritten by each write that touches it.

The writes below cross the writer's counting batches, replace and remove files, re-index a
document's passages when its title changes (new ids), drop a passage added earlier in the same
write, and make the segments merge; reading through the store, ids of removed passages never
come back, and both backends hand out the same numbers for the same passages.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from contextlib import closing
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from index_oracle import assert_consistent, oracle, stored_postings

from localqa.indexing.index import open_index
from localqa.settings import RetrievalSettings
from localqa.store import Db, writing
from localqa.store import postgres as store_postgres
from localqa.store import segments as segments_module
from localqa.store import sqlite as store_sqlite
from localqa.store.base import Scope, Writer
from localqa.store.postings import unpack
from localqa.types import Caller, Document, Kind, Passage

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


def segments(db: Path) -> list[tuple[int, int, int, int]]:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
        return connection.execute(
            "SELECT first_id, last_id, passages, dead FROM segments ORDER BY first_id"
        ).fetchall()


def through_the_store(db: Db, numbered: bool = False) -> dict[str, dict[Any, tuple[int, ...]]]:
    """Every term's postings as retrieval reads them (all documents in scope), keyed by passage
    text so that they compare across ids (`numbered`: by the number the store hands out and the
    text): removed passages must not show."""
    with open_index(db) as store:
        scope = Scope(doc_ids=frozenset(d.doc_id for d in store.documents()))
        texts = {pid: p.text for pid, p in store.passages(range(store._layout.size)).items()}  # type: ignore[attr-defined]
        found: dict[str, dict[Any, tuple[int, ...]]] = {}
        for term in oracle(db):
            got = store.postings(scope, term, "heading")
            found[term] = {
                ((int(pid), texts[int(pid)]) if numbered else texts[int(pid)]): (int(count), int(length))
                for pid, count, length in zip(got.ids, got.frequencies, got.lengths, strict=True)
            }
    return found


def first_write(writer: Writer) -> None:
    writer.put_documents([document("a"), document("b"), document("c"), document("one")], ())
    put(writer, "a", 30)
    put(writer, "b", 3)
    put(writer, "one", 1)
    put(writer, "one", 2, salt=1)  # the same file twice in one write: the first is dropped
    put(writer, "c", 5)


def second_write(writer: Writer) -> None:
    # A new title re-indexes every passage of "a" (its heading text changes: new ids in SQLite).
    writer.put_documents([document("a", title="Delta handbook"), document("d")], ())
    writer.remove_files(["c.txt"])
    put(writer, "b", 4, salt=2)
    put(writer, "d", 12, salt=3)


def third_write(writer: Writer) -> None:
    writer.put_documents([document("e")], ())
    put(writer, "e", 2)


def last_write(writer: Writer) -> None:
    writer.remove_files(["a.txt", "b.txt", "d.txt", "one.txt", "e.txt"])


WRITES: list[Callable[[Writer], None]] = [first_write, second_write, third_write, last_write]


def write(db: Db, step: Callable[[Writer], None]) -> None:
    with writing(db, rebuild=step is first_write) as writer:
        step(writer)
        writer.finish()


def test_postings_match_a_fresh_tokenization_through_every_kind_of_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "index.sqlite3"
    # Small batches, so that every write below spans several of them, and postings written out
    # in several parts per write (merged into one segment when the write commits).
    monkeypatch.setattr(store_sqlite, "_COUNT_BATCH", 7)
    monkeypatch.setattr(store_sqlite, "_FLUSH_ENTRIES", 60)
    write(db, first_write)
    assert stored_postings(db) == oracle(db)
    assert_consistent(db)
    first = stored_postings(db)
    # One write, one segment (the dropped passage's id is in its range, its postings are not).
    assert segments(db) == [(1, 41, 40, 0)]

    write(db, second_write)
    assert stored_postings(db) == oracle(db)
    assert stored_postings(db) != first
    assert "handbook" in stored_postings(db)
    assert_consistent(db)
    # The second write's segment held 46 passages, more than a quarter of what is left of the
    # first's (2 of its 40: the rest was re-indexed, replaced or removed): merged, without the
    # postings of what is gone.
    assert segments(db) == [(1, 87, 48, 0)]

    write(db, third_write)
    assert segments(db)[-1][2:] == (2, 0) and len(segments(db)) == 2  # too small to merge
    assert stored_postings(db) == oracle(db)
    assert_consistent(db)

    write(db, last_write)
    assert stored_postings(db) == oracle(db) == {}
    assert segments(db) == []  # every segment lost more than half its passages: rewritten, empty
    assert_consistent(db)


def test_postgresql_hands_out_the_postings_and_numbers_sqlite_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres: Any
) -> None:
    """The same writes on both backends: after each, PostgreSQL's postings and lengths are a fresh
    tokenization's, and through the store both give every passage the same number and postings
    (the numbers are canonical, whichever ids each backend stores)."""
    monkeypatch.setattr(store_sqlite, "_COUNT_BATCH", 7)
    monkeypatch.setattr(store_postgres, "_WRITE_BATCH", 7)
    sqlite_db, postgres_db = tmp_path / "index.sqlite3", postgres.create_database()
    for step in WRITES:
        write(sqlite_db, step)
        write(postgres_db, step)
        assert_consistent(postgres_db)
        assert through_the_store(postgres_db, numbered=True) == through_the_store(sqlite_db, numbered=True)


def test_reading_skips_removed_passages_left_in_old_segments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A removed passage's postings stay in their segment until it is merged; the store must not
    count them, for ranking or for statistics, and a search must equal a fresh build's."""
    monkeypatch.setattr(segments_module, "MERGE_SHARE", 10.0)  # never merge by size
    db, fresh = tmp_path / "refreshed.sqlite3", tmp_path / "fresh.sqlite3"
    with writing(db, rebuild=True) as writer:
        writer.put_documents([document("a"), document("b")], ())
        put(writer, "a", 40)
        put(writer, "b", 20)
        writer.finish()
    with writing(db) as writer:
        put(writer, "b", 20, salt=5)  # b's old passages are dead in segment 1 (a third of it)
        writer.finish()
    assert [s[2:] for s in segments(db)] == [(60, 20), (20, 0)]
    with closing(sqlite3.connect(db)) as connection:
        stored = {
            pid
            for (blob,) in connection.execute("SELECT passages FROM postings")
            for pid in unpack(blob, b"", b"")[0].tolist()
        }
        live = {pid for (pid,) in connection.execute("SELECT id FROM passages")}
    assert stored - live  # the dead postings are really there
    with writing(fresh, rebuild=True) as writer:
        writer.put_documents([document("a"), document("b")], ())
        put(writer, "a", 40)
        put(writer, "b", 20, salt=5)
        writer.finish()
    assert through_the_store(db) == through_the_store(fresh)
    settings = RetrievalSettings(retriever="lexical", k=20)
    from localqa.retrieval.retrieve import search

    def ranked(path: Path) -> list[tuple[str, float, str]]:
        with open_index(path) as store:
            (part,) = search(
                store, "loan limit deposit", as_of=date(2026, 1, 1), caller=Caller(), settings=settings
            )
        return [(c.location.source, c.score, c.text) for c in part.candidates]

    assert ranked(db) == ranked(fresh)
