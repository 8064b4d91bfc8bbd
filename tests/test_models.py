"""The backend registry: entry points (built-in and third-party) and `register()`; choosing a
backend: `--model` > `LOCALQA_MODEL` > Ollama if a server answers > embedded if installed > an
error naming both ways out; per-model options; and `localqa models`."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fake_ollama import free_port

from localqa import models
from localqa.answers import prompts
from localqa.cli import cli
from localqa.errors import ModelError, UnknownModelError
from localqa.library import answer
from localqa.models import backends, default_backend, embedded, extractive, get_model, ollama
from localqa.models.base import Availability, Backend
from localqa.models.embedded import EmbeddedModel
from localqa.models.extractive import ExtractiveModel
from localqa.models.ollama import DEFAULT_MODEL, OllamaModel
from localqa.settings import AnswerSettings, RetrievalSettings
from localqa.types import Candidate, Kind, Location

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def no_ollama(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """OLLAMA_HOST points at a closed port."""
    host = f"127.0.0.1:{free_port()}"
    monkeypatch.setenv("OLLAMA_HOST", host)
    yield host


def set_embedded(monkeypatch: pytest.MonkeyPatch, available: bool) -> None:
    monkeypatch.setattr(embedded, "is_available", lambda: available)


# --- names --------------------------------------------------------------------------------------


def test_the_builtins_are_declared_once() -> None:
    """In `models.BUILTINS`, not again as entry points of localqa's own package."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert "localqa.models" not in project.get("entry-points", {})


def test_the_builtins_load_through_their_entry_points() -> None:
    assert models.names() == ["ollama", "embedded", "extractive", "openai"]
    assert models.backend("ollama") is ollama.BACKEND
    assert models.backend("embedded") is embedded.BACKEND
    assert models.backend("extractive") is extractive.BACKEND
    assert [(b.default_rank, b.takes_name) for b in map(models.backend, models.names())] == [
        (10, True),
        (20, False),
        (None, False),
        (None, True),
    ]


def test_ollama_with_and_without_a_model_name() -> None:
    model = get_model("ollama")
    assert isinstance(model, OllamaModel) and model.name == DEFAULT_MODEL == "qwen2.5:1.5b"
    named = get_model("ollama:llama3.2:1b")
    assert isinstance(named, OllamaModel) and named.name == "llama3.2:1b"
    assert named.label == "ollama:llama3.2:1b"
    assert get_model("ollama:qwen2.5:1.5b").name == "qwen2.5:1.5b"


def test_embedded_and_extractive_load_nothing_until_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    def must_not_load(*args: Any) -> Any:
        raise AssertionError("get_model must not load the embedded model")

    monkeypatch.setattr(embedded, "load", must_not_load)
    model = get_model("embedded")
    assert isinstance(model, EmbeddedModel)
    assert (model.backend, model.name) == ("embedded", embedded.MODEL_NAME)
    extractive = get_model("extractive")
    assert isinstance(extractive, ExtractiveModel)
    assert extractive.is_language_model is False


@pytest.mark.parametrize("spec", ["gpt-4", "Ollama", "llama.cpp", "none"])
def test_unknown_model_names_the_choices(spec: str) -> None:
    with pytest.raises(UnknownModelError) as caught:
        get_model(spec)
    assert str(caught.value) == (
        f"unknown model {spec!r}; choose one of ollama, embedded, extractive, openai (see 'localqa models')"
    )


@pytest.mark.parametrize("spec", ["embedded:big", "extractive:x"])
def test_only_some_backends_take_a_model_name(spec: str) -> None:
    backend = spec.partition(":")[0]
    with pytest.raises(UnknownModelError) as caught:
        get_model(spec)
    assert str(caught.value) == (
        f"model {spec!r}: {backend} takes no model name (these do: ollama:NAME, openai:NAME)"
    )


# --- per-model options ----------------------------------------------------------------------------


