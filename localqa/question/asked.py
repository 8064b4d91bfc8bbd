"""What a question part asks for, read from its words (`Wanted`): the fiscal years it names (a
year selects a table's column), whether it asks for a quantity ("how many", "what percentage",
"Answer in USD millions"), a duration ("how long", "how many days"), a time or a date ("when"), a
place ("where"), who ("who approves"), and the scale and rounding its instruction asks for.

Serves every question kind: it decides which kind of span or cell a quote's value is, and the
figures (`localqa.derived.figures`), comparisons and extremes read the years a part names from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from localqa.language.lexicon import NUMBER_WORD_VALUES
from localqa.question import periods

_QUANTITY = re.compile(
    r"\bhow (?:many|much)\b|%|\b(?:percent(?:age)?s?|ratios?|rates?|margins?|amounts?|totals?|"
    r"averages?|sums?|number of|figures?|values?|in (?:usd|eur|gbp|us\$|dollars)|round(?:ed)?|"
    r"how (?:long|old|often|far)|fees?|charges?|charged|costs?|prices?|deposits?|fines?|salar(?:y|ies)|"
    r"caps?|allowances?|limits?|budgets?)\b",
    re.IGNORECASE,
)
_DURATION = re.compile(
    r"\bhow (?:long|often)\b|\bhow many (?:days|weeks|months|years|hours|minutes)\b|\bwithin how\b", re.I
)
_WHEN = re.compile(
    r"^\W*(?:when|what time|what date|until when|by when|on what date)\b|\bwhat (?:time|date)\b"
    r"|\b(?:opening|closing|office|desk)\s+hours\b|\bschedule\b|\b(?:on\s+)?which\s+(?:day|date|month)\b",
    re.IGNORECASE,
)
_WHO = re.compile(r"^\W*(?:who|by whom)\b", re.IGNORECASE)
_WHERE = re.compile(r"^\W*where\b|\bin which (?:room|place|building|floor|office)\b", re.IGNORECASE)
_ASKED_SCALE = re.compile(
    r"\b(?:in\s+)?(?:usd|us\$|\$|dollars|eur|gbp)?\s*(?P<scale>thousands|millions|billions)\b", re.I
)
_DECIMALS = re.compile(
    r"\bround(?:ed)?\b[^.?]*?\b(?:to\s+)?(?:the\s+)?(?:nearest\s+)?(?P<n>one|two|three|four|zero|no|\d)\s+"
    r"decimal(?:\s+places?|s)?\b|\bround(?:ed)?\b[^.?]*?\bwhole number\b",
    re.IGNORECASE,
)
# A price or a charge asked ("How much does a library card cost?"): its answer is an amount of
# money or "free", never a count of items the sentence also states ("up to 30 items").
_PRICE = re.compile(
    r"\bhow\s+much\b[^?]*\b(?:costs?|charged?|charges|pay|paid|fees?|prices?|priced)\b"
    r"|\bwhat\s+(?:is|are|was|were)\s+the\s+(?:\w+\s+){0,3}?(?:costs?|fees?|prices?|charges?)\b",
    re.IGNORECASE,
)
_PERCENT_ASKED = re.compile(r"%|\bpercent(?:age|s)?\b|\bin units of percents?\b", re.I)


@dataclass(frozen=True)
class Wanted:
    """What a question part asks for, read from its words."""

    years: tuple[int, ...]  # fiscal years it names, in order
    quantity: bool  # a number ("how many", "what percentage", "in USD millions")
    duration: bool  # "how long", "how many days"
    when: bool  # a time or a date
    scale: str | None  # "millions" when it asks "in USD millions"
    decimals: int | None  # "round to one decimal place": 1
    percent: bool  # the answer is asked as a percentage
    where: bool = False  # a place ("where can ...")
    who: bool = False  # a person or a role ("who approves ...")
    price: bool = False  # a price or a charge ("how much does ... cost"): money, or free


def wanted(part: str) -> Wanted:
    """What `part` asks for (see `Wanted`)."""
    scale = _ASKED_SCALE.search(part)
    return Wanted(
        years=tuple(m.year for m in periods.mentions(part) if m.quarter is None),
        quantity=_QUANTITY.search(part) is not None,
        duration=_DURATION.search(part) is not None,
        when=_WHEN.search(part) is not None,
        scale=scale["scale"].lower() if scale else None,
        decimals=_decimals(part),
        percent=_PERCENT_ASKED.search(part) is not None,
        where=_WHERE.search(part) is not None,
        who=_WHO.search(part) is not None,
        price=_PRICE.search(part) is not None,
    )


def _decimals(part: str) -> int | None:
    found = _DECIMALS.search(part)
    if found is None:
        return None
    n = found["n"]
    if n is None or n in ("no", "zero"):
        return 0
    return int(n) if n.isdigit() else NUMBER_WORD_VALUES[n]
