"""The glossary against a standard list of financial ratios (a textbook's groups: liquidity,
leverage, efficiency, profitability, cash), each computed on a filing drawn with PyMuPDF whose
rows use the synonyms filers write ("Cost of goods sold", depreciation and amortization only in
the statement of cash flows); and a ratio no entry decomposes never answered with an amount."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from filings import write_report

from localqa.derived.glossary import glossary
from localqa.indexing.index import refresh_index
from localqa.library import Library
from localqa.models.extractive import ExtractiveModel
from localqa.types import Answer

AS_OF = date(2026, 1, 1)
COLUMNS = ("December 31, 2022", "December 31, 2021")
STATEMENTS = {
    "CONSOLIDATED STATEMENTS OF OPERATIONS": [
        ("Net sales", "10,000", "8,000"),
        ("Cost of goods sold", "6,000", "5,000"),
        ("Operating income", "1,500", "1,200"),
        ("Interest expense", "300", "250"),
        ("Net income", "800", "600"),
    ],
    "CONSOLIDATED BALANCE SHEETS": [
        ("Cash and cash equivalents", "500", "400"),
        ("Accounts receivable, net", "1,000", "900"),
        ("Inventories", "1,200", "1,000"),
        ("Total current assets", "3,000", "2,600"),
        ("Total assets", "12,000", "11,000"),
        ("Accounts payable", "700", "600"),
        ("Total current liabilities", "2,000", "1,800"),
        ("Total debt", "4,000", "4,200"),
        ("Total shareholders' equity", "5,000", "4,600"),
    ],
    "CONSOLIDATED STATEMENTS OF CASH FLOWS": [
        ("Net income", "800", "600"),
        ("Depreciation and amortization", "400", "350"),
        ("Net cash provided by operating activities", "1,300", "1,100"),
        ("Capital expenditures", "(500)", "(450)"),
        ("Dividends paid", "(200)", "(180)"),
    ],
}

# The standard list, by group: (what a question calls it, the figure for FY2022 as computed).
STANDARD = {
    "liquidity": [("current ratio", "1.50"), ("quick ratio", "0.90"), ("cash ratio", "0.25")],
    "leverage": [("debt to equity ratio", "0.80"), ("interest coverage ratio", "5.00")],
    "efficiency": [
        ("inventory turnover", "5.45"),  # 6,000 / average(1,000, 1,200)
        ("receivables turnover", "10.53"),  # 10,000 / average(900, 1,000)
        ("asset turnover", "0.87"),  # 10,000 / average(11,000, 12,000)
        ("days sales outstanding", "34.68"),  # 365 * 950 / 10,000
    ],
    "profitability": [
        ("gross margin", "40.00 %"),
        ("operating margin", "15.00 %"),
        ("net margin", "8.00 %"),
        ("EBITDA margin", "19.00 %"),  # (1,500 + 400 from the cash flow statement) / 10,000
        ("return on assets", "6.96 %"),  # 800 / average(11,000, 12,000)
        ("return on equity", "16.67 %"),  # 800 / average(4,600, 5,000)
    ],
    "cash": [
        ("free cash flow", "800.00"),  # 1,300 - 500
        ("free cash flow conversion", "100.00 %"),  # 800 / 800
        ("capital intensity", "1.20"),  # 12,000 / 10,000
        ("dividend payout ratio", "25.00 %"),  # 200 / 800
    ],
}


def write_standard_filing(path: Path) -> Path:
    title = "Orbit Tools Annual Report 2022"
    return write_report(path, "Orbit Tools Inc.", "December 31, 2022", STATEMENTS, COLUMNS, title)


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("standard")
    write_standard_filing(folder / "orbit-10k-fy2022.pdf")
    (folder / "catalog.toml").write_text(
        '["orbit-10k-fy2022.pdf"]\nseries = "orbit-10k"\naccess = "public"\nperiod = "FY2022"\n',
        encoding="utf-8",
    )
    db = folder / "index.sqlite3"
    report = refresh_index(folder, db, embed=False)
    assert not report.problems, report.problems
    return db


def ask(db: Path, question: str) -> Answer:
    with Library(db) as opened:
        return opened.answer(question, as_of=AS_OF, model=ExtractiveModel()).parts[0].answer


@pytest.mark.parametrize(
    ("name", "expected"), [entry for group in STANDARD.values() for entry in group], ids=lambda v: str(v)
)
def test_each_standard_ratio_is_computed_from_the_filings_rows(
    library: Path, name: str, expected: str
) -> None:
    answer = ask(library, f"What is Orbit Tools' FY2022 {name}?")
    assert answer.verified and answer.value is not None and answer.value.derived, answer
    assert answer.value.text == expected


def test_the_glossary_names_every_ratio_of_the_standard_list() -> None:
    names = {name for metric in glossary().metrics.values() for name in metric.names}
    for group in STANDARD.values():
        for name, _ in group:
            assert name.lower() in names, name


def test_leverage_and_days_outstanding_are_better_lower() -> None:
    metrics = glossary().metrics
    assert {key for key, m in metrics.items() if m.better == "lower"} >= {"debt_to_equity", "dso", "dio"}
    assert all(m.threshold_source for m in metrics.values() if m.threshold is not None)


def test_a_ratio_no_entry_decomposes_is_never_answered_with_an_amount(library: Path) -> None:
    answer = ask(library, "What is Orbit Tools' FY2022 cash burn ratio?")
    assert answer.value is None or (not answer.value.derived and answer.value.unit in (None, "%"))
    if answer.verified:
        assert answer.value is None and answer.figure_note is not None
