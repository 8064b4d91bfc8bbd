"""Derived figures: a ratio, change, growth, margin, average or a metric a question defines,
computed in code from operands that are each a verified table cell, and checked before display.

A part asks for a derived figure when it names a metric of the glossary ("fixed asset turnover
ratio", "capex as a % of revenue"), defines one itself ("DPO is defined as: 365 * (average
accounts payable between FY2019 and FY2020) / ..."; the question's definition wins), or asks for
one line item at a fiscal year ("the FY2018 capital expenditure amount"). `plan` turns it into
*needs* (a line item at a fiscal year, each one operand) and an *expression* over their names
(`localqa.arithmetic`); `localqa.library` retrieves each line item as a part of its own and
reads the cell at each year from the best matching row (`read_operands`); `compute` computes the
expression exactly and rounds it as the question asks. An operand without a verified cell makes
the whole figure "not found", naming it.

The glossary (`glossary.toml` beside this module, extended by the file `LOCALQA_GLOSSARY` names)
says what filings call each line item, in which statement it is reported, and how each metric is
computed from them.

`figure_check` is the one rule a shown figure must pass, here and in evaluation: a value is a
span of its verified quote and states the number it claims; a derived value's operands each pass
it, and its expression, recomputed from them, gives the figure shown at the decimals shown.
"""

from __future__ import annotations

import functools
import os
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from enum import Enum
from pathlib import Path

from localqa import arithmetic, periods, values
from localqa.errors import LocalQAError
from localqa.types import Candidate, Kind, Operand, Value

GLOSSARY = Path(__file__).with_name("glossary.toml")
GLOSSARY_ENV = "LOCALQA_GLOSSARY"
STATEMENTS = ("balance sheet", "income statement", "cash flow", "equity")
# How a question or a table caption names each statement.
_STATEMENT_WORDS = {
    "balance sheet": r"balance\s+sheets?|statements?\s+of\s+financial\s+position|financial\s+position",
    "income statement": r"income\s+statements?|statements?\s+of\s+(?:consolidated\s+)?"
    r"(?:income|operations|earnings)|p\s?&\s?l|profit\s+and\s+loss|statements?\s+of\s+comprehensive\s+income",
    "cash flow": r"cash\s+flows?\s+statements?|statements?\s+of\s+(?:consolidated\s+)?cash\s*flo\s?ws?"
    r"|statement\s+of\s+cash\s+flo\s?w\s?s",
    "equity": r"statements?\s+of\s+(?:changes\s+in\s+)?(?:shareholders|stockholders|shareowners)"
    r"['\u2019]?\s+equity",
}


class GlossaryError(LocalQAError):
    pass


@dataclass(frozen=True)
class Item:
    """A line item: what questions call it, what row labels say, the statement it is read from."""

    key: str
    names: tuple[str, ...]
    rows: tuple[str, ...]
    statement: str | None = None
    instant: bool = False
    exclude: tuple[str, ...] = ()  # words of rows that mention the item but are not it


@dataclass(frozen=True)
class Metric:
    key: str
    names: tuple[str, ...]
    formula: str
    unit: str | None = None


@dataclass(frozen=True)
class Glossary:
    items: Mapping[str, Item]
    metrics: Mapping[str, Metric]


def glossary() -> Glossary:
    """The built-in glossary, with the entries of the file $LOCALQA_GLOSSARY over it."""
    extra = os.environ.get(GLOSSARY_ENV, "").strip()
    stamp = None
    if extra:
        try:
            stamp = Path(extra).stat().st_mtime_ns
        except OSError as error:
            raise GlossaryError(
                f"{GLOSSARY_ENV}={extra}: {error.strerror}; point it at a TOML file"
            ) from None
    return _glossary(extra or None, stamp)


@functools.lru_cache(maxsize=4)
def _glossary(extra: str | None, stamp: int | None) -> Glossary:
    tables = [_read(GLOSSARY)] + ([_read(Path(extra))] if extra else [])
    items: dict[str, Item] = {}
    metrics: dict[str, Metric] = {}
    for path_table in tables:
        path, table = path_table
        for key, entry in table.get("items", {}).items():
            items[key] = _item(path, key, entry)
        for key, entry in table.get("metrics", {}).items():
            metrics[key] = _metric(path, key, entry)
    return Glossary(items, metrics)


