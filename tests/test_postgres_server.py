"""The throwaway PostgreSQL the tests start (tests/postgres_server.py), from a copy of the
wheel's programs: what a checkout the server's user cannot reach needs (issue 32: as root the
server runs as `nobody`, and a clone under /root or in a 0700 folder is out of its reach)."""

from __future__ import annotations

import postgres_server
import psycopg
import pytest

pytestmark = pytest.mark.postgres  # a server of its own, not the session's


def test_the_server_starts_from_a_copy_of_its_programs_and_loads_pgvector() -> None:
    with postgres_server.running(copy_binaries=True) as server:
        copied = server.folder / "pgserver" / "pginstall" / "bin" / "postgres"
        assert copied.is_file() and postgres_server.binaries() != copied.parent
        with psycopg.connect(server.url(postgres_server.TEMPLATE)) as db:
            (distance,) = db.execute("SELECT '[1,2]'::vector <#> '[3,4]'::vector").fetchone() or (None,)
        assert distance == -11.0
