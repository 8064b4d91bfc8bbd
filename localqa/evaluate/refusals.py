"""Each kind of refusal as a classifier: how many answerable and how many unanswerable cases it
flagged, and its precision beside the share of unanswerable cases (what a refusal at random would
score). A kind flags a case when it refused the case's quote or, where it only doubts
(`Answer.doubts`), named a doubt beside it: either way the kind judged the quote not to answer, and
its precision says whether that judgement carries information. Serves `localqa eval` (suites with
unanswerable cases) and `benchmarks.coverage --runs` (the PDF dev sets' saved runs).

A refusal's kind is read from what the answer stage recorded (its coverage verdict, its doubts),
else from its reason (`REASON_KINDS`: saved runs of older code record only the reason).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from localqa.language.text import IDENTIFIER
from localqa.types import REFUSAL_KINDS, TERM_REFUSALS, Coverage, Doubt, RefusalKind

# The reasons the answer stage writes, by kind (first match wins). A term's reason names the term
# only: its kind is read from the coverage verdict, else from the term's shape (`term_kind`).
REASON_KINDS: tuple[tuple[RefusalKind | None, re.Pattern[str]], ...] = (
    ("retrieval", re.compile(r"^no eligible passage matches")),
    ("confidence", re.compile(r"^the model was unsure which passage answers")),
    ("planner", re.compile(r"^no figure computed")),
    ("word", re.compile(r"^no passage mentions \".*\" or anything close to it in meaning")),
    (None, re.compile(r"^the (?:quoted passage|evidence) never mentions \"(?P<term>.*)\"")),
)

_YEAR_TERM = re.compile(r"(?:19|20)\d\d")
_NUMBER_TERM = re.compile(r"[$€£¥]?\s?[\d.,]+\s?(?:%|percent|per cent)?[a-z ]*", re.IGNORECASE)


def term_kind(term: str) -> RefusalKind:
    """The kind of a term named in a reason, by its shape: an identifier ("EQ-314"), a year, a
    number or amount, else a name."""
    if IDENTIFIER.fullmatch(term):
        return "identifier"
    if _YEAR_TERM.fullmatch(term):
        return "year"
    if _NUMBER_TERM.fullmatch(term) and any(c.isdigit() for c in term):
        return "number"
    return "name"


def reason_kind(reason: str | None, coverage: Coverage | None = None) -> RefusalKind:
    """The kind of a refusal: its coverage verdict's missing term when it has one, else by its
    reason (`REASON_KINDS`); "other" for any other reason (the model named no passage, ...)."""
    if coverage is not None and coverage.missing is not None:
        return TERM_REFUSALS[coverage.missing.kind]
    for kind, pattern in REASON_KINDS:
        found = pattern.search(reason or "")
        if found:
            return kind or term_kind(found.group("term"))
    return "other"


@dataclass(frozen=True)
class Judged:
    """One case as a classifier reads it: answerable or not, refused (no quote shown) or shown,
    the refusal's kind, and the kinds that doubted a shown quote."""

    answerable: bool
    refused: RefusalKind | None
    doubted: frozenset[RefusalKind] = frozenset()


def judged(
    answerable: bool,
    quote: str | None,
    reason: str | None,
    coverage: Coverage | None,
    doubts: Iterable[Doubt] = (),
) -> Judged:
    if quote is not None:
        return Judged(answerable, None, frozenset(d.kind for d in doubts))
    return Judged(answerable, reason_kind(reason, coverage))


@dataclass(frozen=True)
class KindRow:
    """One kind's counts: cases it refused, and cases it doubted (shown with its doubt), by
    answerability."""

    kind: RefusalKind
    refused_answerable: int
    refused_unanswerable: int
    doubted_answerable: int
    doubted_unanswerable: int

    @property
    def flagged(self) -> int:
        refused = self.refused_answerable + self.refused_unanswerable
        return refused + self.doubted_answerable + self.doubted_unanswerable

    @property
    def precision(self) -> float | None:
        """Of the cases it flagged (refused or doubted), the unanswerable share."""
        right = self.refused_unanswerable + self.doubted_unanswerable
        return right / self.flagged if self.flagged else None


@dataclass(frozen=True)
class Table:
    answerable: int
    unanswerable: int
    rows: tuple[KindRow, ...]

    @property
    def base_rate(self) -> float | None:
        """The share of unanswerable cases: a kind that refuses at random scores this precision."""
        total = self.answerable + self.unanswerable
        return self.unanswerable / total if total else None


def table(cases: Sequence[Judged]) -> Table:
    rows = []
    for kind in REFUSAL_KINDS:
        counts = [
            sum(c.refused == kind and c.answerable for c in cases),
            sum(c.refused == kind and not c.answerable for c in cases),
            sum(kind in c.doubted and c.answerable for c in cases),
            sum(kind in c.doubted and not c.answerable for c in cases),
        ]
        if any(counts):
            rows.append(KindRow(kind, *counts))
    answerable = sum(c.answerable for c in cases)
    return Table(answerable, len(cases) - answerable, tuple(rows))


def lines(found: Table) -> list[str]:
    """The table as text: per kind, answerable and unanswerable cases refused, then doubted (shown
    with the doubt), and its precision beside the share of unanswerable cases."""
    base = found.base_rate
    head = (
        f"Refusals and doubts by kind ({found.answerable} answerable, {found.unanswerable} unanswerable;"
        f" chance precision {base:.2f})"
        if base is not None
        else "Refusals and doubts by kind"
    )
    out = [head, f"  {'kind':<12}{'refused ans/unans':>19}{'doubted ans/unans':>19}{'precision':>11}"]
    for row in found.rows:
        precision = f"{row.precision:.2f}" if row.precision is not None else "-"
        out.append(
            f"  {row.kind:<12}{f'{row.refused_answerable}/{row.refused_unanswerable}':>19}"
            f"{f'{row.doubted_answerable}/{row.doubted_unanswerable}':>19}{precision:>11}"
        )
    return out
