"""The answer backends: a registry, and how one is chosen.

The built-in backends are declared once, in `BUILTINS`; third-party packages add theirs through
the `localqa.models` entry point group, each entry naming a `localqa.models.base.Backend`
(`mybackend = "mypackage.module:BACKEND"`, docs/backends.md). Both load the same way, on first
use; `register()` adds one from code (the test suite's fake model is registered so).

A model spec is `BACKEND` or `BACKEND:NAME` (`ollama:llama3.2:1b`, `openai:qwen2.5`). Without one:
`LOCALQA_MODEL`, else the available backend with the lowest `default_rank`: `ollama` if a server
answers, else `embedded` if installed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from localqa.errors import ModelError, UnknownModelError
from localqa.models.base import AnswerModel, Availability, Backend

GROUP = "localqa.models"
# The built-in backends, as entry points of the group would name them. Declared here rather than
# in pyproject.toml, so that a source checkout run without being installed (or run beside an
# older install's metadata) has exactly its own. A third party cannot take a built-in's name.
BUILTINS = {
    "ollama": "localqa.models.ollama:BACKEND",
    "embedded": "localqa.models.embedded:BACKEND",
    "extractive": "localqa.models.extractive:BACKEND",
    "openai": "localqa.models.openai:BACKEND",
}

_registered: dict[str, Backend] = {}
_loaded: dict[EntryPoint, Backend] = {}  # entry points already imported


@dataclass(frozen=True)
class BackendInfo:
    """One line of `localqa models`."""

    name: str
    available: bool
    detail: str


def register(backend: Backend) -> None:
    """Make `backend` available by its name (replacing an entry point of the same name)."""
    _registered[backend.name] = backend


def unregister(name: str) -> None:
    _registered.pop(name, None)


def _entry_points() -> dict[str, EntryPoint]:
    found = {point.name: point for point in entry_points(group=GROUP)}
    found.update({name: EntryPoint(name, value, GROUP) for name, value in BUILTINS.items()})
    return found


def names() -> list[str]:
    """Every backend name: automatic-default candidates first (by rank), then the rest by name.
    A backend that cannot be loaded is listed last."""
    points = _entry_points()
    ranks: dict[str, tuple[bool, int, str]] = {}
    for name in {*points, *_registered}:
        try:
            rank = backend(name, points).default_rank
        except ModelError:
            rank = None
        ranks[name] = (rank is None, rank or 0, name)
    return sorted(ranks, key=ranks.__getitem__)


def backend(name: str, points: Mapping[str, EntryPoint] | None = None) -> Backend:
    """The backend registered as `name`; UnknownModelError naming the choices if there is none,
    ModelError if its package cannot be loaded. (`points`: the entry points, if already read.)"""
    if name in _registered:
        return _registered[name]
    point = (points if points is not None else _entry_points()).get(name)
    if point is None:
        raise UnknownModelError(f"unknown model {name!r}; choose one of {_choices()} (see 'localqa models')")
    if point in _loaded:
        return _loaded[point]
    try:
        loaded = point.load()
    except Exception as exc:  # a third party's import error must not read as ours
        raise ModelError(
            f"the answer backend {name!r} ({point.value}) cannot be loaded: {exc}; reinstall the "
            "package that provides it, or remove it"
        ) from exc
    if not isinstance(loaded, Backend) or loaded.name != name:
        raise ModelError(f"the entry point {name!r} ({point.value}) is not a localqa Backend named {name!r}")
    _loaded[point] = loaded
    return loaded


def _choices() -> str:
    return ", ".join(names())


def get_model(spec: str | None = None, options: Mapping[str, Any] | None = None) -> AnswerModel:
    """The model named by `spec` (or chosen by default), with `options` for it; nothing heavy is
    loaded until its first answer."""
    spec = spec or default_spec()
    name, _, model_name = spec.partition(":")
    points = _entry_points()
    if name not in _registered and name not in points:
        raise UnknownModelError(f"unknown model {spec!r}; choose one of {_choices()} (see 'localqa models')")
    chosen = backend(name, points)
    if model_name and not chosen.takes_name:
        named = [f"{n}:NAME" for n in names() if _takes_name(n)]
        raise UnknownModelError(f"model {spec!r}: {name} takes no model name (these do: {', '.join(named)})")
    return chosen.create(model_name or None, options or {})


def _takes_name(name: str) -> bool:
    try:
        return backend(name).takes_name
    except ModelError:
        return False


MODEL_ENV = "LOCALQA_MODEL"


def default_spec() -> str:
    """The model used when none is named: $LOCALQA_MODEL, else the automatic choice
    (`default_backend`). ModelError when neither gives one."""
    return os.environ.get(MODEL_ENV) or default_backend()


def default_backend() -> str:
    """The first available backend by `default_rank`; ModelError naming every way out if none."""
    reasons = []
    for name in names():
        try:
            candidate = backend(name)
        except ModelError:
            continue
        if candidate.default_rank is None:
            continue
        state = candidate.check()
        if state.available:
            return candidate.name
        reasons.append(state.fix or f"{candidate.name} is not available")
    raise ModelError(
        f"no answer backend is available: {'; '.join(reasons)}; or use --model extractive for the "
        "no-model baseline"
    )


def backends() -> list[BackendInfo]:
    """Every backend, whether it can run here, and what it is."""
    found = []
    for name in names():
        try:
            state: Availability = backend(name).check()
        except ModelError as error:
            state = Availability(False, str(error))
        found.append(BackendInfo(name, state.available, state.detail))
    return found
