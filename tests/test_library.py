"""The Library: one open index behind the CLI, the web app and the evaluation; reopened when a
refresh replaced it; every reading method scoped to the caller."""

from __future__ import annotations

import threading
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from localqa import library as library_module
from localqa.errors import IndexMissingError
from localqa.indexing.index import refresh_index
from localqa.library import Library, PageNotFoundError
from localqa.models import get_model
from localqa.types import Caller

NOV = date(2026, 11, 14)
STAFF = Caller(role="staff")


@pytest.fixture
def db(sample_pdfs: Path, tmp_path: Path) -> Path:
    path = tmp_path / "library.sqlite3"
    refresh_index(sample_pdfs, path, embed=False)
    return path


def counting(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    opened: list[Path] = []
    real_open = library_module.open_index

    def counting_open(path: Path) -> Any:
        opened.append(path)
        return real_open(path)

    monkeypatch.setattr(library_module, "open_index", counting_open)
    return opened


def test_one_open_index_serves_every_method(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened = counting(monkeypatch)
    with Library(db) as library:
        parts = library.search("How many days does a standard book loan last?", as_of=NOV)
        assert parts[0].candidates[0].location.source == "library-handbook.pdf"
        asked = library.answer("What is the loan limit for EQ-314?", as_of=NOV, model=get_model("extractive"))
        assert asked.parts[0].answer.verified and "EQ-314" in (asked.parts[0].answer.quote or "")
        citation = asked.parts[0].answer.citation
        assert citation is not None
        page = library.page(citation.source, citation.page, as_of=NOV)
        assert any(p.text for p in page.passages)
        listed = library.documents(as_of=NOV)
        assert {row.document.source for row in listed} >= {"library-handbook.pdf"}
        assert library.status().documents > library.status(Caller()).documents >= len(listed)
    assert opened == [db]


def test_a_refresh_that_replaced_the_index_is_reopened(
    db: Path, sample_pdfs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened = counting(monkeypatch)
    question = "What are the fines for late returns?"
    with Library(db) as library:
        before = library.search(question, as_of=NOV)
        assert any(c.location.source == "fines-and-fees.md" for c in before[0].candidates)
        (sample_pdfs / "fines-and-fees.md").unlink()
        refresh_index(sample_pdfs, db, embed=False)
        after = library.search(question, as_of=NOV)
        assert all(c.location.source != "fines-and-fees.md" for c in after[0].candidates)
        assert len(opened) == 2
        db.unlink()
        with pytest.raises(IndexMissingError):
            library.search(question, as_of=NOV)


def test_a_hidden_page_is_the_same_error_as_a_missing_one(db: Path) -> None:
    with Library(db) as library:
        staff_only = next(
            row.document.source
            for row in library.documents(as_of=NOV, caller=STAFF)
            if row.document.access == "staff" and row.document.source.endswith(".pdf")
        )
        assert library.page(staff_only, 1, as_of=NOV, caller=STAFF).passages
        messages = []
        for source in (staff_only, "no-such-file.pdf"):
            with pytest.raises(PageNotFoundError) as error:
                library.page(source, 1, as_of=NOV)
            messages.append(str(error.value).replace(repr(source), "SOURCE"))
        assert messages[0] == messages[1]
        assert staff_only not in {row.document.source for row in library.documents(as_of=NOV)}


def test_threads_share_one_library(db: Path) -> None:
    errors: list[BaseException] = []
    found: list[str] = []

    def ask() -> None:
        try:
            for _ in range(5):
                part = library.search("How many days does a standard book loan last?", as_of=NOV)[0]
                found.append(part.candidates[0].location.source)
        except BaseException as error:  # reported below, not lost in the thread
            errors.append(error)

    with Library(db) as library:
        threads = [threading.Thread(target=ask) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []
    assert found == ["library-handbook.pdf"] * 20
