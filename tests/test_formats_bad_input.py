"""Bad input in every format: a corrupt, password-protected or mislabelled file, a zip bomb, an
image bomb, is named with the reason and the rest of the folder is indexed; macros never run and
nothing a document links to is fetched."""

from __future__ import annotations

import http.server
import importlib.util
import io
import os
import re
import shutil
import struct
import subprocess
import sys
import threading
import time
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docx
import pytest

from localqa.extract import Unreadable, extract_file
from localqa.extract.checks import MAX_UNPACKED, BadFile, check_file
from localqa.indexing.index import refresh_index
from localqa.library import Library
from localqa.types import Caller

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
SAMPLE = Path(__file__).resolve().parent.parent / "pdfs"


def good_word(path: Path) -> Path:
    document = docx.Document()
    document.add_heading("Loans", 1)
    document.add_paragraph("Standard loans last 21 days.")
    document.save(path)
    return path


def reason(path: Path) -> str:
    with pytest.raises(Unreadable) as caught:
        extract_file(path, path.name, path.name)
    return str(caught.value)


def zip_with(path: Path, members: dict[str, bytes], big: tuple[str, int] | None = None) -> Path:
    """A zip archive of `members`, plus `big`: a member of that many zero bytes, streamed."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        if big is not None:
            name, size = big
            chunk = bytes(2**20)
            with archive.open(name, "w", force_zip64=True) as member:
                for _ in range(size // len(chunk)):
                    member.write(chunk)
    return path


def word_members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(good_word(path)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


# --- named, with the reason --------------------------------------------------------------------


def test_a_truncated_word_document_is_damaged(tmp_path: Path) -> None:
    data = good_word(tmp_path / "whole.docx").read_bytes()
    (tmp_path / "cut.docx").write_bytes(data[: len(data) // 2])
    assert reason(tmp_path / "cut.docx").startswith("is a damaged zip archive (")


def test_a_password_protected_word_document_says_so() -> None:
    assert reason(FIXTURES / "password.docx") == (
        "is password-protected (encrypted); open it, save it without a password, and run again"
    )


def test_an_office_97_file_with_a_new_extension_says_what_it_is(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "legacy-word97.doc", tmp_path / "old.docx")
    assert reason(tmp_path / "old.docx") == (
        "is an Office 97-2003 file (.doc/.xls/.ppt) with a new extension; save it as a Word document "
        "from its application and run again"
    )


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [
        (
            "report.docx",
            "pdf",
            "is a PDF by its content, not a Word document; rename it with the right extension",
        ),
        (
            "register.xlsx",
            "docx",
            "is a Word document by its content, not an Excel workbook; rename it with the right extension",
        ),
        (
            "slides.pptx",
            "xlsx",
            "is an Excel workbook by its content, not a PowerPoint presentation; rename it with the right "
            "extension",
        ),
        (
            "rota.csv",
            "png",
            "is a PNG image by its content, not a CSV file; rename it with the right extension",
        ),
        (
            "page.html",
            "docx",
            "is a zip archive by its content, not an HTML page; rename it with the right extension",
        ),
        (
            "scan.png",
            "text",
            "is not a PNG image (its content is no image format); check the file or remove it",
        ),
        (
            "photo.jpg",
            "png",
            "is a PNG image by its content, not a JPEG image; rename it with the right extension",
        ),
        (
            "book.epub",
            "text",
            "is not an EPUB e-book (its content is not a zip archive); check the file or remove it",
        ),
        ("empty.docx", "empty", "empty file (0 bytes); replace it with the real Word document or remove it"),
    ],
)
def test_a_file_whose_extension_lies_is_named_not_misread(
    tmp_path: Path, name: str, content: str, said: str
) -> None:
    from PIL import Image

    path = tmp_path / name
    if content == "pdf":
        shutil.copy(SAMPLE / "opening-hours-notice.pdf", path)
    elif content == "docx":
        good_word(path)
    elif content == "xlsx":
        shutil.copy(SAMPLE / "equipment-register.xlsx", path)
    elif content == "png":
        Image.new("L", (10, 10)).save(path, format="PNG")
    elif content == "text":
        path.write_text("Standard loans last 21 days.\n")
    else:
        path.write_bytes(b"")
    assert reason(path) == said


# --- bombs: refused within bounded time and memory ---------------------------------------------


@pytest.mark.slow
def test_a_zip_bomb_is_refused_by_its_declared_size(tmp_path: Path) -> None:
    bomb = zip_with(
        tmp_path / "bomb.docx", word_members(tmp_path / "w.docx"), ("word/media/zeros.bin", 600 * 2**20)
    )
    assert bomb.stat().st_size < 2 * 2**20  # 600 MiB of zeros packs into well under 2 MiB
    said = reason(bomb)
    assert re.fullmatch(
        r"unpacks to 60\d MiB \(more than 512 MiB\); refused as a zip bomb: check where it came from", said
    ), said


def test_a_zip_bomb_member_is_refused_by_its_ratio(tmp_path: Path) -> None:
    bomb = zip_with(
        tmp_path / "bomb.xlsx", {"xl/workbook.xml": b"<x/>"}, ("xl/worksheets/sheet1.xml", 200 * 2**20)
    )
    said = reason(bomb)
    assert said.startswith("member xl/worksheets/sheet1.xml unpacks ") and said.endswith(
        " times its packed size; refused as a zip bomb: check where it came from"
    )


def test_a_zip_that_lies_about_its_sizes_is_refused_without_unpacking_more(tmp_path: Path) -> None:
    """A member that declares 1 kB but holds 100 MiB: read up to what it declared, never more."""
    members = word_members(tmp_path / "w.docx")
    members["word/media/zeros.bin"] = bytes(100 * 2**20)
    real = zip_with(tmp_path / "real.docx", members)
    data = bytearray(real.read_bytes())
    with zipfile.ZipFile(real) as archive:
        info = archive.getinfo("word/media/zeros.bin")
    struct.pack_into("<I", data, info.header_offset + 22, 1024)  # the local header's size
    central = data.find(b"PK\x01\x02" + data[info.header_offset + 4 : info.header_offset + 6])
    while data[central + 46 : central + 46 + len(info.filename)] != info.filename.encode():
        central = data.find(b"PK\x01\x02", central + 4)
    struct.pack_into("<I", data, central + 24, 1024)  # the central directory's size
    (tmp_path / "liar.docx").write_bytes(bytes(data))
    with zipfile.ZipFile(tmp_path / "liar.docx") as archive:
        assert archive.getinfo("word/media/zeros.bin").file_size == 1024
    started = time.perf_counter()
    said = reason(tmp_path / "liar.docx")
    assert said.startswith("is a damaged zip archive ("), said
    assert time.perf_counter() - started < 10


def test_a_bomb_inside_the_archive_is_never_opened(tmp_path: Path) -> None:
    """An embedded archive that would unpack to gigabytes is a small member: it is carried, never
    opened, and the document's text is read."""
    inner = io.BytesIO()
    zip_with(Path(tmp_path / "inner.zip"), {}, ("zeros.bin", 300 * 2**20))
    inner.write((tmp_path / "inner.zip").read_bytes())
    members = word_members(tmp_path / "w.docx")
    members["word/embeddings/oleObject1.bin"] = inner.getvalue()
    nested = zip_with(tmp_path / "nested.docx", members)
    result = extract_file(nested, nested.name, nested.name)
    assert [p.text for p in result.passages] == ["Standard loans last 21 days."]


