"""Request values the pages and the API read alike: the as-of date and the question's size."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import Depends

from localqa.serve.errors import HttpError
from localqa.settings import MAX_QUESTION_BYTES as MAX_QUESTION_BYTES
from localqa.settings import QUESTION_TOO_LONG, question_too_long
from localqa.shapes import parse_as_of


def as_of_date(value: str | None) -> date:
    """The CLI's rule for --as-of: YYYY-MM-DD, default today."""
    try:
        return parse_as_of(value)
    except ValueError as error:
        raise HttpError(400, f"as_of: {error}") from None


def _as_of_parameter(as_of: str | None = None) -> date:
    return as_of_date(as_of)


# `?as_of=YYYY-MM-DD`, today when absent.
AsOf = Annotated[date, Depends(_as_of_parameter)]


def check_size(*texts: str) -> None:
    if question_too_long(*texts):
        raise HttpError(413, QUESTION_TOO_LONG)
