"""`localqa ocr` with the real tesseract on a PDF made here: one text page, one image-only page."""

from __future__ import annotations

import os
import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from subprocess import run as subprocess_run
from typing import Any

import pymupdf
import pytest
from click.testing import CliRunner

from localqa.cli import cli
from localqa.extract.ocr import pages_needing_ocr, parse_sidecar_name, sidecar_path
from localqa.indexing.index import refresh_index

NOTICE_TEXT = "Map Exchange\n\nThe desk accepts maps from 12:00 to 15:00 on weekdays."
NO_WORK = "No page needs OCR (every page has a text layer or a sidecar; --force redoes sidecars).\n"


def make_notice(path: Path) -> None:
    """Page 1 has a text layer; page 2 is only a picture of the notice (a 'scan')."""
    with pymupdf.open() as scratch:
        page = scratch.new_page(width=420, height=200)
        page.insert_textbox(pymupdf.Rect(20, 20, 400, 180), NOTICE_TEXT, fontsize=16)
        png = page.get_pixmap(dpi=200, colorspace="gray").tobytes("png")
    with pymupdf.open() as document:
        text = document.new_page()
        text.insert_textbox(
            pymupdf.Rect(60, 60, 500, 300), "The reading room is open to all members.", fontsize=11
        )
        scan = document.new_page(width=420, height=200)
        scan.insert_image(scan.rect, stream=png)
        document.save(path)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    folder = tmp_path / "pdfs"
    folder.mkdir()
    make_notice(folder / "notice.pdf")
    return folder


def ocr(runner: CliRunner, folder: Path, *extra: str) -> object:
    return runner.invoke(cli, ["ocr", "--pdfs", str(folder), *extra])


def test_the_made_pdf_has_one_image_only_page(folder: Path) -> None:
    with pymupdf.open(folder / "notice.pdf") as document:
        assert document.page_count == 2
        assert "reading room" in document[0].get_text()
        assert document[1].get_text().strip() == ""
        assert len(document[1].get_images()) == 1
    assert [job.page for job in pages_needing_ocr(folder / "notice.pdf")] == [2]


def test_sidecar_names() -> None:
    assert sidecar_path(Path("/x/notice.pdf"), 2) == Path("/x/notice.page-2.ocr.txt")
    assert parse_sidecar_name("notice.page-2.ocr.txt") == ("notice", 2)
    assert parse_sidecar_name("a.b.page-12.ocr.txt") == ("a.b", 12)
    for name in ("notice.page-0.ocr.txt", "notice.page-2.txt", "notice.pdf", "notice.page-x.ocr.txt"):
        assert parse_sidecar_name(name) is None


@pytest.mark.tesseract
def test_ocr_writes_a_sidecar_only_for_the_image_page(folder: Path, runner: CliRunner) -> None:
    result = ocr(runner, folder)
    assert result.exit_code == 0, result.output
    sidecar = folder / "notice.page-2.ocr.txt"
    assert result.stdout == f"wrote {sidecar}\n"
    assert sorted(p.name for p in folder.iterdir()) == ["notice.page-2.ocr.txt", "notice.pdf"]
    text = sidecar.read_text(encoding="utf-8")
    assert "12:00 to 15:00" in text
    assert text.endswith("\n") and not text.endswith("\n\n")


@pytest.mark.tesseract
def test_ocr_again_does_nothing_and_force_redoes_it(folder: Path, runner: CliRunner) -> None:
    assert ocr(runner, folder).exit_code == 0
    sidecar = folder / "notice.page-2.ocr.txt"
    # A human corrects the sidecar; a plain run must not touch it.
    sidecar.write_text("Map Exchange\n\nCorrected by hand: 12:00 to 15:00 on weekdays.\n", encoding="utf-8")
    stamp = sidecar.stat().st_mtime_ns

    again = ocr(runner, folder)
    assert again.exit_code == 0
    assert again.stdout == NO_WORK
    assert sidecar.stat().st_mtime_ns == stamp
    assert "Corrected by hand" in sidecar.read_text(encoding="utf-8")

    forced = ocr(runner, folder, "--force")
    assert forced.exit_code == 0
    assert forced.stdout == f"wrote {sidecar}\n"
    text = sidecar.read_text(encoding="utf-8")
    assert "Corrected by hand" not in text and "12:00 to 15:00" in text
    assert sorted(p.name for p in folder.iterdir()) == ["notice.page-2.ocr.txt", "notice.pdf"]


