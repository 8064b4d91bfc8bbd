"""What the access-rule tests share: the sample library's staff document, and running `index`,
`ask` and `search` on a copy of it the way a librarian would, on either index backend."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from click.testing import CliRunner, Result

from localqa.cli import cli
from localqa.errors import IndexMissingError
from localqa.indexing.index import open_index
from localqa.library import search_parts
from localqa.store import Db
from localqa.types import Caller, Document

STAFF = "staff-procedures.pdf"
ALARM = "When is the alarm code changed?"
ALARM_SENTENCE = "The alarm code is changed every 90 days."
RETIRED = "reading-room-rules-2024.pdf"
RARE_BOOKS = "On which day may rare books be viewed?"
NOV = "2026-11-14"


def index(runner: CliRunner, folder: Path, db: Db, *extra: str) -> Result:
    return runner.invoke(cli, ["index", "--pdfs", str(folder), "--db", str(db), *extra])


def ask(runner: CliRunner, db: Db, question: str, *extra: str) -> Result:
    return runner.invoke(
        cli, ["ask", question, "--as-of", NOV, "--db", str(db), "--model", "extractive", *extra]
    )


def sources_for(db: Db, question: str, role: str = "public") -> set[str]:
    results = search_parts(question, as_of=date(2026, 11, 14), caller=Caller(role=role), db=db, k=50)
    return {c.location.source for r in results for c in r.candidates}


def edit_catalog(folder: Path, old: str, new: str) -> None:
    path = folder / "catalog.toml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def assert_public_never_sees_the_alarm_code(runner: CliRunner, db: Db) -> None:
    assert STAFF not in sources_for(db, ALARM)
    answer = ask(runner, db, ALARM)
    assert answer.exit_code == 0, answer.output
    assert ALARM_SENTENCE not in answer.output and "90 days" not in answer.output


def documents_of(db: Db) -> dict[str, Document] | None:
    """What the index holds, by source (None: there is no index yet)."""
    try:
        with open_index(db) as store:
            return {d.source: d for d in store.documents()}
    except IndexMissingError:
        return None


def errors(result: Result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("Error:")]
