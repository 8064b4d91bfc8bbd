"""A filing drawn with PyMuPDF whose notes repeat the registrant's line items for another entity
(issue 48): the registrant's consolidated statements of income and balance sheets, then, in a
note, the summarized statements of a guarantor group of subsidiaries with the same row labels and
other amounts. The guarantor's labels are the shorter ones ("Cost of sales" where the consolidated
statement writes "Cost of sales, exclusive of depreciation"), so a rule that ranks rows by their
label alone reads the note's.

The registrant's own figures: gross margin 21.24 % (FY2021) -> 18.54 % (FY2022), declined; quick
ratio 0.66 -> 0.69. The guarantor group's: gross margin 13.75 % -> 15.38 %, quick ratio 0.38 ->
0.21, each the other way."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pymupdf
from filings import statement

COMPANY = "Corvid Packaging plc"
COLUMNS = ("December 31, 2022", "December 31, 2021")
STATEMENTS: dict[str, list[tuple[str, str, str]]] = {
    "CONSOLIDATED STATEMENTS OF INCOME": [
        ("Net sales", "14,694", "12,861"),
        ("Cost of sales, exclusive of depreciation", "(11,969)", "(10,129)"),
        ("Gross profit", "2,725", "2,732"),
        ("Operating income", "1,400", "1,450"),
        ("Net income", "805", "939"),
    ],
    "CONSOLIDATED BALANCE SHEETS": [
        ("Cash and cash equivalents", "775", "850"),
        ("Inventories, net", "2,439", "2,291"),
        ("Total current assets", "5,853", "5,626"),
        ("Total assets", "17,165", "16,525"),
        ("Total current liabilities", "4,948", "5,086"),
        ("Total liabilities", "12,346", "11,822"),
        ("Total equity", "4,819", "4,703"),
    ],
}
# The note's statements of the guarantor group: the same lines, other amounts, on one page.
GUARANTOR: dict[str, list[tuple[str, str, str]]] = {
    "Summarized Statements of Income": [
        ("Net sales", "377", "400"),
        ("Cost of sales", "(319)", "(345)"),
        ("Gross profit", "58", "55"),
        ("Net income", "20", "18"),
    ],
    "Summarized Balance Sheets": [
        ("Inventories", "60", "50"),
        ("Total current assets", "150", "140"),
        ("Total current liabilities", "420", "237"),
    ],
}
NOTE_HEADING = "21. Guarantor Financial Information"
NOTE_TEXT = (
    "The following summarized financial information presents the issuer and the guarantor",
    "subsidiaries (the Obligor Group) on a combined basis, after eliminations.",
)


def write_guarantor_filing(
    path: Path,
    statements: dict[str, list[tuple[str, str, str]]] | None = None,
    notes: Sequence[str] = (),
) -> Path:
    """The filing at `path`: a cover, one consolidated statement a page, then the note with the
    guarantor group's statements; `notes` are lines of a page of management's discussion after it."""
    with pymupdf.open() as document:
        cover = document.new_page()
        cover.insert_text((72, 90), COMPANY.upper(), fontname="hebo", fontsize=16)
        cover.insert_text((72, 120), "ANNUAL REPORT ON FORM 10-K", fontname="helv", fontsize=12)
        cover.insert_text(
            (72, 145), "For the fiscal year ended December 31, 2022", fontname="helv", fontsize=11
        )
        for title, rows in (statements or STATEMENTS).items():
            statement(document.new_page(), COMPANY, title, rows, COLUMNS)
        _note(document.new_page())
        if notes:
            page = document.new_page()
            page.insert_text((72, 72), "MANAGEMENT'S DISCUSSION AND ANALYSIS", fontname="hebo", fontsize=11)
            for number, line in enumerate(notes):
                page.insert_text((72, 100 + 11 * number), line, fontname="helv", fontsize=9)
        document.set_metadata({"title": f"{COMPANY} Annual Report 2022"})
        document.save(path)
    return path


def _note(page: pymupdf.Page) -> None:
    page.insert_text((72, 72), "NOTES TO CONSOLIDATED FINANCIAL STATEMENTS", fontname="hebo", fontsize=11)
    page.insert_text((72, 92), NOTE_HEADING, fontname="hebo", fontsize=10)
    for number, line in enumerate(NOTE_TEXT):
        page.insert_text((72, 110 + 11 * number), line, fontname="helv", fontsize=9)
    top = 150.0
    right = (420.0, 520.0)
    for title, rows in GUARANTOR.items():
        page.insert_text((72, top), title, fontname="hebo", fontsize=10)
        page.insert_text((72, top + 14), "(In millions)", fontname="helv", fontsize=9)
        for x, header in zip(right, COLUMNS, strict=True):
            width = pymupdf.get_text_length(header, fontname="hebo", fontsize=9)
            page.insert_text((x - width, top + 32), header, fontname="hebo", fontsize=9)
        for number, (label, *cells) in enumerate(rows):
            y = top + 50 + 16 * number
            page.insert_text((72, y), label, fontname="helv", fontsize=9)
            for x, cell in zip(right, cells, strict=True):
                width = pymupdf.get_text_length(cell, fontname="helv", fontsize=9)
                page.insert_text((x - width, y), cell, fontname="helv", fontsize=9)
        top += 80 + 16 * len(rows)