def _read(path: Path) -> tuple[Path, dict[str, dict[str, dict[str, object]]]]:
    try:
        return path, tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise GlossaryError(f"{path}: {error}; fix the glossary file") from None


def _strings(path: Path, key: str, entry: Mapping[str, object], name: str) -> tuple[str, ...]:
    found = entry.get(name, [])
    if not isinstance(found, list) or not all(isinstance(s, str) and s.strip() for s in found):
        raise GlossaryError(f"{path}: {key}.{name} must be a list of words")
    return tuple(s.strip().lower() for s in found)


def _item(path: Path, key: str, entry: Mapping[str, object]) -> Item:
    statement = entry.get("statement")
    if statement is not None and statement not in STATEMENTS:
        raise GlossaryError(f"{path}: items.{key}.statement must be one of {', '.join(STATEMENTS)}")
    return Item(
        key,
        _strings(path, key, entry, "names"),
        _strings(path, key, entry, "rows"),
        statement if isinstance(statement, str) else None,
        bool(entry.get("instant", False)),
        _strings(path, key, entry, "exclude"),
    )


def _metric(path: Path, key: str, entry: Mapping[str, object]) -> Metric:
    formula = entry.get("formula")
    if not isinstance(formula, str):
        raise GlossaryError(f"{path}: metrics.{key}.formula must be an expression")
    try:
        arithmetic.parse(formula)
    except arithmetic.ExpressionError as error:
        raise GlossaryError(f"{path}: metrics.{key}.formula: {error}") from None
    unit = entry.get("unit")
    return Metric(key, _strings(path, key, entry, "names"), formula, unit if isinstance(unit, str) else None)


# --- the plan -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Need:
    """One operand: a line item at a fiscal year, named in the expression as `name`."""

    name: str
    item: Item
    year: int


@dataclass(frozen=True)
class FigurePlan:
    """How a part's figure is computed: its `expression` over the names of `needs`."""

    what: str  # the metric as the question names it
    expression: arithmetic.Expression
    needs: tuple[Need, ...]
    unit: str | None
    decimals: int | None
    origin: str  # "definition", "glossary" or "item"
    statements: tuple[str, ...] = ()  # the statements the question names


_DEFINITION = re.compile(
    r"(?:^|(?<=[.?!]\s))(?:(?P<name>[A-Za-z][\w&%'\u2019 ()-]{0,80}?)\s+(?:is|are)\s+defined\s+as:?\s*"
    r"|define\s+(?P<name2>[A-Za-z][\w&%'\u2019 ()-]{0,80}?)\s+as:?\s*)(?P<body>[^?]+?)(?=\.\s|\.$|$)",
    re.IGNORECASE,
)


def plan(part: str, terms: Glossary | None = None) -> FigurePlan | None:
    """The figure a part asks for and how to compute it, or None when it asks for none."""
    terms = terms or glossary()
    asked = values.wanted(part)
    years = sorted(set(asked.years))
    if not years:
        return None
    asking = _asking(part)
    definitions = _definitions(part)
    statements = named_statements(part)
    found = _what(asking, definitions, terms, asked)
    if found is None:
        return None
    what, formula, unit, origin = found
    last, first = years[-1], years[0]
    spread = _average_years(asking, years)
    namespace = _Namespace(terms, definitions, first=first)
    try:
        if spread:
            pieces = [f"({namespace.instantiate(formula, year)})" for year in spread]
            text = f"average({', '.join(pieces)})" if len(pieces) > 1 else pieces[0]
        else:
            text = namespace.instantiate(formula, last)
        expression = arithmetic.parse(text)
    except (arithmetic.ExpressionError, RecursionError):
        return None
    needs = tuple(namespace.needs[name] for name in expression.names() if name in namespace.needs)
    if not needs:
        return None
    return FigurePlan(what, expression, needs, unit, asked.decimals, origin, statements)


def named_statements(text: str) -> tuple[str, ...]:
    """The financial statements `text` names ("the balance sheet", "the statement of income")."""
    return tuple(s for s, words in _STATEMENT_WORDS.items() if re.search(words, text, re.IGNORECASE))


def _asking(part: str) -> str:
    from localqa.parts import asks, sentences

    asking = [s for s in sentences(part) if asks(s)]
    text = " ".join(asking) or part
    # "Here's the question: what is ...": the question after the colon.
    return re.sub(r"^.*\b(?:question|following)\s*(?:is|are)?\s*:\s*", "", text, flags=re.IGNORECASE)


