"""Access never widens, round two (issue 19): each break a second adversarial pass found,
reproduced the way it was found, against the real CLI, real PDFs and a real index. Every test
here fails on the code before the fix.

The rules: content keeps its access under another name; a file without a catalog entry beside an
entry without a file stops the refresh; a key that names a file with its folder, or twice in two
Unicode forms, and a file named like the catalog, are errors; unknown fields are errors; one bad
file never stops a refresh, and page numbers have bounds; nothing hangs or prints a traceback;
a linked `--db` is updated where it points; no text is silently lost, and what prints as nothing
is shown.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pymupdf
import pytest
from access import (
    ALARM,
    STAFF,
    assert_public_never_sees_the_alarm_code,
    documents_of,
    edit_catalog,
    errors,
    index,
    sources_for,
)
from backends import BOTH, NewIndex
from click.testing import CliRunner

import localqa
from localqa.cli import cli
from localqa.indexing.index import open_index
from localqa.store import Db

BACKENDS = BOTH  # the catalog's rules hold whichever store keeps the index
REPO = Path(__file__).resolve().parent.parent
SOURCE = Path(localqa.__file__).resolve().parents[1]  # where a subprocess finds this localqa
EVENTS = "When is the next community event?"
HUGE_PAGE = 2**63  # one past SQLite's largest integer


def remove_entry(folder: Path, name: str) -> None:
    path = folder / "catalog.toml"
    tables = path.read_text(encoding="utf-8").split("\n\n")
    path.write_text("\n\n".join(t for t in tables if f'["{name}"]' not in t), encoding="utf-8")


def make_community_events_staff(folder: Path) -> None:
    """A pending restriction: the next refresh must apply it, whatever else goes wrong."""
    edit_catalog(
        folder,
        'access = "public"\ntenant = "default"\ntitle = "Community Events"',
        'access = "staff"\ntenant = "default"\ntitle = "Community Events"',
    )


# --- 1. content keeps its access --------------------------------------------------------------------


def test_a_renamed_staff_file_is_never_public(indexed: tuple[Path, Db], runner: CliRunner) -> None:
    folder, db = indexed
    (folder / STAFF).rename(folder / "alarm-and-keys.pdf")
    result = index(runner, folder, db)
    # Its entry now matches no file, and the new name has none: the refresh stops, naming both.
    assert result.exit_code == 1
    assert errors(result) == [
        f"Error: {folder / 'catalog.toml'}: 1 file has no entry (alarm-and-keys.pdf) while 1 entry matches "
        f"no file ({STAFF}); was a file renamed? Name each entry exactly as its file, give every file an "
        "entry, or remove the entries that match no file (the index was not changed)"
    ]
    assert_public_never_sees_the_alarm_code(runner, db)
    assert "alarm-and-keys.pdf" not in sources_for(db, ALARM, role="staff")
    # With the stale entry gone, the renamed file keeps the access its content had.
    remove_entry(folder, STAFF)
    result = index(runner, folder, db)
    assert result.exit_code == 0, result.output
    assert (
        "Warning: alarm-and-keys.pdf: has the same content as staff-procedures.pdf, so it is indexed "
        "as narrowly (access staff, status current, tenant default) until catalog.toml has an entry for it"
    ) in result.stderr
    assert_public_never_sees_the_alarm_code(runner, db)
    assert "alarm-and-keys.pdf" in sources_for(db, ALARM, role="staff")


def test_a_copy_of_a_staff_file_is_staff(indexed: tuple[Path, Db], runner: CliRunner) -> None:
    folder, db = indexed
    shutil.copy(folder / STAFF, folder / "keys.pdf")
    result = index(runner, folder, db)
    assert result.exit_code == 0, result.output
    assert "Warning: keys.pdf: has the same content as staff-procedures.pdf" in result.stderr
    assert "keys.pdf" not in sources_for(db, ALARM)
    assert "keys.pdf" in sources_for(db, ALARM, role="staff")
    # Only an explicit entry for the new name can widen it.
    with (folder / "catalog.toml").open("a", encoding="utf-8") as catalog:
        catalog.write('\n["keys.pdf"]\naccess = "public"\n')
    assert index(runner, folder, db).exit_code == 0
    assert "keys.pdf" in sources_for(db, ALARM)


@pytest.mark.parametrize(
    "key", ["/srv/library/pdfs/staff-procedures.pdf", "procedures.pdf", "Staff Procedures (2026).pdf"]
)
@pytest.mark.parametrize("history", ["indexed-before", "never-indexed"])
def test_a_key_that_is_not_the_file_name_never_makes_the_file_public(
    indexed: tuple[Path, Db], new_index: NewIndex, runner: CliRunner, key: str, history: str
) -> None:
    folder, db = indexed
    if history == "never-indexed":
        db = new_index()
    edit_catalog(folder, f'["{STAFF}"]', f'["{key}"]')
    result = index(runner, folder, db)
    assert result.exit_code == 1
    [error] = errors(result)
    if "/" in key:  # its base name is the file's: that file's entry, written wrongly
        assert error == (
            f'Error: {STAFF}: catalog.toml names this file with a folder ("{key}"); a key is the file name '
            f'alone: ["{STAFF}"] (the file is not indexed until then)'
        )
    else:
        assert f"1 file has no entry ({STAFF}) while 1 entry matches no file ({key})" in error
    if documents_of(db) is not None:
        assert_public_never_sees_the_alarm_code(runner, db)


# --- 2. a file named like the catalog -----------------------------------------------------------


@pytest.mark.parametrize("name", ["Catalog.toml", "catalogue.toml", "catalog.toml.txt"])
@pytest.mark.parametrize("history", ["indexed-before", "never-indexed"])
def test_a_misnamed_catalog_stops_the_refresh_and_is_never_a_document(
    indexed: tuple[Path, Db], new_index: NewIndex, runner: CliRunner, name: str, history: str
) -> None:
    folder, db = indexed
    if history == "never-indexed":
        db = new_index()
    before = documents_of(db)
    (folder / "catalog.toml").rename(folder / name)
    result = index(runner, folder, db)
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {folder / name}: named like the catalog but not catalog.toml; name the catalog exactly "
        "catalog.toml, or move this file out of the folder (nothing is indexed until then)\n"
    )
    assert documents_of(db) == before
    # Beside the real catalog it stops the refresh all the same: which one is meant is unclear.
    shutil.copy(folder / name, folder / "catalog.toml")
    assert index(runner, folder, db).exit_code == 1
    (folder / name).unlink()
    assert index(runner, folder, db).exit_code == 0
    assert_public_never_sees_the_alarm_code(runner, db)
    with open_index(db) as store:
        assert name not in {d.source for d in store.documents()}


# --- 3. one name, two Unicode forms ---------------------------------------------------------------


def test_two_entries_for_one_name_in_two_unicode_forms_are_an_error(
    tmp_path: Path, runner: CliRunner
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    nfc = unicodedata.normalize("NFC", "café-payroll.md")
    nfd = unicodedata.normalize("NFD", nfc)
    (folder / nfc).write_text("# Payroll\n\nSalaries are paid on the 25th.\n", encoding="utf-8")
    (folder / "catalog.toml").write_text(
        f'["{nfc}"]\naccess = "staff"\n\n["{nfd}"]\naccess = "public"\n', encoding="utf-8"
    )
    db = tmp_path / "library.sqlite3"
    result = index(runner, folder, db)
    assert result.exit_code == 1
    assert errors(result) == [
        f"Error: {nfc}: catalog.toml has 2 entries for this name, written in different Unicode forms "
        "('caf\\xe9-payroll.md' and 'cafe\\u0301-payroll.md'); keep one (the file is not indexed until then)"
    ]
    assert sources_for(db, "When are salaries paid?") == set()
    assert sources_for(db, "When are salaries paid?", role="staff") == set()


# --- 4. unknown fields ---------------------------------------------------------------------------


@pytest.mark.sqlite_only
def test_an_unknown_field_in_the_users_file_is_an_error(
    library_db: Db, tmp_path: Path, runner: CliRunner
) -> None:
    users = tmp_path / "users.toml"
    users.write_text(
        f'[[user]]\nname = "acme clerk"\ntoken_sha256 = "{"a" * 64}"\nrole = "staff"\nTenant = "acme"\n',
        encoding="utf-8",
    )
    result = runner.invoke(cli, ["serve", "--users", str(users), "--db", str(library_db)])
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {users}, user 1: unknown field(s) Tenant; known fields are name, token_sha256, role, "
        "tenant, operator\n"
    )
    users.write_text(f'[[users]]\ntoken_sha256 = "{"a" * 64}"\nrole = "staff"\n', encoding="utf-8")
    result = runner.invoke(cli, ["serve", "--users", str(users), "--db", str(library_db)])
    assert result.exit_code == 1
    assert "unknown table or field users" in result.stderr


def test_an_unknown_field_in_the_catalog_is_an_error(indexed: tuple[Path, Db], runner: CliRunner) -> None:
    folder, db = indexed
    edit_catalog(folder, f'["{STAFF}"]\nseries', f'["{STAFF}"]\nAccess = "public"\nseries')
    result = index(runner, folder, db)
    assert result.exit_code == 1
    assert f"Error: {STAFF}: catalog.toml: unknown field(s) Access; known fields are" in result.stderr
    assert_public_never_sees_the_alarm_code(runner, db)


# --- 7. one bad file never stops a refresh; pages have bounds ------------------------------------


def test_a_sidecar_of_a_page_beyond_its_pdf_is_reported_and_the_rest_is_applied(
    indexed: tuple[Path, Db], runner: CliRunner
) -> None:
    folder, db = indexed
    sidecar = f"library-handbook.page-{HUGE_PAGE}.ocr.txt"
    (folder / sidecar).write_text("The rare books room opens on Mondays.\n", encoding="utf-8")
    (folder / "library-handbook.page-9.ocr.txt").write_text("Nine.\n", encoding="utf-8")
    make_community_events_staff(folder)
    result = index(runner, folder, db)
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert errors(result) == [
        "Error: library-handbook.page-9.ocr.txt: library-handbook.pdf has 4 page(s), so it has no page 9; "
        "rename the sidecar to the page it transcribes, or remove it",
        f"Error: {sidecar}: library-handbook.pdf has 4 page(s), so it has no page {HUGE_PAGE}; "
        "rename the sidecar to the page it transcribes, or remove it",
    ]
    # The pending restriction was applied.
    assert "community-events.pdf" not in sources_for(db, EVENTS)
    assert "community-events.pdf" in sources_for(db, EVENTS, role="staff")


@pytest.mark.sqlite_only
def test_a_page_beyond_every_document_is_not_found_in_show_and_the_page_route(
    library_db: Db, runner: CliRunner
) -> None:
    from fastapi.testclient import TestClient

    from localqa.serve.app import ServeConfig, create_app

    for page in (5, HUGE_PAGE):
        result = runner.invoke(cli, ["show", "library-handbook.pdf", str(page), "--db", str(library_db)])
        assert result.exit_code == 1
        assert result.stderr.startswith(f"Error: page {page} of 'library-handbook.pdf' is not in the index")
    config = ServeConfig(db=library_db, pdfs=Path(library_db).parent / "pdfs", model="extractive")
    with TestClient(create_app(config)) as client:
        for page in (5, HUGE_PAGE):
            assert client.get(f"/api/pages/library-handbook.pdf/{page}.png").status_code == 404


# --- 8. no traceback, no hang --------------------------------------------------------------------

DEEP = "x = " + "[" * 2000 + "]" * 2000 + "\n"


@pytest.mark.sqlite_only
def test_deeply_nested_toml_files_are_one_error_line(
    indexed: tuple[Path, Db], library_db: Db, tmp_path: Path, runner: CliRunner
) -> None:
    folder, db = indexed
    (folder / "catalog.toml").write_text(DEEP, encoding="utf-8")
    result = index(runner, folder, db)
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {folder / 'catalog.toml'}: not valid TOML (nested too deeply); fix the file and run again\n"
    )
    # A table header 2,000 names deep is read without recursion, and named.
    (folder / "catalog.toml").write_text("[" + ".".join(["a"] * 2000) + "]\nx = 1\n", encoding="utf-8")
    result = index(runner, folder, db)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "is read by TOML as nested tables" in result.stderr
    users = tmp_path / "users.toml"
    users.write_text(DEEP, encoding="utf-8")
    result = runner.invoke(cli, ["serve", "--users", str(users), "--db", str(library_db)])
    assert result.exit_code == 1
    assert (
        result.stderr == f"Error: {users}: not valid TOML (nested too deeply); fix the file and start again\n"
    )
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "cases.toml").write_text(DEEP, encoding="utf-8")
    result = runner.invoke(cli, ["eval", str(suite), "--db", str(library_db)])
    assert result.exit_code == 1
    assert result.stderr == f"Error: {suite / 'cases.toml'}: not valid TOML (nested too deeply)\n"


def test_a_status_of_the_wrong_type_is_an_error_for_that_file_only(
    indexed: tuple[Path, Db], runner: CliRunner
) -> None:
    folder, db = indexed
    # Staff Procedures' entry only (the desk rota is staff-only too).
    staff_entry = 'status = "current"\naccess = "staff"\ntenant = "default"\ntitle = "Staff Procedures"'
    edit_catalog(folder, staff_entry, staff_entry.replace('"current"', '["current"]'))
    make_community_events_staff(folder)
    result = index(runner, folder, db)
    assert result.exit_code == 1
    assert errors(result) == [
        f"Error: {STAFF}: catalog.toml: status = ['current'] is not one of current, retired, draft"
    ]
    assert_public_never_sees_the_alarm_code(runner, db)
    assert "community-events.pdf" not in sources_for(db, EVENTS)


def test_a_named_pipe_for_a_catalog_is_refused_at_once(indexed: tuple[Path, Db]) -> None:
    folder, db = indexed
    (folder / "catalog.toml").unlink()
    os.mkfifo(folder / "catalog.toml")
    done = subprocess.run(
        [sys.executable, "-m", "localqa", "index", "--pdfs", str(folder), "--db", str(db)],
        cwd=SOURCE,
        capture_output=True,
        text=True,
        timeout=120,  # before the fix it waits for a writer forever, holding the writer lock
    )
    assert done.returncode == 1
    assert done.stderr == (
        f"Error: {folder / 'catalog.toml'}: not a regular file (a named pipe); fix the file and run again\n"
    )


@pytest.mark.sqlite_only
def test_show_names_the_file_it_cannot_write(library_db: Db, runner: CliRunner) -> None:
    result = runner.invoke(
        cli,
        [
            "show",
            "library-handbook.pdf",
            "1",
            "--db",
            str(library_db),
            "--pdfs",
            str(Path(library_db).parent / "pdfs"),
            "-o",
            "/proc/version",
        ],
    )
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: /proc/version: cannot be written (")


def test_eval_saves_a_run_under_a_long_name(tmp_path: Path, runner: CliRunner) -> None:
    saved = tmp_path / f"{'r' * 250}.json"  # 255 bytes, the longest name a file may have
    result = runner.invoke(cli, ["eval", str(REPO / "evals" / "lab"), "--save", str(saved)])
    assert result.exit_code == 0, result.output
    assert json.loads(saved.read_text(encoding="utf-8"))["totals"]["leaks"] == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [saved.name]


# --- 9. a linked --db ----------------------------------------------------------------------------


@pytest.mark.sqlite_only
def test_a_linked_index_is_updated_where_it_points(indexed: tuple[Path, Db], runner: CliRunner) -> None:
    folder, db = indexed
    real = Path(db)
    link = real.with_name("link.sqlite3")
    link.symlink_to(real.name)
    served = open_index(real)  # a server's reader, open on the real file before the refresh
    served.close()
    make_community_events_staff(folder)
    result = index(runner, folder, link)
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and link.resolve() == real
    assert sorted(p.name for p in real.parent.iterdir()) == [
        "library.sqlite3",
        "library.sqlite3.lock",
        "link.sqlite3",
    ]
    # Whoever reads the real file (serve) sees the restriction.
    assert "community-events.pdf" not in sources_for(real, EVENTS)
    assert "community-events.pdf" in sources_for(real, EVENTS, role="staff")


# --- 10. nothing lost silently; what prints as nothing is shown -----------------------------------


def one_line_a_page(path: Path, pages: int, line: str) -> None:
    document = pymupdf.open()
    for number in range(1, pages + 1):
        document.new_page().insert_text((72, 400), line.format(n=number))
    document.save(path)


def test_a_short_line_that_differs_on_every_page_is_text(tmp_path: Path, runner: CliRunner) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    one_line_a_page(folder / "codes.pdf", 40, "Page {n} says code Z-{n}.")
    db = tmp_path / "library.sqlite3"
    result = index(runner, folder, db)
    assert result.exit_code == 0 and result.stderr == ""
    assert "40 passages" in result.stdout
    found = runner.invoke(cli, ["search", "Which page says code Z-31?", "--db", str(db), "--json"])
    [candidate, *_] = json.loads(found.stdout)["parts"][0]["candidates"]
    assert (candidate["page"], candidate["text"]) == (31, "Page 31 says code Z-31.")


def test_a_document_without_passages_is_named(tmp_path: Path, runner: CliRunner) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "headings.md").write_text("# Notes\n\n## To do\n", encoding="utf-8")
    (folder / "hours.md").write_text("# Hours\n\nThe office opens at nine.\n", encoding="utf-8")
    result = index(runner, folder, tmp_path / "library.sqlite3")
    assert result.exit_code == 0
    assert result.stderr == (
        "Warning: headings.md: no passage was found in it, so no search can find it; check that the file "
        "has text\n"
    )


def test_a_blank_pdf_is_one_warning(tmp_path: Path, runner: CliRunner) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    document = pymupdf.open()
    for _ in range(300):
        document.new_page()
    document.save(folder / "scan.pdf")
    result = index(runner, folder, tmp_path / "library.sqlite3")
    assert result.exit_code == 0
    assert result.stderr == (
        "Warning: scan.pdf: pages 1-300 (300 pages) have no text layer and no OCR sidecar; run 'localqa "
        "ocr' to add them\n"
    )


def test_zero_width_characters_and_byte_order_marks_are_shown(
    sample_pdfs: Path, tmp_path: Path, runner: CliRunner
) -> None:
    lookalike = "equipment-policy-2026-11-01.pdf\u200b.md"
    (sample_pdfs / lookalike).write_text(
        "# Equipment\n\nScanners may be borrowed for a week.\n", encoding="utf-8"
    )
    sidecar = sample_pdfs / "library-handbook.page-4.ocr.txt"
    sidecar.write_text("\ufeff" + sidecar.read_text(encoding="utf-8"), encoding="utf-8")
    db = tmp_path / "library.sqlite3"
    result = index(runner, sample_pdfs, db)
    assert result.exit_code == 0, result.output
    assert "   added  equipment-policy-2026-11-01.pdf\\u200b.md\n" in result.stdout
    found = runner.invoke(
        cli, ["search", "How long may scanners be borrowed?", "--db", str(db), "--as-of", "2026-11-14"]
    )
    assert "equipment-policy-2026-11-01.pdf\\u200b.md" in found.stdout and "\u200b" not in found.stdout
    # The sidecar's byte-order mark is not text.
    with open_index(db) as store:
        texts = [p.text for p in store.page_passages("library-handbook.pdf", 4)]
    assert texts and not any("\ufeff" in text for text in texts)
