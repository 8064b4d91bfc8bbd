"""What figure a part asks for, and how it is computed: a ratio, change, growth, margin, average,
a metric the part defines, or one line item at a fiscal year.

A part asks for a derived figure when it defines one itself ("DPO is defined as: 365 * (average
accounts payable between FY2019 and FY2020) / ..."; the part's definition wins), names a metric of
the glossary (`localqa.derived.glossary`: "fixed asset turnover ratio", "capex as a % of revenue") or one by
its shape ("R&D to asset ratio", "X as a % of Y", "the growth rate of X"), or asks for one line
item at a fiscal year ("the FY2018 capital expenditure amount"). With none of these, a language
model may write the arithmetic (`expression_request`, `plan_from_reply`). `plan` turns the figure
into *needs* (a line item at a fiscal year, each one operand) and an *expression* over their names
(`localqa.derived.arithmetic`). `localqa.derived.deriving` retrieves each line item as a part of
its own and reads its cells (`localqa.derived.operands`); `localqa.derived.computing` computes the
expression and checks the result.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from pydantic import BaseModel, ConfigDict

from localqa.derived import arithmetic
from localqa.derived.glossary import Glossary, Item, Metric, contains, fold, glossary, named_statements
from localqa.models.base import AnswerRequest
from localqa.question import cues, periods
from localqa.question.asked import Wanted, wanted
from localqa.settings import AnswerSettings
from localqa.types import Value

# --- the plan -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Need:
    """One operand: a line item at a fiscal year, named in the expression as `name`."""

    name: str
    item: Item
    year: int
    quarter: int | None = None  # a quarter of `year` ("Q2 FY2023"): read from that quarter's rows


@dataclass(frozen=True)
class FigurePlan:
    """How a part's figure is computed: its `expression` over the names of `needs`."""

    what: str  # the metric as the question names it
    expression: arithmetic.Expression
    needs: tuple[Need, ...]
    unit: str | None
    decimals: int | None
    origin: str  # "definition", "glossary", "shape" (`_SHAPES`), "item" or "model"
    statements: tuple[str, ...] = ()  # the statements the question names
    scale: str | None = None  # the scale the question asks the figure in ("Answer in USD billions")


_DEFINITION = re.compile(
    r"(?:^|(?<=[.?!]\s))(?:(?P<name>[A-Za-z][\w&%'\u2019 ()-]{0,80}?)\s+(?:is|are)\s+defined\s+as:?\s*"
    r"|define\s+(?P<name2>[A-Za-z][\w&%'\u2019 ()-]{0,80}?)\s+as:?\s*)(?P<body>[^?]+?)(?=\.\s|\.$|$)",
    re.IGNORECASE,
)


def plan(part: str, terms: Glossary | None = None) -> FigurePlan | None:
    """The figure a part asks for and how to compute it, or None when it asks for none."""
    terms = terms or glossary()
    asked = wanted(part)
    years = sorted(set(asked.years))
    if not years:
        return None
    asking = cues.asking(part)
    # "Does Adobe have an improving operating margin?" is a comparison (`localqa.derived.comparing`), not
    # one figure; "why", "what drove" and the like ask for no quantity at all (`asks_quantity`).
    if cues.asks_yes_or_no(asking) or not cues.asks_quantity(part):
        return None
    if surveyed_share(asking):  # "what percentage of survey respondents reported revenue growth"
        return None
    definitions = _definitions(part)
    found = _what(asking, definitions, terms, asked)
    if found is None:
        return None
    return plan_found(part, found, years, terms)


def named(part: str, year: int, terms: Glossary | None = None) -> tuple[str, str, str | None, str] | None:
    """What a part names as a figure at `year` (a comparison's figure at each period it compares):
    a definition, a glossary metric or a shape as a figure question names them (`_what`), else the
    longest line item of the glossary it names ("its debt"); None when it names none."""
    terms = terms or glossary()
    asked = dataclasses.replace(wanted(part), years=(year,))  # a growth shape at this year
    asking = cues.asking(part)
    found = _what(asking, _definitions(part), terms, asked)
    if found is not None:
        return found
    item = _longest_item(fold(asking), terms)
    return None if item is None else (item[0], item[1], "USD", "item")


def metric_of(found: tuple[str, str, str | None, str], terms: Glossary | None = None) -> Metric | None:
    """The glossary metric a named figure is (`named`), if any."""
    terms = terms or glossary()
    return terms.metrics.get(found[1]) or _glossary_metric(found[0], terms)


