"""Shared fixtures: a private copy of the sample library, a CLI runner, a fake model; the index
backends and the sample library's index are in backends.py."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from localqa import models
from localqa.errors import ModelError
from localqa.models.base import AnswerModel, AnswerRequest, Availability, Backend, Completion
from localqa.store import Db

REPO = Path(__file__).resolve().parent.parent
SAMPLE_PDFS = REPO / "pdfs"

pytest_plugins = ["fake_ollama", "backends"]


# Settings a developer's shell may carry that would change what a test sees.
_CALLER_AND_MODEL_ENV = (
    "LOCALQA_DB",
    "PGPASSWORD",
    "PGPASSFILE",
    "PGSERVICE",
    "PGSERVICEFILE",
    "PGOPTIONS",
    "LOCALQA_MODEL",
    "LOCALQA_ROLE",
    "LOCALQA_TENANT",
    "OLLAMA_HOST",
    "LOCALQA_OLLAMA_TIMEOUT",
    "OLLAMA_API_KEY",
    "LOCALQA_OPENAI_BASE_URL",
    "LOCALQA_OPENAI_API_KEY",
    "LOCALQA_OPENAI_TIMEOUT",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    for name in _CALLER_AND_MODEL_ENV:
        monkeypatch.delenv(name, raising=False)
    # Indexes built by tests compute no embeddings (minutes on two cores), except in the tests
    # about semantic retrieval; subprocesses inherit the setting.
    if request.node.get_closest_marker("semantic") is None:
        monkeypatch.setenv("LOCALQA_EMBED", "0")
    else:
        monkeypatch.delenv("LOCALQA_EMBED", raising=False)


@pytest.fixture
def sample_pdfs(tmp_path: Path) -> Path:
    """A writable copy of the sample library (PDFs, Markdown, sidecar, catalog)."""
    target = tmp_path / "pdfs"
    shutil.copytree(SAMPLE_PDFS, target, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    return target


@pytest.fixture
def indexed(sample_pdfs: Path, library_copy: Db) -> tuple[Path, Db]:
    """The sample folder and a private copy of its index (staff-procedures.pdf indexed as staff),
    on the test's backend."""
    return sample_pdfs, library_copy


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


Reply = str | Completion | ModelError | Callable[[AnswerRequest], str | Completion]


class FakeModel(AnswerModel):
    """The test suite's one model: it answers what the test enqueued, in order, and records every
    request it was sent (`history`). A reply is the text to return, a ModelError to raise (a
    failing backend), a whole Completion (a reply with the backend's figures, such as its label
    confidence), or a function of the request returning text or a Completion (replies drawn
    from what was actually sent)."""

    backend = "fake"

    def __init__(self, name: str = "fake") -> None:
        self.name = name
        self.replies: list[Reply] = []
        self.history: list[AnswerRequest] = []
        self._always: Reply | None = None

    def enqueue(self, *replies: Reply) -> FakeModel:
        self.replies.extend(replies)
        return self

    def always(self, reply: Reply) -> FakeModel:
        """Answer every request with `reply` (a failing or scripted backend)."""
        self._always = reply
        return self

    def complete(self, request: AnswerRequest) -> Completion:
        self.history.append(request)
        if self._always is not None:
            reply = self._always
        elif self.replies:
            reply = self.replies.pop(0)
        else:
            raise AssertionError("FakeModel was called more often than replies were enqueued")
        if isinstance(reply, ModelError):
            raise reply
        if callable(reply):
            reply = reply(request)
        if isinstance(reply, Completion):
            return reply
        return Completion(text=reply, prompt_tokens=len(str(request.messages)) // 4)


@contextmanager
def serving(model: FakeModel) -> Iterator[FakeModel]:
    """Register `model` as the backend `fake` (what `--model fake` and LOCALQA_MODEL=fake get),
    through the registry's API, the way a plugin's entry point would make it available."""

    def create(name: str | None, options: Mapping[str, Any]) -> FakeModel:
        return model

    models.register(
        Backend(
            name="fake",
            create=create,
            check=lambda: Availability(True, "the test suite's fake model"),
            takes_name=True,
        )
    )
    try:
        yield model
    finally:
        models.unregister("fake")


@pytest.fixture
def fake_model() -> Iterator[FakeModel]:
    """A FakeModel, registered as `--model fake` for the test."""
    with serving(FakeModel()) as model:
        yield model
