"""Which index a `--db` value names, and the one place that opens it.

A file path (a `Path`, or a string that is not a URL) is a SQLite index (`localqa.store.sqlite`,
the default). A `postgresql://` (or `postgres://`) URL is a shared PostgreSQL index
(`localqa.store.postgres`): libpq reads the rest of it, and the password from the URL,
`PGPASSWORD` or `~/.pgpass`. Any other value that looks like a URL is an error, never a file name
(`postgresql:` used to become a folder).

Credentials never leave this package: `describe()` is the form of a `--db` value that messages,
reports, runs and the web app show.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from localqa.errors import LocalQAError

if TYPE_CHECKING:
    from localqa.store.base import Store, Writer

Db = str | os.PathLike[str]  # a --db value: an index file, or a postgresql:// URL

POSTGRES_SCHEMES = ("postgresql", "postgres")
# A scheme of two letters or more (a one-letter one would be a Windows drive).
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):")
# URL query parameters libpq takes a secret from.
_SECRETS = frozenset({"password", "sslpassword"})


class DatabaseURLError(LocalQAError):
    """A --db value is a URL this localqa cannot use."""


def postgres_url(db: Db) -> str | None:
    """The URL when `db` names a PostgreSQL database, None when it is a file path (SQLite).
    Raises DatabaseURLError for any other URL. A `Path` is always a file path (it would have
    folded a URL's `//` anyway)."""
    if isinstance(db, os.PathLike):
        return None
    text = db
    scheme = _SCHEME.match(text)
    if scheme is None:
        return None
    name = scheme.group(1).lower()
    if name in POSTGRES_SCHEMES and text[scheme.end() :].startswith("//"):
        return text
    if name in POSTGRES_SCHEMES:
        raise DatabaseURLError(
            f"{describe(text)}: a PostgreSQL URL starts with {name}://, e.g. postgresql://user@host/dbname"
        )
    raise DatabaseURLError(
        f"{describe(text)}: unsupported database URL (scheme {name!r}); give an index file path "
        "(SQLite) or a postgresql://user@host/dbname URL (a file name with a colon: write ./NAME)"
    )


def describe(db: Db) -> str:
    """`db` as it may be shown: a file path as given; a URL without its password (in the user
    part or the query) and without a fragment."""
    text = os.fspath(db)
    if _SCHEME.match(text) is None:
        return text
    scheme = text.split(":", 1)[0]
    if not text[len(scheme) + 1 :].startswith("//"):
        return f"{scheme}:…"  # not a URL libpq reads: nothing of it is shown
    try:
        parts = urlsplit(text)
    except ValueError:  # a malformed host ("[::1")
        return f"{scheme}://…"
    user, at, hosts = parts.netloc.rpartition("@")
    netloc = f"{user.partition(':')[0]}@{hosts}" if at else hosts
    query = "&".join(
        piece
        for piece in parts.query.split("&")
        if piece and unquote(piece.partition("=")[0]).strip().lower() not in _SECRETS
    )
    shown = f"{scheme}://{netloc}{parts.path}"
    return f"{shown}?{query}" if query else shown


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
