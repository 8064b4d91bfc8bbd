"""Whether the caller's collection holds a question's word, by lemma (localqa/retrieval/held.py):
read from the passages that could write it, in the caller's scope only."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from localqa.indexing.index import open_index, refresh_index
from localqa.retrieval import held
from localqa.retrieval.retrieve import search
from localqa.settings import RetrievalSettings
from localqa.types import Caller

AS_OF = date(2026, 11, 14)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "fines.md").write_text(
        "# Fines\n\nIf a lost item is found and returned within 60 days, the fee is refunded.\n\n"
        "Camera lenses may be borrowed for two days.\n",
        encoding="utf-8",
    )
    (docs / "history.md").write_text("# History\n\nThe library was founded in 1901 by the town.\n")
    (docs / "catalog.toml").write_text(
        '["fines.md"]\naccess = "public"\n\n["history.md"]\naccess = "staff"\n', encoding="utf-8"
    )
    path = tmp_path / "index.sqlite3"
    refresh_index(docs, path, embed=False)
    return path


def unheld(db: Path, question: str, role: str = "public") -> tuple[str, ...]:
    with open_index(db) as store:
        [part] = search(store, question, as_of=AS_OF, caller=Caller(role=role), settings=RetrievalSettings())
    assert part.unheld is not None
    return part.unheld


def test_a_word_held_only_by_its_stem_is_unheld(db: Path) -> None:
    """The public may see only the fines page, which writes "found" (of "find"): by stem it holds
    "founded", by lemma it does not. Staff see the history page, which writes "founded"."""
    assert "found" in unheld(db, "Who founded the library?")
    assert "found" not in unheld(db, "Who founded the library?", role="staff")
    assert "found" not in unheld(db, "Where is a found item kept?")


def test_a_word_written_as_a_plural_the_index_stems_apart_is_held(db: Path) -> None:
    """Porter makes "lens" "len" and "lenses" "lens": the plural's postings are read too."""
    assert "len" not in unheld(db, "How long may a camera lens be borrowed?")
    assert "drawer" in unheld(db, "Where is the cash drawer?")


def test_a_stem_too_many_passages_hold_is_taken_as_held(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(held, "MAX_READ", 0)
    assert "found" not in unheld(db, "Who founded the library?")
