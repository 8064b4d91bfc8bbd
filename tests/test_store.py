"""The SQLite store refreshed in place (issue 21): a reader keeps its snapshot and learns that a
newer one exists; an index refreshed in place answers exactly as one rebuilt from scratch, ties
included; an index copied without its vector file, or written by an older localqa (schema 5),
keeps working and gets its vectors back.

Real PyMuPDF, real SQLite and (tests marked `semantic`) the real embedding model throughout.
"""

from __future__ import annotations

import shutil
import tomllib
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from index_oracle import assert_consistent

from localqa.errors import LocalQAError
from localqa.indexing.index import open_index, refresh_index
from localqa.library import index_status, search_parts
from localqa.retrieval.embeddings import MODEL_NAME
from localqa.retrieval.retrieve import question_parts, search
from localqa.settings import RetrievalSettings
from localqa.store.schema import SCHEMA_VERSION
from localqa.store.sqlite import writing
from localqa.types import Caller

REPO = Path(__file__).resolve().parent.parent
NOV_14 = date(2026, 11, 14)
LEXICAL = RetrievalSettings(retriever="lexical", k=10)
SCHEMA_5 = Path(__file__).parent / "fixtures" / "schema-5"
SCHEMA_5_MODEL = "all-MiniLM-L6-v2-int8"  # the encoder its vectors were computed with


