"""Asking while the index embeds (issue 21): how long a `localqa search` takes while `localqa
index` computes the vectors in another process, with the embedding threads at each
`--niceness` (`localqa.retrieval.embeddings.BACKGROUND_NICENESS`; 0 is the path before it).

    python -m benchmarks.ask_while_embedding [--files 6] [--niceness 0,10] [--rounds 2]

Each round indexes the first `--files` FinanceBench-dev filings into a new index, once per
niceness (the niceness values take turns, so a burst of other load falls on them alike). When the
index says it is searchable, it waits `--settle` seconds for the embedding to be under way, then
runs the questions one after another as fresh `localqa search` processes with the default
retriever (the vectors still missing, a question embeds its lexical top passages itself), and
stops the index. Printed: each search's wall seconds, the median per niceness, and the load.
Run it alone on the machine: these are latency figures.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.common import REPO, bench_folder, child_env, load

FOLDER = bench_folder() / "financebench-dev" / "pdfs"
QUESTIONS = [
    "What is the FY2018 capital expenditure amount (in USD millions) for 3M?",
    "What drove operating margin change as of FY2022 for 3M?",
    "Does AMD have a reasonably healthy liquidity profile based on its quick ratio for FY22?",
    "What are the major products and services that American Express sells?",
]


def searches_while_embedding(pdfs: list[Path], niceness: int, settle: float) -> list[float]:
    """Index `pdfs` with the embedding threads at `niceness`; the wall seconds of each question's
    `localqa search` once it is searchable."""
    env = child_env()
    setting = (
        f"import localqa.retrieval.embeddings as e; e.BACKGROUND_NICENESS = {niceness}; "
        "from localqa.cli import main; main()"
    )
    with tempfile.TemporaryDirectory(prefix="localqa-ask-while-") as tmp:
        folder = Path(tmp) / "pdfs"
        folder.mkdir()
        for pdf in pdfs:
            shutil.copy(pdf, folder)
        db = Path(tmp) / "index.sqlite3"
        index = subprocess.Popen(
            [sys.executable, "-c", setting, "index", "--pdfs", str(folder), "--db", str(db)],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        searchable = threading.Event()

        def read() -> None:  # to the end: a full pipe would stop the index, and its embedding
            assert index.stderr is not None
            for line in index.stderr:
                if line.startswith("Searchable now:"):
                    searchable.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            while not searchable.wait(0.1):
                if index.poll() is not None:
                    raise SystemExit(f"`localqa index` ended unsearchable (exit {index.returncode})")
            time.sleep(settle)
            walls = []
            for question in QUESTIONS:
                began = time.perf_counter()
                subprocess.run(
                    [sys.executable, "-m", "localqa", "search", question, "--db", str(db)],
                    cwd=REPO, env=env, capture_output=True, check=True,
                )  # fmt: skip
                walls.append(time.perf_counter() - began)
            if index.poll() is not None:
                raise SystemExit("the vectors were done before the last search: use more --files")
            return walls
        finally:
            index.kill()
            index.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=6, help="FinanceBench-dev filings indexed (default 6)")
    parser.add_argument("--niceness", default="0,10", help="embedding threads' niceness values, in turn")
    parser.add_argument("--rounds", type=int, default=2, help="runs per niceness (default 2)")
    parser.add_argument(
        "--settle", type=float, default=3.0, help="seconds from searchable to the first search (default 3)"
    )
    args = parser.parse_args(argv)
    pdfs = sorted(FOLDER.glob("*.pdf"))[: args.files]
    if not pdfs:
        print(f"FinanceBench-dev not found at {FOLDER}; skipping.")
        return 0
    values = [int(v) for v in args.niceness.split(",")]
    print(f"{len(pdfs)} filings; {len(QUESTIONS)} searches per run while the vectors are computed ({load()})")
    found: dict[int, list[float]] = {v: [] for v in values}
    for round_ in range(1, args.rounds + 1):
        for niceness in values:
            walls = searches_while_embedding(pdfs, niceness, args.settle)
            found[niceness] += walls
            shown = " ".join(f"{w:.2f}" for w in walls)
            print(f"  round {round_}, niceness {niceness:>2}: {shown} s ({load()})")
    reference = statistics.median(found[values[0]])
    for niceness, walls in found.items():
        median = statistics.median(walls)
        print(
            f"niceness {niceness:>2}: median {median:.2f} s over {len(walls)} searches, "
            f"{reference / median:.2f}x faster than niceness {values[0]}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
