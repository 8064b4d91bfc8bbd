"""The span of a sentence that answers a part: every value-shaped span of a sentence by kind (an
amount of money, a percentage, a number with its unit, a duration, a time or a range of times, a
date, a place, who does it: `spans`), and of those the one of the kind the part asks for closest to
the words the sentence shares with the part (`choose_span`).

Serves the questions answered by a sentence with a number, a time, a date, a place or a doer:
"how many", "what percentage", "how long", "when", "where", "who approves".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from localqa.language.tokenizer import tokenizer
from localqa.question.asked import Wanted
from localqa.values.doers import names_a_doer
from localqa.values.numbers import DASHES, NUMBER_WORDS, SCALE_WORDS

_TIME_UNITS = (
    r"(?:calendar\s+|business\s+|working\s+)?(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?)"
)
_WORD_NUMBER = "|".join(NUMBER_WORDS)
_AMOUNT = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_CLOCK = r"\d{1,2}(?::\d{2})\s*(?:[ap]\.?m\.?)?|\d{1,2}\s*[ap]\.?m\.?|noon|midnight"
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?"
    r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_SCALED = r"(?:\s?(?:thousand|million|billion|trillion|mn|bn)\b)?"
_WEEKDAY = r"(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day"
_QUALIFIER = (
    r"(?:(?:every|each|within|up\s+to|at\s+least|at\s+most|after|no\s+later\s+than|"
    r"(?:shorter|longer|more|less|fewer)\s+than|over|under)\s+)?"
)
# A qualifier after a number, part of what it states: "six or more chapters", "3 or fewer".
_OR_MORE = r"(?:\s+or\s+(?:more|fewer|less|over|above|under|below|longer|shorter)\b)?"
# What a rate is per: "per night", "per travel day", "per week".
_PER = (
    r"(?:\s+per\s+(?:[a-z]+\s+)?(?:day|night|week|month|year|hour|guest|person|item|visit|trip|employee)s?\b"
    r"|\s+per\s+[a-z]+)?"
)
_SPANS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "time",
        # A recurring time: "the first Thursday of each month at 18:00", "Wednesdays at 10:30".
        re.compile(
            rf"\b(?:(?:every|each)\s+(?:{_MONTH}|year|quarter|month|week)\b"
            r"|\d{1,2}(?:st|nd|rd|th)\s+(?:day\s+)?of\s+(?:each|every|the)\s+month"
            r"|(?:first|last)\s+(?:working|business|calendar)\s+day(?:\s+of\s+(?:each|every|the)\s+month)?"
            rf"|(?:first|second|third|fourth|last)\s+{_WEEKDAY}\s+of\s+(?:each|every|the)\s+month"
            rf"|{_WEEKDAY}s?|weekdays|weekends)(?:\s+(?:at|from)\s+(?:{_CLOCK})(?:\s*(?:to|until|[-\u2013])\s*(?:{_CLOCK}))?)?",
            re.IGNORECASE,
        ),
    ),
    (
        "time",
        re.compile(
            rf"\b(?:from\s+)?(?:{_CLOCK})\s*(?:to|until|[-\u2013])\s*(?:{_CLOCK})|(?<![\d:])(?:{_CLOCK})(?![\d:])",
            re.IGNORECASE,
        ),
    ),
    (
        "date",
        re.compile(
            rf"\b{_MONTH}\.?\s+\d{{1,2}},?\s+(?:19|20)\d\d\b|\b\d{{1,2}}\s+{_MONTH}\.?,?\s+(?:19|20)\d\d\b"
            r"|\b(?:19|20)\d\d-\d\d-\d\d\b"
            rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\b|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?\b(?!,?\s+\d)"
        ),
    ),
    ("money", re.compile(rf"(?:US\$|[$€£¥])\s?(?:{_AMOUNT}){_SCALED}", re.IGNORECASE)),
    # What costs nothing: the answer to a price asked ("a card is free for residents").
    ("free", re.compile(r"\bfree(?:\s+of\s+charge)?\b|\bno\s+charge\b|\bat\s+no\s+cost\b", re.IGNORECASE)),
    (
        "percent",
        re.compile(rf"(?<![\w.,])[{DASHES}]?(?:{_AMOUNT})\s?(?:%|percent\b|per cent\b)", re.IGNORECASE),
    ),
    (
        "duration",
        re.compile(
            rf"(?<![\w.,]){_QUALIFIER}(?:{_AMOUNT}|{_WORD_NUMBER}){_OR_MORE}(?:\s+|-)(?:{_TIME_UNITS})\b{_PER}",
            re.IGNORECASE,
        ),
    ),
    (
        "number",
        re.compile(
            rf"(?<![\w.,$€£¥-]){_QUALIFIER}(?:{_AMOUNT}|(?:{_WORD_NUMBER})(?=\s+[a-z])|once|twice|thrice)"
            rf"{_OR_MORE}(?:\s?(?:thousand|million|billion|trillion)\b|\s+[a-z]+{_PER})?(?![\w.,]\d)",
            re.IGNORECASE,
        ),
    ),
    (
        "agent",  # who does something: "approved by the finance controller"
        re.compile(
            r"(?<=\bby\s)(?:the\s+)?[a-z][\w -]{1,40}?(?=\s*[.,;:!?]|\s+(?:and|or|but|if|when|for)\b|$)", re.I
        ),
    ),
    (
        "place",
        re.compile(
            r"\b(?:only\s+)?(?:in|at|on|from|inside|outside)\s+(?:the\s+)?[a-z][\w -]{1,40}?(?:\s+only)?"
            r"(?=\s*[.,;:!?]|\s+(?:and|or|but|if|when|while|during|for|before|after|unless)\b|$)",
            re.IGNORECASE,
        ),
    ),
)


@dataclass(frozen=True)
class Span:
    kind: str
    text: str
    start: int
    end: int


def spans(sentence: str, kinds: Sequence[str] | None = None) -> list[Span]:
    """Every value-shaped span of `sentence` of `kinds` (None: of any kind), the more specific
    kinds first where two overlap."""
    found: list[Span] = []
    for kind, pattern in _SPANS:
        if kinds is not None and kind not in kinds:
            continue
        for match in pattern.finditer(sentence):
            text = match.group(0).strip()
            start = match.start() + (len(match.group(0)) - len(match.group(0).lstrip()))
            if any(s.start < start + len(text) and start < s.end for s in found):
                continue
            found.append(Span(kind, text, start, start + len(text)))
    return sorted(found, key=lambda s: s.start)


def _wanted_kinds(asked: Wanted) -> tuple[str, ...]:
    if asked.who:
        return ("agent",)
    if asked.where:
        return ("place",)
    if asked.when:
        return ("time", "date", "duration")  # "When must I bring it back?": "for two calendar days"
    if asked.duration:
        return ("duration", "time")  # "how often": "every 90 days", "every March"
    if asked.price:
        return ("money", "free", "number")  # a number only in a currency (`_CURRENCY_WORDS`)
    if asked.percent:
        return ("percent",)
    if asked.quantity:
        return ("money", "percent", "duration", "number")
    return ()


def choose_span(part: str, sentence: str, asked: Wanted) -> Span | None:
    """The span of `sentence` that answers the part: of the kind it asks for, and, of several,
    the one nearest to the words the sentence shares with the part. A span the part itself
    states (a year, a figure it names) is not the answer."""
    kinds = _wanted_kinds(asked)
    if not kinds:
        return None
    asked_terms = set(tokenizer().terms(part))
    found = [
        s
        for s in spans(sentence, kinds)
        if s.text not in part and not set(tokenizer().terms(s.text)) <= asked_terms
    ]
    if asked.who:
        found = [s for s in found if names_a_doer(s.text)]
    if asked.price:  # "20 cents per day", never "up to 30 items"
        found = [s for s in found if s.kind != "number" or _CURRENCY_WORDS.search(s.text)]
    if asked.duration:
        unit = re.search(r"how many (\w+)", part, re.IGNORECASE)
        if unit:
            found = [s for s in found if unit.group(1).lower().rstrip("s") in s.text.lower()] or found
    elif asked.quantity:
        found = [s for s in found if in_unit_asked(part, s.text)] or found
    if not found:
        return None
    found.sort(key=lambda s: kinds.index(s.kind))
    first_kind = [s for s in found if s.kind == found[0].kind]
    anchors = [m.start() for m in shared_words(part, sentence)]
    if not anchors or len(first_kind) == 1:
        return _counted(first_kind[0], part)
    return _counted(min(first_kind, key=lambda s: min(abs(s.start - a) for a in anchors)), part)


# Currencies written in words after a number: a price asked is money, or a number in one of them.
_CURRENCY_WORDS = re.compile(r"\b(?:cents?|dollars?|euros?|pounds?|pence|yen|usd|eur|gbp)\b", re.IGNORECASE)
# Words that are the unit of the number before them: kept with it whatever the part asks.
UNIT_WORDS = frozenset(
    "cent cents dollar dollars euro euros pound pounds yen usd eur gbp percent item items page pages "
    "book books copy copies person people visitor visitors seat seats time times km kilometres "
    "kilometers mile miles metre metres meter meters kg kilograms gram grams litre litres liter liters "
    "tonne tonnes ton tons".split()
)


# The units a part may ask a measure in ("how many grams"), each with the ways a document writes
# it after a number ("16 g", "16 grams"): the span in that unit answers, not another number of the
# sentence ("6 Insert ground coffee (max. 16 g)").
# Each unit: the names a part may ask it by (both spellings), and what a document may write after a
# number besides those names and their plurals ("16 g").
_UNITS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("gram", ("g", "gr")),
    ("kilogram kilo", ("kg",)),
    ("milligram", ("mg",)),
    ("litre liter", ("l",)),
    ("millilitre milliliter", ("ml",)),
    ("metre meter", ("m",)),
    ("centimetre centimeter", ("cm",)),
    ("millimetre millimeter", ("mm",)),
    ("kilometre kilometer", ("km",)),
    ("inch", ("in", '"')),
    ("watt", ("w",)),
    ("volt", ("v",)),
    ("calorie", ("cal", "kcal")),
    ("byte", ("b",)),
)


def _plural(name: str) -> str:
    return name + ("es" if name.endswith("ch") else "s")


MEASURE_UNITS: dict[str, tuple[str, ...]] = {
    name: (*written, *(form for n in names.split() for form in (n, _plural(n))))
    for names, written in _UNITS
    for name in names.split()
}
_MEASURE_ASKED = re.compile(r"\bhow\s+many\s+(?P<unit>[a-z]+)", re.IGNORECASE)


def unit_asked(part: str) -> tuple[str, ...] | None:
    """How a document writes the unit the part asks its measure in (`MEASURE_UNITS`), or None."""
    asked = _MEASURE_ASKED.search(part)
    word = asked["unit"].lower() if asked else ""
    singular = word[:-2] if word.endswith("es") and word[:-2] in MEASURE_UNITS else word.rstrip("s")
    return MEASURE_UNITS.get(singular)


def in_unit_asked(part: str, span: str) -> bool:
    """Whether a number span is written in the unit the part asks its measure in (`MEASURE_UNITS`:
    "16 g" for "how many grams"); True when the part asks in no such unit."""
    written = unit_asked(part)
    if written is None:
        return True
    after = re.search(r"\d\s*(?P<unit>[A-Za-z\"]+)", span)
    return after is not None and after["unit"].lower() in written


def _counted(span: Span, part: str) -> Span:
    """A plain number keeps the words after it when they are its unit ("20 cents per day") or what
    the part counts ("1,234 tweets" for "how many tweets"): "nine widely-used datasets" gives
    "nine". A qualifier before it stays ("up to 5"), and one after it ("six or more")."""
    if span.kind != "number":
        return span
    found = re.match(
        rf"(?P<number>.*?(?:\d[\d,.]*|\b(?:{_WORD_NUMBER}|once|twice|thrice)\b){_OR_MORE})(?P<rest>.*)$",
        span.text,
        re.I,
    )
    if found is None or not found["rest"].strip():
        return span
    number, word = found["number"], found["rest"].split()[0]
    asked = set(tokenizer().terms(part))
    if word.lower() in UNIT_WORDS or word.lower() in SCALE_WORDS or set(tokenizer().terms(word)) & asked:
        return span
    if word.lower() in (unit_asked(part) or ()):  # "16 g" for "how many grams"
        return span
    return Span(span.kind, number, span.start, span.start + len(number))


def shared_words(part: str, sentence: str) -> list[re.Match[str]]:
    """The words of the sentence it shares with the part, where they stand."""
    terms = set(tokenizer().terms(part))
    return [m for m in re.finditer(r"\w+", sentence) if set(tokenizer().terms(m.group(0))) & terms]
