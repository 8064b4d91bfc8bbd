"""A tiny HTTP server speaking the OpenAI chat completions API (as vLLM and llama-server do),
for the `openai` backend's fault tests: the real llama.cpp server is tested too, but cannot be
made to time out, lose a model or send garbage on demand.

Serves `GET /v1/models` and `POST /v1/chat/completions` under the API root `{url}/v1`. Use the
`fake_openai` fixture, or `with FakeOpenAI() as server: ...`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from fake_ollama import spelt

DEFAULT_CONTENT = '{"source": null, "sentence": null}'


class FakeOpenAI:
    """The server and the knobs a test turns; all may change while it runs."""

    def __init__(self, models: list[str] | None = None, api_key: str | None = None) -> None:
        self.models: list[str] = list(models or ["qwen2.5-1.5b"])
        self.api_key = api_key  # if set: requests without `Authorization: Bearer <key>` get 401
        self.content: str | None = DEFAULT_CONTENT  # choices[0].message.content of every reply
        self.usage: Any = {"prompt_tokens": 120, "completion_tokens": 20, "total_tokens": 140}
        self.timings: Any = None  # if set: llama-server's `timings` object, sent with each reply
        self.delay = 0.0  # seconds before answering a chat request
        self.label_logprob: float | None = None  # as FakeOllama's: logprobs when asked, if set
        self.malformed: str | None = None  # if set: chat answers 200 with this body
        self.status: int | None = None  # if set: chat answers this status with `error`
        self.error: Any = {"message": "internal error", "type": "server_error"}
        self.chats: list[dict[str, Any]] = []  # the JSON bodies received, oldest first
        self.headers: list[dict[str, str]] = []
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.base_url = f"{self.url}/v1"
        self._thread: threading.Thread | None = None

    def reply(self, content: str | dict[str, Any] | None) -> None:
        self.content = content if content is None or isinstance(content, str) else json.dumps(content)

    def start(self) -> FakeOpenAI:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
        self._server.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _handler_for(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)

        def _json(self, status: int, payload: Any) -> None:
            self._send(status, json.dumps(payload).encode())

        def _authorised(self) -> bool:
            if fake.api_key is None or self.headers.get("Authorization") == f"Bearer {fake.api_key}":
                return True
            self._json(401, {"error": {"message": "Invalid API Key", "type": "authentication_error"}})
            return False

        def do_GET(self) -> None:
            if not self._authorised():
                return
            if self.path == "/v1/models":
                self._json(
                    200, {"object": "list", "data": [{"id": m, "object": "model"} for m in fake.models]}
                )
            else:
                self._send(404, b'{"detail": "Not Found"}')

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            fake.headers.append(dict(self.headers))
            if self.path != "/v1/chat/completions":
                self._send(404, b'{"detail": "Not Found"}')
                return
            if not self._authorised():
                return
            body = json.loads(raw)
            fake.chats.append(body)
            if fake.delay:
                fake._stopping.wait(fake.delay)
            if fake.malformed is not None:
                self._send(200, fake.malformed.encode())
            elif fake.status is not None:
                self._json(fake.status, {"error": fake.error})
            elif body.get("model") not in fake.models:
                message = f"The model `{body.get('model')}` does not exist."
                self._json(404, {"error": {"message": message, "code": "model_not_found"}})
            else:
                message = {"role": "assistant", "content": fake.content}
                choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": "stop"}
                if body.get("logprobs") and fake.label_logprob is not None and fake.content is not None:
                    choice["logprobs"] = {"content": spelt(fake.content, fake.label_logprob)}
                reply = {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "model": body["model"],
                    "choices": [choice],
                    "usage": fake.usage,
                }
                if fake.timings is not None:
                    reply["timings"] = fake.timings
                self._json(200, reply)

    return Handler


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A running fake OpenAI-compatible server serving `qwen2.5-1.5b`; stopped after the test."""
    with FakeOpenAI() as server:
        yield server
