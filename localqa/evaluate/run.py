"""Running a suite: retrieval for every case, answers when a model (or recorded answers) is
given, scores, totals with their denominators, and the gates."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, computed_field

from localqa.answer import answer_part
from localqa.eligibility import eligible
from localqa.errors import SuiteError
from localqa.evaluate.score import (
    AnswerScore,
    Attribution,
    Leak,
    RetrievalScore,
    answer_leak,
    attribute,
    find_leaks,
    forbidden,
    score_answer,
    score_retrieval,
)
from localqa.evaluate.suite import Case, Suite
from localqa.index import Progress, open_index, refresh_index
from localqa.models.base import AnswerModel
from localqa.prompts import prompt_hash
from localqa.retrieve import RetrievalSettings, load_documents, search
from localqa.types import Caller, Candidate, Frozen, Kind, Location, PartResult


class RunConfig(Frozen):
    suite: str
    retrieval: RetrievalSettings
    model: dict[str, str] | None  # {"backend", "name"}; None: retrieval only
    answers_file: str | None = None
    prompt_hash: str
    corpus_digest: str
    localqa_version: str
    created: str


class PartRecord(Frozen):
    question: str
    note: str | None = None  # why the part got no candidates


class CaseRecord(Frozen):
    id: str
    question: str
    category: str | None
    as_of: str
    role: str
    tenant: str
    expect: list[str]
    known_failure: str | None
    parts: list[PartRecord]
    candidates: list[dict[str, Any]]  # in rank order per part; "part" is the 1-based part number
    retrieval: RetrievalScore
    answer: AnswerScore | None
    leaks: list[Leak]
    attribution: Attribution | None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """The one pass rule: no failure attributed and no leak."""
        return self.attribution is None and not self.leaks


class Run(Frozen):
    config: RunConfig
    totals: dict[str, Any]
    cases: list[CaseRecord]

    @property
    def gates_failed(self) -> list[str]:
        failed = []
        if self.totals["leaks"]:
            failed.append(f"{self.totals['leaks']} tenant/access leak(s)")
        if self.totals.get("unverified_shown"):
            failed.append(f"{self.totals['unverified_shown']} unverified quote(s) shown")
        return failed

    def save(self, path: Path) -> None:
        path.write_text(
            json.dumps(self.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )


class RecordedCitation(BaseModel):
    """Where a recorded answer says its quote comes from; fields it omits are null."""

    model_config = ConfigDict(extra="ignore")

    source: str
    kind: Kind
    page: int | None = None
    section: str | None = None
    table: int | None = None
    row: int | None = None
    paragraph: int | None = None
    effective: date | None = None

    def location(self) -> Location:
        return Location.model_validate(self.model_dump())


class RecordedAnswer(BaseModel):
    """One line of an --answers file: what another system answered for a case."""

    model_config = ConfigDict(extra="ignore")

    id: str
    quote: str | None = None
    citation: RecordedCitation | None = None


def load_answers(path: Path) -> dict[str, RecordedAnswer]:
    answers = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            recorded = RecordedAnswer.model_validate_json(line)
        except ValidationError as error:
            first = error.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "line"
            raise SuiteError(
                f"{path}, line {number}: not a recorded answer ({field}: {first['msg']}); "
                'expected {"id": ..., "quote": ..., "citation": {"source": ..., "kind": ..., ...}}'
            ) from None
        answers[recorded.id] = recorded
    return answers


@contextmanager
def suite_index(suite: Suite, db: Path | None, embed: bool = False) -> Iterator[Path]:
    """The index a suite is scored against: its own docs/ indexed into a temporary index (with
    embeddings when `embed`), or else `db` (the user's index)."""
    if suite.docs is None:
        if db is None:
            raise SuiteError(f"{suite.path} has no docs/ folder; pass --db with the index to evaluate")
        yield db
        return
    with tempfile.TemporaryDirectory(prefix="localqa-eval-") as folder:
        temporary = Path(folder) / "suite.sqlite3"
        report = refresh_index(suite.docs, temporary, embed=embed)
        if report.failed:
            problems = "; ".join(str(p) for p in report.problems if not p.warning)
            raise SuiteError(f"{suite.docs}: the suite's documents cannot be indexed: {problems}")
        yield temporary


def run_suite(
    suite: Suite,
    *,
    db: Path | None,
    settings: RetrievalSettings,
    model: AnswerModel | None = None,
    answers: dict[str, RecordedAnswer] | None = None,
    answers_file: str | None = None,
    progress: Progress | None = None,
) -> Run:
    """Score every case against the suite's index (see `suite_index`)."""
    with suite_index(suite, db, embed=settings.retriever != "lexical") as path:
        return _run(suite, path, settings, model, answers, answers_file, progress)


def _run(
    suite: Suite,
    db_path: Path,
    settings: RetrievalSettings,
    model: AnswerModel | None,
    answers: dict[str, RecordedAnswer] | None,
    answers_file: str | None,
    progress: Progress | None,
) -> Run:
    with open_index(db_path) as db:
        documents = load_documents(db)
        owners = {d.doc_id: d for d in documents}
        digest = db.execute("SELECT value FROM meta WHERE key = 'corpus_digest'").fetchone()[0]
        records = []
        for done, case in enumerate(suite.cases):
            if progress:
                progress(done, len(suite.cases), case.id)
            caller = Caller(role=case.role, tenant=case.tenant)
            parts = search(
                db, case.question, as_of=case.as_of, caller=caller, parts=case.parts, settings=settings
            )
            visible = {d.doc_id for d in eligible(documents, case.as_of, caller)}
            leaks = find_leaks(parts, owners, visible, caller, case.as_of)
            retrieval = score_retrieval(case, parts)
            answer = None
            if model is not None:
                answer = _answer_with_model(case, parts, model)
            elif answers is not None:
                answer, cited_doc = _grade_recorded(case, answers.get(case.id), db)
                owner = owners.get(cited_doc) if cited_doc else None
                if cited_doc is not None and (
                    cited_doc not in visible or owner is None or forbidden(owner, caller, case.as_of)
                ):
                    leaks += answer_leak(owner, cited_doc, caller, case.as_of)
            shown = any(p.candidates for p in parts)
            records.append(
                CaseRecord(
                    id=case.id,
                    question=case.question,
                    category=case.category,
                    as_of=case.as_of.isoformat(),
                    role=case.role,
                    tenant=case.tenant,
                    expect=[e.describe() for e in case.expect],
                    known_failure=case.known_failure,
                    parts=[PartRecord(question=p.question, note=p.note) for p in parts],
                    candidates=[
                        {"part": number, **c.as_json()}
                        for number, p in enumerate(parts, start=1)
                        for c in p.candidates
                    ],
                    retrieval=retrieval,
                    answer=answer,
                    leaks=leaks,
                    attribution=attribute(case, retrieval, answer, shown),
                )
            )
    config = RunConfig(
        suite=str(suite.path),
        retrieval=settings,
        model={"backend": model.backend, "name": model.name} if model else None,
        answers_file=answers_file,
        prompt_hash=prompt_hash(),
        corpus_digest=digest,
        localqa_version=version("localqa"),
        created=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    return Run(config=config, totals=totals(records), cases=records)


def _answer_with_model(case: Case, parts: list[PartResult], model: AnswerModel) -> AnswerScore:
    """Answer each part; a case's answer is its first shown quote (most cases have one part)."""
    scored: AnswerScore | None = None
    for part in parts:
        answer = answer_part(part.question, part.candidates, model)
        cited_text = _text_at(part.candidates, answer.citation)
        current = score_answer(
            case, answer.quote, answer.citation, cited_text, answer.reason, model_failed=answer.model_failed
        )
        if scored is None or (current.quote is not None and scored.quote is None):
            scored = current
        if current.shown_unverified:
            return current
    assert scored is not None
    return scored


def _text_at(candidates: tuple[Candidate, ...], location: Location | None) -> str | None:
    return next((c.text for c in candidates if c.location == location), None)


def _grade_recorded(
    case: Case, recorded: RecordedAnswer | None, db: sqlite3.Connection
) -> tuple[AnswerScore, str | None]:
    """Grade another system's answer against the passage it cites; also return that passage's
    document id, so that citing a document the caller may not see is counted as a leak."""
    if recorded is None:
        return score_answer(case, None, None, None, reason="no recorded answer for this case"), None
    if recorded.citation is None:
        return score_answer(case, recorded.quote, None, None), None
    location = recorded.citation.location()
    found = cited_passage(db, location)
    doc_id, text = found if found else (None, None)
    return score_answer(case, recorded.quote, location, text), doc_id


def cited_passage(db: sqlite3.Connection, location: Location) -> tuple[str, str] | None:
    """(document id, text) of the passage at a location, or None if the index has none there."""
    row = db.execute(
        "SELECT doc_id, text FROM passages WHERE source = ? AND page IS ? AND kind = ? AND table_no IS ? "
        "AND row_no IS ? AND paragraph IS ?",
        (
            location.source,
            location.page,
            location.kind.value,
            location.table,
            location.row,
            location.paragraph,
        ),
    ).fetchone()
    return (row[0], row[1]) if row else None


def totals(records: list[CaseRecord]) -> dict[str, Any]:
    """Every metric with its numerator and denominator (and value), plus the gate counts."""
    answerable = [r for r in records if r.retrieval.recall is not None]
    unanswerable = [r for r in records if r.retrieval.recall is None]
    with_candidates = [r for r in answerable if r.retrieval.precision is not None]
    result: dict[str, Any] = {
        "cases": len(records),
        "passed": sum(r.passed for r in records),
        "hit_at_1": _metric(sum(bool(r.retrieval.hit_at_1) for r in answerable), len(answerable)),
        "recall": _metric(sum(r.retrieval.recall or 0.0 for r in answerable), len(answerable)),
        "mrr": _metric(sum(r.retrieval.reciprocal_rank or 0.0 for r in answerable), len(answerable)),
        "precision": _metric(
            sum(r.retrieval.precision or 0.0 for r in with_candidates), len(with_candidates)
        ),
        "no_answer": _metric(
            sum(bool(r.retrieval.no_answer_correct) for r in unanswerable), len(unanswerable)
        ),
        "leaks": sum(len(r.leaks) for r in records),
        "attribution": {
            kind: sum(r.attribution == kind for r in records)
            for kind in ("retrieval", "generation", "contract")
        },
    }
    answered = [r.answer for r in records if r.answer is not None]
    if answered:
        shown = [a for a in answered if a.quote is not None]
        positive = [r.answer for r in answerable if r.answer is not None]
        phrased = [a for a in positive if a.contains_phrase is not None]
        negative = [r.answer for r in unanswerable if r.answer is not None]
        result |= {
            "verified": _metric(sum(a.verified for a in shown), len(shown)),
            "citation_correct": _metric(sum(bool(a.citation_correct) for a in positive), len(positive)),
            "contains_phrase": _metric(sum(bool(a.contains_phrase) for a in phrased), len(phrased)),
            "abstention": _metric(sum(bool(a.abstention_correct) for a in negative), len(negative)),
            "unverified_shown": sum(a.shown_unverified for a in answered),
            "model_errors": sum(a.model_failed for a in answered),
        }
    return result


def _metric(numerator: float, denominator: int) -> dict[str, Any]:
    value = round(numerator / denominator, 4) if denominator else None
    return {"numerator": round(numerator, 4), "denominator": denominator, "value": value}
