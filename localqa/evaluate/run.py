"""Running a suite: retrieval for every case, answers when a model (or recorded answers) is
given, scores, totals with their denominators, and the gates."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from importlib.metadata import version
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from localqa.answers.prompts import prompt_hash
from localqa.errors import SuiteError
from localqa.evaluate.records import CaseRecord, PartRecord, RecordedCandidate, Run, RunConfig, Totals
from localqa.evaluate.score import (
    AnswerScore,
    Leak,
    PartTiming,
    RetrievalScore,
    TextAt,
    answer_leak,
    attribute,
    cited_by_figure,
    find_leaks,
    first_passage,
    forbidden,
    score_answer,
    score_retrieval,
    score_value,
    unchecked_figure,
    unchecked_item,
)
from localqa.evaluate.suite import Case, Suite
from localqa.indexing.index import Progress, refresh_index
from localqa.library import Library
from localqa.models.base import AnswerModel
from localqa.question.scope import UnknownDocumentError
from localqa.retrieval.eligibility import eligible
from localqa.retrieval.retrieve import resolve
from localqa.settings import RetrievalSettings, Settings
from localqa.store import Db, describe, postgres_url, temporary
from localqa.store.base import Store
from localqa.types import MAX_NUMBER, Caller, Candidate, Document, Kind, Location, PartResult, Value


class RecordedCitation(BaseModel):
    """Where a recorded answer says its quote comes from; fields it omits are null."""

    model_config = ConfigDict(extra="ignore")

    source: str
    kind: Kind
    page: int | None = Field(default=None, ge=1, le=MAX_NUMBER)
    section: str | None = None
    table: int | None = Field(default=None, ge=1, le=MAX_NUMBER)
    row: int | None = Field(default=None, ge=1, le=MAX_NUMBER)
    paragraph: int | None = Field(default=None, ge=1, le=MAX_NUMBER)
    effective: date | None = None

    def location(self) -> Location:
        return Location.model_validate(self.model_dump())


class RecordedAnswer(BaseModel):
    """One line of an --answers file: what another system answered for a case."""

    model_config = ConfigDict(extra="ignore")

    id: str
    quote: str | None = None
    citation: RecordedCitation | None = None
    value: Value | None = None


def load_answers(path: Path) -> dict[str, RecordedAnswer]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise SuiteError(
            f"{path}: not UTF-8 text ({error.reason} at byte {error.start}); save it as UTF-8"
        ) from None
    answers = {}
    for number, line in enumerate(text.splitlines(), start=1):
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


def embeds_for(settings: RetrievalSettings) -> bool | None:
    """Whether a suite's own index needs embeddings: the default (auto) follows the same rule as
    `localqa index`."""
    return None if settings.retriever == "auto" else settings.retriever != "lexical"


class SuiteIndex(NamedTuple):
    db: Db
    shown: str  # what a run records: the index without credentials, or which temporary one
    problems: list[str]


@contextmanager
def suite_index(suite: Suite, db: Db | None, embed: bool | None = None) -> Iterator[SuiteIndex]:
    """The index a suite is scored against, and the problems indexing reported: its own docs/
    indexed into a temporary index (with embeddings when `embed`; beside `db` when that is a
    PostgreSQL index: a schema of its own there), or else `db` (the user's index). Problems do
    not stop the run: a suite may well test that a mislabelled document is invisible, which is
    exactly what indexing makes of it."""
    if suite.docs is None:
        if db is None:
            raise SuiteError(f"{suite.path} has no docs/ folder; pass --db with the index to evaluate")
        yield SuiteIndex(db, describe(db), [])
        return
    url = None if db is None else postgres_url(db)
    shown = "a temporary SQLite file" if url is None else f"a temporary schema in {describe(url)}"
    with temporary(db) as inside:
        report = refresh_index(suite.docs, inside, embed=embed)
        problems = [f"{'Warning' if p.warning else 'Error'}: {p}" for p in report.problems]
        yield SuiteIndex(inside, shown, problems)


def run_suite(
    suite: Suite,
    *,
    db: Db | None,
    settings: RetrievalSettings | Settings,
    model: AnswerModel | None = None,
    answers: dict[str, RecordedAnswer] | None = None,
    answers_file: str | None = None,
    progress: Progress | None = None,
) -> Run:
    """Score every case against the suite's index (see `suite_index`). Retrieval settings alone
    mean the default answering settings."""
    if isinstance(settings, RetrievalSettings):
        settings = Settings(retrieval=settings)
    with suite_index(suite, db, embed=embeds_for(settings.retrieval)) as index:
        run = _run(suite, index, settings, model, answers, answers_file, progress)
        return run.model_copy(update={"index_problems": index.problems})


def _run(
    suite: Suite,
    index: SuiteIndex,
    chosen: Settings,
    model: AnswerModel | None,
    answers: dict[str, RecordedAnswer] | None,
    answers_file: str | None,
    progress: Progress | None,
) -> Run:
    with Library(index.db, chosen) as library:
        db = library.store
        settings = resolve(db, chosen.retrieval)  # the run records the retriever that ran
        documents = db.documents()
        owners = {d.doc_id: d for d in documents}
        digest = db.corpus_digest()
        records = []
        for done, case in enumerate(suite.cases):
            if progress:
                progress(done, len(suite.cases), case.id)
            caller = Caller(role=case.role, tenant=case.tenant)
            parts = _search(library, suite, case, caller, settings)
            visible = {d.doc_id for d in eligible(documents, case.as_of, caller)}
            leaks = find_leaks(parts, owners, visible, caller, case.as_of)
            retrieval = score_retrieval(case, parts)
            answer = None
            if model is not None:
                # The model is shown what `ask` shows it (Settings.for_answering); retrieval is
                # scored on the k candidates above.
                answering = Settings(retrieval=settings, answering=chosen.answering).for_answering()
                answer, cited = answer_case(library, suite, case, caller, answering, model, retrieval)
                leaks += _cited_leaks(db, cited, owners, visible, caller, case.as_of)
            elif answers is not None:
                answer, cited = _grade_recorded(case, answers.get(case.id), db, parts, retrieval)
                leaks += _cited_leaks(db, cited, owners, visible, caller, case.as_of)
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
                    abstain_at=case.abstain_at,
                    known_failure=case.known_failure,
                    documents=case.documents,
                    parts=[_part_record(p) for p in parts],
                    candidates=[
                        RecordedCandidate.of(number, c)
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
        index=index.shown,
        retrieval=settings,
        answering=chosen.answering,
        model={"backend": model.backend, "name": model.name} if model else None,
        answers_file=answers_file,
        prompt_hash=prompt_hash(),
        corpus_digest=digest,
        localqa_version=version("localqa"),
        created=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    return Run(config=config, totals=Totals.of(records), cases=records, holds_answers=suite.hold_answers)


def _part_record(part: PartResult) -> PartRecord:
    if part.route is None:
        return PartRecord(question=part.question, note=part.note)
    return PartRecord(
        question=part.question, note=part.note, routed_to=list(part.route.sources), route=part.route.why
    )


def _search(
    library: Library, suite: Suite, case: Case, caller: Caller, settings: RetrievalSettings
) -> list[PartResult]:
    """The case's question searched as its caller, within the documents it names."""
    try:
        return library.search(
            case.question,
            as_of=case.as_of,
            caller=caller,
            parts=case.parts,
            settings=settings,
            documents=case.documents,
        )
    except UnknownDocumentError as error:
        raise SuiteError(f"{suite.path / 'cases.toml'}: case {case.id}: documents: {error}") from None


def answer_case(
    library: Library,
    suite: Suite,
    case: Case,
    caller: Caller,
    answering: RetrievalSettings,
    model: AnswerModel,
    retrieval: RetrievalScore,
) -> tuple[AnswerScore, list[Location]]:
    """The case searched again as `ask` searches it (`Settings.for_answering`), each part answered
    (`_answer_with_model`), and the search timed: its seconds are shared among the parts."""
    started = time.perf_counter()
    parts = _search(library, suite, case, caller, answering)
    searched = time.perf_counter() - started
    return _answer_with_model(library, case, caller, parts, model, retrieval, searched)


def _answer_with_model(
    library: Library,
    case: Case,
    caller: Caller,
    parts: list[PartResult],
    model: AnswerModel,
    retrieval: RetrievalScore,
    searched: float,
) -> tuple[AnswerScore, list[Location]]:
    """Answer each part as the case's caller; a case's answer is its first shown quote (most cases
    have one part), with its value, and set against the first passage retrieval gave that part.
    Also returns every location any part's answer cites, its figures' operands included: a
    derived figure's operands are retrieved apart from the part's candidates, so their passages,
    and the quote citing the first of them, are read from the index, and their documents checked
    against what the caller may see. `searched` is the seconds of the one search that found every
    part's candidates: each part's timing carries its share."""
    text_at = _passage_text(library.store)
    scored: tuple[AnswerScore, Value | None, PartResult] | None = None
    unchecked: str | None = None
    unlisted: str | None = None
    cited: list[Location] = []
    timings: list[PartTiming] = []
    for part in parts:
        started = time.perf_counter()
        answer = library.answer_part(part, model, as_of=case.as_of, caller=caller, documents=case.documents)
        seconds = time.perf_counter() - started + searched / len(parts)
        # Only a language model can be passed over: the extractive backend is the scorer itself.
        decided = answer.selection.decided_by if answer.selection and model.is_language_model else None
        timings.append(PartTiming(seconds=seconds, decided_by=decided))
        cited += _citations(answer.citation, answer.value)
        cited_text = _text_at(part.candidates, answer.citation)
        if cited_text is None and answer.citation is not None:
            cited_text = text_at(answer.citation)
        current = score_answer(
            case,
            answer.quote,
            answer.citation,
            cited_text,
            answer.reason,
            model_failed=answer.model_failed,
            selection=answer.selection,
        ).model_copy(
            update={
                "coverage": answer.coverage,
                "figure_note": answer.figure_note,
                "doubts": answer.closest.doubts if answer.closest else (),
            }
        )
        unchecked = unchecked or unchecked_figure(answer.value, answer.quote, text_at)
        unlisted = unlisted or unchecked_item(answer.value, text_at)
        if scored is None or (current.quote is not None and scored[0].quote is None):
            scored = (current, answer.value, part)
        if current.shown_unverified:
            scored = (current, answer.value, part)
            break
    assert scored is not None
    current, value, part = scored
    current = current.model_copy(
        update={"unchecked_figure": unchecked, "unchecked_item": unlisted, "parts": tuple(timings)}
    )
    return _judged(case, current, value, part, retrieval, text_at), cited


def _citations(citation: Location | None, value: Value | None) -> list[Location]:
    """Every location an answer cites: its quote's, its figure's operands', its list's items'."""
    operands = value.operands if value is not None and value.operands is not None else ()
    compared = value.comparison.figures if value is not None and value.comparison else ()
    operands = (*operands, *(o for figure in compared for o in figure.operands or ()))
    items = value.items if value is not None and value.items is not None else ()
    listed = (*(o.citation for o in operands), *(i.citation for i in items))
    return [c for c in (citation, *listed) if c is not None]


def _cited_leaks(
    store: Store,
    cited: list[Location],
    owners: dict[str, Document],
    visible: set[str],
    caller: Caller,
    as_of: date,
) -> list[Leak]:
    """A leak for each document an answer cites that the caller may not see on `as_of`."""
    leaks: list[Leak] = []
    for doc_id in dict.fromkeys(found.doc_id for c in cited if (found := store.passage_at(c)) is not None):
        owner = owners.get(doc_id)
        if doc_id not in visible or owner is None or forbidden(owner, caller, as_of):
            leaks += answer_leak(owner, doc_id, caller, as_of)
    return leaks


def _judged(
    case: Case,
    answer: AnswerScore,
    value: Value | None,
    part: PartResult | None,
    retrieval: RetrievalScore,
    text_at: TextAt,
) -> AnswerScore:
    """The answer's citations judged (`cited_by_figure`), its value scored, and the answer set
    against the part's first passage."""
    answer = cited_by_figure(case, answer, value, text_at)
    first = part.candidates[0] if part is not None and part.candidates else None
    answer = answer.model_copy(update={"first_passage": first_passage(case, first, answer)})
    return score_value(case, answer, value, retrieval.recall, text_at)


def _passage_text(store: Store) -> TextAt:
    def text_at(location: Location) -> str | None:
        found = store.passage_at(location)
        return None if found is None else found.text

    return text_at


def _text_at(candidates: tuple[Candidate, ...], location: Location | None) -> str | None:
    return next((c.text for c in candidates if c.location == location), None)


def _grade_recorded(
    case: Case, recorded: RecordedAnswer | None, db: Store, parts: list[PartResult], retrieval: RetrievalScore
) -> tuple[AnswerScore, list[Location]]:
    """Grade another system's answer against the passage it cites; also return the locations it
    cites (its quote's and its figure's operands'), so that citing a document the caller may not
    see is counted as a leak. Its first passage is that of the question's first part."""
    first_part = parts[0] if parts else None
    text_at = _passage_text(db)
    if recorded is None:
        missing = score_answer(case, None, None, None, reason="no recorded answer for this case")
        return _judged(case, missing, None, first_part, retrieval, text_at), []
    location = recorded.citation.location() if recorded.citation is not None else None
    found = db.passage_at(location) if location is not None else None
    graded = score_answer(case, recorded.quote, location, None if found is None else found.text)
    unchecked = unchecked_figure(recorded.value, recorded.quote, text_at)
    unlisted = unchecked_item(recorded.value, text_at)
    graded = graded.model_copy(update={"unchecked_figure": unchecked, "unchecked_item": unlisted})
    judged = _judged(case, graded, recorded.value, first_part, retrieval, text_at)
    return judged, _citations(location, recorded.value)
