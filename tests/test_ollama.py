"""The `ollama` backend against a fake server speaking Ollama's HTTP API."""

from __future__ import annotations

import math
import socket
import time

import pytest
from fake_ollama import FakeOllama, free_port
from ollama._client import _parse_host

from localqa.answers import prompts
from localqa.errors import ModelError
from localqa.models import ollama as backend
from localqa.models.base import AnswerModel
from localqa.models.ollama import (
    DEFAULT_HOST,
    OllamaModel,
    normalize_host,
    server_answers,
)
from localqa.settings import AnswerSettings
from localqa.types import Candidate, Kind, Location

SKY = Candidate(
    rank=1,
    score=1.0,
    location=Location(
        source="sky.md",
        page=None,
        kind=Kind.PROSE,
        section=None,
        table=None,
        row=None,
        paragraph=1,
        effective=None,
    ),
    text="The sky is blue.",
    doc_id="sky",
    tenant="default",
)
REQUEST = prompts.request("What colour is the sky?", [SKY])
MESSAGES = list(REQUEST.messages)
SCHEMA = REQUEST.schema


def test_is_an_answer_model_with_defaults() -> None:
    model = OllamaModel()
    assert isinstance(model, AnswerModel)
    assert model.backend == "ollama"
    assert model.name == "qwen2.5:1.5b"
    assert model.label == "ollama:qwen2.5:1.5b"
    assert model.host == DEFAULT_HOST == "http://127.0.0.1:11434"
    assert model.timeout == 120


