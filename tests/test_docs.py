"""The CLI reference (docs/cli.md) is generated from --help and must not drift.

Regenerate it with: python tests/test_docs.py --write
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from click.testing import CliRunner

from localqa.cli import cli
from localqa.settings import AnswerSettings, RetrievalSettings

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
BLOCK = re.compile(r"(<!-- cli-reference -->\n)(.*?)(<!-- /cli-reference -->)", re.S)


def reference() -> str:
    runner = CliRunner()
    sections = []
    for name in sorted(cli.commands):  # type: ignore[attr-defined]
        help_text = runner.invoke(cli, [name, "--help"], prog_name="localqa", terminal_width=100).output
        sections.append(f"### `localqa {name}`\n\n```\n{help_text.rstrip()}\n```\n")
    return "\n".join(sections)


def test_every_command_is_documented_and_current() -> None:
    match = BLOCK.search(REFERENCE.read_text(encoding="utf-8"))
    assert match, "docs/cli.md has no <!-- cli-reference --> block"
    assert match.group(2).strip() == reference().strip(), "stale: run python tests/test_docs.py --write"


ROOT = REFERENCE.parent.parent
PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "evals" / "README.md",
    ROOT / "benchmarks" / "README.md",
    ROOT / "CHANGELOG.md",
]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for a page's headings (lower case, punctuation dropped, spaces to hyphens)."""
    found = set()
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def test_every_relative_link_in_the_docs_leads_somewhere() -> None:
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue  # http:, mailto:
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists() or (anchor and linked.suffix == ".md" and anchor not in anchors(linked)):
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert broken == []


CONFIGURATION = ROOT / "docs" / "configuration.md"
VARIABLE = re.compile(r"\bLOCALQA_[A-Z0-9_]*[A-Z0-9]\b")


def section(text: str, start: str, end: str) -> str:
    return text[text.index(start) : text.index(end, text.index(start))]


def test_every_environment_variable_localqa_reads_is_documented() -> None:
    """Any `LOCALQA_*` name in localqa's source (a variable it reads, or one it names) has a row in
    docs/configuration.md."""
    named = {v for path in (ROOT / "localqa").rglob("*.py") for v in VARIABLE.findall(path.read_text())}
    assert {"LOCALQA_DB", "LOCALQA_MODEL", "LOCALQA_CACHE"} <= named  # the scan finds them
    table = section(CONFIGURATION.read_text(encoding="utf-8"), "## Environment variables", "## Settings")
    assert sorted(v for v in named if f"`{v}`" not in table) == []


def test_every_setting_is_documented() -> None:
    """Every field of RetrievalSettings and AnswerSettings has a row in its table in
    docs/configuration.md (a row may name several fields)."""
    text = CONFIGURATION.read_text(encoding="utf-8")
    tables = {
        RetrievalSettings: section(text, "`RetrievalSettings` decides", "`AnswerSettings` decides"),
        AnswerSettings: section(text, "`AnswerSettings` decides", "## catalog.toml"),
    }
    missing = [
        f"{settings.__name__}.{name}"
        for settings, table in tables.items()
        for name in settings.model_fields
        if not re.search(rf"^\|[^|]*`{name}`", table, re.M)
    ]
    assert missing == []


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    text = REFERENCE.read_text(encoding="utf-8")
    REFERENCE.write_text(
        BLOCK.sub(lambda m: m.group(1) + reference() + "\n" + m.group(3), text), encoding="utf-8"
    )
