"""Scope by name: the documents a caller names (`--doc`, the API's `documents`, a suite case's
`documents`), found among the documents that caller may search.

Naming documents narrows what is searched; it never widens it. Names are looked up among the
eligible documents only, so a document the caller may not see answers exactly as a missing one
does: the same error, from the same code path, after the same work.
"""

from __future__ import annotations

import fnmatch
import unicodedata
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path

from localqa.errors import LocalQAError
from localqa.types import Caller, Document

_GLOB = frozenset("*?[")


class UnknownDocumentError(LocalQAError):
    """A name given to scope a search matches no document the caller may search."""


def named(
    names: Sequence[str], allowed: Mapping[str, Document], as_of: date, caller: Caller
) -> dict[str, Document]:
    """The documents of `allowed` that `names` name, by id. A name is a file name (with or
    without its extension), a glob over file names (`ADOBE_*.pdf`) or a catalog series; case is
    ignored. Every name must match at least one document."""
    chosen: dict[str, Document] = {}
    for name in names:
        found = {d.doc_id: d for d in allowed.values() if _names(name, d)}
        if not found:
            raise UnknownDocumentError(
                f"no document named {name!r} can be searched by role {caller.role}, tenant "
                f"{caller.tenant} on {as_of.isoformat()}; list the documents with "
                "'localqa status --documents' (or on the library page) and give a file name, a glob "
                "or a series"
            )
        chosen.update(found)
    return chosen


def _names(name: str, document: Document) -> bool:
    wanted = _key(name)
    source = _key(document.source)
    if _GLOB & set(wanted):
        return fnmatch.fnmatchcase(source, wanted)
    return wanted in (source, _key(Path(document.source).stem), _key(document.series))


def _key(text: str) -> str:
    return unicodedata.normalize("NFC", text.strip()).casefold()
