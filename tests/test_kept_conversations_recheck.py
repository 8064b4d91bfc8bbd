"""A server-kept conversation is re-checked against what its caller may see now (issue 50.4):
round five's red team asked a question, had the catalog narrow the quoted document to staff,
and the next follow-up re-showed the quote on the ask page and sent it to the model that
rewrites follow-ups. Access never widens over time; on both backends."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from backends import BOTH, NewIndex
from fake_model import FakeModel, serving
from fastapi.testclient import TestClient

from localqa.indexing.index import refresh_index
from localqa.models.base import AnswerRequest
from localqa.serve.app import ServeConfig, create_app
from localqa.serve.auth import User, token_hash
from localqa.store import Db
from localqa.types import Caller

BACKENDS = BOTH
AS_OF = "2026-11-14"
QUOTE = "The Kestrel Quay mooring fee is 40 dollars per night."
QUESTION = "What is the Kestrel Quay mooring fee per night?"
USERS = (
    User("ann", token_hash("ann-token"), Caller()),
    User("sam", token_hash("sam-token"), Caller(role="staff")),
)


def signed(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {name}-token"}


def catalog(folder: Path, harbour_access: str) -> None:
    entries = f'["harbour-fees.md"]\naccess = "{harbour_access}"\n\n["loans.md"]\naccess = "public"\n'
    (folder / "catalog.toml").write_text(entries, encoding="utf-8")


@pytest.fixture
def library(tmp_path: Path, new_index: NewIndex) -> tuple[Path, Db]:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "harbour-fees.md").write_text(f"# Moorings\n\n{QUOTE}\n", encoding="utf-8")
    loans = "# Loans\n\nStandard loans last 21 days at every branch.\n"
    (folder / "loans.md").write_text(loans, encoding="utf-8")
    catalog(folder, "public")
    db = new_index()
    assert not refresh_index(folder, db, embed=False).failed
    return folder, db


@pytest.fixture
def fake() -> Iterator[FakeModel]:
    """A language model the server offers beside the extractive one (`model: "fake"`), for the
    follow-up that a model rewrites."""
    with serving(FakeModel()) as model:
        yield model


@pytest.fixture
def client(library: tuple[Path, Db], fake: FakeModel) -> Iterator[TestClient]:
    folder, db = library
    config = ServeConfig(db=db, pdfs=folder, model="extractive", users=USERS)
    with TestClient(create_app(config)) as test_client:
        yield test_client


def narrow(library: tuple[Path, Db]) -> None:
    """The catalog change between two turns: the quoted document becomes staff-only."""
    folder, db = library
    catalog(folder, "staff")
    assert not refresh_index(folder, db, embed=False).failed


def first_turn(client: TestClient, who: str, question: str = QUESTION) -> str:
    body = {"question": question, "as_of": AS_OF, "conversation": "new"}
    reply = client.post("/api/ask", json=body, headers=signed(who)).json()
    assert reply["parts"][0]["answer"]["quote"] == QUOTE, reply
    return str(reply["conversation"])


def first_turn_on_the_page(client: TestClient, who: str) -> str:
    page = client.get("/ask", params={"question": QUESTION, "as_of": AS_OF}, headers=signed(who))
    assert page.status_code == 200 and QUOTE in page.text, page.text
    found = re.search(r'name="conversation" value="([^"]+)"', page.text)
    assert found is not None
    return found.group(1)


def earlier_page(client: TestClient, who: str, key: str) -> str:
    page = client.get("/ask", params={"conversation": key, "as_of": AS_OF}, headers=signed(who))
    assert page.status_code == 200, page.text
    return page.text


def test_the_narrowed_documents_quote_is_not_shown_again(
    client: TestClient, library: tuple[Path, Db]
) -> None:
    key = first_turn_on_the_page(client, "ann")
    assert QUOTE in earlier_page(client, "ann", key)
    narrow(library)
    page = earlier_page(client, "ann", key)
    assert QUOTE not in page and "40 dollars" not in page
    assert "1 part(s) of this answer no longer shown" in page
    assert QUESTION in page  # what the caller typed is theirs: the turn stays, without its evidence


def test_a_caller_who_may_still_see_the_document_is_still_shown_its_quote(
    client: TestClient, library: tuple[Path, Db]
) -> None:
    key = first_turn_on_the_page(client, "sam")
    narrow(library)
    page = earlier_page(client, "sam", key)
    assert QUOTE in page and "no longer shown" not in page


def test_the_narrowed_documents_quote_is_not_carried_into_a_rewrite(
    client: TestClient, library: tuple[Path, Db], fake: FakeModel
) -> None:
    """The follow-up ("And the deposit?" after a question with no topic the rules can replace)
    goes to a language model with the earlier turns: after the narrowing, without the quote."""
    key = first_turn(client, "ann", "How much does mooring at Kestrel Quay cost per night?")
    narrow(library)
    sent: list[str] = []

    def reply(request: AnswerRequest) -> str:
        sent.append(json.dumps(request.messages))
        return json.dumps({"question": "How much is the deposit for mooring at Kestrel Quay?"})

    fake.always(reply)
    body = {"question": "And the deposit?", "as_of": AS_OF, "conversation": key, "model": "fake"}
    done = client.post("/api/ask", json=body, headers=signed("ann"))
    assert done.status_code in (200, 502), done.text
    rewriting = [text for text in sent if "Follow-up: And the deposit?" in text]
    assert rewriting, sent
    assert not [text for text in sent if "40 dollars" in text]
    assert "40 dollars" not in done.text



def test_a_kept_turns_route_never_names_a_narrowed_document() -> None:
    """A turn whose quote came from a document the caller may still see keeps its quote, but the
    line saying it was searched mainly in a narrowed document is not shown again: it names what
    the caller may no longer see."""
    from localqa.serve.conversations import _view_without
    from localqa.serve.pages import PartView
    from localqa.types import Answer, Kind, Location

    where = Location(
        source="loans.md", page=None, kind=Kind.PROSE, section="Loans", table=None, row=None, paragraph=1,
        effective=None,
    )  # fmt: skip
    answer = Answer.verified_quote("Standard loans last 21 days at every branch.", where)
    part = PartView(
        number=1, total=1, question="q", answer=answer, candidates=[], note=None,
        route="searched mainly in harbour-fees.md: the question names \"Kestrel Quay\"",
        route_sources=("harbour-fees.md",),
    )  # fmt: skip
    shown = _view_without({"parts": [part]}, frozenset({"loans.md"}))
    (kept,) = shown["parts"]
    assert kept.answer == answer and kept.route is None and shown["withheld"] == 0
    still = _view_without({"parts": [part]}, frozenset({"loans.md", "harbour-fees.md"}))
    assert still["parts"][0].route == part.route
