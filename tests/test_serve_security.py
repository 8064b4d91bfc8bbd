"""`localqa serve` against another web page: every route, enumerated from the app, is behind the
same gate (its own Host, no cross-site request, a signed-in caller), every response forbids
cross-origin reading, the JSON API takes JSON only, and a page image is no oracle for text the
caller may not see. The browser-level check of the same is in test_browser.py."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from httpx import Response
from starlette.routing import Mount

from localqa.serve.app import ServeConfig, create_app
from localqa.serve.auth import User, token_hash
from localqa.store.sqlite import SQLiteStore
from localqa.types import Caller

AS_OF = "2026-11-14"
STAFF = "staff-procedures.pdf"
ALARM = "The alarm code is changed every 90 days."
LOANS = "Standard book loans last 21 days."  # library-handbook.pdf, page 1: a public sentence
OWN = "127.0.0.1:8000"
TOKEN = "clerk-token"
STAFF_OPERATOR = (User("clerk", token_hash(TOKEN), Caller(role="staff"), operator=True),)
SIGNED_IN = {"Authorization": f"Bearer {TOKEN}"}


def make_app(db: Path, **changes: Any) -> FastAPI:
    return create_app(ServeConfig(db=db, pdfs=db.parent / "pdfs", model="extractive", **changes))


@pytest.fixture
def client(library_db: Path) -> Iterator[TestClient]:
    with TestClient(make_app(library_db)) as test_client:
        yield test_client


@pytest.fixture
def staff(library_db: Path) -> Iterator[TestClient]:
    """A loopback server run as staff (`localqa serve --role staff`): the case the issue attacks."""
    with TestClient(make_app(library_db, caller=Caller(role="staff"))) as test_client:
        yield test_client


# --- every route, from the app itself ---------------------------------------------------------


def every_route(app: FastAPI) -> list[Any]:
    """The app's routes, those of included routers among them."""
    try:
        from fastapi.routing import iter_route_contexts  # FastAPI 0.16x includes routers lazily
    except ImportError:  # before it, app.routes is already flat
        return list(app.routes)
    return list(iter_route_contexts(app.routes))


def every_request(app: FastAPI) -> list[tuple[str, str]]:
    """(method, path) for each route the app has: path parameters filled with "1", a mount
    with a file name under it. No list of routes is kept here: a new route is checked too."""
    found = []
    for route in every_route(app):
        path = re.sub(r"\{[^}]*\}", "1", route.path or "")
        if isinstance(getattr(route, "original_route", route), Mount):
            found.append(("GET", f"{path}/style.css"))
            continue
        assert route.path_regex.match(path), f"{path} does not reach {route}"
        found += [(method, path) for method in sorted(route.methods or ()) if method != "HEAD"]
    assert len(found) >= 9  # the pages, the API and the stylesheet at least
    return found


def send(client: TestClient, method: str, path: str, headers: dict[str, str]) -> Response:
    body = {"json": {"question": "How long do standard book loans last?"}} if method == "POST" else {}
    return client.request(method, path, headers=headers, follow_redirects=False, **body)  # type: ignore[arg-type]


def test_every_route_refuses_a_caller_who_has_not_signed_in(library_db: Path) -> None:
    app = make_app(library_db, users=STAFF_OPERATOR, runs=library_db.parent)
    with TestClient(app) as client:
        for method, path in every_request(app):
            refused = send(client, method, path, {})
            assert refused.status_code == 401, (method, path, refused.status_code)
            assert "WWW-Authenticate" in refused.headers
            wrong = send(client, method, path, {"Authorization": "Bearer guess"})
            assert wrong.status_code == 401, (method, path)
            signed_in = send(client, method, path, SIGNED_IN)
            assert signed_in.status_code not in (401, 403, 421), (method, path, signed_in.text)


