"""Totals and differences over the cells of one table that a part names: "How many items in total
of Amazon related datasets?" (the "# of items" cells of the columns "Amazon-beauty" and
"Amazon-music", summed), "How many more claims does A have than B?" (A's cell less B's), "What is
the total number of non-response InMails for Recruiter A and B?" (the rows "Recruiter A" and
"Recruiter B", at the column "Non-response InMails"), "the average score of A and B".

Which parts (`plan`): one that asks for arithmetic on stated figures (`cues.OPERATIONS`, a named
table) and that no figure of a filing (`localqa.derived.figures`) or comparison plans: a FinanceBench
metric keeps its planner.

Which cells (`operands_of`): the table is the one the part's verified quote is a row of, as the
caller may see it (`Context.table`: a hidden document's table is never read). The table is a grid
of row names and column headers, and the part names one axis by its measure ("items", "claims":
the words after "how many" or "number of") and the cells to add on the other axis by their names.
A name is a word the part shares with a row's name or a column's header, beyond the words every
header of that axis shares ("Recruiter") and the table's common words (`GENERIC_WORDS`); a
one-letter name counts only as the part capitalises it ("Recruiter A and B", not "a"), and a
number is never a name (a year is the figure planner's). A difference splits the part at "than",
"compared to", "versus", or "between ... and", and adds each side's cells before subtracting. A
cell named that holds no figure ("-") gives no total: the note says which, never a guess.
Every operand is a cell of a verified row, quoted and cited; the figure is computed in code
(`localqa.derived.arithmetic`) and passes the one check (`computing.figure_check`). When none is,
the part's quote stands with the reason beside it, and a number of another kind its quote states
("24 hours" for "how many more tweets") is no value (`stated`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from localqa.derived import arithmetic, computing
from localqa.derived.extremes import is_total, row_label
from localqa.language.words import singular
from localqa.question import cues
from localqa.question.cues import Operation
from localqa.types import Location, Operand, Passage, Value
from localqa.values.cells import Cell, Row, cell_value, read_row
from localqa.values.numbers import read_number, read_quantity

# Where a difference's two sides meet: "A than B", "A compared to B", "between A and B".
_SIDES = re.compile(r"\s(?:than|compar(?:ed|ing)\s+(?:to|with)|versus|vs\.?|against)\s", re.IGNORECASE)
_BETWEEN = re.compile(r"\bbetween\s+(?P<first>.+?)\s+and\s+(?P<second>.+)$", re.IGNORECASE)
# What the part measures: the noun after "how many (more)" or "number of" ("items", "claims"), or
# the words after "average" up to a preposition ("performance gap").
_MEASURE = re.compile(
    r"\bhow\s+(?:many|much)\s+(?:more\s+|fewer\s+|less\s+)?(?P<a>[\w-]+)|"
    r"\b(?:number|amount|count)\s+of\s+(?P<b>[\w-]+(?:\s+[\w-]+)?)|"
    r"\b(?:average|mean)\s+(?:number\s+of\s+)?(?P<c>[\w-]+(?:\s+(?!(?:of|for|between|across|per|in)\b)[\w-]+)?)",
    re.IGNORECASE,
)
# Words a table's headers and a question share without naming a row or column: "the Amazon
# datasets" names Amazon, not every dataset.
STOP_WORDS = frozenset(
    "a an the of in on for to and or by with from at as is are was were be does do did have has had "
    "how many much more less fewer what which all".split()
)
GENERIC_WORDS = STOP_WORDS | frozenset(
    "total number amount count sum average mean combined altogether related dataset datasets data set "
    "sets paper table tables column row value values item items figure figures respectively please "
    "answer write format int integer float".split()
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019]*|\d+")


@dataclass(frozen=True)
class TotalPlan:
    """What a part asks: the operation, the measure's words, and the phrases naming the cells
    (one for a sum or an average, two for a difference: the first less the second)."""

    operation: Operation
    measure: frozenset[str]
    names: tuple[str, ...]


def plan(part: str) -> TotalPlan | None:
    """The arithmetic over named cells a part asks for, or None (see the module's rules)."""
    text = cues.asking(part)
    operation = cues.arithmetic_asked(part)
    if operation is None:
        return None
    found = _MEASURE.search(text)
    measured = next((g for g in (found.groups() if found else ()) if g), "")
    measure = frozenset(_stem(w) for w in _words(measured) if w.lower() not in STOP_WORDS)
    if operation != "difference":
        return TotalPlan(operation, measure, (text,))
    between = _BETWEEN.search(text)
    if between is not None:
        return TotalPlan(operation, measure, (between["first"], between["second"]))
    sides = _SIDES.split(text, maxsplit=1)
    if len(sides) != 2:
        return None
    return TotalPlan(operation, measure, (sides[0], sides[1]))


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def _stem(word: str) -> str:
    return singular(word.lower().rstrip("'\u2019"))


def _name_words(phrase: str) -> set[str]:
    """The words of a phrase that can name a row or a column: not generic, not a number; a
    one-letter word only as the phrase capitalises it ("B" in "Recruiter A and B")."""
    names = set()
    for word in _words(phrase):
        capital = len(word) == 1 and word.isupper()
        if read_number(word) is not None or (word.lower() in GENERIC_WORDS and not capital):
            continue
        if len(word) == 1 and not word.isupper():
            continue
        names.add(word.lower() if len(word) == 1 else _stem(word))
    return names


@dataclass(frozen=True)
class Slot:
    """One cell of the grid: its row and the cell, with the row's name and the cell's header."""

    row: Passage
    read: Row
    cell: Cell
    row_name: str
    header: str


@dataclass(frozen=True)
class Totalled:
    """The figure computed, or why none was (said beside the part's quote)."""

    value: Value | None
    why: str | None = None


def _grid(rows: Sequence[Passage]) -> list[Slot]:
    """Every cell of the table's rows that a total may read: a row's value cells (not its name),
    totals aside."""
    slots = []
    for row in rows:
        read = read_row(row.text)
        name = row_label(read) or ""
        if not name or is_total(name):
            continue
        for cell in read.cells:
            if cell.header is None or cell.text == name:
                continue
            slots.append(Slot(row, read, cell, name, cell.header))
    return slots


def _distinct(names: Sequence[str]) -> dict[str, set[str]]:
    """Each name's words that tell it from the others of its axis (the words all share aside)."""
    words = {n: {_stem(w) if len(w) > 1 else w.lower() for w in _words(n)} for n in names}
    shared = set.intersection(*words.values()) if len(words) > 1 else set()
    # A one-letter word names a row ("Recruiter A"), whatever the stop words say of "a".
    return {n: {x for x in w - shared if len(x) == 1 or x not in GENERIC_WORDS} for n, w in words.items()}


def operands_of(chosen: TotalPlan, rows: Sequence[Passage]) -> tuple[list[list[Slot]], str] | None:
    """The cells each phrase names, on one axis, at the measure on the other, with the axis said
    ("columns" or "rows"); None when the table names no cells so."""
    slots = _grid(rows)
    for axis in ("columns", "rows"):
        names = [_name(s, axis) for s in slots]
        measures = [s.row_name if axis == "columns" else s.header for s in slots]
        distinct = _distinct(list(dict.fromkeys(names)))
        # The measure is the row (or column) whose name shares the most of the measure's words:
        # "Non-response InMails", not "InMails sent", for "non-response InMails".
        shared = [len(chosen.measure & _measure_words(m)) for m in measures]
        best = max(shared, default=0)
        at_measure = [s for s, n in zip(slots, shared, strict=True) if best and n == best]
        if len({m for m, n in zip(measures, shared, strict=True) if best and n == best}) != 1:
            continue
        groups = []
        for phrase in chosen.names:
            wanted = _name_words(phrase)
            named = [s for s in at_measure if distinct[_name(s, axis)] & wanted]
            # A cell named in full ("Amazon-music") is meant, not every cell sharing one of its
            # words ("Amazon-beauty"); a phrase that names none in full ("the Amazon datasets")
            # means every cell it names a word of.
            whole = [s for s in named if distinct[_name(s, axis)] <= wanted]
            groups.append(whole or named)
        if chosen.operation == "difference":
            first, second = groups
            overlap = {id(s) for s in first} & {id(s) for s in second}
            groups = [[s for s in first if id(s) not in overlap], [s for s in second if id(s) not in overlap]]
            if not groups[0] or not groups[1]:
                continue
        elif len(groups[0]) < 2 or (len(groups[0]) == len(at_measure) and len(at_measure) > 2):
            # one cell is no total; every cell of a wide row is the table's, not the cells named
            continue
        return groups, axis
    return None


def stated(chosen: TotalPlan, value: Value | None) -> bool:
    """Whether a value its quote states (no figure computed) may stand for the part: a total a
    sentence states of the measure itself ("41 tweets in total", "an average of 51.01 words").
    A difference is never stated by one span, and a number of another kind ("24 hours", "2016"
    for "how many more users") is not the figure asked for."""
    if value is None or value.derived or value.listed:
        return value is not None
    if chosen.operation == "difference" or not chosen.measure:
        return False
    return chosen.measure <= _measure_words(value.text)


def _name(slot: Slot, axis: str) -> str:
    """A cell's name on the axis the part names cells on: its column's header, or its row's name."""
    return slot.header if axis == "columns" else slot.row_name


def _measure_words(name: str) -> set[str]:
    return {_stem(w) for w in _words(name)}


def total(chosen: TotalPlan, rows: Sequence[Passage], cited: Location, around: Sequence[str]) -> Totalled:
    """The figure over the cells the part names in `rows` (one table, as the caller may see it),
    each a cited operand; or why none is computed."""
    found = operands_of(chosen, rows)
    if found is None:
        return Totalled(None, "no figure computed: the table names no cells to add for the question")
    groups, _ = found
    missing = [s for group in groups for s in group if read_quantity(s.cell.text) is None]
    if missing:
        said = ", ".join(f"{s.row_name}, {s.header} ({s.cell.text.strip() or 'empty'})" for s in missing)
        return Totalled(None, f"no figure computed: no figure in {said}")
    operands: list[list[Operand]] = []
    number = 0
    for group in groups:
        operands.append([])
        for slot in group:
            number += 1
            value = cell_value(slot.read, slot.cell, around).model_copy(
                update={"row": slot.row_name, "column": slot.header}
            )
            location = slot.row.located(cited)
            operands[-1].append(
                Operand(name=f"cell_{number}", value=value, quote=slot.row.text, citation=location)
            )
    expression = _expression(chosen.operation, [[o.name for o in g] for g in operands])
    flat = tuple(o for g in operands for o in g)
    return _computed(flat, expression, average=chosen.operation == "average")


def _expression(operation: Operation, groups: Sequence[Sequence[str]]) -> str:
    if operation == "difference":
        first, second = (" + ".join(g) for g in groups)
        left = f"({first})" if len(groups[0]) > 1 else first
        right = f"({second})" if len(groups[1]) > 1 else second
        return f"{left} - {right}"
    if operation == "average":
        return f"average({', '.join(groups[0])})"
    return " + ".join(groups[0])


def _computed(operands: tuple[Operand, ...], expression: str, *, average: bool) -> Totalled:
    numbers = {o.name: computing.magnitude(o) for o in operands}
    units = {o.value.unit for o in operands}
    scales = {o.value.scale for o in operands}
    if len(units) > 1 or len(scales) > 1:
        return Totalled(None, "no figure computed: the cells named are in different units or scales")
    try:
        result = arithmetic.parse(expression).evaluate(numbers)
    except arithmetic.ExpressionError as error:
        return Totalled(None, f"no figure computed: {error}")
    places = max(_places(o) for o in operands) + (2 if average else 0)
    rounded = arithmetic.rounded(result, places)
    unit = units.pop()
    text = f"{rounded:,f}" + (" %" if unit == "%" else "")
    value = Value(
        text=text,
        number=float(rounded),
        unit=unit,
        scale=scales.pop(),
        operands=operands,
        expression=expression,
    )
    if computing.figure_check(value, "") is not None:
        return Totalled(None, "no figure computed: its check failed")
    return Totalled(value)


def _places(operand: Operand) -> int:
    read = read_quantity(operand.value.text)
    assert read is not None
    exponent = read[0].number.as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0
