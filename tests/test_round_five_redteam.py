"""Round five's adversarial pass over conversations, lists, comparisons, doubts and exact names:
each test reproduces one break the way it was found, and fails on the code before its fix."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from localqa.conversation import MAX_QUESTION_CHARS, Turn, rewrite
from localqa.serve.app import ServeConfig, create_app
from localqa.serve.auth import User, token_hash
from localqa.types import Caller

AS_OF = "2026-11-14"

# --- 1. a conversation never grows a question past the bound a typed one has ---------------------


def _names_follow_up() -> str:
    """A follow-up under the typed bound whose topic names 440 names: the topic rule carries the
    names of the topic it replaces, so each such turn added them all to the next question."""
    question = "And the flux of " + " ".join(f"N{j}x Co" for j in range(440)) + "?"
    assert len(question) < MAX_QUESTION_CHARS
    return question


def test_a_rewrite_never_grows_past_the_question_bound() -> None:
    caller = Caller()
    first = "What is the loan limit for EQ-314 at Acme Corp in FY2017?"
    turns = [Turn(first, first, caller)]
    for _ in range(8):  # before the fix: 1,373 characters, then 2,700, ... 10,000 by the eighth turn
        made = rewrite(_names_follow_up(), turns, caller)
        assert len(made.standalone) <= MAX_QUESTION_CHARS
        turns.append(Turn(made.question, made.standalone, caller))


USERS = (User("ann", token_hash("ann-token"), Caller()),)
SIGNED = {"Authorization": "Bearer ann-token"}


@pytest.fixture
def client(library_db: Path) -> Iterator[TestClient]:
    config = ServeConfig(db=library_db, pdfs=library_db.parent / "pdfs", model="extractive", users=USERS)
    with TestClient(create_app(config)) as test_client:
        yield test_client


def test_a_kept_conversation_asks_no_question_over_the_bound(client: TestClient) -> None:
    body = {"question": "What is the loan limit for EQ-314 at Acme Corp in FY2017?", "as_of": AS_OF}
    key = client.post("/api/ask", json={**body, "conversation": "new"}, headers=SIGNED).json()["conversation"]
    for _ in range(4):
        reply = client.post(
            "/api/ask", json={**body, "question": _names_follow_up(), "conversation": key}, headers=SIGNED
        )
        assert reply.status_code == 200, reply.text
        assert len(reply.json()["rewrite"]["understood_as"]) <= MAX_QUESTION_CHARS
