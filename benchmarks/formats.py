"""Ingest speed and peak memory per source format, against each library's own bare read.

    python -m benchmarks.formats [--repeat 3] [--scale 1.0] [--formats xlsx,xlsx-far] [--checkout DIR]
                                 [--json OUT]

Writes one deterministic file per format into ~/.cache/localqa-bench/formats (with the libraries
that localqa reads them with: python-docx, openpyxl for .xlsx, python-pptx; CSV and HTML as
text; an EPUB by LibreOffice when `soffice` is installed), then measures each in a fresh process
(so that its peak resident memory is its own), `--repeat` times, keeping the fastest:

- `bare`: the library's own plainest full read (python-docx: every paragraph's and table cell's
  text; calamine: every sheet's rows; `csv.reader`; python-pptx: every shape's text;
  trafilatura: `extract()` to XML; PyMuPDF: `get_text()` per page);
- `localqa`: `localqa.extract.extract_file`, passages with heading paths, table rows with their
  header cells, citations, and the content checks (`localqa.extract.checks`);
- the libraries compared and not chosen, on the same file, where installed (docx2python, mammoth,
  openpyxl read-only, selectolax): the figures the choice was made on.

`xlsx-far` is the register with one more cell at XFD1048576 (issue 36), read through localqa only:
its peak is the cost of refusing it. `--checkout DIR` measures another source tree (a 'before').

Units: pages for PDF and EPUB, slides for PowerPoint, rows for spreadsheets, passages produced for
Word and HTML. `x bare` is the time over the bare read's. Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import common

REPO = common.REPO
CACHE = common.CACHE / "formats"
WORDS = (
    "loan renewal desk member card item policy hold fine return branch reading room staff notice "
    "equipment laptop camera projector deposit"
).split()

# Each measurement runs as `python -c MEASURE FORMAT VARIANT PATH` in a fresh process, and prints
# seconds (imports excluded), units and the process's peak resident set size in kB (imports included).
MEASURE = r"""
import importlib, sys, time
fmt, variant, path = sys.argv[1:4]
# Imports are not timed: each variant's modules are loaded first.
MODULES = {
    "localqa": ["localqa.extract", "localqa.extract.word", "localqa.extract.sheets", "localqa.extract.slides",
                "localqa.extract.web"],
    "bare": {"docx": ["docx"], "xlsx": ["python_calamine"], "csv": ["csv"], "pptx": ["pptx"],
             "html": ["trafilatura"], "pdf": ["pymupdf"], "epub": ["pymupdf"]}.get(fmt, []),
    "docx2python": ["docx2python"], "mammoth": ["mammoth"], "openpyxl-read-only": ["openpyxl"],
    "selectolax": ["selectolax.lexbor"],
}.get(variant, [])
for name in MODULES:
    importlib.import_module(name)


def peak_kb():
    # VmHWM: this process's own high-water mark (ru_maxrss would carry the forking parent's).
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))


started = time.perf_counter()
units = 0
if variant == "localqa":
    from pathlib import Path
    from localqa.extract import Unreadable, extract_file
    try:
        result = extract_file(Path(path), Path(path).name, Path(path).name)
    except Unreadable:  # a file refused (the far-corner workbook): no units, its peak all the same
        result = None
    if result is None:
        units = 0
    elif fmt in ("xlsx", "xlsx-far", "csv"):
        units = len(result.passages)
    elif fmt in ("pptx", "pdf", "epub"):
        units = len({p.page for p in result.passages})
    else:
        units = len(result.passages)
elif fmt == "docx" and variant == "bare":
    import docx
    document = docx.Document(path)
    texts = [p.text for p in document.paragraphs]
    texts += [c.text for t in document.tables for r in t.rows for c in r.cells]
    units = len(texts)
elif fmt == "docx" and variant == "docx2python":
    from docx2python import docx2python
    with docx2python(path, html=True) as read:
        units = len(read.text)
elif fmt == "docx" and variant == "mammoth":
    import mammoth
    with open(path, "rb") as handle:
        units = len(mammoth.convert_to_html(handle).value)
