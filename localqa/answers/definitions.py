"""What an acronym stands for: the sentence of the document that defines it, quoted, and its long
form as the value ("What does NARL stand for?": "National Atmospheric Research Laboratory").

Which parts: those asking what an acronym stands for, means or is short for, or its full form
(`localqa.question.acronyms`: "What does NARL stand for", "what is the full form of GCIS"); the
acronym is compared as the part writes it.

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

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from localqa.answers import sentences
from localqa.language.acronyms import long_form
from localqa.language.text import squash
from localqa.types import Candidate, Kind, Location
from localqa.values.choosing import Context

# At most this many passages holding the acronym are read from one document, and this many of
# the documents retrieval returned: a definition is in the first few mentions, and a word written
# on every page of a long report must not cost a read of every page.
DOCUMENT_PASSAGES = 40
DOCUMENTS_READ = 3


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
            for found in _defining(acronym, passage.text, passage.located(effective)):
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
