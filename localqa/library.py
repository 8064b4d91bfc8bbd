"""The library: one index, opened once and kept open, behind every command, the web app and the
evaluation (as sqlite-utils' `Database` is behind its commands).

A `Library` keeps its store open between questions, so that what a store caches (documents,
eligible sets, BM25 statistics, the vector matrix) is computed once; it reopens the index when a
refresh has committed since (`Store.changed`), and releases the store after each read
(`Store.release`: an idle process then holds no transaction open on a PostgreSQL index).
Searches take turns on the one connection (milliseconds each); model calls are the caller's to
schedule (`answer_part` takes no lock).

`search_parts()` and `answer()` are the one-call forms: they open a library for one question.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import date
from types import TracebackType
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from localqa.errors import PageNotFoundError
from localqa.indexing.index import open_index, status_for
from localqa.question import periods
from localqa.question.scope import Chosen, DocumentNames, named
from localqa.retrieval.retrieve import search
from localqa.settings import DEFAULT_DB, AnswerSettings, RetrievalSettings, Settings
from localqa.store import Db
from localqa.store.base import IndexStatus, Scope, Store, StoredPassage
from localqa.types import MAX_NUMBER, Answer, Caller, Document, Kind, Location, PartResult, Passage, Period
from localqa.values.choosing import VisibleTable
from localqa.values.fiscal import FiscalCalendar, calendar_for

# The passages of a cited page read for its scale ("in millions") and names: a page's own notes
# sit among its first passages, and a file without pages (a CSV of 200,000 rows) is one "page",
# which every figure of an extreme read again in full (54 s for 40 rows).
MAX_AROUND_PASSAGES = 1000

if TYPE_CHECKING:
    from localqa.models.base import AnswerModel

# The answer stage (prompts, model backends and their plugin entry points) is imported when a
# question is answered: a search in a fresh process does not pay for it.


class PartAnswer(BaseModel):
    """One part of an asked question: its candidates (the evidence) and the verified answer."""

    model_config = ConfigDict(frozen=True)

    result: PartResult
    answer: Answer


class Asked(BaseModel):
    model_config = ConfigDict(frozen=True)

    parts: list[PartAnswer]
    backend: str
    model: str
    retrieval_seconds: float  # for all parts together (one search)


class VisiblePage(BaseModel):
    """The passages of one page of one source, as the caller may see them, with the sha256 the
    source file had when it was indexed (so a changed file is never highlighted with old boxes)."""

    model_config = ConfigDict(frozen=True)

    source: str
    page: int | None
    sha256: str | None
    passages: tuple[Passage, ...]


@dataclass(frozen=True)
class ListedDocument:
    """One document the caller could ever retrieve from, whether it is in force on the date
    asked about (and when it will be, for one not in force yet), and the period it covers with
    where that comes from ("catalog" or "cover")."""

    document: Document
    in_force: bool
    period: Period | None = None
    period_from: str | None = None
    in_force_from: date | None = None  # its effective date, when that is after the date asked about

    @property
    def shown_period(self) -> str | None:
        """The period as it is shown ("FY2022 (year ended 2022-12-31)"), or None."""
        return periods.describe(self.period) if self.period else None


class Library:
    """An index and the settings it is searched and answered with. Thread-safe: the web app
    shares one between requests."""

    def __init__(self, db: Db = DEFAULT_DB, settings: Settings | None = None) -> None:
        self.db = db
        self.settings = settings or Settings()
        self._lock = threading.Lock()
        self._store: Store | None = None

    def __enter__(self) -> Library:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    def check(self) -> None:
        """Open the index now: a missing or unreadable one is its error here, not on first use."""
        with self._lock:
            self._current()

    # --- reading ---------------------------------------------------------------------------------

    def search(
        self,
        question: str,
        *,
        as_of: date,
        caller: Caller | None = None,
        parts: Sequence[str] = (),
        k: int | None = None,
        settings: RetrievalSettings | None = None,
        documents: Sequence[str] | DocumentNames | Chosen = (),
    ) -> list[PartResult]:
        """Retrieval only: ranked candidates per question part (empty = abstain). `settings`
        default to the library's; `k`, when given, overrides their `k`. `documents` narrows the
        search to the eligible documents it holds: the caller's names (file names, globs or
        series: `localqa.question.scope`) or documents already chosen (`Chosen`)."""
        settings = settings or self.settings.retrieval
        if k is not None:
            settings = settings.model_copy(update={"k": k})
        # Names are checked and compiled before waiting for the store.
        names = documents if isinstance(documents, Chosen) else DocumentNames.of(documents)
        with self._reading() as store:
            return search(
                store,
                question,
                as_of=as_of,
                caller=caller or Caller(),
                parts=parts,
                settings=settings,
                documents=names,
            )

    def answer(
        self,
        question: str,
        *,
        as_of: date,
        caller: Caller | None = None,
        parts: Sequence[str] = (),
        model: AnswerModel | str | None = None,
        k: int | None = None,
        settings: RetrievalSettings | None = None,
        answer_settings: AnswerSettings | None = None,
        documents: Sequence[str] | DocumentNames | Chosen = (),
    ) -> Asked:
        """Per part: retrieve, have the model pick a quote, verify it. The model sees the top `k`
        candidates (default: `settings.k` when settings are given, else the answering `k`)."""
        answering = answer_settings or self.settings.answering
        retrieval = (
            settings or Settings(retrieval=self.settings.retrieval, answering=answering).for_answering()
        )
        from localqa.models import get_model
        from localqa.models.base import AnswerModel

        chosen = model if isinstance(model, AnswerModel) else get_model(model)
        chosen.prepare(answering)  # e.g. the model file read ahead while retrieval runs
        started = time.perf_counter()
        results = self.search(
            question, as_of=as_of, caller=caller, parts=parts, k=k, settings=retrieval, documents=documents
        )
        retrieval_seconds = time.perf_counter() - started
        # The names are read once, as documents: nothing after the search reads them again.
        within = self.chosen(documents, as_of=as_of, caller=caller) or ()
        answers = [
            PartAnswer(
                result=r,
                answer=self.answer_part(r, chosen, answering, as_of=as_of, caller=caller, documents=within),
            )
            for r in results
        ]
        return Asked(
            parts=answers, backend=chosen.backend, model=chosen.name, retrieval_seconds=retrieval_seconds
        )

    def answer_part(
        self,
        result: PartResult,
        model: AnswerModel,
        settings: AnswerSettings | None = None,
        *,
        as_of: date,
        caller: Caller | None = None,
        documents: Sequence[str] | DocumentNames | Chosen = (),
    ) -> Answer:
        """One retrieved part answered and verified, with the value it gives; a part asking for a
        figure derived from line items (`localqa.derived.figures`) has each retrieved and read as a part
        of its own, as `caller` on `as_of`, within `documents` (the caller's names, read here
        once, or documents already chosen). A quote the answer stage doubts is shown as a refusal
        carrying it as its closest passage (`localqa.answers.unsure`), never as the answer."""
        from localqa.answers import deciding
        from localqa.answers.answering import answer_part
        from localqa.answers.unsure import withheld
        from localqa.derived.deriving import derive

        context = IndexContext(self, as_of, caller or Caller(), result.question)
        settings = settings or self.settings.answering
        within = self.chosen(documents, as_of=as_of, caller=caller)
        if deciding.figure_first(result.question, model.is_language_model, settings):
            # The figure first: when it is computed, the part's own quote (the scorer's first) is
            # replaced, and the model would have been asked for nothing.
            quoted = answer_part(
                result.question,
                result.candidates,
                model,
                settings,
                context,
                decided=deciding.FIGURE,
                unheld=result.unheld,
            )
            derived = derive(self, result, quoted, context, within, model, settings)
            if deciding.computed(derived, quoted):
                return withheld(derived)
        answer = answer_part(
            result.question, result.candidates, model, settings, context, unheld=result.unheld
        )
        return withheld(derive(self, result, answer, context, within, model, settings))

    def chosen(
        self,
        documents: Sequence[str] | DocumentNames | Chosen,
        *,
        as_of: date,
        caller: Caller | None = None,
    ) -> Chosen | None:
        """The documents `documents` names among those `caller` may search on `as_of`, as
        documents (`Chosen`), so that nothing reads the names again; None when none are given.
        A name that names none is `scope.UnknownDocumentError`, as in `search`."""
        if isinstance(documents, Chosen):
            return documents
        names = DocumentNames.of(documents)
        if not names:
            return None
        caller = caller or Caller()
        with self._reading() as store:
            found = named(names, store.eligible(as_of, caller), as_of, caller, store.listed(caller))
        return Chosen.of(d.source for d in found.values())

    def page(
        self, source: str, page: int | None, *, as_of: date, caller: Caller | None = None
    ) -> VisiblePage:
        """The passages on `page` of `source` (None: a Markdown/text source, which has no pages)
        that `caller` may see on `as_of`. `source` must be exactly an indexed source name: it is
        compared for equality, never used as a path here."""
        caller = caller or Caller()
        with self._reading() as store:
            mine = _source_scope(store, source, as_of, caller).doc_ids
            # A page beyond any document's (2**63, say) is not found, never an overflow.
            in_range = page is None or 1 <= page <= MAX_NUMBER
            read = mine and in_range
            found = [p for p in store.page_passages(source, page) if p.doc_id in mine] if read else []
            sha256 = store.file_hash(source) if found else None
        if not found:
            where = f"page {page} of {source!r}" if page is not None else f"{source!r}"
            raise PageNotFoundError(
                f"{where} is not in the index for role {caller.role}, tenant {caller.tenant} on "
                f"{as_of.isoformat()}; check the source name and page (see 'localqa search')"
            )
        return VisiblePage(source=source, page=page, sha256=sha256, passages=_passages(found))

    def passages_containing(
        self, source: str, text: str, *, as_of: date, caller: Caller | None = None, limit: int
    ) -> tuple[Passage, ...]:
        """The passages of `source` that `caller` may see on `as_of` whose text holds `text` as
        written, in document order, at most `limit`; none of a source the caller may not see (as
        `page`: decided from the caller's documents before any passage is read). `source` must
        be exactly an indexed source name, `text` is compared, never parsed."""
        caller = caller or Caller()
        # No indexed text or name holds a NUL (PostgreSQL stores none): such a read finds nothing,
        # rather than failing as if the index were broken.
        if not text or limit < 1 or "\x00" in text or "\x00" in source:
            return ()
        with self._reading() as store:
            mine = _source_scope(store, source, as_of, caller)
            # A limit past any index's size (2**64, say) is every passage, never an overflow.
            bounded = min(limit, MAX_NUMBER)
            found = store.passages_containing(mine, source, text, bounded) if mine.doc_ids else []
        return _passages(found)

    def last_page(self, source: str, *, as_of: date, caller: Caller | None = None) -> int | None:
        """The last page of `source` as the index holds it for `caller` on `as_of`
        (`Store.last_page`: its last page with text, or a later page awaiting OCR), or None: a
        source without pages, or one the caller may not see (as `page`: decided from the caller's
        documents before any passage is read). `source` is compared, never used as a path."""
        caller = caller or Caller()
        with self._reading() as store:
            mine = _source_scope(store, source, as_of, caller)
            return store.last_page(mine, source) if mine.doc_ids else None

    def documents(self, *, as_of: date, caller: Caller | None = None) -> list[ListedDocument]:
        """The documents listed for `caller` (`eligibility.listed`: those they could retrieve
        from on some date; a draft or retired document, another tenant's or a narrower access
        label's, never is), each marked in force on `as_of` or not, and one not in force yet
        with the date it will be (the README's access rules: not yet in force)."""
        caller = caller or Caller()
        with self._reading() as store:
            listed = sorted(store.listed(caller), key=lambda d: (d.series, d.effective or date.min, d.source))
            in_force = store.eligible(as_of, caller)
            found = store.found()
        return [
            ListedDocument(
                d,
                d.doc_id in in_force,
                *periods.of_document(d, found.get(d.doc_id)),
                in_force_from=d.effective if d.effective and d.effective > as_of else None,
            )
            for d in listed
        ]

    def status(self, caller: Caller | None = None) -> IndexStatus:
        """What the index holds, counting only what `caller` may see (None: the operator's view)."""
        with self._reading() as store:
            return status_for(store, caller)

    def reading(self) -> AbstractContextManager[Store]:
        """The open store for one read, under the library's lock (see `_reading`)."""
        return self._reading()

    @property
    def store(self) -> Store:
        """The open store, for what the methods above do not cover (evaluation reads documents,
        the digest and recorded citations). Not locked: for one thread at a time."""
        with self._lock:
            return self._current()

    # --- opening ---------------------------------------------------------------------------------

    @contextmanager
    def _reading(self) -> Iterator[Store]:
        """The store, for one read under the lock, released afterwards."""
        with self._lock:
            store = self._current()
            try:
                yield store
            finally:
                store.release()

    def _current(self) -> Store:
        """The open store; reopened when a refresh has committed since. Call with the lock held."""
        if self._store is not None and self._store.changed():
            self._store.close()
            self._store = None
        if self._store is None:
            self._store = open_index(self.db)  # a missing index is IndexMissingError
        return self._store


def _source_scope(store: Store, source: str, as_of: date, caller: Caller) -> Scope:
    """The documents of `source` that `caller` may see on `as_of` (none when it may see none, or
    none is named so): what a read of one source is held to, decided from the caller's documents
    before any passage is read, so a hidden source costs the same work as a missing one and not
    even timing tells them apart."""
    allowed = store.eligible(as_of, caller)
    return Scope(doc_ids=frozenset(doc_id for doc_id, d in allowed.items() if d.source == source))


def _passages(found: Sequence[StoredPassage]) -> tuple[Passage, ...]:
    """Stored passages as the API gives them, without the index's own ids."""
    return tuple(Passage.model_validate(p.model_dump(exclude={"id", "doc_id"})) for p in found)


class IndexContext:
    """What a value may read beyond its quote (`localqa.values.choosing.Context`), from the open index and
    as the caller may: a source's fiscal calendar, from its period (catalog or cover) and the years
    the question names; a page's other passages, where a table states its scale; the whole
    table a row is in, for a list or a count of its rows; and a document's passages that hold a
    word, where what an acronym stands for is defined. Each page read once per question."""

    def __init__(self, library: Library, as_of: date, caller: Caller, question: str) -> None:
        self.library = library
        self.as_of = as_of
        self.caller = caller
        self.years = tuple(m.year for m in periods.mentions(question))
        self._calendars: dict[str, FiscalCalendar] = {}
        self._pages: dict[tuple[str, int | None], tuple[Passage, ...]] = {}
        self._last_pages: dict[str, int | None] = {}

    def calendar(self, source: str) -> FiscalCalendar:
        if source not in self._calendars:
            with self.library.reading() as store:
                document = next(
                    (d for d in store.eligible(self.as_of, self.caller).values() if d.source == source), None
                )
                found = store.found().get(document.doc_id) if document else None
            # The catalog's label names the year ("FY2018"); the cover, when the catalog gives no
            # dates, says when it ended ("For the fiscal year ended February 2, 2019").
            listed = document.period if document else None
            cover = found.period if found else None
            end = (listed.end if listed else None) or (cover.end if cover else None)
            label = listed.label if listed else None
            self._calendars[source] = calendar_for(end, label, self.years)
        return self._calendars[source]

    def around(self, location: Location) -> Sequence[str]:
        passages = self._page(location)[:MAX_AROUND_PASSAGES]
        return [*([location.section] if location.section else []), *(p.text for p in passages)]

    def table(self, location: Location) -> VisibleTable:
        """The whole table `location` is a row of, as the caller may see its page (the page is
        read through `Library.page`, so a document the caller may not see gives no row)."""
        if location.kind is not Kind.TABLE or location.table is None:
            return VisibleTable()
        passages = self._page(location)
        rows = sorted(
            (p for p in passages if p.kind is Kind.TABLE and p.table == location.table),
            key=lambda p: p.row or 0,
        )
        runs_on = location.page is not None and bool(rows) and passages[-1] in rows
        return VisibleTable(rows=tuple(rows), runs_on=runs_on)

    def passages(self, location: Location) -> Sequence[Passage]:
        """The passages of `location`'s page, in page order, as the caller may see them (none of
        a document it may not see): a count of numbered entries reads them
        (`localqa.answers.numbered`)."""
        return self._page(location)

    def passages_containing(self, source: str, text: str, limit: int) -> Sequence[Passage]:
        """The passages of `source` holding `text` as written, in document order, at most
        `limit`, as the caller may see them (none of a document it may not see): what an acronym
        stands for is read from them (`localqa.answers.definitions`)."""
        return self.library.passages_containing(
            source, text, as_of=self.as_of, caller=self.caller, limit=limit
        )

    def last_page(self, source: str) -> int | None:
        """The last page of `source` as the caller may see it (`Library.last_page`; None for a
        document it may not see): a numbered run on it ends there (`localqa.answers.numbered`)."""
        if source not in self._last_pages:
            self._last_pages[source] = self.library.last_page(source, as_of=self.as_of, caller=self.caller)
        return self._last_pages[source]

    def _page(self, location: Location) -> tuple[Passage, ...]:
        """The passages of `location`'s page the caller may see (none when it may see none)."""
        key = (location.source, location.page)
        if key not in self._pages:
            try:
                page = self.library.page(location.source, location.page, as_of=self.as_of, caller=self.caller)
                self._pages[key] = page.passages
            except PageNotFoundError:
                self._pages[key] = ()
        return self._pages[key]


def search_parts(
    question: str,
    *,
    as_of: date,
    caller: Caller | None = None,
    parts: Sequence[str] = (),
    k: int | None = None,
    db: Db = DEFAULT_DB,
    settings: RetrievalSettings | None = None,
    documents: Sequence[str] = (),
) -> list[PartResult]:
    """`Library(db).search(...)` for one question. Keep a `Library` open to ask several."""
    with Library(db) as library:
        return library.search(
            question, as_of=as_of, caller=caller, parts=parts, k=k, settings=settings, documents=documents
        )


def answer(
    question: str,
    *,
    as_of: date,
    caller: Caller | None = None,
    parts: Sequence[str] = (),
    model: AnswerModel | str | None = None,
    k: int | None = None,
    db: Db = DEFAULT_DB,
    settings: RetrievalSettings | None = None,
    answer_settings: AnswerSettings | None = None,
    documents: Sequence[str] = (),
) -> Asked:
    """`Library(db).answer(...)` for one question. Keep a `Library` open to ask several."""
    with Library(db) as library:
        return library.answer(
            question,
            as_of=as_of,
            caller=caller,
            parts=parts,
            model=model,
            k=k,
            settings=settings,
            answer_settings=answer_settings,
            documents=documents,
        )


def index_status(db: Db = DEFAULT_DB, caller: Caller | None = None) -> IndexStatus:
    """`Library(db).status(caller)`: what the index holds, as `caller` may count it."""
    with Library(db) as library:
        return library.status(caller)