@pytest.mark.slow
def test_checking_an_archive_at_the_bound_takes_bounded_time_and_memory(tmp_path: Path) -> None:
    """Checked in a process of its own, so its peak memory is its own: an archive just within the
    bounds (511 MiB, packed about 300 times) is unpacked once, in chunks, and never held."""
    chunk = os.urandom(2048) + bytes(2**20 - 2048)  # packs about 300 times: under the ratio bound
    bomb = tmp_path / "big.pptx"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("ppt/presentation.xml", b"<p/>")
        with archive.open("ppt/media/big.bin", "w", force_zip64=True) as member:
            for _ in range(MAX_UNPACKED // 2**20 - 1):
                member.write(chunk)
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from localqa.extract.checks import check_file\n"
        "started = time.perf_counter()\n"
        "check_file(Path(sys.argv[1]), 'bomb.pptx')\n"
        # VmHWM is this process's own peak; ru_maxrss would carry the forking parent's (pytest's).
        "peak = next(line for line in open('/proc/self/status') if line.startswith('VmHWM:'))\n"
        "print(time.perf_counter() - started, peak.split()[1])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(bomb)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    seconds, peak_kib = done.stdout.split()
    assert float(seconds) < 60  # about 1 s on 2 cores; generous, never a timing assertion
    assert int(peak_kib) < 250 * 1024


def test_an_image_bomb_is_refused_from_its_header(tmp_path: Path) -> None:
    """A PNG that declares 30000 x 30000 pixels in a few hundred bytes."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 30000, 30000, 8, 0, 0, 0, 0)
    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\0" * 100))
        + chunk(b"IEND", b"")
    )
    (tmp_path / "poster.png").write_bytes(png)
    with pytest.raises(BadFile, match=r"refused as a decompression bomb"):
        check_file(tmp_path / "poster.png", "poster.png")


# --- nothing runs, nothing is fetched -------------------------------------------------------------


@pytest.fixture
def listener() -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server that records every request made to it."""
    requests: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"fetched")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requests
    finally:
        server.shutdown()


