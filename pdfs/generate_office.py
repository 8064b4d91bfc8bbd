"""Generate the Word and Excel files of the sample library (`python pdfs/generate_office.py [--out DIR]`).

Like `generate.py` for the PDFs, this script is their source and `tests/test_sample_library.py`
checks that it reproduces the committed files byte for byte: the libraries that write them
(python-docx, openpyxl) stamp the time into the package, so every zip member is rewritten with a
fixed date and the document properties carry fixed dates too.

- `loans-handbook.docx`: the handbook's "Loans and Renewals" section in Word: a title, heading
  styles two levels deep, a list introduced by a paragraph, and a table with a header row.
- `equipment-register.xlsx`: the equipment register, a title row above its header row (row 3),
  one item per row.
- `desk-rota.csv`: the staff-only desk rota (a spreadsheet the public never sees).
"""

from __future__ import annotations

import argparse
import io
import re
import zipfile
from datetime import datetime
from pathlib import Path

import docx
import openpyxl

HERE = Path(__file__).resolve().parent
FIXED = datetime(2026, 1, 1)
AUTHOR = "Riverside Library"

RENEWALS = [
    "Most items can be renewed twice, online or at the desk, as long as the loan has not expired.",
    "A renewal adds 14 days to the loan period, counted from the day of the renewal.",
    "Items reserved by another member cannot be renewed; they must be returned by their due date.",
]
INTERLIBRARY = [
    "Books the library does not hold can be requested from partner libraries through an interlibrary loan.",
    "An interlibrary loan request costs 3 dollars and the book usually arrives within ten working days.",
]
RENEWAL_TABLE = (
    ("Item type", "Renewals allowed", "Loan period"),
    ("Books", "2", "21 days"),
    ("Audiobooks", "2", "21 days"),
    ("DVDs", "1", "7 days"),
    ("Magazines", "0", "7 days"),
)
REGISTER_HEADER = ("Item ID", "Item", "Branch", "Loan limit", "Deposit (dollars)")
REGISTER = (
    ("EQ-401", "Portable scanner", "Main branch", "3 days", 40),
    ("EQ-402", "Document camera", "Main branch", "1 day", 60),
    ("EQ-403", "Laptop charger", "Riverside branch", "4 hours", 0),
    ("EQ-404", "Graphing calculator", "Riverside branch", "7 days", 25),
    ("EQ-405", "Podcast microphone kit", "Main branch", "2 days", 80),
    ("EQ-406", "E-reader", "Hillside branch", "14 days", 30),
)


def handbook() -> bytes:
    document = docx.Document()
    document.core_properties.author = AUTHOR
    document.core_properties.title = "Riverside Library Handbook: Loans and Renewals"
    document.add_heading("Riverside Library Handbook: Loans and Renewals", 0)
    document.add_heading("Loans", 1)
    document.add_paragraph(
        "Members may borrow up to 30 items at a time on one library card; a card is free for residents."
    )
    document.add_heading("Renewals", 2)
    for text in RENEWALS:
        document.add_paragraph(text)
    document.add_paragraph("To renew an item at the desk you need:")
    document.add_paragraph("your library card or its number", style="List Bullet")
    document.add_paragraph("the item or its barcode", style="List Bullet")
    document.add_paragraph("Renewal limits")
    table = document.add_table(rows=0, cols=len(RENEWAL_TABLE[0]))
    for row in RENEWAL_TABLE:
        cells = table.add_row().cells
        for cell, text in zip(cells, row, strict=True):
            cell.text = text
    document.add_heading("Interlibrary loans", 2)
    for text in INTERLIBRARY:
        document.add_paragraph(text)
    buffer = io.BytesIO()
    document.save(buffer)
    return deterministic(buffer.getvalue())


def register(stray: str | None = None) -> bytes:
    """The equipment register; with `stray`, one more cell at that reference (`"XFD1048576"`): a
    5 KB workbook whose cells span a sheet's whole range, as tests of the sheet bounds need."""
    workbook = openpyxl.Workbook()
    workbook.properties.creator = AUTHOR
    workbook.properties.title = "Equipment register"
    sheet = workbook.active
    assert sheet is not None
    sheet.title = "Equipment"
    sheet.append(["Equipment register (November 2026)"])
    sheet.append([])
    sheet.append(list(REGISTER_HEADER))
    for row in REGISTER:
        sheet.append(list(row))
    if stray is not None:
        sheet[stray] = "stray"
    buffer = io.BytesIO()
    workbook.save(buffer)
    return deterministic(buffer.getvalue())


_STAMP = re.compile(rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*(</dcterms:)")


def deterministic(package: bytes) -> bytes:
    """The zip package rewritten with every member dated `FIXED` and the creation and
    modification dates in its properties set to `FIXED`."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(package)) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "docProps/core.xml":
                data = _STAMP.sub(rb"\g<1>" + FIXED.strftime("%Y-%m-%dT%H:%M:%SZ").encode() + rb"\g<2>", data)
            target.writestr(zipfile.ZipInfo(info.filename, FIXED.timetuple()[:6]), data, zipfile.ZIP_DEFLATED)
    return out.getvalue()


ROTA = (
    ("Day", "Opening shift", "Closing shift", "Duty manager"),
    ("Monday", "Priya Natarajan", "Tom Okafor", "Helen Varga"),
    ("Wednesday", "Tom Okafor", "Lena Brandt", "Helen Varga"),
    ("Friday", "Lena Brandt", "Marcus Webb", "Samir Haddad"),
    ("Saturday", "Marcus Webb", "Priya Natarajan", "Samir Haddad"),
)


def rota() -> str:
    return "".join(",".join(row) + "\n" for row in ROTA)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE)
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    (out / "loans-handbook.docx").write_bytes(handbook())
    (out / "equipment-register.xlsx").write_bytes(register())
    (out / "desk-rota.csv").write_text(rota(), encoding="utf-8")


if __name__ == "__main__":
    main()
