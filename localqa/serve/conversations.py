"""The conversations a server keeps: per user, bounded, never shared.

A conversation id is a random token the server made for one user (the users file's token, or the
loopback server's one caller) and tenant. `get` answers only that user and tenant, and checks the
tenant of every stored turn too; another user's id answers exactly as an unknown one does (the same
error, nothing learnt). Each conversation keeps at most MAX_TURNS turns (the oldest dropped) and
each turn only what its caller was shown (`localqa.conversation.Turn`) plus the page's view of it;
at most MAX_CONVERSATIONS are kept server-wide and MAX_PER_USER per user (the least recently used
dropped first).
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from localqa.conversation import Rewrite, Turn, rewrite
from localqa.errors import LocalQAError
from localqa.models.base import AnswerModel
from localqa.settings import AnswerSettings
from localqa.types import Caller

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

    def add(self, key: str, user: str, turn: Turn, view: dict[str, Any] | None = None) -> None:
        kept = self.get(key, user, turn.caller)
        with self._lock:
            kept.turns.append(turn)
            kept.views.append(view if view is not None and len(repr(view)) <= MAX_VIEW_CHARS else {})
            del kept.turns[:-MAX_TURNS]
            del kept.views[:-MAX_TURNS]


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
