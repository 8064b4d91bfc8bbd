"""Printing text that came from documents and file names.

Such text is data. Printed raw, a backspace can erase the "not" in "must not", an ANSI escape can
recolour or clear the screen, a line break inside a file name can start a line that looks like
localqa's own output (a second "verified" answer), a bidirectional override can reverse what
follows, and a zero-width space or byte-order mark makes one file name look like another (a
`policy.pdf` followed by one and `.md`). So every line of text output goes through `visible`,
which shows those characters as escapes instead. JSON output is not touched: it is exact, and
JSON escapes control characters.
"""

from __future__ import annotations

import re

# DEL, C1 controls, the line/paragraph separators, the bidirectional marks, embeddings, overrides
# and isolates, and the characters that print as nothing (zero-width space, joiners, word joiner
# and invisible operators, the Mongolian vowel separator, the byte-order mark); with the C0
# controls (line breaks included) for a terminal line.
_BIDI_AND_C1 = "\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
_UNSAFE = re.compile(f"[\x00-\x1f{_BIDI_AND_C1}]")
# A web page: a line break or tab in a text node is only whitespace; the rest is not.
_UNSAFE_IN_PAGE = re.compile(f"[\x00-\x08\x0b-\x1f{_BIDI_AND_C1}]")


def _escape(match: re.Match[str]) -> str:
    return ascii(match.group())[1:-1]


def visible(text: str) -> str:
    """`text` with every control, line-break and bidi character shown as an escape (`\\x08`,
    `\\n`, `\\u202e`): safe to print on one terminal line."""
    return _UNSAFE.sub(_escape, text)


def visible_in_page(text: str) -> str:
    """`text` for an HTML page (escaped for HTML after this): controls and bidi characters shown
    as escapes, so that an override cannot reverse "must not" on screen; line breaks kept."""
    return _UNSAFE_IN_PAGE.sub(_escape, text)