def plan_found(
    part: str, found: tuple[str, str, str | None, str], years: Sequence[int], terms: Glossary | None = None
) -> FigurePlan | None:
    """The plan of a figure already named (`named`: as named, its formula, unit, origin) at
    `years` (the last is the figure's year; with several, an average over them when the part asks
    for one)."""
    terms = terms or glossary()
    asked = wanted(part)
    asking = cues.asking(part)
    definitions = _definitions(part)
    statements = named_statements(part)
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
    return FigurePlan(what, expression, needs, unit, asked.decimals, origin, statements, asked.scale)


_CURRENCY_UNITS = frozenset({"USD", "EUR", "GBP", "JPY"})


def is_amount(value: Value) -> bool:
    """Whether a value is an amount (of money, or in a table's scale), not a ratio or a rate."""
    if value.number is None or value.unit == "%":
        return False
    return value.unit in _CURRENCY_UNITS or value.scale is not None or any(c in value.text for c in "$€£¥")


# Words no line item's name holds: a question's own words ("what drove the reduction in an expense
# ratio"), which the shapes (`_SHAPES`) would otherwise read as an item's name and search for.
_NOT_IN_AN_ITEM = re.compile(
    r"\b(?:what|why|how|which|who|when|where|whether|does|did|do|has|have|had|is|was|are|were|"
    r"dr[oi]ve|drives|driving|driven|caused?|explain\w*|forecast\w*|expect\w*|reduction|"
    r"increased?|decreased?|improv\w*|declin\w*|change[sd]?|compare[sd]?)\b",
    re.IGNORECASE,
)


def is_item_phrase(phrase: str) -> bool:
    """Whether a phrase a shape read may name a line item (no question words in it)."""
    return bool(phrase.strip()) and _NOT_IN_AN_ITEM.search(phrase) is None


def _definitions(part: str) -> dict[str, str]:
    """The metrics a question defines: folded name -> the definition's text."""
    found: dict[str, str] = {}
    for match in _DEFINITION.finditer(part):
        name = (match["name"] or match["name2"]).strip()
        found[fold(name)] = match["body"].strip()
        short = re.search(r"\(([A-Za-z&]{2,8})\)", name)  # "days payable outstanding (DPO)"
        if short:
            found[fold(short.group(1))] = match["body"].strip()
            found[fold(name[: short.start()])] = match["body"].strip()
    return found


def _what(
    asking: str, definitions: Mapping[str, str], terms: Glossary, asked: Wanted
) -> tuple[str, str, str | None, str] | None:
    """What the asking sentence asks for: (as named, its formula, unit, origin)."""
    folded = fold(asking)
    # The longest name the asking sentence uses is what it asks for: "EBITDA % margin", not the
    # "EBITDA" it also defines (a definition still gives that term's formula, `_Namespace`).
    defined = [(name, body) for name, body in definitions.items() if contains(folded, name)]
    listed = [(n, m) for m in terms.metrics.values() for n in m.names if contains(folded, n)]
    longest_defined = max(defined, key=lambda d: len(d[0]), default=None)
    longest_listed = max(listed, key=lambda m: len(m[0]), default=None)
    if longest_defined and (
        longest_listed is None or len(longest_defined[0]) >= len(fold(longest_listed[0]))
    ):
        name, body = longest_defined
        metric = _glossary_metric(name, terms)
        return name, body, metric.unit if metric else _unit_asked(asked), "definition"
    shaped = _shaped(asking, asked)
    if longest_listed is not None:
        name, metric = longest_listed
        # A shape that holds the glossary's name and more is another figure: "cash flow to total
        # debt ratio" is not the "debt ratio" it ends with.
        if shaped is None or not _holds_more(shaped[0], name):
            return name, metric.key, metric.unit, "glossary"
    if shaped is not None:
        return shaped
    if not asked.quantity and not re.search(r"\bwhat\s+(?:is|was|were|are)\b", asking, re.IGNORECASE):
        return None
    if _COMPUTED.search(asking):  # "the difference between gross profit and ...": not one line item
        return None
    item = _longest_item(folded, terms)
    if item is None:
        return None
    name, key = item
    return name, key, "USD", "item"


