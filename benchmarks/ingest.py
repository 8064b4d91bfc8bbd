"""Ingestion throughput: how fast PDF pages become indexed passages, against bare PyMuPDF.

    python -m benchmarks.ingest [--pages 200] [--repeat 3] [--json OUT]
    python -m benchmarks.ingest --folder ../shared/bench/financebench-dev/pdfs [--jobs N] [--json OUT]
    python -m benchmarks.ingest --folder ../shared/bench/financebench-dev/pdfs --only extraction

Generates one deterministic PDF (headings, prose paragraphs, ruled tables with a bold header row,
laid out the way `pdfs/generate.py` lays out the sample library) into a temporary folder, then
measures in one run, each `--repeat` times, reporting the median:

- `page.get_text()` over every page: the reference (what any PDF-to-text tool pays at least);
- `page.get_text("dict", sort=True)` and `page.find_tables()` alone: the two PyMuPDF calls the
  extractor makes per page, so that a slowdown can be attributed;
- `localqa.extract.pdf.extract_pdf`: extraction only (prose + table rows, headings resolved);
- `localqa.indexing.index.refresh_index(..., rebuild=True)` into a fresh index: extraction + SQLite + FTS5;
- a second `refresh_index` with nothing changed: the incremental path, which must skip extraction.

With `--folder DIR`, the same comparison on real PDFs (every `*.pdf` in DIR, copied to a
temporary folder), once each: bare `get_text()` over every page in one process (the reference);
`extract_pdf` file by file in one process; `localqa index` (`refresh_index`) with extraction in
`--jobs` worker processes (default: the machine's cores), without embeddings and with them.
`--only extraction` stops after the first two (a minute instead of half an hour, for working on
the extractor); `--phases` then extracts once more with a timer around each step of `extract_pdf`
and prints where its time goes.

Timings are printed, never asserted: the machine is shared and noisy, so read the ratios against
bare `get_text()` rather than the absolute figures.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pymupdf

from benchmarks import ready
from benchmarks.common import LOADERS, table
from benchmarks.pdfqa import catalog_toml
from localqa.extract.pdf import extract_pdf
from localqa.extract.pool import default_jobs
from localqa.indexing.index import refresh_index
from localqa.retrieval import embeddings
from localqa.types import Kind

# Layout: the conventions of pdfs/generate.py (Helvetica 11 pt body, bold 14 pt headings, one
# insert_textbox per paragraph, every table cell ruled, bold header row, bold title above).
PAGE_WIDTH, PAGE_HEIGHT = pymupdf.paper_size("a4")
MARGIN = 60.0
BODY, BOLD = "helv", "hebo"
BODY_SIZE, HEADING_SIZE, TITLE_SIZE = 11.0, 14.0, 18.0
LINE_HEIGHT = 1.3
PARAGRAPH_GAP = 12.0
ROW_HEIGHT = 26.0
CELL_PADDING = 4.0
FIXED_DATE = "D:20260101000000+00'00'"
SEED = 20260101

SYLLABLES = (
    "ka lo mi ren to sa vi dor el an bre cu fa gri hel is jo ke lum mar nel or pra qui ros "
    "sel tar ur ven wil xa yor zen ba ce di fo gu ha in ja ku le mo nu pe ri su te vo"
).split()


class Writer:
    """Places blocks top to bottom on one page; `fits` lets the generator stop before overflow."""

    def __init__(self, page: pymupdf.Page) -> None:
        self.page = page
        self.left, self.right = MARGIN, page.rect.width - MARGIN
        self.y = MARGIN

    def room(self) -> float:
        return PAGE_HEIGHT - MARGIN - self.y

    def text(self, text: str, font: str, size: float, gap: float) -> bool:
        box = pymupdf.Rect(self.left, self.y, self.right, PAGE_HEIGHT - MARGIN)
        spare = self.page.insert_textbox(box, text, fontname=font, fontsize=size, lineheight=LINE_HEIGHT)
        if spare < 0:
            return False
        self.y += box.height - spare + gap
        return True

    def table(self, title: str, header: list[str], rows: list[list[str]], widths: list[float]) -> None:
        self.text(title, BOLD, BODY_SIZE, 4.0)
        xs = [self.left]
        for width in widths:
            xs.append(xs[-1] + width)
        ys = [self.y + i * ROW_HEIGHT for i in range(len(rows) + 2)]
        lines = [(header, BOLD)] + [(row, BODY) for row in rows]
        for y0, (cells, font) in zip(ys[:-1], lines, strict=True):
            for x0, x1, cell in zip(xs[:-1], xs[1:], cells, strict=True):
                pad = CELL_PADDING
                box = pymupdf.Rect(x0 + pad, y0 + pad, x1 - pad, y0 + ROW_HEIGHT - pad)
                spare = self.page.insert_textbox(
                    box, cell, fontname=font, fontsize=BODY_SIZE, lineheight=LINE_HEIGHT
                )
                if spare < 0:
                    raise ValueError(f"cell {cell!r} does not fit")
        shape = self.page.new_shape()
        for y in ys:
            shape.draw_line((xs[0], y), (xs[-1], y))
        for x in xs:
            shape.draw_line((x, ys[0]), (x, ys[-1]))
        shape.finish(color=(0, 0, 0), width=0.75)
        shape.commit()
        self.y = ys[-1] + PARAGRAPH_GAP + 4.0


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.choice((1, 2, 2, 3))))


def _sentence(rng: random.Random) -> str:
    words = [_word(rng) for _ in range(rng.randint(8, 16))]
    return " ".join(words).capitalize() + "."


def generate_pdf(path: Path, pages: int) -> dict[str, Any]:
    """Write a deterministic `pages`-page PDF; returns how many headings, paragraphs, tables and
    table data rows it holds (what the extractor should find)."""
    rng = random.Random(SEED)
    doc = pymupdf.open()
    counts: dict[str, Any] = {"headings": 0, "paragraphs": 0, "tables": 0, "rows": 0, "rows_by_page": {}}
    for number in range(1, pages + 1):
        writer = Writer(doc.new_page(width=PAGE_WIDTH, height=PAGE_HEIGHT))
        if number == 1:
            writer.text("Synthetic Ingestion Benchmark Manual", BOLD, TITLE_SIZE, PARAGRAPH_GAP)
            counts["headings"] += 1
        writer.text(f"Chapter {number} {_word(rng).capitalize()}", BOLD, HEADING_SIZE, 6.0)
        counts["headings"] += 1
        for _ in range(2):
            writer.text(
                " ".join(_sentence(rng) for _ in range(rng.randint(3, 5))), BODY, BODY_SIZE, PARAGRAPH_GAP
            )
            counts["paragraphs"] += 1
        rows = [
            [
                f"{_word(rng)[:3].upper()}-{rng.randint(1, 999)}",
                _word(rng),
                f"{rng.randint(1, 90)} days",
                _word(rng),
            ]
            for _ in range(rng.randint(4, 6))
        ]
        writer.table(
            f"Table {number}. {_word(rng).capitalize()} limits",
            ["Code", "Item", "Period", "Note"],
            rows,
            [90.0, 140.0, 100.0, 145.0],
        )
        counts["tables"] += 1
        counts["rows"] += len(rows)
        counts["rows_by_page"][number] = len(rows)
        writer.y += 10.0
        writer.text(f"{_word(rng).capitalize()} {_word(rng)}", BOLD, HEADING_SIZE, 6.0)
        counts["headings"] += 1
        # Fill the rest of the page with prose, as long as a whole paragraph fits.
        while writer.room() > 90:
            text = " ".join(_sentence(rng) for _ in range(rng.randint(2, 3)))
            if not writer.text(text, BODY, BODY_SIZE, PARAGRAPH_GAP):
                break
            counts["paragraphs"] += 1
    doc.set_metadata(
        {
            "title": "Ingestion benchmark",
            "creationDate": FIXED_DATE,
            "modDate": FIXED_DATE,
            "producer": "benchmarks/ingest.py",
            "creator": "benchmarks/ingest.py",
        }
    )
    path.write_bytes(doc.tobytes(garbage=4, deflate=True, no_new_id=True))
    doc.close()
    return counts


def timed(function: Callable[[], Any], repeat: int) -> tuple[float, list[float], Any]:
    """Median seconds of `repeat` calls, every timing, and the last call's result."""
    times = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=200, help="pages in the generated PDF (default 200)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the median is shown")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the figures as JSON")
    parser.add_argument("--folder", type=Path, help="measure on the PDFs of this folder instead")
    parser.add_argument("--jobs", type=int, default=default_jobs(), help="extraction workers for the index")
    parser.add_argument(
        "--only",
        choices=["extraction"],
        help="with --folder: measure bare get_text() and extract_pdf only, not the index builds",
    )
    parser.add_argument(
        "--phases", action="store_true", help="with --folder: also time each step of extract_pdf"
    )
    parser.add_argument(
        "--ready",
        action="store_true",
        help="with --folder: time `localqa index` as a user runs it (searchable, vectors complete), the "
        "encoder alone, and searches after it (benchmarks.ready) instead of the in-process build "
        "with embeddings",
    )
    parser.add_argument(
        "--set",
        choices=["financebench", "mmlongbench"],
        help="with --ready: the folder is this benchmark set's pdfs/ (its questions beside it): score page "
        "hits at both moments, with benchmarks.pdfqa's catalog",
    )
    parser.add_argument(
        "--sample", type=int, default=1000, help="with --ready: passages for the encoder-only rate"
    )
    args = parser.parse_args(argv)
    if args.pages < 1 or args.repeat < 1:
        parser.error("--pages and --repeat must be at least 1")
    if (args.only or args.phases or args.ready) and args.folder is None:
        parser.error("--only, --phases and --ready need --folder")
    if args.folder is not None:
        return measure_folder(
            args.folder,
            args.jobs,
            args.json,
            index=args.only is None,
            phases=args.phases,
            ready_set=(args.set or "") if args.ready else None,
            sample=args.sample,
        )

    with tempfile.TemporaryDirectory(prefix="localqa-ingest-") as tmp:
        folder = Path(tmp) / "pdfs"
        folder.mkdir()
        pdf = folder / "benchmark-manual.pdf"
        start = time.perf_counter()
        expected = generate_pdf(pdf, args.pages)
        generated = time.perf_counter() - start
        pdf_bytes = pdf.stat().st_size
        print(
            f"generated {pdf.name}: {args.pages} pages, {pdf_bytes / 1e6:.2f} MB in {generated:.1f} s; "
            f"{expected['paragraphs']} paragraphs, {expected['tables']} tables / {expected['rows']} rows, "
            f"{expected['headings']} headings"
        )
        print(f"pymupdf {pymupdf.VersionBind}, repeat {args.repeat} (median shown)\n")

        def each_page(call: Callable[[pymupdf.Page], Any]) -> Callable[[], int]:
            def run() -> int:
                with pymupdf.open(pdf) as document:
                    for page in document:
                        call(page)
                    return document.page_count

            return run

        rows: list[tuple[str, float, list[float]]] = []
        seconds, times, pages = timed(each_page(lambda p: p.get_text()), args.repeat)
        rows.append(("bare page.get_text()", seconds, times))
        seconds, times, _ = timed(each_page(lambda p: p.get_text("dict", sort=True)), args.repeat)
        rows.append(('  page.get_text("dict", sort=True)', seconds, times))
        seconds, times, _ = timed(each_page(lambda p: p.find_tables()), args.repeat)
        rows.append(("  page.find_tables()", seconds, times))
        seconds, times, extraction = timed(lambda: extract_pdf(pdf, pdf.name), args.repeat)
        rows.append(("extract_pdf (extraction only)", seconds, times))

        db = Path(tmp) / "index" / "library.sqlite3"
        seconds, times, report = timed(lambda: refresh_index(folder, db, rebuild=True), args.repeat)
        rows.append(("refresh_index, full build", seconds, times))
        # The index from the last full build is in place and up to date: nothing should be extracted.
        seconds, times, again = timed(lambda: refresh_index(folder, db), args.repeat)
        rows.append(("refresh_index, no change", seconds, times))
        index_size = db.stat().st_size

    kinds = {k.value: sum(1 for p in extraction.passages if p.kind is k) for k in Kind}
    found_rows = Counter(p.page for p in extraction.passages if p.kind is Kind.TABLE)
    # A table with one row too many had its bold header row taken for data (PyMuPDF chose the
    # title line above the table as an "external" header): an extraction fault, not a timing one.
    header_missed = sum(1 for page, n in expected["rows_by_page"].items() if found_rows[page] == n + 1)
    print(
        f"extract_pdf: {kinds['prose']} prose + {kinds['table']} table-row passages "
        f"(drawn: {expected['paragraphs']} paragraphs + {expected['rows']} data rows); "
        f"{len({p.section for p in extraction.passages if p.section})} distinct heading paths"
    )
    if header_missed:
        print(
            f"  note: in {header_missed} of {expected['tables']} tables the bold header row came out as "
            "data row 1 (the title line above was taken as the header); see docs/measured.md"
        )
    print(
        f"full build: {report.documents} document, {report.passages} passages, "
        f"index {index_size / 1e6:.2f} MB; no-change run: added {len(again.added)}, "
        f"changed {len(again.changed)}, unchanged {again.unchanged}\n"
    )

    reference = rows[0][1]
    figures = [
        [name, f"{seconds:.3f}", f"{pages / seconds:.1f}", f"{seconds / reference:.1f}",
         " ".join(f"{t:.3f}" for t in times)]
        for name, seconds, times in rows
    ]  # fmt: skip
    print(table(["measurement", "median s", "pages/s", "x get_text", "runs (s)"], figures))
    full, unchanged = rows[4][1], rows[5][1]
    print(
        f"\nSQLite + FTS share of a full build: {max(full - rows[3][1], 0) / full:.0%}; "
        f"no-change run is {unchanged / full:.1%} of a full build"
    )

    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "pages": pages,
                    "repeat": args.repeat,
                    "pdf_bytes": pdf_bytes,
                    "drawn": {k: v for k, v in expected.items() if k != "rows_by_page"},
                    "tables_with_header_as_data": header_missed,
                    "passages": kinds,
                    "index_bytes": index_size,
                    "measurements": [
                        {
                            "name": name.strip(),
                            "median_s": seconds,
                            "pages_per_s": pages / seconds,
                            "ratio_to_get_text": seconds / reference,
                            "runs_s": times,
                        }
                        for name, seconds, times in rows
                    ],
                },
                indent=2,
            )
            + "\n"
        )
    return 0


