"""A small annual report drawn with PyMuPDF for the tests of values and derived figures: a retailer
whose fiscal year ends in early February (its fiscal 2018 ended on February 2, 2019), with an
income statement, a balance sheet and a statement of cash flows laid out as filings lay them out:
columns aligned by whitespace under dated headers, no ruling lines, the scale stated once under
the title; a last page of notes states one item's amounts in prose."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pymupdf

COLUMNS = ("February 2, 2019", "February 3, 2018")
STATEMENTS: dict[str, list[tuple[str, str, str]]] = {
    "CONSOLIDATED STATEMENTS OF OPERATIONS": [
        ("Net sales", "7,939", "7,782"),
        ("Cost of sales", "5,202", "5,090"),
        ("Gross profit", "2,737", "2,692"),
        ("Selling, general and administrative expenses", "2,086", "2,064"),
        ("Operating income", "651", "628"),
        ("Net income", "541", "284"),
    ],
    "CONSOLIDATED BALANCE SHEETS": [
        ("Cash and cash equivalents", "891", "849"),
        ("Merchandise inventories", "1,269", "1,278"),
        ("Total current assets", "3,024", "2,970"),
        ("Accounts payable", "333", "279"),
        ("Total current liabilities", "1,530", "1,405"),
        ("Total assets", "3,820", "3,961"),
    ],
    "CONSOLIDATED STATEMENTS OF CASH FLOWS": [
        ("Net cash provided by operating activities", "760", "974"),
        ("Capital expenditures", "(187)", "(274)"),
        ("Dividends paid", "(160)", "(162)"),
    ],
}

# A note that states an item's amounts by year in prose (no row gives it), after a sentence that
# speaks of its change: an operand is read from the former only.
NOTES = (
    "Advertising. Advertising costs increased $14 million in fiscal 2018.",
    "Advertising costs are expensed as incurred and totaled $412 million in fiscal 2018 and $398 million",
    "in fiscal 2017.",
)


def write_filing(path: Path, company: str = "Acme Retail Inc.") -> Path:
    """The report at `path`: a cover, then one statement a page."""
    with pymupdf.open() as document:
        cover = document.new_page()
        cover.insert_text((72, 90), company.upper(), fontname="hebo", fontsize=16)
        cover.insert_text((72, 120), "ANNUAL REPORT ON FORM 10-K", fontname="helv", fontsize=12)
        cover.insert_text(
            (72, 145), "For the fiscal year ended February 2, 2019", fontname="helv", fontsize=11
        )
        cover.insert_text(
            (72, 180), f"{company} sells home goods in 212 stores.", fontname="helv", fontsize=10
        )
        for title, rows in STATEMENTS.items():
            statement(document.new_page(), company, title, rows)
        notes = document.new_page()
        title = "NOTES TO CONSOLIDATED FINANCIAL STATEMENTS"
        notes.insert_text((72, 72), title, fontname="hebo", fontsize=11)
        for number, line in enumerate(NOTES):
            notes.insert_text((72, 100 + 11 * number), line, fontname="helv", fontsize=9)
        document.set_metadata({"title": f"{company} Annual Report Fiscal 2018"})
        document.save(path)
    return path


def write_report(
    path: Path,
    company: str,
    year_ended: str,
    statements: dict[str, list[tuple[str, str, str]]],
    columns: tuple[str, str],
    title: str,
) -> Path:
    """Another filer's report at `path`, laid out as `write_filing`'s: a cover saying when its
    fiscal year ended ("December 31, 2022"), then one statement a page under `columns`."""
    with pymupdf.open() as document:
        cover = document.new_page()
        cover.insert_text((72, 90), company.upper(), fontname="hebo", fontsize=16)
        cover.insert_text((72, 120), "ANNUAL REPORT ON FORM 10-K", fontname="helv", fontsize=12)
        cover.insert_text((72, 145), f"For the fiscal year ended {year_ended}", fontname="helv", fontsize=11)
        for heading, rows in statements.items():
            statement(document.new_page(), company, heading, rows, columns)
        document.set_metadata({"title": title})
        document.save(path)
    return path


def statement(
    page: pymupdf.Page,
    company: str,
    title: str,
    rows: Sequence[tuple[str, str, str]],
    columns: tuple[str, str] = COLUMNS,
) -> None:
    """One statement page: the company, the title, the scale, two dated columns of figures."""
    page.insert_text((72, 72), company.upper(), fontname="hebo", fontsize=11)
    page.insert_text((72, 88), title, fontname="hebo", fontsize=11)
    page.insert_text((72, 104), "(In millions)", fontname="helv", fontsize=9)
    right = (420.0, 520.0)
    for x, header in zip(right, columns, strict=True):
        width = pymupdf.get_text_length(header, fontname="hebo", fontsize=9)
        page.insert_text((x - width, 130), header, fontname="hebo", fontsize=9)
    for number, (label, *cells) in enumerate(rows):
        y = 150 + 16 * number
        page.insert_text((72, y), label, fontname="helv", fontsize=9)
        for x, cell in zip(right, cells, strict=True):
            width = pymupdf.get_text_length(cell, fontname="helv", fontsize=9)
            page.insert_text((x - width, y), cell, fontname="helv", fontsize=9)
