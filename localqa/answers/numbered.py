"""Counts of numbered entries: "How many chapters are in this report?" is answered by the entries
"1." to "9." that a contents page lists under its heading "Chapters"; "How many steps does
replacing the filter take?" by the lines "Step 1" to "Step 3" under the quote's heading.

Which entries (`numbered_run`): the passages of one page as the caller may see it
(`Context.passages`: a hidden document's page gives none), under one heading, in page order, whose
text opens with an ordinal (`ORDINAL`: "1.", "2)", "Step 3", "Chapter 4:"). A run is
numbered 1, 2, 3, ... in order (lines between entries that open with no number are the entries'
own text); an entry numbered otherwise ends it. A run counts the noun the part asks for only when
the entries say it ("Step 1" for "how many steps") or, bare numbers, the heading they sit under
names it ("CHAPTERS" for "how many chapters"): the appendices "Appendix 1" to "Appendix 5" on the
same page are no chapters. Exactly one such run, of at least two entries, or none: two runs that
could both be the count are not chosen between.

Where (`find_run`): under the quote's own heading on its page first; else under the heading of each
candidate retrieval returned (a contents page's "CHAPTERS" that matched the part's words while the
quote came from another page), one document at a time in rank order: the first document with a
run under any of its candidates' headings gives it, when it has exactly one (two are not chosen
between, and another document's run is never added to it or taken instead).

Serves a count that no single sentence states and no table lists (`localqa.answers.listing` asks
for it only then), and a list of the things counted ("what are the chapters", "the last 4
chapters": `localqa.answers.ordinals`); each entry is a verified quote (the one rule), listed with
its citation, and the count is how many are listed, "at least N" when the run is the last thing on
its page (the next page may continue it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from localqa.language.words import plural_stem
from localqa.types import Candidate, Location, Passage

# An entry's ordinal at the start of its line: "1.", "2)", "3:", "Step 4", "Chapter 5:". A bare
# number must be followed by a mark or by a word ("1 Introduction"), never by another number
# ("2 4" of a table's cells) or a unit ("5 pages").
ORDINAL = re.compile(
    r"^\W{0,3}(?:(?P<word>[A-Za-z]+)\s+)?(?P<number>\d{1,2})(?:[.):]\s*|\s+(?=[A-Z]))(?=\S)",
)


@dataclass(frozen=True)
class Run:
    """A numbered run: its entries in order, whether it ends its page, and where it was found (the
    quote's or a candidate's location, whose `effective` date the entries' citations carry)."""

    entries: tuple[Passage, ...]
    ends_page: bool
    at: Location


def find_run(
    noun: str, cited: Location, candidates: Sequence[Candidate], page: Callable[[Location], Sequence[Passage]]
) -> Run | None:
    """The one run that counts `noun` under the quote's heading (`cited`), else under the headings
    of one document's candidates, documents in rank order (see the module's rules), or None.
    `page`: a page's passages as the caller may see them."""
    own = numbered_run(noun, page(cited), cited)
    if own is not None:
        return own
    for headings in headings_by_document(candidates):
        runs = [run for where in headings if (run := numbered_run(noun, page(where), where)) is not None]
        if runs:
            return runs[0] if len(runs) == 1 else None
    return None


def headings_by_document(candidates: Sequence[Candidate]) -> list[list[Location]]:
    """A location under each heading of each page retrieval returned, grouped by document,
    documents and headings in rank order."""
    documents: dict[str, dict[tuple[int | None, str | None], Location]] = {}
    for candidate in candidates:
        where = candidate.location
        documents.setdefault(where.source, {}).setdefault((where.page, where.section), where)
    return [list(headings.values()) for headings in documents.values()]


def numbered_run(noun: str, page: Sequence[Passage], cited: Location) -> Run | None:
    """The one run of numbered entries under `cited`'s heading on its page that counts `noun` (see
    the module's rules), or None."""
    under = [
        p for p in page if p.source == cited.source and p.page == cited.page and p.section == cited.section
    ]
    if not under:
        return None
    stem = plural_stem(noun)
    heading = (cited.section or "").rsplit(">", 1)[-1].lower()
    runs: list[list[Passage]] = []
    current: list[Passage] = []
    prefix: str | None = None
    for passage in under:
        found = ORDINAL.match(passage.text)
        if found is None:
            continue
        number, word = int(found["number"]), (found["word"] or "").lower()
        if current and number == len(current) + 1 and word == prefix:
            current.append(passage)
            continue
        if len(current) >= 2:
            runs.append(current)
        # An entry numbered 1 opens a run; any other number out of order ends one.
        current, prefix = ([passage], word) if number == 1 else ([], None)
    if len(current) >= 2:
        runs.append(current)
    counting = [r for r in runs if _counts(r, stem, heading)]
    if len(counting) != 1:
        return None
    (run,) = counting
    return Run(tuple(run), ends_page=page[-1] == run[-1], at=cited)


def _counts(run: Sequence[Passage], stem: str, heading: str) -> bool:
    """Whether a run's entries are the things counted: they say the noun ("Step 1"), or, bare
    numbers, the heading they sit under names it ("CHAPTERS")."""
    found = ORDINAL.match(run[0].text)
    assert found is not None
    word = (found["word"] or "").lower()
    if word:
        return word.startswith(stem)
    return bool(stem) and stem in heading


_LEADERS = re.compile(r"\s*\.{3,}.*$")


def entry_text(text: str) -> str:
    """An entry as listed: its line without the dot leaders and page number of a contents page
    ("1. Introduction ........ 25" lists "1. Introduction")."""
    return _LEADERS.sub("", text).strip()
