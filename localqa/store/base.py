"""What every index backend provides: the records it hands out and the operations behind them.

Callers (refresh, retrieval, evaluation, the CLI and the web app) talk to an index only through
these interfaces; none of them builds a query. A second backend (a shared PostgreSQL index, say)
is a new pair of `Store` and `Writer` classes, not a change anywhere else.

Retrieval statistics are always asked for a `Scope` (the documents a caller may retrieve from on
a date): a backend must never let a passage outside the scope contribute to a number.

A refresh writes in place (issue 21): a `Writer` commits the lexical index as soon as extraction
ends (`Writer.commit`), then the vectors in batches, each batch its own commit, so that questions
can be asked while it embeds and an interrupted run resumes where it stopped. A `Store` reads one
committed version and says when a newer one exists (`Store.changed`); until a passage has its
vector, retrieval embeds it at question time (`Store.missing_vectors`). Further:
- `has_vectors` is true once the index is embedded with the model, also while some vectors are
  still being computed (`Writer.expect_vectors` records it);
- the ids a `Store` hands out (postings, carriers, similarities, passages) are its own, for the
  life of the store: retrieval breaks ties in score to the lower id, so a store numbers passages
  in one canonical order, whatever order they were written in and whatever ids it keeps them
  under (`localqa.store.layout`). Then an index refreshed in place ranks exactly as one rebuilt,
  and two backends agree;
- a backend that keeps per-passage data (postings, vectors) across commits without rewriting it
  (SQLite) never reuses a stored id, and a passage's searchable text never changes under its id:
  a changed passage, or one whose document context changed, is a new passage with a new id.
"""

from __future__ import annotations

import bisect
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date

import numpy as np
import numpy.typing as npt

from localqa.retrieval import eligibility
from localqa.settings import Chunking
from localqa.types import Box, Caller, Document, Found, Frozen, Kind, Location, Passage

Vectors = npt.NDArray[np.float32]

Progress = Callable[[int, int, str], None]  # (done, total, what is being worked on)


class StoredPassage(Frozen):
    """A passage as the index holds it, with its id and the document it belongs to."""

    id: int
    doc_id: str
    kind: Kind
    source: str
    page: int | None
    section: str | None
    paragraph: int | None
    table: int | None
    row: int | None
    text: str
    boxes: tuple[Box, ...] = ()

    def location(self, document: Document) -> Location:
        return Location(
            source=self.source,
            page=self.page,
            kind=self.kind,
            section=self.section,
            table=self.table,
            row=self.row,
            paragraph=self.paragraph,
            effective=document.effective,
        )


@dataclass(frozen=True)
class IndexedFile:
    """An input file as last indexed: its content hash and (PDFs) its pages without text."""

    sha256: str
    pages_without_text: tuple[int, ...] = ()


@dataclass(frozen=True)
class IndexedState:
    """What an index holds, as refresh planning needs it."""

    files: dict[str, IndexedFile] = field(default_factory=dict)
    documents: dict[str, Document] = field(default_factory=dict)  # by source file name


@dataclass(frozen=True)
class Postings:
    """One term's occurrences in the scope: passage ids, term frequencies and passage lengths
    (in the columns the chunking searches), as arrays in matching order."""

    ids: npt.NDArray[np.int32]
    frequencies: npt.NDArray[np.float64]
    lengths: npt.NDArray[np.int32]

    @classmethod
    def empty(cls) -> Postings:
        return cls(np.zeros(0, np.int32), np.zeros(0, np.float64), np.zeros(0, np.int32))


@dataclass(frozen=True)
class LexicalStatistics:
    """Corpus statistics of the scope for BM25: passage count and average length."""

    passages: int
    average_length: float


class Scope(Frozen):
    """The documents one caller may retrieve from on one date (by document id)."""

    doc_ids: frozenset[str]


@dataclass(frozen=True)
class IndexStatus:
    """What `localqa status` reports; counts cover only the documents it was asked about."""

    path: str
    documents: int
    passages: dict[str, int]
    sidecars: int
    invisible_documents: tuple[str, ...]
    corpus_digest: str | None
    embeddings: dict[str, int]
    schema_version: int
    built: str | None
    formats: dict[str, int] = field(default_factory=dict)  # passages by source format ("docx": 40)


@dataclass(frozen=True)
class Unembedded:
    """A passage waiting for its vector, with the document context it is read in."""

    id: int
    context: str
    section: str | None
    text: str


