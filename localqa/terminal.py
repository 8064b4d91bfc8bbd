"""Printing text that came from documents and file names.

Such text is data. Printed raw, a backspace can erase the "not" in "must not", an ANSI escape can
recolour or clear the screen, a line break inside a file name can start a line that looks like
localqa's own output (a second "verified" answer), and a bidirectional override can reverse what
follows. So every line of text output goes through `visible`, which shows those characters as
escapes instead. JSON output is not touched: it is exact, and JSON escapes control characters.
"""

from __future__ import annotations

import re

# C0 and C1 controls (line breaks included), DEL, the line/paragraph separators, and the
# bidirectional marks, embeddings, overrides and isolates.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """`text` with every control, line-break and bidi character shown as an escape (`\\x08`,
    `\\n`, `\\u202e`): safe to print on one terminal line."""
    return _UNSAFE.sub(lambda match: ascii(match.group())[1:-1], text)
