"""The README's CLI reference is generated from --help and must not drift.

Regenerate it with: python tests/test_docs.py --write
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from click.testing import CliRunner

from localqa.cli import cli

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"(<!-- cli-reference -->\n)(.*?)(<!-- /cli-reference -->)", re.S)


def reference() -> str:
    runner = CliRunner()
    sections = []
    for name in sorted(cli.commands):  # type: ignore[attr-defined]
        help_text = runner.invoke(cli, [name, "--help"], prog_name="localqa", terminal_width=100).output
        sections.append(f"### `localqa {name}`\n\n```\n{help_text.rstrip()}\n```\n")
    return "\n".join(sections)


def test_every_command_is_documented_and_current() -> None:
    match = BLOCK.search(README.read_text(encoding="utf-8"))
    assert match, "README.md has no <!-- cli-reference --> block"
    assert match.group(2).strip() == reference().strip(), "stale: run python tests/test_docs.py --write"


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    text = README.read_text(encoding="utf-8")
    README.write_text(
        BLOCK.sub(lambda m: m.group(1) + reference() + "\n" + m.group(3), text), encoding="utf-8"
    )
