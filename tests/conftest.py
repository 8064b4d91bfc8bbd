"""Shared fixtures: a private copy of the sample library, a CLI runner, a fake model (fake_model.py);
the index backends and the sample library's index are in backends.py."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_model import FakeModel, serving

from localqa.store import Db

REPO = Path(__file__).resolve().parent.parent
SAMPLE_PDFS = REPO / "pdfs"

# The tests that read the benchmarks' pure functions in-process (`from benchmarks.pdfqa import
# ...`) need this repository's `benchmarks` package, and an unrelated top-level `benchmarks` sits
# in site-packages (a dependency ships one): the repository goes first, as for `python -m
# benchmarks.NAME` run from its root.
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
sys.modules.pop("benchmarks", None)

pytest_plugins = ["fake_ollama", "fake_openai", "backends"]


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


@pytest.fixture(autouse=True)
def _model_on_every_part(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The backends' tests script a reply for every part they ask: there the evidence decides none
    (whether the semantic scorer runs or not). tests/test_decides.py tests when it does."""
    if request.module.__name__ in ("test_decides", "test_embedded_library"):
        return
    from localqa.answers import deciding

    monkeypatch.setattr(deciding, "decides", lambda *args, **kwargs: None)
    monkeypatch.setattr(deciding, "figure_first", lambda *args, **kwargs: False)


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeModel]:
    """A FakeModel, registered as `--model fake` for the test. Its replies are scripted for every
    part, so the evidence decides none here (whether the semantic scorer runs or not);
    tests/test_decides.py tests when it does."""
    from localqa.answers import deciding

    monkeypatch.setattr(deciding, "decides", lambda *args, **kwargs: None)
    monkeypatch.setattr(deciding, "figure_first", lambda *args, **kwargs: False)
    with serving(FakeModel()) as model:
        yield model
