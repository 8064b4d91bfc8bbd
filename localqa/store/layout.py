"""What retrieval derives from one index snapshot, alike in every backend: each passage's lengths
and document as arrays in canonical order, which passages a scope holds (a mask over them), the
BM25 statistics of a scope, and postings and identifier carriers cut to a scope.

The ids a store hands out are canonical numbers, not the ids the backend stores (`localqa.store.
base`): passages are numbered sources by file name, then OCR sidecars by file name, each file's
passages in extraction order, the order a full rebuild writes them in. Ranking breaks ties in
score to the lower id, so an index refreshed in place ranks exactly as one rebuilt from scratch,
and two backends holding the same files agree.

A backend supplies the rows (`LayoutStore`'s `_layout_units`, `_postings_rows`, `_carrier_rows`);
the numbering and scoping happen here, once for all of them, so that no backend can count a
passage outside the scope.
"""

from __future__ import annotations

from abc import abstractmethod
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from localqa.language.tokenizer import tokenizer
from localqa.settings import Chunking
from localqa.store.base import LexicalStatistics, Postings, Scope, Store, StoredPassage
from localqa.store.postings import unpack
from localqa.store.rows import passage_of

# One input file's passages: (file name, its document's source, the stored passage ids in
# extraction order, their heading token counts, their body token counts (each packed int32,
# little-endian), the document id or None).
Unit = tuple[str, str, bytes, bytes, bytes, str | None]


