"""Which entries of a numbered list a part asks for by their place in it: "What are the last 4
chapters listed in the table of contents?" asks for the last four of the entries "1." to "9." a
contents page lists under "CHAPTERS"; "the first three steps" for "Step 1" to "Step 3"; "What is
the second step?" for "Step 2"; "the last step" for the last one.

Which parts (`position_asked`, rules as named tables, each table-tested):

- **the first or last N** (`FIRST_OR_LAST_N`): "the first/last <N> <plural>", N in digits or a
  number word (`COUNT_WORDS`: "two" to "twelve");
- **one entry by its place** (`NTH`): "the <ordinal> <noun>", the ordinal a word
  (`ORDINAL_WORDS`: "first" to "tenth"), written with digits ("2nd", "3rd") or "last". "The second
  to last step" and "the first time", "the second half", "the second largest" (`NOT_ENTRIES`) ask
  for no entry.

Only a numbered run is selected from (`localqa.answers.listing`): its entries have an order the
document gives them. Sentences collected from the candidates come in the scorer's order, which
says nothing of first or last, so a part asking for a place in a list that no numbered run answers
gets no list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Ordinal words and the place each names; "last" is counted from the end (`Position.from_end`).
ORDINAL_WORDS: dict[str, int] = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10,
}  # fmt: skip
LAST = "last"
# How many entries "the first/last N" asks for, when N is written in words.
COUNT_WORDS: dict[str, int] = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
# Words an ordinal modifies that are no entry of a list: a time, a part of a period, a rank by size.
NOT_ENTRIES = frozenset(
    "time times half halves quarter quarters place places round rounds year years month months week "
    "weeks day days decade decades hour hours minute minutes largest biggest highest lowest smallest "
    "greatest most least best worst top bottom one ones".split()
)
# Words after an ordinal that are no noun: "the first of them", "the second to last", "the last
# five years" (a count, read by `FIRST_OR_LAST_N`).
NOT_NOUNS = frozenset(["of", "to", "from", "and", "or", "in", "on", "at", "by", "for", "with", *COUNT_WORDS])

_PLURAL = r"[A-Za-z][\w-]*(?<!ss)(?<!us)(?<!is)(?<!'s)s"
_COUNT = rf"\d{{1,2}}|{'|'.join(COUNT_WORDS)}"
_ORDINAL = rf"{'|'.join(ORDINAL_WORDS)}|{LAST}|\d{{1,2}}(?:st|nd|rd|th)"
FIRST_OR_LAST_N = re.compile(
    rf"\bthe\s+(?P<end>first|{LAST})\s+(?P<count>{_COUNT})\s+(?:[\w-]+\s+)??(?P<noun>{_PLURAL})\b", re.I
)
NTH = re.compile(rf"\bthe\s+(?:very\s+)?(?P<ordinal>{_ORDINAL})\s+(?P<noun>[A-Za-z][\w-]*)\b", re.I)


@dataclass(frozen=True)
class Position:
    """Which entries a part asks for: `count` entries from the `start`-th (1 is the first; counted
    from the last entry when `from_end`), of what `noun` names."""

    start: int
    count: int
    from_end: bool
    noun: str

    def describe(self) -> str:
        """What the part asked for, for a note: "the last 4 chapters", "the last step", "step 5"."""
        if self.count > 1:
            return f"the {'last' if self.from_end else 'first'} {self.count} {self.noun}"
        return f"the last {self.noun}" if self.from_end else f"{self.noun} {self.start}"


def position_asked(part: str) -> Position | None:
    """The entries `part` asks for by their place in a list (see the module's rules), or None."""
    found = FIRST_OR_LAST_N.search(part)
    if found is not None:
        count = found["count"].lower()
        number = int(count) if count.isdigit() else COUNT_WORDS[count]
        if number < 1 or found["noun"].lower() in NOT_ENTRIES:
            return None
        return Position(1, number, found["end"].lower() == LAST, found["noun"])
    found = NTH.search(part)
    if found is None or found["noun"].lower() in NOT_ENTRIES | NOT_NOUNS:
        return None
    ordinal = found["ordinal"].lower()
    if ordinal == LAST:
        return Position(1, 1, True, found["noun"])
    place = ORDINAL_WORDS.get(ordinal) or int(ordinal[:-2])
    return Position(place, 1, False, found["noun"]) if place >= 1 else None


def placed(position: Position, total: int) -> range | None:
    """The indexes (0-based) of the entries `position` names in a list of `total`, in order; None
    when the list is too short to have them."""
    if position.start + position.count - 1 > total:
        return None
    if position.from_end:
        return range(total - position.start - position.count + 1, total - position.start + 1)
    return range(position.start - 1, position.start - 1 + position.count)
