"""What an acronym stands for: the sentence of the document that defines it, quoted, and its long
form as the value ("What does NARL stand for?": "National Atmospheric Research Laboratory").

Which parts (`ACRONYM_QUESTIONS`, a named table, table-tested): a part asking what an acronym or
abbreviation stands for, means or is short for, or its full form or name ("What does NARL stand
for", "What is NARL stand for", "what is the full form of GCIS", "What is EPS short for", "What
does the abbreviation RAG mean"). The acronym is a word the part writes in capitals (`ACRONYM`:
letters, maybe digits or hyphens, at least two capital letters), compared as written.

Which sentence (`definition`): one that defines the acronym by Schwartz & Hearst's rule
(`localqa.language.acronyms`: "National Atmospheric Research Laboratory (NARL)", "NARL (National
...)"), looked for, in order,

1. in the passage of the part's quote, then the part's other candidates, in rank order;
2. when none defines it, in the passages of the documents retrieval returned (in the order of
   their best candidate) that hold the acronym, read from the index as the caller may see them
   (`Context.passages_containing`: a document the caller may not see gives none), at most
   `DOCUMENT_PASSAGES` of each and `DOCUMENTS_READ` documents.

The sentence found becomes the part's quote (verified by the one rule against its passage by the
caller, `answering`), cited at its page, and the long form, as written, its value (a span of the
quote). Where no visible sentence defines it, the answer is unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from localqa.answers import sentences
from localqa.language.acronyms import long_form
from localqa.language.text import squash
from localqa.types import Candidate, Kind, Location, Passage
from localqa.values.choosing import Context

# At most this many passages holding the acronym are read from one document, and this many of
# the documents retrieval returned: a definition is in the first few mentions, and a word written
# on every page of a long report must not cost a read of every page.
DOCUMENT_PASSAGES = 40
DOCUMENTS_READ = 3

# An acronym as a part writes it: capitals, maybe digits or inner hyphens or an ampersand ("NARL",
# "NE-SAC", "COVID-19", "R&D"), maybe quoted.
ACRONYM = r"[\"'\u2018\u201c]?(?P<acronym>[A-Z][A-Z0-9&]*(?:-[A-Z0-9]+)*)[\"'\u2019\u201d]?"
_AN_ABBREVIATION = r"(?:(?i:the|an?)\s+)?(?:(?i:acronym|abbreviation|initialism|abbreviated\s+term|term)\s+)?"
# Each way a part asks what an acronym stands for, by name. Only the cue words fold case: the
# acronym is written in capitals.
ACRONYM_QUESTIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # "What does NARL stand for", "What is NARL stand for", "what NARL stands for"
    ("stand for", re.compile(rf"\b{_AN_ABBREVIATION}{ACRONYM}\s+(?i:stands?|stood)\s+(?i:for)\b")),
    # "What is EPS short for", "EPS is an abbreviation of what"
    (
        "short for",
        re.compile(
            rf"\b{_AN_ABBREVIATION}{ACRONYM},?\s+(?i:(?:is|was)\s+)?(?i:short|an?\s+abbreviation|an?\s+acronym)"
            r"\s+(?i:for|of)\b"
        ),
    ),
    # "what is the full form of GCIS", "the full name of the acronym NARL", "the expansion of RAG"
    (
        "full form",
        re.compile(
            r"\b(?i:full\s+(?:form|name|term)|long\s+form|expansion|expanded\s+form)\s+(?i:of|for)\s+"
            rf"{_AN_ABBREVIATION}{ACRONYM}"
        ),
    ),
    # "What does the abbreviation RAG mean", "what does NARL mean", "what NARL refers to"
    (
        "means",
        re.compile(rf"\b{_AN_ABBREVIATION}{ACRONYM}\s+(?i:means?|meant|refers?\s+to)\b(?!\s+(?i:that|by)\b)"),
    ),
    # "Expand NARL"
    ("expand", re.compile(rf"^\W*(?i:expand)\s+{_AN_ABBREVIATION}{ACRONYM}\W*$")),
)
# An acronym has at least this many capital letters ("A" and "I" are words).
MIN_CAPITALS = 2


def acronym_asked(part: str) -> str | None:
    """The acronym `part` asks the long form of (the module's rules), or None."""
    for _name, pattern in ACRONYM_QUESTIONS:
        for found in pattern.finditer(part):
            acronym = found["acronym"]
            if sum(c.isupper() for c in acronym) >= MIN_CAPITALS:
                return acronym
    return None


def cue_blanked(part: str) -> str:
    """`part` with the words that ask for an acronym's long form blanked, the acronym kept ("What
    does NARL stand for?": "What does NARL ?"): they frame the request, and no passage need carry
    "stand" or "full form" (evidence coverage's word rule, `localqa.answers.coverage`)."""
    for _name, pattern in ACRONYM_QUESTIONS:
        part = pattern.sub(
            lambda m: f" {m['acronym']} " if sum(c.isupper() for c in m["acronym"]) >= MIN_CAPITALS else m[0],
            part,
        )
    return part


@dataclass(frozen=True)
class Defined:
    """A sentence that defines the acronym: the `quote` (whitespace squashed), the `passage` text
    it is verified against and where that passage is (`citation`), and the `long_form` as written
    (a span of the quote)."""

    quote: str
    passage: str
    citation: Location
    long_form: str


Verified = Callable[[Defined], bool]


def definition(
    acronym: str,
    cited: Location,
    candidates: Sequence[Candidate],
    context: Context | None,
    verified: Verified,
) -> Defined | None:
    """The first sentence that defines `acronym` (the module's order: the quoted passage, the
    other candidates, then the visible passages of the candidates' documents) and that `verified`
    accepts (the one rule, by the caller), or None."""
    quoted = [c for c in candidates if c.location == cited]
    retrieved = [*quoted, *(c for c in candidates if c.location != cited)]
    for candidate in retrieved:
        for found in _defining(acronym, candidate.text, candidate.location):
            if verified(found):
                return found
    if context is None:
        return None
    for source, effective in _documents(retrieved)[:DOCUMENTS_READ]:
        for passage in context.passages_containing(source, acronym, DOCUMENT_PASSAGES):
            for found in _defining(acronym, passage.text, _location(passage, effective)):
                if verified(found):
                    return found
    return None


def _defining(acronym: str, text: str, where: Location) -> Iterator[Defined]:
    """The sentences of a passage's text that define `acronym`; none of a table row, whose cells
    state no definition in running text."""
    if acronym not in text or where.kind is Kind.TABLE:
        return
    for unit in sentences.units(text, where.kind):
        long = long_form(acronym, unit)
        if long is not None:
            yield Defined(quote=squash(unit), passage=text, citation=where, long_form=squash(long))


def _documents(candidates: Sequence[Candidate]) -> list[tuple[str, Location]]:
    """The documents of `candidates`, in the order of their best candidate, each with the
    location of that candidate (whose `effective` date a citation of the document carries)."""
    seen: dict[str, Location] = {}
    for candidate in sorted(candidates, key=lambda c: c.rank):
        seen.setdefault(candidate.location.source, candidate.location)
    return list(seen.items())


def _location(passage: Passage, document: Location) -> Location:
    """Where `passage` is, cited with its document's `effective` date."""
    return Location(
        source=passage.source,
        page=passage.page,
        kind=passage.kind,
        section=passage.section,
        table=passage.table,
        row=passage.row,
        paragraph=passage.paragraph,
        effective=document.effective,
    )
