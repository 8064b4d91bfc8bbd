"""Checks of a computed figure against the document's own arithmetic, made before the figure or a
direction from it is shown as computed (issue 48; DESIGN "Computed answers check their
preconditions"):

- **one scale**: every operand of money is stated in one scale ("millions");
- **one statement**: the operands of one statement at one year come from one statement (a
  registrant's net sales and a guarantor group's cost of sales are not a margin);
- **a total is at least each part**: total current assets against the inventories inside them;
- **gross profit = net sales - cost of sales**, where the statement the operands come from has
  the three rows;
- **total assets = total liabilities and equity**, where the balance sheet has the rows;
- **agreement with the same line in another of the registrant's statements** (net income in the
  income statement and in the statement of cash flows);
- **agreement with the figure the document states** ("gross margin was 19.6 %" in management's
  discussion), within its stated rounding.

A check that fails gives the note the answer shows beside its quote ("not computed: ..."); a
figure that passes carries the names of the checks it passed (`Value.checks`). A check whose rows
the document does not have is not made, and not listed as passed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from localqa.derived.figures import FigurePlan
from localqa.derived.glossary import Glossary, Item, contains, fold, glossary
from localqa.derived.operands import Found, over_row, read_cell, row_match, statement_of
from localqa.language.statements import Scope
from localqa.question import periods
from localqa.types import Candidate, Kind, Location, Passage, Value
from localqa.values.cells import read_row
from localqa.values.choosing import Context
from localqa.values.numbers import read_number

# The parts a total holds, by glossary item key: an operand of the total and one of its parts at
# the same year must give a total at least as large as the part.
PARTS: Mapping[str, tuple[str, ...]] = {
    "current_assets": ("cash", "inventory", "accounts_receivable"),
    "total_assets": ("current_assets", "cash", "inventory", "accounts_receivable", "ppe"),
    "current_liabilities": ("accounts_payable",),
    "revenue": ("gross_profit",),
}
# The rows of the statement identities, as labels fold them.
_GROSS = ("revenue", "cogs", "gross_profit")
_TOTAL_ASSETS = re.compile(r"^total assets$")
_LIABILITIES_AND_EQUITY = re.compile(
    r"^total liabilities(?:,? [a-z' ]+)? and (?:[a-z']+ )?(?:equity|deficit|capital)$"
)
# The statements a line is compared across: a statement of equity's columns are its components,
# not years, so its "Net income" row is read at no year.
_AGREEING = ("income statement", "balance sheet", "cash flow")
# The operands checked against the registrant's statements: their own rows, and a table's under no
# statement's title; a table of another entity the question names states other amounts rightly.
_SELF = (Scope.PRIMARY, Scope.OTHER)
# How near a computed percentage must be to the one the document states, beyond the stated
# rounding: the document computes it from unrounded amounts, the figure from the rounded rows.
SLACK = Decimal("0.05")
# Passages of the document read for a stated figure, per name of the metric.
MAX_STATED = 40


@dataclass(frozen=True)
class Checked:
    """The checks a figure passed, or the note of the one it failed (then no figure is shown)."""

    passed: tuple[str, ...] = ()
    failed: str | None = None


def check(
    figure: FigurePlan,
    found: Sequence[Found],
    value: Value,
    candidates: Mapping[str, Sequence[Candidate]],
    context: Context,
    terms: Glossary | None = None,
) -> Checked:
    """Every check `value`, the figure computed from the operands `found`, allows, in the module's
    order; the first that fails decides. `candidates` are the rows retrieved for each line item
    (by item key), where the same line in another statement is looked for."""
    terms = terms or glossary()
    passed: list[str] = []
    for made in (
        one_scale(found, terms),
        one_statement(found),
        parts_within_totals(found),
        gross_profit(found, context, terms),
        balance(found, context),
        agreement(found, candidates, context),
        stated(figure, found, value, context),
    ):
        if made.failed:
            return made
        passed += made.passed
    return Checked(tuple(passed))


# --- each check --------------------------------------------------------------------------------------


def one_scale(found: Sequence[Found], terms: Glossary | None = None) -> Checked:
    """The operands of money (the glossary's line items: a count of shares a model names may be
    stated in thousands beside amounts in millions, rightly) in one scale: passed when every one
    states its scale and all agree; failed when two state different ones; not made when one
    states none."""
    items = (terms or glossary()).items
    money = [f for f in found if f.value.unit in (None, "USD") and f.need.item.key in items]
    scales = {f.value.scale for f in money}
    if len(money) < 2 or None in scales:
        return Checked()
    if len(scales) == 1:
        return Checked((f"one scale ({next(iter(scales))})",))
    first, other = money[0], next(f for f in money if f.value.scale != money[0].value.scale)
    return Checked(
        failed=f"not computed: {_said(first)} is in {first.value.scale} and {_said(other)} in "
        f"{other.value.scale}: the operands are not in one scale"
    )


def one_statement(found: Sequence[Found]) -> Checked:
    """The operands of one kind of statement at one year read from one statement (its title):
    passed with the statements named when all are the registrant's, failed when two are
    different recognised statements of that kind (a consolidated statement's net sales and a
    guarantor group's cost of sales). A table under no consolidated title (`Scope.OTHER`, as
    management's discussion repeats a statement's lines) may stand beside a statement: `agreement`
    holds it to the statement's row."""
    tables = [
        f
        for f in found
        if f.candidate.location.kind is Kind.TABLE
        and f.statement.kind
        and f.statement.scope is not Scope.OTHER
    ]
    groups: dict[tuple[str | None, int], list[Found]] = {}
    for f in tables:
        groups.setdefault((f.statement.kind, f.need.year), []).append(f)
    for group in groups.values():
        first = group[0]
        other = next((f for f in group if _title(f) != _title(first)), None)
        if other is not None:
            return Checked(
                failed=f"not computed: {_said(first)} in the {first.statement.describe()} and "
                f"{_said(other)} in the {other.statement.describe()} are not from one statement"
            )
    if tables and all(f.statement.primary for f in found if f.candidate.location.kind is Kind.TABLE):
        named = sorted({f.statement.describe() for f in tables})
        return Checked((f"operands from the {', '.join(named)}",))
    return Checked()