def _definitions(part: str) -> dict[str, str]:
    """The metrics a question defines: folded name -> the definition's text."""
    found: dict[str, str] = {}
    for match in _DEFINITION.finditer(part):
        name = (match["name"] or match["name2"]).strip()
        found[_fold(name)] = match["body"].strip()
        short = re.search(r"\(([A-Za-z&]{2,8})\)", name)  # "days payable outstanding (DPO)"
        if short:
            found[_fold(short.group(1))] = match["body"].strip()
            found[_fold(name[: short.start()])] = match["body"].strip()
    return found


def _what(
    asking: str, definitions: Mapping[str, str], terms: Glossary, asked: values.Wanted
) -> tuple[str, str, str | None, str] | None:
    """What the asking sentence asks for: (as named, its formula, unit, origin)."""
    folded = _fold(asking)
    # The longest name the asking sentence uses is what it asks for: "EBITDA % margin", not the
    # "EBITDA" it also defines (a definition still gives that term's formula, `_Namespace`).
    defined = [(name, body) for name, body in definitions.items() if _contains(folded, name)]
    listed = [(n, m) for m in terms.metrics.values() for n in m.names if _contains(folded, n)]
    longest_defined = max(defined, key=lambda d: len(d[0]), default=None)
    longest_listed = max(listed, key=lambda m: len(m[0]), default=None)
    if longest_defined and (
        longest_listed is None or len(longest_defined[0]) >= len(_fold(longest_listed[0]))
    ):
        name, body = longest_defined
        metric = _glossary_metric(name, terms)
        return name, body, metric.unit if metric else _unit_asked(asked), "definition"
    if longest_listed is not None:
        name, metric = longest_listed
        return name, metric.key, metric.unit, "glossary"
    if not asked.quantity and not re.search(r"\bwhat\s+(?:is|was|were|are)\b", asking, re.IGNORECASE):
        return None
    item = _longest_item(folded, terms)
    if item is None:
        return None
    name, key = item
    return name, key, "USD", "item"


def _unit_asked(asked: values.Wanted) -> str | None:
    return "%" if asked.percent else None


def _glossary_metric(name: str, terms: Glossary) -> Metric | None:
    return next((m for m in terms.metrics.values() if name in m.names), None)


def _longest_item(folded: str, terms: Glossary) -> tuple[str, str] | None:
    found = [
        (name, item.key) for item in terms.items.values() for name in item.names if _contains(folded, name)
    ]
    return max(found, key=lambda f: len(f[0]), default=None)


def _average_years(asking: str, years: Sequence[int]) -> list[int]:
    """The years a multi-year average runs over ("the FY2017 - FY2019 3 year average of ..."),
    or [] when the part asks for no such average."""
    if len(years) < 2 or not re.search(r"\baverage\b", asking, re.IGNORECASE):
        return []
    if re.search(r"\baverage\s+\w+(?:\s+\w+){0,3}\s+between\b", asking, re.IGNORECASE):
        return []  # "average PP&E between FY2018 and FY2019" is the formula's, not a spread
    return list(range(years[0], years[-1] + 1))


def _fold(text: str) -> str:
    text = text.lower().replace("\u2019", "'").replace("&", " & ")
    text = re.sub(r"\bpercent(?:age)?\b", "%", text)
    return " ".join(re.findall(r"[a-z0-9%&']+", text))


def _contains(folded_text: str, name: str) -> bool:
    words = _fold(name)
    return (
        bool(words) and re.search(rf"(?<![\w']){re.escape(words)}(?:s|es)?(?![\w'])", folded_text) is not None
    )