def test_sends_schema_temperature_and_model_and_returns_content(fake_ollama: FakeOllama) -> None:
    fake_ollama.reply({"source": "P1", "sentence": 1})
    model = OllamaModel(host=fake_ollama.url)

    completion = model.complete(REQUEST)

    assert completion.text == '{"source": "P1", "sentence": 1}'
    assert (completion.prompt_tokens, completion.completion_tokens) == (42, len(completion.text) // 4)
    # Ollama's durations are nanoseconds (the fake's: 500 µs reading the prompt, 400 µs generating).
    assert (completion.prompt_seconds, completion.generation_seconds) == (0.0005, 0.0004)
    body = fake_ollama.last_chat
    assert body["model"] == "qwen2.5:1.5b"
    assert body["format"] == SCHEMA
    assert body["options"] == {
        "temperature": 0,
        "top_k": 1,
        "seed": 0,
        "num_ctx": 4096,
        "num_predict": 200,
    }
    assert body["stream"] is False
    assert body["logprobs"] is True
    assert body["messages"] == MESSAGES
    assert completion.label_confidence is None  # this server sent no token probabilities


def test_token_probabilities_give_the_label_confidence(fake_ollama: FakeOllama) -> None:
    fake_ollama.reply({"source": "P1", "sentence": 1})
    fake_ollama.label_logprob = -1.2
    completion = OllamaModel(host=fake_ollama.url).complete(REQUEST)
    assert completion.label_confidence == pytest.approx(math.exp(-1.2))


def test_the_reply_bound_is_the_same_for_a_long_table_row(fake_ollama: FakeOllama) -> None:
    """The reply is a label and a number, never the row's text: a long row needs no more room."""
    row = SKY.model_copy(
        update={
            "text": "; ".join(f"Column {i}: value {i}" for i in range(40)),
            "location": SKY.location.model_copy(update={"kind": Kind.TABLE, "table": 1, "row": 1}),
        }
    )
    request = prompts.request("What is in column 7?", [row])
    OllamaModel(host=fake_ollama.url).complete(request)
    assert (
        fake_ollama.last_chat["options"]["num_predict"] == request.max_tokens == AnswerSettings().reply_tokens
    )


def test_sampling_and_context_come_from_the_settings(fake_ollama: FakeOllama) -> None:
    settings = AnswerSettings(temperature=0.5, top_k=40, seed=7, context_tokens=8192)
    OllamaModel(host=fake_ollama.url).complete(prompts.request("What colour is the sky?", [SKY], settings))
    options = fake_ollama.last_chat["options"]
    assert (options["temperature"], options["top_k"], options["seed"], options["num_ctx"]) == (
        0.5,
        40,
        7,
        8192,
    )


def test_uses_the_given_model_name(fake_ollama: FakeOllama) -> None:
    fake_ollama.models.append("llama3.2:1b")
    OllamaModel("llama3.2:1b", host=fake_ollama.url).complete(REQUEST)
    assert fake_ollama.last_chat["model"] == "llama3.2:1b"


def test_invalid_json_content_is_returned_not_raised(fake_ollama: FakeOllama) -> None:
    fake_ollama.reply('{"source": "P1", "sentence": ')
    assert OllamaModel(host=fake_ollama.url).complete(REQUEST).text == '{"source": "P1", "sentence": '


@pytest.mark.parametrize("form", ["{host}", "http://{host}", "http://{host}/"])
def test_ollama_host_is_honoured(fake_ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch, form: str) -> None:
    monkeypatch.setenv("OLLAMA_HOST", form.format(host=fake_ollama.host))
    model = OllamaModel()
    assert model.host == fake_ollama.url
    model.complete(REQUEST)
    assert len(fake_ollama.chats) == 1


def test_explicit_host_beats_ollama_host(fake_ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{free_port()}")
    OllamaModel(host=fake_ollama.url).complete(REQUEST)
    assert len(fake_ollama.chats) == 1


@pytest.mark.parametrize(
    "host",
    [
        None,
        "",
        "1.2.3.4",
        ":56789",
        "1.2.3.4:56789",
        "http://1.2.3.4",
        "https://1.2.3.4",
        "https://example.com:56789/path/",
        "example.com/path",
        "[0001:002:003:0004::1]:56789",
        "https://[::1]",
        "0.0.0.0",
    ],
)
def test_host_forms_match_the_ollama_client(host: str | None) -> None:
    assert normalize_host(host) == _parse_host(host)


def test_unreachable_server() -> None:
    port = free_port()
    model = OllamaModel(host=f"127.0.0.1:{port}")
    with pytest.raises(ModelError) as caught:
        model.complete(REQUEST)
    assert str(caught.value) == (
        f"cannot reach Ollama at http://127.0.0.1:{port}: "
        "start it with 'ollama serve', or use --model embedded"
    )


def test_model_not_pulled_names_ollama_pull(fake_ollama: FakeOllama) -> None:
    model = OllamaModel("mistral:7b", host=fake_ollama.url)
    with pytest.raises(ModelError) as caught:
        model.complete(REQUEST)
    message = str(caught.value)
    assert "ollama pull mistral:7b" in message
    assert message == (
        f"Ollama at {fake_ollama.url} does not have model 'mistral:7b': "
        "run 'ollama pull mistral:7b', or use --model embedded"
    )


def test_timeout_is_reported_quickly(fake_ollama: FakeOllama) -> None:
    fake_ollama.delay = 3.0
    model = OllamaModel(host=fake_ollama.url, timeout=0.2)
    started = time.monotonic()
    with pytest.raises(ModelError) as caught:
        model.complete(REQUEST)
    assert time.monotonic() - started < 1.5
    message = str(caught.value)
    assert message.startswith(f"Ollama at {fake_ollama.url} did not answer within 0.2 s")
    assert "LOCALQA_OLLAMA_TIMEOUT" in message


def test_timeout_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCALQA_OLLAMA_TIMEOUT", "7.5")
    assert OllamaModel().timeout == 7.5
    assert OllamaModel(timeout=3).timeout == 3


@pytest.mark.parametrize("value", ["soon", "0", "-1", "nan", "inf"])
def test_bad_timeout_in_environment(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("LOCALQA_OLLAMA_TIMEOUT", value)
    with pytest.raises(ModelError, match="LOCALQA_OLLAMA_TIMEOUT must be a positive number"):
        OllamaModel()


def test_non_json_body_is_a_clear_error(fake_ollama: FakeOllama) -> None:
    fake_ollama.malformed = b"<html>proxy error</html>"
    with pytest.raises(ModelError) as caught:
        OllamaModel(host=fake_ollama.url).complete(REQUEST)
    assert str(caught.value) == (
        f"Ollama at {fake_ollama.url} sent a malformed reply (not JSON: '<html>proxy error</html>'); "
        "is OLLAMA_HOST pointing at an Ollama server?"
    )


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ('{"model": "qwen2.5:1.5b", "done": true}', "(message: Field required)"),
        ('{"message": {"content": "x"}}', "(message.role: Field required)"),
        ("[1, 2]", "(not a JSON object)"),
    ],
)
def test_reply_without_message_is_a_clear_error(fake_ollama: FakeOllama, body: str, detail: str) -> None:
    fake_ollama.malformed = body
    with pytest.raises(ModelError) as caught:
        OllamaModel(host=fake_ollama.url).complete(REQUEST)
    message = str(caught.value)
    assert message.startswith(f"Ollama at {fake_ollama.url} sent a malformed reply {detail}")


def test_message_without_content_is_a_clear_error(fake_ollama: FakeOllama) -> None:
    fake_ollama.malformed = '{"message": {"role": "assistant"}, "done": true}'
    with pytest.raises(ModelError, match="malformed reply \\(the message has no content\\)"):
        OllamaModel(host=fake_ollama.url).complete(REQUEST)


def test_server_error_names_status_and_detail(fake_ollama: FakeOllama) -> None:
    fake_ollama.status = 500
    fake_ollama.error = "model requires more system memory (5.2 GiB) than is available (1.0 GiB)"
    with pytest.raises(ModelError) as caught:
        OllamaModel(host=fake_ollama.url).complete(REQUEST)
    assert str(caught.value) == (
        f"Ollama at {fake_ollama.url} failed (HTTP 500) with model 'qwen2.5:1.5b': "
        "model requires more system memory (5.2 GiB) than is available (1.0 GiB)"
    )


def test_not_an_ollama_server(fake_ollama: FakeOllama) -> None:
    model = OllamaModel(host=fake_ollama.url + "/elsewhere")
    with pytest.raises(ModelError) as caught:
        model.complete(REQUEST)
    assert str(caught.value) == (
        f"Ollama at {fake_ollama.url}/elsewhere answered 404 (404 page not found); "
        "is OLLAMA_HOST pointing at an Ollama server?"
    )


def test_server_answers(fake_ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch) -> None:
    assert server_answers(fake_ollama.url) is True
    assert server_answers(fake_ollama.host) is True
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    assert server_answers() is True
    assert [r.path for r in fake_ollama.requests] == ["/api/tags"] * 3


def test_server_answers_false_quickly(fake_ollama: FakeOllama) -> None:
    started = time.monotonic()
    assert server_answers(f"127.0.0.1:{free_port()}") is False
    assert server_answers(fake_ollama.url + "/elsewhere") is False  # HTTP, but not Ollama
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        assert server_answers(f"127.0.0.1:{silent.getsockname()[1]}", timeout=0.2) is False
    assert time.monotonic() - started < 1.5


def test_server_answers_does_not_hide_a_bug(monkeypatch: pytest.MonkeyPatch, fake_ollama: FakeOllama) -> None:
    """Only "no server here" is False: a client bug surfaces instead of changing the default."""

    def broken(self: object) -> None:
        raise TypeError("a bug in the client")

    monkeypatch.setattr(backend.ollama.Client, "list", broken)
    with pytest.raises(TypeError, match="a bug in the client"):
        server_answers(fake_ollama.url)


def test_server_answers_reports_a_malformed_host() -> None:
    with pytest.raises(ModelError, match=r"invalid Ollama host '127\.0\.0\.1:port' \(OLLAMA_HOST\)"):
        server_answers("127.0.0.1:port")


def test_fake_server_stops() -> None:
    with FakeOllama() as server:
        url = server.url
        assert server_answers(url)
    assert not server_answers(url)


def test_invalid_host_is_a_clear_error() -> None:
    with pytest.raises(ModelError, match=r"invalid Ollama host '127\.0\.0\.1:port' \(OLLAMA_HOST\)"):
        OllamaModel(host="127.0.0.1:port")
