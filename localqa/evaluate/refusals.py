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

from localqa.answers.coverage import refuses
from localqa.language.text import IDENTIFIER
from localqa.settings import AnswerSettings
from localqa.types import REFUSAL_KINDS, TERM_REFUSALS, Coverage, Doubt, RefusalKind, TermCheck

# The reasons the answer stage writes, by kind (first match wins). A term's reason names the term
# only: its kind is read from the coverage verdict, else from the term's shape (`term_kind`).
REASON_KINDS: tuple[tuple[RefusalKind | None, re.Pattern[str]], ...] = (
    ("retrieval", re.compile(r"^no eligible passage matches")),
    ("confidence", re.compile(r"^the model was unsure which passage answers")),
    ("planner", re.compile(r"^no figure computed")),
    ("word", re.compile(r"^no passage mentions \".*\" or anything close to it in meaning")),
    ("visual", re.compile(r"^localqa reads the documents' text, and the (?:quoted passage|evidence) never")),
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
    """The kind of a refusal: by its reason (`REASON_KINDS`), the term it names read from the
    coverage verdict where it holds that term (the term that refused, not the verdict's first
    missing one: "Disneyland" refuses, a figure before it only doubts), else by the term's shape;
    "other" for any other reason (the model named no passage, ...)."""
    for kind, pattern in REASON_KINDS:
        found = pattern.search(reason or "")
        if not found:
            continue
        if kind is not None:
            return kind
        named = found.group("term")
        checked = next((t for t in coverage.terms if t.term == named), None) if coverage else None
        return TERM_REFUSALS[checked.kind] if checked else term_kind(named)
    if coverage is not None and coverage.missing is not None:
        return TERM_REFUSALS[coverage.missing.kind]
    return "other"


@dataclass(frozen=True)
class Judged:
    """One case as a classifier reads it: answerable or not, refused (no quote shown) or shown,
    the refusal's kind, and the kinds that doubted its quote: withheld as the refusal's closest
    passage (`closest`), or, in runs recorded before round 6, shown with the doubt beside it."""

    answerable: bool
    refused: RefusalKind | None
    doubted: frozenset[RefusalKind] = frozenset()
    closest: bool = False


def judged(
    answerable: bool,
    quote: str | None,
    reason: str | None,
    coverage: Coverage | None,
    doubts: Iterable[Doubt] = (),
) -> Judged:
    kinds = frozenset(d.kind for d in doubts)
    if quote is not None:  # shown: with its doubts beside it, in a run recorded before round 6
        return Judged(answerable, None, kinds)
    # Refused; with doubts, it carries its closest passage, and the kinds that doubted withheld it.
    return Judged(answerable, reason_kind(reason, coverage), kinds, closest=bool(kinds))


@dataclass(frozen=True)
class KindRow:
    """One kind's counts: cases it refused outright, and cases it doubted (refused with the quote
    as the closest passage; before round 6, shown with the doubt), by answerability."""

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
            sum(c.refused == kind and not c.closest and c.answerable for c in cases),
            sum(c.refused == kind and not c.closest and not c.answerable for c in cases),
            sum(kind in c.doubted and c.answerable for c in cases),
            sum(kind in c.doubted and not c.answerable for c in cases),
        ]
        if any(counts):
            rows.append(KindRow(kind, *counts))
    answerable = sum(c.answerable for c in cases)
    return Table(answerable, len(cases) - answerable, tuple(rows))


def lines(found: Table) -> list[str]:
    """The table as text: per kind, answerable and unanswerable cases refused outright, then those
    it doubted (refused with the closest passage), and its precision beside the share of
    unanswerable cases."""
    base = found.base_rate
    head = (
        f"Refusals by kind ({found.answerable} answerable, {found.unanswerable} unanswerable;"
        f" chance precision {base:.2f})"
        if base is not None
        else "Refusals by kind"
    )
    out = [head, f"  {'kind':<12}{'refused ans/unans':>19}{'closest ans/unans':>19}{'precision':>11}"]
    for row in found.rows:
        precision = f"{row.precision:.2f}" if row.precision is not None else "-"
        out.append(
            f"  {row.kind:<12}{f'{row.refused_answerable}/{row.refused_unanswerable}':>19}"
            f"{f'{row.doubted_answerable}/{row.doubted_unanswerable}':>19}{precision:>11}"
        )
    return out


# ---------------------------------------------------------------------------------------------
# Choosing which kinds refuse: on one split, reported on another (docs/measured.md#doubts)

# The kinds of coverage term a setting may make refuse (`AnswerSettings.refusals`); the others
# (retrieval, the figure planner, the model's confidence) are read as they were recorded.
TERM_KINDS_CHOSEN: tuple[RefusalKind, ...] = ("identifier", "name", "year", "number", "word", "visual")
# A kind refuses on a split only when its refusals there are right clearly more often than a
# refusal at random: its precision at least the split's share of unanswerable cases plus this...
CHOICE_MARGIN = 0.2
# ...over at least this many cases it would refuse (fewer say nothing either way).
CHOICE_SUPPORT = 3
# The floors of meaning the word kind is tried at (`AnswerSettings.coverage_word_floor`).
WORD_FLOORS = (0.15, 0.2, 0.25, 0.3)


@dataclass(frozen=True)
class Recorded:
    """One case of a saved run as a choice of refusal settings reads it: answerable or not, a
    refusal no coverage setting changes (retrieval's, the planner's, "other"; None when shown or
    refused by a coverage term), and the coverage verdict of its quote."""

    answerable: bool
    fixed: RefusalKind | None
    terms: tuple[TermCheck, ...] = ()