@pytest.fixture
def indexed(sample_pdfs: Path, library_db: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The sample folder and a private copy of its (up-to-date) index."""
    db = tmp_path / "index" / "library.sqlite3"
    db.parent.mkdir()
    shutil.copy(library_db, db)
    return sample_pdfs, db


def suite_questions() -> list[tuple[str, date, Caller]]:
    cases = tomllib.loads((REPO / "evals/library/cases.toml").read_text(encoding="utf-8"))["case"]
    return [
        (
            case["question"],
            case["as_of"],
            Caller(role=case.get("role", "public"), tenant=case.get("tenant", "default")),
        )
        for case in cases
    ]


def answers(db: Path, questions: list[tuple[str, date, Caller]], settings: RetrievalSettings) -> list[Any]:
    """Every candidate of every question: rank, score, location and text (ids are the store's own)."""
    found = []
    for question, as_of, caller in questions:
        for part in search_parts(question, as_of=as_of, caller=caller, db=db, settings=settings):
            found.append(
                (
                    question,
                    part.question,
                    part.note,
                    [(c.rank, c.score, c.location, c.text) for c in part.candidates],
                )
            )
    return found


def test_a_reader_keeps_its_snapshot_and_sees_the_refresh_once_reopened(indexed: tuple[Path, Path]) -> None:
    folder, db = indexed
    question = "Is parking free for visitors?"
    with open_index(db) as before:
        first = search(before, question, as_of=NOV_14, caller=Caller(), settings=LEXICAL)
        assert not before.changed()
        (folder / "faq.md").write_text("# FAQ\n\nParking is free for visitors.\n", encoding="utf-8")
        refresh_index(folder, db)  # commits in place while the reader is open
        assert before.changed()
        # The open store still reads the index it opened: the new file is not there.
        again = search(before, question, as_of=NOV_14, caller=Caller(), settings=LEXICAL)
        assert again == first
        assert "faq.md" not in {d.source for d in before.documents()}
        with open_index(db) as after:
            assert not after.changed()
            (part,) = search(after, question, as_of=NOV_14, caller=Caller(), settings=LEXICAL)
            assert part.candidates[0].location.source == "faq.md"


def remove_with_its_entry(folder: Path, name: str) -> None:
    """Remove a file and its catalog entry (an entry left without its file, beside files without
    an entry, would stop the refresh as a possible rename)."""
    (folder / name).unlink()
    catalog = folder / "catalog.toml"
    text = catalog.read_text(encoding="utf-8")
    start = text.index(f'["{name}"]')
    end = text.find("\n[", start)
    catalog.write_text(text[:start] + (text[end + 1 :] if end != -1 else ""), encoding="utf-8")


TIE = "# Courier desk\n\nThe courier desk stamps parcels on Fridays.\n\n{other}\n"


def test_an_index_refreshed_in_place_answers_exactly_as_one_rebuilt(
    sample_pdfs: Path, tmp_path: Path
) -> None:
    """Every edit a refresh meets, applied in place, then compared with a rebuild of the same
    folder: the same candidates, scores and order for every question of the library suite, and
    the same digest. Two documents share a paragraph word for word (equal BM25 scores): the tie
    is broken by file name in both, although in place the edited one's passages are the newest."""
    folder, db = sample_pdfs, tmp_path / "in-place.sqlite3"
    (folder / "a-courier.md").write_text(TIE.format(other="Parcels wait a week."), encoding="utf-8")
    (folder / "z-courier.md").write_text(TIE.format(other="Letters go out daily."), encoding="utf-8")
    questions = [*suite_questions(), ("Which desk stamps parcels on Fridays?", NOV_14, Caller())]
    catalog = folder / "catalog.toml"
    edits = [
        lambda: (folder / "a-courier.md").write_text(
            TIE.format(other="Parcels wait two weeks."), encoding="utf-8"
        ),
        lambda: (folder / "library-handbook.page-4.ocr.txt").unlink(),
        lambda: remove_with_its_entry(folder, "fines-and-fees.md"),
        lambda: catalog.write_text(
            catalog.read_text(encoding="utf-8").replace('title = "', 'title = "New '), encoding="utf-8"
        ),
        lambda: (folder / "notes.md").write_text(
            "# Notes\n\nThe courier desk closes at noon.\n", encoding="utf-8"
        ),
    ]
    refresh_index(folder, db)
    for number, edit in enumerate(edits):
        edit()
        report = refresh_index(folder, db)
        assert not report.failed, report.problems
        rebuilt = tmp_path / f"rebuilt-{number}.sqlite3"
        refresh_index(folder, rebuilt)
        assert answers(db, questions, LEXICAL) == answers(rebuilt, questions, LEXICAL)
        assert index_status(db).corpus_digest == index_status(rebuilt).corpus_digest
        assert_consistent(db)
        (tie,) = search_parts("Which desk stamps parcels on Fridays?", as_of=NOV_14, db=db, settings=LEXICAL)
        first, second = tie.candidates[:2]
        assert first.score == second.score
        assert [first.location.source, second.location.source] == ["a-courier.md", "z-courier.md"]


def _vectors_by_location(db: Path, model: str = MODEL_NAME) -> dict[tuple[Any, ...], Any]:
    with open_index(db) as store:
        numbers, matrix = store._vectors(model)  # type: ignore[attr-defined]
        live = numbers < store._layout.size  # type: ignore[attr-defined]  # rows of removed passages: no
        numbers, matrix = numbers[live], matrix[live]
        found = store.passages(numbers.tolist())
        return {
            (p.source, p.page, p.kind, p.paragraph, p.table, p.row): np.array(matrix[i])
            for i, p in ((i, found[n]) for i, n in enumerate(numbers.tolist()))
        }


@pytest.mark.semantic
def test_an_index_copied_without_its_vector_file_has_no_vectors_until_refreshed(
    sample_pdfs: Path, tmp_path: Path
) -> None:
    original = tmp_path / "original.sqlite3"
    refresh_index(sample_pdfs, original)
    vector_file = next(tmp_path.glob("original.sqlite3.vectors-*"))
    stamp = vector_file.stat()
    alone = tmp_path / "alone.sqlite3"
    shutil.copyfile(original, alone)
    # Still embedded with the model, no vector stored: hybrid embeds the lexical top at question time.
    assert index_status(alone).embeddings == {MODEL_NAME: 0}
    hybrid = RetrievalSettings(retriever="hybrid", k=3)
    (part,) = search_parts(
        "How many days does a standard book loan last?", as_of=NOV_14, db=alone, settings=hybrid
    )
    assert part.retriever == "hybrid" and part.candidates[0].location.source == "library-handbook.pdf"
    report = refresh_index(sample_pdfs, alone)
    assert report.embedded == report.passages and (report.added, report.changed) == ([], [])
    assert index_status(alone).embeddings == {MODEL_NAME: report.passages}
    mine, theirs = _vectors_by_location(alone), _vectors_by_location(original)
    assert mine.keys() == theirs.keys() and all(np.array_equal(mine[k], theirs[k]) for k in mine)
    # The original's file was neither read for the copy nor touched by its refresh.
    assert vector_file.stat().st_mtime_ns == stamp.st_mtime_ns and vector_file.stat().st_size == stamp.st_size
    # Copied with its vector file under the new name, an index keeps its vectors.
    together = tmp_path / "together.sqlite3"
    shutil.copyfile(original, together)
    shutil.copyfile(vector_file, tmp_path / vector_file.name.replace("original", "together"))
    assert index_status(together).embeddings == {MODEL_NAME: report.passages}


def _schema_5_vectors() -> dict[tuple[Any, ...], Any]:
    """The vectors the schema-5 fixture stores (in a table then), by their passage's location."""
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(f"file:{SCHEMA_5 / 'index.sqlite3'}?mode=ro", uri=True)) as db:
        rows = db.execute(
            "SELECT p.source, p.page, p.kind, p.paragraph, p.table_no, p.row_no, e.model, e.vector "
            "FROM passages p JOIN embeddings e ON e.passage_id = p.id"
        ).fetchall()
    assert {row[6] for row in rows} == {SCHEMA_5_MODEL}
    return {tuple(row[:6]): np.frombuffer(row[7], dtype="<f4") for row in rows}


@pytest.mark.semantic
def test_an_index_of_schema_5_is_migrated_in_place_and_its_earlier_encoders_vectors_replaced(
    tmp_path: Path,
) -> None:
    """The fixture was written by localqa before issue 21 (FTS5, postings in one row per term,
    vectors in a table), with the int8 encoder. Migrated in place, it keeps its passages and, bit
    for bit, the vectors it stores. Those are an earlier encoder's (they depended on the processor
    that computed them: issue 29), so until `localqa index` runs they are never compared with
    today's: hybrid search says why it cannot run, and the default searches lexically. Then
    nothing is extracted again, every passage is embedded again, and the index answers as one
    built today from the same files."""
    docs = tmp_path / "docs"
    shutil.copytree(SCHEMA_5 / "docs", docs)
    old = tmp_path / "old.sqlite3"
    shutil.copyfile(SCHEMA_5 / "index.sqlite3", old)
    with writing(old) as writer:  # the first writer to open it migrates it (`finish` stamps the version)
        writer.finish()
    assert index_status(old).schema_version == SCHEMA_VERSION
    kept, stored = _vectors_by_location(old, SCHEMA_5_MODEL), _schema_5_vectors()
    assert kept.keys() == stored.keys() and all(np.array_equal(kept[k], stored[k]) for k in kept)
    question = "How long may the portable scanner be borrowed?"
    hybrid = RetrievalSettings(retriever="hybrid", k=3)
    with pytest.raises(LocalQAError) as refused:
        search_parts(question, as_of=date(2026, 1, 1), db=old, settings=hybrid)
    assert str(refused.value) == (
        f"the index's embeddings were computed by an earlier encoder ({SCHEMA_5_MODEL}), and "
        f"--retriever hybrid needs {MODEL_NAME}'s; run 'localqa index' to compute them again"
    )
    assert search_parts(question, as_of=date(2026, 1, 1), db=old)[0].retriever == "lexical"

    report = refresh_index(docs, old)
    assert (report.added, report.changed, report.removed, report.embedded) == ([], [], [], 6)
    assert report.unchanged == 2 and not report.failed
    assert [str(p) for p in report.problems] == [
        f"{old}: its embeddings were computed by an earlier encoder ({SCHEMA_5_MODEL}); every passage "
        f"is embedded again with {MODEL_NAME}"
    ]
    assert index_status(old).embeddings == {MODEL_NAME: 6}
    assert_consistent(old)
    fresh = tmp_path / "fresh.sqlite3"
    refresh_index(docs, fresh)
    questions = [
        (question, date(2026, 1, 1), Caller()),
        ("When does the reading room open on Saturdays?", date(2026, 1, 1), Caller()),
        ("EQ-314 deposit", date(2026, 1, 1), Caller()),
    ]
    assert answers(old, questions, LEXICAL) == answers(fresh, questions, LEXICAL)
    mine, theirs = _vectors_by_location(old), _vectors_by_location(fresh)
    assert mine.keys() == theirs.keys() == stored.keys()
    assert all(np.array_equal(mine[k], theirs[k]) for k in mine)
    assert [c[3][0][2] for c in answers(old, questions, hybrid)] == [
        c[3][0][2] for c in answers(fresh, questions, hybrid)
    ]


def _vectors_by_rowid(db: Path) -> dict[int, Any]:
    """Every stored vector by the rowid of its passage (what a writer's `put_vectors` takes)."""
    import sqlite3
    from contextlib import closing

    from localqa.store import vectors

    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
        record = connection.execute(
            "SELECT value FROM meta WHERE key = ?", (vectors.META_PREFIX + MODEL_NAME,)
        )
        state = vectors.VectorFile.parse(record.fetchone()[0])
        rows = [
            pid
            for (blob,) in connection.execute("SELECT ids FROM vector_batches ORDER BY first_row")
            for pid in np.frombuffer(blob, dtype="<i4").tolist()
        ]
    matrix = np.fromfile(state.path(db), dtype="<f4").reshape(-1, state.width)
    return {pid: matrix[row] for row, pid in enumerate(rows)}


def _keeping_vectors_of(full: Path, copy: Path, keep: set[int]) -> Path:
    """A copy of `full` in which only the passages in `keep` (rowids) have their vector, as an
    index looks while `localqa index` is still embedding."""

    for path in copy.parent.glob(f"{copy.name}*"):
        path.unlink()
    shutil.copyfile(full, copy)
    stored = _vectors_by_rowid(full)
    chosen = sorted(keep)
    with writing(copy) as writer:
        writer.drop_vectors(MODEL_NAME)
        writer.expect_vectors(MODEL_NAME)
        if chosen:
            writer.put_vectors(MODEL_NAME, chosen, np.stack([stored[pid] for pid in chosen]))
        writer.finish()
    return copy


def _sharing_a_word(db: Path, question: str, as_of: date, caller: Caller) -> set[int]:
    """Rowids of the passages the lexical side ranks for the question (all of them: the sample
    library has fewer passages than `semantic_depth`)."""
    from localqa.retrieval import retrieve

    settings = RetrievalSettings(retriever="lexical")
    found: set[int] = set()
    with open_index(db) as store:
        scope = retrieve._eligible(store, store.eligible(as_of, caller)).scope
        for part in retrieve.question_parts(question):
            ranking = retrieve._lexical(store, part, scope, settings)
            assert len(ranking) <= settings.semantic_depth
            found |= set(store._layout.internal[ranking.ids].tolist())  # type: ignore[attr-defined]
    return found


@pytest.mark.semantic
def test_with_vectors_still_missing_hybrid_answers_as_when_every_vector_is_stored(
    sample_pdfs: Path, tmp_path: Path
) -> None:
    """While an index is still being embedded, a hybrid search embeds the lexical top passages
    that have no vector yet: for every question of the library suite, an index in which exactly
    those passages lack their vector (the others have theirs) answers exactly as the fully
    embedded one, scores included. A passage that shares no word with the question cannot be
    embedded at question time: it counts only once its vector is stored."""
    full = tmp_path / "full.sqlite3"
    refresh_index(sample_pdfs, full)
    everyone = set(_vectors_by_rowid(full))
    hybrid = RetrievalSettings(retriever="hybrid", k=5)
    partial = tmp_path / "partial.sqlite3"
    # Part by part: a part is searched on its own, with the passages it shares a word with.
    parts = [
        (p, as_of, caller) for question, as_of, caller in suite_questions() for p in question_parts(question)
    ]
    for part in parts:
        shared = _sharing_a_word(full, *part)
        _keeping_vectors_of(full, partial, everyone - shared)
        assert index_status(partial).embeddings[MODEL_NAME] == len(everyone - shared)
        assert answers(partial, [part], hybrid) == answers(full, [part], hybrid)

    # The other way round (only the word-sharing passages have a vector) some part's answer
    # changes: a passage found by meaning alone waits for its vector.
    changed = []
    for part in parts:
        _keeping_vectors_of(full, partial, _sharing_a_word(full, *part))
        if answers(partial, [part], hybrid) != answers(full, [part], hybrid):
            changed.append(part[0])
    assert changed


@pytest.mark.semantic
def test_removed_passages_vectors_are_compacted_once_they_are_a_quarter_of_the_file(
    sample_pdfs: Path, tmp_path: Path
) -> None:
    """A removed passage's vector stays in the file (readers skip it) until removed ones are a
    quarter of the rows; then the file is rewritten without them, under a new name, and the
    vectors of the passages that remain are the same."""
    db = tmp_path / "index.sqlite3"
    refresh_index(sample_pdfs, db)
    first = next(tmp_path.glob("index.sqlite3.vectors-*"))
    (sample_pdfs / "fines-and-fees.md").unlink()  # a few passages: below a quarter
    refresh_index(sample_pdfs, db)
    assert next(tmp_path.glob("index.sqlite3.vectors-*")) == first
    assert len(_vectors_by_rowid(db)) > index_status(db).embeddings[MODEL_NAME]
    before = _vectors_by_location(db)
    (sample_pdfs / "library-handbook.pdf").unlink()  # the largest documents: past a quarter
    (sample_pdfs / "library-handbook.page-4.ocr.txt").unlink()
    (sample_pdfs / "loans-handbook.docx").unlink()
    refresh_index(sample_pdfs, db)
    (second,) = tmp_path.glob("index.sqlite3.vectors-*")
    assert second != first
    kept = _vectors_by_location(db)
    assert len(_vectors_by_rowid(db)) == index_status(db).embeddings[MODEL_NAME] == len(kept)
    assert all(np.array_equal(vector, before[location]) for location, vector in kept.items())
    assert second.stat().st_size == len(kept) * 384 * 4