def measure_folder(
    source: Path,
    jobs: int,
    out: Path | None,
    index: bool = True,
    phases: bool = False,
    ready_set: str | None = None,
    sample: int = 1000,
) -> int:
    """Real PDFs: bare get_text, extraction, and (with `index`) the whole index without and with
    embeddings; with `phases`, where extraction's time goes; with `ready_set` (a set name, or ""),
    `benchmarks.ready`'s figures instead of the build with embeddings."""
    pdfs = sorted(source.glob("*.pdf"))
    if not pdfs:
        print(f"Skipped: no PDFs in {source}")
        return 0
    cases: list[Any] = []
    with tempfile.TemporaryDirectory(prefix="localqa-ingest-") as tmp:
        folder = Path(tmp) / "pdfs"
        folder.mkdir()
        for pdf in pdfs:
            (folder / pdf.name).write_bytes(pdf.read_bytes())
        if ready_set:
            loaded = LOADERS[ready_set](source.parent)
            cases = [c for c in loaded.cases if c.pages and c.category == "answerable"]
            (folder / "catalog.toml").write_text(catalog_toml([p.name for p in pdfs], None), encoding="utf-8")
        pages = 0
        rows: list[tuple[str, float]] = []
        start = time.perf_counter()
        for pdf in pdfs:
            with pymupdf.open(folder / pdf.name) as document:
                for page in document:
                    page.get_text()
                pages += document.page_count
        rows.append(("bare page.get_text(), one process", time.perf_counter() - start))
        start = time.perf_counter()
        passages = sum(len(extract_pdf(folder / pdf.name, pdf.name).passages) for pdf in pdfs)
        rows.append(("extract_pdf, one process", time.perf_counter() - start))
        steps = extraction_steps([folder / pdf.name for pdf in pdfs]) if phases else {}
        indexed = ""
        if index:
            plain = Path(tmp) / "plain.sqlite3"
            start = time.perf_counter()
            report = refresh_index(folder, plain, embed=False, jobs=jobs)
            rows.append((f"localqa index, {jobs} jobs, no embeddings", time.perf_counter() - start))
            indexed = f" ({report.passages:,} indexed)"
        ready_figures: dict[str, Any] = {}
        if index and ready_set is not None and embeddings.is_available():
            ready_figures = ready.measure(folder, Path(tmp) / "embedded.sqlite3", cases, sample)
            line = ready_figures["timeline"]
            if "ready_s" in line:
                rows.append(("localqa index (CLI): searchable", line["ready_s"]))
            rows.append(("localqa index (CLI): vectors complete", line["end_s"]))
        elif index and embeddings.is_available():
            embedding = Path(tmp) / "embedded.sqlite3"
            embeddings.embed(["warm the encoder up (built once, then cached)"])
            start = time.perf_counter()
            refresh_index(folder, embedding, embed=True, jobs=jobs)
            rows.append((f"localqa index, {jobs} jobs, with embeddings", time.perf_counter() - start))
    print(f"{len(pdfs)} PDFs, {pages:,} pages, {passages:,} passages{indexed}\n")
    reference = rows[0][1]
    figures = [[name, f"{s:.1f}", f"{pages / s:.1f}", f"{reference / s:.1%}"] for name, s in rows]
    print(table(["measurement", "s", "pages/s", "% of get_text rate"], figures))
    if steps:
        total = steps.pop("extract_pdf")
        print(f"\nwhere extract_pdf's time goes (a second pass, each step timed; {total:.1f} s in all)")
        rest = ("the rest (headings, reading order, passages)", total - sum(steps.values()))
        for name, seconds in [*steps.items(), rest]:
            share = f"{seconds / reference:5.2f}x get_text  {seconds / total:4.0%}"
            print(f"  {name:<46}  {seconds:6.1f} s  {share}")
    if out:
        figures = [{"name": n, "seconds": s, "pages_per_s": pages / s} for n, s in rows]
        out.write_text(
            json.dumps(
                {"pages": pages, "passages": passages, "rows": figures, "ready": ready_figures}, indent=2
            )
            + "\n"
        )
    return 0


