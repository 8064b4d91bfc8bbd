"""What a document's first page says about the document itself: the organisation a filing's
cover names and the period it covers. Routing matches a question's names and fiscal years
against them (`localqa.question.routing`); nothing here changes a passage."""

from __future__ import annotations

import re

from localqa.language.lexicon import LEGAL_FORMS
from localqa.language.text import squash
from localqa.question.periods import cover_period
from localqa.types import Period

# An SEC cover (10-K, 10-Q, 8-K, 20-F...) prints the filer's name on the line(s) just above
# "(Exact name of registrant as specified in its charter)".
_REGISTRANT = re.compile(r"^\(\s*exact\s+name\s+of\s+(?:the\s+)?registrant", re.IGNORECASE | re.MULTILINE)
_LONGEST_NAME = 120


def read_cover(text: str) -> tuple[str | None, Period | None]:
    """(the organisation the cover names, the period it covers), each None when it says none."""
    return registrant(text), cover_period(text)


def registrant(text: str) -> str | None:
    """The filer's name on an SEC cover: the line above "(Exact name of registrant ...)", with the
    line before it when that line is only a legal form ("AMCOR" / "PLC")."""
    lines = [line for line in (squash(line) for line in text.splitlines()) if line]
    found = _REGISTRANT.search("\n".join(lines))
    if found is None:
        return None
    above = "\n".join(lines)[: found.start()].splitlines()
    if not above:
        return None
    name = above[-1]
    # A line that is only a legal form ("PLC", "Inc.") continues the name on the line above it.
    if re.sub(r"\W", "", name).lower() in LEGAL_FORMS and len(above) > 1:
        name = f"{above[-2]} {name}"
    name = name.strip(" _")
    return name if 2 <= len(name) <= _LONGEST_NAME and any(c.isalpha() for c in name) else None
