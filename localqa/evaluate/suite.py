"""Evaluation suites: a folder with `cases.toml` and, optionally, its own `docs/` (+ catalog)."""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from localqa.errors import SuiteError
from localqa.evaluate.expected_value import DEFAULT_TOLERANCE, SCALES, ExpectedValue, scale_factor
from localqa.tomlfile import TomlFileError, read_toml
from localqa.types import DEFAULT_ROLE, DEFAULT_TENANT, ROLES, Kind, Location


class Expect(BaseModel):
    """An acceptable piece of evidence. Omitted fields match anything."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    page: int | None = None
    kind: Kind | None = None
    table: int | None = None
    row: int | None = None
    paragraph: int | None = None
    # The heading path (a spreadsheet row's sheet): Word, HTML and slide paragraphs are numbered
    # within their section.
    section: str | None = None
    contains: str | None = None

    def matches(self, location: Location, text: str) -> bool:
        return (
            self.source == location.source
            and all(
                wanted is None or wanted == getattr(location, name)
                for name, wanted in (
                    ("page", self.page),
                    ("kind", self.kind),
                    ("table", self.table),
                    ("row", self.row),
                    ("paragraph", self.paragraph),
                    ("section", self.section),
                )
            )
            and (self.contains is None or self.contains in text)
        )

    def describe(self) -> str:
        parts = [self.source]
        parts += [
            f"{name} {value}"
            for name, value in self.model_dump(exclude={"source", "contains"}).items()
            if value is not None
        ]
        if self.contains:
            parts.append(f"containing {self.contains!r}")
        return ", ".join(str(p) for p in parts)


class Case(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    as_of: date
    question: str
    parts: list[str] = Field(default_factory=list)
    # Search only these documents (file names, globs or series; `localqa.question.scope`), as a person
    # asking about "this report" would pick it: the question is asked within them.
    documents: list[str] = Field(default_factory=list)
    role: str = DEFAULT_ROLE
    tenant: str = DEFAULT_TENANT
    expect: list[Expect]
    phrase: str | None = None
    # The answer's value (`localqa.evaluate.expected_value`): text ("45 minutes"), a number (5409)
    # or a list; for a number, the relative tolerance, the rounding the question states, the scale
    # it is given in ("millions") and its unit ("%").
    value: str | float | list[str | float] | None = None
    tolerance: float | None = None
    decimals: int | None = None
    scale: str | None = None
    unit: str | None = None
    category: str | None = None
    known_failure: str | None = None
    note: str | None = None
    # For a case that expects nothing: where the abstention must happen. "retrieval": no
    # candidates at all (the evidence of absence holds on the text: an identifier nobody eligible
    # carries, no word in common). "answer": retrieval returns its nearest passages and the answer
    # stage must show no quote; a retrieval-only run does not judge such a case.
    abstain_at: Literal["retrieval", "answer"] = "retrieval"

    @field_validator("question")
    @classmethod
    def _has_words(cls, question: str) -> str:
        if not question.strip():
            raise ValueError("the question is blank")
        return question

    @field_validator("parts")
    @classmethod
    def _parts_have_words(cls, parts: list[str]) -> list[str]:
        if any(not part.strip() for part in parts):
            raise ValueError("a part is blank")
        return parts

    @field_validator("documents")
    @classmethod
    def _documents_are_named(cls, documents: list[str]) -> list[str]:
        if any(not name.strip() for name in documents):
            raise ValueError("a document name is blank; give a file name, a glob or a series")
        return documents

    @field_validator("value", mode="before")
    @classmethod
    def _value_is_text_number_or_list(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None:
            return None
        if not info.data.get("expect", True):
            raise ValueError("a case that expects nothing (expect = []) has no value; remove it")
        items = value if isinstance(value, list) else [value]
        if isinstance(value, list) and not value:
            raise ValueError("the list is empty; list the items the answer must give")
        for item in items:
            if isinstance(item, bool) or not isinstance(item, str | int | float):
                raise ValueError(
                    f'{item!r} is neither text nor a number; write value = "45 minutes", value = 5409 '
                    'or value = ["a", "b"]'
                )
            if isinstance(item, str) and not item.strip():
                raise ValueError("the value is blank; write the text the answer's value must hold")
            if isinstance(item, float) and not math.isfinite(item):
                raise ValueError(f"{item} is not a finite number")
        return value

    @field_validator("tolerance", "decimals", "scale", "unit", mode="before")
    @classmethod
    def _number_rules_need_a_number(cls, given: Any, info: ValidationInfo) -> Any:
        value = info.data.get("value")
        if given is not None and (value is None or isinstance(value, str)):
            what = "no value" if value is None else f"a text value ({value!r})"
            raise ValueError(f"{info.field_name} applies to a number, and the case has {what}")
        return given

    @field_validator("tolerance")
    @classmethod
    def _tolerance_is_a_share(cls, tolerance: float | None) -> float | None:
        if tolerance is not None and not 0 <= tolerance < 1:
            raise ValueError(
                f"{tolerance} is not a relative tolerance; give a share from 0 to 1 (0.01 is 1 %)"
            )
        return tolerance

    @field_validator("decimals")
    @classmethod
    def _decimals_are_places(cls, decimals: int | None) -> int | None:
        if decimals is not None and not 0 <= decimals <= 12:
            raise ValueError(f"{decimals} is not a number of decimal places; give 0 to 12")
        return decimals

    @field_validator("scale")
    @classmethod
    def _known_scale(cls, scale: str | None) -> str | None:
        if scale is not None and scale_factor(scale) is None:
            raise ValueError(f"{scale!r} is not a scale; use one of {', '.join(SCALES)}")
        return scale

    @property
    def expected_value(self) -> ExpectedValue | None:
        """What the answer's value must be (None: the case states no value)."""
        value = self.value
        if value is None:
            return None
        if isinstance(value, str):
            return ExpectedValue(text=value)
        return ExpectedValue(
            number=None if isinstance(value, list) else value,
            items=tuple(value) if isinstance(value, list) else None,
            tolerance=DEFAULT_TOLERANCE if self.tolerance is None else self.tolerance,
            decimals=self.decimals,
            scale=self.scale,
            unit=self.unit,
        )

    @field_validator("role")
    @classmethod
    def _known_role(cls, role: str) -> str:
        if role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}")
        return role

    @property
    def answerable(self) -> bool:
        return bool(self.expect)


