"""Scoring one case: retrieval, answer and authorization, each on its own.

Leaks are judged from structured (tenant, document) references looked up in the index, never from
the candidate's text or an id prefix: two tenants may share citation ids and wording.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Literal

from localqa.answers.answering import quote_check
from localqa.answers.listing import list_problem
from localqa.derived.comparing import comparison_check
from localqa.derived.computing import figure_check
from localqa.evaluate.expected_value import judge
from localqa.evaluate.suite import Case, Expect
from localqa.indexing.catalog import visible_labels
from localqa.language.text import squash
from localqa.types import (
    Caller,
    Candidate,
    Coverage,
    DecidedBy,
    Document,
    Doubt,
    Frozen,
    ListItem,
    Location,
    PartResult,
    Selection,
    Status,
    Value,
)

Attribution = Literal["retrieval", "generation", "contract"]
# Why a value is wrong: the evidence was not retrieved; it was, and the answer quoted elsewhere (or
# nothing); the right passage was quoted and the wrong cell or span taken from it (or none); every
# operand of a derived figure came from the right passages and the result is still wrong.
ValueBlame = Literal["retrieval", "quote", "span", "arithmetic"]
# The answer stage against retrieval's first passage: it was right and the answer cites elsewhere
# (a loss), or it was wrong and the answer cites an expected passage (a rescue).
FirstPassage = Literal["loss", "rescue"]
TextAt = Callable[[Location], str | None]


class RetrievalScore(Frozen):
    hit_at_1: bool | None  # None for cases that expect nothing
    recall: float | None
    reciprocal_rank: float | None
    precision: float | None  # None when nothing was returned
    no_answer_correct: bool | None  # only for cases that expect nothing


class PartTiming(Frozen):
    """One part's answer as its reader waited for it: the seconds of its answer stage (figures
    included) plus its share of the one search that served every part of the question, and what
    chose its quote: the evidence or a language model (None: no choice was made, or the backend is
    the extractive scorer itself)."""

    seconds: float
    decided_by: DecidedBy | None


class AnswerScore(Frozen):
    quote: str | None
    citation: Location | None
    verified: bool  # the shown quote is a whole sentence (or row) of the cited passage
    shown_unverified: bool  # a quote was shown that is not: the gate
    citation_correct: bool | None
    contains_phrase: bool | None
    abstention_correct: bool | None
    reason: str | None = None
    model_failed: bool = False  # the backend itself failed: it never judged the evidence
    # The sentence scorer's ranking, the model's choice and whether it overrode the ranking;
    # None for recorded answers (no scorer ran).
    selection: Selection | None = None
    coverage: Coverage | None = None  # the evidence-coverage verdict on the model's quote
    # The doubts that withheld a quote, refused with it as its closest passage (`Answer.closest`).
    doubts: tuple[Doubt, ...] = ()
    value: Value | None = None  # the answer's value, as shown
    value_correct: bool | None = None  # None: the case states no value
    value_why: str | None = None  # what was compared, for a wrong value
    value_blame: ValueBlame | None = None
    first_passage: FirstPassage | None = None
    # A value shown that is not a checked figure (`unchecked_figure`), in any part: the gate.
    unchecked_figure: str | None = None
    # A list item shown that is not a verified quote (`unchecked_item`), in any part: a gate too.
    unchecked_item: str | None = None
    # Why the figure the part asks for was not computed, said beside its verified quote.
    figure_note: str | None = None
    parts: tuple[PartTiming, ...] = ()  # every part's time and decider, in the question's order


class Leak(Frozen):
    part: int
    rank: int
    tenant: str
    doc_id: str
    source: str
    why: str


def score_retrieval(case: Case, parts: list[PartResult]) -> RetrievalScore:
    candidates = [c for part in parts for c in part.candidates]
    if not case.answerable:
        return RetrievalScore(
            hit_at_1=None,
            recall=None,
            reciprocal_rank=None,
            precision=0.0 if candidates else None,
            no_answer_correct=not candidates,
        )
    found = [e for e in case.expect if any(_hit(e, c) for c in candidates)]
    ranks = [c.rank for c in candidates if any(_hit(e, c) for e in case.expect)]
    relevant = sum(1 for c in candidates if any(_hit(e, c) for e in case.expect))
    return RetrievalScore(
        hit_at_1=1 in ranks,
        recall=len(found) / len(case.expect),
        reciprocal_rank=1 / min(ranks) if ranks else 0.0,
        precision=relevant / len(candidates) if candidates else None,
        no_answer_correct=None,
    )


def score_answer(
    case: Case,
    quote: str | None,
    citation: Location | None,
    cited_text: str | None,
    reason: str | None = None,
    model_failed: bool = False,
    selection: Selection | None = None,
) -> AnswerScore:
    """Grade a shown quote against the text of the passage it cites (`cited_text`, looked up by
    the caller). Verification is redone here rather than trusted from the answering code, with
    the same rule `ask` shows quotes by (`localqa.answers.answering.quote_check`): a whole sentence or row.
    Recorded answers from another system are held to it too: a cut-short quote can drop the
    sentence's exception, and a metric that accepted what `ask` refuses to show would not compare
    two systems on the same contract."""
    shown = quote is not None and bool(quote.strip())
    verified = (
        shown
        and cited_text is not None
        and citation is not None
        and quote_check(quote or "", cited_text, citation.kind) is None
    )
    expected_hit = (
        verified and citation is not None and any(e.matches(citation, cited_text or "") for e in case.expect)
    )
    return AnswerScore(
        quote=quote,
        citation=citation,
        verified=verified,
        shown_unverified=shown and not verified,
        citation_correct=expected_hit if case.answerable else None,
        contains_phrase=(squash(case.phrase) in squash(quote or ""))
        if case.answerable and case.phrase
        else None,
        # A backend that failed did not abstain: it never judged the evidence.
        abstention_correct=None if case.answerable else not shown and not model_failed,
        reason=reason,
        model_failed=model_failed,
        selection=selection,
    )


def score_value(
    case: Case,
    answer: AnswerScore,
    value: Value | None,
    recall: float | None,
    text_at: TextAt,
) -> AnswerScore:
    """`answer` with the answer's value and, when the case states one, whether it is right and, if
    not, why (`value_blame`). `text_at` gives the text of the passage at a location (an operand's
    citation is judged as the answer's is: `Expect.matches`)."""
    expected = case.expected_value
    if expected is None:
        return answer.model_copy(update={"value": value})
    verdict = judge(expected, value)
    return answer.model_copy(
        update={
            "value": value,
            "value_correct": verdict.correct,
            "value_why": None if verdict.correct else verdict.why,
            "value_blame": None if verdict.correct else value_blame(case, answer, value, recall, text_at),
        }
    )


def value_blame(
    case: Case, answer: AnswerScore, value: Value | None, recall: float | None, text_at: TextAt
) -> ValueBlame:
    """Why a wrong value is wrong. A derived figure whose operands all cite expected passages is
    the arithmetic's (or the expression's) fault; one whose operand cites elsewhere is retrieval's
    when some expected evidence was not retrieved, else the answer's choice of passage. A plain
    value from an expected passage is the cell's or span's fault; from elsewhere, retrieval's when
    no expected evidence was retrieved, else the answer's choice of passage."""
    if value is not None and value.operands is not None:
        if all(expected_at(case, o.citation, text_at) for o in value.operands):
            return "arithmetic"
        return "retrieval" if recall != 1.0 else "quote"
    if answer.citation_correct:
        return "span"
    return "retrieval" if not recall else "quote"


def cited_by_figure(case: Case, answer: AnswerScore, value: Value | None, text_at: TextAt) -> AnswerScore:
    """A derived figure cites each of its operands, each shown with its quote (the answer's own
    citation is its first operand's): it cites expected evidence when one of them does."""
    operands = list(value.operands or ()) if value is not None else []
    if value is not None and value.comparison is not None:  # each figure compared cites its operands
        operands += [o for figure in value.comparison.figures for o in figure.operands or ()]
    if answer.citation_correct is False and any(expected_at(case, o.citation, text_at) for o in operands):
        return answer.model_copy(update={"citation_correct": True})
    return answer


def first_passage(case: Case, first: Candidate | None, answer: AnswerScore) -> FirstPassage | None:
    """A loss: retrieval's first passage was expected evidence and the answer cites another. A
    rescue: it was not, and the answer cites expected evidence. A refusal is neither: it cites
    nothing."""
    if not case.answerable or not answer.verified:
        return None
    first_right = first is not None and any(_hit(e, first) for e in case.expect)
    if first_right and not answer.citation_correct:
        return "loss"
    if not first_right and answer.citation_correct:
        return "rescue"
    return None


def expected_at(case: Case, location: Location, text_at: TextAt) -> bool:
    return any(e.matches(location, text_at(location) or "") for e in case.expect)


def unchecked_figure(value: Value | None, quote: str | None, text_at: TextAt) -> str | None:
    """Why a shown value is not a checked figure (None: it is, or no value was shown): it fails
    the one figure rule (`localqa.derived.computing.figure_check`, which `ask` applies before showing it)
    against the quote it comes from, or an operand's quote is not a verified quote (a whole
    sentence or row: `quote_check`) of the passage the index holds at the operand's citation."""
    if value is None or value.items is not None:  # a list's items: `unchecked_item`
        return None
    problem = figure_check(value, quote or "")
    if problem is not None:
        return f"{value.text!r}: {problem.value}"
    compared = comparison_check(value)
    if compared is not None:
        return f"{value.text!r}: {compared}"
    figures = value.comparison.figures if value.comparison else ()
    for operand in [o for v in (value, *figures) for o in v.operands or ()]:
        text = text_at(operand.citation)
        if text is None or quote_check(operand.quote, text, operand.citation.kind) is not None:
            return f"{value.text!r}: operand {operand.name} is not quoted from {operand.citation.brief()}"
    return None


def unchecked_item(value: Value | None, text_at: TextAt) -> str | None:
    """Why a shown list value is not one of verified items (None: it is, or it lists nothing): it
    fails the list rule (`localqa.answers.listing.list_problem`, which `ask` builds lists by), an item's
    quote being checked by the one rule (`quote_check`) against the passage the index holds at its
    citation."""
    if value is None or value.items is None:
        return None

    def verified(item: ListItem) -> bool:
        text = text_at(item.citation)
        return text is not None and quote_check(item.quote, text, item.citation.kind) is None

    problem = list_problem(value, verified)
    return None if problem is None else f"{value.text[:60]!r}: {problem}"


def find_leaks(
    parts: list[PartResult], owners: dict[str, Document], visible: set[str], caller: Caller, as_of: date
) -> list[Leak]:
    """Candidates the case's caller may not see. `owners` maps every indexed doc_id to its
    document as stored in the index; `visible` is the set of doc_ids the eligibility filter allows
    on the case's date. Tenant, access, status and date are also checked here directly, so a bug
    in the filter itself cannot pass the gate. A candidate whose document is unknown is a leak."""
    leaks = []
    for number, part in enumerate(parts, start=1):
        for candidate in part.candidates:
            owner = owners.get(candidate.doc_id)
            why = "unknown document" if owner is None else forbidden(owner, caller, as_of)
            if why is None and candidate.doc_id not in visible:
                why = "not in force for the caller on this date (superseded)"
            if why is not None:
                leaks.append(
                    Leak(
                        part=number,
                        rank=candidate.rank,
                        tenant=owner.tenant if owner else "?",
                        doc_id=candidate.doc_id,
                        source=owner.source if owner else candidate.location.source,
                        why=why,
                    )
                )
    return leaks


def forbidden(owner: Document, caller: Caller, as_of: date) -> str | None:
    """Why `caller` may not see `owner` on `as_of`, from the rules alone (None: it may, unless a
    newer version supersedes it, which only the eligibility filter decides)."""
    if owner.tenant != caller.tenant:
        return f"tenant {owner.tenant}, caller is tenant {caller.tenant}"
    if owner.access is None or owner.access not in visible_labels(caller.role):
        return f"access {owner.access}, caller is role {caller.role}"
    if owner.status is not Status.CURRENT:
        return f"status {owner.status.value}"
    if owner.effective is not None and owner.effective > as_of:
        return f"effective {owner.effective.isoformat()}, after {as_of.isoformat()}"
    return None


def answer_leak(owner: Document | None, doc_id: str, caller: Caller, as_of: date) -> list[Leak]:
    """A recorded answer that cites a passage the caller may not see (rank 0: the answer itself)."""
    why = (forbidden(owner, caller, as_of) if owner else None) or "not in force for the caller on this date"
    return [
        Leak(
            part=0,
            rank=0,
            tenant=owner.tenant if owner else "?",
            doc_id=doc_id,
            source=owner.source if owner else "?",
            why="the answer cites it: " + (why if owner else "unknown document"),
        )
    ]


def attribute(
    case: Case, retrieval: RetrievalScore, answer: AnswerScore | None, shown_candidates: bool
) -> Attribution | None:
    """Why a case failed: the expected evidence was absent (retrieval), present but the answer
    missed or misquoted it (generation), or nothing was expected but something was shown (contract).
    A quote withheld by the evidence-coverage check on an answerable case is the answer stage's
    miss (generation): the evidence was there, the answer stage judged it not to cover the question."""
    if not case.answerable:
        if answer is not None and answer.abstention_correct is False and answer.quote is None:
            return "generation"  # the model failed instead of judging the evidence
        if answer is None and case.abstain_at == "answer":
            return None  # retrieval may return its nearest passages: no answer stage ran
        shown = answer.quote is not None if answer is not None else shown_candidates
        return "contract" if shown else None
    if retrieval.recall != 1.0:
        return "retrieval"
    if answer is not None and not (
        answer.verified
        and answer.citation_correct
        and answer.contains_phrase is not False
        and answer.value_correct is not False
    ):
        return "generation"
    return None


def _hit(expect: Expect, candidate: Candidate) -> bool:
    return expect.matches(candidate.location, candidate.text)