_PHRASE = r"[\w&'\u2019 -]{2,60}?"
_LEAD = r"(?:^|\bthe\s+|\b(?:is|was|are|were|did|does|do|has|have|had)\s+)"
# A phrase ends before a preposition, punctuation, or a verb of a comparison ("net earnings as a
# percent of sales increase in Q2": the item is "sales").
_END = (
    r"(?=\s+(?:for|in|of|at|during|from|between|over|increas\w*|decreas\w*|improv\w*|declin\w*|"
    r"chang\w*|compar\w*)\b|\s*[?.,;]|$)"
)
# Figures a question names by their shape rather than by a glossary name: "R&D to asset ratio",
# "the ratio of X to Y", "X as a % of Y", "the growth rate of X", "X growth". Their parts are line
# items (the glossary's, or read as the question writes them).
_SHAPES: tuple[tuple[re.Pattern[str], str, str | None], ...] = (
    (re.compile(rf"{_LEAD}(?P<x>{_PHRASE})\s+to\s+(?P<y>{_PHRASE})\s+ratio\b", re.I), "{x} / {y}", None),
    (re.compile(rf"\bratio\s+of\s+(?P<x>{_PHRASE})\s+to\s+(?P<y>{_PHRASE}){_END}", re.I), "{x} / {y}", None),
    (
        re.compile(
            rf"{_LEAD}(?P<x>{_PHRASE})\s+as\s+an?\s+(?:%|percent(?:age)?)\s+of\s+(?P<y>{_PHRASE}){_END}", re.I
        ),
        "{x} / {y} * 100",
        "%",
    ),
    (re.compile(rf"\bgrowth(?:\s+rate)?\s+(?:of|in)\s+(?P<x>{_PHRASE}){_END}", re.I), "growth", "%"),
    (re.compile(rf"{_LEAD}(?P<x>{_PHRASE})\s+growth(?:\s+rate)?\b", re.I), "growth", "%"),
)


def _items_in(found: re.Match[str], shape: str) -> bool:
    """Whether a shape's phrases may name line items (`is_item_phrase`)."""
    x_ok = is_item_phrase(_trimmed(found["x"]))
    return x_ok and ("{y}" not in shape or is_item_phrase(_trimmed(found["y"])))


def _quarters(text: str) -> list[tuple[int, int]]:
    """The quarters `text` names, as (fiscal year, quarter), in order."""
    return sorted({(m.year, m.quarter) for m in periods.mentions(text) if m.quarter})


def _shaped(asking: str, asked: Wanted) -> tuple[str, str, str | None, str] | None:
    """A figure the asking sentence names by its shape (`_SHAPES`), as a definition in words."""
    years = sorted(set(asked.years)) or [y for y, _ in _quarters(asking)]
    # A shape may also start after the company's possessive ("Did JnJ's net earnings as a percent
    # of sales increase ...": its first phrase is "net earnings").
    owned = re.sub(r"^.*?\w['\u2019](?:s\b)?\s+", "", asking, count=1)
    for pattern, shape, unit in _SHAPES:
        found = next(
            (
                f
                for text in dict.fromkeys((asking, owned))
                if (f := pattern.search(text)) and _items_in(f, shape)
            ),
            None,
        )
        if found is None:
            continue
        x = _trimmed(found["x"])
        if shape == "growth":
            now, before = years[-1], years[-2] if len(years) > 1 else years[-1] - 1
            body = f"(FY{now} {x} - FY{before} {x}) / FY{before} {x} * 100"
        else:
            body = shape.format(x=x, y=_trimmed(found["y"]))
        return found.group(0).strip(), body, unit or _unit_asked(asked), "shape"
    return None


def _holds_more(shaped: str, name: str) -> bool:
    """Whether a shape's phrase is another figure than the glossary's `name` it holds: the name
    does not hold the shape's first operand ("cash flow to total debt ratio" holds "debt ratio",
    whose words miss "cash flow"; "average of capex as a % of revenue" is the glossary's "capex as
    a % of revenue")."""
    for pattern, _, _ in _SHAPES:
        found = pattern.search(shaped)
        if found is not None:
            words = fold(_trimmed(found["x"])).split()
            return bool(words) and words[-1] not in fold(name).split()
    return False


def _trimmed(phrase: str) -> str:
    """A phrase without the words before a line item's name ("the", "what is the", a year)."""
    phrase = re.sub(r"^(?:what\s+(?:is|was|are|were)\s+)?(?:the\s+)?", "", phrase.strip(), flags=re.I)
    return re.sub(r"^(?:FY\s?\d{2,4}|\d{4})\s+", "", phrase, flags=re.I).strip()


