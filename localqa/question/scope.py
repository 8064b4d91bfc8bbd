"""Scope by name: the documents a caller names (`--doc`, the API's `documents`, a suite case's
`documents`), found among the documents that caller may search; and the documents the program
chose itself (a part's route, the document of a cited quote), passed on as documents.

Naming documents narrows what is searched; it never widens it. Names are looked up among the
eligible documents only, so a document the caller may not see answers exactly as a missing one
does: the same error, from the same code path, after the same work.

A name is read as written first: a file name (with or without its extension) or a series, equal
to it with case ignored. Only a name that names no document that way, and holds `*`, `?` or `[`,
is read as a glob over file names. So `Annual Report [2019].pdf` is that file when the caller may
search it, and `ADOBE_*` is a glob unless a file is named so.

What the program chose itself is never text to read again (`Chosen`): a file named like a glob,
or more than MAX_NAMES documents routed to, are documents all the same, and not the caller's
usage error.

Names are bounded (MAX_NAMES of at most MAX_NAME_CHARS each) and checked, and globs compiled, by
`DocumentNames.of` before the library is read: `fnmatch` translates unclosed `[` in quadratic time
(64 KB of `[!` took 46 s), and a library serves one read at a time.
"""

from __future__ import annotations

import fnmatch
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
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
    """One name as given, compared in `_key` form; one that holds a glob character with its
    compiled pattern, tried only when the name names no document as written."""

    given: str
    key: str
    glob: re.Pattern[str] | None

    def written(self, documents: Iterable[Document]) -> list[Document]:
        """The documents this name names as written: its file name, with or without its
        extension, or its series."""
        key = self.key
        return [d for d in documents if key in (_key(d.source), _key(Path(d.source).stem), _key(d.series))]

    def globbed(self, documents: Iterable[Document]) -> list[Document]:
        """The documents whose file name this name matches as a glob (none, when it is no glob)."""
        glob = self.glob
        return [] if glob is None else [d for d in documents if glob.match(_key(d.source)) is not None]


@dataclass(frozen=True)
class Chosen:
    """Documents the program chose itself, by their indexed source (the index keys a document by
    its source: one document per file): a part's route, the document of a cited quote, or the
    documents a caller's names were found to name. Compared for equality only, never read as a
    name, glob or series, and not bounded by MAX_NAMES: the caller typed none of them.

    It narrows like names do and never widens: a source the caller may not search is not searched,
    without an error (the program chose it, not the caller). No sources: nothing is searched."""

    sources: frozenset[str]

    @classmethod
    def of(cls, sources: Iterable[str]) -> Chosen:
        return cls(frozenset(sources))

    def within(self, allowed: Mapping[str, Document]) -> dict[str, Document]:
        """The documents of `allowed` chosen, by id."""
        return {d.doc_id: d for d in allowed.values() if d.source in self.sources}


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
    without its extension) or a catalog series, as written; else, when it holds `*`, `?` or `[`,
    a glob over file names (`ADOBE_*.pdf`); case is ignored. Every name must match at least one
    document. One that matches only documents listed for the caller (`listed`: see
    `eligibility.listed`) that are not in force on `as_of` is an error that says when they are;
    one that matches nothing else, or only documents the caller may not see, is the same error,
    after the same work."""
    chosen: dict[str, Document] = {}
    for name in DocumentNames.of(names).names:
        found = name.written(allowed.values())
        # Read as a glob only when it names none of the caller's documents as written (in force on
        # `as_of` or not): the exact name of a file not in force is that error, not a lookalike.
        if not found and not name.written(listed):
            found = name.globbed(allowed.values())
        if not found:
            _not_in_force(name, name.written(listed) or name.globbed(listed), as_of)
            raise UnknownDocumentError(
                f"no document named {name.given!r} can be searched by role {caller.role}, tenant "
                f"{caller.tenant} on {as_of.isoformat()}; list the documents with "
                "'localqa status --documents' (or on the library page) and give a file name, a glob "
                "or a series"
            )
        chosen.update((d.doc_id, d) for d in found)
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
