"""Whether timing tells a hidden page image from a missing one (issue 19, item 5).

    python -m benchmarks.hidden_page [--requests 3000]

Indexes the sample library (pdfs/) into a temporary folder and asks the real app, in process
(FastAPI's TestClient: no network noise), as the public caller, for page 1 of
`staff-procedures.pdf` (staff only: hidden), of `staff-procedures.pdx` (a name of the same length
that is not in the index: missing) and of `library-handbook.pdf` page 99 (a visible document
without that page: a 404 that does read the index, the reference), with the staff document's own
sentence as `quote`; then the same three lookups through `Library.page` alone, the one step whose
work could differ (microseconds, where an attacker averaging many requests would look). The
kinds take turns request by request, so a shared machine's drifting load falls on all alike.
Printed per level and kind: the minimum, 10th percentile and median in microseconds, and the
ratio of the medians hidden / missing. Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

from benchmarks.common import REPO

QUOTE = "The alarm code is changed every 90 days."
KINDS = {
    "hidden": ("staff-procedures.pdf", 1),
    "missing": ("staff-procedures.pdx", 1),
    "no such page": ("library-handbook.pdf", 99),
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=3000, help="Requests per kind.")
    args = parser.parse_args()
    from fastapi.testclient import TestClient

    from localqa.indexing.index import refresh_index
    from localqa.library import Library, PageNotFoundError
    from localqa.serve.app import ServeConfig, create_app

    folder = Path(tempfile.mkdtemp(prefix="localqa-hidden-"))
    try:
        pdfs = folder / "pdfs"
        shutil.copytree(REPO / "pdfs", pdfs)
        db = folder / "library.sqlite3"
        refresh_index(pdfs, db, embed=False)
        load_before = os.getloadavg()[0]
        with TestClient(create_app(ServeConfig(db=db, pdfs=pdfs, model="extractive"))) as client:
            params = {"quote": QUOTE, "as_of": "2026-11-14"}

            def request(source: str, page: int) -> None:
                assert client.get(f"/api/pages/{source}/{page}.png", params=params).status_code == 404

            http = measure(request, args.requests)
        with Library(db) as library:

            def lookup(source: str, page: int) -> None:
                try:
                    library.page(source, page, as_of=date(2026, 11, 14))
                except PageNotFoundError:
                    return
                raise AssertionError(f"{source} page {page} was found")

            direct = measure(lookup, args.requests * 10)
        load_after = os.getloadavg()[0]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    for level, times in (("GET /api/pages/...", http), ("Library.page", direct)):
        print(f"{level:<20} {'min µs':>8} {'p10 µs':>8} {'median µs':>10}")
        for kind, seconds in times.items():
            micro = sorted(1e6 * x for x in seconds)
            least, p10, median = micro[0], micro[len(micro) // 10], statistics.median(micro)
            print(f"  {kind:<18} {least:>8.1f} {p10:>8.1f} {median:>10.1f}")
        ratio = statistics.median(times["hidden"]) / statistics.median(times["missing"])
        print(f"  hidden / missing median: {ratio:.3f} ({len(times['hidden'])} each)\n")
    print(f"load average {load_before:.1f} -> {load_after:.1f} on {os.cpu_count()} cores")


def measure(call: Callable[[str, int], None], turns: int) -> dict[str, list[float]]:
    """Seconds per call for each kind, the kinds taking turns in rotating order."""
    for source, page in KINDS.values():  # warm: the index opened, the eligible set cached
        call(source, page)
    times: dict[str, list[float]] = {kind: [] for kind in KINDS}
    order = list(KINDS.items())
    for turn in range(turns):
        for kind, (source, page) in order[turn % 3 :] + order[: turn % 3]:
            started = time.perf_counter()
            call(source, page)
            times[kind].append(time.perf_counter() - started)
    return times


if __name__ == "__main__":
    main()
