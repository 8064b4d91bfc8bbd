"""The Python API behind every command: `localqa.search_parts(...)`, `localqa.answer(...)`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from localqa.answer import answer_part
from localqa.eligibility import eligible
from localqa.errors import LocalQAError
from localqa.index import open_index
from localqa.models import get_model
from localqa.models.base import AnswerModel
from localqa.retrieve import RetrievalSettings, load_documents, search
from localqa.types import Answer, Caller, Kind, PartResult, Passage

DEFAULT_DB = Path("index/library.sqlite3")
ANSWER_K = 4  # passages a model is shown per part: enough for a conflict, small enough for a 1.5B model


def search_parts(
    question: str,
    *,
    as_of: date,
    caller: Caller | None = None,
    parts: Sequence[str] = (),
    k: int | None = None,
    db: Path = DEFAULT_DB,
    settings: RetrievalSettings | None = None,
) -> list[PartResult]:
    """Retrieval only: ranked candidates per question part (empty = abstain). `k`, when given,
    overrides `settings.k`."""
    settings = settings or RetrievalSettings()
    if k is not None:
        settings = settings.model_copy(update={"k": k})
    with open_index(db) as connection:
        return search(
            connection, question, as_of=as_of, caller=caller or Caller(), parts=parts, settings=settings
        )


class PartAnswer(BaseModel):
    """One part of an asked question: its candidates (the evidence) and the verified answer."""

    model_config = ConfigDict(frozen=True)

    result: PartResult
    answer: Answer


class Asked(BaseModel):
    model_config = ConfigDict(frozen=True)

    parts: list[PartAnswer]
    backend: str
    model: str


def answer(
    question: str,
    *,
    as_of: date,
    caller: Caller | None = None,
    parts: Sequence[str] = (),
    model: AnswerModel | str | None = None,
    k: int | None = None,
    db: Path = DEFAULT_DB,
    settings: RetrievalSettings | None = None,
) -> Asked:
    """Per part: retrieve, have the model pick a quote, verify it. The model sees the top `k`
    candidates (default: `settings.k` when settings are given, else 4)."""
    settings = settings or RetrievalSettings(k=ANSWER_K)
    results = search_parts(question, as_of=as_of, caller=caller, parts=parts, k=k, db=db, settings=settings)
    chosen = model if isinstance(model, AnswerModel) else get_model(model)
    answers = [PartAnswer(result=r, answer=answer_part(r.question, r.candidates, chosen)) for r in results]
    return Asked(parts=answers, backend=chosen.backend, model=chosen.name)


class PageNotFoundError(LocalQAError):
    """No such page of a document the caller may see: the same error whether the source does not
    exist, the page does not, or the document is hidden from the caller (nothing leaks)."""


class VisiblePage(BaseModel):
    """The passages of one page of one source, as the caller may see them, with the sha256 the
    source file had when it was indexed (so a changed file is never highlighted with old boxes)."""

    model_config = ConfigDict(frozen=True)

    source: str
    page: int | None
    sha256: str | None
    passages: tuple[Passage, ...]


def page_passages(
    source: str, page: int | None, *, as_of: date, caller: Caller | None = None, db: Path = DEFAULT_DB
) -> VisiblePage:
    """The passages on `page` of `source` (None: a Markdown/text source, which has no pages) that
    `caller` may see on `as_of`. `source` must be exactly an indexed source name: it is compared
    for equality, never used as a path here."""
    caller = caller or Caller()
    with open_index(db) as connection:
        allowed = [d.doc_id for d in eligible(load_documents(connection), as_of, caller)]
        # Moves into the store: the one SQL query this module runs.
        rows = connection.execute(
            "SELECT p.kind, p.source, p.page, p.text, p.section, p.paragraph, p.table_no, p.row_no, "
            "p.boxes, f.sha256 FROM passages p LEFT JOIN files f ON f.name = p.source "
            "WHERE p.source = ? AND p.page IS ? AND p.doc_id IN (SELECT value FROM json_each(?)) "
            "ORDER BY p.id",
            (source, page, json.dumps(allowed)),
        ).fetchall()
    if not rows:
        where = f"page {page} of {source!r}" if page is not None else f"{source!r}"
        raise PageNotFoundError(
            f"{where} is not in the index for role {caller.role}, tenant {caller.tenant} on "
            f"{as_of.isoformat()}; check the source name and page (see 'localqa search')"
        )
    passages = tuple(
        Passage(
            kind=Kind(kind),
            source=name,
            page=number,
            text=text,
            section=section,
            paragraph=paragraph,
            table=table,
            row=row,
            boxes=tuple(tuple(box) for box in json.loads(boxes)),
        )
        for kind, name, number, text, section, paragraph, table, row, boxes, _ in rows
    )
    return VisiblePage(source=source, page=page, sha256=rows[0][-1], passages=passages)