@dataclass
class _Namespace:
    """Turns formulas and definitions into expressions over needs (item, year), collecting the
    needs: a formula's item key is the item at the year, `_prev` the year before, `_start` the
    first year asked about; a metric's key or a defined name is its formula at the same year."""

    terms: Glossary
    definitions: Mapping[str, str]
    first: int
    needs: dict[str, Need] = field(default_factory=dict)
    depth: int = 0

    def instantiate(self, formula: str, year: int) -> str:
        if self.depth > 8:
            raise arithmetic.ExpressionError("definitions refer to each other too deeply")
        self.depth += 1
        try:
            if _is_formula(formula, self.terms):
                return self._formula(formula, year)
            return self._definition(formula, year)
        finally:
            self.depth -= 1

    def _formula(self, formula: str, year: int) -> str:
        def name(match: re.Match[str]) -> str:
            word = match.group(0)
            if word == "years":
                return str(year - self.first)
            if word.lower() in arithmetic.FUNCTIONS:
                return word
            key, at = word, year
            if word.endswith("_prev"):
                key, at = word.removesuffix("_prev"), year - 1
            elif word.endswith("_start"):
                key, at = word.removesuffix("_start"), self.first
            if key in self.terms.items:
                return self.need(self.terms.items[key], at)
            defined = self._defined(key)
            if defined is not None:
                return f"({self.instantiate(defined, at)})"
            if key in self.terms.metrics:
                return f"({self.instantiate(self.terms.metrics[key].formula, at)})"
            raise arithmetic.ExpressionError(f"{word!r} is no line item or metric of the glossary")

        return re.sub(r"[A-Za-z_][A-Za-z0-9_]*", name, formula)

    def _defined(self, key: str) -> str | None:
        """The question's own definition of a glossary metric or item key, by any of its names."""
        entry = self.terms.metrics.get(key) or self.terms.items.get(key)
        names = [key.replace("_", " "), *(entry.names if entry else ())]
        return next((self.definitions[_fold(n)] for n in names if _fold(n) in self.definitions), None)

    def _definition(self, body: str, year: int) -> str:
        """A question's definition in words ("FY2019 revenue / (average PP&E between FY2018 and
        FY2019)") as an expression."""
        text = _operators(body)
        pieces = re.split(r"(\s[-+*/^]\s|[()])", text)
        out = []
        for piece in pieces:
            stripped = piece.strip()
            if not stripped or stripped in "()" or stripped in "-+*/^":
                out.append(piece)
                continue
            out.append(self._operand(stripped, year))
        return "".join(out)

    def _operand(self, phrase: str, year: int) -> str:
        phrase = re.sub(
            r"\s+(?:from|in|on)\s+the\s+[a-z ]*statements?(?:\s+of\s+[a-z ]+)?$", "", phrase, flags=re.I
        )
        phrase = re.sub(r"\s+(?:from|in)\s+the\s+balance\s+sheet$", "", phrase, flags=re.I)
        if re.fullmatch(r"\d+(?:\.\d+)?", phrase):
            return phrase
        between = re.fullmatch(
            r"(?P<what>average|change\s+in)\s+(?P<item>.+?)\s+between\s+(?P<a>\S+)\s+and\s+(?P<b>\S+)",
            phrase,
            re.I,
        )
        if between:
            a, b = _year_of(between["a"]), _year_of(between["b"])
            if a is None or b is None:
                raise arithmetic.ExpressionError(f"no years in {phrase!r}")
            first, second = self._named(between["item"], a), self._named(between["item"], b)
            if between["what"].lower() == "average":
                return f"average({first}, {second})"
            return f"({second} - {first})"
        at = year
        lead = re.match(
            r"(?P<year>(?:FY|fiscal\s+(?:year\s+)?)\s?(?:19|20)\d\d)\s+(?P<rest>.+)", phrase, re.I
        )
        if lead:
            at, phrase = _year_of(lead["year"]) or year, lead["rest"]
        return self._named(phrase, at)

    def _named(self, phrase: str, year: int) -> str:
        folded = re.sub(r"^(?:the\s+)?(?:unadjusted\s+)?", "", _fold(phrase))
        defined = self.definitions.get(folded)
        if defined is not None:
            return f"({self.instantiate(defined, year)})"
        metric = next((m for m in self.terms.metrics.values() if folded in {_fold(n) for n in m.names}), None)
        if metric is not None:
            return f"({self.instantiate(metric.formula, year)})"
        item = next((i for i in self.terms.items.values() if folded in {_fold(n) for n in i.names}), None)
        if item is None:
            found = _longest_item(folded, self.terms)
            item = self.terms.items[found[1]] if found else Item(_key(folded), (folded,), (folded,))
        return self.need(item, year)

    def need(self, item: Item, year: int) -> str:
        name = f"{item.key}_fy{year}"
        self.needs.setdefault(name, Need(name, item, year))
        return name