elif fmt == "xlsx" and variant == "bare":
    from python_calamine import CalamineWorkbook
    book = CalamineWorkbook.from_path(path)
    units = sum(len(book.get_sheet_by_name(n).to_python()) for n in book.sheet_names)
elif fmt == "xlsx" and variant == "openpyxl-read-only":
    import openpyxl
    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    units = sum(1 for s in book.worksheets for _ in s.iter_rows(values_only=True))
elif fmt == "csv" and variant == "bare":
    import csv
    with open(path, newline="", encoding="utf-8") as handle:
        units = sum(1 for _ in csv.reader(handle))
elif fmt == "pptx" and variant == "bare":
    from pptx import Presentation
    deck = Presentation(path)
    texts = [s.text_frame.text for slide in deck.slides for s in slide.shapes if s.has_text_frame]
    units = len(deck.slides)
elif fmt == "html" and variant == "bare":
    import trafilatura
    with open(path, "rb") as handle:
        out = trafilatura.extract(handle.read(), output_format="xml", include_tables=True)
    units = out.count("<p") + out.count("<row")
elif fmt == "html" and variant == "selectolax":
    from selectolax.lexbor import LexborHTMLParser
    with open(path, encoding="utf-8") as handle:
        tree = LexborHTMLParser(handle.read())
    for node in tree.css("script, style, nav, header, footer, aside"):
        node.decompose()
    units = len([n.text(deep=True, separator=" ", strip=True) for n in tree.css("h1, h2, h3, p, li, tr")])
elif fmt in ("pdf", "epub") and variant == "bare":
    import pymupdf
    with pymupdf.open(path) as document:
        units = sum(1 for page in document if page.get_text() is not None)
seconds = time.perf_counter() - started
print(seconds, units, peak_kb())
"""


def sentence(rng: random.Random, words: int = 14) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def make_docx(path: Path, sections: int) -> None:
    import docx

    rng = random.Random(1)
    document = docx.Document()
    document.add_heading("Riverside Library Handbook", 0)
    for s in range(sections):
        document.add_heading(f"Loans {s}", 1)
        document.add_paragraph(sentence(rng))
        document.add_heading(f"Renewals {s}", 2)
        for _ in range(8):
            document.add_paragraph(sentence(rng, 30))
        document.add_paragraph("Bring your card.", style="List Bullet")
        document.add_paragraph("Ask at the desk.", style="List Bullet")
        table = document.add_table(rows=1, cols=3)
        for cell, text in zip(table.rows[0].cells, ("Item ID", "Item", "Loan limit"), strict=True):
            cell.text = text
        for r in range(10):
            cells = table.add_row().cells
            cells[0].text, cells[1].text, cells[2].text = f"EQ-{s}{r:02d}", rng.choice(WORDS), f"{r + 1} days"
    document.save(path)


def make_xlsx(path: Path, rows: int) -> None:
    import openpyxl

    rng = random.Random(2)
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Register"
    sheet.append(["Equipment register"])
    sheet.append([])
    sheet.append(["Item ID", "Item", "Branch", "Loan limit", "Deposit"])
    for r in range(rows):
        sheet.append(
            [
                f"EQ-{r:05d}",
                rng.choice(WORDS),
                rng.choice(WORDS),
                f"{rng.randint(1, 30)} days",
                rng.randint(0, 80),
            ]
        )
    book.save(path)


def make_csv(path: Path, rows: int) -> None:
    rng = random.Random(3)
    lines = ["Item ID,Item,Branch,Loan limit,Deposit"]
    lines += [
        f"EQ-{r:05d},{rng.choice(WORDS)},{rng.choice(WORDS)},{rng.randint(1, 30)} days,{rng.randint(0, 80)}"
        for r in range(rows)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def make_pptx(path: Path, slides: int) -> None:
    from pptx import Presentation
    from pptx.util import Inches

    rng = random.Random(4)
    deck = Presentation()
    for s in range(slides):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Renewals {s}"
        body = slide.placeholders[1].text_frame
        body.text = sentence(rng)
        body.add_paragraph().text = sentence(rng)
        table = slide.shapes.add_table(4, 2, Inches(1), Inches(4.5), Inches(6), Inches(1.2)).table
        for r, values in enumerate(
            (("Item ID", "Loan limit"), ("EQ-314", "45 minutes"), ("EQ-120", "2 days"), ("EQ-7", "1 day"))
        ):
            for c, value in enumerate(values):
                table.cell(r, c).text = value
        slide.notes_slide.notes_text_frame.text = sentence(rng)
    deck.save(path)


def make_html(path: Path, sections: int) -> None:
    rng = random.Random(5)
    parts = [
        "<!doctype html><html><head><title>Loans | Riverside Library</title>",
        "<script>var t = 1;</script></head>",
        '<body><header><nav><a href="/">Home</a> <a href="/loans">Loans</a></nav></header>',
        "<main><h1>Borrowing</h1>",
    ]
    for s in range(sections):
        parts.append(f"<h2>Part {s}</h2><p>{sentence(rng, 30)}</p><p>{sentence(rng, 20)}</p>")
        parts.append(
            "<table><tr><th>Item ID</th><th>Loan limit</th></tr>"
            f"<tr><td>EQ-{s}</td><td>{s % 30 + 1} days</td></tr></table>"
        )
    parts.append("</main><footer><p>Privacy. Contact.</p></footer></body></html>")
    path.write_text("".join(parts), encoding="utf-8")


def make_pdf(path: Path, pages: int) -> None:
    """The sample library's handbook pages, repeated: PyMuPDF's own reference format."""
    import pymupdf

    with pymupdf.open(REPO / "pdfs" / "library-handbook.pdf") as source, pymupdf.open() as out:
        for _ in range(pages // 3):
            out.insert_pdf(source, from_page=0, to_page=2)  # the three pages with a text layer
        out.save(path)


def make_epub(path: Path, docx_path: Path) -> bool:
    """LibreOffice's EPUB of the Word file, when `soffice` is installed."""
    soffice = shutil.which("soffice")
    if soffice is None:
        return False
    with tempfile.TemporaryDirectory() as work:
        subprocess.run(
            [soffice, "--headless", "--convert-to", "epub", "--outdir", work, str(docx_path)],
            check=True,
            capture_output=True,
            timeout=600,
        )
        shutil.move(Path(work) / f"{docx_path.stem}.epub", path)
    return True


