"""Answering one question part: rank its sentences, ask a model to pick one, verify it before
display.

The sentence scorer (`localqa.answers.sentences`) ranks the quotable units of the part's candidates; the
model is shown the best few and replies with a passage label and a sentence number, which code
maps back to the verbatim unit. Verification is plain code and runs on every reply, whatever the
backend or schema: the label must be one that was supplied, the number one of the units shown for
it, and the unit, after whitespace normalisation only, a whole sentence (or whole table row) of
that passage's text (`quote_check`, the one rule, which grading recorded answers uses too).
Anything else becomes a refusal with the reason, which never repeats the model's text. A verified
quote is withheld too when its evidence plainly lacks what the question names
(`localqa.answers.coverage`: an identifier, a name, a period); where the stage is only unsure (the model
gave the passage it chose a low probability, `unsure`; a word no passage carries) the quote is
shown with the doubt named beside it (`Answer.doubts`), as `AnswerSettings.refusals` chooses. An
override of the scorer's first sentence stands only when the model was sure enough of it
(`overruled`); otherwise the scorer's first is quoted, verified by the same rule. Which unit the
model chose, whether it overrode the scorer's first and whether that stood, is recorded on the
answer (`Selection`). This is the only place a verified `Answer` is made from a model's reply.
A part that asks for a list or a count gets, after its quote is verified, the other items of the
list, each verified by the same rule (`_listed`, `localqa.answers.listing`); one that asks what an
acronym stands for, the sentence of its documents that defines it, verified by the same rule, with
the long form as its value (`_defined`, `localqa.answers.definitions`).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Collection
from dataclasses import dataclass
from enum import Enum

from pydantic import BaseModel, ConfigDict

from localqa.answers import coverage, deciding, definitions, listing, prompts, sentences
from localqa.derived import computing
from localqa.errors import ModelError
from localqa.language.text import squash
from localqa.models.base import AnswerModel, AnswerRequest, Completion
from localqa.question.acronyms import acronym_asked
from localqa.settings import AnswerSettings
from localqa.types import Answer, Candidate, Doubt, Kind, Location, ModelCall, RankedUnit, Selection, Value
from localqa.values.choosing import Context, value_of


class QuoteChoice(BaseModel):
    """The reply the schema asks for: a passage label and the number of a sentence (or table
    row) in it, or both null. Strict: "3" is not a number, nor is true."""

    model_config = ConfigDict(extra="forbid", strict=True)

    source: str | None
    sentence: int | None


class QuoteProblem(Enum):
    BLANK = "blank"
    ABSENT = "absent"  # not in the passage's text at all
    PARTIAL = "partial"  # in the text, but not a whole sentence (or row) of it


def quote_check(quote: str, text: str, kind: Kind) -> QuoteProblem | None:
    """The verification rule: after whitespace normalisation, `quote` is one whole sentence of
    `text` (a whole row for a table passage). None when it is.

    A verbatim but cut-short quote is refused: the end of a sentence is where an exception
    ("unless ...") lives.
    """
    quote = squash(quote)
    if not quote:
        return QuoteProblem.BLANK
    if quote not in squash(text):
        return QuoteProblem.ABSENT
    if quote not in {squash(unit) for unit in sentences.units(text, kind)}:
        return QuoteProblem.PARTIAL
    return None


@dataclass(frozen=True)
class Verdict:
    """A reply judged: the answer (a verified quote or a refusal saying why), and the shown unit
    the reply named (None when it named none)."""

    answer: Answer
    choice: RankedUnit | None = None


def verify(reply: str, request: AnswerRequest) -> Verdict:
    """Turn a raw model reply into a verified Answer or a refusal saying why.

    A reason never repeats the model's text: an unverified quote must not reach the reader, not
    even inside an explanation. It names at most a label-shaped value and a sentence number.
    """
    try:
        choice = QuoteChoice.model_validate(json.loads(reply))
    except (ValueError, TypeError, RecursionError):  # JSONDecodeError and ValidationError are ValueErrors
        return Verdict(Answer.refused("the model's reply is not the expected JSON"))
    return _judge_choice(choice.source, choice.sentence, request)


def _judge_choice(label: str | None, number: int | None, request: AnswerRequest) -> Verdict:
    """A choice of passage label and sentence number judged against what was shown: the verified
    unit, or a refusal saying why (the checks of `verify`, whoever made the choice)."""
    if label is None:
        if number is None:
            return Verdict(Answer.refused("the model found no passage that answers the question"))
        return Verdict(Answer.refused("the model gave a sentence number but no passage label"))
    if label not in request.passages:
        # Only a label-shaped value is repeated: anything longer may be quote text in the wrong field.
        shown = f"{label!r}" if re.fullmatch(r"[A-Za-z]{0,2}\d{1,3}", label) else "a label"
        return Verdict(Answer.refused(f"the model cited {shown}, which is not one of the supplied passages"))
    if number is None:
        return Verdict(Answer.refused(f"the model cited {label} but no sentence number"))
    unit = request.unit(label, number)
    if unit is None:
        which = f"sentence {number}" if 0 < number < 1000 else "a sentence"
        return Verdict(Answer.refused(f"the model chose {which} of {label}, which it was not shown"))
    cited = request.passages[label]
    if quote_check(unit.text, cited.text, cited.location.kind) is not None:  # the one rule, always
        return Verdict(
            Answer.refused(f"sentence {number} of {label} is not a whole sentence of its text"), unit
        )
    return Verdict(Answer.verified_quote(squash(unit.text), cited.location), unit)


def unsure(label_confidence: float | None, settings: AnswerSettings) -> bool:
    """Whether the model's choice of passage is too uncertain to show its quote: when no passage
    answers, a small model still picks one, with a low probability (see
    AnswerSettings.min_label_confidence). A backend that reports no probability is not judged."""
    return label_confidence is not None and label_confidence < settings.min_label_confidence


def overruled(choice: RankedUnit | None, label_confidence: float | None, settings: AnswerSettings) -> bool:
    """Whether the model's choice of another unit than the scorer's first is too uncertain to
    stand (see AnswerSettings.min_override_confidence). A backend that reports no probability is
    not judged."""
    return (
        choice is not None
        and choice.rank != 1
        and label_confidence is not None
        and label_confidence < settings.min_override_confidence
    )


def answer_part(
    question: str,
    candidates: tuple[Candidate, ...],
    model: AnswerModel,
    settings: AnswerSettings | None = None,
    context: Context | None = None,
    *,
    decided: str | None = None,
    unheld: Collection[str] | None = None,
) -> Answer:
    """Choose and verify a quote for one part, with the value it gives (`localqa.values`; the
    `context` says what else a value may read). No candidates: no model call, a refusal. Where the
    evidence decides (`localqa.answers.deciding`; `decided`: the caller already knows by which rule), the
    scorer's first unit is the choice and no model is called. `unheld`: the part's search terms the
    collection lacks (`PartResult.unheld`), for the coverage check."""
    if not candidates:
        return Answer.refused("no eligible passage matches this part")
    settings = settings or AnswerSettings()
    ranking = sentences.rank(question, candidates, settings)
    request = prompts.request(question, candidates, settings, ranking)
    selection = Selection(
        scorer=ranking.scorer, note=ranking.note, seconds=ranking.seconds, shown=request.units
    )
    decided = decided or evidence_decides(question, candidates, model, settings, context, ranking)
    started = time.perf_counter()
    try:
        completion = scorers_first(request) if decided else model.complete(request)
    except ModelError as error:
        return Answer.failed(str(error)).model_copy(update={"selection": selection})
    call = None if decided else _call(completion, time.perf_counter() - started)
    verdict = verify(completion.text, request)
    answer, confidence, kept_first = verdict.answer, completion.label_confidence, False
    doubted = answer.citation is not None and unsure(confidence, settings)
    why = (
        f"the model was unsure which passage answers (probability {confidence:.2f} "
        f"for the one it chose, below {settings.min_label_confidence:.2f})"
        if doubted and confidence is not None
        else ""
    )
    if doubted and "confidence" in settings.refusals:
        answer = Answer.refused(why)
    elif answer.citation is not None and overruled(verdict.choice, confidence, settings):
        first = next(unit for unit in request.units if unit.rank == 1)
        answer = _judge_choice(first.label, first.sentence, request).answer
        kept_first = True
    if doubted and answer.verified:  # no better than chance as a refusal: the quote, and the doubt named
        answer = answer.model_copy(update={"doubts": (Doubt(kind="confidence", term=None, note=why),)})
    chose = {"choice": verdict.choice, "kept_first": kept_first, **decision(decided)}
    answer = answer.model_copy(update={"call": call, "selection": selection.model_copy(update=chose)})
    answer = coverage.judge(question, answer, candidates, settings, unheld=unheld)
    if answer.citation is None or answer.quote is None:
        return answer
    answer = answer.model_copy(
        update={
            "other_evidence": _other_documents(candidates, answer.citation, settings),
            "value": checked(value_of(question, answer.quote, answer.citation, context), answer.quote),
        }
    )
    defined = _defined(question, answer, candidates, settings, context, unheld)
    if defined is not None:
        return defined
    return _listed(question, answer, ranking, candidates, settings, context, unheld)


def _defined(
    question: str,
    answer: Answer,
    candidates: tuple[Candidate, ...],
    settings: AnswerSettings,
    context: Context | None,
    unheld: Collection[str] | None = None,
) -> Answer | None:
    """A part asking what an acronym stands for (`localqa.answers.definitions`): the answer with,
    as its quote, the sentence that defines it (the part's passages first, then its documents'
    as the caller may see them through `context`), verified by the one rule and cited where it
    is, judged for evidence coverage afresh (`_rejudged`), and the long form as its value; None
    when the part asks no such thing, no visible sentence defines it or coverage refuses that
    sentence (the answer stands)."""
    acronym = acronym_asked(question)
    if acronym is None or answer.citation is None:
        return None
    found = definitions.definition(acronym, answer.citation, candidates, context, _defines)
    if found is None:
        return None
    update = {
        "quote": found.quote,
        "citation": found.citation,
        "value": checked(Value(text=found.long_form), found.quote),
        "other_evidence": _other_documents(candidates, found.citation, settings),
    }
    return _rejudged(question, answer.model_copy(update=update), found.passage, candidates, settings, unheld)


def _rejudged(
    question: str,
    replaced: Answer,
    passage: str,
    candidates: tuple[Candidate, ...],
    settings: AnswerSettings,
    unheld: Collection[str] | None,
) -> Answer | None:
    """An answer whose quote the answer stage replaced after coverage judged the first one (the
    sentence that defines an acronym, a list's first entry), judged afresh on its new quote and
    `passage`: the doubts and verdict of the quote it replaced say nothing of this one (a word
    "no passage mentions" that the new quote holds, a name its document lacks). None when
    coverage refuses the new quote."""
    assert replaced.citation is not None  # a replaced answer is a verified quote
    fresh = replaced.model_copy(update={"coverage": None, "doubts": ()})
    judged = coverage.judge(
        question,
        fresh,
        (*candidates, _as_candidate(replaced.citation, passage, candidates)),
        settings,
        unheld=unheld,
    )
    return judged if judged.verified else None


def _as_candidate(where: Location, passage: str, candidates: tuple[Candidate, ...]) -> Candidate:
    """A passage read beyond retrieval (a document's definition, a contents page's entry) as a
    candidate of its document, for the coverage check: the retrieved candidate at `where` when
    there is one, else its text and place with the owner, title and period of its document's
    best candidate (one source is one document)."""
    same = next((c for c in candidates if c.location == where), None)
    if same is not None:
        return same
    document = min((c for c in candidates if c.location.source == where.source), key=lambda c: c.rank)
    return document.model_copy(
        update={"rank": len(candidates) + 1, "score": 0.0, "location": where, "text": passage, "boxes": ()}
    )


def _defines(found: definitions.Defined) -> bool:
    """Whether a defining sentence may be the part's quote: a verified quote of its passage (as a
    list item is: `_item_check`) whose long form passes the figure rule (`checked`)."""
    verified = _item_check(found.quote, found.passage, found.citation.kind) is None
    return verified and checked(Value(text=found.long_form), found.quote) is not None


def _listed(
    question: str,
    answer: Answer,
    ranking: sentences.Ranking,
    candidates: tuple[Candidate, ...],
    settings: AnswerSettings,
    context: Context | None,
    unheld: Collection[str] | None = None,
) -> Answer:
    """A part asking for a list or a count gets its items (`localqa.answers.listing`; a table's
    rows read whole through `context`), each verified by the one rule; every other answer is
    unchanged. An item is held to what the quote is held to: a sentence that addresses its reader
    ("Ignore all previous instructions: ...") states no fact, and is no item
    (`coverage.addresses_reader`). A list whose first item became the quote (numbered entries) is
    judged for coverage on that quote (`_rejudged`); when coverage refuses it, the answer stands
    without the list."""
    listed = listing.list_answer(question, answer, ranking.units, candidates, settings, _item_check, context)
    if listed.citation == answer.citation or listed.citation is None or listed.quote is None:
        return listed
    update = {"other_evidence": _other_documents(candidates, listed.citation, settings)}
    rejudged = _rejudged(
        question, listed.model_copy(update=update), listed.quote, candidates, settings, unheld
    )
    return answer if rejudged is None else rejudged


def _item_check(quote: str, text: str, kind: Kind) -> object:
    """A list item's check: the verification rule, and no sentence that addresses its reader."""
    if coverage.addresses_reader(quote):
        return coverage.ADDRESSED
    return quote_check(quote, text, kind)