def test_links_are_never_fetched_and_macros_never_run(
    tmp_path: Path, listener: tuple[str, list[str]]
) -> None:
    base, requests = listener
    # Word: an external hyperlink, an image linked (not embedded) from the server, a macro project.
    document = docx.Document()
    paragraph = document.add_paragraph("See the policy online.")
    rid = document.part.relate_to(
        f"{base}/policy", docx.opc.constants.RELATIONSHIP_TYPE.HYPERLINK, is_external=True
    )
    link = docx.oxml.OxmlElement("w:hyperlink")
    link.set(docx.oxml.ns.qn("r:id"), rid)
    paragraph._p.append(link)
    document.part.relate_to(
        f"{base}/picture.png", docx.opc.constants.RELATIONSHIP_TYPE.IMAGE, is_external=True
    )
    document.save(tmp_path / "linked.docx")
    members = word_members(tmp_path / "plain.docx")
    with zipfile.ZipFile(tmp_path / "linked.docx") as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members["word/vbaProject.bin"] = (
        b'Attribute VB_Name = "AutoOpen"\nShell "curl ' + base.encode() + b'/macro"'
    )
    zip_with(tmp_path / "macro.docx", members)
    # HTML: scripts, a stylesheet, images, a frame, all on the server.
    (tmp_path / "page.html").write_text(
        f'<html><head><title>Page</title><link rel="stylesheet" href="{base}/style.css">'
        f'<script src="{base}/script.js"></script><script>fetch("{base}/inline")</script></head>'
        f"<body><main><h1>Loans</h1><p>Standard loans last 21 days at every branch of the library.</p>"
        f'<img src="{base}/img.png"><iframe src="{base}/frame.html"></iframe></main></body></html>'
    )
    for name in ("macro.docx", "page.html"):
        result = extract_file(tmp_path / name, name, name)
        assert result.passages, name
    assert requests == []


# --- the rest is indexed --------------------------------------------------------------------------


