"""Answering a part that asks for a figure of a filing (`localqa.figures`): each line item the
figure needs is retrieved as a part of its own, in the documents the part is about, and read at
each fiscal year from its best row; the figure is computed and checked, or the answer says which
operand the evidence does not give.

Which documents: those the part was routed to because it names them (`localqa.routing`), else
those the caller scoped the question to, else the document of the part's own verified quote, whose
evidence mentions what the question names (`localqa.coverage`), or of the quote withheld only for
a year (the figure reads each operand at its year's column, or names the year as missing). A part
about none of these gets no figure: operands from documents it never named could come from another
company's filing.
Every search runs as the caller on the as-of date, like the part's own, within those documents
passed as documents (`scope.Chosen`), never as names to read again: a file named like a glob is
that file, and a figure routed to many documents is no usage error of the caller's.

This module sits below `localqa.library`, which calls it: what it needs of the library, a search
and the settings, and of the question's context, it names as protocols the library satisfies.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING, Protocol

from localqa import computing, figures, operands, values
from localqa.answering import checked
from localqa.errors import ModelError
from localqa.scope import Chosen
from localqa.settings import AnswerSettings, RetrievalSettings, Settings
from localqa.types import Answer, Caller, Candidate, PartResult

if TYPE_CHECKING:
    from localqa.models.base import AnswerModel

# Candidates read per search of a line item: a filing has dozens of rows sharing its label's words
# (segments, notes, quarters), and the statement's row is often not the first by BM25. No cap
# per page: the rows of one statement share a page.
ITEM_K = 100


class Searcher(Protocol):
    """What the operands are searched with: `localqa.library.Library`."""

    @property
    def settings(self) -> Settings: ...

    def search(
        self,
        question: str,
        *,
        as_of: date,
        caller: Caller | None = None,
        parts: Sequence[str] = (),
        k: int | None = None,
        settings: RetrievalSettings | None = None,
        documents: Chosen,
    ) -> list[PartResult]: ...


class Asking(values.Context, Protocol):
    """Who asks and on which date, with what a value may read beyond its quote:
    `localqa.library.IndexContext`."""

    @property
    def as_of(self) -> date: ...

    @property
    def caller(self) -> Caller: ...


def derive(
    library: Searcher,
    result: PartResult,
    answer: Answer,
    context: Asking,
    documents: Chosen | None,
    model: AnswerModel,
    settings: AnswerSettings,
) -> Answer:
    """`answer` (the part's quote) replaced by the figure the part asks for, when it asks for one
    and the figure can be computed; a figure the evidence lacks an operand of is a refusal naming
    it, except for a single line item, where the quote and its own value stand."""
    figure = figures.plan(result.question)
    if figure is None and model.is_language_model and figures.asks_computed(result.question):
        written = _written(result.question, model, settings)
        if isinstance(written, str):  # the part's quote stands, with the value it gives
            return answer
        figure = written
    if figure is None:
        return answer
    within = _documents(result, answer, documents)
    if within is None:
        return answer
    lexical = library.settings.retrieval.model_copy(update={"retriever": "lexical", "per_page": 0})
    candidates: dict[str, list[Candidate]] = {}
    for item in {need.item.key: need.item for need in figure.needs}.values():
        found = candidates.setdefault(item.key, [])
        for text in operands.search_texts(item, figure.statements):
            (part,) = library.search(
                text,
                as_of=context.as_of,
                caller=context.caller,
                parts=[text],
                k=ITEM_K,
                settings=lexical,
                documents=within,
            )
            seen = {c.location for c in found}
            found += [c for c in part.candidates if c.location not in seen]
    computed = computing.compute(figure, operands.read_operands(figure, candidates, context))
    kept = {"call": answer.call, "selection": answer.selection}
    if computed.value is None:
        if figure.origin == "item":
            return answer
        return Answer.refused(computed.why or "no figure computed").model_copy(update=kept)
    value = computed.value
    first = (value.operands or ())[0]
    if figure.origin == "item" and value.expression == first.name:
        value = first.value  # one line item as written: the cell itself, not a figure computed from it
    shown = checked(value, first.quote)
    if shown is None:
        return Answer.refused("no figure computed: its check failed").model_copy(update=kept)
    verified = Answer.verified_quote(first.quote, first.citation)
    return verified.model_copy(update={**kept, "value": shown})


def _written(part: str, model: AnswerModel, settings: AnswerSettings) -> figures.FigurePlan | str:
    """The plan of a figure whose arithmetic the model writes (`figures.expression_request`), or
    why there is none."""
    try:
        completion = model.complete(figures.expression_request(part, settings))
    except ModelError as error:
        return f"model error: {error}"
    return figures.plan_from_reply(part, completion.text)


def _documents(result: PartResult, answer: Answer, documents: Chosen | None) -> Chosen | None:
    """The documents the operands are searched in (see the module's docstring), or None."""
    if result.route is not None:
        return Chosen.of(result.route.sources)
    if documents is not None:
        return documents
    if answer.verified and answer.citation is not None:
        return Chosen.of([answer.citation.source])
    # A quote withheld only for a year its evidence does not write: the figure reads each operand
    # at the column of its year, or says that the year is not there.
    choice = answer.selection.choice if answer.selection else None
    missing = [t for t in answer.coverage.terms if t.missing] if answer.coverage else []
    if choice is not None and missing and all(t.kind == "year" for t in missing):
        return Chosen.of([choice.location.source])
    return None
