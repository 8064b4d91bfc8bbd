"""Reporting periods: the fiscal year (and quarter) a document covers, and the periods a question
names, so that "FY2022" finds the filing for fiscal 2022 (filed in 2023), not the one filed in
2022.

A document's period comes from its catalog entry (`period = "FY2022"`, or `period = {start =
2022-01-01, end = 2022-12-31}`), or else from its own cover text ("For the fiscal year ended
December 31, 2022", "For the quarterly period ended March 31, 2023"; `cover_period`).

Fiscal years are named by the calendar year they end in (3M's fiscal 2022 ended 2022-12-31,
Microsoft's FY2023 ended 2023-06-30), with the one ambiguity the field has: a year ending in
January is named for its end year by some retailers (Walmart's FY2020 ended 2020-01-31) and for
its start year by others (Foot Locker's fiscal 2022 ended 2023-01-28), so both count; a 52/53-week
year ending in the first days of January belongs to the year before. A quarterly report says when
its quarter ended, not which fiscal quarter it is (Amcor's quarter ended 2022-12-31 is its Q2
FY2023): it counts for the year it ended in and the next, quarter unknown.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date
from typing import Literal

from localqa.types import Document, Found, Period

# (fiscal year, quarter): quarter 1-4, UNKNOWN_QUARTER for a quarter whose number is not known,
# None for the whole year.
Fact = tuple[int, int | None]
UNKNOWN_QUARTER = 0


@dataclass(frozen=True)
class Mention:
    """A period named in a question: a fiscal year, perhaps one quarter of it, as written."""

    year: int
    quarter: int | None
    text: str


_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}
# A year's digits, 1900-2099: the one year pattern (`localqa.language.words.YEAR` finds a year in a token).
YEAR_DIGITS = r"(?:19|20)\d\d"
_SHORT = r"'?\d\d"  # FY22, FY'22
_FY = rf"(?:FY\s?(?:{YEAR_DIGITS}|{_SHORT})|F{YEAR_DIGITS}|fiscal\s+(?:year\s+)?{YEAR_DIGITS})"
_ANY_YEAR = rf"(?:{_FY}|{YEAR_DIGITS})"
_QUARTER = r"(?:Q[1-4]|[1-4]Q|(?:first|second|third|fourth|1st|2nd|3rd|4th)[\s-]+quarter)"
_HALF = r"(?:H[12]|[12]H|(?:first|second)\s+half)"
# A period written as one word without its year ("Q2", "2Q", "H1", "FY"): no name
# (`localqa.language.words`), and no period either until a year goes with it.
PERIOD_WORD = re.compile(rf"(?:{_QUARTER}|{_HALF}|[FC]Y)", re.IGNORECASE)
# Most specific first; each match consumes its text, so a year is read once.
MENTIONS = re.compile(
    rf"""(?<![\w$.,])(?:
        (?P<q1>{_QUARTER})(?:\s+of|,)?\s*(?:the\s+)?(?P<y1>{_ANY_YEAR}|{_SHORT}\b)  # Q2 of FY2023, 1Q23
      | (?P<y2>{_ANY_YEAR})\s*(?P<q2>{_QUARTER})                                      # FY2023Q1, 2023 Q1
      | (?:{_HALF})(?:\s+of)?\s*(?:the\s+)?(?P<y3>{_ANY_YEAR})                        # H1 FY2023
      | (?P<y4>{_ANY_YEAR})
    )(?![\w])""",
    re.IGNORECASE | re.VERBOSE,
)


def mentions(text: str) -> list[Mention]:
    """The periods `text` names, in order, each once: "FY2019 - FY2020" names two fiscal years,
    "Q2 of FY2023" one quarter, "May 3, 2023" the year 2023."""
    found: dict[tuple[int, int | None], Mention] = {}
    for match in MENTIONS.finditer(text):
        quarter_text = match["q1"] or match["q2"]
        year_text = match["y1"] or match["y2"] or match["y3"] or match["y4"]
        year = _year(year_text)
        if year is None:
            continue
        quarter = _quarter(quarter_text) if quarter_text else None
        found.setdefault((year, quarter), Mention(year, quarter, match.group(0).strip()))
    return list(found.values())


def _year(text: str) -> int | None:
    digits = re.sub(r"\D", "", text)
    if len(digits) == 4:
        return int(digits)
    if len(digits) == 2 and re.match(r"(?i)fy|'|\d\d$", text.strip()):
        number = int(digits)
        return 2000 + number if number < 70 else 1900 + number
    return None


def _quarter(text: str) -> int:
    word = re.split(r"[\s-]+", text.strip().lower())[0]
    if word in _ORDINAL:
        return _ORDINAL[word]
    return int(re.sub(r"\D", "", word))


def parse_label(label: str) -> Mention | None:
    """A period label as a catalog writes it ("FY2022", "2022", "Q2 2024", "Q2 FY2024",
    "FY2024 Q2"): the one period it names, or None when it is not exactly one period."""
    text = " ".join(label.split())
    found = list(MENTIONS.finditer(text))
    if len(found) != 1 or found[0].group(0).strip() != text or found[0]["y3"]:
        return None
    return mentions(text)[0]


def fiscal_years_ending(end: date) -> tuple[int, ...]:
    """The fiscal years a year ending on `end` may be called (see the module docstring)."""
    if end.month == 1 and end.day <= 7:
        return (end.year - 1,)
    if end.month == 1 or (end.month == 2 and end.day <= 7):
        return (end.year - 1, end.year)
    return (end.year,)


def facts(period: Period) -> set[Fact]:
    """The (fiscal year, quarter) pairs a document with this period covers."""
    if period.label:
        mention = parse_label(period.label)
        return {(mention.year, mention.quarter)} if mention else set()
    if period.end is None:
        return set()
    if span(period) == "quarter":
        return {(period.end.year, UNKNOWN_QUARTER), (period.end.year + 1, UNKNOWN_QUARTER)}
    return {(year, None) for year in fiscal_years_ending(period.end)}


def span(period: Period) -> Literal["year", "quarter"] | None:
    """How long a dated period is: a year (300 days or more, or no start given), a quarter (up
    to about 100 days), or neither."""
    if period.end is None:
        return None
    if period.start is None:
        return period.kind
    days = (period.end - period.start).days + 1
    return "year" if days >= 300 else "quarter" if days <= 100 else None


def match(mention: Mention, fact: Fact) -> float:
    """How well a document covering `fact` fits a question naming `mention`: 2 exactly, 1 when
    the question's year holds the document's period or the other way round (a quarter of the
    fiscal year asked about, the annual report of a quarter's year), 0 otherwise."""
    year, quarter = fact
    if year != mention.year:
        return 0.0
    if mention.quarter == quarter:
        return 2.0
    if mention.quarter is None or quarter is None or quarter == UNKNOWN_QUARTER:
        return 1.0
    return 0.0  # another quarter of the same year


# --- reading a cover ----------------------------------------------------------------------------

_MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): number for number, name in enumerate(calendar.month_abbr) if name})
_DATE = (
    r"(?:(?P<month>[A-Za-z]{3,9})\.?\s+(?P<day>\d{1,2}),?\s+(?P<year>\d{4})"
    r"|(?P<day2>\d{1,2})\s+(?P<month2>[A-Za-z]{3,9})\.?,?\s+(?P<year2>\d{4})"
    r"|(?P<iso>\d{4}-\d{2}-\d{2}))"
)
_COVER = re.compile(
    rf"\bfor\s+the\s+(?P<what>fiscal\s+year|year|quarterly\s+period|quarter|"
    rf"(?P<months>three|twelve|3|12)\s+months)\s+ended\s+{_DATE}",
    re.IGNORECASE,
)


