"""Answering one question part: ask a model to pick a quote, then verify it before display.

Verification is plain code and runs on every reply, whatever the backend or schema: the label
must be one that was supplied, the quote non-blank and, after whitespace normalisation only, a
literal substring of that passage's text; stricter still, a whole sentence (or table row) of it.
Anything else becomes a refusal with the reason. This is the only place an `Answer` with
`verified=True` is made.
"""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, ConfigDict

from localqa import prompts
from localqa.errors import ModelError
from localqa.extract.text import squash
from localqa.models.base import AnswerModel
from localqa.types import Answer, Candidate, Location

MODEL_ERROR = "model error: "  # prefix of the reason when the backend itself failed


class QuoteChoice(BaseModel):
    """The reply the schema asks for."""

    model_config = ConfigDict(extra="forbid")

    source: str | None
    quote: str | None


def refusal(reason: str) -> Answer:
    """An answer that shows no quote. The reason never repeats the model's text: an unverified
    quote must not reach the reader, not even inside an explanation."""
    return Answer(verified=False, reason=reason)


def verify(reply: str, passages: dict[str, Candidate]) -> Answer:
    """Turn a raw model reply into a verified Answer or a refusal saying why."""
    try:
        choice = QuoteChoice.model_validate(json.loads(reply))
    except (ValueError, TypeError, RecursionError):  # JSONDecodeError and ValidationError are ValueErrors
        return refusal("the model's reply is not the expected JSON")
    if choice.source is None and choice.quote is None:
        return refusal("the model found no passage that answers the question")
    if choice.source not in passages:
        if choice.source is None:
            return refusal("the model gave a quote but no passage label")
        # Only a label-shaped value is repeated: anything longer may be quote text in the wrong field.
        shown = f"{choice.source!r}" if re.fullmatch(r"[A-Za-z]{0,2}\d{1,3}", choice.source) else "a label"
        return refusal(f"the model cited {shown}, which is not one of the supplied passages")
    quote = squash(choice.quote or "")
    if not quote:
        return refusal(f"the model's quote from {choice.source} is blank")
    cited = passages[choice.source]
    if quote not in squash(cited.text):
        return refusal(f"the model's quote is not in {choice.source}'s text")
    if quote not in {squash(s) for s in prompts.quotable(cited)}:
        # Verbatim but cut short: the end of a sentence is where an exception ("unless ...")
        # lives, so only whole sentences (or whole table rows) are shown.
        return refusal(f"the model's quote is only part of a sentence of {choice.source}")
    return Answer(verified=True, quote=quote, citation=cited.location)


def answer_part(question: str, candidates: tuple[Candidate, ...], model: AnswerModel) -> Answer:
    """Choose and verify a quote for one part. No candidates: no model call, a refusal."""
    if not candidates:
        return refusal("no eligible passage matches this part")
    passages = prompts.labels(list(candidates))
    try:
        reply = model.complete(prompts.messages(question, passages), prompts.answer_schema(passages))
    except ModelError as error:
        return refusal(f"{MODEL_ERROR}{error}")
    answer = verify(reply, passages)
    if not answer.verified or answer.citation is None:
        return answer
    return answer.model_copy(update={"other_evidence": _other_documents(candidates, answer.citation)})


# A candidate from another document counts as "also matching" when it is among the top ranks and
# scores at least this share of the best candidate: weaker ones merely share a word or two. (The
# rank cap matters for fused scores, which sit close together.)
OTHER_EVIDENCE_SHARE = 0.5
OTHER_EVIDENCE_RANKS = 3


def _other_documents(candidates: tuple[Candidate, ...], cited: Location) -> tuple[Location, ...]:
    """Strong candidates from other documents: shown under the quote, so that a conflict is seen
    rather than silently resolved."""
    best = max(c.score for c in candidates)
    return tuple(
        c.location
        for c in candidates
        if c.location.source != cited.source
        and c.rank <= OTHER_EVIDENCE_RANKS
        and c.score >= OTHER_EVIDENCE_SHARE * best
    )
