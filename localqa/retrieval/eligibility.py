"""Who may see which document on which date: the filter applied before anything is ranked.

A document is eligible for a caller on a date when it is in the caller's tenant, its access label
is one the caller's role may see, its status is current, and it is the version of its series in
force on that date: the latest `effective` on or before it. A later version is invisible before
its date; a retired or draft version never shows, and a retired latest version retires its series.

Supersession is decided among the versions the caller may see. A newer version the caller may not
see (staff-only, or another tenant's) does not hide the one they may: otherwise a public version
vanishing on a date would tell the public that something they cannot see replaced it, and nothing
the caller may not see may change what they get.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import date

from localqa.indexing.catalog import visible_labels
from localqa.types import Caller, Document, Status


def in_force(documents: Iterable[Document], as_of: date) -> list[Document]:
    """Per (tenant, series), the versions in force on `as_of` (ties are all kept, so that a
    conflict stays visible). Undated documents are always in force but lose to any dated one."""
    by_series: dict[tuple[str, str], list[Document]] = defaultdict(list)
    for document in documents:
        if document.status is Status.DRAFT:
            continue
        if document.effective is None or document.effective <= as_of:
            by_series[(document.tenant, document.series)].append(document)
    chosen: list[Document] = []
    for versions in by_series.values():
        newest = max(versions, key=_effective)
        chosen += [d for d in versions if _effective(d) == _effective(newest)]
    return chosen


def visible(documents: Iterable[Document], caller: Caller) -> list[Document]:
    """The documents `caller` may see at all, whatever the date or status: their tenant, and an
    access label their role may see."""
    labels = visible_labels(caller.role)
    return [d for d in documents if d.tenant == caller.tenant and d.access is not None and d.access in labels]


def listed(visible: Iterable[Document]) -> list[Document]:
    """Of documents a caller may see (`visible`), those listed for them: the current ones, each
    searchable from its effective date (until a later version replaces it); a draft or retired
    one never is."""
    return [d for d in visible if d.status is Status.CURRENT]


def eligible(documents: Iterable[Document], as_of: date, caller: Caller) -> list[Document]:
    """The documents `caller` may retrieve from on `as_of`."""
    # Tenant and access first: what the caller may not see takes no part in supersession.
    return current(visible(documents, caller), as_of)


def current(visible: Iterable[Document], as_of: date) -> list[Document]:
    """Of documents a caller may see (`visible`), those they may retrieve from on `as_of`."""
    return [d for d in in_force(visible, as_of) if d.status is Status.CURRENT]


def turning_dates(visible: Iterable[Document]) -> list[date]:
    """The dates on which what `current` gives for documents a caller may see can change: their
    effective dates, drafts' left out (a draft never takes part), in order."""
    return sorted({d.effective for d in visible if d.effective is not None and d.status is not Status.DRAFT})


def _effective(document: Document) -> date:
    return document.effective or date.min
