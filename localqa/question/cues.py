"""What a part asks, read from its words: the cues each shape of question is recognised by, as
named tables, in one place (issue 47: every later room reads these, never its own patterns).

- yes or no (`asks_yes_or_no`), a number (`asks_for_a_number`), a cause (`asks_cause`);
- no quantity (`NOT_A_QUANTITY`: a cause, a forecast, a name, several things, a description),
  a ratio (`asks_a_ratio`);
- an extreme (`extreme_asked`: "which ... largest", "fell most", "which year ... highest");
- the kind of a comparison (`comparison_kind`: a judgment, a sign, improved, changed).

`localqa.question.reading` combines them into one record per part; the planners of
`localqa.derived` and the answer stage take their cue from there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from localqa.question.parts import asks, sentences


def asking(part: str) -> str:
    """The sentences of a part that ask (not its instructions: "Answer in USD millions")."""
    asking = [s for s in sentences(part) if asks(s)]
    text = " ".join(asking) or part
    # "Here's the question: what is ...": the question after the colon.
    return re.sub(r"^.*\b(?:question|following)\s*(?:is|are)?\s*:\s*", "", text, flags=re.IGNORECASE)


# A question asking for a quantity: how many/much/long, a percentage, ratio, rate, amount, total
# or average, or an instruction about the figure's unit or rounding.
_ASKS_A_NUMBER = re.compile(
    r"\bhow (?:many|much|long|old|often|far)\b|%|\b(?:percent(?:age)?s?|ratios?|rates?|margins?|"
    r"amounts?|totals?|averages?|sums?|number of|in (?:usd|eur|gbp|us\$)|round(?:ed)?)\b",
    re.IGNORECASE,
)
# A question asking yes or no opens with an auxiliary verb.
_ASKS_YES_OR_NO = re.compile(
    r"^\W*(?:am|is|are|was|were|do|does|did|can|could|may|might|must|shall|should|will|would|"
    r"has|have|had)\b",
    re.IGNORECASE,
)


def asks_for_a_number(question: str) -> bool:
    """Whether the question asks for a quantity (its answer states a number): the sentence scorer
    demotes a sentence that states none."""
    return _ASKS_A_NUMBER.search(question) is not None


def asks_yes_or_no(question: str) -> bool:
    """Whether the question asks yes or no (its answer may restate it)."""
    return _ASKS_YES_OR_NO.match(question) is not None


# Each way a part asks for a cause, by name.
CAUSE_ASKED: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "what drove",
        re.compile(r"\bwhat\s+(?:\w+\s+)?(?:drove|drives|driving|has\s+driven|were\s+the\s+drivers)\b", re.I),
    ),
    (
        "what caused",
        re.compile(
            r"\bwhat\s+(?:\w+\s+)?(?:caused|causes|led\s+to|contributed\s+to|accounts?\s+for)\b", re.I
        ),
    ),
    ("what explains", re.compile(r"\bwhat\s+(?:\w+\s+)?explains?\b", re.I)),
    ("why", re.compile(r"\bwhy\s+(?:did|does|do|is|are|was|were|has|have|had)\b", re.I)),
    ("reason for", re.compile(r"\b(?:reasons?|drivers?|causes?)\s+(?:for|of|behind)\b", re.I)),
)


def asks_cause(part: str) -> str | None:
    """The name of the rule by which `part` asks for a cause, or None."""
    return next((name for name, pattern in CAUSE_ASKED if pattern.search(part)), None)


# What a part asks for when it asks for no quantity, though it may name a metric and a year: a
# cause, a forecast's content, a name among several, a description, several things. Such a part
# keeps its quote; the planner never turns it into a figure (or its words into line items).
NOT_A_QUANTITY: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "a cause",
        re.compile(
            r"\bwhy\b|\bwhat\s+(?:\w+\s+){0,2}(?:dr[oi]ve|drives|driving|driven|caused?|causes|"
            r"explains?|led\s+to|contributed|factors?|reasons?)\b|\breasons?\s+(?:for|behind)\b",
            re.I,
        ),
    ),
    (
        "a forecast",
        re.compile(
            r"\bwhat\b[^?]*\bforecast(?:s|ing|ed)?\b|\bwhat\b[^?]*\bguidance\b(?![^?]*\bhow\s+many\b)", re.I
        ),
    ),
    (
        "a name",
        re.compile(
            r"\b(?:which|what)\s+(?:\w+\s+)?(?:segments?|business(?:es)?|products?|divisions?|"
            r"regions?|companies|company|brands?|markets?|types?|kinds?)\b(?!\s+(?:ratio|margin|growth)\b)",
            re.I,
        ),
    ),
    (
        "several things",
        re.compile(
            r"\bwhat\s+(?:are|were)\s+(?:the\s+)?(?:\w+\s+)?(?:main|major|key|primary|principal|"
            r"most\s+\w+|biggest|largest|top)\b",
            re.I,
        ),
    ),
    # "How did US sales growth compare to international sales growth?": two items compared, which
    # no single figure answers (`localqa.derived.pairs` computes the two).
    (
        "two items compared",
        re.compile(r"\bhow\s+(?:did|does|do)\b[^?]*\bcompare\s+(?:to|with|against)\b", re.I),
    ),
    (
        "a description",
        re.compile(r"\b(?:nature|purpose|agenda|describe|explain|summari[sz]e|outcome)\b", re.I),
    ),
)


def not_a_quantity(part: str) -> str | None:
    """What a part asks for instead of a quantity (`NOT_A_QUANTITY`), or None when it may ask for
    one. A part that asks "how much", "what percentage" or a ratio by name still asks for a figure
    when it also asks why ("... and why?" is two parts, split before this)."""
    return next((kind for kind, pattern in NOT_A_QUANTITY if pattern.search(asking(part))), None)


def asks_quantity(part: str) -> bool:
    """Whether a part may ask for a quantity: a number, a ratio, a change, a direction of one."""
    return not_a_quantity(part) is None


# A part that asks for a ratio, a margin, a turnover or a rate: its value is a computed figure or
# a percentage its quote states, never an amount of money the quote gives ("cash ratio": "$ 9,889").
_ASKS_A_RATIO = re.compile(
    r"\b(?:ratio|margin|turnover|coverage|multiple|conversion|intensity|rate|return\s+on|yield)s?\b"
    r"|\bas\s+an?\s+(?:%|percent(?:age)?)\s+of\b",
    re.IGNORECASE,
)


def asks_a_ratio(part: str) -> bool:
    """Whether a part asks for a ratio, a margin, a turnover or a rate (`_ASKS_A_RATIO`)."""
    return _ASKS_A_RATIO.search(asking(part)) is not None


# "which X ... largest/most/fastest": the part asks for the row with the extreme figure.
ASKS_EXTREME = re.compile(
    r"\bwhich\b[^?]*?\b(?P<word>largest|biggest|highest|most|greatest|smallest|lowest|least|fastest|slowest)\b",
    re.IGNORECASE,
)
# Words that make the extreme the smallest figure ("fell most" is the lowest growth).
_LOWEST = re.compile(r"\b(?:smallest|lowest|least|slowest)\b", re.IGNORECASE)
_FALL = re.compile(r"\b(?:fell|fall\w*|declin\w*|decreas\w*|drop\w*|shrank|shrink\w*|lost)\b", re.IGNORECASE)
# A part that asks how much rows grew or fell compares each row's growth, not one cell.
_GROWTH = re.compile(
    r"\b(?:gr[eo]w\w*|growth|fell|fall\w*|declin\w*|increas\w*|decreas\w*|rose|rise|rising|drop\w*)\b",
    re.IGNORECASE,
)
# A part asking which period had the extreme ("Which year had the highest operating income?")
# compares the columns of one row, not the rows of a table.
_OVER_PERIODS = re.compile(
    r"\b(?:in\s+)?which\s+(?:fiscal\s+|calendar\s+)?(?:years?|quarters?|periods?|months?)\b", re.I
)


@dataclass(frozen=True)
class ExtremeCue:
    """How a part asks for an extreme: its word ("largest"), whether the smallest figure is the
    extreme, whether each row's growth is compared, and whether the periods of one row are."""

    word: str
    lowest: bool
    growth: bool
    over_periods: bool
    measure: str | None = None  # what is compared, as written ("net revenues")


