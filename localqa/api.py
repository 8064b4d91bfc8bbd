"""The Python API behind every command: `localqa.search_parts(...)`, `localqa.answer(...)`."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from localqa.answer import answer_part
from localqa.index import open_index
from localqa.models import get_model
from localqa.models.base import AnswerModel
from localqa.retrieve import RetrievalSettings, search
from localqa.settings import AnswerSettings
from localqa.types import Answer, Caller, PartResult

DEFAULT_DB = Path("index/library.sqlite3")


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
    settings = settings or RetrievalSettings(k=answer_settings.k)
    started = time.perf_counter()
    results = search_parts(question, as_of=as_of, caller=caller, parts=parts, k=k, db=db, settings=settings)
    retrieval_seconds = time.perf_counter() - started
    chosen = model if isinstance(model, AnswerModel) else get_model(model)
    answers = [
        PartAnswer(result=r, answer=answer_part(r.question, r.candidates, chosen, answer_settings))
        for r in results
    ]
    return Asked(
        parts=answers, backend=chosen.backend, model=chosen.name, retrieval_seconds=retrieval_seconds
    )