def parts_within_totals(found: Sequence[Found]) -> Checked:
    """A total at least each part among the operands at the same year (`PARTS`), by size."""
    by_key = {(f.need.item.key, f.need.year, f.need.quarter): f for f in found}
    made = []
    for (key, year, quarter), total in by_key.items():
        for part_key in PARTS.get(key, ()):
            part = by_key.get((part_key, year, quarter))
            if part is None or total.value.number is None or part.value.number is None:
                continue
            if abs(total.value.number) < abs(part.value.number):
                return Checked(
                    failed=f"not computed: {_said(total)} is less than {_said(part)}, a part of it"
                )
            made.append(f"{_name(total)} ≥ {_name(part)}")
    return Checked((f"a total is at least each part ({'; '.join(made)})",) if made else ())


def gross_profit(found: Sequence[Found], context: Context, terms: Glossary) -> Checked:
    """Gross profit = net sales - cost of sales, by size, in the table two of the three operands
    come from at one column, where that table has the third row."""
    made = []
    for f in found:
        if f.need.item.key not in _GROSS or f.candidate.location.kind is not Kind.TABLE:
            continue
        rows = _table(context, f.candidate.location)
        amounts = {
            key: _amount_at(rows, terms.items[key], f.value.column) for key in _GROSS if key in terms.items
        }
        revenue, cogs, gross = (amounts.get(k) for k in _GROSS)
        if revenue is None or cogs is None or gross is None:
            continue
        label = f"gross profit = net sales - cost of sales ({f.value.column})"
        if label in made:
            continue
        if abs(abs(revenue) - abs(cogs) - abs(gross)) > Decimal("1.5"):
            return Checked(
                failed=f"not computed: in the {f.statement.describe()} at {f.value.column}, net sales "
                f"{revenue:,} less cost of sales {abs(cogs):,} is not its gross profit {gross:,}"
            )
        made.append(label)
    return Checked(tuple(made))