def extraction_steps(pdfs: list[Path]) -> dict[str, float]:
    """Seconds spent in each step of `extract_pdf` over `pdfs`: the functions it calls are wrapped
    in timers for one pass, then restored. Each step's time excludes the timed steps it calls
    (`_ruled_tables` is what remains of it around `_vertical_rules` and PyMuPDF's `find_tables`:
    mostly `Table.extract` on the tables kept)."""
    import localqa.extract.pdf as pdf_module

    spent: dict[str, float] = {}
    targets = [
        (pdf_module, "read_page", "text page: dict + words (layout.read_page)"),
        (pdf_module, "_vertical_rules", "drawings: vertical rules (get_cdrawings)"),
        (pymupdf.Page, "find_tables", "PyMuPDF find_tables (pages with rules)"),
        (pdf_module, "_ruled_tables", "kept tables' cells (Table.extract), filters"),
        (pdf_module, "_read_table", "ruled table rows (header, bold test)"),
        (pdf_module, "find_unruled", "tables without rules (unruled.find_tables)"),
        (pdf_module, "_blocks", "prose blocks"),
    ]
    originals = [(owner, name, getattr(owner, name)) for owner, name, _ in targets]

    inner: list[float] = []  # per open timed call: the time its timed callees took

    def timer(function: Callable[..., Any], label: str) -> Callable[..., Any]:
        def timed_call(*args: Any, **kwargs: Any) -> Any:
            inner.append(0.0)
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - start
                spent[label] += elapsed - inner.pop()
                if inner:
                    inner[-1] += elapsed

        return timed_call

    for owner, name, label in targets:
        spent[label] = 0.0
        setattr(owner, name, timer(getattr(owner, name), label))
    try:
        start = time.perf_counter()
        for pdf in pdfs:
            extract_pdf(pdf, pdf.name)
        spent["extract_pdf"] = time.perf_counter() - start
    finally:
        for owner, name, function in originals:
            setattr(owner, name, function)
    return spent


if __name__ == "__main__":
    sys.exit(main())
