"""Two items of one filing compared in one period: "How did JnJ's US sales growth compare to
international sales growth in FY2022?", "segment A revenue against segment B revenue".

`paired` reads the two phrases a part compares (`cues.COMPARED`), and each as a *qualifier* (the region,
segment or product the row is labelled by: "US", "international") before a line item of the
glossary ("sales"), perhaps with "growth" after it; a second phrase that names no line item takes
the first's ("US sales growth compared to international": "international sales growth"). Each
becomes a line item of its own (`qualified`), read from the rows its qualifier labels ("U.S.",
"United States", "US sales"), and a figure: the item at the year, or its growth from the year
before. A phrase whose item is a metric of several line items ("segment A's operating margin")
is not paired: each operand would need the segment's own row of every item.
`localqa.derived.comparing` computes both figures and the direction in code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from localqa.derived import arithmetic
from localqa.derived.figures import FigurePlan, Need
from localqa.derived.glossary import Glossary, Item, contains, fold, glossary, named_statements
from localqa.question import cues, periods
from localqa.question.asked import wanted
from localqa.types import Value

# The row labels a qualifier is written as, by its folded form: filings write a region several ways.
QUALIFIER_ROWS: dict[str, tuple[str, ...]] = {
    "us": ("u.s.", "united states", "us", "u.s.a."),
    "u s": ("u.s.", "united states", "us", "u.s.a."),
    "united states": ("united states", "u.s.", "us"),
    "uk": ("u.k.", "united kingdom", "uk"),
    "u k": ("u.k.", "united kingdom", "uk"),
    "international": ("international", "outside the u.s.", "non-u.s."),
}
# Words after the item that make its figure a growth rate rather than an amount.
_GROWTH = re.compile(r"\s+growth(?:\s+rate)?$", re.I)
# Row labels of the base item searched with the qualifier ("u.s. sales"), at most.
MAX_ITEM_ROWS = 4


@dataclass(frozen=True)
class Pair:
    """Two figures compared in one period, each labelled by the phrase that names it."""

    what: str  # "US sales growth against international sales growth"
    labels: tuple[str, str]
    figures: tuple[FigurePlan, FigurePlan]


def phrases(part: str) -> tuple[str, str] | None:
    """The two phrases a part compares (`COMPARED`), as written, or None."""
    text = cues.asking(part)
    for pattern in cues.COMPARED:
        found = pattern.search(text)
        if found is not None:
            x, y = (_own(found[n]) for n in ("x", "y"))
            if x and y:
                return x, y
    return None


def _own(phrase: str) -> str:
    """A phrase without its owner: "Orbit Health's US sales" and "its US sales" are "US sales"."""
    phrase = re.sub(r"^.*?\w['\u2019](?:s\b)?\s+", "", phrase.strip())
    phrase = re.sub(r"^(?:the|its|their)\s+", "", phrase, flags=re.I)
    return re.sub(r"^(?:FY\s?\d{2,4}|fiscal\s+\d{4}|\d{4})\s+", "", phrase, flags=re.I)


def paired(part: str, terms: Glossary | None = None) -> Pair | None:
    """The two figures a part compares in one year (the last it names), or None when it compares
    no two items, names no year, or a phrase names no line item of the glossary (`module doc`)."""
    terms = terms or glossary()
    found = phrases(part)
    years = sorted(set(wanted(part).years))
    if found is None or not years:
        return None
    x, y = found
    first = _split(x, terms)
    if first is None:
        return None
    second = _split(y, terms)
    if second is None:  # "US sales growth compared to international": the first's item
        second = (fold(y), *first[1:])
        y = f"{y} {_after(x, first[0])}".strip()
    year = years[-1]
    one, other = _figure(part, *first, year), _figure(part, *second, year)
    if one is None or other is None:
        return None
    return Pair(f"{x} against {y}", (x, y), (one, other))


def _after(phrase: str, qualifier: str) -> str:
    """The words of `phrase` after its qualifier ("US sales growth" -> "sales growth")."""
    words = phrase.split()
    for count in range(len(words) + 1):
        if fold(" ".join(words[:count])) == qualifier:
            return " ".join(words[count:])
    return phrase


Split = tuple[str, Item, str, bool]  # qualifier, the glossary's item, its name as written, growth


def _split(phrase: str, terms: Glossary) -> Split | None:
    """A phrase as (qualifier, the glossary's line item, the item's name as the phrase writes it,
    whether it asks for growth): the qualifier the words before the item's name ("us",
    "international"), or None when it names no line item."""
    growth = _GROWTH.search(phrase) is not None
    folded = fold(_GROWTH.sub("", phrase))
    best: tuple[int, int, Item, str] | None = None
    for item in terms.items.values():
        for name in item.names:
            found = re.search(rf"(?<![\w']){re.escape(fold(name))}s?$", folded)
            if found is not None and contains(folded, name):
                start = found.start()
                if best is None or (start, -len(name)) < (best[0], -best[1]):
                    best = (start, len(name), item, fold(name))
    if best is None:
        return None
    return folded[: best[0]].strip(), best[2], best[3], growth


def qualified(qualifier: str, item: Item, name: str) -> Item:
    """The item for one qualifier: read from the rows the qualifier labels ("U.S."), or the
    qualifier with the item's name as the part writes it, then with its row labels ("u.s. sales",
    "u.s. net sales")."""
    forms = QUALIFIER_ROWS.get(qualifier, (qualifier,))
    named = tuple(f"{form} {name}" for form in forms)
    rows = (*forms, *named, *(f"{forms[0]} {row}" for row in item.rows[:MAX_ITEM_ROWS]))
    key = re.sub(r"\W+", "_", f"{qualifier} {item.key}").strip("_")
    return Item(
        key,
        (f"{qualifier} {item.names[0]}",),
        tuple(dict.fromkeys(rows)),
        None,
        item.instant,
        qualifies=item.key,
    )


def measured_problem(figure: FigurePlan, value: Value, terms: Glossary | None = None) -> str | None:
    """Why a paired figure's operands do not measure its line item (None: each does,
    `measures`)."""
    terms = terms or glossary()
    needs = {n.name: n for n in figure.needs}
    for operand in value.operands or ():
        need = needs.get(operand.name)
        if need is None or need.item.qualifies is None:
            continue
        problem = measures(operand.quote, operand.value.row or "", operand.citation.section, need.item, terms)
        if problem is not None:
            return problem
    return None


def measures(
    text: str, label: str, section: str | None, item: Item, terms: Glossary | None = None
) -> str | None:
    """Why a row (its `text`, `label` and `section`) does not measure the qualified `item` it is
    read for (None: it does). A row read for "US net sales" is labelled "US", so what it measures
    is said by its label or, failing that, by the heading it stands under ("Net sales:" in a
    segment table whose first section is "Operating income:"), or by its table's title ("FULL YEAR
    SALES BY REGION"). The innermost of them that names a line item of the glossary must name the
    item qualified; a row whose label, headings and title name none cannot be checked."""
    terms = terms or glossary()
    base = terms.items.get(item.qualifies or "")
    if base is None:
        return None
    headings = [h for h in reversed((section or "").split(" > ")) if h]
    at = text.find(label) if label else -1
    caption = text[:at] if at > 0 else ""
    for where in (label, *headings, caption):
        named = _items_named(where, terms)
        if base.key in named:
            return None
        if named:
            other = terms.items[named[0]].names[0]
            return f"the row {label} stands under {where.strip(': ')}: {other}, not {base.names[0]}"
    return f"nothing says that the row {label} measures {base.names[0]}"


def _items_named(text: str, terms: Glossary) -> list[str]:
    """The glossary's line items a row label or heading names, the longest name first."""
    folded = fold(text)
    found = [
        (len(name), item.key)
        for item in terms.items.values()
        for name in (*item.names, *item.rows)
        if contains(folded, name)
    ]
    return list(dict.fromkeys(key for _, key in sorted(found, reverse=True)))


def _figure(part: str, qualifier: str, item: Item, name: str, growth: bool, year: int) -> FigurePlan | None:
    """The figure of one qualified item: its amount at `year`, or its growth from the year before."""
    if not qualifier or periods.mentions(qualifier):  # "FY2021 revenue and FY2022 revenue": periods
        return None
    own = qualified(qualifier, item, name)
    now, before = f"{own.key}_fy{year}", f"{own.key}_fy{year - 1}"
    needs = {now: Need(now, own, year)}
    text = now
    if growth:
        needs[before] = Need(before, own, year - 1)
        text = f"({now} - {before}) / {before} * 100"
    asked = wanted(part)
    unit = "%" if growth else None
    return FigurePlan(
        f"{qualifier} {name}" + (" growth" if growth else ""),
        arithmetic.parse(text),
        tuple(needs.values()),
        unit,
        asked.decimals,
        "shape",
        named_statements(part),
        None if growth else asked.scale,
    )
