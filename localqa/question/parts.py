"""Question parts: a compound question becomes the questions it asks, each searched and answered
on its own; and what of a part is searched.

A part is a question that stands on its own. Real questions are almost never compound, so a
split is made only where both sides ask something by themselves:

- sentences come from pysbd (rule-based sentence boundaries: initials such as "Mr. C.M. Maniar",
  abbreviations and decimals do not end a sentence);
- a sentence that asks nothing ("Answer in USD millions.", "DPO is defined as: ...") is context
  of the question next to it, never a part of its own; so is an instruction that ends in a
  question mark ("Round your answer to three decimals?"), and a question mark left alone after a
  full stop ("... in 2019. ?") ends the sentence before it;
- a sentence after a question that opens no question of its own and names alternatives offers
  that question's options ("Which group is larger? Those who ..., or those who ...?"): it stays
  with the question (terse questions, "Loan period? Late fee?", still split);
- inside a sentence, a clause boundary (", when does ...", ", and how many ...", "; what ...")
  splits only when the text before it is itself a question (it opens with a question word), so a
  leading clause ("According to this report, ...", "If we exclude M&A, which ...") and a list
  ("Among operations, investing, and financing activities, which ...") stay with the question
  they qualify; a relative clause (", which was ...", ", who ...") never splits.

What is searched of a part leaves out instructions about the answer's form and about how to
approach the question ("Round your answer to two decimal places.", "Assume that you are a
public equities analyst."): their words describe the reply, not the evidence.
"""

from __future__ import annotations

import functools
import re

from localqa.language.text import squash

_AUX = r"(?:is|are|was|were|does|do|did|has|have|had|can|could|may|might|must|should|will|would|shall)"
# Words a question opens with. "when" and "where" open a question only when a verb follows them
# at once ("When does the desk open"); otherwise they open a clause ("When the policy changed, ...").
# An auxiliary followed by "not" opens an instruction ("Do not round"), not a question.
_OPENS = re.compile(
    rf"^(?:what|which|who|whom|whose|why|how|{_AUX}(?!\s+not\b)|(?:when|where)\s+{_AUX})\b", re.IGNORECASE
)
# A clause boundary that may start another question: a semicolon, or a comma or "and"/"or"
# before a question word. After a bare comma, "which"/"who"/"whom"/"whose" open a relative clause
# (", which was returned late"), so only a conjunction or a semicolon lets them start a question.
_BOUNDARY = re.compile(
    rf"\s*(?:;\s*(?:and\s+|or\s+)?|,\s*(?:and|or)\s+|\s+(?:and|or)\s+)(?=(?:what|which|who|whom|whose|why|how|when|where|{_AUX})\b)"
    rf"|\s*,\s*(?=(?:what|why|how|when|where|{_AUX})\b)",
    re.IGNORECASE,
)
# Alternatives offered to choose from: "those who ..., or those who ...".
_ALTERNATIVES = re.compile(r"\bor\b", re.IGNORECASE)
# Instructions about the reply or the approach, not about the evidence.
_INSTRUCTION = re.compile(
    r"^(?:please\s+)?(?:"
    r"answer|round|give\s+(?:me|a\s+response|an?\s+answer)|provide\s+(?:a\s+response|an?\s+answer)|"
    r"respond|write|express|format|save\s+your\s+answer|report\s+(?:the|your)\s+answer|"
    r"assume|approach|address\s+the\s+question|base\s+your|calculate|compute|utili[sz]e|use\s+only|"
    r"help\s+us|(?:we|you)\s+(?:need|want|are|should|must)|the\s+answer|your\s+(?:answer|report)|"
    r"do\s+not|don.t|if\s+.+\bthen\s+(?:please\s+)?state"
    r")\b",
    re.IGNORECASE,
)


# A text pysbd returns whole, so it is one sentence without pysbd (whose import and first call
# cost a fresh process ~30 ms): ASCII letters, digits, spaces and punctuation that neither ends a
# sentence nor marks a list item, a parenthesis or a quotation for pysbd ("-'" before a capital
# ends one), and at most a question mark, at the end. Most questions are such a text;
# tests/test_parts.py checks that pysbd agrees.
_ONE_SENTENCE = re.compile(r"(?!.*-')[A-Za-z0-9][A-Za-z0-9 ,;:%$&/+'\u2019-]*\??")