def _is_formula(text: str, terms: Glossary) -> bool:
    """Whether `text` is a glossary formula (item and metric keys) rather than words."""
    names = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)
    known = set(terms.items) | set(terms.metrics) | {"years", *arithmetic.FUNCTIONS}
    return bool(names) and all(re.sub(r"_(?:prev|start)$", "", n) in known or n in known for n in names)


def _operators(text: str) -> str:
    """Words for operators as symbols, each with spaces around it."""
    text = re.sub(r"\s+(?:less|minus)\s+", " - ", text, flags=re.I)
    text = re.sub(r"\s+(?:plus)\s+", " + ", text, flags=re.I)
    text = re.sub(r"\s+(?:divided\s+by|over)\s+", " / ", text, flags=re.I)
    text = re.sub(r"\s+(?:times|multiplied\s+by)\s+", " * ", text, flags=re.I)
    text = text.replace("\u2212", "-").replace("\u00d7", "*").replace("\u00f7", "/")
    return re.sub(r"\s*([-+*/^])\s*(?=\S)", r" \1 ", text)


def _year_of(text: str) -> int | None:
    found = periods.mentions(text)
    return found[0].year if found else None


def _key(folded: str) -> str:
    return re.sub(r"\W+", "_", folded).strip("_")[:40] or "item"


# --- reading operands -----------------------------------------------------------------------------

# What a statement's title says, searched with a line item: a row label alone shares its words
# with dozens of rows in notes and tables of other statements.
_STATEMENT_TITLES = {
    "balance sheet": "balance sheets financial position",
    "income statement": "statements of operations income earnings",
    "cash flow": "statements of cash flows",
    "equity": "statements of shareholders equity",
}
# Row labels searched for at most per line item (its `rows`, in order).
MAX_ROW_SEARCHES = 8


def search_texts(item: Item, statements: Sequence[str] = ()) -> list[str]:
    """What is searched for a line item, in order: each row label it is reported under, with the
    title words of the statement it is read from, then alone (statement captions share those words
    with every row of every statement, which can crowd the row out)."""
    statement = item.statement or (statements[0] if statements else None)
    title = _STATEMENT_TITLES.get(statement or "", "")
    texts = [text for row in item.rows[:MAX_ROW_SEARCHES] for text in (f"{row} {title}".strip(), row)]
    return list(dict.fromkeys(texts))


@dataclass(frozen=True)
class Found:
    """An operand read: the verified row (its candidate) and the cell at the need's year."""

    need: Need
    candidate: Candidate
    value: Value


@dataclass(frozen=True)
class _Row:
    """A candidate row of a line item, with what ranks it."""

    candidate: Candidate
    level: int  # `row_match`
    alias: int
    statement: int  # `in_statement`
    order: int

    @property
    def page(self) -> tuple[str, int]:
        return self.candidate.location.source, self.candidate.location.page or 0


def read_operands(
    figure: FigurePlan, candidates: Mapping[str, Sequence[Candidate]], context: values.Context
) -> list[Found]:
    """Each need's cell, read from the best row among its item's `candidates` (by item key) that
    has a number at the need's year. Rows rank by how exactly their label is the item's
    (`row_match`), how many of the figure's items have rows on the same page (a statement lists them
    together; a statement's title is not always read as its heading), whether they sit in the
    statement the item is read from (`in_statement`), then the earlier page (a filing's own
    statements come before its subsidiaries'), an earlier row label of the item and retrieval's
    order."""
    rows = {key: _rows(figure, key, found, context) for key, found in candidates.items()}
    support: dict[tuple[str, int], int] = {}
    for found in rows.values():
        for page in {r.page for r in found if r.level >= 2}:
            support[page] = support.get(page, 0) + 1
    read = []
    for need in figure.needs:
        ranked = sorted(
            rows.get(need.item.key, []),
            key=lambda r: (-r.level, -support.get(r.page, 0), -r.statement, r.page[1], r.alias, r.order),
        )
        chosen = next((f for r in ranked if (f := _cell(need, r, context)) is not None), None)
        if chosen is not None:
            read.append(chosen)
    return read


