"""Round three (issue 29): each break a third adversarial pass found, reproduced the way it was
found, against the real CLI, the real web app and a real index. Every test here fails on the code
before the fix.

Nothing the caller may not see shows through timing (a hidden document's effective date); a
restored index is the one served; a PostgreSQL password is never printed; no single request or
file makes unbounded work (a glob, a giant page, a giant line); bad input gets its one clear
line; and a document not yet in force is treated alike everywhere.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path

import pytest
from backends import BOTH, NewIndex
from fastapi.testclient import TestClient

from localqa.index import open_index, write_documents
from localqa.serve.app import ServeConfig, create_app
from localqa.store import Db
from localqa.types import Caller, Document, Kind, Passage

BACKENDS = BOTH


def client_for(db: Db, folder: Path, **changes: object) -> TestClient:
    config = ServeConfig(db=db, pdfs=folder, **{"model": "extractive", **changes})  # type: ignore[arg-type]
    return TestClient(create_app(config))


# --- 1. timing never tells a hidden document's effective date ---------------------------------------

HIDDEN_DATES = [date(2026, 3, 1) + timedelta(days=n) for n in range(20)]  # hidden documents arrive
QUIET_DATES = [date(2026, 5, 1) + timedelta(days=n) for n in range(20)]  # nothing changes for anyone


def note(number: int, tenant: str, access: str, effective: date) -> tuple[Document, list[Passage]]:
    source = f"note-{tenant}-{number}.md"
    document = Document(
        doc_id=f"{tenant}/note-{number}",
        source=source,
        series=f"note-{number}",
        effective=effective,
        access=access,
        tenant=tenant,
    )
    text = f"Note {number} says the reading room opens at nine."
    return document, [Passage(kind=Kind.PROSE, source=source, page=None, text=text, paragraph=1)]


def hidden_dates_library(db: Db, hidden: int) -> Db:
    """One public document in force since January, and `hidden` documents the public may not see,
    each taking effect on one of HIDDEN_DATES: every other one staff-only, the others another
    tenant's."""
    documents = [note(0, "default", "public", date(2026, 1, 1))]
    for number in range(1, hidden + 1):
        tenant, access = ("default", "staff") if number % 2 else ("acme", "public")
        documents.append(note(number, tenant, access, HIDDEN_DATES[number % len(HIDDEN_DATES)]))
    write_documents(db, documents)
    return db


def test_a_sweep_of_dates_builds_one_eligible_set_for_what_the_caller_may_see(new_index: NewIndex) -> None:
    """The cache of eligible sets is keyed by what the caller may see: sweeping the as-of date
    over staff documents' and another tenant's effective dates hands out one set (one miss),
    exactly as for an index without them."""
    db = hidden_dates_library(new_index(), hidden=4)
    with open_index(db) as store:
        handed_out = {id(store.eligible(day, Caller())) for day in HIDDEN_DATES + QUIET_DATES}
        assert len(handed_out) == 1
        # Staff see their documents arrive: their set changes on those dates, and only then.
        staff = {id(store.eligible(day, Caller(role="staff"))) for day in HIDDEN_DATES + QUIET_DATES}
        assert len(staff) == 3


Route = Callable[[TestClient, date], int]


def search_route(client: TestClient, day: date) -> int:
    body = {"question": "When does the reading room open?", "as_of": day.isoformat()}
    return client.post("/api/search", json=body).status_code


def ask_route(client: TestClient, day: date) -> int:
    # Nothing matches: no model call (tens of milliseconds) drowns what the route itself costs.
    body = {"question": "Where are the zebras kept?", "as_of": day.isoformat()}
    return client.post("/api/ask", json=body).status_code


def pages_route(client: TestClient, day: date) -> int:
    return client.get(f"/api/pages/missing.pdf/1.png?as_of={day.isoformat()}").status_code


@pytest.fixture(scope="module")
def crowded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index with 12,000 documents the public may not see: rebuilding an eligible set costs
    milliseconds, so a rebuild on their dates would stand out of a sweep."""
    folder = tmp_path_factory.mktemp("crowded")
    return Path(hidden_dates_library(folder / "index.sqlite3", hidden=12_000))


@pytest.mark.sqlite_only
@pytest.mark.parametrize(
    ("route", "status"),
    [(search_route, 200), (ask_route, 200), (pages_route, 404)],
    ids=["search", "ask", "pages"],
)
def test_timing_a_sweep_of_dates_shows_no_hidden_effective_date(
    crowded: Path, route: Route, status: int
) -> None:
    """A public caller times one request (identical but for `as_of`) per date, as the pass did:
    dates on which hidden documents take effect, each followed by a date on which nothing changes
    for anyone, so that load on the machine falls on both alike. The medians of the two must
    agree: before the fix, each hidden date rebuilt the eligible set and took twice the time or
    more. Three rounds, each on a fresh server warmed by one request."""
    hidden: list[float] = []
    quiet: list[float] = []
    for _ in range(3):
        with client_for(crowded, crowded.parent) as client:
            assert route(client, date(2026, 2, 1)) == status
            for pair in zip(HIDDEN_DATES, QUIET_DATES, strict=True):
                for day, times in zip(pair, (hidden, quiet), strict=True):
                    started = time.perf_counter()
                    assert route(client, day) == status
                    times.append(time.perf_counter() - started)
    ratio = statistics.median(hidden) / statistics.median(quiet)
    assert ratio < 1.5, f"a date a hidden document takes effect took {ratio:.2f} times as long"
