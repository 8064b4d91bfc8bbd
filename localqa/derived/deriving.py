"""Answering a part that asks for a figure of a filing (`localqa.derived.figures`) or a comparison of
figures (`localqa.derived.comparing`): each line item a figure needs is retrieved as a part of its own, in
the documents the part is about, and read at each fiscal year from its best row; the figure is
computed and checked, or the answer says which operand the evidence does not give, beside the
part's own verified quote, never instead of it.

Which documents: those the part was routed to because it names them (`localqa.question.routing`), else
those the caller scoped the question to, else the document of the part's own verified quote, whose
evidence mentions what the question names (`localqa.answers.coverage`), or of the quote withheld only for
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

from localqa.answers.answering import checked
from localqa.derived import comparing, computing, extremes, figures, operands, pairs, totals
from localqa.derived.extremes import row_label
from localqa.derived.glossary import Item
from localqa.errors import ModelError, PageNotFoundError
from localqa.question import cues
from localqa.question.reading import read
from localqa.question.scope import Chosen
from localqa.settings import AnswerSettings, RetrievalSettings, Settings
from localqa.types import Answer, Caller, Candidate, Kind, Location, PartResult, Passage
from localqa.values.cells import read_row
from localqa.values.choosing import Context

if TYPE_CHECKING:
    from localqa.models.base import AnswerModel

# Candidates read per search of a line item: a filing has dozens of rows sharing its label's words
# (segments, notes, quarters), and the statement's row is often not the first by BM25. No cap
# per page: the rows of one statement share a page.
ITEM_K = 100
# The shapes of question no figure answers (`localqa.question.reading`): their quote stands as the
# answer stage gave it.
UNCOMPUTED = frozenset(("cause", "definition", "list", "count"))


class Page(Protocol):
    """The passages of one page as the caller may see them: `localqa.library.VisiblePage`."""

    @property
    def passages(self) -> tuple[Passage, ...]: ...


class Searcher(Protocol):
    """What the operands are searched with, and a compared table's page read with:
    `localqa.library.Library`."""

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

    def page(self, source: str, page: int | None, *, as_of: date, caller: Caller | None = None) -> Page: ...


class Asking(Context, Protocol):
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
    """`answer` with the figure or comparison the part asks for (`_derived`); and a part that asks
    for a ratio, a margin or a turnover no figure was computed for keeps its quote without the
    amount of money the quote states as its value: that amount is not the ratio asked for."""
    derived = _derived(library, result, answer, context, documents, model, settings)
    value = derived.value
    if value is None or value.derived or not cues.asks_a_ratio(result.question):
        return derived
    if not figures.is_amount(value) or cues.asks_a_ratio(value.row or ""):  # a ratio's own row
        return derived
    note = derived.figure_note or "no figure computed: the amount the quote states is not the ratio asked for"
    return derived.model_copy(update={"value": None, "figure_note": note})


def _derived(
    library: Searcher,
    result: PartResult,
    answer: Answer,
    context: Asking,
    documents: Chosen | None,
    model: AnswerModel,
    settings: AnswerSettings,
) -> Answer:
    """`answer` (the part's quote) with the figure or the comparison the part asks for, when it asks
    for one and it can be computed. A figure that cannot be computed never silences the quote: a
    verified quote stands with the reason beside it (`Answer.figure_note`); a part with no verified
    quote is refused with both reasons. A single line item no row gives keeps its quote as it is."""
    shape = (result.reading or read(result.question)).shape
    if shape in UNCOMPUTED:
        return answer
    chosen = extremes.plan(result.question) if shape == "extreme" else None
    if chosen is not None:
        return _extreme(library, result, answer, context, chosen)
    comparison = comparing.plan(result.question) if shape == "comparison" else None
    figure = None if comparison is not None else figures.plan(result.question)
    named = totals.plan(result.question) if comparison is None and figure is None else None
    writes = model.is_language_model and figures.asks_computed(result.question)
    if named is not None:
        totalled = _totalled(answer, context, named)
        # No cells named: a language model may still write the arithmetic over line items.
        if not writes or (totalled.value is not None and totalled.value.derived):
            return totalled
    if figure is None and comparison is None and writes:
        written = _written(result.question, model, settings)
        if isinstance(written, str):  # the part's quote stands, with the value it gives
            return answer
        figure = written
    planned = comparison.figures if comparison is not None else (figure,) if figure is not None else ()
    if not planned:
        return answer
    within = _documents(result, answer, documents)
    if within is None:
        return answer
    candidates = _candidates(library, planned, context, within)
    computed = [computing.compute(f, operands.read_operands(f, candidates, context)) for f in planned]
    kept = {"call": answer.call, "selection": answer.selection}
    missing = next((c.why or "no figure computed" for c in computed if c.value is None), None)
    if missing is not None:
        if figure is not None and figure.origin == "item":
            return answer
        return _without_figure(answer, missing)
    if comparison is not None and comparison.kind == "items":
        measured = (
            pairs.measured_problem(f, c.value) for f, c in zip(planned, computed, strict=True) if c.value
        )
        problem = next((m for m in measured if m is not None), None)
        if problem is not None:
            return _without_figure(answer, f"no comparison computed: {problem}")
    if comparison is not None:
        value = comparing.compared(comparison, [c.value for c in computed if c.value is not None])
        first = (value.operands or ())[0]
        shown = checked(value, first.quote) if comparing.comparison_check(value) is None else None
    else:
        assert figure is not None and computed[0].value is not None
        value = computed[0].value
        first = (value.operands or ())[0]
        if figure.origin == "item" and value.expression == first.name:
            value = first.value  # one line item as written: the cell itself, not a figure computed from it
        shown = checked(value, first.quote)
    if shown is None:
        return _without_figure(answer, "no figure computed: its check failed")
    verified = Answer.verified_quote(first.quote, first.citation)
    return verified.model_copy(update={**kept, "value": shown})


def _extreme(
    library: Searcher, result: PartResult, answer: Answer, context: Asking, chosen: extremes.ExtremePlan
) -> Answer:
    """The row with the extreme figure of the table the part's verified quote is a row of, read as
    the caller may see that page; the part's answer with a note when none."""
    # Only the table of the part's own verified quote: another table among the candidates may
    # list other things entirely.
    at = answer.citation if answer.verified else None
    if at is None or at.kind is not Kind.TABLE or at.table is None:
        return _without_figure(
            answer, "no extreme computed: the quote is no row of a table to compare rows of"
        )
    try:
        page = library.page(at.source, at.page, as_of=context.as_of, caller=context.caller)
    except PageNotFoundError:
        return _without_figure(answer, "no extreme computed: the table's page is not readable")
    assert at.table is not None
    table = extremes.table_rows(page.passages, at.table)
    ended = _read_to_end(library, context, at, page.passages, table)
    if isinstance(ended, str):
        return _without_figure(answer, f"no extreme computed: {ended}")
    table = ended
    rows = extremes.rows_under(result.question, table)
    if extremes.cut(table, rows):
        return _without_figure(
            answer, f"no extreme computed: the table has more than {extremes.MAX_ROWS} rows to compare"
        )
    found = extremes.extreme(chosen, rows, at, context)
    if isinstance(found, str):
        return _without_figure(answer, f"no extreme computed: {found}")
    value, row = found
    location = (value.operands or ())[0].citation
    if extremes.extreme_check(value) is not None or checked(value, row.text) is None:
        return _without_figure(answer, "no extreme computed: its check failed")
    verified = Answer.verified_quote(row.text, location)
    return verified.model_copy(update={"call": answer.call, "selection": answer.selection, "value": value})


def _read_to_end(
    library: Searcher,
    context: Asking,
    at: Location,
    passages: Sequence[Passage],
    table: list[Passage],
) -> list[Passage] | str:
    """`table` (the rows of a table on `at`'s page) with the rows that continue it on the pages
    after, as the caller may see them (`extremes.continuation`), read until it ends; or why it
    cannot be read to its end: an extreme of part of a table is not the table's."""
    rows = list(table)
    page, shown = at.page, passages
    for _ in range(extremes.MAX_CONTINUED_PAGES):
        if page is None or not shown or shown[-1] not in rows or len(rows) > extremes.MAX_ROWS:
            return rows  # the table does not end its page: it ended where it stands
        last = context.last_page(at.source)
        if last is None:
            return "the table ends its page, and the document's last page is not known"
        if page >= last:
            return rows
        try:
            following = library.page(at.source, page + 1, as_of=context.as_of, caller=context.caller).passages
        except PageNotFoundError:
            return f"the table ends its page, and page {page + 1} cannot be read"
        more = extremes.continuation(rows, following)
        if more is None:
            return f"the table ends its page, and page {page + 1} may continue it"
        if not more:
            return rows
        rows += more
        page, shown = page + 1, following
    return f"the table runs on past {extremes.MAX_CONTINUED_PAGES} more pages"


def _totalled(answer: Answer, context: Asking, chosen: totals.TotalPlan) -> Answer:
    """The total, difference or average over the cells the part names of the table its verified
    quote is a row of (`localqa.derived.totals`), read whole as the caller may see it; the part's
    answer with a note when none, where a value its quote states stands only when it is the
    figure asked (`totals.stated`: not "24 hours" for "how many more tweets")."""
    at = answer.citation if answer.verified else None
    if at is None:
        return answer  # a refusal stays as it is: there is no table to read and no quote to note
    if not totals.stated(chosen, answer.value):
        answer = answer.model_copy(update={"value": None})
    if at.kind is not Kind.TABLE or at.table is None:
        return _without_figure(answer, "no figure computed: the quote is no row of a table to add cells of")
    table = context.table(at)
    held = any(
        (r.source, r.page, r.table, r.row) == (at.source, at.page, at.table, at.row) for r in table.rows
    )
    if not held:
        return _without_figure(answer, "no figure computed: the quote's table is not readable")
    found = totals.total(chosen, table.rows, at, context.around(at))
    if found.value is None:
        return _without_figure(answer, found.why or "no figure computed")
    first = (found.value.operands or ())[0]
    shown = checked(found.value, first.quote)
    if shown is None:
        return _without_figure(answer, "no figure computed: its check failed")
    verified = Answer.verified_quote(first.quote, first.citation)
    return verified.model_copy(update={"call": answer.call, "selection": answer.selection, "value": shown})


def _without_figure(answer: Answer, why: str) -> Answer:
    """The part's own answer when its figure could not be computed: a verified quote stands, with
    `why` beside it; a refusal says both its own reason and `why`."""
    if answer.verified:
        return answer.model_copy(update={"figure_note": why})
    if answer.model_failed:
        return answer
    reason = f"{why}; and no quote was verified: {answer.reason}" if answer.reason else why
    return answer.model_copy(update={"reason": reason})


def _candidates(
    library: Searcher, planned: Sequence[figures.FigurePlan], context: Asking, within: Chosen
) -> dict[str, list[Candidate]]:
    """Each line item's candidate rows (by item key), searched once for all the figures planned, by
    each of its row labels (`operands.search_texts`), lexically, within `within`, as the caller."""
    lexical = library.settings.retrieval.model_copy(update={"retriever": "lexical", "per_page": 0})
    candidates: dict[str, list[Candidate]] = {}
    for figure in planned:
        for item in {need.item.key: need.item for need in figure.needs}.values():
            if item.key in candidates:
                continue
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
                found += [c for c in part.candidates if c.location not in seen and _measures(c, item)]
    return candidates


def _measures(candidate: Candidate, item: Item) -> bool:
    """Whether a candidate row may give a qualified item ("US net sales"): a row under another
    line item's heading ("US" under "Operating income:") measures that item (`pairs.measures`)."""
    if item.qualifies is None or candidate.location.kind is not Kind.TABLE:
        return True
    label = row_label(read_row(candidate.text)) or ""
    return pairs.measures(candidate.text, label, candidate.location.section, item) is None


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