def cover_period(text: str) -> Period | None:
    """The period a filing's cover says it covers: "For the fiscal year ended December 31,
    2022" (an annual report), "For the quarterly period ended March 31, 2023" (a quarterly one).
    None when the text says neither."""
    for found in _COVER.finditer(" ".join(text.split())):
        end = _date(found)
        if end is None:
            continue
        what = found["what"].lower()
        quarterly = what.startswith("quarter") or (found["months"] or "").lower() in ("three", "3")
        return Period(end=end, kind="quarter" if quarterly else "year")
    return None


def month_number(name: str) -> int | None:
    """The number of a month written in full or abbreviated ("May", "Sept", "DECEMBER")."""
    key = name.lower().rstrip(".")
    return _MONTHS.get("sep" if key == "sept" else key)


def _date(found: re.Match[str]) -> date | None:
    try:
        if found["iso"]:
            return date.fromisoformat(found["iso"])
        month = _MONTHS.get((found["month"] or found["month2"]).lower())
        if month is None:
            return None
        return date(int(found["year"] or found["year2"]), month, int(found["day"] or found["day2"]))
    except ValueError:
        return None


def of_document(document: Document, found: Found | None) -> tuple[Period | None, str | None]:
    """A document's period and where it comes from: its catalog entry ("catalog"), else its
    cover ("cover"); (None, None) when neither gives one."""
    if document.period is not None:
        return document.period, "catalog"
    if found is not None and found.period is not None:
        return found.period, "cover"
    return None, None


def describe(period: Period) -> str:
    """How a period is shown: its label, or what its dates say."""
    if period.label:
        return period.label
    if period.end is None:
        return ""
    kind = span(period)
    if kind == "year":
        years = "/".join(f"FY{year}" for year in fiscal_years_ending(period.end))
        return f"{years} (year ended {period.end.isoformat()})"
    if kind == "quarter":
        return f"quarter ended {period.end.isoformat()}"
    start = period.start.isoformat() if period.start else "?"
    return f"{start} to {period.end.isoformat()}"