def _rows(
    figure: FigurePlan, key: str, candidates: Sequence[Candidate], context: values.Context
) -> list[_Row]:
    item = next(n.item for n in figure.needs if n.item.key == key)
    preferred = [item.statement] if item.statement else list(figure.statements)
    found = []
    for order, candidate in enumerate(candidates):
        if candidate.location.kind is not Kind.TABLE:
            continue
        match = row_match(item, values.read_row(candidate.text).label or "")
        if match is not None:
            statement = in_statement(candidate, preferred, context)
            found.append(_Row(candidate, match[0], match[1], statement, order))
    return found


def _cell(need: Need, row: _Row, context: values.Context) -> Found | None:
    candidate = row.candidate
    read = values.read_row(candidate.text)
    calendar = context.calendar(candidate.location.source)
    choice = values.choose_cell("", read, values.wanted(""), calendar, year=need.year)
    if choice.cell is None or values.read_number(choice.cell.text) is None:
        return None
    value = values.cell_value(read, choice.cell, [candidate.text, *context.around(candidate.location)])
    return Found(need, candidate, value)


# A row label may carry this many words beyond the item's label ("Total consolidated net
# revenues"); more, and it is another row that mentions the item ("Net effect from recognition of
# deferred net revenues").
EXTRA_WORDS = 2


def row_match(item: Item, label: str) -> tuple[int, int] | None:
    """How a row label names the item: (3, i) when it is the item's i-th row label, (2, i) when it
    starts with it, (1, i) when it holds it among at most `EXTRA_WORDS` more words; None when it
    names it in none of these ways, or names one of the item's exclusions ("noncontrolling")."""
    folded = _fold(label)
    if any(_contains(folded, word) for word in item.exclude):
        return None
    best: tuple[int, int] | None = None
    for index, row in enumerate(item.rows):
        wanted = _fold(row)
        level = 0
        if folded == wanted:
            level = 3
        elif folded.startswith(wanted + " "):
            level = 2
        elif _contains(folded, wanted) and len(folded.split()) - len(wanted.split()) <= EXTRA_WORDS:
            level = 1
        if level and (best is None or level > best[0]):
            best = (level, index)
    return best


def in_statement(candidate: Candidate, statements: Sequence[str], context: values.Context) -> int:
    """How surely a row sits in one of `statements`: 2 when its table's caption or its heading
    path names it, 1 when only a short line of its page does (a title the heading path missed, or
    a line of a page that discusses the statement), 0 when nothing does."""

    def names(texts: Iterable[str]) -> bool:
        return any(
            re.search(_STATEMENT_WORDS[s], text, re.IGNORECASE)
            for s in statements
            if s in _STATEMENT_WORDS
            for text in texts
        )

    if names([candidate.location.section or "", candidate.text]):
        return 2
    return 1 if names(t for t in context.around(candidate.location) if len(t) <= 120) else 0


# --- computing --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Computed:
    """A figure computed, or the reason none could be."""

    value: Value | None
    why: str | None = None


def compute(figure: FigurePlan, found: Sequence[Found]) -> Computed:
    """The figure from its operands: exact arithmetic, rounded as the question asks."""
    by_name = {f.need.name: f for f in found}
    missing = [n for n in figure.needs if n.name not in by_name]
    if missing:
        return Computed(None, _missing(missing, found))
    operands = tuple(_operand(by_name[n.name]) for n in figure.needs)
    numbers = {o.name: magnitude(o) for o in operands}
    try:
        result = figure.expression.evaluate(_common_scale(operands, numbers))
    except arithmetic.ExpressionError as error:
        return Computed(None, f"no figure computed: {error}")
    decimals = figure.decimals if figure.decimals is not None else 2
    rounded = result.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    unit = "%" if figure.unit == "%" else None
    scale = _result_scale(figure, operands, numbers)
    text = f"{rounded:,f}" + (" %" if unit == "%" else "")
    return Computed(
        Value(
            text=text,
            number=float(rounded),
            unit=unit,
            scale=scale,
            operands=operands,
            expression=figure.expression.text,
        )
    )


def substituted(value: Value) -> str:
    """A derived value's expression with each operand's value written in (`(1,800 - 1,600) /
    1,600`, with the signs `localqa.arithmetic` writes)."""
    expression = arithmetic.parse(value.expression or "")
    return expression.render({o.name: _shown(o) for o in value.operands or ()})


def _operand(found: Found) -> Operand:
    return Operand(
        name=found.need.name, value=found.value, quote=found.candidate.text, citation=found.candidate.location
    )