class Suite(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: Path
    cases: list[Case]
    # The suite holds the answer stage to itself (`hold_answers = true` in cases.toml): a run with
    # answers fails when a no-answer case is shown a quote or a stated value is wrong, outside the
    # cases marked known_failure (`localqa.evaluate.records.answer_stage_failures`).
    hold_answers: bool = False

    @property
    def docs(self) -> Path | None:
        folder = self.path / "docs"
        return folder if folder.is_dir() else None


def load_suite(path: Path) -> Suite:
    """Read `path/cases.toml`; every problem names the case and field."""
    file = path / "cases.toml"
    if not file.is_file():
        raise SuiteError(f"{path}: no cases.toml; a suite is a folder with cases.toml (see evals/README.md)")
    try:
        data: dict[str, Any] = read_toml(file)
    except TomlFileError as error:
        raise SuiteError(f"{file}: {error}") from None
    raw_cases = data.get("case", [])
    if not isinstance(raw_cases, list):
        raise SuiteError(f"{file}: cases must be [[case]] tables")
    hold_answers = data.get("hold_answers", False)
    if not isinstance(hold_answers, bool):
        raise SuiteError(f"{file}: hold_answers must be true or false")
    cases = []
    for number, raw in enumerate(raw_cases, start=1):
        try:
            cases.append(Case.model_validate(raw))
        except ValidationError as error:
            first = error.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            name = raw.get("id", f"#{number}") if isinstance(raw, dict) else f"#{number}"
            raise SuiteError(f"{file}: case {name}: {field}: {first['msg']}") from None
    if not cases:
        raise SuiteError(f"{file}: no [[case]] entries")
    ids = [c.id for c in cases]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise SuiteError(f"{file}: duplicate case id(s) {', '.join(duplicates)}; ids must be unique")
    return Suite(path=path, cases=cases, hold_answers=hold_answers)
