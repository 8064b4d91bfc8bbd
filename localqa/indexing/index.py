"""Building and opening the index.

`refresh_index` brings the index in line with a folder of sources by content hash: only added or
changed files (PDFs, Markdown/text files, OCR sidecars) are extracted; removed ones are dropped.
It plans first (`localqa.indexing.plan`: what the folder holds, each document's metadata, what to
extract), then extracts, then hands everything to the store's writer, which writes in place and
commits the lexical index as soon as extraction ends: a reader sees the old index or the new one,
and a run that dies leaves the index as of its last commit. The vectors follow, committed in
batches: questions can be asked meanwhile (retrieval embeds what is still missing at question
time), and an interrupted run's successor starts where it stopped.

Bad input loses nothing: a source that cannot be indexed now (unreadable, bad catalog entry, a
document id claimed twice) is reported and keeps its previously indexed version, if it had one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from localqa.indexing.catalog import Problem
from localqa.retrieval import eligibility
from localqa.store import Db, describe, open_store, writing
from localqa.store.base import IndexedState, IndexStatus, Progress, Store, WriteSummary
from localqa.types import Caller, Document, Passage

if TYPE_CHECKING:
    from localqa.extract.pool import Job

# Refreshing imports extraction (PyMuPDF) and the embedding model when it runs: opening an index
# to ask it something needs neither (`import localqa.indexing.index` stays light).

__all__ = [
    "Progress",
    "Quietly",
    "RefreshEvents",
    "RefreshReport",
    "open_index",
    "refresh_index",
    "status_for",
    "write_documents",
]


class ProgressOf:
    """Extraction progress in pages (a PDF's pages, one for any other file), so that a progress
    bar can show pages per second and an honest time left."""

    def __init__(self, jobs: list[Job], report: Progress | None) -> None:
        self._report = report
        self._pages = {job.name: job.pages for job in jobs} if report else {}
        self._total = sum(self._pages.values())
        self._done = 0
        if report and jobs:
            report(0, self._total, jobs[0].name)

    def done(self, job: Job) -> None:
        if self._report:
            self._done += self._pages[job.name]
            self._report(self._done, self._total, job.name)


class RefreshEvents(Protocol):
    """What `refresh_index` tells its caller while it runs (`localqa index` shows all of it)."""

    def waiting(self, why: str) -> None:
        """Another run holds the index: this one waits for it, and says why."""

    def extracting(self, done: int, total: int, item: str) -> None:
        """Extraction progress, in pages (a PDF's pages; one for any other file)."""

    def searchable(self, summary: WriteSummary, to_embed: int) -> None:
        """The lexical index is committed, so questions can be asked from now on, and `to_embed`
        passages are about to be embedded (told only when embeddings are computed)."""

    def embedding(self, done: int, total: int, item: str) -> None:
        """Embedding progress, in passages."""


class Quietly:
    """`RefreshEvents` that tell nobody: the default, and a base for a caller that wants only
    some of them."""

    def waiting(self, why: str) -> None:
        pass

    def extracting(self, done: int, total: int, item: str) -> None:
        pass

    def searchable(self, summary: WriteSummary, to_embed: int) -> None:
        pass

    def embedding(self, done: int, total: int, item: str) -> None:
        pass


@dataclass
class RefreshReport:
    db: str  # the index as it may be shown (`localqa.store.describe`)
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    problems: list[Problem] = field(default_factory=list)
    documents: int = 0
    passages: int = 0
    embedded: int = 0
    digest: str = ""

    @property
    def failed(self) -> bool:
        return any(not p.warning for p in self.problems)


def refresh_index(
    folder: Path,
    db: Db,
    *,
    rebuild: bool = False,
    embed: bool | None = None,
    jobs: int | None = None,
    events: RefreshEvents | None = None,
) -> RefreshReport:
    """Bring the index `db` (a file, or a postgresql:// URL) up to date with `folder`. See the
    module docstring.

    `embed`: compute sentence embeddings for passages that lack them (needs the `semantic`
    extra); None: when the extra is installed (`embeddings.enabled_by_default`). An index that
    had embeddings and is refreshed without them loses them (and says so): a vector missing for
    some passages would hide them from semantic ranking. `jobs`: worker processes for extraction
    (default: the cores this process may use). `events` is told what happens as it happens
    (waiting for another run, progress, the moment the index becomes searchable)."""
    from localqa import extract
    from localqa.extract.bound import bounded
    from localqa.extract.pool import Job, default_jobs, extract_many
    from localqa.indexing.catalog import load_catalog
    from localqa.indexing.plan import outcome, plan_refresh, scan_folder, unlabelled_warning
    from localqa.retrieval import embeddings

    told = events or Quietly()
    with writing(db, rebuild=rebuild, wait=told.waiting) as writer:
        # Everything the run writes is read while it holds the writer lock.
        catalog = load_catalog(folder)
        scan = scan_folder(folder)
        indexed = writer.indexed()
        plan = plan_refresh(scan, catalog, indexed, rebuild=rebuild)
        embedding = embed if embed is not None else embeddings.enabled_by_default()
        if embedding:
            embeddings.require()  # before anything is written
        # An earlier encoder's vectors are never compared with this one's: they are dropped, and
        # the passages embedded again (below) if embedding.
        former = embeddings.earlier_encoders(writer)
        for model in former:
            writer.drop_vectors(model)
        had_vectors = writer.has_vectors(embeddings.MODEL_NAME) or bool(former)
        writer.remove_files(plan.remove)
        writer.put_documents(plan.documents.values(), plan.blocked)
        extracted: dict[str, tuple[int, ...]] = {}
        empty: set[str] = set()
        failed: set[str] = set()
        problems: list[Problem] = []
        units = {unit.name: unit for unit in plan.extract}
        tasks = [Job(u.path, u.name, u.doc_source) for u in plan.extract]
        work = ProgressOf(tasks, told.extracting)
        workers = default_jobs() if jobs is None else jobs
        # Sources first; then the sidecars of those that could be read (a sidecar of a PDF that
        # cannot be read now waits for it, keeping the document's previous version whole).
        for sources in (True, False):
            todo = [t for t in tasks if (t.name == t.doc_source) is sources and t.doc_source not in failed]
            for task, result in extract_many(todo, workers, extract.extract_file):
                work.done(task)
                unit = units[task.name]
                if isinstance(result, extract.Unreadable):
                    problems.append(Problem(unit.name, str(result)))
                    failed.add(unit.name)
                    continue
                problems += result.problems
                passages, split = bounded(result.passages)
                if split:
                    problems.append(_split_problem(unit.name, split))
                doc_id = plan.documents[unit.doc_source].doc_id
                writer.replace_unit(
                    unit.name, unit.sha256, doc_id, passages, result.pages_without_text, result.found
                )
                extracted[unit.name] = result.pages_without_text
                if not result.passages:
                    empty.add(unit.name)
        unlabelled = unlabelled_warning(
            catalog, folder, [s for s in plan.public_by_default if s not in failed]
        )  # said of the files indexed: one that cannot be read is named for that
        problems += [unlabelled] if unlabelled else []
        writer.record_catalog(scan.catalog_sha256)
        if embedding:
            writer.expect_vectors(embeddings.MODEL_NAME)
            if former:
                problems.append(
                    Problem(
                        describe(db),
                        f"its embeddings were computed by an earlier encoder ({', '.join(former)}); "
                        f"every passage is embedded again with {embeddings.MODEL_NAME}",
                        warning=True,
                    )
                )
        elif had_vectors:
            writer.drop_vectors(embeddings.MODEL_NAME)
            problems.append(
                Problem(
                    describe(db),
                    "embeddings were not computed this time, so the ones it had were removed "
                    "(semantic and hybrid retrieval need every passage's); run 'localqa index --embed'",
                    warning=True,
                )
            )
        summary = writer.finish()
        writer.commit()
        embedded = 0
        if embedding:
            embedded = embeddings.embed_missing(
                writer, told.embedding, lambda missing: told.searchable(summary, missing)
            )
    changes = outcome(scan, plan, IndexedState() if rebuild else indexed, extracted, failed, problems, empty)
    return RefreshReport(
        db=describe(db),
        added=changes.added,
        changed=changes.changed,
        removed=changes.removed,
        unchanged=changes.unchanged,
        problems=changes.problems,
        documents=summary.documents,
        passages=summary.passages,
        embedded=embedded,
        digest=summary.digest,
    )


def _split_problem(name: str, split: int) -> Problem:
    """The warning for a file whose passages had to be split (`localqa.extract.bound`)."""
    from localqa.extract.bound import MAX_PASSAGE_CHARS, MAX_SENTENCE_CHARS

    many = f"{split} passages" if split > 1 else "1 passage"
    return Problem(
        name,
        f"{many} over {MAX_PASSAGE_CHARS} characters, or with a sentence or row over {MAX_SENTENCE_CHARS}, "
        f"{'were' if split > 1 else 'was'} split into passages within those bounds; check that the file's "
        "text has its paragraph breaks",
        warning=True,
    )


def write_documents(
    db: Db, documents: Iterable[tuple[Document, Iterable[Passage]]], *, embed: bool = False
) -> None:
    """Build an index straight from documents and passages, skipping extraction: for benchmarks
    and synthetic corpora. Replaces the index `db`, atomically like `refresh_index`
    (the lexical index in one commit, then the vectors)."""
    from localqa.retrieval import embeddings

    pairs = [(document, list(passages)) for document, passages in documents]
    with writing(db, rebuild=True) as writer:
        writer.put_documents([document for document, _ in pairs], ())
        for document, passages in pairs:
            sha = hashlib.sha256(document.source.encode()).hexdigest()
            writer.replace_unit(document.source, sha, document.doc_id, passages, ())
        writer.finish()
        writer.commit()
        if embed:
            embeddings.embed_missing(writer)


def open_index(db: Db) -> Store:
    """Open an existing index for reading (read-only, so a query can never modify it)."""
    return open_store(db)


def status_for(store: Store, caller: Caller | None) -> IndexStatus:
    """What the index holds. With a caller, only the documents that caller may see (their tenant,
    an access label their role may see; any version or status) are counted; None is the
    operator's view of everything."""
    if caller is None:
        return store.status(None)
    return store.status(frozenset(d.doc_id for d in eligibility.visible(store.documents(), caller)))
