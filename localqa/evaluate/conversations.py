"""Conversation suites: each case a list of turns; each turn with its expected rewrite
(`understood_as`) and/or its expected evidence, scored turn by turn.

A folder with `conversations.toml` (see evals/conversations/README.md). Each turn is rewritten as
`localqa chat` rewrites it (`localqa.conversation`), from the turns before it as its caller saw
them, then scored as a case of a suite is scored (`localqa.evaluate.run`): retrieval, the answer
and its citation, leaks. On top of the case gates, a rewrite holding a name, year, identifier or
figure from nowhere is a gate (must be 0).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from localqa.conversation import Rewrite, Turn, carried_turns, from_nowhere, rewrite
from localqa.errors import SuiteError
from localqa.evaluate.records import CaseRecord, Metric, RecordedCandidate, Totals
from localqa.evaluate.run import _cited_leaks, _part_record, _search, answer_case
from localqa.evaluate.score import attribute, find_leaks, score_retrieval
from localqa.evaluate.suite import Case, Expect, Suite
from localqa.indexing.index import refresh_index
from localqa.language.text import squash
from localqa.library import Library
from localqa.models.base import AnswerModel
from localqa.retrieval.eligibility import eligible
from localqa.settings import Settings
from localqa.store import Db, describe, temporary
from localqa.tomlfile import TomlFileError, read_toml
from localqa.types import DEFAULT_ROLE, DEFAULT_TENANT, Caller, Document

FILE = "conversations.toml"


class TurnCase(BaseModel):
    """One turn: what is typed, and what it must be understood as and/or answered from. A turn
    may change the date, role or tenant of the conversation (each defaults to the
    conversation's)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question: str
    understood_as: str | None = None
    expect: list[Expect] | None = None
    value: str | float | list[str | float] | None = None
    phrase: str | None = None
    as_of: date | None = None
    role: str | None = None
    tenant: str | None = None
    abstain_at: str = "retrieval"
    note: str | None = None


class ConversationCase(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    as_of: date
    role: str = DEFAULT_ROLE
    tenant: str = DEFAULT_TENANT
    documents: list[str] = Field(default_factory=list)
    category: str | None = None
    note: str | None = None
    turn: list[TurnCase] = Field(min_length=1)


class ConversationSuite(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: Path
    docs: Path | None  # indexed into a temporary index; None: the user's --db
    conversations: list[ConversationCase]


def is_conversation_suite(path: Path) -> bool:
    return (path / FILE).is_file()


def load_conversations(path: Path) -> ConversationSuite:
    """Read `path/conversations.toml`; every problem names the conversation and field."""
    file = path / FILE
    try:
        data: dict[str, Any] = read_toml(file)
    except TomlFileError as error:
        raise SuiteError(f"{file}: {error}") from None
    docs = data.get("docs")
    if docs is not None and not isinstance(docs, str):
        raise SuiteError(f"{file}: docs must be a folder path, relative to the suite")
    raw = data.get("conversation", [])
    if not isinstance(raw, list) or not raw:
        raise SuiteError(f"{file}: no [[conversation]] entries")
    conversations = []
    for number, entry in enumerate(raw, start=1):
        try:
            conversations.append(ConversationCase.model_validate(entry))
        except ValidationError as error:
            first = error.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            name = entry.get("id", f"#{number}") if isinstance(entry, dict) else f"#{number}"
            raise SuiteError(f"{file}: conversation {name}: {field}: {first['msg']}") from None
    ids = [c.id for c in conversations]
    if len(set(ids)) != len(ids):
        raise SuiteError(f"{file}: conversation ids must be unique")
    folder = (path / docs).resolve() if docs else None
    if folder is not None and not folder.is_dir():
        raise SuiteError(f"{file}: docs folder {docs} does not exist")
    return ConversationSuite(path=path, docs=folder, conversations=conversations)


class TurnRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    conversation: str
    turn: int
    question: str
    understood_as: str
    how: str
    expected_rewrite: str | None
    rewrite_correct: bool | None  # None: the turn states no expected rewrite
    from_nowhere: list[str]  # a gate: must be empty
    model_refused: str | None
    case: CaseRecord | None  # None: the turn states no expected evidence


class ConversationTotals(BaseModel):
    model_config = ConfigDict(frozen=True)

    conversations: int
    turns: int
    rewrites_correct: Metric
    from_nowhere: int  # a gate
    cases: Totals | None


class ConversationRun(BaseModel):
    model_config = ConfigDict(frozen=True)

    suite: str
    index: str
    model: str | None
    totals: ConversationTotals
    turns: list[TurnRecord]


def same_question(a: str, b: str) -> bool:
    return squash(a).rstrip(" ?").casefold() == squash(b).rstrip(" ?").casefold()


@contextmanager
def _index(suite: ConversationSuite, db: Db | None) -> Iterator[tuple[Db, str]]:
    if suite.docs is None:
        if db is None:
            raise SuiteError(f"{suite.path}: no docs; pass --db with the index to evaluate")
        yield db, describe(db)
        return
    with temporary(db) as inside:
        refresh_index(suite.docs, inside, embed=False)
        yield inside, "a temporary SQLite file"


def run_conversations(
    suite: ConversationSuite, *, db: Db | None, settings: Settings, model: AnswerModel | None
) -> ConversationRun:
    """Every conversation turn by turn: rewritten, then scored as a case (answers when `model`)."""
    records: list[TurnRecord] = []
    with _index(suite, db) as (index, shown), Library(index, settings) as library:
        store = library.store
        documents = store.documents()
        owners = {d.doc_id: d for d in documents}
        for conversation in suite.conversations:
            turns: list[Turn] = []
            for number, turn in enumerate(conversation.turn, start=1):
                caller = Caller(
                    role=turn.role or conversation.role, tenant=turn.tenant or conversation.tenant
                )
                made = rewrite(turn.question, turns, caller, model, settings.answering)
                case = _case(conversation, number, turn, made, caller)
                record, shown_turn = _score_turn(library, suite, case, caller, made, model, owners, documents)
                carried = carried_turns(turns, caller)
                turns.append(shown_turn)
                records.append(
                    TurnRecord(
                        conversation=conversation.id,
                        turn=number,
                        question=turn.question,
                        understood_as=made.standalone,
                        how=made.how,
                        expected_rewrite=turn.understood_as,
                        rewrite_correct=None
                        if turn.understood_as is None
                        else same_question(made.standalone, turn.understood_as),
                        from_nowhere=from_nowhere(made.standalone, turn.question, carried),
                        model_refused=made.refused,
                        case=record if turn.expect is not None else None,
                    )
                )
    cases = [r.case for r in records if r.case is not None]
    checked = [r for r in records if r.rewrite_correct is not None]
    totals = ConversationTotals(
        conversations=len(suite.conversations),
        turns=len(records),
        rewrites_correct=Metric.of(sum(bool(r.rewrite_correct) for r in checked), len(checked)),
        from_nowhere=sum(bool(r.from_nowhere) for r in records),
        cases=Totals.of(cases) if cases else None,
    )
    return ConversationRun(
        suite=str(suite.path),
        index=shown,
        model=model.label if model else None,
        totals=totals,
        turns=records,
    )


def _case(conversation: ConversationCase, number: int, turn: TurnCase, made: Rewrite, caller: Caller) -> Case:
    return Case.model_validate(
        {
            "id": f"{conversation.id}#{number}",
            "as_of": turn.as_of or conversation.as_of,
            "question": made.standalone,
            "documents": conversation.documents,
            "role": caller.role,
            "tenant": caller.tenant,
            "expect": turn.expect or [],
            "phrase": turn.phrase,
            "value": turn.value if turn.expect else None,
            "category": conversation.category,
            "abstain_at": turn.abstain_at,
        }
    )


def _score_turn(
    library: Library,
    suite: ConversationSuite,
    case: Case,
    caller: Caller,
    made: Rewrite,
    model: AnswerModel | None,
    owners: dict[str, Document],
    documents: Sequence[Document],
) -> tuple[CaseRecord, Turn]:
    """The turn scored as a case, and the turn as its caller saw it (for the next rewrite)."""
    as_a_suite = Suite(path=suite.path, cases=[case])
    settings = library.settings
    parts = _search(library, as_a_suite, case, caller, settings.retrieval)
    visible = {d.doc_id for d in eligible(documents, case.as_of, caller)}
    leaks = find_leaks(parts, owners, visible, caller, case.as_of)
    retrieval = score_retrieval(case, parts)
    answer = None
    shown: tuple[str, ...] = ()
    value = None
    if model is not None:
        answer, cited = answer_case(
            library, as_a_suite, case, caller, settings.for_answering(), model, retrieval
        )
        leaks += _cited_leaks(library.store, cited, owners, visible, caller, case.as_of)
        if answer.verified and answer.quote and answer.citation:
            shown = (answer.quote, answer.citation.source)
            value = answer.value.text if answer.value is not None else None
    record = CaseRecord(
        id=case.id,
        question=case.question,
        category=case.category,
        as_of=case.as_of.isoformat(),
        role=case.role,
        tenant=case.tenant,
        expect=[e.describe() for e in case.expect],
        abstain_at=case.abstain_at,
        known_failure=None,
        documents=case.documents,
        parts=[_part_record(p) for p in parts],
        candidates=[RecordedCandidate.of(n, c) for n, p in enumerate(parts, start=1) for c in p.candidates],
        retrieval=retrieval,
        answer=answer,
        leaks=leaks,
        attribution=attribute(case, retrieval, answer, any(p.candidates for p in parts)),
    )
    return record, Turn(made.question, made.standalone, caller, shown, value)


def summary(run: ConversationRun) -> list[str]:
    """What `localqa eval` prints for a conversation suite: each turn, then the totals and gates."""
    lines = [
        f"Conversation suite {run.suite} · index {run.index} · model {run.model or 'none (retrieval only)'}",
        "",
    ]
    for record in run.turns:
        mark = {True: "ok  ", False: "FAIL", None: "    "}[record.rewrite_correct]
        case = record.case
        passed = "" if case is None else (" · answer ok" if case.passed else " · answer FAIL")
        lines.append(f"{mark} {record.conversation}#{record.turn}: {record.question}")
        if record.understood_as != record.question:
            lines.append(f"       Understood as ({record.how}): {record.understood_as}{passed}")
        elif passed:
            lines.append(f"       (asked as it stands){passed}")
        if record.rewrite_correct is False:
            lines.append(f"       expected: {record.expected_rewrite}")
        if record.from_nowhere:
            lines.append(f"       words from nowhere: {', '.join(record.from_nowhere)}")
    totals = run.totals
    lines += [
        "",
        f"Conversations: {totals.conversations}, turns: {totals.turns}",
        f"Rewrites correct:     {_metric(totals.rewrites_correct)}",
        f"Words from nowhere:   {totals.from_nowhere} (gate: must be 0)",
    ]
    if totals.cases is not None:
        cases = totals.cases
        lines += [
            f"Turns answered right: {cases.passed}/{cases.cases}",
            f"Recall:               {_metric(cases.recall)}",
        ]
        if cases.citation_correct is not None:
            lines.append(f"Citation correct:     {_metric(cases.citation_correct)}")
        if cases.abstention is not None:
            lines.append(f"Abstention correct:   {_metric(cases.abstention)}")
        lines.append(f"Tenant/access leaks:  {cases.leaks} (gate: must be 0)")
        if cases.unverified_shown is not None:
            lines.append(f"Unverified shown:     {cases.unverified_shown} (gate: must be 0)")
    return lines


def _metric(metric: Metric) -> str:
    return f"{metric.numerator:g}/{metric.denominator}" + (
        f" ({metric.value:.0%})" if metric.value is not None else ""
    )


def gates_failed(run: ConversationRun) -> bool:
    cases = run.totals.cases
    return bool(
        run.totals.from_nowhere
        or (cases is not None and (cases.leaks or cases.unverified_shown or cases.unchecked_figures))
    )
