"""An answer as a chat client or an assistant shows it to its reader: the "Understood as" line of a
rewritten follow-up, then each part as the terminal prints it (how it was read, the value, the
verified quote and its citation, or "No quote verified" and the reason), as Markdown text.

Document text is data: a chat front end renders Markdown, so every character Markdown would read
as markup is escaped (`markdown_escaped`). A quote that writes `![x](http://...)` is shown as
those characters, never as an image fetched from that address or a link to follow. The answer's
JSON, with every quote exactly as verified, rides beside this text (`/v1` `localqa`, MCP
structured content)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from localqa.display import printed
from localqa.display.terminal import visible
from localqa.types import Answer, PartResult

# The characters by which Markdown makes text a link or an image ("[", "]", "!"), HTML or an
# autolink ("<"), code or emphasis: escaped with a backslash, so a quote shows as its characters.
# Parentheses, ">" and "#" stay as written: without "[" no link forms, and a heading or a quote
# mark changes only how a line looks.
_MARKUP = re.compile(r"([\\`*_\[\]!<|~])")


def markdown_escaped(text: str) -> str:
    """`text` as Markdown shows it literally: markup characters escaped, control characters made
    visible (`terminal.visible`), lines kept."""
    return _MARKUP.sub(r"\\\1", visible(text))


def reply_text(
    results: Sequence[PartResult], answers: Sequence[Answer], understood_as: str | None = None
) -> str:
    """The reply's content: "Understood as: ..." when the question was rewritten, then each part."""
    lines: list[str] = []
    if understood_as is not None:
        lines.append(f"Understood as: {understood_as}")
    for number, (result, answer) in enumerate(zip(results, answers, strict=True), start=1):
        lines += printed.part_head(number, result)
        lines += printed.answer_lines(result, answer)
    return markdown_lines("\n".join(lines).strip("\n"))


def markdown_lines(text: str) -> str:
    """`text` escaped line by line (`markdown_escaped`): the printed form holds document text on
    most lines, and its line breaks stay."""
    return "\n".join(markdown_escaped(line) for line in text.splitlines())
