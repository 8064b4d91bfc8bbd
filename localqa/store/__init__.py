"""Which index a `--db` value names (`localqa.store.address`, whose names are re-exported here),
and the one place that opens it: a SQLite file (`localqa.store.sqlite`) or a PostgreSQL database
(`localqa.store.postgres`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from localqa.errors import LocalQAError
from localqa.store.address import POSTGRES_SCHEMES as POSTGRES_SCHEMES
from localqa.store.address import DatabaseURLError as DatabaseURLError
from localqa.store.address import Db as Db
from localqa.store.address import describe as describe
from localqa.store.address import password_to_environment as password_to_environment
from localqa.store.address import postgres_url as postgres_url
from localqa.store.address import redact as redact

if TYPE_CHECKING:
    from localqa.store.base import Store, Writer


def open_store(db: Db) -> Store:
    """Open an existing index for reading (IndexMissingError when there is none)."""
    url = postgres_url(db)
    if url is not None:
        _need_psycopg()
        from localqa.store.postgres import open_store as open_postgres

        return open_postgres(url)
    from localqa.store.sqlite import open_store as open_sqlite

    return open_sqlite(Path(db))


def writing(
    db: Db, *, rebuild: bool = False, wait: Callable[[str], None] | None = None
) -> AbstractContextManager[Writer]:
    """One write transaction on the index `db` (created if missing), holding its writer lock:
    readers see the index as it was until the block completes (see `Writer`). `wait` is told
    when another writer holds the lock and this one waits for it."""
    url = postgres_url(db)
    if url is not None:
        _need_psycopg()
        from localqa.store.postgres import writing as write_postgres

        return write_postgres(url, rebuild=rebuild, wait=wait)
    from localqa.store.sqlite import writing as write_sqlite

    return write_sqlite(index_file(Path(db)), rebuild=rebuild, wait=wait)


def index_file(path: Path) -> Path:
    """The file an index path names, links followed: `--db` may be a link to the index that
    `serve` reads. Followed once, here, the writer's lock and its replacement of the file act on
    that file, which every reader opens; replacing the link itself would leave the readers on
    the old index and give two names two locks. (Refusing links would forbid a common layout,
    an index kept elsewhere and linked into place.)"""
    return path.resolve()


@contextmanager
def temporary(beside: Db | None) -> Iterator[Db]:
    """Where a throwaway index goes (a suite's own documents), deleted afterwards: a file in a
    temporary folder, or, beside a PostgreSQL index, a schema of its own in the same database
    (so that `localqa eval --db postgresql://…` exercises the server)."""
    url = None if beside is None else postgres_url(beside)
    if url is not None:
        _need_psycopg()
        from localqa.store.postgres import temporary_schema

        with temporary_schema(url) as inside:
            yield inside
        return
    with tempfile.TemporaryDirectory(prefix="localqa-") as folder:
        yield Path(folder) / "index.sqlite3"


def _need_psycopg() -> None:
    """The PostgreSQL store needs the `postgres` extra."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise LocalQAError("a postgresql:// --db needs psycopg: pip install 'localqa[postgres]'") from None