@dataclass(frozen=True)
class WriteSummary:
    documents: int
    passages: int
    digest: str


class Store(ABC):
    """Read access to one committed version of an index at a time: a refresh committing meanwhile
    does not change what it reads until `changed()` is asked (which reopens or, on a server, moves
    to the new version). Cheap derived data (documents, scopes) may be cached for a version."""

    path: str

    def __init__(self) -> None:
        self._eligible: dict[tuple[str, str, int], dict[str, Document]] = {}
        # Per caller (role, tenant): the documents they may see, and the dates their eligible
        # set can change on (`eligibility.turning_dates`).
        self._visible: dict[tuple[str, str], tuple[list[Document], list[date]]] = {}

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def changed(self) -> bool:
        """Whether the index was written (a refresh committed, or the index was replaced) since
        what this store read of it: a long-lived reader (`localqa serve`) asks before each
        question and reopens the index when it was. When it was not, the reads that follow see
        the version that was checked. Cheap (a query at most). IndexUnavailableError when the
        index was replaced in a way that cannot be read (see the backend's)."""

    def release(self) -> None:  # noqa: B027 (most stores hold nothing between reads)
        """The reader is done for now (between two requests): a store on a database server
        ends its snapshot here, so that an idle process holds no transaction open. Ask
        `changed()` before reading again."""

    def _forget(self) -> None:
        """Drop everything derived from the index (a store that moved to a newer version)."""
        self._eligible = {}
        self._visible = {}

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- documents and metadata -----------------------------------------------------------

    @abstractmethod
    def documents(self) -> tuple[Document, ...]:
        """Every indexed document, visible or not (eligibility is decided by the caller)."""

    def listed(self, caller: Caller) -> list[Document]:
        """The documents listed for `caller` (`eligibility.listed`), whatever the date."""
        return eligibility.listed(self._visible_to(caller)[0])

    def _visible_to(self, caller: Caller) -> tuple[list[Document], list[date]]:
        """The documents `caller` may see, and the dates their eligible set can change on."""
        who = (caller.role, caller.tenant)
        if who not in self._visible:
            visible = eligibility.visible(self.documents(), caller)
            self._visible[who] = (visible, eligibility.turning_dates(visible))
        return self._visible[who]

    def eligible(self, as_of: date, caller: Caller) -> dict[str, Document]:
        """The documents `caller` may retrieve from on `as_of` (`localqa.retrieval.eligibility`), by id.
        Remembered for the snapshot: the answer changes only when the date passes an effective
        date of a document the caller may see, so it is kept per (caller, number of those dates on
        or before `as_of`). Only those: a key counting every document's dates would make the first
        question on a hidden document's date the slow one, and a caller timing a sweep of dates
        would learn it (issue 29)."""
        visible, dates = self._visible_to(caller)
        key = (caller.role, caller.tenant, bisect.bisect_right(dates, as_of))
        if key not in self._eligible:
            self._eligible[key] = {d.doc_id: d for d in eligibility.current(visible, as_of)}
        return self._eligible[key]

    @abstractmethod
    def found(self) -> dict[str, Found]:
        """What extraction read on each document's first page, by document id (documents whose
        source gave nothing may be missing). Like `documents()`, for every document: callers
        look up only the ones they may see."""

    @abstractmethod
    def corpus_digest(self) -> str: ...

    @abstractmethod
    def status(self, doc_ids: frozenset[str] | None) -> IndexStatus:
        """Counts over the given documents (None: all of them, the operator's view)."""

    # --- retrieval ------------------------------------------------------------------------

    @abstractmethod
    def terms(self, text: str) -> list[str]:
        """The distinct meaningful terms of `text`, analysed exactly as the index analyses
        passages (stemming, stop words removed), in order."""

    @abstractmethod
    def lexical_statistics(self, scope: Scope, chunking: Chunking) -> LexicalStatistics: ...

    @abstractmethod
    def postings(self, scope: Scope, term: str, chunking: Chunking) -> Postings: ...

    def postings_of(self, scope: Scope, terms: Sequence[str], chunking: Chunking) -> list[Postings]:
        """`postings` of each of `terms`, in order; a store on a database server fetches them in
        one round trip."""
        return [self.postings(scope, term, chunking) for term in terms]

    @abstractmethod
    def carriers(self, scope: Scope, codes: Sequence[str], chunking: Chunking) -> dict[int, set[str]]:
        """Passages in scope carrying any of the identifiers exactly -> the identifiers they
        carry (in the heading path too when the chunking searches it)."""

    @abstractmethod
    def has_vectors(self, model: str) -> bool:
        """The index is embedded with `model`: every passage has its vector, or a refresh is
        still computing some (`missing_vectors` names those)."""

    @abstractmethod
    def lacks_vectors(self, model: str) -> bool:
        """The index has passages but is not embedded with `model`."""

    @abstractmethod
    def missing_vectors(self, model: str, ids: Iterable[int]) -> list[Unembedded]:
        """Those of `ids` that have no vector for `model` in this snapshot, in id order, with what
        is embedded for them (retrieval embeds them at question time)."""

    @abstractmethod
    def similarities(
        self, scope: Scope, model: str, vector: Vectors, limit: int | None = None
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Passage ids in scope that have a vector for `model`, and each one's dot product with
        `vector` (the cosine: vectors are normalised). With a `limit`, the backend may return
        only the `limit` most similar (ties to the lower id): a server searches there and sends
        back those alone."""

    @abstractmethod
    def passages(self, ids: Iterable[int]) -> dict[int, StoredPassage]: ...

    @abstractmethod
    def passage_at(self, location: Location) -> StoredPassage | None:
        """The passage at a location (source, page, kind, table, row, paragraph), if any."""

    @abstractmethod
    def page_passages(self, source: str, page: int | None) -> list[StoredPassage]:
        """The passages of one page of one source (page None: a file without pages)."""

    @abstractmethod
    def passages_containing(self, scope: Scope, source: str, text: str, limit: int) -> list[StoredPassage]:
        """The passages of one source, of the documents in `scope`, whose text holds `text` as
        written (case and all), in id order, at most `limit`."""

    @abstractmethod
    def last_page(self, scope: Scope, source: str) -> int | None:
        """The last page of one source, of the documents in `scope`, that the index holds or knows
        to be there: its last page with a passage, or a later page without text (awaiting OCR,
        whose text may follow on); None for a source without pages or outside `scope`."""

    @abstractmethod
    def file_hash(self, name: str) -> str | None:
        """The sha256 an input file had when it was last indexed."""


class Writer(ABC):
    """The one writer of an index (a second one waits). What it writes becomes visible to readers
    at each `commit()` and when the writer closes without error, atomically: a reader sees the
    index as of one commit. Whatever is not committed when the process dies or a write fails
    (a full disk) is rolled back, leaving the index as it was at the last commit."""

    @abstractmethod
    def commit(self) -> None:
        """Make everything written so far visible to readers, as one change."""

    @abstractmethod
    def indexed(self) -> IndexedState: ...

    @abstractmethod
    def remove_files(self, names: Iterable[str]) -> None:
        """Forget input files and every passage extracted from them."""

    @abstractmethod
    def put_documents(self, documents: Iterable[Document], blocked: Iterable[str]) -> None:
        """Write document metadata (ids may move between sources: a swap). A `blocked` source
        keeps its passages but becomes visible to nobody until its metadata is usable again."""

    @abstractmethod
    def replace_unit(
        self,
        name: str,
        sha256: str,
        doc_id: str,
        passages: Sequence[Passage],
        pages_without_text: Sequence[int],
        found: Found | None = None,
    ) -> None:
        """Replace everything extracted from input file `name` with `passages`; `found` is what
        extraction read on its first page (a source file only: it replaces what was found
        before; None, for a sidecar, leaves it)."""

    @abstractmethod
    def record_catalog(self, sha256: str | None) -> None: ...

    @abstractmethod
    def has_vectors(self, model: str) -> bool:
        """As `Store.has_vectors`, for the index as this writer has it."""

    @abstractmethod
    def expect_vectors(self, model: str) -> None:
        """Record that the index is embedded with `model` (readers' `has_vectors`), before its
        vectors are all written: from the next commit, retrieval embeds the missing ones at
        question time."""

    @abstractmethod
    def passages_without_vectors(self, model: str, limit: int | None = None) -> list[Unembedded]:
        """Passages with no vector for `model` yet (new or changed ones), in id order; at most
        `limit` of them."""

    @abstractmethod
    def put_vectors(self, model: str, ids: Sequence[int], vectors: Vectors) -> None: ...

    @abstractmethod
    def drop_vectors(self, model: str) -> None:
        """Remove every vector of `model`, and the record that the index is embedded with it."""

    @abstractmethod
    def finish(self) -> WriteSummary:
        """Drop documents nothing refers to any more, stamp the digest; returns the totals (the
        caller commits)."""
