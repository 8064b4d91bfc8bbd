"""When the evidence decides a part, so that no model is asked (docs/answers.md#when-the-evidence-decides).

A language model earns its seconds on close calls: between sentences that score alike, on prose
questions that ask for no value, on which span of prose answers. Where the evidence has already
decided, the scorer's first unit is quoted and no model is called. Each rule serves one kind of
question:

- `IDENTIFIER_ROW` ("What is the loan limit for EQ-314?"): the part names an identifier, every
  candidate carries it, and exactly one table row of them does, the scorer's first, which gives a
  value at the column the part asks about. The identifier singles out the row; no judgement is
  left.
- `VALUE_MARGIN` ("How many days does a standard loan last?"): the part asks for a value of a kind
  (`question.asked.wanted`: an amount, a percentage, a duration, a time, a place, who), the scorer's first
  unit holds one, and it leads the next unit that can answer by at least `decide_margin` of its
  own score (`AnswerSettings.decide_margin`: 0, chosen on MMLongBench-dev, docs/measured.md#answers).
- A figure computed from cited operands (`localqa.derived.figures`, `localqa.derived.deriving`)
  does not need the model for the part's own quote either; `localqa.library` answers such a part
  with the scorer's first, derives the figure, and asks the model only when no figure was computed (`FIGURE`).

Every decision is still verified by the one rule (`answering.quote_check`), judged for coverage
and shown with the value it gives, like any model's choice; `Selection.decided_by` records who
decided. `AnswerSettings.always_ask_model` turns the rules off (evaluation of the model itself).
"""

from __future__ import annotations

from collections.abc import Sequence

from localqa.derived import figures
from localqa.language.text import identifiers, squash
from localqa.question.asked import wanted
from localqa.settings import AnswerSettings, RetrievalSettings
from localqa.types import Answer, Candidate, Kind, RankedUnit
from localqa.values.choosing import Context, value_of
from localqa.values.spans import choose_span

IDENTIFIER_ROW = "the identifier's own table row"
# The scorer's first by `decide_margin` (0 by default: first among the units that can answer, not
# "clearly" first, which the label said while the margin was being chosen).
VALUE_MARGIN = "a value of the asked kind, the scorer's first"
FIGURE = "a figure computed from cited operands"

# The extractive baseline's bar for a first unit tied to the question (its lexical share, else a
# semantic neighbour): a unit below it is never decided for.
_NEIGHBOUR = RetrievalSettings().neighbour


def decides(
    question: str,
    candidates: Sequence[Candidate],
    units: Sequence[RankedUnit],
    settings: AnswerSettings,
    context: Context | None = None,
) -> str | None:
    """The rule by which the evidence decides this part (its scorer's first unit is the answer),
    or None when the model is to choose. `units` are the scorer's ranking, best first."""
    if settings.always_ask_model or not units:
        return None
    first = units[0]
    if first.demoted is not None or not _tied(first):
        return None
    if _identifier_row(question, candidates, units, context):
        return IDENTIFIER_ROW
    if _clear_value(question, units, settings, context):
        return VALUE_MARGIN
    return None


def _tied(unit: RankedUnit) -> bool:
    """Whether anything ties the unit to the question: a shared term, or closeness in meaning."""
    return unit.lexical > 0 or (unit.semantic or 0.0) >= _NEIGHBOUR


def _identifier_row(
    question: str,
    candidates: Sequence[Candidate],
    units: Sequence[RankedUnit],
    context: Context | None,
) -> bool:
    codes = identifiers(question)
    if not codes:
        return False
    if not all(_carries(f"{c.location.section or ''} {c.text}", codes) for c in candidates):
        return False
    rows = [u for u in units if u.location.kind is Kind.TABLE and _carries(u.text, codes)]
    if len(rows) != 1 or rows[0] is not units[0]:
        return False
    first = units[0]
    return value_of(question, first.text, first.location, context) is not None


def _carries(text: str, codes: Sequence[str]) -> bool:
    found = set(identifiers(squash(text)))
    return all(code in found for code in codes)


def _clear_value(
    question: str, units: Sequence[RankedUnit], settings: AnswerSettings, context: Context | None
) -> bool:
    first = units[0]
    if first.location.kind is Kind.TABLE:
        # A row gives the cell at the column the part asks about (none when it names no column).
        if value_of(question, first.text, first.location, context) is None:
            return False
    elif choose_span(question, first.text, wanted(question)) is None:
        return False  # no span of the asked kind (a part that asks for no kind has none)
    rivals = [u for u in units[1:] if u.demoted is None]
    if not rivals:
        return True
    return first.score - rivals[0].score >= settings.decide_margin * first.score


def figure_first(question: str, is_language_model: bool, settings: AnswerSettings) -> bool:
    """Whether to derive the figure the part asks for before asking a model for its quote: when it
    asks for one `localqa.derived.figures` plans, a computed figure replaces the quote anyway."""
    return is_language_model and not settings.always_ask_model and figures.plan(question) is not None


def computed(derived: Answer, quoted: Answer) -> bool:
    """Whether `derived` (`localqa.derived.deriving.derive` of the part's `quoted` answer) is a verified
    figure read or computed from line items rather than the quote itself: then that quote, and
    the model's choice of it, did not matter."""
    return derived is not quoted and derived.verified and derived.value is not None
