"""Before/after comparison of two runs, by case id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from localqa.errors import SuiteError
from localqa.evaluate.records import Run


class SavedAnswer(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", strict=True)

    value_correct: bool | None = None  # absent from runs saved before values were scored


class SavedCase(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", strict=True)

    id: str
    passed: bool
    answer: SavedAnswer | None = None


class SavedRun(BaseModel):
    """What a comparison needs of a run saved earlier (by this or an earlier localqa version,
    whose records may hold fields this one no longer knows)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    config: dict[str, Any]
    cases: list[SavedCase]

    @classmethod
    def of(cls, run: Run) -> SavedRun:
        return cls.model_validate(run.model_dump(mode="json"))


class Comparison(BaseModel):
    model_config = ConfigDict(frozen=True)

    before: str
    fixed: list[str]  # failed before, passes now
    regressed: list[str]  # passed before, fails now
    unchanged: list[str]  # passed both times
    still_blocking: list[str]  # failed both times
    new: list[str]
    dropped: list[str]
    config_changes: dict[str, tuple[Any, Any]]
    # Of the cases that state a value and were answered both times: wrong (or not shown) before
    # and right now, and the reverse.
    value_fixed: list[str] = Field(default_factory=list)
    value_regressed: list[str] = Field(default_factory=list)


def load_run(path: Path) -> SavedRun:
    try:
        return SavedRun.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except RecursionError:
        raise SuiteError(f"{path}: not a run saved by 'localqa eval --save' (nested too deeply)") from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the file"
        raise SuiteError(
            f"{path}: not a run saved by 'localqa eval --save' ({where}: {first['msg']})"
        ) from None
    except (OSError, ValueError) as error:
        raise SuiteError(f"{path}: not a run saved by 'localqa eval --save' ({error})") from None


def compare(before: SavedRun, after: SavedRun, before_name: str) -> Comparison:
    old = {c.id: c.passed for c in before.cases}
    new = {c.id: c.passed for c in after.cases}
    both = [i for i in new if i in old]
    old_value = {c.id: c.answer.value_correct for c in before.cases if c.answer}
    new_value = {c.id: c.answer.value_correct for c in after.cases if c.answer}
    return Comparison(
        before=before_name,
        fixed=[i for i in both if new[i] and not old[i]],
        regressed=[i for i in both if old[i] and not new[i]],
        unchanged=[i for i in both if old[i] and new[i]],
        still_blocking=[i for i in both if not old[i] and not new[i]],
        new=[i for i in new if i not in old],
        dropped=[i for i in old if i not in new],
        config_changes=_config_changes(before.config, after.config),
        value_fixed=[i for i in both if old_value.get(i) is False and new_value.get(i) is True],
        value_regressed=[i for i in both if old_value.get(i) is True and new_value.get(i) is False],
    )


def _config_changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    flat_before, flat_after = _flatten(before), _flatten(after)
    ignored = {"created"}
    return {
        key: (flat_before.get(key), flat_after.get(key))
        for key in sorted(set(flat_before) | set(flat_after))
        if key not in ignored and flat_before.get(key) != flat_after.get(key)
    }


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            flat |= _flatten(value, f"{prefix}{key}.")
        else:
            flat[f"{prefix}{key}"] = value
    return flat