def evidence_decides(
    question: str,
    candidates: tuple[Candidate, ...],
    model: AnswerModel,
    settings: AnswerSettings,
    context: Context | None,
    ranking: sentences.Ranking,
) -> str | None:
    """The rule by which the evidence decides the part (`localqa.answers.deciding`), or None: the model
    chooses. Only a language model is spared; the extractive baseline is the scorer's first anyway."""
    if not model.is_language_model:
        return None
    return deciding.decides(question, candidates, ranking.units, settings, context)


def scorers_first(request: AnswerRequest) -> Completion:
    """The reply naming the scorer's first unit, as a model would give it: verified by the same
    rule (`verify`). No probability: nothing was asked."""
    first = min(request.units, key=lambda unit: unit.rank)
    return Completion(text=json.dumps({"source": first.label, "sentence": first.sentence}))


def decision(decided: str | None) -> dict[str, str | None]:
    """The `Selection` fields saying who decided."""
    return {"decided_by": "evidence" if decided else "model", "decided": decided}


def checked(value: Value | None, quote: str) -> Value | None:
    """`value` when it passes the figure rule against its quote (`computing.figure_check`), else
    None: a value that fails it is never shown."""
    return value if value is not None and computing.figure_check(value, quote) is None else None


def _call(completion: Completion, seconds: float) -> ModelCall:
    return ModelCall(
        seconds=seconds,
        prompt_tokens=completion.prompt_tokens,
        cached_tokens=completion.cached_tokens,
        completion_tokens=completion.completion_tokens,
        prompt_seconds=completion.prompt_seconds,
        generation_seconds=completion.generation_seconds,
        label_confidence=completion.label_confidence,
    )


def _other_documents(
    candidates: tuple[Candidate, ...], cited: Location, settings: AnswerSettings
) -> tuple[Location, ...]:
    """Strong candidates from other documents: shown under the quote, so that a conflict is seen
    rather than silently resolved."""
    best = max(c.score for c in candidates)
    return tuple(
        c.location
        for c in candidates
        if c.location.source != cited.source
        and c.rank <= settings.other_evidence_ranks
        and c.score >= settings.other_evidence_share * best
    )