# The hostile workbook of issue 36: the sample register with one more cell at the sheet's far
# corner (5 KB; calamine alone would allocate the 512 GiB range). Measured through localqa only.
FAR_CORNER = "XFD1048576"


def _office_generator() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("generate_office", REPO / "pdfs" / "generate_office.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fixtures(scale: float, wanted: set[str]) -> dict[str, Path]:
    CACHE.mkdir(parents=True, exist_ok=True)
    sizes = {
        "docx": int(150 * scale),
        "xlsx": int(50_000 * scale),
        "csv": int(50_000 * scale),
        "pptx": int(300 * scale),
        "html": int(2_000 * scale),
        "pdf": int(300 * scale),
    }
    made = {
        "docx": (make_docx, "handbook"),
        "xlsx": (make_xlsx, "register"),
        "csv": (make_csv, "register"),
        "pptx": (make_pptx, "deck"),
        "html": (make_html, "page"),
        "pdf": (make_pdf, "handbook"),
    }
    paths: dict[str, Path] = {}
    for fmt, (make, stem) in made.items():
        if fmt not in wanted | {"csv"} | ({"docx"} if "epub" in wanted else set()):  # CSV: the baseline
            continue
        path = CACHE / f"{stem}-{sizes[fmt]}.{fmt}"
        if not path.exists():
            make(path, sizes[fmt])
        paths[fmt] = path
    paths["xlsx-far"] = CACHE / f"register-far-{FAR_CORNER}.xlsx"
    if not paths["xlsx-far"].exists():
        paths["xlsx-far"].write_bytes(_office_generator().register(FAR_CORNER))
    epub = CACHE / f"{paths['docx'].stem}.epub" if "docx" in paths else None
    if "epub" in wanted and epub is not None and (epub.exists() or make_epub(epub, paths["docx"])):
        paths["epub"] = epub
    return paths


VARIANTS = {
    "docx": ["bare", "localqa", "docx2python", "mammoth"],
    "xlsx": ["bare", "localqa", "openpyxl-read-only"],
    "xlsx-far": ["localqa"],
    "csv": ["bare", "localqa"],
    "pptx": ["bare", "localqa"],
    "html": ["bare", "localqa", "selectolax"],
    "pdf": ["bare", "localqa"],
    "epub": ["bare", "localqa"],
}
LIBRARY = {
    "docx": "python-docx",
    "xlsx": "python-calamine",
    "xlsx-far": "python-calamine",
    "csv": "csv (stdlib)",
    "pptx": "python-pptx",
    "html": "trafilatura",
    "pdf": "PyMuPDF",
    "epub": "PyMuPDF",
}
UNIT = {
    "docx": "passages",
    "xlsx": "rows",
    "xlsx-far": "rows",
    "csv": "rows",
    "pptx": "slides",
    "html": "passages",
    "pdf": "pages",
    "epub": "pages",
}


def measure(fmt: str, variant: str, path: Path, repeat: int, checkout: Path = REPO) -> dict[str, Any] | None:
    runs = []
    for _ in range(repeat):
        done = subprocess.run(
            [sys.executable, "-c", MEASURE, fmt, variant, str(path)],
            capture_output=True,
            text=True,
            cwd=checkout,
            env=common.child_env(checkout),
            check=False,
        )
        if done.returncode != 0:
            if "ModuleNotFoundError" in done.stderr:
                return None  # a compared library that is not installed here
            said = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            raise RuntimeError(f"{fmt} {variant}: {said} (exit {done.returncode})")
        seconds, units, peak = done.stdout.split()
        runs.append((float(seconds), int(units), int(peak)))
    best = min(runs)
    return {
        "seconds": best[0],
        "units": best[1],
        "peak_mb": max(r[2] for r in runs) / 1024,
        "runs": [r[0] for r in runs],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0, help="File sizes relative to the defaults.")
    parser.add_argument("--formats", default=",".join(VARIANTS), help="Comma-separated formats to measure.")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--checkout", type=Path, default=REPO, help="The localqa source tree measured (a 'before', say)."
    )
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"{common.load_on_cores()}; files in {CACHE}")
    paths = fixtures(args.scale, set(args.formats.split(",")))
    baseline = measure("csv", "none", paths["csv"], 1)  # an interpreter that imports nothing
    print(f"python alone: peak {baseline['peak_mb'] if baseline else 0:.0f} MB\n")
    header = (
        f"{'format':6} {'reader':20} {'file':>9} {'units':>7} {'unit':9} {'best s':>8} {'units/s':>9} "
        f"{'x bare':>7} {'peak MB':>8}"
    )
    print(header)
    results: dict[str, Any] = {"load": load, "formats": {}}
    for fmt in args.formats.split(","):
        if fmt not in paths:
            print(f"{fmt:6} (no file: LibreOffice is not installed)")
            continue
        path = paths[fmt]
        bare: float | None = None
        for variant in VARIANTS[fmt]:
            try:
                found = measure(fmt, variant, path, args.repeat, args.checkout.resolve())
            except RuntimeError as error:  # a reader that dies (a 'before' on the far-corner workbook)
                print(f"{fmt:6} {variant:20} failed: {error}")
                continue
            if found is None:
                print(f"{fmt:6} {variant:20} (not installed)")
                continue
            if variant == "bare":
                bare = found["seconds"]
            reader = f"{LIBRARY[fmt]} (bare)" if variant == "bare" else variant
            units = found["units"] if variant in ("bare", "localqa") or fmt == "xlsx" else None
            rate = f"{found['units'] / found['seconds']:9.0f}" if units else f"{'':>9}"
            ratio = found["seconds"] / bare if bare else float("nan")
            print(
                f"{fmt:6} {reader:20} {path.stat().st_size / 1e6:8.2f}M {found['units'] if units else '':>7} "
                f"{UNIT[fmt] if units else '':9} {found['seconds']:8.3f} {rate} {ratio:7.2f} "
                f"{found['peak_mb']:8.0f}"
            )
            results["formats"].setdefault(fmt, {})[variant] = {**found, "x_bare": ratio, "file": path.name}
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