@functools.cache
def _segmenter() -> object:
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def sentences(text: str) -> list[str]:
    """The sentences of `text`, whitespace squashed."""
    text = squash(text)
    if _ONE_SENTENCE.fullmatch(text):
        return [text]
    return _segmented(text)


def _segmented(text: str) -> list[str]:
    """The sentences pysbd finds in the squashed `text`, whitespace squashed, empty ones left out;
    punctuation alone ("?" after a full stop) ends the sentence before it."""
    sentences: list[str] = []
    for found in _segmenter().segment(text):  # type: ignore[attr-defined]
        sentence = squash(found)
        if not sentence.strip(" ,;"):
            continue
        if sentences and not any(c.isalnum() for c in sentence):
            joined = sentences[-1] + sentence  # as written: "in all.?" or "in all. ?"
            sentences[-1] = joined if joined in text else f"{sentences[-1]} {sentence}"
        else:
            sentences.append(sentence)
    return sentences


def asks(sentence: str) -> bool:
    """Whether a sentence asks something: it opens with a question word, or it ends with "?" and
    is no instruction ("Round your answer to three decimals?" asks for a form, not a fact; "Answer
    the following question: what is ...?" asks in a clause of its own)."""
    if _OPENS.match(sentence):
        return True
    return sentence.endswith("?") and (opens_a_question(sentence) or not _INSTRUCTION.match(sentence))


def opens_a_question(sentence: str) -> bool:
    """Whether a sentence, or a clause of it after a comma, semicolon or colon, opens with a
    question word ("Laptops and cameras: what are the limits?")."""
    return any(_OPENS.match(clause.strip()) for clause in re.split(r"[,;:]", sentence))


def offers_options(sentence: str) -> bool:
    """Whether a sentence after a question lists that question's options rather than asking one
    of its own: it opens no question and names alternatives ("Those who ..., or those who ...?")."""
    return not opens_a_question(sentence) and bool(_ALTERNATIVES.search(sentence))


def is_instruction(sentence: str) -> bool:
    """Whether a sentence tells how to reply or approach the question rather than what to find."""
    return not asks(sentence) and bool(_INSTRUCTION.match(sentence))


def split_parts(question: str) -> list[str]:
    """The questions `question` asks: "What is X, when is Y, and how Z?" gives three parts; a
    question with one clause is one part. Context (a sentence that asks nothing) stays with the
    question before it, or, when it comes first, the one after it."""
    parts: list[str] = []
    context: list[str] = []
    for sentence in sentences(question):
        if not asks(sentence) or (parts and offers_options(sentence)):
            if parts:
                parts[-1] = f"{parts[-1]} {sentence}"
            else:
                context.append(sentence)
            continue
        for clause in _clauses(sentence):
            text = clause[0].upper() + clause[1:]
            if sentence.endswith("?") and not text.endswith("?"):
                text += "?"
            parts.append(" ".join([*context, text]))
            context = []
    if context:  # nothing was asked as a question: the whole text is the one part
        text = " ".join(context)
        parts.append(text[0].upper() + text[1:])
    return parts


def _clauses(sentence: str) -> list[str]:
    """The questions of one sentence: cut at each boundary whose left side opens as a question;
    a left side that does not is a leading clause and stays with what follows it."""
    clauses: list[str] = []
    start = 0
    for boundary in _BOUNDARY.finditer(sentence):
        left = sentence[start : boundary.start()].strip(" ,;")
        if left and _OPENS.match(left):
            clauses.append(left)
            start = boundary.end()
    clauses.append(sentence[start:].strip(" ,;"))
    return [c for c in clauses if c]


def search_text(part: str) -> str:
    """What is searched of a part: its text without instructions about the reply. A part that is
    nothing but instructions is searched whole."""
    kept = [s for s in sentences(part) if not is_instruction(s)]
    return " ".join(kept) if kept else part
