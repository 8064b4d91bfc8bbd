"""Conversations over the API (`POST /api/ask` with `turns` or a `conversation` id): a follow-up is
rewritten and recorded, and a conversation is its user's and tenant's only. The style of
test_serve_security.py: a users file with tokens, TestClient."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from localqa.conversation import Turn
from localqa.serve.app import ServeConfig, create_app
from localqa.serve.auth import User, token_hash
from localqa.serve.conversations import Conversations, UnknownConversationError
from localqa.types import Caller

AS_OF = "2026-11-14"
USERS = (
    User("ann", token_hash("ann-token"), Caller()),
    User("bob", token_hash("bob-token"), Caller()),
    User("eve", token_hash("eve-token"), Caller(tenant="acme")),
)


def signed(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {name}-token"}


@pytest.fixture
def client(library_db: Path) -> Iterator[TestClient]:
    config = ServeConfig(db=library_db, pdfs=library_db.parent / "pdfs", model="extractive", users=USERS)
    with TestClient(create_app(config)) as test_client:
        yield test_client


def ask(client: TestClient, who: str, question: str, **body: object) -> object:
    return client.post("/api/ask", json={"question": question, "as_of": AS_OF, **body}, headers=signed(who))


def test_a_kept_conversation_rewrites_the_follow_up_and_records_it(client: TestClient) -> None:
    first = ask(client, "ann", "What is the loan limit for EQ-314?", conversation="new").json()  # type: ignore[attr-defined]
    assert first["rewrite"]["how"] == "standalone"
    second = ask(client, "ann", "And EQ-502?", conversation=first["conversation"]).json()  # type: ignore[attr-defined]
    assert second["rewrite"]["understood_as"] == "What is the loan limit for EQ-502?"
    assert second["conversation"] == first["conversation"]


def test_earlier_turns_given_by_the_client_carry_their_questions(client: TestClient) -> None:
    reply = ask(client, "ann", "And EQ-502?", turns=["What is the loan limit for EQ-314?"]).json()  # type: ignore[attr-defined]
    assert reply["rewrite"]["understood_as"] == "What is the loan limit for EQ-502?"
    assert "conversation" not in reply


def test_a_conversation_id_reused_by_another_user_is_unknown_to_them(client: TestClient) -> None:
    key = ask(client, "ann", "What is the loan limit for EQ-314?", conversation="new").json()["conversation"]  # type: ignore[attr-defined]
    stolen = ask(client, "bob", "And EQ-502?", conversation=key)
    unknown = ask(client, "bob", "And EQ-502?", conversation="no-such-id")
    assert stolen.status_code == unknown.status_code == 404  # type: ignore[attr-defined]
    assert stolen.json() == unknown.json()  # type: ignore[attr-defined]
    # And the owner's conversation is untouched by the attempt.
    after = ask(client, "ann", "And EQ-502?", conversation=key).json()  # type: ignore[attr-defined]
    assert after["rewrite"]["understood_as"] == "What is the loan limit for EQ-502?"


def test_a_conversation_cannot_be_continued_in_another_tenant(client: TestClient) -> None:
    key = ask(client, "ann", "What is the loan limit for EQ-314?", conversation="new").json()["conversation"]  # type: ignore[attr-defined]
    assert ask(client, "eve", "And EQ-502?", conversation=key).status_code == 404  # type: ignore[attr-defined]


def test_a_tenant_switch_mid_conversation_is_refused_on_every_stored_turn() -> None:
    kept = Conversations()
    key = kept.start("ann", Caller())
    kept.add(
        key, "ann", Turn("What is the loan limit for EQ-314?", "What is the loan limit for EQ-314?", Caller())
    )
    with pytest.raises(UnknownConversationError):
        kept.get(key, "ann", Caller(tenant="acme"))
    # A stored turn of another tenant (however it got there) refuses the whole conversation.
    kept.get(key, "ann", Caller()).turns.append(Turn("q", "q", Caller(tenant="acme")))
    with pytest.raises(UnknownConversationError):
        kept.get(key, "ann", Caller())


def test_a_follow_up_in_a_foreign_tenant_names_nothing_it_was_not_shown(client: TestClient) -> None:
    """Eve (tenant acme) sees nothing of the sample library: her follow-up carries only her own
    words, and nothing is answered."""
    key = ask(client, "eve", "What is the loan limit for EQ-314?", conversation="new").json()["conversation"]  # type: ignore[attr-defined]
    reply = ask(client, "eve", "Why?", conversation=key).json()  # type: ignore[attr-defined]
    assert reply["rewrite"]["understood_as"] == "Why is the loan limit for EQ-314?"
    assert all(part["answer"]["quote"] is None for part in reply["parts"])


def test_turns_and_a_conversation_together_are_refused(client: TestClient) -> None:
    reply = ask(
        client, "ann", "And EQ-502?", turns=["What is the loan limit for EQ-314?"], conversation="new"
    )
    assert reply.status_code == 400  # type: ignore[attr-defined]


def test_conversations_are_bounded_per_user() -> None:
    kept = Conversations()
    keys = [kept.start("ann", Caller()) for _ in range(40)]
    with pytest.raises(UnknownConversationError):
        kept.get(keys[0], "ann", Caller())
    kept.get(keys[-1], "ann", Caller())


def test_the_ask_page_keeps_earlier_turns_and_asks_an_edited_rewrite_as_it_stands(client: TestClient) -> None:
    import re

    first = client.get(
        "/ask",
        params={"question": "What is the loan limit for EQ-314?", "as_of": AS_OF},
        headers=signed("ann"),
    )
    key = re.search(r'name="conversation" value="([^"]+)"', first.text)
    assert key is not None
    params = {"question": "And EQ-502?", "as_of": AS_OF, "conversation": key.group(1)}
    second = client.get("/ask", params=params, headers=signed("ann")).text
    assert 'value="What is the loan limit for EQ-502?"' in second  # the editable "Understood as" line
    assert second.count('class="turn"') == 1  # the first turn, above
    edited = {
        "question": "What is the deposit for EQ-502?",
        "as_of": AS_OF,
        "conversation": key.group(1),
        "as_is": "true",
    }
    third = client.get("/ask", params=edited, headers=signed("ann")).text
    assert third.count('class="turn"') == 2 and 'id="understood"' not in third
    assert client.get("/ask", params=params, headers=signed("bob")).status_code == 404


def test_a_doubted_turn_shows_its_closest_passage_in_the_api_and_as_an_earlier_turn(
    client: TestClient,
) -> None:
    """Issue 49: a conversation shows a doubted quote as `ask` does, a refusal carrying its closest
    passage, in the API's reply and on the ask page when it is an earlier turn."""
    import re

    doubted = "How long do book loans last at the Riverrsidee library?"
    reply = ask(client, "ann", doubted, conversation="new").json()  # type: ignore[attr-defined]
    [part] = reply["parts"]
    assert part["answer"]["outcome"] == "refused" and part["answer"]["quote"] is None
    assert part["answer"]["closest"]["quote"] == "Standard book loans last 21 days."
    first = client.get("/ask", params={"question": doubted, "as_of": AS_OF}, headers=signed("ann"))
    key = re.search(r'name="conversation" value="([^"]+)"', first.text)
    assert key is not None
    params = {"question": "What is the loan limit for EQ-314?", "as_of": AS_OF, "conversation": key.group(1)}
    second = client.get("/ask", params=params, headers=signed("ann")).text
    earlier = second[second.index('class="turn"') :]
    assert "No quote verified. Reason: the evidence never mentions &#34;Riverrsidee&#34;" in earlier
    assert "Closest passage, which does not mention &#34;Riverrsidee&#34;:" in earlier