class Layout:
    """Passages in canonical order, numbered 0..size-1: their stored ids, lengths and documents as
    arrays. One slot more at the end stands for "no passage" (a stored id that is no passage in
    this snapshot, e.g. a removed one whose postings are still kept): no document, length 0."""

    def __init__(
        self,
        internal: npt.NDArray[np.int64],
        documents: npt.NDArray[np.int32],
        heading: npt.NDArray[np.int32],
        body: npt.NDArray[np.int32],
        names: list[str],
    ) -> None:
        self.size = len(internal)
        self.internal = internal  # stored id of each number
        # number of each stored id (size for an id that is no passage), one slot past the last
        self._number = np.full(int(internal.max(initial=-1)) + 2, self.size, dtype=np.int64)
        self._number[internal] = np.arange(self.size)
        self.documents = np.append(documents, -1).astype(np.int32)  # document number; -1: none
        self.body = np.append(body, 0).astype(np.int32)
        # Summed once: every posting list of a query is looked up in it.
        self.heading_and_body = self.body + np.append(heading, 0).astype(np.int32)
        self.names = {name: number for number, name in enumerate(names)}

    @classmethod
    def of(cls, units: Sequence[Unit]) -> Layout:
        units = sorted(units, key=lambda unit: (unit[0] != unit[1], unit[0]))  # sources first, by name
        names: dict[str, int] = {}
        numbers = [-1 if unit[5] is None else names.setdefault(unit[5], len(names)) for unit in units]

        def joined(column: int) -> npt.NDArray[np.int32]:
            # One buffer for all files (a million passages in a thousand rows, or a hundred
            # thousand one-passage files: no per-file arrays).
            blobs: list[bytes] = [unit[column] for unit in units]  # type: ignore[misc]
            return np.frombuffer(b"".join(blobs), dtype="<i4")

        counts = [len(unit[2]) // 4 for unit in units]
        documents = np.repeat(np.array(numbers, dtype=np.int32), counts)
        return cls(joined(2).astype(np.int64), documents, joined(3), joined(4), list(names))

    def numbers(self, stored: npt.NDArray[np.integer]) -> npt.NDArray[np.int64]:
        """The canonical number of each stored id (`size` for one that is no passage)."""
        found: npt.NDArray[np.int64] = self._number[np.minimum(stored, len(self._number) - 1)]
        return found

    def lengths(self, chunking: Chunking) -> npt.NDArray[np.int32]:
        return self.heading_and_body if chunking == "heading" else self.body

    def mask(self, doc_ids: frozenset[str]) -> npt.NDArray[np.bool_]:
        """Which numbers (and the "no passage" slot: never) belong to one of `doc_ids`."""
        wanted = np.zeros(len(self.names) + 1, dtype=bool)  # the last slot stands for "no document"
        for doc_id in doc_ids:
            number = self.names.get(doc_id)
            if number is not None:
                wanted[number] = True
        return wanted[self.documents]


# What is derived per scope is kept for this many scopes, the least recently used dropped first.
KEPT_SCOPES = 64


@dataclass
class _ScopeData:
    mask: npt.NDArray[np.bool_]  # by passage id
    statistics: dict[Chunking, LexicalStatistics] = field(default_factory=dict)


class LayoutStore(Store):
    """A store whose BM25 reads packed postings, whose ids are canonical numbers and whose scoping
    is a mask over them."""

    def __init__(self) -> None:
        super().__init__()
        # Per scope, which passages it holds and its BM25 statistics; the least recently used
        # scope goes first once there are KEPT_SCOPES (a long-lived process sees one scope per caller
        # and date, and one per set of documents named or routed to).
        self._scopes: OrderedDict[frozenset[str], _ScopeData] = OrderedDict()
        # The scopes last asked about, by identity: finding an equal set among the keys above
        # compares it whole (100k document ids: milliseconds), and each term of a query asks.
        self._recent: dict[int, tuple[frozenset[str], _ScopeData]] = {}

    def _forget(self) -> None:
        super()._forget()
        self.__dict__.pop("_layout", None)
        self._scopes, self._recent = OrderedDict(), {}

    @abstractmethod
    def _layout_units(self) -> Sequence[Unit]:
        """One `Unit` per input file that has passages."""

    @abstractmethod
    def _postings_rows(self, terms: Sequence[str]) -> dict[str, tuple[bytes, bytes, bytes]]:
        """The packed postings (stored passage ids, heading counts, body counts) of those of
        `terms` that have any; ids of passages no longer in the index may be among them."""

    @abstractmethod
    def _carrier_rows(self, codes: Sequence[str], chunking: Chunking) -> Sequence[tuple[int, str]]:
        """(stored passage id, identifier) of every passage carrying one of `codes`, in the body
        or, when the chunking searches it, the heading text."""

    @abstractmethod
    def _passage_rows(self, stored: Sequence[int]) -> Sequence[Sequence[Any]]:
        """The rows (`localqa.store.rows.PASSAGE_COLUMNS`) of the passages with these stored ids."""

    @cached_property
    def _layout(self) -> Layout:
        """Read once per snapshot: what numbering, scoping and BM25 need."""
        return Layout.of(self._layout_units())

    def _numbers(self, stored: Sequence[int] | npt.NDArray[np.integer]) -> npt.NDArray[np.int64]:
        return self._layout.numbers(np.asarray(stored, dtype=np.int64))

    def _stored(self, numbers: Sequence[int] | npt.NDArray[np.integer]) -> list[int]:
        """The stored ids of canonical numbers (numbers out of range are no passage: left out)."""
        chosen = np.asarray(numbers, dtype=np.int64)
        chosen = chosen[(chosen >= 0) & (chosen < self._layout.size)]
        stored: list[int] = self._layout.internal[chosen].tolist()
        return stored

    def _numbered(self, rows: Sequence[Sequence[Any]]) -> list[StoredPassage]:
        """Passages from their rows, under their canonical numbers."""
        numbers = self._numbers([row[0] for row in rows]).tolist()
        return [passage_of((number, *row[1:])) for row, number in zip(rows, numbers, strict=True)]

    def passages(self, ids: Iterable[int]) -> dict[int, StoredPassage]:
        stored = self._stored(np.fromiter(ids, dtype=np.int64))
        if not stored:
            return {}
        return {passage.id: passage for passage in self._numbered(self._passage_rows(stored))}

    def _scope(self, scope: Scope) -> _ScopeData:
        """What is kept about `scope`: which numbers are in it, its BM25 statistics (a scope is
        reused for every part and, in a long-lived process, every question of the same caller and
        date)."""
        recent = self._recent.get(id(scope.doc_ids))
        if recent is not None and recent[0] is scope.doc_ids:
            return recent[1]
        data = self._scopes.pop(scope.doc_ids, None) or _ScopeData(self._layout.mask(scope.doc_ids))
        self._scopes[scope.doc_ids] = data
        if len(self._scopes) > KEPT_SCOPES:
            self._scopes.popitem(last=False)
        if len(self._recent) >= 16:  # the set is held here so its id stays its own; keep few
            del self._recent[next(iter(self._recent))]
        self._recent[id(scope.doc_ids)] = (scope.doc_ids, data)
        return data

    def _mask(self, scope: Scope) -> npt.NDArray[np.bool_]:
        """Which passage ids are in `scope`."""
        return self._scope(scope).mask

    def terms(self, text: str) -> list[str]:
        return tokenizer().terms(text)

    def lexical_statistics(self, scope: Scope, chunking: Chunking) -> LexicalStatistics:
        data = self._scope(scope)
        cached = data.statistics.get(chunking)
        if cached is None:
            lengths = self._layout.lengths(chunking)[data.mask]
            count = int(lengths.size)
            cached = LexicalStatistics(count, float(lengths.mean()) if count else 1.0)
            data.statistics[chunking] = cached
        return cached

    def postings(self, scope: Scope, term: str, chunking: Chunking) -> Postings:
        return self.postings_of(scope, [term], chunking)[0]

    def postings_of(self, scope: Scope, terms: Sequence[str], chunking: Chunking) -> list[Postings]:
        rows = self._postings_rows(terms)
        return [
            self._scoped(rows[term], scope, chunking) if term in rows else Postings.empty() for term in terms
        ]

    def _scoped(self, row: tuple[bytes, bytes, bytes], scope: Scope, chunking: Chunking) -> Postings:
        stored, heading, body = unpack(*row)
        counts = body.astype(np.float64) + (heading if chunking == "heading" else 0)
        numbers = self._layout.numbers(stored)
        keep = self._mask(scope)[numbers] & (counts > 0)
        chosen = numbers[keep]
        return Postings(chosen.astype(np.int32), counts[keep], self._layout.lengths(chunking)[chosen])

    def carriers(self, scope: Scope, codes: Sequence[str], chunking: Chunking) -> dict[int, set[str]]:
        rows = self._carrier_rows(codes, chunking)
        if not rows:
            return {}
        numbers = self._numbers([pid for pid, _ in rows]).tolist()
        mask = self._mask(scope)
        found: dict[int, set[str]] = {}
        for number, (_, code) in zip(numbers, rows, strict=True):
            if mask[number]:
                found.setdefault(number, set()).add(code)
        return found
