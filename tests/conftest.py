"""Shared fixtures: a private copy of the sample library, its index, a CLI runner, a fake model."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from localqa.index import refresh_index
from localqa.models.base import AnswerModel, Message

REPO = Path(__file__).resolve().parent.parent
SAMPLE_PDFS = REPO / "pdfs"

pytest_plugins = ["fake_ollama"]


# Settings a developer's shell may carry that would change what a test sees.
_CALLER_AND_MODEL_ENV = (
    "LOCALQA_MODEL",
    "LOCALQA_ROLE",
    "LOCALQA_TENANT",
    "OLLAMA_HOST",
    "LOCALQA_OLLAMA_TIMEOUT",
    "OLLAMA_API_KEY",
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


@pytest.fixture(scope="session")
def library_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample library indexed once per test session (read-only: do not modify)."""
    folder = tmp_path_factory.mktemp("library")
    shutil.copytree(SAMPLE_PDFS, folder / "pdfs", ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    db = folder / "library.sqlite3"
    report = refresh_index(folder / "pdfs", db, embed=False)
    assert not report.failed, report.problems
    return db


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


class FakeModel(AnswerModel):
    """A model whose replies the test chooses, and which records what it was sent."""

    backend = "fake"
    name = "fake"

    def __init__(self) -> None:
        self.replies: list[str] = []
        self.history: list[tuple[list[Message], dict[str, Any]]] = []

    def enqueue(self, *replies: str) -> FakeModel:
        self.replies.extend(replies)
        return self

    def complete(self, messages: list[Message], schema: dict[str, Any]) -> str:
        self.history.append((messages, schema))
        if not self.replies:
            raise AssertionError("FakeModel was called more often than replies were enqueued")
        return self.replies.pop(0)


@pytest.fixture
def fake_model() -> Iterator[FakeModel]:
    yield FakeModel()
