"""The glossary of derived figures: the line items filings report (what questions call them, the
row labels statements write, the statement each is read from) and the metrics computed from them,
from `glossary.toml` beside this module with the entries of the file `LOCALQA_GLOSSARY` names over
it; and how names are matched (`fold`, `contains`), statements included."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from localqa.derived import arithmetic
from localqa.errors import LocalQAError
from localqa.tomlfile import TomlFileError, read_toml

GLOSSARY = Path(__file__).with_name("glossary.toml")
GLOSSARY_ENV = "LOCALQA_GLOSSARY"
STATEMENTS = ("balance sheet", "income statement", "cash flow", "equity")
# How a question or a table caption names each statement.
STATEMENT_WORDS = {
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
    # An outflow a metric counts by its size (`counted_by_size`); every other item by its sign.
    outflow: bool = False
    # Row labels under which an item that may be either sign (income taxes: an expense or a
    # benefit) is an expense, written in parentheses as a deduction (`counted_by_size`).
    expense_rows: tuple[str, ...] = ()
    # The glossary item a qualified item is part of ("US net sales" of "revenue",
    # `localqa.derived.pairs.qualified`): what its rows must measure.
    qualifies: str | None = None


BETTER = ("higher", "lower")


@dataclass(frozen=True)
class Metric:
    key: str
    names: tuple[str, ...]
    formula: str
    unit: str | None = None
    # Whether a higher or a lower figure is the better one, when the glossary says so, and where
    # it takes that from (`better_source`); None: no rule, and a comparison says only whether the
    # figure increased or decreased, never "improved" (`localqa.derived.comparing`).
    better: str | None = None
    # A rule of thumb a judgment may cite: the threshold and where the glossary takes it from.
    threshold: float | None = None
    threshold_source: str | None = None
    better_source: str | None = None


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
    """The glossary file at `path`, read as every TOML file people write is read (`read_toml`: a
    regular file only, a document nested too deeply refused), or a GlossaryError naming it."""
    try:
        return path, read_toml(path)
    except TomlFileError as error:
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
        entry.get("outflow", False) is True,
        _strings(path, key, entry, "expense_rows"),
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
    better = entry.get("better")
    if better is not None and better not in BETTER:
        raise GlossaryError(f"{path}: metrics.{key}.better must be one of {', '.join(BETTER)}")
    better_source = entry.get("better_source")
    if better is not None and not isinstance(better_source, str):
        raise GlossaryError(f"{path}: metrics.{key}.better needs a better_source: where the rule comes from")
    threshold = entry.get("threshold")
    source = entry.get("threshold_source")
    if threshold is not None and (not isinstance(threshold, int | float) or not isinstance(source, str)):
        raise GlossaryError(f"{path}: metrics.{key}.threshold must be a number with a threshold_source")
    return Metric(
        key,
        _strings(path, key, entry, "names"),
        formula,
        unit if isinstance(unit, str) else None,
        better if isinstance(better, str) else None,
        float(threshold) if isinstance(threshold, int | float) else None,
        source if isinstance(source, str) else None,
        better_source if isinstance(better_source, str) else None,
    )


# --- signs ----------------------------------------------------------------------------------------

_YEAR_SUFFIX = re.compile(r"_fy\d{4}$")


def counted_by_size(operand: str, label: str = "", terms: Glossary | None = None) -> bool:
    """Whether the operand a figure's expression names `operand` counts by its size: the line item
    it names is an outflow or an expense (`Item.outflow`: capital expenditure, dividends paid,
    repurchases; cost of sales, depreciation and amortization, interest expense, R&D), which a
    statement may write in parentheses as a deduction ("(1,200)") and a metric such as free cash
    flow, capex as a % of revenue or a gross margin uses as a positive amount. Every other operand
    counts with its sign: a loss written "(800)" is -800, so a loss year's margin is negative;
    except an item read from a row whose `label` names it as an expense (`Item.expense_rows`:
    "Provision for income taxes (411)" is a tax expense of 411, so an effective tax rate is
    positive), unless the label also names a benefit.

    The rule every figure is computed and checked by (`localqa.derived.computing`). An operand is named
    `KEY_fyYEAR` by the glossary, a question's definition or a shape; a model names its own
    (`dividends_paid`, `capital_expenditures`), read here as the item of that key or name."""
    terms = terms or glossary()
    key = _YEAR_SUFFIX.sub("", operand)
    item = terms.items.get(key)
    if item is None:
        words = fold(key.replace("_", " "))
        item = next((i for i in terms.items.values() if words in {fold(n) for n in i.names}), None)
    if item is None:
        return False
    if item.outflow:
        return True
    folded = fold(label)
    return not contains(folded, "benefit") and any(
        folded == fold(row) or folded.startswith(fold(row) + " ") for row in item.expense_rows
    )


# --- names ----------------------------------------------------------------------------------------


def named_statements(text: str) -> tuple[str, ...]:
    """The financial statements `text` names ("the balance sheet", "the statement of income")."""
    return tuple(s for s, words in STATEMENT_WORDS.items() if re.search(words, text, re.IGNORECASE))


def fold(text: str) -> str:
    text = text.lower().replace("\u2019", "'").replace("&", " & ")
    text = re.sub(r"\bpercent(?:age)?\b", "%", text)
    return " ".join(re.findall(r"[a-z0-9%&']+", text))


def contains(folded_text: str, name: str) -> bool:
    words = fold(name)
    return (
        bool(words) and re.search(rf"(?<![\w']){re.escape(words)}(?:s|es)?(?![\w'])", folded_text) is not None
    )
