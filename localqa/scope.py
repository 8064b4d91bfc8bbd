"""Scope by name: the documents a caller names (`--doc`, the API's `documents`, a suite case's
`documents`), found among the documents that caller may search.

Naming documents narrows what is searched; it never widens it. Names are looked up among the
eligible documents only, so a document the caller may not see answers exactly as a missing one
does: the same error, from the same code path, after the same work.

Names are bounded (MAX_NAMES of at most MAX_NAME_CHARS each) and checked, and globs compiled, by
`DocumentNames.of` before the library is read: `fnmatch` translates unclosed `[` in quadratic time
(64 KB of `[!` took 46 s), and a library serves one read at a time.
"""

from __future__ import annotations

import fnmatch
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from localqa.errors import LocalQAError, QuestionError
from localqa.types import Caller, Document

MAX_NAMES = 32
MAX_NAME_CHARS = 255  # a file name's length on common file systems
_GLOB = frozenset("*?[")
_FORMS = "give a file name, a glob ('ADOBE_*') or a series ('localqa status --documents' lists them)"


class UnknownDocumentError(LocalQAError):
    """A name given to scope a search matches no document the caller may search."""


class DocumentNameError(QuestionError):
    """The names given to scope a search cannot be used (blank, too long, too many): a usage
    error, whatever the index holds."""


@dataclass(frozen=True)
class Name:
    """One name as given, compared in `_key` form; a glob with its compiled pattern."""

    given: str
    key: str
    glob: re.Pattern[str] | None

    def names(self, document: Document) -> bool:
        source = _key(document.source)
        if self.glob is not None:
            return self.glob.match(source) is not None
        return self.key in (source, _key(Path(document.source).stem), _key(document.series))


@dataclass(frozen=True)
class DocumentNames:
    """Names given to scope a search, checked and compiled."""

    names: tuple[Name, ...] = ()

    @classmethod
    def of(cls, names: Sequence[str] | DocumentNames) -> DocumentNames:
        """`names` checked (DocumentNameError when one is blank or too long, or there are too
        many) and compiled."""
        if isinstance(names, DocumentNames):
            return names
        if len(names) > MAX_NAMES:
            raise DocumentNameError(
                f"{len(names)} document names given, at most {MAX_NAMES} are taken; name fewer, or use "
                "a glob ('ADOBE_*')"
            )
        return cls(tuple(_name(name) for name in names))

    def __bool__(self) -> bool:
        return bool(self.names)


def _name(given: str) -> Name:
    if len(given) > MAX_NAME_CHARS:
        raise DocumentNameError(
            f"a document name is {len(given)} characters long, over {MAX_NAME_CHARS}; {_FORMS}"
        )
    key = _key(given)
    if not key:
        raise DocumentNameError(f"a document name is blank; {_FORMS}")
    glob = re.compile(fnmatch.translate(key)) if _GLOB & set(key) else None
    return Name(given, key, glob)


def named(
    names: Sequence[str] | DocumentNames,
    allowed: Mapping[str, Document],
    as_of: date,
    caller: Caller,
    listed: Sequence[Document] = (),
) -> dict[str, Document]:
    """The documents of `allowed` that `names` name, by id. A name is a file name (with or
    without its extension), a glob over file names (`ADOBE_*.pdf`) or a catalog series; case is
    ignored. Every name must match at least one document. One that matches only documents listed
    for the caller (`listed`: see `eligibility.listed`) that are not in force on `as_of` is an
    error that says when they are; one that matches nothing else, or only documents the caller
    may not see, is the same error, after the same work."""
    chosen: dict[str, Document] = {}
    for name in DocumentNames.of(names).names:
        found = {d.doc_id: d for d in allowed.values() if name.names(d)}
        if not found:
            _not_in_force(name, [d for d in listed if name.names(d)], as_of)
            raise UnknownDocumentError(
                f"no document named {name.given!r} can be searched by role {caller.role}, tenant "
                f"{caller.tenant} on {as_of.isoformat()}; list the documents with "
                "'localqa status --documents' (or on the library page) and give a file name, a glob "
                "or a series"
            )
        chosen.update(found)
    return chosen


def _not_in_force(name: Name, listed: Sequence[Document], as_of: date) -> None:
    """Raise the error for a name that matches only documents listed for the caller but not in
    force on `as_of`: one not in force yet (the earliest, when several), or one replaced."""
    later = [d for d in listed if d.effective and d.effective > as_of]
    if later:
        first = min(later, key=lambda d: (d.effective or as_of, d.source))
        raise UnknownDocumentError(
            f"{name.given!r} names a document in force from {first.effective} ({first.source}), not on "
            f"{as_of.isoformat()}; search it with --as-of {first.effective} or later"
        )
    if listed:
        raise UnknownDocumentError(
            f"{name.given!r} names a document not in force on {as_of.isoformat()} ({listed[0].source}: a "
            "later version replaced it); name the version in force, or search with an --as-of date when "
            "it was"
        )


def _key(text: str) -> str:
    return unicodedata.normalize("NFC", text.strip()).casefold()
