"""The Python API behind every command: `localqa.search_parts(...)`, `localqa.answer(...)`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path

from localqa.index import open_index
from localqa.retrieve import RetrievalSettings, search
from localqa.types import Caller, PartResult

DEFAULT_DB = Path("index/library.sqlite3")


def search_parts(
    question: str,
    *,
    as_of: date,
    caller: Caller | None = None,
    parts: Sequence[str] = (),
    k: int = 5,
    db: Path = DEFAULT_DB,
    settings: RetrievalSettings | None = None,
) -> list[PartResult]:
    """Retrieval only: ranked candidates per question part (empty = abstain)."""
    settings = (settings or RetrievalSettings()).model_copy(update={"k": k})
    with open_index(db) as connection:
        return search(connection, question, as_of=as_of, caller=caller or Caller(), parts=parts, settings=settings)