def test_bad_files_are_named_and_the_rest_is_indexed(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    good_word(folder / "loans.docx")
    shutil.copy(SAMPLE / "equipment-register.xlsx", folder / "register.xlsx")
    shutil.copy(FIXTURES / "password.docx", folder / "secret.docx")
    shutil.copy(SAMPLE / "opening-hours-notice.pdf", folder / "notice.xlsx")
    zip_with(folder / "bomb.docx", word_members(tmp_path / "w.docx"), ("word/media/zeros.bin", 600 * 2**20))
    (folder / "cut.pptx").write_bytes((SAMPLE / "equipment-register.xlsx").read_bytes()[:500])
    db = tmp_path / "index.sqlite3"
    report = refresh_index(folder, db, embed=False)
    assert sorted(report.added) == ["loans.docx", "register.xlsx"]
    named = {p.source: p.message for p in report.problems if not p.warning}
    assert set(named) == {"secret.docx", "notice.xlsx", "bomb.docx", "cut.pptx"}
    assert "password-protected" in named["secret.docx"]
    assert named["notice.xlsx"].startswith("is a PDF by its content")
    assert "zip bomb" in named["bomb.docx"]
    assert (
        named["cut.pptx"].startswith("is an Excel workbook by its content") or "damaged" in named["cut.pptx"]
    )
    with Library(db) as library:
        status = library.status(Caller())
    assert status.formats == {"docx": 1, "xlsx": 6}


def test_document_files_localqa_does_not_read_are_named(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    good_word(folder / "loans.docx")
    shutil.copy(FIXTURES / "legacy-word97.doc", folder / "old.doc")
    shutil.copy(folder / "loans.docx", folder / "loans-macros.docm")
    (folder / "notes.odt").write_bytes(b"PK\x03\x04")
    (folder / "photo.gif").write_bytes(b"GIF89a")  # not a document: ignored without a word
    report = refresh_index(folder, tmp_path / "index.sqlite3", embed=False)
    assert report.added == ["loans.docx"]
    assert [str(p) for p in report.problems] == [
        "loans-macros.docm: a macro-enabled Office file is not read (macros are never run); save it as "
        ".docx, .xlsx or .pptx",
        "notes.odt: an OpenDocument or RTF file is not read; save it as .docx, .xlsx or .pptx (or export "
        "a PDF)",
        "old.doc: an Office 97-2003 file is not read; save it as .docx, .xlsx or .pptx",
    ]
    assert all(p.warning for p in report.problems)


def a_real(name: str, folder: Path) -> Path:
    """A real file of `name`'s format: the sample library's, a fixture, or one written here."""
    from PIL import Image
    from pptx import Presentation

    path = folder / name
    suffix = path.suffix
    if suffix == ".docx":
        good_word(path)
    elif suffix == ".xlsx":
        shutil.copy(SAMPLE / "equipment-register.xlsx", path)
    elif suffix == ".pptx":
        deck = Presentation()
        deck.slides.add_slide(deck.slide_layouts[1]).shapes.title.text = "Renewals"
        deck.save(path)
    elif suffix == ".epub":
        shutil.copy(FIXTURES / "libreoffice-handbook.epub", path)
    elif suffix == ".png":
        Image.new("L", (200, 100), 255).save(path)
    elif suffix == ".csv":
        path.write_text("Item ID,Loan limit\nEQ-314,45 minutes\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["a.docx", "a.xlsx", "a.pptx", "a.epub", "a.png"])
def test_a_truncated_file_of_each_format_is_named(name: str, tmp_path: Path) -> None:
    whole = a_real(name, tmp_path).read_bytes()
    cut = tmp_path / f"cut{Path(name).suffix}"
    cut.write_bytes(whole[: len(whole) * 2 // 3])
    said = reason(cut)
    assert "damaged" in said and said.endswith(("re-download it", "re-export it", "run again")), said


def test_a_csv_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "rota.csv"
    path.write_bytes("Day,Closing shift\nFriday,Zoë Brandt\n".encode("cp1252"))
    assert reason(path) == "is not UTF-8 text (invalid continuation byte at byte 27); save it as UTF-8 CSV"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "main_part"),
    [
        ("bomb.docx", "word/document.xml"),
        ("bomb.xlsx", "xl/workbook.xml"),
        ("bomb.pptx", "ppt/presentation.xml"),
        ("bomb.epub", "mimetype"),
    ],
)
def test_a_zip_bomb_of_each_zipped_format_is_refused_and_the_rest_indexed(
    name: str, main_part: str, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    a_real("loans.csv", folder)
    zip_with(folder / name, {main_part: b"<x/>"}, ("zeros.bin", 600 * 2**20))
    report = refresh_index(folder, tmp_path / "index.sqlite3", embed=False)
    assert report.added == ["loans.csv"]
    (problem,) = [p for p in report.problems if not p.warning]
    assert problem.source == name and "refused as a zip bomb" in problem.message


# --- a sheet over the cell bound ------------------------------------------------------------------


def generate_office() -> Any:
    """The sample library's office-file generator (pdfs/generate_office.py), as a module."""
    spec = importlib.util.spec_from_file_location("generate_office", SAMPLE / "generate_office.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def refreshed_with(folder: Path, db: Path, name: str, data: bytes) -> Any:
    """`name` (holding `data`) added to a folder indexed before; the refresh's report."""
    folder.mkdir(exist_ok=True)
    a_real("loans.csv", folder)
    assert refresh_index(folder, db, embed=False).added == ["loans.csv"]
    (folder / name).write_bytes(data)
    good_word(folder / "handbook.docx")
    return refresh_index(folder, db, embed=False)


@pytest.mark.parametrize("stray", ["XFD1000", "XFD5000", "XFD1048576"])
def test_a_workbook_whose_cells_span_the_sheet_is_named_and_the_rest_indexed(
    stray: str, tmp_path: Path
) -> None:
    """One cell at XFD1048576 made calamine allocate the sheet's whole range (512 GiB): the run
    died (exit 134) and left the index unreadable. XFD1000 cost 870 MB, XFD5000 a MemoryError."""
    data = generate_office().register(stray)
    assert len(data) < 10_000
    db = tmp_path / "index.sqlite3"
    started = time.perf_counter()
    report = refreshed_with(tmp_path / "docs", db, "far.xlsx", data)
    assert time.perf_counter() - started < 20
    assert report.added == ["handbook.docx"]
    (problem,) = [p for p in report.problems if not p.warning]
    assert problem.source == "far.xlsx"
    assert problem.message.startswith(f"sheet Equipment has cells as far apart as A1:{stray} (")
    assert problem.message.endswith("refused: delete the stray cells outside the table and save it again")
    with Library(db) as library:  # the index, and what it held before, still read
        assert library.status(Caller()).formats == {"csv": 1, "docx": 1}


def test_a_workbook_checked_in_bounded_memory(tmp_path: Path) -> None:
    """In a fresh process, so that the peak is the check's own: far below the 870 MB of XFD1000."""
    (tmp_path / "far.xlsx").write_bytes(generate_office().register("XFD1048576"))
    script = (
        "import sys; from pathlib import Path\n"
        "from localqa.extract import extract_file, Unreadable\n"
        "try: extract_file(Path(sys.argv[1]), 'far.xlsx', 'far.xlsx')\n"
        "except Unreadable as e: print(e)\n"
        # VmHWM: this process's own peak (ru_maxrss would carry the forking test run's)
        "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "far.xlsx")], capture_output=True, text=True, check=True
    )
    said, peak_kb = done.stdout.strip().splitlines()
    assert said.startswith("sheet Equipment has cells as far apart as A1:XFD1048576")
    assert int(peak_kb) < 300_000


@pytest.mark.parametrize(
    ("bound", "said"),
    [
        (35, "sheet Equipment stores 36 cells (more than 35); refused: split the sheet or export it as CSV"),
        (44, "sheet Equipment has cells as far apart as A1:E9 (45 cells, more than 44); refused: delete the"),
    ],
)
def test_a_sheet_over_the_cell_bound_is_named_and_the_rest_indexed(
    bound: int, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bound counts both the cells a sheet stores and the range they span (the register's
    title, blank row, header and six items: 36 stored, A1:E9 spanned)."""
    from localqa.extract import sheets

    monkeypatch.setattr(sheets, "MAX_SHEET_CELLS", bound)
    db = tmp_path / "index.sqlite3"
    report = refreshed_with(tmp_path / "docs", db, "register.xlsx", generate_office().register())
    assert report.added == ["handbook.docx"]
    (problem,) = [p for p in report.problems if not p.warning]
    assert (problem.source, problem.message[: len(said)]) == ("register.xlsx", said)
    monkeypatch.setattr(sheets, "MAX_SHEET_CELLS", 45)  # both within: read
    assert extract_file(tmp_path / "docs" / "register.xlsx", "register.xlsx", "register.xlsx").passages


def test_a_sheet_the_check_cannot_find_is_never_read_unchecked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A workbook whose sheet calamine finds by a path the check does not is refused, not read."""
    from localqa.extract import sheets

    monkeypatch.setattr(sheets, "_sheet_parts", lambda *_: iter(()))
    (tmp_path / "far.xlsx").write_bytes(generate_office().register("XFD1048576"))
    assert reason(tmp_path / "far.xlsx") == (
        "sheet Equipment could not be found in the workbook's parts to be checked; re-save it and run again"
    )


def test_a_sheet_named_by_an_unusual_relationship_path_is_checked(tmp_path: Path) -> None:
    """`xl/./worksheets/../worksheets/sheet1.xml` and a backslash are the same part to calamine."""
    data = generate_office().register("XFD1048576")
    for target in ("./worksheets/../worksheets/sheet1.xml", "worksheets\\sheet1.xml"):
        with zipfile.ZipFile(io.BytesIO(data)) as source:
            members = {name: source.read(name) for name in source.namelist()}
        rels = members["xl/_rels/workbook.xml.rels"]
        members["xl/_rels/workbook.xml.rels"] = rels.replace(b"/xl/worksheets/sheet1.xml", target.encode())
        members["xl/_rels/workbook.xml.rels"] = members["xl/_rels/workbook.xml.rels"].replace(
            b'"worksheets/sheet1.xml"', f'"{target}"'.encode()
        )
        assert target.encode() in members["xl/_rels/workbook.xml.rels"]
        zip_with(tmp_path / "far.xlsx", members)
        said = reason(tmp_path / "far.xlsx")
        assert said.startswith("sheet Equipment has cells as far apart as A1:XFD1048576")


@pytest.mark.parametrize(
    ("cell", "said"),
    [
        (b'<c r="A1048576"><v>1</v></c>', "sheet Equipment has cells as far apart as A1:E1048576 ("),
        (b"<c><v>1</v></c>" * 3, "sheet Equipment has cells as far apart as A1:E9 (45 cells"),
        (
            b'<c r="A-1"><v>1</v></c>',
            "is a damaged Excel workbook (cell reference 'A-1' is not a column and a row)",
        ),
    ],
)
def test_a_cell_is_placed_by_its_own_reference(cell: bytes, said: str, tmp_path: Path) -> None:
    """A cell written in row 1 that names row 1048576 is counted there (as calamine places it); a
    cell without a reference goes after the one before it; a reference that is none is damage."""
    with zipfile.ZipFile(io.BytesIO(generate_office().register())) as source:
        members = {name: source.read(name) for name in source.namelist()}
    sheet = members["xl/worksheets/sheet1.xml"]
    members["xl/worksheets/sheet1.xml"] = sheet.replace(b"</row>", cell + b"</row>", 1)
    zip_with(tmp_path / "odd.xlsx", members)
    from localqa.extract import sheets

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sheets, "MAX_SHEET_CELLS", 44)
        assert reason(tmp_path / "odd.xlsx").startswith(said)
