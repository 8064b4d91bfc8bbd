"""What an evaluation run records: its configuration, every case with its candidates and scores,
and the totals. Typed end to end; JSON only when a run is saved or printed."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Literal

from pydantic import Field, computed_field

from localqa.evaluate.score import AnswerScore, Attribution, Leak, RetrievalScore, ValueBlame
from localqa.indexing.files import write_atomic
from localqa.settings import AnswerSettings, RetrievalSettings
from localqa.types import Candidate, Frozen, Kind, Location


class RunConfig(Frozen):
    suite: str
    index: str | None = None  # what was scored (`localqa.store.describe`: never a password)
    retrieval: RetrievalSettings
    answering: AnswerSettings  # recorded whole, also when no model answered (nothing hides a change)
    model: dict[str, str] | None  # {"backend", "name"}; None: retrieval only
    answers_file: str | None = None
    prompt_hash: str
    corpus_digest: str
    localqa_version: str
    created: str


class PartRecord(Frozen):
    question: str
    note: str | None = None  # why the part got no candidates
    # The documents it was searched mainly in because it names them (`localqa.question.routing`), and why.
    routed_to: list[str] = Field(default_factory=list)
    route: str | None = None


class RecordedCandidate(Frozen):
    """A candidate as a run keeps it: the part it answers (1-based), rank, score, location, text.
    Flat, with the location fields every JSON output shares."""

    part: int
    rank: int
    score: float
    source: str
    page: int | None
    kind: Kind
    section: str | None
    table: int | None
    row: int | None
    paragraph: int | None
    effective: str | None
    text: str

    @classmethod
    def of(cls, part: int, candidate: Candidate) -> RecordedCandidate:
        return cls.model_validate({"part": part, **candidate.as_json()})

    @property
    def location(self) -> Location:
        return Location.model_validate(self.model_dump(exclude={"part", "rank", "score", "text"}))


class CaseRecord(Frozen):
    id: str
    question: str
    category: str | None
    as_of: str
    role: str
    tenant: str
    expect: list[str]
    documents: list[str] = Field(default_factory=list)  # the documents the case was asked within
    abstain_at: Literal["retrieval", "answer"] = "retrieval"
    known_failure: str | None
    parts: list[PartRecord]
    candidates: list[RecordedCandidate]  # in rank order per part
    retrieval: RetrievalScore
    answer: AnswerScore | None
    leaks: list[Leak]
    attribution: Attribution | None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """The one pass rule: no failure attributed and no leak."""
        return self.attribution is None and not self.leaks


class Metric(Frozen):
    numerator: float
    denominator: int
    value: float | None

    @classmethod
    def of(cls, numerator: float, denominator: int) -> Metric:
        value = round(numerator / denominator, 4) if denominator else None
        return cls(numerator=round(numerator, 4), denominator=denominator, value=value)


class Spread(Frozen):
    """Seconds over many parts: the median and the 90th percentile a reader waits (nearest rank)."""

    parts: int
    median: float
    p90: float

    @classmethod
    def of(cls, seconds: list[float]) -> Spread | None:
        if not seconds:
            return None
        ordered = sorted(seconds)
        return cls(
            parts=len(ordered),
            median=round(statistics.median(ordered), 3),
            p90=round(ordered[math.ceil(0.9 * len(ordered)) - 1], 3),
        )


class Totals(Frozen):
    """Every metric with its numerator and denominator, plus the gate counts. The answer metrics
    are None when the run scored retrieval only."""

    cases: int
    passed: int
    hit_at_1: Metric
    recall: Metric
    mrr: Metric
    precision: Metric
    no_answer: Metric
    leaks: int  # a gate
    attribution: dict[Attribution, int]
    verified: Metric | None = None  # of the quotes shown: whole sentences (rows) of the cited passage
    citation_correct: Metric | None = None
    contains_phrase: Metric | None = None
    abstention: Metric | None = None
    unverified_shown: int | None = None  # a gate
    model_errors: int | None = None
    # Of the cases whose model chose a sentence, those where it was not the scorer's first.
    overrode: Metric | None = None
    # Of the answerable cases that state a value: the answer's value meets it; why the others miss.
    value_correct: Metric | None = None
    value_blame: dict[ValueBlame, int] | None = None
    # Answerable cases whose answer cites elsewhere than retrieval's right first passage (losses),
    # and the reverse (rescues): the answer stage should never lose more than it rescues.
    losses: int | None = None
    rescues: int | None = None
    unchecked_figures: int | None = None  # a gate: values shown that are not checked figures
    unchecked_items: int | None = None  # a gate: list items shown that are not verified quotes
    # The answer stage's own failures (`answer_stage_failures`): cases the suite does not mark as
    # known failures where a no-answer case was shown a quote as its answer or a stated value is
    # wrong; a gate where the suite holds its answers (`Run.holds_answers`).
    answer_stage: int | None = None
    # Every answered part (`AnswerScore.parts`): the seconds it took, and of the parts whose quote
    # was chosen, those a language model chose rather than the evidence (`localqa.answers.deciding`;
    # None when no language model answered).
    part_seconds: Spread | None = None
    model_decided: Metric | None = None

    @classmethod
    def of(cls, records: list[CaseRecord]) -> Totals:
        answerable = [r for r in records if r.retrieval.recall is not None]
        unanswerable = [r for r in records if r.retrieval.recall is None]
        with_candidates = [r for r in answerable if r.retrieval.precision is not None]
        totals = cls(
            cases=len(records),
            passed=sum(r.passed for r in records),
            hit_at_1=Metric.of(sum(bool(r.retrieval.hit_at_1) for r in answerable), len(answerable)),
            recall=Metric.of(sum(r.retrieval.recall or 0.0 for r in answerable), len(answerable)),
            mrr=Metric.of(sum(r.retrieval.reciprocal_rank or 0.0 for r in answerable), len(answerable)),
            precision=Metric.of(
                sum(r.retrieval.precision or 0.0 for r in with_candidates), len(with_candidates)
            ),
            no_answer=Metric.of(
                sum(bool(r.retrieval.no_answer_correct) for r in unanswerable), len(unanswerable)
            ),
            leaks=sum(len(r.leaks) for r in records),
            attribution={kind: sum(r.attribution == kind for r in records) for kind in ATTRIBUTIONS},
        )
        answered = [r.answer for r in records if r.answer is not None]
        if not answered:
            return totals
        shown = [a for a in answered if a.quote is not None]
        positive = [r.answer for r in answerable if r.answer is not None]
        phrased = [a for a in positive if a.contains_phrase is not None]
        negative = [r.answer for r in unanswerable if r.answer is not None]
        chose = [a.selection for a in answered if a.selection is not None and a.selection.choice is not None]
        valued = [a for a in positive if a.value_correct is not None]
        parts = [p for a in answered for p in a.parts]
        decided = [p for p in parts if p.decided_by is not None]
        return totals.model_copy(
            update={
                "verified": Metric.of(sum(a.verified for a in shown), len(shown)),
                "citation_correct": Metric.of(sum(bool(a.citation_correct) for a in positive), len(positive)),
                "contains_phrase": Metric.of(sum(bool(a.contains_phrase) for a in phrased), len(phrased)),
                "abstention": Metric.of(sum(bool(a.abstention_correct) for a in negative), len(negative)),
                "unverified_shown": sum(a.shown_unverified for a in answered),
                "model_errors": sum(a.model_failed for a in answered),
                "overrode": Metric.of(sum(bool(c.overrode) for c in chose), len(chose)),
                "value_correct": Metric.of(sum(bool(a.value_correct) for a in valued), len(valued)),
                "value_blame": {cause: sum(a.value_blame == cause for a in valued) for cause in VALUE_BLAMES},
                "losses": sum(a.first_passage == "loss" for a in positive),
                "rescues": sum(a.first_passage == "rescue" for a in positive),
                "unchecked_figures": sum(a.unchecked_figure is not None for a in answered),
                "unchecked_items": sum(a.unchecked_item is not None for a in answered),
                "answer_stage": len(answer_stage_failures(records)),
                "part_seconds": Spread.of([p.seconds for p in parts]),
                "model_decided": (
                    Metric.of(sum(p.decided_by == "model" for p in decided), len(decided))
                    if decided
                    else None
                ),
            }
        )


def answer_stage_failures(records: list[CaseRecord]) -> list[str]:
    """The answer stage's gate, one line per failing case: a no-answer case shown a quote as its
    answer (a refusal carrying its closest passage shows none), or a case whose stated value the
    answer's value does not meet. A case the suite marks as a known failure (`known_failure`, with
    its reason) is reported as such and not counted: the gate holds the stage to the rest."""
    failures = []
    for record in records:
        answer = record.answer
        if answer is None or record.known_failure:
            continue
        if not record.expect and answer.quote is not None:
            failures.append(f"{record.id}: a no-answer case shown a quote as its answer")
        elif answer.value_correct is False:
            failures.append(f"{record.id}: the value is wrong ({answer.value_why or 'no value'})")
    return failures


ATTRIBUTIONS: tuple[Attribution, ...] = ("retrieval", "generation", "contract")
VALUE_BLAMES: tuple[ValueBlame, ...] = ("retrieval", "quote", "span", "arithmetic")


class Run(Frozen):
    config: RunConfig
    totals: Totals
    cases: list[CaseRecord]
    # What indexing the suite's own documents reported.
    index_problems: list[str] = Field(default_factory=list)
    # The suite holds the answer stage to itself (`Suite.hold_answers`): its failures are a gate.
    holds_answers: bool = False

    @property
    def gates_failed(self) -> list[str]:
        failed = []
        if self.totals.leaks:
            failed.append(f"{self.totals.leaks} tenant/access leak(s)")
        if self.totals.unverified_shown:
            failed.append(f"{self.totals.unverified_shown} unverified quote(s) shown")
        if self.totals.unchecked_figures:
            failed.append(f"{self.totals.unchecked_figures} unchecked figure(s) shown")
        if self.totals.unchecked_items:
            failed.append(f"{self.totals.unchecked_items} unchecked list item(s) shown")
        if self.holds_answers:
            failed += [f"answer stage: {line}" for line in answer_stage_failures(self.cases)]
        return failed

    @property
    def model_errors(self) -> int:
        return self.totals.model_errors or 0

    def save(self, path: Path) -> None:
        write_atomic(path, json.dumps(self.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n")