def magnitude(operand: Operand) -> Decimal:
    """An operand's number as the expression uses it: outflows in parentheses count by their
    size (a statement of cash flows writes capital expenditure as "(1,577)")."""
    read = values.read_quantity(operand.value.text)
    assert read is not None
    number = read[0].number
    return -number if number < 0 and _outflow(operand) else number


def _outflow(operand: Operand) -> bool:
    return operand.value.text.strip().startswith("(")


def _shown(operand: Operand) -> str:
    text = operand.value.text.strip()
    return text[1:-1] if _outflow(operand) and text.endswith(")") else text


def _common_scale(operands: Sequence[Operand], numbers: Mapping[str, Decimal]) -> dict[str, Decimal]:
    """The operands' numbers in one scale: as written when they share one, else each brought to
    the smallest scale among them."""
    scales = {o.value.scale for o in operands}
    if len(scales) <= 1 or None in scales:  # one scale, or one not stated: as written
        return dict(numbers)
    least = min(values.SCALES.get(s or "", 0) for s in scales)
    return {
        o.name: numbers[o.name] * Decimal(10) ** (values.SCALES.get(o.value.scale or "", 0) - least)
        for o in operands
    }


def _result_scale(
    figure: FigurePlan, operands: Sequence[Operand], numbers: Mapping[str, Decimal]
) -> str | None:
    """The result's scale: the operands' when the figure grows with them (a sum, a difference),
    None for a ratio (it does not)."""
    scales = {o.value.scale for o in operands}
    if len(scales) != 1 or None in scales:
        return None
    try:
        base = figure.expression.evaluate(numbers)
        grown = figure.expression.evaluate({k: v * 1000 for k, v in numbers.items()})
    except arithmetic.ExpressionError:
        return None
    return next(iter(scales)) if base != 0 and grown / base == 1000 else None


def _missing(missing: Sequence[Need], found: Sequence[Found]) -> str:
    wanted = _listed([f"FY{n.year} {n.item.names[0] if n.item.names else n.item.key}" for n in missing])
    if not found:
        return f"no figure computed: the evidence gives no {wanted}"
    given = _listed([f"FY{f.need.year} {f.need.item.names[0]}" for f in found])
    return f"no figure computed: the evidence gives {given} but not {wanted}"


def _listed(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


# --- the one check ----------------------------------------------------------------------------------


class FigureProblem(Enum):
    NOT_A_SPAN = "its text is not a span of its quote"
    MISREAD = "its number is not the number its text states"
    OPERAND = "an operand is not a verified span of its quote"
    EXPRESSION = "its expression does not parse over its operands"
    RECOMPUTED = "its expression, recomputed from its operands, does not give it"


def figure_check(value: Value, quote: str) -> FigureProblem | None:
    """The rule every shown value passes (None when it does): a value is a span of `quote` (the
    verified quote it comes from) and its number is the one its text states; a derived value's
    operands each pass this rule against their own quotes, and its expression, computed again
    from their texts, gives its number at the decimals its text shows."""
    if value.operands is None:
        return _span_check(value, quote)
    if any(o.value.number is None or _span_check(o.value, o.quote) for o in value.operands):
        return FigureProblem.OPERAND
    try:
        expression = arithmetic.parse(value.expression or "")
        names = {o.name: magnitude(o) for o in value.operands}
        if not set(expression.names()) <= set(names):
            return FigureProblem.EXPRESSION
        result = expression.evaluate(_common_scale(value.operands, names))
    except (arithmetic.ExpressionError, AssertionError):
        return FigureProblem.EXPRESSION
    shown = values.read_quantity(value.text.replace(" %", "%"))
    if shown is None or value.number is None or Decimal(str(value.number)) != shown[0].number:
        return FigureProblem.MISREAD
    places = -shown[0].number.as_tuple().exponent  # type: ignore[operator]
    if result.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP) != shown[0].number:
        return FigureProblem.RECOMPUTED
    return None


def _span_check(value: Value, quote: str) -> FigureProblem | None:
    if not values.is_span(value.text, quote):
        return FigureProblem.NOT_A_SPAN
    if value.number is None:
        return None
    read = values.read_quantity(value.text)
    if read is None or Decimal(str(value.number)) != read[0].number:
        return FigureProblem.MISREAD
    return None
