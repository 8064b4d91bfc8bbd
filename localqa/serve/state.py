"""What a running server holds (its configuration, the one `Library`, the models, the templates)
and the dependencies that hand it to a route: handlers take it as arguments, never from a
closure, so each router stands on its own."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Annotated

from fastapi import Depends, FastAPI, Request
from jinja2 import Environment, PackageLoader

from localqa.display.terminal import visible_in_page
from localqa.errors import LocalQAError, UnknownModelError
from localqa.library import Library
from localqa.models import backends, default_spec, get_model
from localqa.models.base import AnswerModel
from localqa.serve.auth import User
from localqa.serve.conversations import Conversations
from localqa.settings import Settings
from localqa.store import Db
from localqa.types import Answer, Caller, PartResult


@dataclass(frozen=True)
class ServeConfig:
    db: Db
    pdfs: Path
    caller: Caller = field(default_factory=Caller)  # everyone's caller when there is no users file
    users: tuple[User, ...] | None = None
    runs: Path | None = None  # saved evaluation runs (operator view)
    model: str | None = None  # default backend; None: LOCALQA_MODEL, else chosen as `localqa models` does
    allowed_hosts: frozenset[str] | None = None  # Host headers served (a loopback server's own names)
    settings: Settings = field(default_factory=Settings)


class Models:
    """Each backend constructed once and kept (the embedded model stays loaded), and one model
    call at a time."""

    def __init__(self, default: str | None, settings: Settings) -> None:
        # Chosen once, as `localqa models` chooses: --model, LOCALQA_MODEL, Ollama, embedded.
        self.default = default or _default_or_none()
        self.call = threading.Lock()
        self._made: dict[str, AnswerModel] = {}
        self._making = threading.Lock()
        self.listed = backends()
        self.settings = settings.answering

    def choices(self) -> list[str]:
        names = [b.name for b in self.listed if b.available]
        return names + ([self.default] if self.default and self.default not in names else [])

    def get(self, spec: str | None) -> AnswerModel:
        chosen = spec or self.default or default_spec()
        if chosen not in self.choices():
            raise UnknownModelError(
                f"unknown model {chosen!r}; choose one of {', '.join(self.choices())} (see 'localqa models')"
            )
        with self._making:
            if chosen not in self._made:
                self._made[chosen] = get_model(chosen)
            return self._made[chosen]

    def answer(
        self,
        library: Library,
        result: PartResult,
        model: AnswerModel,
        *,
        as_of: date,
        caller: Caller,
        documents: Sequence[str] = (),
    ) -> Answer:
        with self.call:
            return library.answer_part(
                result, model, self.settings, as_of=as_of, caller=caller, documents=documents
            )


def _default_or_none() -> str | None:
    try:
        return default_spec()
    except LocalQAError:
        return None


@dataclass(frozen=True)
class Served:
    """One server's state, made once by `create_app`."""

    config: ServeConfig
    library: Library
    models: Models
    templates: Environment
    conversations: Conversations = field(default_factory=Conversations)

    @classmethod
    def open(cls, config: ServeConfig) -> Served:
        templates = Environment(
            loader=PackageLoader("localqa.serve", "templates"),
            autoescape=True,
            # Every printed string is data (document text, file names): controls and bidi overrides
            # are shown as escapes before HTML escaping, as the CLI shows them.
            finalize=lambda value: visible_in_page(value) if isinstance(value, str) else value,
        )
        return cls(
            config=config,
            library=Library(config.db, config.settings),
            models=Models(config.model, config.settings),
            templates=templates,
        )

    def install(self, app: FastAPI) -> None:
        app.state.served = self


def served(request: Request) -> Served:
    state: Served = request.app.state.served
    return state


def _config(request: Request) -> ServeConfig:
    return served(request).config


def _library(request: Request) -> Library:
    return served(request).library


def _models(request: Request) -> Models:
    return served(request).models


def _templates(request: Request) -> Environment:
    return served(request).templates


def _conversations(request: Request) -> Conversations:
    return served(request).conversations


ConfigDep = Annotated[ServeConfig, Depends(_config)]
LibraryDep = Annotated[Library, Depends(_library)]
ModelsDep = Annotated[Models, Depends(_models)]
TemplatesDep = Annotated[Environment, Depends(_templates)]
ConversationsDep = Annotated[Conversations, Depends(_conversations)]