@pytest.mark.tesseract
def test_ocr_sidecar_is_indexed_as_ocr_passages_of_its_page(
    folder: Path, tmp_path: Path, runner: CliRunner
) -> None:
    db = tmp_path / "library.sqlite3"
    report = refresh_index(folder, db)
    assert [(p.source, p.page, p.warning) for p in report.problems] == [("notice.pdf", 2, True)]
    assert ocr(runner, folder).exit_code == 0
    report = refresh_index(folder, db)
    assert report.added == ["notice.page-2.ocr.txt"] and report.problems == []
    with closing(sqlite3.connect(db)) as connection:
        rows = connection.execute(
            "SELECT kind, source, page, text FROM passages WHERE origin = 'notice.page-2.ocr.txt'"
        ).fetchall()
    assert [r[:3] for r in rows] == [("ocr", "notice.pdf", 2)] * len(rows)
    assert any("12:00 to 15:00" in r[3] for r in rows)


def test_folder_with_only_text_pages_needs_no_ocr(tmp_path: Path, runner: CliRunner) -> None:
    with pymupdf.open() as document:
        document.new_page().insert_text((72, 72), "Every page of this file has a text layer.")
        document.save(tmp_path / "text.pdf")
    result = ocr(runner, tmp_path)
    assert result.exit_code == 0
    assert result.stdout == NO_WORK
    assert sorted(p.name for p in tmp_path.iterdir()) == ["text.pdf"]


@pytest.mark.tesseract
def test_unreadable_pdfs_are_reported_by_name_and_the_rest_is_done(folder: Path, runner: CliRunner) -> None:
    (folder / "empty.pdf").write_bytes(b"")
    (folder / "notes.pdf").write_text("not a pdf", encoding="utf-8")
    result = ocr(runner, folder)
    assert result.exit_code == 1
    assert (
        "Error: empty.pdf: empty file (0 bytes); replace it with the real PDF or remove it\n" in result.stderr
    )
    assert "Error: notes.pdf: not a PDF (no %PDF- header); rename it or remove it from the folder\n" in (
        result.stderr
    )
    assert (folder / "notice.page-2.ocr.txt").exists()


@pytest.mark.tesseract
def test_ocr_finds_an_upper_case_pdf(tmp_path: Path, runner: CliRunner) -> None:
    make_notice(tmp_path / "NOTICE.PDF")
    result = ocr(runner, tmp_path)
    assert result.exit_code == 0
    assert (tmp_path / "NOTICE.page-2.ocr.txt").exists()


def test_missing_tesseract_is_a_clear_error(
    folder: Path, tmp_path: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty_path = tmp_path / "bin"
    empty_path.mkdir()
    monkeypatch.setenv("PATH", str(empty_path))
    result = ocr(runner, folder)
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: tesseract is not installed; "
        "install it with 'apt-get install tesseract-ocr' (or 'make test')\n"
    )
    assert not (folder / "notice.page-2.ocr.txt").exists()


@pytest.mark.tesseract
def test_ocr_of_the_sample_handbook_scan(sample_pdfs: Path, runner: CliRunner) -> None:
    sidecar = sample_pdfs / "library-handbook.page-4.ocr.txt"
    sidecar.unlink()
    before = {p.name for p in sample_pdfs.iterdir()}
    result = ocr(runner, sample_pdfs)
    assert result.exit_code == 0, result.output
    assert result.stdout == f"wrote {sidecar}\n"  # only the scanned page, no other page of any PDF
    assert {p.name for p in sample_pdfs.iterdir()} == before | {sidecar.name}
    assert "12:00 to 15:00" in sidecar.read_text(encoding="utf-8")


@pytest.mark.tesseract
def test_tesseract_gets_one_thread_and_localqa_none(
    folder: Path, runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OMP_THREAD_LIMIT caps every OpenMP user of a process (llama.cpp too): it goes into
    tesseract's environment only."""
    import subprocess

    monkeypatch.delenv("OMP_THREAD_LIMIT", raising=False)
    seen: list[dict[str, str]] = []
    real_run = subprocess.run

    def run(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs["env"])
        return real_run(*args, **kwargs)

    monkeypatch.setattr(subprocess, "run", run)
    assert ocr(runner, folder).exit_code == 0
    assert seen and all(env["OMP_THREAD_LIMIT"] == "1" for env in seen)
    assert "OMP_THREAD_LIMIT" not in os.environ
    assert "12:00 to 15:00" in (folder / "notice.page-2.ocr.txt").read_text(encoding="utf-8")


def test_the_command_line_leaves_the_thread_limit_alone() -> None:
    """`localqa` itself never sets OMP_THREAD_LIMIT (it used to, and the embedded model then
    computed on one core)."""
    script = "import os, sys; sys.argv = ['localqa', 'models']; from localqa.cli import main\n"
    script += (
        "try:\n    main()\nexcept SystemExit:\n    pass\nprint('LIMIT', os.environ.get('OMP_THREAD_LIMIT'))"
    )
    env = {k: v for k, v in os.environ.items() if k != "OMP_THREAD_LIMIT"}
    done = subprocess_run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "LIMIT None"
