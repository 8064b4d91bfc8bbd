"""Extracting many files at once, in worker processes: PDF extraction is pure-Python work that a
second core halves, and one process cannot use two cores.

Results come back in the order the files were given (`Executor.map`), whatever order the workers
finish in, so an index built with one job or with four is the same index.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pymupdf

from localqa.extract import Extracted, Unreadable, extract_file
from localqa.settings import machine_threads


@dataclass(frozen=True)
class Job:
    path: Path
    name: str
    doc_source: str

    @cached_property
    def pages(self) -> int:
        """How much work it is, for progress: a PDF's pages; any other file counts as one."""
        if self.path.suffix.lower() != ".pdf":
            return 1
        try:
            with pymupdf.open(self.path) as document:
                return max(1, int(document.page_count))
        except Exception:  # unreadable: extraction reports it; for progress it is one unit of work
            return 1


Outcome = Extracted | Unreadable
POOL_FROM_PAGES = 40  # less work than this is extracted in this process


default_jobs = machine_threads  # one worker per core this process may run on


def extract_many(
    jobs: Sequence[Job], workers: int, extract: Callable[[Path, str, str], Extracted] = extract_file
) -> Iterator[tuple[Job, Outcome]]:
    """Each job's extraction (or why it failed), in the order of `jobs`. Small work runs in this
    process: starting a worker costs about as much as extracting a dozen pages."""
    if workers <= 1 or len(jobs) <= 1 or sum(job.pages for job in jobs) < POOL_FROM_PAGES:
        for job in jobs:
            yield job, _run(extract, job)
        return
    # "spawn", not "fork": the process may hold threads (an embedding model, a web server) that a
    # forked child would inherit in whatever state they were.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        max_workers=min(workers, len(jobs)), mp_context=context, initializer=_end_with_parent
    ) as pool:
        yield from zip(jobs, pool.map(_run_job, jobs), strict=True)


def _end_with_parent() -> None:
    """In each worker: end it when the process that started it ends, however that ends. A SIGKILL
    or SIGTERM gives the pool no chance to stop its workers, and a worker holds both ends of the
    pipe it waits on for work, so it would wait forever, holding its memory. Joining the parent
    waits on a pipe only the parent writes to, which closes when it is gone."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        parent.join()
        os._exit(1)  # nothing of the worker's is worth keeping: its results have nowhere to go

    threading.Thread(target=watch, name="localqa-parent", daemon=True).start()


def _run(extract: Callable[[Path, str, str], Extracted], job: Job) -> Outcome:
    try:
        return extract(job.path, job.name, job.doc_source)
    except Unreadable as error:
        return error
    except Exception as error:  # one file, however strange, never ends the refresh
        return Unreadable(f"cannot be extracted ({type(error).__name__}: {error}); check the file")


def _run_job(job: Job) -> Outcome:
    return _run(extract_file, job)