def extreme_asked(part: str) -> ExtremeCue | None:
    """The extreme a part asks for ("Which region's revenue fell most?"), or None."""
    text = asking(part)
    found = ASKS_EXTREME.search(text)
    if found is None:
        return None
    word = found["word"].lower()
    growth = _GROWTH.search(text) is not None
    lowest = _LOWEST.search(word) is not None
    if growth and _FALL.search(text) and word in ("most", "largest", "biggest", "greatest"):
        lowest = True  # "fell most": the lowest growth
    after = _MEASURED.match(text, found.end())
    measure = after["what"].strip() if after and not _GROWTH.fullmatch(after["what"].strip()) else None
    return ExtremeCue(word, lowest, growth, _OVER_PERIODS.search(text) is not None, measure)


# What an extreme compares, after its word: "the largest | net revenues | in FY2022".
_MEASURED = re.compile(
    r"\s+(?P<what>[A-Za-z&][\w&'\u2019 -]{1,60}?)(?=\s+(?:in|for|of|at|during|among|between|from|on|"
    r"by|over|than|and)\b|\s*[?.,;]|$)",
    re.I,
)


# The kinds of comparison a part asks for, first match wins: the sign of one figure; whether it
# improved (which needs a rule for "better"); whether it rose or fell. A yes/no part or a "how
# has/did ... changed/compare" part asks for one of these; "what is the change in X" asks for a
# figure (`localqa.derived.figures`).
COMPARISON_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "judge",
        re.compile(
            r"\b(?:healthy|strong|weak|sufficient|adequate|sound|solvent|safe|comfortable|liquid|"
            r"capital[- ]intensive)\b",
            re.I,
        ),
    ),
    ("sign", re.compile(r"\b(?:positive|negative)\b|\bnet\s+loss\b|\bprofitable\b|\bin\s+deficit\b", re.I)),
    ("improve", re.compile(r"\bimprov\w*|\bdeteriorat\w*|\bworsen\w*|\bweaken\w*|\bstrengthen\w*", re.I)),
    (
        "change",
        re.compile(
            r"\bincreas\w*|\bdecreas\w*|\bdeclin\w*|\bgr[eo]w(?:n|s|ing)?\b|\b(?:rise|rose|risen)\b|"
            r"\b(?:fell|fall|fallen|falling)\b|\bchang\w*|\bcompar\w*|\bhigher\b|\blower\b|\bdropp?\w*",
            re.I,
        ),
    ),
)
# A part that asks how a quantity moved, though not as a yes/no question.
_HOW_MOVED = re.compile(
    r"\bhow\s+(?:much\s+)?(?:has|have|had|did|does|do)\b[^?]*\b(?:chang\w*|compar\w*|develop\w*|evolv\w*|mov\w*)",
    re.I,
)


