"""Rows both backends store and read back the same way: documents and passages."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date
from typing import Any

from localqa.formats import format_name
from localqa.store.base import IndexStatus, StoredPassage
from localqa.types import Document, Found, Kind, Period, Status

PASSAGE_COLUMNS = "id, doc_id, kind, source, page, section, paragraph, table_no, row_no, text, boxes"
DOCUMENT_COLUMNS = "doc_id, source, series, version, effective, status, access, tenant, title, period"
# What extraction read on a source's first page (`Found`), kept with the document row.
FOUND_COLUMNS = "found_title, found_name, found_period"


def document_values(document: Document) -> tuple[Any, ...]:
    """A document as the values of DOCUMENT_COLUMNS."""
    return (
        document.doc_id,
        document.source,
        document.series,
        document.version,
        document.effective.isoformat() if document.effective else None,
        document.status.value,
        document.access,
        document.tenant,
        document.title,
        period_json(document.period),
    )


def document_of(row: Sequence[Any]) -> Document:
    doc_id, source, series, version, effective, status, access, tenant, title, period = row
    # Rows a writer wrote from validated documents: rebuilt without validating them again
    # (an index of 100k documents would otherwise spend most of a second on it).
    return Document.model_construct(
        doc_id=doc_id,
        source=source,
        series=series,
        version=version,
        effective=date.fromisoformat(effective) if effective else None,
        status=Status(status),
        access=access,
        tenant=tenant,
        title=title,
        period=period_of(period),
    )


def found_values(found: Found) -> tuple[str | None, str | None, str | None]:
    """What was found as the values of FOUND_COLUMNS."""
    return (found.title, found.name, period_json(found.period))


def found_of(title: str | None, name: str | None, period: str | None) -> Found:
    return Found(title=title, name=name, period=period_of(period))


def period_of(stored: str | None) -> Period | None:
    return Period.model_validate_json(stored) if stored else None


def period_json(period: Period | None) -> str | None:
    return period.model_dump_json(exclude_none=True) if period else None


def passage_of(row: Sequence[Any]) -> StoredPassage:
    pid, doc_id, kind, source, page, section, paragraph, table, row_no, text, boxes = row
    return StoredPassage(
        id=pid,
        doc_id=doc_id,
        kind=Kind(kind),
        source=source,
        page=page,
        section=section,
        paragraph=paragraph,
        table=table,
        row=row_no,
        text=text,
        boxes=tuple(tuple(box) for box in json.loads(boxes)),
    )


def status_of(
    path: str,
    documents: Sequence[Document],
    doc_ids: frozenset[str] | None,
    kinds: dict[str, int],
    sidecars: int,
    embedded: dict[str, int],
    meta: dict[str, str],
    *,
    sources: dict[str, int] | None = None,
) -> IndexStatus:
    """What `Store.status` reports, from the counts a backend made over `doc_ids` (None: all);
    `sources` are passage counts by source file, counted by format."""
    counted = [d for d in documents if doc_ids is None or d.doc_id in doc_ids]
    formats: dict[str, int] = {}
    for source, count in sorted((sources or {}).items()):
        name = format_name(source)
        formats[name] = formats.get(name, 0) + count
    return IndexStatus(
        formats=dict(sorted(formats.items())),
        path=path,
        documents=len(counted),
        passages={kind.value: kinds.get(kind.value, 0) for kind in Kind},
        sidecars=sidecars,
        invisible_documents=tuple(sorted(d.source for d in counted if d.access is None)),
        # The digest covers every document: a caller who saw it change would learn that
        # something they may not see changed. The operator's view only.
        corpus_digest=meta.get("corpus_digest") if doc_ids is None else None,
        embeddings=embedded,
        schema_version=int(meta.get("schema_version", 0)),
        built=meta.get("built") if doc_ids is None else None,  # like the digest
    )
