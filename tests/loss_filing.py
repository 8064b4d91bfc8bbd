"""A small annual report with a loss year, drawn with PyMuPDF like `tests/filings.py`: Zorblax
Widgets, whose fiscal 2019 (the year ended December 31, 2019) is a loss written as filings write
it, in parentheses ("Net income (loss) (800)"), beside a profitable fiscal 2018; its statement of
cash flows writes the outflows (capital expenditures, dividends, repurchases) in parentheses too.
Every line item of the glossary has a row, so that every metric can be computed from it."""

from __future__ import annotations

from pathlib import Path

from filings import write_report

COMPANY = "Zorblax Widgets Inc."
COLUMNS = ("December 31, 2019", "December 31, 2018")
# Each row: its label and its cells for FY2019 and FY2018, as drawn.
STATEMENTS: dict[str, list[tuple[str, str, str]]] = {
    "CONSOLIDATED STATEMENTS OF OPERATIONS": [
        ("Net sales", "8,000", "7,000"),
        ("Cost of sales", "5,000", "4,400"),
        ("Gross profit", "3,000", "2,600"),
        ("Research and development", "1,100", "900"),
        ("Operating income (loss)", "(600)", "400"),
        ("Interest expense", "150", "120"),
        ("Income before income taxes", "(900)", "280"),
        ("Provision for (benefit from) income taxes", "(100)", "80"),
        ("Net income (loss)", "(800)", "200"),
    ],
    "CONSOLIDATED BALANCE SHEETS": [
        ("Cash and cash equivalents", "500", "900"),
        ("Accounts receivable, net", "700", "600"),
        ("Inventories", "1,300", "1,200"),
        ("Total current assets", "2,500", "2,700"),
        ("Property, plant and equipment, net", "4,000", "3,600"),
        ("Total assets", "7,000", "6,800"),
        ("Accounts payable", "450", "400"),
        ("Total current liabilities", "1,600", "1,400"),
        ("Total debt", "2,000", "1,500"),
        ("Total shareholders' equity", "3,000", "3,960"),
    ],
    "CONSOLIDATED STATEMENTS OF CASH FLOWS": [
        ("Depreciation and amortization", "350", "300"),
        ("Net cash provided by (used in) operating activities", "(300)", "700"),
        ("Purchases of property, plant and equipment", "(1,200)", "(1,000)"),
        ("Dividends paid", "(160)", "(150)"),
        ("Repurchases of common stock", "(250)", "(100)"),
    ],
}


def write_loss_filing(path: Path) -> Path:
    """The report at `path`: a cover, then one statement a page."""
    return write_report(
        path, COMPANY, "December 31, 2019", STATEMENTS, COLUMNS, f"{COMPANY} Annual Report Fiscal 2019"
    )
