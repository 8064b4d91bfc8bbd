"""What retrieval derives from one index snapshot, alike in every backend: each passage's lengths
and document as arrays indexed by passage id, which passages a scope holds (a mask over those
ids), the BM25 statistics of a scope, and postings and identifier carriers cut to a scope.

A backend supplies the rows (`LayoutStore`'s `_layout_rows`, `_postings_row`, `_carrier_rows`);
the scoping happens here, once for all of them, so that no backend can count a passage outside
the scope.
"""

from __future__ import annotations

from abc import abstractmethod
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import numpy.typing as npt

from localqa.settings import Chunking
from localqa.store.base import LexicalStatistics, Postings, Scope, Store
from localqa.store.postings import unpack
from localqa.store.tokenizer import tokenizer


class Layout:
    """Passage lengths and documents as arrays indexed by passage id (ids are dense enough: they
    are given as SQLite gives rowids, reused after deletion)."""

    def __init__(
        self,
        documents: npt.NDArray[np.int32],
        heading: npt.NDArray[np.int32],
        body: npt.NDArray[np.int32],
        names: list[str],
    ) -> None:
        self.documents = documents  # document number per passage id; -1 where there is none
        self.body = body
        # Summed once: every posting list of a query is looked up in it.
        self.heading_and_body = heading + body
        self.names = {name: number for number, name in enumerate(names)}

    @classmethod
    def of(cls, rows: Sequence[tuple[int, str, int, int]]) -> Layout:
        """From (id, doc_id, heading length, body length) rows in id order."""
        size = (rows[-1][0] + 1) if rows else 0
        documents = np.full(size, -1, dtype=np.int32)
        heading = np.zeros(size, dtype=np.int32)
        body = np.zeros(size, dtype=np.int32)
        names: dict[str, int] = {}
        for pid, doc_id, section_len, body_len in rows:
            documents[pid] = names.setdefault(doc_id, len(names))
            heading[pid] = section_len
            body[pid] = body_len
        return cls(documents, heading, body, list(names))

    def lengths(self, chunking: Chunking) -> npt.NDArray[np.int32]:
        return self.heading_and_body if chunking == "heading" else self.body

    def mask(self, doc_ids: frozenset[str]) -> npt.NDArray[np.bool_]:
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
    """A store whose BM25 reads packed postings and whose scoping is a mask over passage ids."""

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
    def _layout_rows(self) -> Sequence[tuple[int, str, int, int]]:
        """(id, doc_id, heading length, body length) of every passage, in id order."""

    @abstractmethod
    def _postings_rows(self, terms: Sequence[str]) -> dict[str, tuple[bytes, bytes, bytes]]:
        """The packed postings (passage ids, heading counts, body counts) of those of `terms`
        that have any."""

    @abstractmethod
    def _carrier_rows(self, codes: Sequence[str], chunking: Chunking) -> Sequence[tuple[int, str]]:
        """(passage id, identifier) of every passage carrying one of `codes`, in the body or,
        when the chunking searches it, the heading text."""

    @cached_property
    def _layout(self) -> Layout:
        """Read once per snapshot: what scoping and BM25 need."""
        return Layout.of(self._layout_rows())

    def _scope(self, scope: Scope) -> _ScopeData:
        """What is kept about `scope` (a scope is reused for every part and, in a long-lived
        process, every question of the same caller and date)."""
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
        ids, heading, body = unpack(*row)
        counts = body.astype(np.float64) + (heading if chunking == "heading" else 0)
        keep = self._mask(scope)[ids] & (counts > 0)
        return Postings(ids[keep], counts[keep], self._layout.lengths(chunking)[ids[keep]])

    def carriers(self, scope: Scope, codes: Sequence[str], chunking: Chunking) -> dict[int, set[str]]:
        mask = self._mask(scope)
        found: dict[int, set[str]] = {}
        for passage_id, code in self._carrier_rows(codes, chunking):
            if mask[passage_id]:
                found.setdefault(passage_id, set()).add(code)
        return found
