"""Counts of the people a document lists with an affiliation: "How many chapter authors of this
report come from Columbia University?" counts the lines "Radley Horton, Columbia University",
"Patrick Kinney, Columbia University" and "Carlos Perez Garcia-Pando, Columbia University" of its
list of contributors.

Which parts (`affiliation_asked`): a count ("how many <people>") whose things come from, are at or
work for an organisation the part names in capitals ("from Columbia University": `FROM_ORG`).

Which lines (`affiliated`): the passages of the pages retrieval returned from one document (the
first in rank order that lists at least two such people: `pages_by_document`), read whole as the
caller may see each page (`Context.passages`: a hidden document's page gives none), that are one
person and the organisation: "<name>, <organisation>" (`AFFILIATION_LINE`),
the organisation as the part writes it. A line that names the organisation alone ("Columbia
University" under a lead author's name) or in a sentence is no person counted. Each line is a
verified quote (the one rule); a name listed twice counts once. Pages retrieval did not return may
list more: the count says "at least N".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from localqa.types import Candidate, Location, Passage

# "come from Columbia University", "are at the University of Oxford", "work for NOAA": the
# organisation is the run of capitalised words (and the small words inside one) after the verb.
FROM_ORG = re.compile(
    r"\b(?:come|comes|came|are|is|were|was|work|works|worked)?\s*(?:from|at|for|with)\s+(?:the\s+)?"
    r"(?P<org>[A-Z][\w&.'-]*(?:\s+(?:of|for|and|&|the|[A-Z][\w&.'-]*))*)"
)
# The people a count of affiliated lines may count.
PEOPLE_NOUNS = frozenset(
    "author authors contributor contributors member members people persons researchers researcher "
    "experts expert editors editor reviewers reviewer scientists staff participants speakers".split()
)
# A line of a contributors list: a name (no sentence: at most six words), a comma, the organisation.
_NAME = r"(?P<name>[A-Z][\w.'-]*(?:\s+[\w.'-]+){0,5})"


def affiliation_asked(part: str, noun: str) -> str | None:
    """The organisation a count of people names ("Columbia University"), or None."""
    if noun.lower() not in PEOPLE_NOUNS:
        return None
    found = FROM_ORG.search(part)
    if found is None:
        return None
    org = re.sub(r"(?:\s+(?:of|for|and|&|the))+$", "", found["org"]).strip(" ?.")
    return org if len(org) > 1 else None


def affiliated(org: str, pages: Sequence[Sequence[Passage]]) -> list[tuple[str, Passage]]:
    """The (name, line) of each person listed with `org` on `pages`, in page order, a name once."""
    line = re.compile(rf"^\s*{_NAME}\s*,\s*{re.escape(org)}\s*\.?\s*$")
    found: dict[str, tuple[str, Passage]] = {}
    for page in pages:
        for passage in page:
            match = line.match(passage.text)
            if match is not None:
                found.setdefault(match["name"].casefold(), (match["name"], passage))
    return list(found.values())


def pages_by_document(candidates: Sequence[Candidate]) -> list[list[Location]]:
    """A location on each page retrieval returned, grouped by document, documents and pages in rank
    order."""
    documents: dict[str, dict[int | None, Location]] = {}
    for candidate in candidates:
        where = candidate.location
        documents.setdefault(where.source, {}).setdefault(where.page, where)
    return [list(pages.values()) for pages in documents.values()]
