"""`localqa index` and `localqa status` on the command line: exit codes, `Error:` lines naming the
file, good files still indexed and a previous index kept intact when some input is bad."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sqlite3
import tomllib
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from click.testing import CliRunner
from index_oracle import index_files

from localqa.cli import cli
from localqa.library import search_parts
from localqa.store.schema import SCHEMA_VERSION
from localqa.types import Caller

PDFS = Path(__file__).resolve().parent.parent / "pdfs"
SAMPLE_SOURCES = {
    "community-events.pdf",
    "desk-rota.csv",
    "equipment-policy-2026-06-01.pdf",
    "equipment-policy-2026-11-01.pdf",
    "equipment-register.xlsx",
    "fines-and-fees.md",
    "library-handbook.pdf",
    "loans-handbook.docx",
    "opening-hours-notice.pdf",
    "reading-room-rules-2024.pdf",
    "staff-procedures.pdf",
}
SAMPLE_PASSAGES = 73
DOCUMENT_COLUMNS = "doc_id, source, series, version, effective, status, access, tenant, title"


def query(db: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as connection:
        return [tuple(r) for r in connection.execute(sql, args).fetchall()]


def snapshot(db: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    return (
        query(db, "SELECT * FROM passages ORDER BY id"),
        query(db, f"SELECT {DOCUMENT_COLUMNS} FROM documents ORDER BY doc_id"),
    )


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def index(runner: CliRunner, folder: Path, db: Path, *extra: str) -> Any:
    return runner.invoke(cli, ["index", "--pdfs", str(folder), "--db", str(db), *extra])


def eq314_sources(db: Path) -> set[str]:
    results = search_parts("What is the loan limit for EQ-314?", as_of=date(2026, 11, 14), db=db)
    return {c.location.source for r in results for c in r.candidates}


def append_catalog(folder: Path, text: str) -> None:
    with (folder / "catalog.toml").open("a", encoding="utf-8") as handle:
        handle.write(text)


@dataclass(frozen=True)
class BadInput:
    """A way to spoil the sample folder, and the `Error:` lines (regexes) it must produce."""

    make: Callable[[Path], None]
    errors: tuple[str, ...]
    # Sources that end up indexed besides the sample's good ones (the file itself, when it can be).
    indexed_too: frozenset[str] = frozenset()
    # Sample sources that a fresh build cannot index (the other claimant of a shared id); over an
    # existing index they keep their passages but become visible to nobody.
    blocked: frozenset[str] = frozenset()


def truncated_pdf(folder: Path) -> None:
    good = (PDFS / "opening-hours-notice.pdf").read_bytes()
    (folder / "truncated.pdf").write_bytes(good[: len(good) // 2])


def truncated_garbled_pdf(folder: Path) -> None:
    good = (PDFS / "opening-hours-notice.pdf").read_bytes()
    (folder / "truncated.pdf").write_bytes(good[:300] + b"\x00garbage\xff" * 300)


def garbled_pdf(folder: Path) -> None:
    (folder / "garbled.pdf").write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 20)


def encrypted_pdf(folder: Path) -> None:
    with pymupdf.open() as document:
        document.new_page().insert_text((72, 72), "Confidential minutes of the library board meeting.")
        document.save(
            folder / "minutes.pdf",
            encryption=pymupdf.PDF_ENCRYPT_AES_256,
            user_pw="secret",
            owner_pw="owner-secret",
        )


def zero_byte_pdf(folder: Path) -> None:
    (folder / "empty.pdf").write_bytes(b"")


def text_named_pdf(folder: Path) -> None:
    (folder / "notes.pdf").write_text("Meeting notes: buy more chairs.\n", encoding="utf-8")


def invalid_date(folder: Path) -> None:
    (folder / "events-extra.md").write_text("# Extra\n\nA lecture on maps.\n", encoding="utf-8")
    append_catalog(folder, '\n["events-extra.md"]\neffective = "2026-13-45"\naccess = "public"\n')


def unknown_access(folder: Path) -> None:
    (folder / "budget.md").write_text("# Budget\n\nThe zeppelin budget is 400 dollars.\n", encoding="utf-8")
    append_catalog(folder, '\n["budget.md"]\naccess = "finance"\n')


def id_claimed_twice_in_catalog(folder: Path) -> None:
    (folder / "handbook-copy.md").write_text("# Copy\n\nA copy of the handbook.\n", encoding="utf-8")
    append_catalog(folder, '\n["handbook-copy.md"]\nid = "library-handbook"\naccess = "public"\n')


def pdf_and_md_share_a_stem(folder: Path) -> None:
    shutil.copy(PDFS / "opening-hours-notice.pdf", folder / "fines-and-fees.pdf")


def claimed_twice(first: str, second: str, doc_id: str) -> tuple[str, str]:
    line = "Error: {}: document id '{}' is also claimed by {}; give each an `id` of its own in catalog.toml"
    return re.escape(line.format(first, doc_id, second)), re.escape(line.format(second, doc_id, first))


BAD_INPUTS = [
    pytest.param(BadInput(truncated_pdf, (r"Error: truncated\.pdf: .+",)), id="truncated-pdf"),
    pytest.param(
        BadInput(truncated_garbled_pdf, (r"Error: truncated\.pdf: .+",)),
        id="truncated-garbled-pdf",
    ),
    pytest.param(
        BadInput(garbled_pdf, (r"Error: garbled\.pdf: corrupt PDF \(.+\); re-export or re-download it",)),
        id="garbled-pdf",
    ),
    pytest.param(
        BadInput(
            encrypted_pdf,
            (
                re.escape(
                    "Error: minutes.pdf: encrypted PDF; save an unencrypted copy (e.g. qpdf --decrypt) "
                    "and run again"
                ),
            ),
        ),
        id="encrypted-pdf",
    ),
    pytest.param(
        BadInput(
            zero_byte_pdf,
            (re.escape("Error: empty.pdf: empty file (0 bytes); replace it with the real PDF or remove it"),),
        ),
        id="zero-byte-pdf",
    ),
    pytest.param(
        BadInput(
            text_named_pdf,
            (
                re.escape(
                    "Error: notes.pdf: not a PDF (no %PDF- header); rename it or remove it from the folder"
                ),
            ),
        ),
        id="text-named-pdf",
    ),
    pytest.param(
        BadInput(
            invalid_date,
            (
                re.escape(
                    "Error: events-extra.md: catalog.toml: effective = '2026-13-45' is not a date; "
                    "write it as YYYY-MM-DD"
                ),
            ),
        ),
        id="invalid-date",
    ),
    pytest.param(
        BadInput(
            unknown_access,
            (
                re.escape(
                    "Error: budget.md: catalog.toml: access 'finance' is not public or staff; "
                    "the document is indexed but visible to nobody until it is fixed"
                ),
            ),
            indexed_too=frozenset({"budget.md"}),
        ),
        id="unknown-access",
    ),
    pytest.param(
        BadInput(
            id_claimed_twice_in_catalog,
            claimed_twice("handbook-copy.md", "library-handbook.pdf", "default/library-handbook"),
            blocked=frozenset({"library-handbook.pdf"}),
        ),
        id="id-claimed-twice-in-catalog",
    ),
    pytest.param(
        BadInput(
            pdf_and_md_share_a_stem,
            claimed_twice("fines-and-fees.md", "fines-and-fees.pdf", "default/fines-and-fees"),
            blocked=frozenset({"fines-and-fees.md"}),
        ),
        id="pdf-and-md-share-a-stem",
    ),
]


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("Error:")]


def diagnostics(stderr: str) -> list[str]:
    """The Error:/Warning: lines (stderr may also carry a progress label)."""
    assert "Traceback" not in stderr
    return [line for line in stderr.splitlines() if line.startswith(("Error:", "Warning:"))]


def assert_errors(stderr: str, expected: tuple[str, ...]) -> None:
    lines = error_lines(stderr)
    assert len(lines) == len(expected), stderr
    for line, pattern in zip(lines, expected, strict=True):
        assert re.fullmatch(pattern, line), (line, pattern)
    assert "Traceback" not in stderr


@pytest.mark.parametrize("bad", BAD_INPUTS)
def test_bad_input_fails_the_build_but_indexes_the_good_files(
    bad: BadInput, sample_pdfs: Path, tmp_path: Path, runner: CliRunner
) -> None:
    bad.make(sample_pdfs)
    db = tmp_path / "fresh.sqlite3"
    result = index(runner, sample_pdfs, db)
    assert result.exit_code == 1
    assert_errors(result.stderr, bad.errors)
    indexed = {source for (source,) in query(db, "SELECT source FROM documents")}
    assert indexed == (SAMPLE_SOURCES - bad.blocked) | bad.indexed_too
    if "library-handbook.pdf" not in bad.blocked:
        assert eq314_sources(db) == {"equipment-policy-2026-11-01.pdf"}


@pytest.mark.parametrize("bad", BAD_INPUTS)
def test_bad_input_keeps_the_previous_index_intact(
    bad: BadInput, sample_pdfs: Path, library_db: Path, tmp_path: Path, runner: CliRunner
) -> None:
    db = tmp_path / "library.sqlite3"
    shutil.copy(library_db, db)
    passages_before, documents_before = snapshot(db)
    bad.make(sample_pdfs)
    result = index(runner, sample_pdfs, db)
    assert result.exit_code == 1
    assert_errors(result.stderr, bad.errors)
    passages_after, documents_after = snapshot(db)
    assert passages_after[: len(passages_before)] == passages_before
    # A blocked source keeps its row and passages, with access NULL: visible to nobody.
    assert [(*d[:6], None, *d[7:]) if d[1] in bad.blocked else d for d in documents_before] == [
        d for d in documents_after if d[1] in SAMPLE_SOURCES
    ]
    status = runner.invoke(cli, ["status", "--db", str(db), "--json", "--all"])
    # (The only file indexed despite its problem is the one with an unknown access label.)
    assert set(json.loads(status.stdout)["invisible_documents"]) == bad.blocked | bad.indexed_too
    assert len(passages_after) == len(passages_before) + (1 if bad.indexed_too else 0)
    assert eq314_sources(db) == {"equipment-policy-2026-11-01.pdf"}
    assert query(db, "PRAGMA integrity_check") == [("ok",)]


def test_unknown_access_is_invisible_even_to_staff(
    sample_pdfs: Path, tmp_path: Path, runner: CliRunner
) -> None:
    unknown_access(sample_pdfs)
    db = tmp_path / "library.sqlite3"
    assert index(runner, sample_pdfs, db).exit_code == 1
    for role in ("public", "staff"):
        results = search_parts(
            "How big is the zeppelin budget?", as_of=date(2026, 11, 14), caller=Caller(role=role), db=db
        )
        assert [c for r in results for c in r.candidates if c.location.source == "budget.md"] == []
    status = runner.invoke(cli, ["status", "--db", str(db), "--all"])
    assert status.exit_code == 0
    assert "Warning: budget.md has no valid access label and is visible to nobody" in status.stderr
    # Only the operator's view names it: to any caller it does not exist.
    for role in ("public", "staff"):
        status = runner.invoke(cli, ["status", "--db", str(db), "--role", role])
        assert status.exit_code == 0 and "budget.md" not in status.output


def test_catalog_that_is_not_toml_aborts_and_leaves_the_index_untouched(
    sample_pdfs: Path, library_db: Path, tmp_path: Path, runner: CliRunner
) -> None:
    db = tmp_path / "library.sqlite3"
    shutil.copy(library_db, db)
    before = sha(db)
    catalog = sample_pdfs / "catalog.toml"
    text = catalog.read_text(encoding="utf-8") + '\n["broken.pdf"\naccess = "public"\n'
    catalog.write_text(text, encoding="utf-8")
    (sample_pdfs / "faq.md").write_text("# FAQ\n\nParking is free.\n", encoding="utf-8")
    with pytest.raises(tomllib.TOMLDecodeError) as toml_error:
        tomllib.loads(text)
    result = index(runner, sample_pdfs, db)
    assert result.exit_code == 1
    assert (
        result.stderr
        == f"Error: {catalog}: not valid TOML ({toml_error.value}); fix the file and run again\n"
    )
    assert result.stdout == ""
    assert sha(db) == before
    assert [name for name in index_files(tmp_path) if name.startswith("library")] == [
        "library.sqlite3",
        "library.sqlite3.lock",
    ]


@pytest.mark.parametrize("command", ["index", "ocr"])
def test_missing_folder_is_a_usage_error(tmp_path: Path, runner: CliRunner, command: str) -> None:
    extra = ["--db", str(tmp_path / "x.sqlite3")] if command == "index" else []
    result = runner.invoke(cli, [command, "--pdfs", str(tmp_path / "nowhere"), *extra])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        f"Error: Invalid value for '--pdfs': Directory '{tmp_path / 'nowhere'}' does not exist."
    )
    assert result.stdout == ""
    assert not (tmp_path / "x.sqlite3").exists()


def test_page_without_text_or_sidecar_is_a_warning_naming_the_page(
    sample_pdfs: Path, tmp_path: Path, runner: CliRunner
) -> None:
    (sample_pdfs / "library-handbook.page-4.ocr.txt").unlink()
    result = index(runner, sample_pdfs, tmp_path / "library.sqlite3")
    assert result.exit_code == 0
    assert diagnostics(result.stderr) == [
        "Warning: library-handbook.pdf, page 4: no text layer and no OCR sidecar; "
        "run 'localqa ocr' to add one"
    ]


def test_index_prints_what_changed(
    sample_pdfs: Path, library_db: Path, tmp_path: Path, runner: CliRunner
) -> None:
    db = tmp_path / "library.sqlite3"
    shutil.copy(library_db, db)
    (sample_pdfs / "faq.md").write_text("# FAQ\n\nParking is free after 18:00.\n", encoding="utf-8")
    (sample_pdfs / "library-handbook.page-4.ocr.txt").write_text("Notes\n\nMaps are welcome.\n")
    (sample_pdfs / "reading-room-rules-2024.pdf").unlink()
    append_catalog(sample_pdfs, '\n["faq.md"]\naccess = "public"\n')
    text = (sample_pdfs / "catalog.toml").read_text(encoding="utf-8")
    start = text.index('["reading-room-rules-2024.pdf"]')
    end = text.index("[", start + 5)
    (sample_pdfs / "catalog.toml").write_text(text[:start] + text[end:], encoding="utf-8")
    result = index(runner, sample_pdfs, db)
    assert result.exit_code == 0, result.output
    assert diagnostics(result.stderr) == []
    assert result.stdout == (
        "   added  faq.md\n"
        " changed  library-handbook.page-4.ocr.txt\n"
        " removed  reading-room-rules-2024.pdf\n"
        f"Index {db}: 11 documents, 69 passages (1 added, 1 changed, 1 removed, 10 unchanged).\n"
    )


def test_index_json_output(sample_pdfs: Path, tmp_path: Path, runner: CliRunner) -> None:
    (sample_pdfs / "empty.pdf").write_bytes(b"")
    db = tmp_path / "library.sqlite3"
    result = runner.invoke(cli, ["index", "--pdfs", str(sample_pdfs), "--db", str(db), "--json"])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert set(data) == {
        "db",
        "added",
        "changed",
        "removed",
        "unchanged",
        "documents",
        "passages",
        "embedded",
        "corpus_digest",
        "problems",
    }
    assert data["documents"] == 11 and data["passages"] == SAMPLE_PASSAGES and len(data["added"]) == 12
    assert data["embedded"] == 0  # a new index is not embedded unless asked (--embed)
    assert data["problems"] == [
        {
            "source": "empty.pdf",
            "page": None,
            "message": "empty file (0 bytes); replace it with the real PDF or remove it",
            "warning": False,
        }
    ]
    assert len(data["corpus_digest"]) == 64


@pytest.mark.parametrize("content", [b"this is not a database" * 50, b""], ids=["garbage", "empty"])
def test_index_over_a_file_that_is_not_an_index_is_a_clear_error(
    content: bytes, sample_pdfs: Path, tmp_path: Path, runner: CliRunner
) -> None:
    db = tmp_path / "library.sqlite3"
    db.write_bytes(content)
    result = index(runner, sample_pdfs, db)
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert diagnostics(result.stderr) == [
        f"Error: {db} is not a localqa index; "
        "rebuild it with 'localqa index --rebuild' or choose another --db"
    ]


def test_rebuild_replaces_a_file_that_is_not_an_index(
    sample_pdfs: Path, tmp_path: Path, runner: CliRunner
) -> None:
    db = tmp_path / "library.sqlite3"
    db.write_bytes(b"this is not a database" * 50)
    result = index(runner, sample_pdfs, db, "--rebuild")
    assert result.exit_code == 0, result.output
    assert len(query(db, "SELECT id FROM passages")) == SAMPLE_PASSAGES


# --- status ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "counted_for", "documents", "passages", "formats"),
    [
        # The default caller (public, default tenant) does not count the staff-only documents.
        (
            [],
            "role public · tenant default",
            9,
            "65 (43 prose, 20 table, 2 ocr)",
            "12 docx, 6 markdown, 41 pdf, 6 xlsx",
        ),
        (
            ["--role", "staff"],
            "role staff · tenant default",
            11,
            "73 (47 prose, 24 table, 2 ocr)",
            "4 csv, 12 docx, 6 markdown, 45 pdf, 6 xlsx",
        ),
        (["--tenant", "globex"], "role public · tenant globex", 0, "0 (0 prose, 0 table, 0 ocr)", ""),
        (
            ["--all"],
            "everyone (--all)",
            11,
            "73 (47 prose, 24 table, 2 ocr)",
            "4 csv, 12 docx, 6 markdown, 45 pdf, 6 xlsx",
        ),
    ],
)
def test_status_text(
    library_db: Path,
    runner: CliRunner,
    args: list[str],
    counted_for: str,
    documents: int,
    passages: str,
    formats: str,
) -> None:
    result = runner.invoke(cli, ["status", "--db", str(library_db), *args])
    assert result.exit_code == 0
    (digest,) = query(library_db, "SELECT value FROM meta WHERE key = 'corpus_digest'")[0]
    sidecars = 1 if documents else 0
    assert result.stdout == (
        f"Index:          {library_db}\n"
        f"Counted for:    {counted_for}\n"
        f"Documents:      {documents}\n"
        f"Passages:       {passages}\n"
        + (f"By format:      {formats}\n" if formats else "")
        + f"OCR sidecars:   {sidecars}\n"
        # The digest covers every document, so only the operator's view shows it.
        + (f"Corpus digest:  {digest}\n" if args == ["--all"] else "")
        + f"Schema version: {SCHEMA_VERSION}\n"
    )
    assert result.stderr == ""


def test_status_json(library_db: Path, runner: CliRunner) -> None:
    result = runner.invoke(cli, ["status", "--db", str(library_db), "--json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data == {
        "db": str(library_db),
        "caller": {"role": "public", "tenant": "default"},
        "documents": 9,
        "passages": {"prose": 43, "table": 20, "ocr": 2},
        "passages_by_format": {"docx": 12, "markdown": 6, "pdf": 41, "xlsx": 6},  # no staff-only csv
        "sidecars": 1,
        "invisible_documents": [],
        "corpus_digest": None,  # it changes when a hidden document does: the operator's view only
        "embeddings": {},  # indexed without --embed
        "schema_version": SCHEMA_VERSION,
        "built": None,  # when the index last changed is the operator's to see, like the digest
    }
    everything = json.loads(runner.invoke(cli, ["status", "--db", str(library_db), "--json", "--all"]).stdout)
    assert date.fromisoformat(everything["built"]) and everything["corpus_digest"]


def test_status_follows_the_index(
    sample_pdfs: Path, library_db: Path, tmp_path: Path, runner: CliRunner
) -> None:
    db = tmp_path / "library.sqlite3"
    shutil.copy(library_db, db)
    before = json.loads(runner.invoke(cli, ["status", "--db", str(db), "--json", "--all"]).stdout)
    (sample_pdfs / "library-handbook.page-4.ocr.txt").unlink()
    assert index(runner, sample_pdfs, db).exit_code == 0
    after = json.loads(runner.invoke(cli, ["status", "--db", str(db), "--json", "--all"]).stdout)
    assert after["passages"] == {"prose": 47, "table": 24, "ocr": 0}
    assert after["sidecars"] == 0
    assert after["corpus_digest"] != before["corpus_digest"]


@pytest.mark.parametrize("as_json", [False, True])
def test_status_without_an_index(tmp_path: Path, runner: CliRunner, as_json: bool) -> None:
    db = tmp_path / "index" / "library.sqlite3"
    result = runner.invoke(cli, ["status", "--db", str(db), *(["--json"] if as_json else [])])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == f"Error: no index at {db}; build it with 'localqa index'\n"


def test_status_on_a_file_that_is_not_an_index(tmp_path: Path, runner: CliRunner) -> None:
    db = tmp_path / "library.sqlite3"
    db.write_bytes(b"this is not a database" * 50)
    result = runner.invoke(cli, ["status", "--db", str(db)])
    assert result.exit_code == 1
    assert result.stderr == f"Error: {db} is not a localqa index; rebuild it with 'localqa index --rebuild'\n"