def comparison_kind(part: str) -> str | None:
    """The kind of comparison a part asks for (`COMPARISON_KINDS`), or None when it asks for none."""
    if not asks_quantity(part):
        return None
    asked = asking(part)
    if not (asks_yes_or_no(asked) or _HOW_MOVED.search(asked)):
        return None
    return next((kind for kind, pattern in COMPARISON_KINDS if pattern.search(asked)), None)


_ITEM_PHRASE = r"[\w&'\u2019.\- ]{2,60}?"
_ITEM_UNTIL = r"(?=\s+(?:in|for|during|at|as\s+of|over|between)\b|\s*[?.,;]|$)"
# How a part names two items compared, first match wins: "how did X compare to Y", "compare X
# with Y", "X versus Y".
COMPARED: tuple[re.Pattern[str], ...] = (
    re.compile(
        rf"\bhow\s+(?:did|does|do|has|have|had|is|was|are|were)\s+(?P<x>{_ITEM_PHRASE})\s+"
        rf"compare[sd]?\s+(?:to|with|against)\s+(?:that\s+of\s+|those\s+of\s+)?(?P<y>{_ITEM_PHRASE}){_ITEM_UNTIL}",
        re.I,
    ),
    re.compile(
        rf"\bcompare\s+(?:\w+['\u2019]s?\s+)?(?P<x>{_ITEM_PHRASE})\s+(?:to|with|against|and)\s+(?P<y>{_ITEM_PHRASE}){_ITEM_UNTIL}",
        re.I,
    ),
    re.compile(
        rf"(?:^|['\u2019]s\s+|\bthe\s+)(?P<x>{_ITEM_PHRASE})\s+(?:versus|vs\.?)\s+(?P<y>{_ITEM_PHRASE}){_ITEM_UNTIL}",
        re.I,
    ),
)


def compares_two_items(part: str) -> bool:
    """Whether a part compares two items in one period (`COMPARED`: "how did X compare to Y")."""
    text = asking(part)
    return any(pattern.search(text) for pattern in COMPARED)


Operation = Literal["sum", "difference", "average"]
# Each rule that makes a part ask for arithmetic over named cells, by operation, first match wins.
OPERATIONS: tuple[tuple[Operation, re.Pattern[str]], ...] = (
    (
        "difference",
        re.compile(
            r"\bhow\s+(?:many|much)\s+more\b|\bdifference\s+(?:in\s+[\w\s-]+?\s+)?between\b|"
            r"\bhow\s+(?:many|much)\s+(?:fewer|less)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "sum",
        re.compile(
            r"\bin\s+total\b|\btotal\s+(?:number|amount|count)\s+of\b|\bcombined\b|\baltogether\b|"
            r"\bsum\s+of\b|\bhow\s+many\b[^?]*\bin\s+all\b",
            re.IGNORECASE,
        ),
    ),
    (
        "average",
        re.compile(r"\b(?:average|mean)\s+(?:[\w-]+\s+){1,4}?(?:of|for|across|between)\b", re.IGNORECASE),
    ),
)


def arithmetic_asked(part: str) -> Operation | None:
    """The arithmetic on stated figures a part asks for (`OPERATIONS`: "how many more", "in total",
    "the average of A and B"), or None."""
    text = asking(part)
    return next((name for name, pattern in OPERATIONS if pattern.search(text)), None)
