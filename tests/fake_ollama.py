"""A small HTTP server speaking enough of Ollama's API for the `ollama` client.

No Ollama server can be installed on the machines this is developed on, so the `ollama` backend is
tested against this. It serves, on 127.0.0.1 and a free port:

- `GET /` ("Ollama is running"), `GET /api/version`, `GET /api/tags` (the pulled `models`);
- `POST /api/chat`, answering like Ollama (non-streaming JSON, or NDJSON when `stream` is true)
  with the content chosen by `reply()`, 404 `model "x" not found, try pulling it first` for a
  model not in `models`, after `delay` seconds, or with the raw `malformed` body.

Every request is recorded in `requests` (method, path, parsed JSON body).

Use the `fake_ollama` fixture (import it into a conftest, or list this module in
`pytest_plugins`), or `with FakeOllama() as server: ...`.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

DEFAULT_MODELS = ("qwen2.5:1.5b",)
DEFAULT_CONTENT = '{"source": null, "sentence": null}'
VERSION = "0.12.6"


@dataclass
class Request:
    method: str
    path: str
    body: Any  # the parsed JSON body; None when empty or not JSON
    raw: bytes = b""


class FakeOllama:
    """The server and the knobs a test turns. All attributes may be changed while it runs."""

    def __init__(self, models: list[str] | None = None) -> None:
        self.models: list[str] = list(DEFAULT_MODELS if models is None else models)
        self.content: str = DEFAULT_CONTENT  # message.content of every chat reply
        # If set, a request with `logprobs` gets the reply's tokens with this log probability on
        # the label's token (see spelt); None: the server sends none, as Ollama before 0.12.11.
        self.label_logprob: float | None = None
        self.delay: float = 0.0  # seconds to wait before answering /api/chat
        self.malformed: bytes | str | None = None  # if set: /api/chat answers 200 with this body
        self.status: int | None = None  # if set: /api/chat answers this status with `error`
        self.error: str = "internal error"
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self.port: int = self._server.server_address[1]
        self.host: str = f"127.0.0.1:{self.port}"  # as OLLAMA_HOST would be written
        self.url: str = f"http://{self.host}"
        self._thread: threading.Thread | None = None

    # -- the test's API ---------------------------------------------------------------------

    def reply(self, content: str | dict[str, Any]) -> None:
        """Set the message content of the next chat replies (a dict is sent as its JSON)."""
        self.content = content if isinstance(content, str) else json.dumps(content)

    @property
    def chats(self) -> list[dict[str, Any]]:
        """The JSON bodies of the `POST /api/chat` requests received, oldest first."""
        with self._lock:
            return [r.body for r in self.requests if r.path == "/api/chat" and r.method == "POST"]

    @property
    def last_chat(self) -> dict[str, Any]:
        chats = self.chats
        assert chats, "no /api/chat request was received"
        return chats[-1]

    def start(self) -> FakeOllama:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping in `delay`
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- used by the handler -----------------------------------------------------------------

    def _record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def _has_model(self, name: str) -> bool:
        return name in self.models or (":" not in name and f"{name}:latest" in self.models)

    def _sleep(self) -> None:
        if self.delay > 0:
            self._stopping.wait(self.delay)


def free_port() -> int:
    """A port on 127.0.0.1 with nothing listening."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _handler_for(fake: FakeOllama) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "FakeOllama"
        protocol_version = "HTTP/1.0"  # one request per connection: nothing lingers at shutdown

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)

        def _json(self, status: int, payload: Any) -> None:
            self._send(status, json.dumps(payload).encode(), "application/json; charset=utf-8")

        def _read(self) -> Request:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            request = Request(self.command, self.path, body, raw)
            fake._record(request)
            return request

        def do_HEAD(self) -> None:
            self._read()
            self.send_response(200 if self.path == "/" else 404)
            self.end_headers()

        def do_GET(self) -> None:
            self._read()
            if self.path == "/":
                self._send(200, b"Ollama is running", "text/plain; charset=utf-8")
            elif self.path == "/api/version":
                self._json(200, {"version": VERSION})
            elif self.path == "/api/tags":
                self._json(200, {"models": [_tag(name) for name in fake.models]})
            else:
                self._send(404, b"404 page not found", "text/plain")

        def do_POST(self) -> None:
            request = self._read()
            if self.path != "/api/chat":
                self._send(404, b"404 page not found", "text/plain")
                return
            body = request.body
            if not isinstance(body, dict):
                self._json(400, {"error": "invalid request body"})
                return
            model = str(body.get("model", ""))
            if not model:
                self._json(400, {"error": "model is required"})
                return
            fake._sleep()
            if fake.malformed is not None:
                raw = fake.malformed
                self._send(200, raw.encode() if isinstance(raw, str) else raw, "application/json")
                return
            if fake.status is not None:
                self._json(fake.status, {"error": fake.error})
                return
            if not fake._has_model(model):
                self._json(404, {"error": f'model "{model}" not found, try pulling it first'})
                return
            final = _chat_reply(model, fake.content)
            if body.get("logprobs") and fake.label_logprob is not None:
                final["logprobs"] = spelt(fake.content, fake.label_logprob)
            if body.get("stream", True):
                chunk = {
                    "model": model,
                    "created_at": _now(),
                    "message": {"role": "assistant", "content": fake.content},
                    "done": False,
                }
                final["message"]["content"] = ""
                lines = [json.dumps(chunk), json.dumps(final)]
                self._send(200, ("\n".join(lines) + "\n").encode(), "application/x-ndjson")
            else:
                self._json(200, final)

    return Handler


def spelt(content: str, label_logprob: float) -> list[dict[str, Any]]:
    """`content` as a server's token log probabilities: the `source` label one token with
    `label_logprob`, the text before and after it one token each, certain."""
    found = re.search(r'"source"\s*:\s*"([^"]*)"', content)
    if found is None:
        return [{"token": content, "logprob": 0.0}]
    start, end = found.span(1)
    pieces = [(content[:start], 0.0), (content[start:end], label_logprob), (content[end:], 0.0)]
    return [{"token": token, "logprob": logprob, "top_logprobs": []} for token, logprob in pieces if token]


def _chat_reply(model: str, content: str) -> dict[str, Any]:
    return {
        "model": model,
        "created_at": _now(),
        "message": {"role": "assistant", "content": content},
        "done_reason": "stop",
        "done": True,
        "total_duration": 1_000_000,
        "load_duration": 100_000,
        "prompt_eval_count": 42,
        "prompt_eval_duration": 500_000,
        "eval_count": max(1, len(content) // 4),
        "eval_duration": 400_000,
    }


def _tag(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "model": name,
        "modified_at": "2025-01-01T00:00:00.000000000Z",
        "size": 986_061_892,
        "digest": hashlib.sha256(name.encode()).hexdigest(),
        "details": {
            "parent_model": "",
            "format": "gguf",
            "family": "qwen2",
            "families": ["qwen2"],
            "parameter_size": "1.5B",
            "quantization_level": "Q4_K_M",
        },
    }


@pytest.fixture
def fake_ollama() -> Iterator[FakeOllama]:
    """A running fake Ollama server (models: qwen2.5:1.5b); stopped after the test."""
    with FakeOllama() as server:
        yield server