def recorded(answerable: bool, quote: str | None, reason: str | None, verdict: Coverage | None) -> Recorded:
    terms = verdict.terms if verdict is not None else ()
    if quote is not None:
        return Recorded(answerable, None, terms)
    kind = reason_kind(reason, verdict)
    return Recorded(answerable, None if kind in TERM_KINDS_CHOSEN and terms else kind, terms)


def plain(case: Recorded, settings: AnswerSettings) -> frozenset[RefusalKind]:
    """The kinds of the case's missing terms that the evidence plainly lacks (`coverage.refuses`
    with every kind refusing): what would refuse it, were the kind to refuse."""
    every = settings.model_copy(update={"refusals": REFUSAL_KINDS})
    return frozenset(TERM_REFUSALS[t.kind] for t in case.terms if t.missing and refuses(t, every))


@dataclass(frozen=True)
class Score:
    """The cases a kind plainly flags, by answerability, on one split, and the split's chance."""

    kind: RefusalKind
    answerable: int
    unanswerable: int
    chance: float

    @property
    def precision(self) -> float | None:
        total = self.answerable + self.unanswerable
        return self.unanswerable / total if total else None

    @property
    def clear(self) -> bool:
        """Clearly better than chance (`CHOICE_MARGIN`, `CHOICE_SUPPORT`)."""
        total = self.answerable + self.unanswerable
        return total >= CHOICE_SUPPORT and self.unanswerable / total >= self.chance + CHOICE_MARGIN


def score(cases: Sequence[Recorded], kind: RefusalKind, settings: AnswerSettings) -> Score:
    flagged = [c for c in cases if kind in plain(c, settings)]
    chance = sum(not c.answerable for c in cases) / len(cases) if cases else 0.0
    return Score(kind, sum(c.answerable for c in flagged), sum(not c.answerable for c in flagged), chance)


@dataclass(frozen=True)
class Choice:
    """The refusal settings a split chose: the kinds that refuse and the word kind's floor."""

    refusals: tuple[RefusalKind, ...]
    word_floor: float

    def settings(self, base: AnswerSettings) -> AnswerSettings:
        return base.model_copy(update={"refusals": self.refusals, "coverage_word_floor": self.word_floor})


def choose(cases: Sequence[Recorded], base: AnswerSettings) -> Choice:
    """The settings `cases` choose: each kind of `TERM_KINDS_CHOSEN` refuses when it is clearly
    better than chance on them (`Score.clear`); the word kind at the floor of `WORD_FLOORS` where
    it is clear and refuses the most unanswerable cases (the base floor when none is clear)."""
    kinds: list[RefusalKind] = [k for k in TERM_KINDS_CHOSEN if k != "word" and score(cases, k, base).clear]
    floors = [
        (score(cases, "word", base.model_copy(update={"coverage_word_floor": f})), f) for f in WORD_FLOORS
    ]
    clear = [(s.unanswerable, -s.answerable, f) for s, f in floors if s.clear]
    floor = max(clear)[2] if clear else base.coverage_word_floor
    if clear:
        kinds.append("word")
    return Choice(tuple(k for k in TERM_KINDS_CHOSEN if k in kinds), floor)


@dataclass(frozen=True)
class Outcome:
    """What a choice of settings does on a split: answerable and unanswerable cases refused."""

    answerable: int
    answerable_refused: int
    unanswerable: int
    unanswerable_refused: int


def outcome(cases: Sequence[Recorded], settings: AnswerSettings) -> Outcome:
    def refused(case: Recorded) -> bool:
        return case.fixed is not None or bool(plain(case, settings) & set(settings.refusals))

    answerable = [c for c in cases if c.answerable]
    unanswerable = [c for c in cases if not c.answerable]
    return Outcome(
        len(answerable), sum(map(refused, answerable)), len(unanswerable), sum(map(refused, unanswerable))
    )


def by_meaning(cases: Sequence[Recorded]) -> list[Recorded]:
    """`cases` as the word rule read them before retrieval looked terms up in the collection: each
    word's `collection` dropped, so a missing word refuses by its closeness in meaning alone
    (`coverage_word_floor`). What the floors of `choose` are measured on in a run that looked up."""
    return [
        Recorded(
            c.answerable,
            c.fixed,
            tuple(t.model_copy(update={"collection": None}) if t.kind == "word" else t for t in c.terms),
        )
        for c in cases
    ]


def retrieval_missed(cases: Sequence[Recorded]) -> tuple[int, int]:
    """Answerable and unanswerable cases with a name no candidate mentions, written as it is (no
    near spelling), that some eligible document holds (`TermCheck.collection`): the signal that
    a refusal of the name would be retrieval's miss. Measured to decide whether such names refuse
    (they do not: `coverage.refuses`)."""

    def missed(case: Recorded) -> bool:
        return any(
            t.missing and t.kind == "name" and not t.elsewhere and t.closest is None and t.collection
            for t in case.terms
        )

    flagged = [c for c in cases if missed(c)]
    return sum(c.answerable for c in flagged), sum(not c.answerable for c in flagged)


def default_refusals(
    choices: Sequence[Choice], cases: Sequence[Sequence[Recorded]], base: AnswerSettings
) -> tuple[RefusalKind, ...]:
    """The default kinds that refuse: those every split chose (each was then clearly better than
    chance where the other split's choice was fit), and those no case of any split exercises that
    refuse in `base` (nothing measured either way: "identifier", which retrieval's identifier channel
    already answers with its own abstention)."""
    unmeasured = [
        k
        for k in TERM_KINDS_CHOSEN
        if k in base.refusals and not any(k in plain(c, base) for split in cases for c in split)
    ]
    chosen = [k for k in TERM_KINDS_CHOSEN if choices and all(k in c.refusals for c in choices)]
    return tuple(k for k in TERM_KINDS_CHOSEN if k in chosen or k in unmeasured)
