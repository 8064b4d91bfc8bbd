"""What the CLI's `--json` and `localqa serve`'s API both print: one place for each shape, and
for the contract's date format, so that the two can never drift apart."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING, Any

from localqa.question.periods import describe
from localqa.types import Answer, Caller, PartResult, Period

if TYPE_CHECKING:
    from localqa.indexing.index import RefreshReport
    from localqa.library import ListedDocument
    from localqa.store.base import IndexStatus


def parse_as_of(value: str | None) -> date:
    """An as-of date: YYYY-MM-DD, default today. ValueError with the reason otherwise."""
    if value is None:
        return date.today()
    # fromisoformat alone would also take 20261114 and week dates; the contract is YYYY-MM-DD.
    try:
        if len(value) != 10 or value[4] != "-" or value[7] != "-":
            raise ValueError(value)
        return date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a date; write it as YYYY-MM-DD") from None


def search_json(
    results: Sequence[PartResult], as_of: date, caller: Caller, documents: Sequence[str] = ()
) -> dict[str, Any]:
    """`localqa search --json` and POST /api/search. `documents`: the names the search was
    narrowed to (`--doc`); each part's `route` says which documents it was searched mainly in
    because it names them, and why."""
    return {
        "as_of": as_of.isoformat(),
        "role": caller.role,
        "tenant": caller.tenant,
        "retriever": results[0].retriever if results else None,
        "documents": list(documents),
        "parts": [
            {
                "question": r.question,
                "route": r.route.as_json() if r.route else None,
                "reading": r.reading.as_json() if r.reading else None,
                "candidates": [c.as_json() for c in r.candidates],
                "note": r.note,
            }
            for r in results
        ],
    }


def ask_json(
    results: Sequence[PartResult],
    answers: Sequence[Answer],
    as_of: date,
    caller: Caller,
    model: tuple[str, str],
    documents: Sequence[str] = (),
) -> dict[str, Any]:
    """`localqa ask --json` and POST /api/ask: the search shape, each part with its answer, and
    the model as (backend, name)."""
    payload = search_json(results, as_of, caller, documents)
    for part, answer in zip(payload["parts"], answers, strict=True):
        part["answer"] = answer.as_json()
    payload["model"] = {"backend": model[0], "name": model[1]}
    return payload


def timing_json(answer: Answer) -> dict[str, Any] | None:
    """`ask --json --verbose`: what a part's model call cost (None: no model call), and the
    sentence scorer's seconds."""
    if answer.call is None:
        return None
    scorer = answer.selection.seconds if answer.selection else None
    return {**answer.call.model_dump(), "scorer_seconds": scorer}


def document_json(row: ListedDocument) -> dict[str, Any]:
    """One document as GET /api/documents lists it: only what the caller may see."""
    d = row.document
    return {
        "source": d.source,
        "title": d.title,
        "series": d.series,
        "version": d.version,
        "effective": d.effective.isoformat() if d.effective else None,
        "status": d.status.value,
        "in_force": row.in_force,
        "in_force_from": row.in_force_from.isoformat() if row.in_force_from else None,
        "period": period_json(row.period, row.period_from),
    }


def period_json(period: Period | None, origin: str | None) -> dict[str, Any] | None:
    """A document's period: as written or dated, how it is shown, and where it comes from."""
    if period is None:
        return None
    return {
        "label": period.label,
        "start": period.start.isoformat() if period.start else None,
        "end": period.end.isoformat() if period.end else None,
        "shown": describe(period),
        "from": origin,
    }


def index_json(report: RefreshReport) -> dict[str, Any]:
    """`localqa index --json`: what changed, the totals, and every problem by file and page."""
    return {
        "db": str(report.db),
        "added": report.added,
        "changed": report.changed,
        "removed": report.removed,
        "unchanged": report.unchanged,
        "documents": report.documents,
        "passages": report.passages,
        "embedded": report.embedded,
        "corpus_digest": report.digest,
        "problems": [
            {"source": p.source, "page": p.page, "message": p.message, "warning": p.warning}
            for p in report.problems
        ],
    }


def status_json(info: IndexStatus, caller: Caller | None) -> dict[str, Any]:
    """`localqa status --json`: the index as `caller` may count it (None: the operator's view)."""
    return {
        "db": info.path,
        "documents": info.documents,
        "passages": info.passages,
        "passages_by_format": info.formats,
        "sidecars": info.sidecars,
        "invisible_documents": list(info.invisible_documents),
        "corpus_digest": info.corpus_digest,
        "embeddings": info.embeddings,
        "schema_version": info.schema_version,
        "built": info.built,
        "caller": None if caller is None else {"role": caller.role, "tenant": caller.tenant},
    }
