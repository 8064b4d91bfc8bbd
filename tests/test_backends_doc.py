"""The example backend in docs/backends.md works as written: its two files, installed as a
third-party distribution (found by importlib.metadata as an installed package's would be), add
`nth` to the backends, and it answers the sample library with verified quotes."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from localqa.cli import cli

DOC = Path(__file__).resolve().parent.parent / "docs" / "backends.md"
QUESTION = "Can fines be paid in cash?"


def block(language: str) -> str:
    found = re.search(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert found, f"docs/backends.md has no {language} block"
    return found.group(1)


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tomllib.loads(block("toml"))["project"]
    points = project["entry-points"]["localqa.models"]
    (module,) = {value.split(":")[0] for value in points.values()}
    (tmp_path / f"{module}.py").write_text(block("python"), encoding="utf-8")
    info = tmp_path / f"{module}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    entries = "".join(f"{name} = {value}\n" for name, value in points.items())
    (info / "entry_points.txt").write_text(f"[localqa.models]\n{entries}")
    monkeypatch.syspath_prepend(str(tmp_path))


def ask(runner: CliRunner, db: Path, model: str) -> list[str]:
    result = runner.invoke(cli, ["ask", QUESTION, "--as-of", "2026-11-14", "--db", str(db), "--model", model])
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


def test_the_documented_backend_is_listed_and_answers(installed: None, library_db: Path) -> None:
    runner = CliRunner()
    listed = runner.invoke(cli, ["models"]).stdout
    assert re.search(r"^\s+nth\s+available\s+quotes the scorer's n-th sentence \(nth:N\)$", listed, re.M)
    first, second = ask(runner, library_db, "nth:1"), ask(runner, library_db, "nth:2")
    assert first[0].endswith("· model nth:1") and second[0].endswith("· model nth:2")
    # The scorer's first sentence is what the extractive baseline quotes; the second is another.
    assert first[1:] == ask(runner, library_db, "extractive")[1:]
    assert first[1:] != second[1:]
    bad = runner.invoke(cli, ["ask", QUESTION, "--db", str(library_db), "--model", "nth:0"])
    assert bad.exit_code == 2 and bad.output.strip().splitlines()[-1] == (
        "Error: model 'nth:0': the name is a rank, 1 or more"
    )
