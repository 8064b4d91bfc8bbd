"""The Python API behind every command: `localqa.search_parts(...)`, `localqa.answer(...)`."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from localqa.eligibility import eligible
from localqa.errors import LocalQAError
from localqa.index import open_index
from localqa.retrieve import search
from localqa.settings import DEFAULT_DB, AnswerSettings, RetrievalSettings, Settings
from localqa.types import Answer, Caller, PartResult, Passage

if TYPE_CHECKING:
    from localqa.models.base import AnswerModel

# The answer stage (prompts, model backends and their plugin entry points) is imported by
# `answer` when it runs: a search, in a fresh process, should not pay for it.


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
    with open_index(db) as store:
        return search(store, question, as_of=as_of, caller=caller or Caller(), parts=parts, settings=settings)


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
    retrieval_seconds: float  # for all parts together (one search)


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
    answer_settings: AnswerSettings | None = None,
) -> Asked:
    """Per part: retrieve, have the model pick a quote, verify it. The model sees the top `k`
    candidates (default: `settings.k` when settings are given, else `answer_settings.k`)."""
    answer_settings = answer_settings or AnswerSettings()
    settings = settings or Settings(answering=answer_settings).for_answering()
    started = time.perf_counter()
    results = search_parts(question, as_of=as_of, caller=caller, parts=parts, k=k, db=db, settings=settings)
    retrieval_seconds = time.perf_counter() - started
    from localqa.answering import answer_part
    from localqa.models import get_model
    from localqa.models.base import AnswerModel

    chosen = model if isinstance(model, AnswerModel) else get_model(model)
    answers = [
        PartAnswer(result=r, answer=answer_part(r.question, r.candidates, chosen, answer_settings))
        for r in results
    ]
    return Asked(
        parts=answers, backend=chosen.backend, model=chosen.name, retrieval_seconds=retrieval_seconds
    )


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
    with open_index(db) as store:
        allowed = {d.doc_id for d in eligible(store.documents(), as_of, caller)}
        found = [p for p in store.page_passages(source, page) if p.doc_id in allowed]
        sha256 = store.file_hash(source) if found else None
    if not found:
        where = f"page {page} of {source!r}" if page is not None else f"{source!r}"
        raise PageNotFoundError(
            f"{where} is not in the index for role {caller.role}, tenant {caller.tenant} on "
            f"{as_of.isoformat()}; check the source name and page (see 'localqa search')"
        )
    passages = tuple(Passage.model_validate(p.model_dump(exclude={"id", "doc_id"})) for p in found)
    return VisiblePage(source=source, page=page, sha256=sha256, passages=passages)
