"""Unsure is not an answer (the contract's section of that name): a quote the answer stage doubts is
never shown as the answer.

Coverage and the model's confidence name doubts beside a verified quote while a part is answered
(`Answer.doubts`: a word no candidate carries though the collection writes it, a name found only
as a near spelling, a name another passage mentions, a weak model label). A quote shown in the
place of the answer reads as one, whatever is printed under it, so the part is refused: the
reader sees `No quote verified`, the doubts as its reason, and the quote under a label that does
not claim to answer (`Closest.label`: 'Closest passage, which does not mention "founded"'). The
passage is one retrieval gave the part, from what the caller may see, and verified like any quote.
"""

from __future__ import annotations

from localqa.types import Answer, Closest


def withheld(answer: Answer) -> Answer:
    """`answer` as it may be shown: a verified answer with doubts becomes a refusal whose reason
    is the doubts and which carries the quote as its closest passage, with the coverage verdict,
    model call and selection it was judged by; any other answer unchanged."""
    if not answer.verified or not answer.doubts:
        return answer
    assert answer.quote is not None and answer.citation is not None  # a verified answer has both
    closest = Closest(quote=answer.quote, citation=answer.citation, doubts=answer.doubts)
    reason = "; ".join(dict.fromkeys(doubt.note for doubt in answer.doubts))
    return Answer.refused(reason).model_copy(
        update={
            "closest": closest,
            "coverage": answer.coverage,
            "call": answer.call,
            "selection": answer.selection,
        }
    )
