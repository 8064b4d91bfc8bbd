"""Answering one question part: ask a model to pick a quote, then verify it before display.

Verification is plain code and runs on every reply, whatever the backend or schema: the label
must be one that was supplied, the quote non-blank and, after whitespace normalisation only, a
whole sentence (or whole table row) of that passage's text (`quote_check`, the one rule, which
grading recorded answers uses too). Anything else becomes a refusal with the reason. A verified
quote is withheld too when the model itself was unsure of the passage it chose (`unsure`). This is
the only place a verified `Answer` is made from a model's reply.
"""

from __future__ import annotations

import json
import re
import time
from enum import Enum

from pydantic import BaseModel, ConfigDict

from localqa import coverage, prompts
from localqa.errors import ModelError
from localqa.models.base import AnswerModel
from localqa.settings import AnswerSettings
from localqa.text import squash
from localqa.types import Answer, Candidate, Kind, Location, ModelCall


class QuoteChoice(BaseModel):
    """The reply the schema asks for."""

    model_config = ConfigDict(extra="forbid")

    source: str | None
    quote: str | None


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
    if quote not in {squash(unit) for unit in prompts.units(text, kind)}:
        return QuoteProblem.PARTIAL
    return None


def verify(reply: str, passages: dict[str, Candidate]) -> Answer:
    """Turn a raw model reply into a verified Answer or a refusal saying why.

    A reason never repeats the model's text: an unverified quote must not reach the reader, not
    even inside an explanation.
    """
    try:
        choice = QuoteChoice.model_validate(json.loads(reply))
    except (ValueError, TypeError, RecursionError):  # JSONDecodeError and ValidationError are ValueErrors
        return Answer.refused("the model's reply is not the expected JSON")
    if choice.source is None and choice.quote is None:
        return Answer.refused("the model found no passage that answers the question")
    if choice.source not in passages:
        if choice.source is None:
            return Answer.refused("the model gave a quote but no passage label")
        # Only a label-shaped value is repeated: anything longer may be quote text in the wrong field.
        shown = f"{choice.source!r}" if re.fullmatch(r"[A-Za-z]{0,2}\d{1,3}", choice.source) else "a label"
        return Answer.refused(f"the model cited {shown}, which is not one of the supplied passages")
    cited = passages[choice.source]
    problem = quote_check(choice.quote or "", cited.text, cited.location.kind)
    if problem is QuoteProblem.BLANK:
        return Answer.refused(f"the model's quote from {choice.source} is blank")
    if problem is QuoteProblem.ABSENT:
        return Answer.refused(f"the model's quote is not in {choice.source}'s text")
    if problem is QuoteProblem.PARTIAL:
        return Answer.refused(f"the model's quote is only part of a sentence of {choice.source}")
    return Answer.verified_quote(squash(choice.quote or ""), cited.location)


def unsure(label_confidence: float | None, settings: AnswerSettings) -> bool:
    """Whether the model's choice of passage is too uncertain to show its quote: when no passage
    answers, a small model still picks one, with a low probability (see
    AnswerSettings.min_label_confidence). A backend that reports no probability is not judged."""
    return label_confidence is not None and label_confidence < settings.min_label_confidence


def answer_part(
    question: str,
    candidates: tuple[Candidate, ...],
    model: AnswerModel,
    settings: AnswerSettings | None = None,
) -> Answer:
    """Choose and verify a quote for one part. No candidates: no model call, a refusal."""
    if not candidates:
        return Answer.refused("no eligible passage matches this part")
    settings = settings or AnswerSettings()
    request = prompts.request(question, candidates, settings)
    started = time.perf_counter()
    try:
        completion = model.complete(request)
    except ModelError as error:
        return Answer.failed(str(error))
    call = ModelCall(
        seconds=time.perf_counter() - started,
        prompt_tokens=completion.prompt_tokens,
        cached_tokens=completion.cached_tokens,
        completion_tokens=completion.completion_tokens,
        label_confidence=completion.label_confidence,
    )
    answer = verify(completion.text, dict(request.passages))
    if answer.citation is not None and unsure(completion.label_confidence, settings):
        answer = Answer.refused(
            f"the model was unsure which passage answers (probability {completion.label_confidence:.2f} "
            f"for the one it chose, below {settings.min_label_confidence:.2f})"
        )
    answer = coverage.judge(question, answer.model_copy(update={"call": call}), candidates, settings)
    if answer.citation is None:
        return answer
    other = _other_documents(candidates, answer.citation, settings)
    return answer.model_copy(update={"other_evidence": other})


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