def balance(found: Sequence[Found], context: Context) -> Checked:
    """Total assets = total liabilities and equity at an operand's column, in the balance sheet
    it comes from (its page and the next: a balance sheet often runs over two)."""
    for f in found:
        at = f.candidate.location
        if f.statement.kind != "balance sheet" or at.kind is not Kind.TABLE or at.page is None:
            continue
        rows = [
            p
            for page in (at.page, at.page + 1)
            for p in context.passages(at.model_copy(update={"page": page}))
            if p.kind is Kind.TABLE
        ]
        assets = _amount_labelled(rows, _TOTAL_ASSETS, f.value.column)
        both = _amount_labelled(rows, _LIABILITIES_AND_EQUITY, f.value.column)
        if assets is None or both is None:
            continue
        if abs(assets - both) > 1:
            return Checked(
                failed=f"not computed: in the {f.statement.describe()} at {f.value.column}, total assets "
                f"{assets:,} are not total liabilities and equity {both:,}"
            )
        return Checked((f"total assets = total liabilities and equity ({f.value.column}: {assets:,})",))
    return Checked()


def agreement(
    found: Sequence[Found], candidates: Mapping[str, Sequence[Candidate]], context: Context
) -> Checked:
    """Each operand of the registrant's statements against the row of the same label in another of
    its statements at the same year (net income in the statement of cash flows): they must agree;
    an operand of a table under no consolidated title, against the registrant's statement's row of
    that label, likewise (a balance only against the balance sheet's)."""
    made = []
    for f in found:
        if f.candidate.location.kind is not Kind.TABLE or f.statement.scope not in _SELF:
            continue
        label = fold(read_row(f.quote).label or "")
        for candidate in candidates.get(f.need.item.key, ()):
            at = candidate.location
            if at.kind is not Kind.TABLE or (at.source, at.page, at.table) == _table_of(f.candidate.location):
                continue
            other_label = read_row(candidate.text).label or ""
            if fold(other_label) != label or row_match(f.need.item, other_label) is None:
                continue
            statement = statement_of(at, over_row(candidate.text, other_label), context)
            if not statement.primary or statement.kind not in _AGREEING:
                continue
            if f.statement.primary and statement.kind == f.statement.kind:
                continue  # the statement itself, or its comprehensive-income twin
            if f.need.item.instant and statement.kind != "balance sheet":
                continue  # a balance is stated on the balance sheet; elsewhere its change
            other = read_cell(f.need, candidate, context)
            if other is None or other.value.number is None or f.value.number is None:
                continue
            if other.value.scale != f.value.scale:
                continue
            if abs(abs(other.value.number) - abs(f.value.number)) > 1:
                return Checked(
                    failed=f"not computed: {_said(f)} in the {f.statement.describe()} disagrees with "
                    f"the {statement.describe()}'s {other.value.text}"
                )
            made.append(f"{_name(f)} agrees with the {statement.describe()}")
            break
    return Checked(tuple(dict.fromkeys(made)))