@pytest.mark.parametrize(
    "headers",
    [
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},  # another port of the same host is the same site
        {"Origin": "http://evil.example"},
        {"Origin": "http://127.0.0.1:9000"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site", "Origin": f"http://{OWN}"},
    ],
    ids=["cross-site", "same-site", "foreign-origin", "other-port-origin", "null-origin", "cross-own-origin"],
)
@pytest.mark.parametrize("signed", [False, True], ids=["no-users", "signed-in"])
def test_every_route_refuses_a_cross_site_request(
    library_db: Path, headers: dict[str, str], signed: bool
) -> None:
    changes: dict[str, Any] = {"users": STAFF_OPERATOR} if signed else {"allowed_hosts": frozenset({OWN})}
    app = make_app(library_db, runs=library_db.parent, **changes)
    with TestClient(app, base_url=f"http://{OWN}") as client:
        for method, path in every_request(app):
            response = send(client, method, path, {**headers, **(SIGNED_IN if signed else {})})
            assert response.status_code == 403, (method, path, response.status_code)
            assert "cross-site" in response.text
            assert response.headers["cross-origin-resource-policy"] == "same-origin"


def test_every_route_answers_only_to_the_servers_own_names(library_db: Path) -> None:
    app = make_app(library_db, allowed_hosts=frozenset({OWN}), runs=library_db.parent)
    with TestClient(app, base_url=f"http://{OWN}") as client:
        for method, path in every_request(app):
            foreign = send(client, method, path, {"Host": "evil.example:8000"})
            assert foreign.status_code == 421, (method, path, foreign.status_code)
            own = send(client, method, path, {"Sec-Fetch-Site": "same-origin", "Origin": f"http://{OWN}"})
            assert own.status_code not in (401, 403, 421), (method, path, own.text)


def test_every_response_forbids_cross_origin_reading(library_db: Path) -> None:
    app = make_app(library_db, runs=library_db.parent)
    with TestClient(app) as client:
        for method, path in every_request(app):
            response = send(client, method, path, {})
            assert response.headers["cross-origin-resource-policy"] == "same-origin", (method, path)
        page = client.get(f"/api/pages/library-handbook.pdf/1.png?quote={LOANS}&as_of={AS_OF}")
        assert page.status_code == 200
        for response in (page, client.get("/no-such-route"), client.get("/api/pages/x.pdf/1.png")):
            assert response.headers["cross-origin-resource-policy"] == "same-origin"


@pytest.mark.parametrize(
    "headers",
    [{}, {"Sec-Fetch-Site": "same-origin"}, {"Sec-Fetch-Site": "none"}, {"Origin": "http://testserver"}],
    ids=["no-fetch-metadata", "same-origin", "typed-address", "own-origin"],
)
def test_a_same_origin_request_is_served(client: TestClient, headers: dict[str, str]) -> None:
    assert client.get("/library", headers=headers).status_code == 200
    posted = client.post("/api/search", json={"question": "How long do book loans last?"}, headers=headers)
    assert posted.status_code == 200


# --- the page image is no oracle ------------------------------------------------------------------


def test_a_cross_site_image_cannot_tell_a_true_quote_from_a_false_one(staff: TestClient) -> None:
    """The issue's reproduction: an <img> on another site asks a server run as staff whether a
    piece of text is on the page; it got 200 for a substring of a passage and 422 otherwise."""
    cross = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Dest": "image", "Sec-Fetch-Mode": "no-cors"}
    answers = [
        staff.get(f"/api/pages/{STAFF}/1.png", params={"quote": quote, "as_of": AS_OF}, headers=cross)
        for quote in ("alarm code is changed every 90 ", "alarm code is changed every 91 ")
    ]
    assert [a.status_code for a in answers] == [403, 403]
    assert answers[0].content == answers[1].content
    assert answers[0].headers == answers[1].headers


@pytest.mark.parametrize(
    "quote",
    ["alarm code is changed every 90 ", "The alarm code", "90 days.", "every 90 days. The branch manager"],
)
def test_only_a_whole_sentence_or_row_is_highlighted(staff: TestClient, quote: str) -> None:
    """A piece of a sentence is refused exactly like text that is not on the page, so even a
    caller who may see the page gets no substring oracle from it (the answer stage's rule)."""
    params = {"as_of": AS_OF}
    part = staff.get(f"/api/pages/{STAFF}/1.png", params={**params, "quote": quote})
    absent = staff.get(
        f"/api/pages/{STAFF}/1.png", params={**params, "quote": "The alarm code is never changed."}
    )
    whole = staff.get(f"/api/pages/{STAFF}/1.png", params={**params, "quote": ALARM})
    assert whole.status_code == 200 and whole.headers["content-type"] == "image/png"
    assert part.status_code == absent.status_code == 422
    refusal = f"the quote is not a whole sentence or table row on page 1 of {STAFF!r}; nothing to highlight"
    assert part.json() == absent.json() == {"error": refusal}