def _unit_asked(asked: Wanted) -> str | None:
    return "%" if asked.percent else None


def _glossary_metric(name: str, terms: Glossary) -> Metric | None:
    return next((m for m in terms.metrics.values() if name in m.names), None)


def _longest_item(folded: str, terms: Glossary) -> tuple[str, str] | None:
    found = [
        (name, item.key) for item in terms.items.values() for name in item.names if contains(folded, name)
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


# Why a figure whose definitions (or glossary formulas) expand past an expression's bound has none.
EXPANDS_TOO_FAR = f"the definitions expand to more than {arithmetic.MAX_LENGTH} characters"


@dataclass
class _Namespace:
    """Turns formulas and definitions into expressions over needs (item, year), collecting the
    needs: a formula's item key is the item at the year, `_prev` the year before, `_start` the
    first year asked about; a metric's key or a defined name is its formula at the same year.

    Work and size are bounded whatever the question or a glossary writes: each (formula, year) is
    expanded once (`expanded`), and an expansion longer than an expression may be
    (`arithmetic.MAX_LENGTH`) is refused as soon as it is made, so definitions that each name the
    next a dozen times stop at the first level that outgrows the bound instead of being written
    out twelve times over at every level."""

    terms: Glossary
    definitions: Mapping[str, str]
    first: int
    needs: dict[str, Need] = field(default_factory=dict)
    depth: int = 0
    expanded: dict[tuple[str, int], str] = field(default_factory=dict)

    def instantiate(self, formula: str, year: int) -> str:
        done = self.expanded.get((formula, year))
        if done is not None:  # its needs were collected when it was first expanded
            return done
        metric = self.terms.metrics.get(formula.strip())
        text = formula
        if metric is not None and self._defined(metric.key) is None:  # a metric's key alone
            text = metric.formula
        if self.depth > 8:
            raise arithmetic.ExpressionError("definitions refer to each other too deeply")
        self.depth += 1
        try:
            written = (
                self._formula(text, year) if _is_formula(text, self.terms) else self._definition(text, year)
            )
        finally:
            self.depth -= 1
        if len(written) > arithmetic.MAX_LENGTH:
            raise arithmetic.ExpressionError(EXPANDS_TOO_FAR)
        self.expanded[(formula, year)] = written
        return written

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
        return next((self.definitions[fold(n)] for n in names if fold(n) in self.definitions), None)

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
        folded = re.sub(r"^(?:the\s+)?(?:unadjusted\s+)?", "", fold(phrase))
        defined = self.definitions.get(folded)
        if defined is not None:
            return f"({self.instantiate(defined, year)})"
        forms = {folded, folded + "s", folded.removesuffix("s")}  # "asset" names "assets"
        metric = next((m for m in self.terms.metrics.values() if forms & {fold(n) for n in m.names}), None)
        if metric is not None:
            return f"({self.instantiate(metric.formula, year)})"
        item = next((i for i in self.terms.items.values() if forms & {fold(n) for n in i.names}), None)
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


# --- an expression a model writes -------------------------------------------------------------------

# A part that asks for something computed: without a glossary entry or a definition, a language
# model may write its arithmetic.
_COMPUTED = re.compile(
    r"\b(?:ratio|growth|change|margin|average|difference|sum|cagr|turnover|per\s+\w+|percentage|"
    r"rate|increase|decrease|how\s+(?:much|many)\s+more)\b",
    re.IGNORECASE,
)
# The numbers an expression may hold besides its operands: a percentage, days or months in a year,
# a thousand for a scale, small counts. Any other is a figure of the model's own, and refused.
# A share of a survey, a poll or a sample ("the percentage of respondents who ...", "adults polled
# in 2018"): a figure the document states, never one computed from a filing's fiscal-year line
# items (issue 38: such questions were planned as "FY2018 ..." figures and refused).
_SURVEYED = re.compile(
    r"\b(?:survey(?:s|ed)?|polls?|polled|respondents?|samples?|sampled|interviewe(?:d|es)|participants?"
    r"|adults|voters|teens|households|residents|people|population)\b",
    re.IGNORECASE,
)
CONSTANTS = frozenset(Decimal(n) for n in (1, 2, 3, 4, 5, 10, 12, 100, 365, 1000))
MAX_OPERANDS = 6


_SHARE = re.compile(r"\b(?:percent(?:age)?s?|per\s+cent|share|proportion|fraction)\b|%", re.IGNORECASE)


def surveyed_share(asking: str) -> bool:
    """Whether a part asks for a share of a survey, poll or sample (`_SURVEYED`): a figure the
    document states, never one planned from a filing's line items."""
    return _SHARE.search(asking) is not None and _SURVEYED.search(asking) is not None


def asks_computed(part: str) -> bool:
    """Whether a part asks for a figure computed from others (a ratio, growth, a margin, ...); a
    share of a survey, poll or sample (`_SURVEYED`) never is."""
    asking = cues.asking(part)
    return (
        _COMPUTED.search(asking) is not None
        and _SURVEYED.search(asking) is None
        and bool(wanted(part).years)
        and cues.asks_quantity(part)
    )


def expression_request(part: str, settings: AnswerSettings) -> AnswerRequest:
    """The request a language model answers with the line items a figure needs and its
    expression, under a schema that admits nothing else: operand names of a fixed shape, years
    among those the part names (and each year before them), an expression of arithmetic only."""
    from localqa.answers import prompts

    named = sorted(set(wanted(part).years))
    years = sorted({y for year in named for y in (year - 1, year)})
    schema = {
        "type": "object",
        "properties": {
            "operands": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_OPERANDS,
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "pattern": "^[a-z][a-z0-9_]{0,24}$"},
                        "item": {"type": "string", "minLength": 2, "maxLength": 60},
                        "year": {"enum": years},
                    },
                    "required": ["name", "item", "year"],
                    "additionalProperties": False,
                },
            },
            # Names, whole numbers and operators only: no "a.b", no quoted text.
            "expression": {"type": "string", "pattern": "^([a-z][a-z0-9_]*|[0-9]+|[ ()+*/^,-]){1,80}$"},
        },
        "required": ["operands", "expression"],
        "additionalProperties": False,
    }
    user = prompts.FIGURE_USER.format(question=part, years=", ".join(f"FY{y}" for y in named))
    messages = ({"role": "system", "content": prompts.FIGURE_SYSTEM}, {"role": "user", "content": user})
    return AnswerRequest(
        question=part,
        passages={},
        units=(),
        messages=messages,
        schema=schema,
        max_tokens=settings.reply_tokens * 2,
        settings=settings,
    )


