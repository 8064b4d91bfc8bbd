"""Counts of numbered entries: "How many chapters are in this report?" is answered by the entries
"1." to "9." that a contents page lists under its heading "Chapters"; "How many steps does
replacing the filter take?" by the lines "Step 1" to "Step 3" under the quote's heading; "How many
steps are required to replace the grille?" by "1." to "3." after the lead-in "To replace the
grille:"; "How many coffee quality levels ..." by "1" to "7" after the label "Quality levels".

Which entries (`numbered_run`): the passages of one page as the caller may see it
(`Context.passages`: a hidden document's page gives none), under one heading, in page order. An
entry opens with an ordinal (`ORDINAL`: "1.", "2)", "Step 3", "Chapter 4:") at the start of a
passage, or inside one after a space (`INLINE_ORDINAL`: "1. Open both doors. 2. Pull the grille
forward." is two entries; "Quality levels 1 After pressing ..." opens one). A run is numbered 1, 2,
3, ... in order (text between entries that opens with no number is the entries' own text); an
entry numbered otherwise at the start of a passage ends it, a number inside a passage that does
not continue the run is text. A "1" inside a passage opens a run only when none is being read or
a lead-in ending in ":" comes just before it ("To replace the trim piece: 1. Locate ..."), so a
stray "1" in an entry's text never cuts the run it is in short.

A run's lead-in (`lead_in`) is the text before its first entry in that passage, else the passage
before it under the same heading, when it is a label of at most `LEAD_IN_WORDS` words. A run counts
the noun the part asks for only when the entries say it ("Step 1" for "how many steps") or, bare
numbers, the heading they sit under or their lead-in names it ("CHAPTERS" for "how many chapters",
"Quality levels" for "how many quality levels"), or, for the entries of a procedure (`STEP_NOUNS`),
their lead-in names the task the part names (`TASK_LEAD_IN` "To replace the grille:" for
`TASK_ASKED` "... to replace the grille?"; its words, `TASK_FILLER` aside, all among the part's).
The appendices "Appendix 1" to "Appendix 5" beside chapters are no chapters. Of the runs that
count, those whose lead-in names the part's task when some do; then exactly one, of at least two
entries, or none: two runs that could both be the count are not chosen between.

Where (`find_run`): in the quote's document only, whose answer it is (a part asking for the
chapters of one guide never gets another report's contents): under the quote's own heading on its
page first; else under the heading of each candidate of that document retrieval returned (a
contents page's "CHAPTERS" that matched the part's words while the quote came from another page),
in rank order, when exactly one run is there (two are not chosen between). Else, for a part that
counts a task's steps, the run whose lead-in names the task, under the headings of the document's
passages that hold the task as the part writes it (`Context.passages_containing`, at most
`TASK_LOOKUPS`: the lead-in "To replace the grille:" on a page retrieval did not return), the same
way.

Serves a count that no single sentence states and no table lists (`localqa.answers.listing` asks
for it only then), and a list of the things counted ("what are the chapters", "the last 4
chapters": `localqa.question.ordinals`); each entry is a verified quote (the one rule), listed with
its citation, and the count is how many are listed. A run that is the last thing on its page is read
on at the next page as the caller may see it (`read_on`): its next entry among that page's first
`NEXT_PAGE_PASSAGES` passages continues it; another ordinal there settles that it ended, and so
does its page being the document's last as the caller may see it (`Context.last_page`: a contents
list at the foot of a document's last page has its last entries); else the count says "at least N"
(the next page may continue it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from localqa.language.words import WORD, plural_stem, singular
from localqa.types import Candidate, Location, Passage

# An entry's ordinal at the start of its line: "1.", "2)", "3:", "Step 4", "Chapter 5:". A bare
# number must be followed by a mark or by a word ("1 Introduction"), never by another number
# ("2 4" of a table's cells) or a unit ("5 pages").
ORDINAL = re.compile(
    r"^\W{0,3}(?:(?P<word>[A-Za-z]+)\s+)?(?P<number>\d{1,2})(?:[.):]\s*|\s+(?=[A-Z]))(?=\S)",
)
# An entry's ordinal inside a passage, after a space: "... doors. 2. Pull", "levels 1 After",
# "... off. Step 2 Open". The word before it only capitalised ("Step"); the number followed by "."
# or ")" and a space, or by a capitalised word: never "16.)" of "(See page 16.)", "4," or "2 or 3".
INLINE_ORDINAL = re.compile(
    r"(?<=\s)(?:(?P<word>[A-Z][a-z]+)\s+)?(?P<number>\d{1,2})(?:[.)]\s+|\s+(?=[A-Z]))(?=\S)"
)
# A lead-in ending so comes before its list: a "1" after it opens a run even inside another's text.
LEAD_IN_END = ":"

# The nouns of a procedure's entries: a run after a lead-in that names a task ("To replace the
# grille:") counts these when the part names that task ("how many steps ... to replace the grille").
STEP_NOUNS = frozenset(("step", "stage", "instruction", "action"))
# The task a part names: "how many steps are required to replace the grille?".
TASK_ASKED = re.compile(r"\bto\s+(?P<task>[A-Za-z][\w'-]*(?:\s+[\w'-]+){0,6}?)\s*(?=[?.,;!]|$)", re.I)
# A lead-in that names a task: "To replace the grille:", "To remove the trim piece:".
TASK_LEAD_IN = re.compile(r"^\W*to\s+(?P<task>[A-Za-z][\w'\s-]*?)\s*:\s*$", re.I)
# Words a task may say or not ("to replace the grille", "to replace your grille").
TASK_FILLER = frozenset("the a an your its their this that these those of".split())
# A lead-in is a label of at most this many words ("Quality levels", "To remove the crisper:"); a
# paragraph before a list ("Your refrigerator has 2 front leveling screws ...") names no run.
LEAD_IN_WORDS = 12
# The most passages of a document holding the part's task that are looked under.
TASK_LOOKUPS = 20
# A run that ends its page is read on at the next page's first passage holding an ordinal, when it
# is among that page's first this many (a running header, "Software | USB", may come before it).
NEXT_PAGE_PASSAGES = 3


@dataclass(frozen=True)
class Entry:
    """One numbered entry: the passage it is read from (its quote is checked against that
    passage's text) and its text, from its number to the next entry's or the passage's end."""

    passage: Passage
    text: str


@dataclass(frozen=True)
class Run:
    """A numbered run: its entries in order, whether it ends its page, and where it was found (the
    quote's or a candidate's location, whose `effective` date the entries' citations carry)."""

    entries: tuple[Entry, ...]
    ends_page: bool
    at: Location
    prefix: str = ""  # the word before each entry's number ("step"), or none


def task_asked(part: str) -> str | None:
    """The task a part names, as the part writes it ("replace the grille"), or None."""
    found = TASK_ASKED.search(part)
    return found["task"] if found else None


def task_words(task: str) -> frozenset[str]:
    """A task's words that must match, folded and singular ("the base grilles": base, grille)."""
    return frozenset(singular(w) for w in WORD.findall(task.lower()) if w not in TASK_FILLER)


def find_run(
    noun: str,
    cited: Location,
    candidates: Sequence[Candidate],
    page: Callable[[Location], Sequence[Passage]],
    task: str | None = None,
    containing: Callable[[str, str, int], Sequence[Passage]] | None = None,
    last_page: Callable[[str], int | None] | None = None,
) -> Run | None:
    """The one run that counts `noun` under the quote's heading (`cited`), else under the headings
    of the candidates of the quote's document, else under the headings of its passages holding
    `task` (see the module's rules), or None. `page`: a page's passages as the caller may see
    them; `containing`: a document's passages holding a text, as the caller may see them;
    `last_page`: a document's last page, as the caller may see it (`read_on`)."""
    own_document = [c for c in candidates if c.location.source == cited.source]
    run = _found(noun, cited, own_document, page, task, containing)
    return read_on(run, page, last_page) if run is not None else None


def _found(
    noun: str,
    cited: Location,
    candidates: Sequence[Candidate],
    page: Callable[[Location], Sequence[Passage]],
    task: str | None,
    containing: Callable[[str, str, int], Sequence[Passage]] | None,
) -> Run | None:
    """The run `find_run` finds, as its page has it."""
    own = numbered_run(noun, page(cited), cited, task)
    if own is not None:
        return own
    for headings in headings_by_document(candidates):
        runs = [r for where in headings if (r := numbered_run(noun, page(where), where, task)) is not None]
        if runs:
            return runs[0] if len(runs) == 1 else None
    if task is None or containing is None or plural_stem(noun) not in STEP_NOUNS:
        return None
    for headings in headings_by_document(candidates):
        first = headings[0]
        found = containing(first.source, task, TASK_LOOKUPS)
        places = {(p.page, p.section): p.located(first) for p in found}
        runs = [
            r
            for where in places.values()
            if (r := numbered_run(noun, page(where), where, task, named=True)) is not None
        ]
        if runs:
            return runs[0] if len(runs) == 1 else None
    return None


def read_on(
    run: Run,
    page: Callable[[Location], Sequence[Passage]],
    last_page: Callable[[str], int | None] | None = None,
) -> Run:
    """`run` read on over the next page when it ends its page: its page is the document's last
    (`last_page`, as the caller may see the document): the run ended there; else the first passage
    of the next page holding an ordinal, among its first `NEXT_PAGE_PASSAGES`, numbers the run's
    next entry (with its prefix): the run goes on there, under that passage's heading, by the same
    rules; it numbers anything else: the run ended with its page. No ordinal there, or no next page
    the caller may see, or no last page known (`page`, `last_page`: a hidden document gives none):
    the run is as it was, and may go on."""
    last = run.entries[-1].passage
    if not run.ends_page or last.page is None:
        return run
    final = last_page(last.source) if last_page is not None else None
    if final is not None and last.page >= final:
        return replace(run, ends_page=False)
    where = run.at.model_copy(update={"page": last.page + 1, "section": None, "paragraph": None})
    following = [p for p in page(where) if p.source == last.source and p.page == last.page + 1]
    for index, passage in enumerate(following[:NEXT_PAGE_PASSAGES]):
        marks = list(_marks(passage.text))
        if not marks:
            continue
        reading = _Reading([], run.prefix, "", after=len(run.entries))
        # The first ordinal, or the bare number of a "Word N" (`_marks` gives both).
        if not any(reading.expects(m) for m in marks if m.start <= marks[0].number_at):
            return replace(run, ends_page=False)
        under = [p for p in following[index:] if p.section == passage.section]
        runs = _runs(under, reading)
        if not runs or not runs[0].after:
            return run
        more = tuple(Entry(under[i], under[i].text[start:end].strip()) for i, start, end in runs[0].entries)
        ends = following[-1] == under[runs[0].entries[-1][0]]
        return replace(run, entries=run.entries + more, ends_page=ends)
    return run


def headings_by_document(candidates: Sequence[Candidate]) -> list[list[Location]]:
    """A location under each heading of each page retrieval returned, grouped by document,
    documents and headings in rank order."""
    documents: dict[str, dict[tuple[int | None, str | None], Location]] = {}
    for candidate in candidates:
        where = candidate.location
        documents.setdefault(where.source, {}).setdefault((where.page, where.section), where)
    return [list(headings.values()) for headings in documents.values()]


@dataclass(frozen=True)
class _Mark:
    """Where an entry's ordinal is in a passage's text, its number and the word before it."""

    start: int
    number_at: int
    number: int
    word: str
    at_start: bool


def _marks(text: str) -> Iterator[_Mark]:
    """The ordinals that may open an entry in a passage's text, in order."""
    after = 0
    found = ORDINAL.match(text)
    if found is not None:
        yield _Mark(0, found.start("number"), int(found["number"]), (found["word"] or "").lower(), True)
        after = found.end()
    for inline in INLINE_ORDINAL.finditer(text, after):
        number_at = inline.start("number")
        yield _Mark(inline.start(), number_at, int(inline["number"]), (inline["word"] or "").lower(), False)
        if inline["word"]:  # "Door 2. Close": the number alone may be the entry ("2. Close")
            yield _Mark(number_at, number_at, int(inline["number"]), "", False)


@dataclass
class _Reading:
    """A run being read: each entry's passage (by its place under the heading) and span; `after`:
    how many entries it continues from the page before (none for a run that opens here)."""

    entries: list[list[int]]  # [passage index, start, end]
    prefix: str
    lead_in: str
    after: int = 0

    def expects(self, mark: _Mark) -> bool:
        """Whether `mark` numbers the run's next entry."""
        return bool(self.entries or self.after) and (
            mark.number == self.after + len(self.entries) + 1 and mark.word == self.prefix
        )


def numbered_run(
    noun: str, page: Sequence[Passage], cited: Location, task: str | None = None, named: bool = False
) -> Run | None:
    """The one run of numbered entries under `cited`'s heading on its page that counts `noun` (see
    the module's rules), or None. `task`: the task the part names ("replace the grille"); `named`:
    only a run whose lead-in names it (a page found by the task's words, not by retrieval)."""
    under = [
        p for p in page if p.source == cited.source and p.page == cited.page and p.section == cited.section
    ]
    if not under:
        return None
    stem = plural_stem(noun)
    heading = (cited.section or "").rsplit(">", 1)[-1].lower()
    runs = [run for run in _runs(under) if _counts(run, stem, heading, task)]
    if task is not None and stem in STEP_NOUNS:
        for_task = [run for run in runs if _names_task(run.lead_in, task)]
        runs = for_task if for_task or named else runs
    if len(runs) != 1:
        return None
    (run,) = runs
    entries = tuple(Entry(under[i], under[i].text[start:end].strip()) for i, start, end in run.entries)
    return Run(entries, ends_page=page[-1] == under[run.entries[-1][0]], at=cited, prefix=run.prefix)


def _runs(under: Sequence[Passage], continued: _Reading | None = None) -> list[_Reading]:
    """Every run of at least two entries in `under`, in order (see the module's rules); given a
    run continued from the page before (`continued`), that run first, of the entries read on here."""
    runs: list[_Reading] = []
    reading: _Reading = continued or _Reading([], "", "")

    def close() -> None:
        if len(reading.entries) >= (1 if reading.after else 2):
            runs.append(reading)

    for index, passage in enumerate(under):
        text = passage.text
        taken = -1  # where the number of the last entry taken from this passage is
        for mark in _marks(text):
            if mark.start <= taken:
                continue  # the bare number of a "Word N" taken already
            entries = reading.entries
            if reading.expects(mark):
                if entries and entries[-1][0] == index:
                    entries[-1][2] = mark.start
                entries.append([index, mark.start, len(text)])
                taken = mark.number_at
                continue
            before = text[: mark.start].rstrip()
            if mark.number == 1 and (mark.at_start or not entries or before.endswith(LEAD_IN_END)):
                if entries and entries[-1][0] == index:
                    entries[-1][2] = mark.start
                close()
                reading = _Reading(
                    [[index, mark.start, len(text)]], mark.word, _lead_in(under, index, before)
                )
                taken = mark.number_at
            elif mark.at_start:  # an entry numbered otherwise ends the run
                close()
                reading = _Reading([], "", "")
    close()
    return runs


def _lead_in(under: Sequence[Passage], index: int, before: str) -> str:
    """The label before a run's first entry: the text before it in its passage, else the passage
    before it, when it is at most `LEAD_IN_WORDS` words; else ""."""
    label = before.strip() or (under[index - 1].text.strip() if index > 0 else "")
    return label if len(label.split()) <= LEAD_IN_WORDS else ""


def _counts(run: _Reading, stem: str, heading: str, task: str | None) -> bool:
    """Whether a run's entries are the things counted: they say the noun ("Step 1"); or, bare
    numbers, the heading they sit under or their lead-in names it ("CHAPTERS", "Quality
    levels"); or they are a procedure's steps whose lead-in names the part's task."""
    if run.prefix:
        return run.prefix.startswith(stem)
    if not stem:
        return False
    if stem in heading or stem in run.lead_in.lower():
        return True
    return task is not None and stem in STEP_NOUNS and _names_task(run.lead_in, task)


def _names_task(lead_in: str, task: str) -> bool:
    """Whether a lead-in names the part's task: "To replace the grille:" for "replace the grille"."""
    found = TASK_LEAD_IN.match(lead_in)
    if found is None:
        return False
    words = task_words(found["task"])
    return bool(words) and words <= task_words(task)


_LEADERS = re.compile(r"\s*\.{3,}.*$")


def entry_text(text: str) -> str:
    """An entry as listed: its line without the dot leaders and page number of a contents page
    ("1. Introduction ........ 25" lists "1. Introduction")."""
    return _LEADERS.sub("", text).strip()
