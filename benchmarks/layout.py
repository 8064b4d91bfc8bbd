"""What PyMuPDF offers for tables without ruling lines, against localqa's own layout code, on the
FinanceBench dev evidence pages (financial statements aligned by whitespace).

    python -m benchmarks.layout [--bench DIR] [--json OUT]              # PyMuPDF 1.x + localqa
    /tmp/venv-pml/bin/python -m benchmarks.layout --pymupdf4llm         # PyMuPDF 2.x layout, own venv

Quality is "numbers tied": of the numeric tokens on an evidence page (`page.get_text()`), how many
come out in a table cell that has both a row label (three letters or more) and a column header —
the condition for a passage like `Net sales: 2023: 14,694` that a question about one year's
figure can be answered from. Cost is milliseconds per page against a bare `page.get_text()` on
the same pages, in the same run.

Rows measured (PyMuPDF 1.x, the shared venv):
- `page.find_tables()` with the strategies `lines` (default), `lines_strict`, `text`, and the
  mixed `text`/`lines` and `lines`/`text` (vertical/horizontal);
- localqa: `localqa.extract.layout.read_page` + `localqa.extract.unruled.find_tables`, plus the
  ruled-table path (`find_tables` only where vertical rules are drawn);
- the whole set: `extract_pdf` over all 32 filings against bare `get_text()`, with the share of
  time spent in the ruled-table path.

`--pymupdf4llm` (run it with a Python whose PyMuPDF is 2.x and has `pymupdf4llm` and the layout
package; never the project venv) measures `pymupdf4llm.to_markdown(page)` the same way, reading
its Markdown tables.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path
from typing import Any

from benchmarks.common import bench_folder, table

_NUMBER = re.compile(r"^\(?\$?\d[\d,]*(?:\.\d+)?\)?%?$")
_LABEL = re.compile(r"[A-Za-z]{3}")
STRATEGIES: dict[str, dict[str, str]] = {
    "lines (default)": {},
    "lines_strict": {"vertical_strategy": "lines_strict", "horizontal_strategy": "lines_strict"},
    "text": {"vertical_strategy": "text", "horizontal_strategy": "text"},
    "text / lines": {"vertical_strategy": "text", "horizontal_strategy": "lines"},
    "lines / text": {"vertical_strategy": "lines", "horizontal_strategy": "text"},
}


def numbers(text: str) -> int:
    return sum(1 for token in text.split() if _NUMBER.match(token))


def tied(rows: list[list[str]], header: list[str]) -> int:
    """Numbers in cells with a row label (first cell) and a column header."""
    count = 0
    for row in rows:
        if not row or not _LABEL.search(row[0] or ""):
            continue
        for column, cell in enumerate(row[1:], start=1):
            if cell and column < len(header) and (header[column] or "").strip():
                count += numbers(cell)
    return count


def evidence_pages(bench: Path) -> list[tuple[str, int]]:
    pages = set()
    for line in (bench / "financebench-dev/questions.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            for evidence in json.loads(line)["evidence"]:
                pages.add((evidence["doc_name"], int(evidence["evidence_page_num"])))  # 0-based
    return sorted(pages)


class Meter:
    def __init__(self) -> None:
        self.seconds = 0.0
        self.tied = 0
        self.tables = 0

    def row(self, name: str, pages: int, numbers_total: int, reference: float) -> dict[str, Any]:
        ms = self.seconds / pages * 1000
        return {
            "name": name,
            "ms_per_page": round(ms, 1),
            "x_get_text": round(self.seconds / reference, 1),
            "tables": self.tables,
            "numbers_tied": self.tied,
            "numbers": numbers_total,
        }


def measure_pymupdf(bench: Path, pages: list[tuple[str, int]]) -> dict[str, Any]:
    import pymupdf

    from localqa.extract import pdf
    from localqa.extract.layout import read_page
    from localqa.extract.unruled import find_tables as find_unruled

    documents: dict[str, Any] = {}
    reference = 0.0
    total = 0
    meters = {name: Meter() for name in [*STRATEGIES, "localqa layout"]}
    for name, number in pages:
        document = documents.get(name) or documents.setdefault(
            name, pymupdf.open(bench / "financebench-dev/pdfs" / f"{name}.pdf")
        )
        page = document[number]
        started = time.perf_counter()
        text = page.get_text()
        reference += time.perf_counter() - started
        total += numbers(text)
        for strategy, options in STRATEGIES.items():
            started = time.perf_counter()
            found = page.find_tables(**options).tables
            extracted = [(table.extract(), table.header.names) for table in found]
            meters[strategy].seconds += time.perf_counter() - started
            meters[strategy].tables += len(found)
            meters[strategy].tied += sum(tied(rows, header) for rows, header in extracted)
        started = time.perf_counter()
        ruled = [pdf._read_table(page, table) for table in pdf._ruled_tables(page)]
        layout = read_page(page, number + 1)
        lines = [line for line in layout.lines if not pdf._inside_any(line.box, [t.bbox for t in ruled])]
        unruled = find_unruled(lines)
        meters["localqa layout"].seconds += time.perf_counter() - started
        meters["localqa layout"].tables += len(ruled) + len(unruled)
        meters["localqa layout"].tied += sum(tied(t.rows, ["", *t.header[1:]]) for t in ruled)
        meters["localqa layout"].tied += sum(
            tied([[row.label, *row.values] for row in table.rows], ["", *table.header]) for table in unruled
        )
    rows = [meter.row(name, len(pages), total, reference) for name, meter in meters.items()]
    return {
        "pymupdf": pymupdf.VersionBind,
        "pages": len(pages),
        "get_text_ms_per_page": round(reference / len(pages) * 1000, 1),
        "rows": rows,
        "whole_set": whole_set(bench),
    }


def whole_set(bench: Path) -> dict[str, Any]:
    """Bare get_text() against extract_pdf over every filing, and the ruled-table share."""
    import pymupdf

    from localqa.extract import pdf

    files = sorted((bench / "financebench-dev/pdfs").glob("*.pdf"))
    pages = 0
    started = time.perf_counter()
    for path in files:
        with pymupdf.open(path) as document:
            pages += document.page_count
            for page in document:
                page.get_text()
    bare = time.perf_counter() - started
    spent = [0.0]
    original = pdf._ruled_tables

    def timed(page: Any) -> list[Any]:
        started = time.perf_counter()
        found = original(page)
        spent[0] += time.perf_counter() - started
        return found

    pdf._ruled_tables = timed
    try:
        started = time.perf_counter()
        for path in files:
            pdf.extract_pdf(path, path.name)
        extraction = time.perf_counter() - started
    finally:
        pdf._ruled_tables = original
    return {
        "files": len(files),
        "pages": pages,
        "get_text_pages_per_s": round(pages / bare, 1),
        "extract_pages_per_s": round(pages / extraction, 1),
        "extract_x_get_text": round(extraction / bare, 1),
        "ruled_table_share": round(spent[0] / extraction, 3),
    }


def measure_pymupdf4llm(bench: Path, pages: list[tuple[str, int]]) -> dict[str, Any]:
    import pymupdf
    import pymupdf4llm

    documents: dict[str, Any] = {}
    first = pymupdf.open(bench / "financebench-dev/pdfs" / f"{pages[0][0]}.pdf")
    pymupdf4llm.to_markdown(first, pages=[0], header=False, footer=False, use_ocr=False)  # loads the model
    reference = spent = 0.0
    total = count = tables = 0
    for name, number in pages:
        document = documents.get(name) or documents.setdefault(
            name, pymupdf.open(bench / "financebench-dev/pdfs" / f"{name}.pdf")
        )
        started = time.perf_counter()
        total += numbers(document[number].get_text())
        reference += time.perf_counter() - started
        started = time.perf_counter()
        markdown = pymupdf4llm.to_markdown(
            document, pages=[number], header=False, footer=False, use_ocr=False
        )
        spent += time.perf_counter() - started
        header: list[str] | None = None
        rows: list[list[str]] = []
        for line in [*markdown.splitlines(), ""]:
            if not line.startswith("|"):
                if header is not None:
                    count += tied(rows, header)
                    tables += 1
                header, rows = None, []
                continue
            cells = [
                c.replace("<br>", " ").replace("**", "").strip() for c in line.strip().strip("|").split("|")
            ]
            if set("".join(cells)) <= set("-: "):
                continue
            if header is None:
                header = cells
            else:
                rows.append(cells)
    meter = Meter()
    meter.seconds, meter.tied, meter.tables = spent, count, tables
    return {
        "pymupdf": pymupdf.VersionBind,
        "pages": len(pages),
        "get_text_ms_per_page": round(reference / len(pages) * 1000, 1),
        "rows": [meter.row(f"pymupdf4llm {pymupdf4llm.version} layout", len(pages), total, reference)],
    }


def print_rows(result: dict[str, Any]) -> None:
    print(
        f"PyMuPDF {result['pymupdf']}: {result['pages']} FinanceBench dev evidence pages; "
        f"bare get_text() {result['get_text_ms_per_page']} ms/page"
    )
    rows = []
    for row in result["rows"]:
        share = row["numbers_tied"] / row["numbers"] if row["numbers"] else 0.0
        tied = f"{row['numbers_tied']}/{row['numbers']} = {share:.3f}"
        rows.append([row["name"], row["ms_per_page"], row["x_get_text"], row["tables"], tied])
    print(table(["method", "ms/page", "x get_text", "tables", "numbers tied to label+header"], rows))
    whole = result.get("whole_set")
    if whole:
        print(
            f"whole set ({whole['files']} filings, {whole['pages']} pages): bare get_text() "
            f"{whole['get_text_pages_per_s']} pages/s, extract_pdf {whole['extract_pages_per_s']} pages/s "
            f"= {whole['extract_x_get_text']}x get_text; ruled-table path {whole['ruled_table_share']:.0%} "
            "of extraction"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", type=Path, help="the benchmark folder (default: ../shared/bench)")
    parser.add_argument("--pymupdf4llm", action="store_true", help="measure pymupdf4llm's layout instead")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write every figure as JSON")
    args = parser.parse_args(argv)
    bench = bench_folder(args.bench)
    if not (bench / "financebench-dev").is_dir():
        print(f"Skipped: financebench-dev not found under {bench} (pass --bench DIR).")
        return 0
    pages = evidence_pages(bench)
    result = measure_pymupdf4llm(bench, pages) if args.pymupdf4llm else measure_pymupdf(bench, pages)
    print_rows(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