class _Written(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    operands: list[dict[str, str | int]]
    expression: str


def plan_from_reply(part: str, reply: str, terms: Glossary | None = None) -> FigurePlan | str:
    """The plan a model's reply describes, or why it cannot be used (said to the reader): a reply
    that is not the JSON asked for, a name the expression uses that no operand has, a year the
    part does not name, or a number of the model's own in the expression."""
    terms = terms or glossary()
    try:
        written = _Written.model_validate(json.loads(reply))
        expression = arithmetic.parse(written.expression)
    except (ValueError, TypeError, RecursionError):
        return "the model's expression is not the arithmetic asked for"
    named = {y for year in wanted(part).years for y in (year - 1, year)}
    needs: dict[str, Need] = {}
    for operand in written.operands[:MAX_OPERANDS]:
        name, item, year = operand.get("name"), operand.get("item"), operand.get("year")
        if not isinstance(name, str) or not isinstance(item, str) or year not in named:
            return "the model named an operand outside the question's years"
        if name in needs:
            return "the model gave two operands one name"
        assert isinstance(year, int)
        needs[name] = Need(name, _item_named(item, terms), year)
    if not set(expression.names()) <= set(needs):
        return "the model's expression uses a name it gave no operand"
    own = sorted(n for n in expression.numbers() if n not in CONSTANTS)
    if own:
        return f"the model's expression holds a figure of its own ({own[0]}), which no document gave"
    used = tuple(needs[n] for n in expression.names())
    asked = wanted(part)
    return FigurePlan(
        cues.asking(part),
        expression,
        used,
        _unit_asked(asked),
        asked.decimals,
        "model",
        named_statements(part),
        asked.scale,
    )


def _item_named(phrase: str, terms: Glossary) -> Item:
    """The glossary's line item a model's phrase names exactly ("net sales"), else the phrase itself
    as an item: "product sales" is a row of its own, not the revenue it is part of."""
    folded = fold(phrase.replace("_", " "))
    forms = {folded, folded + "s", folded.removesuffix("s")}
    found = next((i for i in terms.items.values() if forms & {fold(n) for n in i.names}), None)
    return found or Item(_key(folded), (folded,), (folded,))
