"""Access never widens by accident (issue 10): each break an adversarial pass found, reproduced the
way it was found, against the real CLI, real PDFs and a real index.

The rule: a document indexed with an access label keeps it (and its status and tenant) until an
explicit catalog entry says otherwise; a catalog that cannot be read stops the refresh; a catalog
key that misses its file stops the refresh (a file without an entry beside an entry without a
file), and one written without quotes blocks the file; links do not lead out of the library
folder; one writer at a time; text from documents and file names never controls the terminal.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from access import (
    ALARM,
    NOV,
    RARE_BOOKS,
    RETIRED,
    STAFF,
    ask,
    assert_public_never_sees_the_alarm_code,
    documents_of,
    edit_catalog,
    errors,
    index,
    sources_for,
)
from backends import BOTH, NewIndex, contents
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from index_oracle import index_files

from localqa.cli import cli
from localqa.errors import CatalogError
from localqa.indexing.catalog import visible_labels
from localqa.indexing.index import open_index, refresh_index
from localqa.library import search_parts
from localqa.store import Db, describe, postgres_url
from localqa.types import Caller, Document, Status
from tests.properties import examples

BACKENDS = BOTH

REPO = Path(__file__).resolve().parent.parent


# --- 1. a catalog key that misses its file ------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "says"),
    [
        (
            '["Staff-procedures.pdf"]',
            "1 file has no entry (staff-procedures.pdf) while 1 entry matches no file (Staff-procedures.pdf)",
        ),
        (
            '["staff-procedure.pdf"]',
            "1 file has no entry (staff-procedures.pdf) while 1 entry matches no file (staff-procedure.pdf)",
        ),
        ("[staff-procedures.pdf]", 'write it in quotes: ["staff-procedures.pdf"]'),
    ],
    ids=["case", "small-edit", "unquoted"],
)
@pytest.mark.parametrize("history", ["indexed-before", "never-indexed"])
def test_a_key_that_misses_its_file_is_an_error_and_the_file_is_never_public(
    indexed: tuple[Path, Db], new_index: NewIndex, runner: CliRunner, written: str, says: str, history: str
) -> None:
    folder, db = indexed
    if history == "never-indexed":
        db = new_index()
    before = documents_of(db)
    edit_catalog(folder, '["staff-procedures.pdf"]', written)
    result = index(runner, folder, db)
    assert result.exit_code == 1
    [error] = errors(result)
    assert says in error, error
    if written.startswith('["'):
        # A key that matches no file beside a file without an entry: the refresh stops.
        assert error.startswith(f"Error: {folder / 'catalog.toml'}: ")
        assert documents_of(db) == before
    else:
        # Blocked, it is visible to nobody (staff included) until the key is fixed.
        assert error.startswith(f"Error: {STAFF}: ")
        assert STAFF not in sources_for(db, ALARM, role="staff")
    if before is not None:
        assert_public_never_sees_the_alarm_code(runner, db)
    # The fix indexes it, as staff.
    edit_catalog(folder, written, '["staff-procedures.pdf"]')
    assert index(runner, folder, db).exit_code == 0
    assert STAFF in sources_for(db, ALARM, role="staff")
    assert_public_never_sees_the_alarm_code(runner, db)


def test_an_unrelated_orphan_entry_is_only_a_warning(indexed: tuple[Path, Db], runner: CliRunner) -> None:
    folder, db = indexed
    with (folder / "catalog.toml").open("a", encoding="utf-8") as catalog:
        catalog.write('\n["annual-report-2019.pdf"]\naccess = "public"\n')
    result = index(runner, folder, db)
    assert result.exit_code == 0
    assert (
        "Warning: annual-report-2019.pdf: catalog.toml has an entry for a file that is not in"
        in result.stderr
    )


def test_keys_and_file_names_compare_in_nfc(sample_pdfs: Path, tmp_path: Path, runner: CliRunner) -> None:
    # The file name on disk is NFC; the key was typed (or stored) in NFD: the same name.
    nfc = unicodedata.normalize("NFC", "staff-procédures.pdf")
    nfd = unicodedata.normalize("NFD", nfc)
    assert nfc != nfd
    (sample_pdfs / STAFF).rename(sample_pdfs / nfc)
    edit_catalog(sample_pdfs, f'["{STAFF}"]', f'["{nfd}"]')
    db = tmp_path / "library.sqlite3"
    result = index(runner, sample_pdfs, db)
    assert result.exit_code == 0, result.output
    assert nfc in sources_for(db, ALARM, role="staff")
    assert_public_never_sees_the_alarm_code(runner, db)


# --- 1b. a catalog that vanishes or cannot be read ----------------------------------------------


def test_removing_the_catalog_keeps_every_indexed_label(indexed: tuple[Path, Db], runner: CliRunner) -> None:
    folder, db = indexed
    (folder / "catalog.toml").unlink()
    result = index(runner, folder, db)
    assert result.exit_code == 0
    assert "Warning: catalog.toml: was removed: documents indexed before keep the metadata" in result.stderr
    assert f"Warning: {STAFF}: has no catalog entry any more; it keeps the metadata it was indexed with " in (
        result.stderr
    )
    assert_public_never_sees_the_alarm_code(runner, db)
    assert STAFF in sources_for(db, ALARM, role="staff")
    # The retired document stays retired, for everybody.
    assert RETIRED not in sources_for(db, RARE_BOOKS, role="staff")
    # A rebuild does not forget either.
    assert index(runner, folder, db, "--rebuild").exit_code == 0
    assert_public_never_sees_the_alarm_code(runner, db)
    assert RETIRED not in sources_for(db, RARE_BOOKS, role="staff")


def test_a_folder_that_never_had_a_catalog_is_public(
    sample_pdfs: Path, new_index: NewIndex, runner: CliRunner
) -> None:
    (sample_pdfs / "catalog.toml").unlink()
    db = new_index()
    assert index(runner, sample_pdfs, db).exit_code == 0
    assert STAFF in sources_for(db, ALARM)  # no catalog, ever: every file is public (README says so)


@pytest.mark.parametrize("how", ["dangling-link", "link-out-of-the-folder", "unreadable"])
def test_a_catalog_that_cannot_be_read_stops_the_refresh(
    indexed: tuple[Path, Db], tmp_path: Path, runner: CliRunner, how: str
) -> None:
    folder, db = indexed
    catalog = folder / "catalog.toml"
    before = contents(db)
    outside = tmp_path / "outside.toml"
    outside.write_text('["staff-procedures.pdf"]\naccess = "public"\n', encoding="utf-8")
    catalog.unlink()
    if how == "dangling-link":
        catalog.symlink_to(tmp_path / "nowhere.toml")
    elif how == "link-out-of-the-folder":
        catalog.symlink_to(outside)
    else:
        catalog.mkdir()  # exists, but cannot be read as a file
    result = index(runner, folder, db)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {catalog}: ") and "Traceback" not in result.stderr
    assert contents(db) == before
    assert_public_never_sees_the_alarm_code(runner, db)


# --- 2. one writer at a time -------------------------------------------------------------------------


@contextmanager
def another_writer(db: Db) -> Iterator[str]:
    """Hold the index's writer lock as another `localqa index` would; what a second run says
    while it waits for it."""
    url = postgres_url(db)
    if url is None:
        from localqa.store.sqlite import _writer_lock

        with _writer_lock(Path(db), None):
            yield f"Waiting: waiting for localqa index (pid {os.getpid()}), which is writing {db}\n"
        return
    import psycopg

    from localqa.store import postgres

    with psycopg.connect(url, autocommit=True) as connection, postgres._writer_lock(connection, url, None):
        yield f"Waiting: waiting for another localqa index, which is writing {describe(url)}\n"


def test_a_second_index_run_waits_and_reads_the_catalog_inside_the_lock(indexed: tuple[Path, Db]) -> None:
    folder, db = indexed
    events = "When is the next community event?"
    assert "community-events.pdf" in sources_for(db, events)
    with another_writer(db) as says:  # another writer holds the index ...
        process = subprocess.Popen(
            [sys.executable, "-m", "localqa", "index", "--pdfs", str(folder), "--db", str(db)],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            waiting = process.stderr.readline() if process.stderr else ""  # ... and it says it waits
            assert waiting == says
            # An edit made while it waits: community-events.pdf becomes staff-only.
            edit_catalog(
                folder,
                'access = "public"\ntenant = "default"\ntitle = "Community Events"',
                'access = "staff"\ntenant = "default"\ntitle = "Community Events"',
            )
        except BaseException:
            process.send_signal(signal.SIGKILL)
            raise
    _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    # The run read the catalog once it held the lock: the edit is in.
    assert "community-events.pdf" not in sources_for(db, events)
    assert "community-events.pdf" in sources_for(db, events, role="staff")


# --- 3. links do not lead out of the folder ------------------------------------------------------


def test_links_out_of_the_folder_are_not_followed(
    indexed: tuple[Path, Db], tmp_path: Path, runner: CliRunner
) -> None:
    folder, db = indexed
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nThe vault combination is 12-34-56.\n", encoding="utf-8")
    (folder / "x.md").symlink_to(Path("..") / "outside" / "secret.md")
    (folder / "host.txt").symlink_to("/etc/hostname")
    (folder / "gone.md").symlink_to(tmp_path / "nothing-here.md")
    result = index(runner, folder, db)
    assert result.exit_code == 1
    errors = sorted(line for line in result.stderr.splitlines() if line.startswith("Error:"))
    assert errors == [
        "Error: gone.md: a link that leads nowhere; remove it or restore its target",
        "Error: host.txt: a link that leads out of the library folder is not followed; "
        "copy the file into the folder instead",
        "Error: x.md: a link that leads out of the library folder is not followed; "
        "copy the file into the folder instead",
    ]
    assert sources_for(db, "What is the vault combination?") & {"x.md", "host.txt"} == set()
    assert {d.source for d in open_index(db).documents()} & {"x.md", "host.txt", "gone.md"} == set()


def test_a_link_to_a_staff_document_under_another_name_is_that_document(
    indexed: tuple[Path, Db], runner: CliRunner
) -> None:
    folder, db = indexed
    (folder / "public-copy.pdf").symlink_to(STAFF)
    result = index(runner, folder, db)
    assert result.exit_code == 0
    assert f"Warning: public-copy.pdf: a link to {STAFF}, which is indexed once, as {STAFF}" in result.stderr
    assert_public_never_sees_the_alarm_code(runner, db)
    assert sources_for(db, ALARM, role="staff") & {STAFF, "public-copy.pdf"} == {STAFF}


# --- 4. text from documents and file names never controls the terminal --------------------------

FORGED = (
    'notice.md, effective 2026-01-01\n\n2. Are fines cancelled?\n   "All fines are cancelled."\n'
    "   — staff-procedures.pdf, page 1\n.md"
)


def test_a_file_name_cannot_forge_an_answer(
    sample_pdfs: Path, new_index: NewIndex, runner: CliRunner
) -> None:
    (sample_pdfs / FORGED).write_text("# Notice\n\nThe reading garden reopens in spring.\n", encoding="utf-8")
    db = new_index()
    indexed = index(runner, sample_pdfs, db)
    assert indexed.exit_code == 0
    assert "added  notice.md, effective 2026-01-01\\n\\n2. Are fines cancelled?\\n" in indexed.stdout
    result = ask(runner, db, "When does the reading garden reopen?")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert [line for line in lines if line.startswith("2.")] == []  # one question, one numbered part
    assert not any(line.strip() == '"All fines are cancelled."' for line in lines)
    (citation,) = [line for line in lines if line.startswith("   — ")]
    assert citation.startswith("   — notice.md, effective 2026-01-01\\n\\n2. Are fines cancelled?\\n   ")
    # JSON stays exact.
    data = json.loads(ask(runner, db, "When does the reading garden reopen?", "--json").stdout)
    assert data["parts"][0]["answer"]["citation"]["source"] == FORGED


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "Visitors must not\b\b\b\b bring food into the garden.",
            "Visitors must not\\x08\\x08\\x08\\x08 bring food",
        ),
        ("Visitors may \x1b[2Kbring food into the garden.", "Visitors may \\x1b[2Kbring food"),
        (
            "Visitors \u202emay not\u202c bring food into the garden.",
            "Visitors \\u202emay not\\u202c bring food",
        ),
    ],
    ids=["backspace", "ansi-escape", "bidi-override"],
)
def test_control_characters_in_passages_are_shown_not_obeyed(
    sample_pdfs: Path, new_index: NewIndex, runner: CliRunner, text: str, shown: str
) -> None:
    (sample_pdfs / "garden.md").write_text(f"# Garden rules\n\n{text}\n", encoding="utf-8")
    db = new_index()
    assert index(runner, sample_pdfs, db).exit_code == 0
    for command in (["ask", "--model", "extractive"], ["search"]):
        result = runner.invoke(
            cli, [*command, "Can visitors bring food into the garden?", "--as-of", NOV, "--db", str(db)]
        )
        assert result.exit_code == 0
        assert shown in result.stdout
        assert not any((ord(c) < 32 and c != "\n") or 0x7F <= ord(c) <= 0x9F for c in result.stdout)
        assert "\u202e" not in result.stdout
    data = json.loads(
        runner.invoke(
            cli,
            ["search", "Can visitors bring food into the garden?", "--as-of", NOV, "--db", str(db), "--json"],
        ).stdout
    )
    assert data["parts"][0]["candidates"][0]["text"] == text  # exact


# --- 6. evaluation keeps work and takes a realistic suite ---------------------------------------


def test_a_suite_with_a_mislabelled_document_runs_and_the_document_is_invisible(
    tmp_path: Path, runner: CliRunner, backend: str, new_index: NewIndex
) -> None:
    """With a PostgreSQL --db, the suite's own documents are indexed into a schema of their own
    in that database."""
    suite = tmp_path / "suite"
    docs = suite / "docs"
    docs.mkdir(parents=True)
    (docs / "open.md").write_text("# Hours\n\nThe office opens at nine.\n", encoding="utf-8")
    (docs / "payroll.md").write_text("# Payroll\n\nSalaries are paid on the 25th.\n", encoding="utf-8")
    (docs / "catalog.toml").write_text(
        '["open.md"]\naccess = "public"\n\n["payroll.md"]\ntitle = "Payroll"\n', encoding="utf-8"
    )
    (suite / "cases.toml").write_text(
        '[[case]]\nid = "hours"\nas_of = 2026-11-14\nquestion = "When does the office open?"\n'
        'expect = [{ source = "open.md" }]\n\n'
        '[[case]]\nid = "payday"\nas_of = 2026-11-14\nquestion = "When are salaries paid?"\nrole = "staff"\n'
        "expect = []\n",
        encoding="utf-8",
    )
    beside = [] if backend == "sqlite" else ["--db", str(new_index())]
    result = runner.invoke(cli, ["eval", str(suite), *beside])
    assert result.exit_code == 0, result.output
    assert (
        "Error: payroll.md: catalog.toml: access missing; the document is indexed but visible to nobody"
        in (result.stderr)
    )
    assert "Cases passed: 2/2" in result.stdout


@pytest.fixture
def lab_suite() -> Path:
    return REPO / "evals" / "lab"


def test_a_malformed_compare_file_is_refused_before_the_run(
    lab_suite: Path, tmp_path: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    import localqa.evaluate.run

    def must_not_run(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the suite ran although --compare was unusable")

    monkeypatch.setattr(localqa.evaluate.run, "run_suite", must_not_run)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    result = runner.invoke(cli, ["eval", str(lab_suite), "--compare", str(deep)])
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {deep}: not a run saved by 'localqa eval --save' (nested too deeply)\n")


def test_saved_runs_and_reports_are_written_atomically(
    lab_suite: Path, tmp_path: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    saved, report = tmp_path / "run.json", tmp_path / "report.md"
    assert (
        runner.invoke(cli, ["eval", str(lab_suite), "--save", str(saved), "--report", str(report)]).exit_code
        == 0
    )
    before = saved.read_bytes(), report.read_bytes()

    def full_disk(*args: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device", str(saved))

    monkeypatch.setattr(os, "replace", full_disk)
    result = runner.invoke(cli, ["eval", str(lab_suite), "--save", str(saved), "--chunking", "body"])
    assert result.exit_code == 1
    assert result.stderr == f"Error: {saved}: No space left on device\n"
    assert (saved.read_bytes(), report.read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "report.md",
        "run.json",
    ]  # no half-written leftovers


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (
            json.dumps(
                {
                    "id": "lab-ns7-calibration",
                    "quote": "x",
                    "citation": {"source": "a.md", "kind": "prose", "page": 2**63},
                }
            )
            + "\n",
            "line 1: not a recorded answer (citation.page: Input should be less than or equal to 2147483647)",
        ),
        (b'{"id": "x", "quote": "caf\xe9"}\n', "not UTF-8 text (invalid continuation byte at byte 25)"),
    ],
    ids=["page-beyond-64-bits", "not-utf8"],
)
def test_bad_recorded_answers_are_one_error_line(
    lab_suite: Path, tmp_path: Path, runner: CliRunner, content: str | bytes, says: str
) -> None:
    answers = tmp_path / "answers.jsonl"
    if isinstance(content, bytes):
        answers.write_bytes(content)
    else:
        answers.write_text(content, encoding="utf-8")
    result = runner.invoke(cli, ["eval", str(lab_suite), "--answers", str(answers)])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {answers}") and says in result.stderr, result.stderr
    assert "Traceback" not in result.output


@pytest.mark.sqlite_only
def test_sqlite_errors_name_the_index(
    indexed: tuple[Path, Db], runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from localqa.store.sqlite import SQLiteWriter

    folder, db = indexed
    # A corrupt index: the message names it.
    damaged = db.with_name("damaged.sqlite3")
    data = db.read_bytes()
    damaged.write_bytes(data[:4096] + b"\xff" * (len(data) - 4096))
    result = runner.invoke(cli, ["search", ALARM, "--as-of", NOV, "--db", str(damaged)])
    assert result.exit_code == 1 and result.stderr.startswith(f"Error: {damaged}")
    # An index that cannot be opened, or created.
    folder_db = db.with_name("a-folder.sqlite3")
    folder_db.mkdir()
    result = runner.invoke(cli, ["search", ALARM, "--as-of", NOV, "--db", str(folder_db)])
    assert result.exit_code == 2 and str(folder_db) in result.stderr
    under_a_file = damaged / "library.sqlite3"
    result = index(runner, folder, under_a_file)
    assert result.exit_code == 1 and result.stderr.startswith(f"Error: {damaged}"), result.stderr
    # A full disk while writing.
    before = db.read_bytes()

    def full(self: SQLiteWriter) -> Any:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(SQLiteWriter, "finish", full)
    (folder / "faq.md").write_text("# FAQ\n\nParking is free.\n", encoding="utf-8")
    result = index(runner, folder, db)
    assert result.exit_code == 1
    assert result.stderr == f"Error: {db}: database or disk is full; the index was left as it was\n"
    assert db.read_bytes() == before
    assert index_files(db.parent) == sorted(
        [db.name, f"{db.name}.lock", "a-folder.sqlite3", "damaged.sqlite3"]
    )


# --- the property: random catalog edits never widen access ---------------------------------------

FILES = ("alpha.md", "bêta.md", "gamma.md", "délta.md")  # two with an accent: NFC and NFD differ
ROLES = ("public", "staff")
TENANTS = ("default", "acme")
entries = st.fixed_dictionaries(
    {
        "access": st.sampled_from(["public", "staff", "staff", "finance"]),
        "status": st.sampled_from(["current", "current", "retired", "draft"]),
        "tenant": st.sampled_from(TENANTS),
    }
)
edits = st.sampled_from(
    [
        "keep",
        "delete",
        "rename-case",
        "typo",
        "retype-access",
        "unquote",
        "explicit",
        "folder-key",  # the key names the file with a folder
        "unicode-twice",  # the entry again, in the other Unicode form, public
        "rename-file",  # the file renamed, its entry left as it was
        "rename-file-and-entry",  # the file and its entry renamed together
        "rename-file-drop-entry",  # the file renamed, its entry removed
        "copy-file",  # a copy under a new name, without an entry
    ]
)
CATALOG_NAMES = ("catalog.toml", "catalog.toml", "Catalog.toml", "catalogue.toml", "catalog.toml.txt")


def write_catalog(folder: Path, catalog: dict[str, dict[str, str] | str], name: str = "catalog.toml") -> None:
    lines = []
    for key, entry in catalog.items():
        if isinstance(entry, str):  # raw lines, as a person may mistype them
            lines.append(entry)
            continue
        lines.append(f'["{key}"]')
        lines += [f'{field} = "{value}"' for field, value in entry.items()]
        lines.append("")
    (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


def may_see(document: Document, caller: Caller) -> bool:
    return (
        document.tenant == caller.tenant
        and document.access in visible_labels(caller.role)
        and document.status is Status.CURRENT
    )


def granted(entry: dict[str, str] | str | None, caller: Caller) -> bool:
    """Does the new catalog explicitly grant `caller` this file?"""
    return (
        isinstance(entry, dict)
        and entry.get("tenant", "default") == caller.tenant
        and entry.get("access") in visible_labels(caller.role)
        and entry.get("status", "current") == "current"
    )


def edit(
    folder: Path, name: str, change: str, entry: dict[str, str], flip: str
) -> dict[str, dict[str, str] | str]:
    """The catalog entries (key -> entry, or raw lines) after one edit of `name`'s entry, making
    the edit's change to the folder too (a renamed or copied file)."""
    renamed = f"renamed-{name}"
    if change == "keep":
        return {name: entry}
    if change == "delete":
        return {}
    if change == "rename-case":
        return {name.upper(): entry}
    if change == "typo":
        return {name.replace(".md", "s.md"): entry}
    if change == "retype-access":
        return {name: {**entry, "access": "Public"}}
    if change == "unquote":
        return {name: f"[{name}]\n" + "\n".join(f'{k} = "{v}"' for k, v in entry.items()) + "\n"}
    if change == "explicit":
        return {name: {**entry, "access": "public" if name == flip else entry["access"]}}
    if change == "folder-key":
        return {f"pdfs/{name}": {**entry, "access": "public"}}
    if change == "unicode-twice":
        other = unicodedata.normalize("NFD", name)
        if other == name:  # the same key twice: not valid TOML
            return {name: entry, f"{name} again": f'["{name}"]\naccess = "public"\n'}
        return {name: entry, other: {**entry, "access": "public"}}
    if change == "copy-file":
        shutil.copy(folder / name, folder / f"copy-of-{name}")
        return {name: entry}
    (folder / name).rename(folder / renamed)
    if change == "rename-file":
        return {name: entry}
    if change == "rename-file-and-entry":
        return {renamed: entry}
    return {}  # rename-file-drop-entry


@settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    before=st.fixed_dictionaries({name: entries for name in FILES}),
    changes=st.fixed_dictionaries({name: edits for name in FILES}),
    remove_catalog=st.booleans(),
    catalog_name=st.sampled_from(CATALOG_NAMES),
    flip=st.sampled_from(FILES),
)
def test_random_catalog_edits_never_widen_access(
    tmp_path_factory: pytest.TempPathFactory,
    new_index: NewIndex,
    before: dict[str, dict[str, str]],
    changes: dict[str, str],
    remove_catalog: bool,
    catalog_name: str,
    flip: str,
) -> None:
    """Whatever happens to the catalog and the files (entries edited, misspelt, deleted, given a
    folder or written twice; files renamed or copied; the catalog removed or misnamed), a caller
    sees a document only if they saw its content before, or the new catalog grants it to them
    by its own name."""
    folder = tmp_path_factory.mktemp("library")
    db = new_index()
    content = {}  # file name -> the name of the file whose content it has
    for name in FILES:
        (folder / name).write_text(
            f"# {name}\n\nThe shared loan policy wording of {name}.\n", encoding="utf-8"
        )
        content[name] = name
    write_catalog(folder, dict(before))
    refresh_index(folder, db)
    with open_index(db) as store:
        old = {d.source: d for d in store.documents()}

    after: dict[str, dict[str, str] | str] = {}
    for name, change in changes.items():
        after.update(edit(folder, name, change, dict(before[name]), flip))
        if change.startswith("rename-file"):
            content[f"renamed-{name}"] = content.pop(name)
        elif change == "copy-file":
            content[f"copy-of-{name}"] = name
    (folder / "catalog.toml").unlink()
    if remove_catalog:
        after = {}
    else:
        write_catalog(folder, after, catalog_name)
    try:
        refresh_index(folder, db)
    except CatalogError:  # the refresh stopped: the index is as it was
        assert documents_of(db) == old
        return

    with open_index(db) as store:
        new = {d.source: d for d in store.documents()}
    question = "What is the shared loan policy wording?"
    far = date(2026, 11, 14) + timedelta(days=365)
    for role in ROLES:
        for tenant in TENANTS:
            caller = Caller(role=role, tenant=tenant)
            for source, document in new.items():
                if may_see(document, caller):
                    was = content[source] in old and may_see(old[content[source]], caller)
                    assert was or granted(after.get(source), caller), (source, caller, document)
            # And what retrieval returns is within that.
            results = search_parts(question, as_of=far, caller=caller, db=db, k=50)
            for candidate in (c for r in results for c in r.candidates):
                assert may_see(new[candidate.location.source], caller)
