"""The conversations a server keeps: per user, bounded, never shared.

A conversation id is a random token the server made for one user (the users file's token, or the
loopback server's one caller) and tenant. `get` answers only that user and tenant, and checks the
tenant of every stored turn too; another user's id answers exactly as an unknown one does (the same
error, nothing learnt). Each conversation keeps at most MAX_TURNS turns (the oldest dropped) and
each turn only what its caller was shown (`localqa.conversation.Turn`) plus the page's view of it;
at most MAX_CONVERSATIONS are kept server-wide and MAX_PER_USER per user (the least recently used
dropped first).

Access never widens over time: a kept turn is re-checked at every follow-up against what its caller
may see then (`recheck`), before anything of it is shown again or carried into a rewrite. An
answer whose evidence (its quote's source, other evidence, the sentences shown of how its quote
was chosen, a value's operands or items) names a document the caller may no longer see, since the
catalog narrowed, retired or moved it, is withheld: the turn keeps its question and the answers
that still stand, and the page says how many parts it withheld. A page image it linked to is
checked again when it is fetched.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from localqa.conversation import Rewrite, Turn, rewrite, turn_of
from localqa.errors import LocalQAError
from localqa.models.base import AnswerModel
from localqa.settings import AnswerSettings
from localqa.types import Answer, Caller, Location

if TYPE_CHECKING:
    from localqa.library import Library

MAX_TURNS = 20
MAX_CONVERSATIONS = 512
MAX_PER_USER = 16
MAX_VIEW_CHARS = 64 * 1024  # a turn's page view beyond this keeps only its question and rewrite


class UnknownConversationError(LocalQAError):
    """No conversation of this user and tenant has this id (expired, never made, or another's)."""


@dataclass
class Kept:
    user: str
    tenant: str
    turns: list[Turn] = field(default_factory=list)
    views: list[dict[str, Any]] = field(default_factory=list)  # what the ask page shows of each turn
    # Each turn's answers (only what its caller was shown), so the turn can be re-checked and
    # rebuilt without what its caller may no longer see (`recheck`).
    answers: list[tuple[Answer, ...]] = field(default_factory=list)


@dataclass(frozen=True)
class Rechecked:
    """A kept conversation's turns as its caller may see them now: the turns a follow-up carries
    from and the page's views of them."""

    turns: list[Turn]
    views: list[dict[str, Any]]


class Conversations:
    def __init__(self) -> None:
        self._kept: OrderedDict[str, Kept] = OrderedDict()
        self._lock = threading.Lock()

    def start(self, user: str, caller: Caller) -> str:
        with self._lock:
            mine = [key for key, kept in self._kept.items() if kept.user == user]
            for key in mine[: max(0, len(mine) - MAX_PER_USER + 1)]:
                del self._kept[key]
            while len(self._kept) >= MAX_CONVERSATIONS:
                self._kept.popitem(last=False)
            key = secrets.token_urlsafe(16)
            self._kept[key] = Kept(user, caller.tenant)
            return key

    def get(self, key: str, user: str, caller: Caller) -> Kept:
        """The conversation `key` of this user and tenant; UnknownConversationError otherwise."""
        with self._lock:
            kept = self._kept.get(key)
            if (
                kept is None
                or not secrets.compare_digest(kept.user, user)
                or kept.tenant != caller.tenant
                or any(turn.caller.tenant != caller.tenant for turn in kept.turns)
            ):
                raise UnknownConversationError(
                    "no such conversation; start a new one (it may have expired, or belong to someone else)"
                )
            self._kept.move_to_end(key)
            return kept

    def add(
        self,
        key: str,
        user: str,
        turn: Turn,
        view: dict[str, Any] | None = None,
        answers: tuple[Answer, ...] = (),
    ) -> None:
        kept = self.get(key, user, turn.caller)
        with self._lock:
            kept.turns.append(turn)
            kept.views.append(view if view is not None and len(repr(view)) <= MAX_VIEW_CHARS else {})
            kept.answers.append(answers)
            del kept.turns[:-MAX_TURNS]
            del kept.views[:-MAX_TURNS]
            del kept.answers[:-MAX_TURNS]

    def recheck(self, key: str, user: str, caller: Caller, library: Library) -> Rechecked:
        """The conversation `key` (as `get`) re-checked against what `caller` may see now
        (the module docstring): each turn rebuilt from the answers whose evidence they may still
        see, each view without the parts they may not."""
        kept = self.get(key, user, caller)
        with self._lock:
            stored = list(zip(kept.turns, kept.views, kept.answers, strict=True))
        visible = visible_sources(library, caller)
        turns: list[Turn] = []
        views: list[dict[str, Any]] = []
        for turn, view, answers in stored:
            standing = tuple(a for a in answers if evidence_sources(a) <= visible)
            views.append(_view_without(view, visible))  # a route naming a narrowed document too
            if len(standing) == len(answers):
                turns.append(turn)
                continue
            asked = Rewrite(turn.question, turn.standalone, "standalone")
            turns.append(turn_of(asked, turn.caller, standing))
        return Rechecked(turns, views)


def rewritten(
    question: str,
    earlier: list[Turn],
    caller: Caller,
    model: AnswerModel,
    models_lock: AbstractContextManager[Any],
    settings: AnswerSettings,
) -> Rewrite:
    """`question` rewritten from the earlier turns (`localqa.conversation.rewrite`); a language
    model's call takes its turn with the answers' (`Models.call`)."""
    if not earlier:
        return Rewrite(question, question, "standalone")
    with models_lock:
        return rewrite(question, earlier, caller, model, settings)


def visible_sources(library: Library, caller: Caller) -> frozenset[str]:
    """The sources of the documents `caller` may see now, on any date (`Store.listed`: their
    tenant, an access label their role may see, not a draft or retired): an earlier turn's
    evidence stands only in these. A follow-up's date is the caller's to choose, so a version
    superseded since is still theirs to see, as it is to search on its date."""
    with library.reading() as store:
        return frozenset(document.source for document in store.listed(caller))


def evidence_sources(answer: Answer) -> frozenset[str]:
    """Every source an answer's evidence names: its citation, other evidence, the sentences the
    page shows of how its quote was chosen (`Selection.shown`), and any location inside its value
    (operands, list items, compared figures), found wherever it is held, so a kind of evidence
    added later is re-checked too."""
    return frozenset(location.source for location in _locations(answer))


def _locations(value: object) -> Iterator[Location]:
    if isinstance(value, Location):
        yield value
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from _locations(getattr(value, name))
    elif isinstance(value, tuple | list):
        for item in value:
            yield from _locations(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _locations(item)


def _view_without(view: dict[str, Any], visible: frozenset[str]) -> dict[str, Any]:
    """A turn's page view without the parts whose answer's evidence the caller may no longer see;
    `withheld` says how many were left out."""
    parts = view.get("parts", [])
    standing = [
        part if set(part.route_sources) <= visible else replace(part, route=None, route_sources=())
        for part in parts
        if evidence_sources(part.answer) <= visible
    ]
    return {**view, "parts": standing, "withheld": len(parts) - len(standing)}
