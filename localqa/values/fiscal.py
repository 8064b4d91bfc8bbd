"""The fiscal calendar: which fiscal year a filer calls a year-end date (`FiscalCalendar`, read
from its document's period by `calendar_for`), and the fiscal year(s) a table's column header names
("2019", "Fiscal 2019", "May 31, 2019", "Year Ended January 31, 2020": `header_years`).

Serves questions about a filing's year: "What was revenue in FY2019?" selects the column of 2019,
and a retailer whose year ends in January has its column dated in the next calendar year.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from localqa.question import periods


@dataclass(frozen=True)
class FiscalCalendar:
    """How a filer names its fiscal years: the year a year-end date belongs to. `offset` is the
    fiscal year minus the calendar year of the end date for an end in January or early February
    (0 when a retailer names the year by its end, Walmart's FY2020 ended 2020-01-31; -1 when by
    its start, Foot Locker's fiscal 2022 ended 2023-01-28); None when not known, and then both
    readings count (`periods.fiscal_years_ending`)."""

    offset: int | None = None
    # A quarterly report whose quarter ends in another calendar year than its fiscal year's, on a
    # date no January reading makes ambiguous (a year that ends in May: its Q2 FY2023 ended on
    # November 30, 2022): the fiscal year minus the calendar year its columns are dated in.
    quarter_shift: int = 0

    def years_ending(self, end: date) -> tuple[int, ...]:
        years = periods.fiscal_years_ending(end)
        if len(years) == 2 and self.offset is not None:
            return (end.year + self.offset,)
        return years


def calendar_for(period_end: date | None, period_label: str | None, years: Sequence[int]) -> FiscalCalendar:
    """The filer's calendar, from its document's period: a catalog label names the year of a dated
    end outright (a quarter's label, "Q2 FY2023" of a report ended November 30, 2022, how far its
    columns' years are from the fiscal year's); else a year the question names that the end date
    may be called (the routing chose the document for it) fixes which reading the filer uses."""
    label = periods.parse_label(period_label) if period_label else None
    # A quarter's report on a date no January reading makes ambiguous.
    if (
        period_end is not None
        and label is not None
        and label.quarter is not None
        and len(periods.fiscal_years_ending(period_end)) < 2
    ):
        return FiscalCalendar(quarter_shift=label.year - period_end.year)
    if period_end is None or len(periods.fiscal_years_ending(period_end)) < 2:
        return FiscalCalendar()
    if label is not None:
        return FiscalCalendar(label.year - period_end.year)
    named = [y for y in years if y in periods.fiscal_years_ending(period_end)]
    if named:
        return FiscalCalendar(max(named) - period_end.year)
    return FiscalCalendar()


_HEADER_DATE = re.compile(
    r"(?P<month>[A-Za-z]{3,9})\.?\s+(?P<day>\d{1,2}),?\s+(?P<year>(?:19|20)\d\d)", re.IGNORECASE
)
_HEADER_YEAR = re.compile(r"(?<![\d.,])(?:FY\s?|F|fiscal\s+(?:year\s+)?)?((?:19|20)\d\d)(?![\d,])", re.I)
_CHANGE = re.compile(r"\bchange\b|%|\bvs\.?\b|\bincrease\b|\bdecrease\b|\bvariance\b", re.IGNORECASE)


def header_years(header: str | None, calendar: FiscalCalendar) -> tuple[int, ...]:
    """The fiscal year(s) a column header names: "2019", "Fiscal 2019", "FY2019" name 2019; a date
    ("May 31, 2019", "Year Ended January 31, 2020") names the fiscal year ending on it, by the
    filer's calendar. () for a header of no year or of a change between years."""
    if not header or _CHANGE.search(header):
        return ()
    dates = list(_HEADER_DATE.finditer(header))
    if len(dates) == 1:
        end = _date(dates[0])
        if end is not None:
            return calendar.years_ending(end)
    years = {int(y) for y in _HEADER_YEAR.findall(header)}
    return tuple(years) if len(years) == 1 else ()


def _date(found: re.Match[str]) -> date | None:
    month = periods.month_number(found["month"])
    if month is None:
        return None
    try:
        return date(int(found["year"]), month, int(found["day"]))
    except ValueError:
        return None