def test_a_table_row_is_a_whole_quote(client: TestClient) -> None:
    row = (
        "Equipment loan limits: Item ID: EQ-314; Item: Portable scanner; Loan limit: 45 minutes; "
        "Deposit: 20 dollars"
    )
    source = "/api/pages/equipment-policy-2026-11-01.pdf/1.png"
    assert client.get(source, params={"quote": row, "as_of": AS_OF}).status_code == 200
    assert client.get(source, params={"quote": row[:-3], "as_of": AS_OF}).status_code == 422


@pytest.mark.parametrize("quote", [None, ALARM, "alarm code"], ids=["no-quote", "whole", "part"])
def test_a_hidden_page_image_is_byte_for_byte_a_missing_one(client: TestClient, quote: str | None) -> None:
    """Status, headers and body: a name of the same length that is not in the index."""
    missing_name = "staff-procedures.pdx"
    assert len(missing_name) == len(STAFF)
    params = {"as_of": AS_OF, **({"quote": quote} if quote is not None else {})}
    hidden = client.get(f"/api/pages/{STAFF}/1.png", params=params)
    missing = client.get(f"/api/pages/{missing_name}/1.png", params=params)
    assert hidden.status_code == missing.status_code == 404
    assert hidden.headers == missing.headers
    assert hidden.content == missing.content.replace(missing_name.encode(), STAFF.encode())


def test_a_hidden_page_is_never_read_from_the_index(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same work for a hidden document as for a missing one (so no timing tells them apart):
    visibility is decided from the caller's eligible documents, before any passage is read."""
    read: list[tuple[str, int | None]] = []
    real = SQLiteStore.page_passages

    def counting(self: SQLiteStore, source: str, page: int | None) -> Any:
        read.append((source, page))
        return real(self, source, page)

    monkeypatch.setattr(SQLiteStore, "page_passages", counting)
    assert client.get(f"/api/pages/{STAFF}/1.png", params={"as_of": AS_OF}).status_code == 404
    assert client.get("/api/pages/no-such-file.pdf/1.png", params={"as_of": AS_OF}).status_code == 404
    assert read == []
    assert client.get("/api/pages/library-handbook.pdf/1.png", params={"as_of": AS_OF}).status_code == 200
    assert read == [("library-handbook.pdf", 1)]


# --- the JSON API takes JSON only ------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", ["/api/ask", "/api/search"])
def test_a_cross_site_text_plain_post_is_refused(staff: TestClient, endpoint: str) -> None:
    """The issue's reproduction: a form or a no-cors fetch on any web page can POST text/plain
    without a preflight; it was answered."""
    body = json.dumps({"question": "When is the alarm code changed?", "as_of": AS_OF})
    response = staff.post(
        endpoint,
        content=body.encode(),
        headers={
            "Content-Type": "text/plain",
            "Origin": "http://evil.example",
            "Sec-Fetch-Site": "cross-site",
        },
    )
    assert response.status_code == 403
    assert "alarm" not in response.text


@pytest.mark.parametrize("endpoint", ["/api/ask", "/api/search"])
@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "text/plain; charset=utf-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data",
        None,
    ],
)
def test_the_api_takes_json_only(client: TestClient, endpoint: str, content_type: str | None) -> None:
    body = json.dumps({"question": "How long do book loans last?", "as_of": AS_OF}).encode()
    headers = {"Content-Type": content_type} if content_type else {}
    response = client.post(endpoint, content=body, headers=headers)
    assert response.status_code == 415
    assert response.json() == {"error": "send the body as JSON, with 'Content-Type: application/json'"}
    for accepted in ("application/json", "application/json; charset=utf-8", "Application/JSON"):
        assert client.post(endpoint, content=body, headers={"Content-Type": accepted}).status_code == 200