def test_options_reach_the_model(fake_ollama: Any) -> None:
    model = get_model("ollama:llama3.2:1b", {"host": fake_ollama.host, "timeout": 3})
    assert isinstance(model, OllamaModel)
    assert (model.name, model.host, model.timeout) == ("llama3.2:1b", fake_ollama.url, 3)


@pytest.mark.parametrize(
    ("spec", "options", "message"),
    [
        (
            "ollama",
            {"hots": "x"},
            "option 'hots' for ollama: Extra inputs are not permitted (its options: host, timeout)",
        ),
        (
            "ollama",
            {"timeout": -1},
            "option 'timeout' for ollama: Input should be greater than 0 (its options: host, timeout)",
        ),
        (
            "extractive",
            {"k": 3},
            "option 'k' for extractive: Extra inputs are not permitted (its options: none)",
        ),
        (
            "embedded",
            {"threads": 3},
            "option 'threads' for embedded: Extra inputs are not permitted (its options: cache)",
        ),
    ],
)
def test_an_unknown_or_bad_option_is_an_error_naming_the_options(
    spec: str, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(UnknownModelError) as caught:
        get_model(spec, options)
    assert str(caught.value) == message


# --- registering a backend --------------------------------------------------------------------------


def echo_backend(name: str = "echo", rank: int | None = None) -> Backend:
    return Backend(
        name=name,
        create=lambda model_name, options: ExtractiveModel(),
        check=lambda: Availability(True, "echoes the extractive baseline"),
        default_rank=rank,
    )


def test_register_and_unregister() -> None:
    models.register(echo_backend())
    try:
        assert "echo" in models.names()
        assert isinstance(get_model("echo"), ExtractiveModel)
        assert ("echo", True, "echoes the extractive baseline") in [
            (b.name, b.available, b.detail) for b in backends()
        ]
    finally:
        models.unregister("echo")
    assert "echo" not in models.names()
    with pytest.raises(UnknownModelError):
        get_model("echo")


def test_a_registered_backend_with_a_rank_takes_part_in_the_default(
    monkeypatch: pytest.MonkeyPatch, no_ollama: str
) -> None:
    set_embedded(monkeypatch, True)
    models.register(echo_backend(rank=15))  # after ollama, before embedded
    try:
        assert default_backend() == "echo"
    finally:
        models.unregister("echo")
    assert default_backend() == "embedded"


PLUGIN = """
import json
from localqa.models.base import AnswerModel, Availability, Backend, Completion


class FirstSentence(AnswerModel):
    backend = "first"
    name = "first-sentence"

    def complete(self, request):
        first = request.units[0]
        return Completion(text=json.dumps({"source": first.label, "sentence": first.sentence}))


BACKEND = Backend(
    name="first",
    create=lambda name, options: FirstSentence(),
    check=lambda: Availability(True, "chooses the first sentence it is shown"),
)
BROKEN = "not a backend"
"""


def install_plugin(folder: Path, monkeypatch: pytest.MonkeyPatch, entries: str) -> None:
    """A third-party distribution on sys.path declaring `entries` in the `localqa.models` group:
    found by importlib.metadata exactly as an installed package's would be."""
    (folder / "localqa_first_plugin.py").write_text(PLUGIN)
    info = folder / "localqa_first_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: localqa-first-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[localqa.models]\n{textwrap.dedent(entries)}")
    monkeypatch.syspath_prepend(str(folder))


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A third-party package with three backends: one that works, one that is no Backend, one
    whose module is missing."""
    install_plugin(
        tmp_path,
        monkeypatch,
        """\
        first = localqa_first_plugin:BACKEND
        broken = localqa_first_plugin:BROKEN
        missing = localqa_no_such_module:BACKEND
        """,
    )
    yield


def test_a_third_party_cannot_take_a_builtin_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_plugin(tmp_path, monkeypatch, "extractive = localqa_first_plugin:BACKEND\n")
    assert models.backend("extractive") is extractive.BACKEND
    assert isinstance(get_model("extractive"), ExtractiveModel)


def test_a_third_party_entry_point_is_a_backend(plugin: None) -> None:
    # ranked backends first, then the rest by name
    assert models.names() == ["ollama", "embedded", "broken", "extractive", "first", "missing", "openai"]
    model = get_model("first")
    assert model.label == "first:first-sentence"


def test_a_broken_entry_point_is_reported_not_raised_by_the_listing(plugin: None) -> None:
    found = {b.name: b for b in backends()}
    assert found["first"].available
    assert not found["broken"].available
    assert found["broken"].detail == (
        "the entry point 'broken' (localqa_first_plugin:BROKEN) is not a localqa Backend named 'broken'"
    )
    assert not found["missing"].available
    assert found["missing"].detail.startswith(
        "the answer backend 'missing' (localqa_no_such_module:BACKEND) cannot be loaded: No module named"
    )
    with pytest.raises(ModelError, match="cannot be loaded"):
        get_model("missing")


def test_ask_answers_with_a_third_party_backend(plugin: None, runner: CliRunner, library_db: Path) -> None:
    result = runner.invoke(
        cli,
        [
            "ask",
            "How much is the fine for an overdue book?",
            "--as-of",
            "2026-11-14",
            "--db",
            str(library_db),
            "--model",
            "first",
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].endswith("· model first:first-sentence")
    assert '   "Overdue books incur a fine of 20 cents per day."' in result.stdout.splitlines()


# --- precedence ---------------------------------------------------------------------------------


def test_explicit_model_beats_the_environment(monkeypatch: pytest.MonkeyPatch, fake_ollama: Any) -> None:
    monkeypatch.setenv("LOCALQA_MODEL", "embedded")
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    assert isinstance(get_model("extractive"), ExtractiveModel)


def test_localqa_model_beats_a_running_server(monkeypatch: pytest.MonkeyPatch, fake_ollama: Any) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    monkeypatch.setenv("LOCALQA_MODEL", "extractive")
    assert isinstance(get_model(), ExtractiveModel)
    monkeypatch.setenv("LOCALQA_MODEL", "ollama:llama3.2:1b")
    assert get_model().name == "llama3.2:1b"
    assert fake_ollama.requests == [], "an explicit choice does not probe the server"


def test_a_running_ollama_server_beats_the_embedded_model(
    monkeypatch: pytest.MonkeyPatch, fake_ollama: Any
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    set_embedded(monkeypatch, True)
    assert default_backend() == "ollama"
    model = get_model()
    assert isinstance(model, OllamaModel) and model.host == fake_ollama.url
    assert model.name == "qwen2.5:1.5b"


def test_embedded_when_no_server_answers(monkeypatch: pytest.MonkeyPatch, no_ollama: str) -> None:
    set_embedded(monkeypatch, True)
    assert default_backend() == "embedded"
    assert isinstance(get_model(), EmbeddedModel)


def test_nothing_available_is_an_error_naming_both_ways_out(
    monkeypatch: pytest.MonkeyPatch, no_ollama: str
) -> None:
    set_embedded(monkeypatch, False)
    with pytest.raises(ModelError) as caught:
        get_model()
    message = str(caught.value)
    assert f"no Ollama server answers at http://{no_ollama}" in message
    assert "'ollama serve'" in message
    assert "pip install 'localqa[embedded]'" in message
    assert "--model extractive" in message


def test_embedded_availability_is_the_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded, "missing_packages", lambda: ["xllamacpp"])
    assert embedded.is_available() is False
    monkeypatch.setattr(embedded, "missing_packages", lambda: [])
    assert embedded.is_available() is True


# --- `localqa models` ---------------------------------------------------------------------------


def test_backends_report_availability(monkeypatch: pytest.MonkeyPatch, fake_ollama: Any) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    set_embedded(monkeypatch, False)
    found = {b.name: b for b in backends()}
    assert list(found) == ["ollama", "embedded", "extractive", "openai"]
    assert found["ollama"].available and fake_ollama.url in found["ollama"].detail
    assert not found["embedded"].available
    assert found["extractive"].available and "baseline" in found["extractive"].detail
    assert not found["openai"].available and "LOCALQA_OPENAI_BASE_URL" in found["openai"].detail


def test_models_command_with_a_server(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, fake_ollama: Any
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    set_embedded(monkeypatch, True)
    result = runner.invoke(cli, ["models"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 5
    assert lines[0].startswith("* ollama") and " available " in lines[0]
    assert fake_ollama.url in lines[0] and "qwen2.5:1.5b" in lines[0]
    assert lines[1].startswith("  embedded") and " available " in lines[1]
    assert lines[2].startswith("  extractive") and " available " in lines[2]
    assert lines[3].startswith("  openai") and "not available" in lines[3]
    assert lines[4] == "Default: ollama (chosen automatically)"


def test_models_command_without_a_server(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, no_ollama: str
) -> None:
    set_embedded(monkeypatch, True)
    result = runner.invoke(cli, ["models"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("  ollama") and "not available" in lines[0]
    assert lines[1].startswith("* embedded") and "not available" not in lines[1]
    assert lines[4] == "Default: embedded (chosen automatically)"


def test_models_command_with_nothing_available(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, no_ollama: str
) -> None:
    set_embedded(monkeypatch, False)
    result = runner.invoke(cli, ["models"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "not available" in lines[0] and "not available" in lines[1]
    assert "pip install 'localqa[embedded]'" in lines[1]
    assert not any(line.startswith("*") for line in lines)
    assert lines[4] == "Default: none available (use --model extractive)"


def test_models_command_honours_localqa_model(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, fake_ollama: Any
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    monkeypatch.setenv("LOCALQA_MODEL", "extractive")
    result = runner.invoke(cli, ["models"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[2].startswith("* extractive")
    assert result.stdout.splitlines()[-1] == "Default: extractive (from LOCALQA_MODEL)"


def test_models_command_json(runner: CliRunner, monkeypatch: pytest.MonkeyPatch, no_ollama: str) -> None:
    set_embedded(monkeypatch, True)
    result = runner.invoke(cli, ["models", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["default"] == "embedded"
    assert [(b["name"], b["available"]) for b in payload["backends"]] == [
        ("ollama", False),
        ("embedded", True),
        ("extractive", True),
        ("openai", False),
    ]
    assert all(set(b) == {"name", "available", "detail"} for b in payload["backends"])


# --- the extractive baseline --------------------------------------------------------------------


def _candidate(text: str, source: str) -> Candidate:
    return Candidate(
        rank=1,
        score=1.0,
        location=Location(
            source=source,
            page=1,
            kind=Kind.PROSE,
            section=None,
            table=None,
            row=None,
            paragraph=1,
            effective=None,
        ),
        text=text,
        doc_id=source,
        tenant="default",
    )


def test_extractive_answers_with_the_scorers_first_sentence() -> None:
    request = prompts.request(
        "How much is the fine for an overdue book?",
        [
            _candidate("The library is big. Books are nice.", "a.pdf"),
            _candidate("Cash is fine. Overdue books incur a fine of 20 cents per day.", "b.pdf"),
        ],
    )
    first = request.units[0]
    assert (first.rank, first.label, first.sentence) == (1, "P2", 2)
    assert first.text == "Overdue books incur a fine of 20 cents per day."
    reply = ExtractiveModel().complete(request).text
    assert json.loads(reply) == {"source": "P2", "sentence": 2}
    assert [ExtractiveModel().complete(request).text for _ in range(3)] == [reply] * 3  # deterministic


def test_extractive_takes_the_scorers_first_whatever_order_the_prompt_shows() -> None:
    candidates = [
        _candidate("The library is big. Books are nice.", "a.pdf"),
        _candidate("Cash is fine. Overdue books incur a fine of 20 cents per day.", "b.pdf"),
    ]
    request = prompts.request(
        "How much is the fine for an overdue book?", candidates, AnswerSettings(order="passage")
    )
    assert (request.units[0].label, request.units[0].rank) != ("P2", 1)  # passage order: P1 first
    assert json.loads(ExtractiveModel().complete(request).text) == {"source": "P2", "sentence": 2}


def test_extractive_reads_the_ranked_units_as_data_not_the_prompt() -> None:
    request = prompts.request("Who founded Rome?", [_candidate("Romulus founded Rome.", "a.pdf")])
    unprompted = dataclasses.replace(request, messages=(), schema={})
    assert json.loads(ExtractiveModel().complete(unprompted).text) == {"source": "P1", "sentence": 1}


@pytest.mark.parametrize("semantic_weight", [0.0, 1.0])
def test_extractive_abstains_when_nothing_ties_the_first_sentence_to_the_question(
    semantic_weight: float,
) -> None:
    request = prompts.request(
        "Who founded Rome?",
        [_candidate("Completely unrelated words here.", "a.pdf")],
        AnswerSettings(unit_semantic_weight=semantic_weight),
    )
    [unit] = request.units
    assert unit.lexical == 0 and (unit.semantic or 0.0) < RetrievalSettings().neighbour
    assert json.loads(ExtractiveModel().complete(request).text) == {"source": None, "sentence": None}


def test_extractive_answers_on_the_sample_library_deterministically(library_db: Path) -> None:
    """Through the API as `ask --model extractive` runs it: the quote is the scorer's first unit,
    the choice is recorded as no override, and a second run gives the same answer."""
    question = "How many days does a standard book loan last?"
    first, again = (
        answer(question, as_of=date(2026, 11, 14), model="extractive", db=library_db).parts[0].answer
        for _ in range(2)
    )
    assert first.verified and first.quote == "Standard book loans last 21 days."
    assert first.selection is not None and first.selection.choice == first.selection.shown[0]
    assert first.selection.overrode is False and first.call is not None
    assert (again.quote, again.citation, again.selection and again.selection.shown) == (
        first.quote,
        first.citation,
        first.selection.shown,
    )


# --- a malformed OLLAMA_HOST ----------------------------------------------------------------------


def run_localqa(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A fresh interpreter: the `ollama` package reads OLLAMA_HOST when it is first imported,
    which an in-process test (where it is imported already) cannot see."""
    clean = {k: v for k, v in os.environ.items() if k not in {"LOCALQA_MODEL", "OLLAMA_HOST"}}
    return subprocess.run(
        [sys.executable, "-m", "localqa", *args],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


BAD_HOST_BUG = (
    "BUG: a malformed OLLAMA_HOST (e.g. '127.0.0.1:port') crashes with a ValueError traceback: "
    "`import ollama` builds a module-level Client that parses OLLAMA_HOST at import time, before "
    "localqa's normalize_host can report it (and `localqa models` calls resolve_host outside any "
    "error handling and has no @fail_cleanly). Fix: import the ollama package with OLLAMA_HOST "
    "removed from the environment (localqa always passes host= explicitly), have backends()/"
    "server_answers treat an invalid host as 'not available' with the reason, and decorate "
    "`models` with @fail_cleanly."
)


def test_malformed_ollama_host_is_a_clear_error_for_ask(tmp_path: Path) -> None:
    result = run_localqa(
        "ask",
        "How much is the fine for an overdue book?",
        "--as-of",
        "2026-11-14",
        "--model",
        "ollama",
        "--db",
        str(REPO / "index" / "nothing.sqlite3"),
        env={"OLLAMA_HOST": "127.0.0.1:port"},
    )
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1
    assert result.stderr.startswith("Error: ")
    assert "OLLAMA_HOST" in result.stderr


def test_malformed_ollama_host_does_not_crash_models() -> None:
    result = run_localqa("models", env={"OLLAMA_HOST": "127.0.0.1:port"})
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode in (0, 1)
    assert "extractive" in result.stdout or result.stderr.startswith("Error: ")


def test_a_valid_ollama_host_in_a_fresh_process_lists_the_backends() -> None:
    result = run_localqa("models", env={"OLLAMA_HOST": f"127.0.0.1:{free_port()}"})
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout.splitlines()[0].startswith("  ollama      not available")
