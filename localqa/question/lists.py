"""Whether a part asks for a list or a count, read from its words (`asked`, rules as named
tables, each table-tested): the cues of `localqa.answers.listing`, which finds the items.

- **a list** (`LIST_CUES`): "list the ...", "name the ...", "what kinds of ...", "what are the
  <plural>", "which <plural> are ...", "what <plural> does ...". A part asking for a cause or yes
  or no is not a list. Nor is one that asks for an amount ("what were the net sales":
  `AMOUNT_NOUNS`; "what are the total revenues": any quantity `localqa.question.asked.wanted`
  reads), its answer being one figure, unless it says so outright (`SAID_OUTRIGHT`: "list the
  fees charged").
- **a count** (`COUNT_CUE`): "how many <things>", where the things are not a measure
  (`MEASURE_NOUNS`: days, grams, percent ...) and the part does not do arithmetic on stated
  figures ("how many more", "in total": `ARITHMETIC`).
- **entries by place** (`localqa.question.ordinals`): "the last 4 chapters", "the second step".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from localqa.question import ordinals
from localqa.question.asked import wanted
from localqa.question.cues import asks_cause, asks_yes_or_no

ListKind = Literal["list", "count"]

# A plural noun; one before an apostrophe is an owner ("Globex Stores' net sales"), no noun listed.
_PLURAL = r"[A-Za-z][\w-]*(?<!ss)(?<!us)(?<!is)(?<!'s)s"
# Each rule that makes a part ask for a list, by name.
LIST_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "list the",
        re.compile(
            r"^\W*(?:please\s+)?(?:list|enumerate|name)\s+(?!(?:a|an|one)\b)(?=\w)"
            rf"(?:(?:all\s+|every\s+|each\s+)?(?:of\s+)?(?:the\s+|its\s+|their\s+)?(?:[\w'\u2019-]+\s+){{0,3}}?"
            rf"(?P<noun>{_PLURAL})\b(?!['\u2019]))?",
            re.I,
        ),
    ),
    ("list all", re.compile(r"\blist\s+(?:all|every|each)\b", re.I)),
    ("kinds of", re.compile(r"\bwhat\s+(?:kinds?|types?|sorts?|categories)\s+of\b", re.I)),
    (
        "what are the (plural)",
        re.compile(
            # The lead-in before "what" ("For the bank, what are ..."): its words start at a word
            # character, so the non-word run before them has one end and the match is linear
            # ("[\w,' ]+" there would retry from every quote of a run of 20,000).
            r"^\W*(?:\w[\w,' ]*,\s*)?what\s+(?:are|were)\s+(?:the\s+|its\s+|their\s+|all\s+)?"
            rf"(?:[\w'\u2019-]+\s+){{0,3}}?(?P<noun>{_PLURAL})\b(?!['\u2019])",
            re.I,
        ),
    ),
    (
        "which/what (plural)",
        re.compile(
            rf"\b(?:which|what)\s+(?:[\w-]+\s+){{0,2}}?(?P<noun>{_PLURAL})\s+(?:are|were|do|does|did|have|has|had|"
            r"is|was|can|could|will|would|must|should|include|includes|of|in|that|from|under)\b",
            re.I,
        ),
    ),
)
# Cues that ask for a list outright, whatever else the part names ("list the fees charged"); the
# others yield to a part that asks for a quantity ("what are the total revenues").
SAID_OUTRIGHT = frozenset(("list the", "list all", "kinds of"))
# The cue of a part that asks for entries of a list by their place in it and by no list cue ("what
# is the second step"): only a numbered run answers it (`localqa.question.ordinals`).
ORDINAL_CUE = "by place"
# "How many <things>": the first plural within five words names what is counted, else the first word.
COUNT_CUE = re.compile(r"\bhow\s+many\s+(?P<words>(?:[\w-]+\s*){1,5})", re.I)
# A "how many" that does arithmetic on stated figures, not a count of things: the figure planner's.
ARITHMETIC = re.compile(r"\bhow\s+many\s+more\b|\bin\s+total\b|\btotal\b|\bcombined\b|\baltogether\b", re.I)
# What "how many" measures rather than counts: one sentence states such a figure.
MEASURE_NOUNS = frozenset(
    "second seconds minute minutes hour hours day days week weeks month months year years time times "
    "percent percentage percentages point points dollar dollars usd euro euros pound pounds cent cents "
    "gram grams kg kilogram kilograms litre litres liter liters meter meters metre metres km mile miles "
    "share shares unit units calorie calories byte bytes gb mb hz mhz watt watts volt volts".split()
)
# Plural words a filing states as one amount: "what were the net sales" asks for a figure.
AMOUNT_NOUNS = frozenset(
    "sales revenues earnings expenses costs assets liabilities profits proceeds dividends losses gains "
    "savings taxes fees payments borrowings investments expenditures flows margins ratios rates figures "
    "amounts totals numbers prices wages salaries receivables payables inventories reserves".split()
)


@dataclass(frozen=True)
class ListAsk:
    """What a list part asks: a `kind` ("list" or "count"), the rule that said so (`cue`), the
    noun it counts, or lists when its cue names one ("which courses are ...", "list the steps"),
    and the entries it asks for by their place in the list (`position`: "the last 4 chapters",
    `localqa.question.ordinals`)."""

    kind: ListKind
    cue: str
    noun: str | None = None
    position: ordinals.Position | None = None


def asked(part: str) -> ListAsk | None:
    """Whether `part` asks for a list or a count (see the module's rules), or None."""
    count = COUNT_CUE.search(part)
    if count is not None:
        if ARITHMETIC.search(part):
            return None
        counted = _counted_noun(count["words"])
        phrase = count["words"].split()
        named = phrase[: phrase.index(counted) + 1] if counted in phrase else phrase[:1]
        if {w.lower() for w in named} & MEASURE_NOUNS:  # "how many unused leave days": a measure
            return None
        return ListAsk("count", "how many", counted)
    if asks_yes_or_no(part) or asks_cause(part):
        return None
    quantity = wanted(part).quantity
    position = ordinals.position_asked(part)
    for name, pattern in LIST_CUES:
        found = pattern.search(part)
        if found is None or (quantity and name not in SAID_OUTRIGHT):
            continue
        plural = found.groupdict().get("noun")
        if plural is not None and plural.lower() in AMOUNT_NOUNS and name not in SAID_OUTRIGHT:
            continue
        return ListAsk("list", name, plural or (position.noun if position else None), position)
    if position is not None and not quantity:
        # "What is the second step?": one entry of a list, by its place in it.
        return ListAsk("list", ORDINAL_CUE, position.noun, position)
    return None


def _counted_noun(words: str) -> str:
    found = words.split()
    plural = next((w for w in found if re.fullmatch(_PLURAL, w)), None)
    return plural or found[0]