def stated(figure: FigurePlan, found: Sequence[Found], value: Value, context: Context) -> Checked:
    """A percentage figure against the one the document states for its year ("gross margin was
    19.6 %", "a gross margin of 19.6 % in fiscal 2022"): it must agree within the stated
    rounding. Only the metric as the question names it, never an adjusted one's sentence."""
    if figure.unit != "%" or not found or figure.origin not in ("glossary", "shape"):
        return Checked()
    year = max(f.need.year for f in found)
    source = found[0].candidate.location.source
    if value.number is None:
        return Checked()
    computed = Decimal(str(value.number))
    for passage in _passages_naming(context, source, figure.what):
        said = _stated_percent(passage.text, figure.what, year)
        if said is None:
            continue
        places = max(0, -int(said.as_tuple().exponent))
        if abs(computed - said) > Decimal(5).scaleb(-places - 1) + SLACK:
            return Checked(
                failed=f"not computed: {figure.what} {computed:.2f} % disagrees with the {said} % "
                f"the document states for {year} (page {passage.page})"
            )
        return Checked(
            (f"agrees with the {figure.what} of {said} % the document states (page {passage.page})",)
        )
    return Checked()


# --- reading -----------------------------------------------------------------------------------------


def _title(found: Found) -> tuple[Scope, str]:
    return found.statement.scope, fold(found.statement.title)


def _table_of(location: Location) -> tuple[str, int | None, int | None]:
    return location.source, location.page, location.table


def _table(context: Context, location: Location) -> Sequence[Passage]:
    return [p for p in context.passages(location) if p.kind is Kind.TABLE and p.table == location.table]


def _amount_at(rows: Iterable[Passage], item: Item, column: str | None) -> Decimal | None:
    """The amount at `column` of the row that names `item` best (starting with one of its labels
    at least), or None."""
    ranked = []
    for row in rows:
        read = read_row(row.text)
        match = row_match(item, read.label or "")
        if match is not None and match[0] >= 2:
            ranked.append((-match[0], match[1], read))
    for _, _, read in sorted(ranked, key=lambda r: (r[0], r[1])):
        cell = next((c for c in read.cells if c.header == column), None)
        number = read_number(cell.text) if cell else None
        if number is not None:
            return number.number
    return None


def _amount_labelled(rows: Iterable[Passage], label: re.Pattern[str], column: str | None) -> Decimal | None:
    for row in rows:
        read = read_row(row.text)
        if label.search(fold(read.label or "")):
            cell = next((c for c in read.cells if c.header == column), None)
            number = read_number(cell.text) if cell else None
            if number is not None:
                return number.number
    return None


# A sentence's statement of the metric's figure: the metric's name, then within a few words "was",
# "of", "to" or "at" and the percentage.
_ADJUSTED = re.compile(r"\badjusted\b|\bnon[- ]?gaap\b|\bexcluding\b|\bsegment\b|\bcore\b", re.I)


def _stated_percent(text: str, what: str, year: int) -> Decimal | None:
    from localqa.answers.sentences import units

    for sentence in units(text, Kind.PROSE):
        if _ADJUSTED.search(sentence) or not contains(fold(sentence), what):
            continue
        if year not in {m.year for m in periods.mentions(sentence)}:
            continue
        found = re.search(
            rf"{re.escape(what)}\s+(?:\w+\s+){{0,3}}?(?:was|of|to|at|is)\s+(?:approximately\s+)?"
            r"(?P<number>\d{1,3}(?:\.\d+)?)\s?(?:%|percent)",
            sentence,
            re.IGNORECASE,
        )
        if found:
            return Decimal(found["number"])
    return None


def _passages_naming(context: Context, source: str, what: str) -> list[Passage]:
    seen: dict[tuple[int | None, int | None], Passage] = {}
    for written in dict.fromkeys((what, what.capitalize(), what.lower())):
        for passage in context.passages_containing(source, written, MAX_STATED):
            if passage.kind is not Kind.TABLE:
                seen.setdefault((passage.page, passage.paragraph), passage)
    return list(seen.values())


def _name(found: Found) -> str:
    return found.need.item.names[0] if found.need.item.names else found.need.item.key


def _said(found: Found) -> str:
    """An operand as a note names it: its row's label as the filing writes it ("Cost of sales
    (319)"), else the line item's name."""
    label = read_row(found.quote).label if found.candidate.location.kind is Kind.TABLE else None
    return f"{label or _name(found)} {found.value.text}"
