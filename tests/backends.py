"""Both index backends for the tests (a pytest plugin, loaded by conftest.py).

A test module opts in to both with `BACKENDS = BOTH`: its tests that use the `backend` fixture,
directly or through `library_db`, `new_index` or `library_copy`, then run once on SQLite and once
on PostgreSQL (a throwaway server, started once per session: `tests/postgres_server.py`). A test
that is about SQLite itself (its file, FTS5, its lock file) is marked `sqlite_only`. Elsewhere
tests run on SQLite alone. Every test that needs the server is marked `postgres`.

`query(db, sql, *args)` runs read-only SQL on either (`?` placeholders; `IS ?` compares NULLs).
"""

from __future__ import annotations

import itertools
import re
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import psycopg
import pytest

from localqa.indexing.index import refresh_index
from localqa.store import Db, postgres_url

BOTH = ("sqlite", "postgresql")
REPO = Path(__file__).resolve().parent.parent
SAMPLE_PDFS = REPO / "pdfs"
_NUMBERS = itertools.count()

NewIndex = Callable[[], Db]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sqlite_only: about the SQLite backend itself; not run on PostgreSQL")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that needs the PostgreSQL server is marked `postgres` (`make test-fast` leaves
    them out): the PostgreSQL half of a module with `BACKENDS = BOTH`, and any test that asks for
    the `postgres` fixture itself."""
    for item in items:
        params = getattr(item, "callspec", None)
        on_postgres = params is not None and params.params.get("backend") == "postgresql"
        if on_postgres or "postgres" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    backends = getattr(metafunc.module, "BACKENDS", None)
    if backends and "backend" in metafunc.fixturenames:
        if metafunc.definition.get_closest_marker("sqlite_only"):
            backends = ("sqlite",)
        metafunc.parametrize("backend", backends, indirect=True, scope="session")


@pytest.fixture(scope="session")
def backend(request: pytest.FixtureRequest) -> str:
    """The index backend a test runs on ("sqlite" unless the module asks for both)."""
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """The session's throwaway PostgreSQL server (started on first use)."""
    import postgres_server

    with postgres_server.running() as server:
        yield server


@pytest.fixture
def new_index(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[NewIndex]:
    """Makes a place for a new, empty index on the test's backend: a file path, or the URL of a
    new database (dropped after the test)."""
    made: list[str] = []

    def make() -> Db:
        if backend == "sqlite":
            return tmp_path / f"index-{next(_NUMBERS)}" / "library.sqlite3"
        server = request.getfixturevalue("postgres")
        url: str = server.create_database()
        made.append(url.rsplit("/", 1)[1])
        return url

    yield make
    if made:
        server = request.getfixturevalue("postgres")
        for name in made:
            server.drop_database(name)


_LIBRARIES: dict[str, Db] = {}  # the sample library's index, per backend, built by this process


@pytest.fixture(scope="session")
def library_db(backend: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Db:
    """The sample library indexed once per test session and backend (read-only: do not modify).
    Once per process, not per set-up of this fixture: pytest sets a fixture of a parametrized
    session fixture up again when the tests of the two backends interleave (as they do across
    pytest-xdist's workers), and the database's name is taken by then."""
    if backend in _LIBRARIES:
        return _LIBRARIES[backend]
    folder = tmp_path_factory.mktemp("library")
    shutil.copytree(SAMPLE_PDFS, folder / "pdfs", ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    db: Db = folder / "library.sqlite3"
    if backend == "postgresql":
        server = request.getfixturevalue("postgres")
        db = server.create_database(name="library")
    report = refresh_index(folder / "pdfs", db, embed=False)
    assert not report.failed, report.problems
    if backend == "postgresql":
        # Copies come from a database nobody reads (a template must have no other connections).
        server.create_database(template="library", name="library_template")
    _LIBRARIES[backend] = db
    return db


@pytest.fixture
def library_copy(
    library_db: Db, backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Db]:
    """A private, writable copy of the sample library's index."""
    if backend == "sqlite":
        db = tmp_path / "index" / "library.sqlite3"
        db.parent.mkdir()
        shutil.copy(Path(library_db), db)
        yield db
        return
    server = request.getfixturevalue("postgres")
    url: str = server.create_database(template="library_template")
    yield url
    server.drop_database(url.rsplit("/", 1)[1])


def query(db: Db, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    """Read-only SQL on either backend, written for SQLite (`?`; `IS ?` also matches NULL)."""
    url = postgres_url(db)
    if url is None:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
            return [tuple(r) for r in connection.execute(sql, args).fetchall()]
    sql = re.sub(r"\bIS \?", "IS NOT DISTINCT FROM ?", sql).replace("%", "%%").replace("?", "%s")
    with psycopg.connect(url) as connection:
        connection.read_only = True
        return [tuple(r) for r in connection.execute(sql, args).fetchall()]


def execute(db: Db, sql: str, *args: Any) -> None:
    """Write SQL on either backend (`?` placeholders): for tests that damage an index."""
    url = postgres_url(db)
    if url is None:
        with closing(sqlite3.connect(db)) as connection, connection:
            connection.execute(sql, args)
        return
    with psycopg.connect(url) as connection:
        connection.execute(sql.replace("?", "%s"), args)


def contents(db: Db) -> Any:
    """Everything an index holds, to compare before and after: the file's bytes, or every
    table's rows."""
    url = postgres_url(db)
    if url is None:
        return Path(db).read_bytes()
    tables = ("meta", "files", "documents", "passages", "identifiers", "postings", "embeddings", "migrations")
    return {table: sorted(map(str, query(db, f"SELECT * FROM {table}"))) for table in tables}
