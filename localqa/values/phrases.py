"""A value in words, for a part that asks no number, time or place: which thing or what trait of
it ("flights *shorter than 6 hours*", "a *red badge*"), what someone does or must do, how a thing
is done, what an abbreviation stands for (`choose_phrase`, `expansion`); and, for a part that asks
what drove or caused a change, the cause as written, from its cue ("due to", "driven by") to the
sentence's end (`cause_value`, `localqa.answers.causes`).

Serves "which", "what does ... require", "what does X stand for", a "when" whose sentence states
no time, a "who" answered by the rest of a sentence, and "what drove the change" questions.
"""

from __future__ import annotations

import re

from localqa.language import causes
from localqa.language.acronyms import long_form
from localqa.question.acronyms import acronym_asked
from localqa.question.asked import Wanted
from localqa.types import Value
from localqa.values.doers import names_a_doer
from localqa.values.spans import Span, shared_words

# "Which flights ...", "What colour badge ...": the thing asked about, and whether a trait of it is.
_WHICH = re.compile(
    r"^\W*(?:which|what)\s+(?:(?P<trait>colou?rs?|kinds?|types?|sorts?|shapes?)\s+(?:of\s+)?)?"
    r"(?P<noun>[a-z][\w-]*)\s",
    re.IGNORECASE,
)
# "What does POL-21 require ...", "What must visitors do ...", "How are requests approved ...":
# an action or a rule, answered by the rest of the sentence after the words it shares with the part.
# "How should a damaged book be reported?" asks for a procedure: its quote stands alone, no value.
_ACTION = re.compile(
    r"^\W*(?:(?:what|when)\s+(?:does|do|did|must|should|shall|will|can|may|is|are|was|were)"
    r"|how\s+(?:is|are|was|were))\b",
    re.IGNORECASE,
)
_AUXILIARIES = frozenset(
    (
        "is are was were be been do does did must may might can could should shall will would has have had"
    ).split()
)
_DETERMINERS = frozenset("a an the their its his her each every".split())
# Words after "which" that do not name the thing asked about ("Which of the following ...").
_NOT_A_THING = _AUXILIARIES | _DETERMINERS | {"of", "one", "ones"}
_PREDICATE_LIMIT = 120  # characters: a longer rest of a sentence is not a value but the sentence


def expansion(part: str, sentence: str) -> Span | None:
    """The words an acronym the part asks about is short for (`localqa.question.acronyms`), where
    the sentence defines it ("National Atmospheric Research Laboratory (NARL)", "NARL (National
    ...)"): Schwartz and Hearst's rule for abbreviation definitions (`localqa.language.acronyms`)."""
    asked = acronym_asked(part)
    long = long_form(asked, sentence) if asked is not None else None
    if long is None:
        return None
    start = sentence.index(long)
    return Span("phrase", long, start, start + len(long))


def choose_phrase(part: str, sentence: str, asked: Wanted) -> Span | None:
    """The words of `sentence` that answer a part asking which thing or what trait (the modifier
    of the thing asked about: "flights *shorter than 6 hours*", "a *red badge*"), or what someone
    does or must do, how a thing is done, or a "when" whose sentence states no time (what the
    sentence says after the last word it shares with the part: "approved *within 3 working
    days*", "reimbursed *with the next monthly salary payment*"). Never for a quantity: a number
    is a span of its own kind or no value."""
    if asked.quantity or asked.percent or asked.duration:
        return None
    if acronym_asked(part) is not None:
        return expansion(part, sentence)
    which = _WHICH.match(part)
    if which and which["noun"].lower() not in _NOT_A_THING:
        return _modifier(which["noun"], sentence, trait=which["trait"] is not None)
    if asked.who:  # the rest of the sentence, only where it names who (`names_a_doer`)
        rest = _predicate(part, sentence)
        return rest if rest is not None and names_a_doer(rest.text) else None
    if _ACTION.match(part) or asked.when or asked.where:
        return _predicate(part, sentence)
    return None


def _modifier(noun: str, sentence: str, *, trait: bool) -> Span | None:
    """What the sentence says of `noun`: the words after it up to its verb ("flights shorter than
    6 hours are booked"), or, for a trait asked ("what colour"), the word before it ("red badge")."""
    stem = re.escape(noun.lower().rstrip("s"))
    named = re.search(rf"\b{stem}(?:e?s)?\b", sentence, re.IGNORECASE)
    if named is None:
        return None
    before = re.search(r"(\w[\w-]*)\s+$", sentence[: named.start()])
    if trait and before and before.group(1).lower() not in _DETERMINERS:
        return Span("phrase", sentence[before.start(1) : named.end()], before.start(1), named.end())
    verbs = "|".join(_AUXILIARIES)
    after = re.match(rf"\s+(?P<mod>(?!and\b|or\b)[^,;.]{{1,60}}?)\s+(?:{verbs})\b", sentence[named.end() :])
    if after is None or trait:
        return None
    start = named.end() + after.start("mod")
    return Span("phrase", after["mod"], start, start + len(after["mod"]))


def _predicate(part: str, sentence: str) -> Span | None:
    anchors = [m.end() for m in shared_words(part, sentence)]
    if not anchors:
        return None
    rest = sentence[anchors[-1] :]
    text = rest.strip(" ,;:").rstrip(" .!?;:")
    if not text or len(text) > _PREDICATE_LIMIT or not re.search(r"\w", text):
        return None
    start = anchors[-1] + rest.index(text)
    return Span("phrase", text, start, start + len(text))


def cause_value(sentence: str) -> Value | None:
    """The cause a sentence states, as written (`causes.cause_span`: "driven by higher net
    revenue ..."), for a part that asks what drove or caused a change; None when it states none."""
    where = causes.cause_span(sentence)
    return None if where is None else Value(text=sentence[where[0] : where[1]])
