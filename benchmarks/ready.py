"""Ready in minutes (issue 21): `localqa index` on a real folder as a user runs it, and what a
question costs from then on. Used by `benchmarks.ingest --folder DIR --ready`; every figure is printed with
the machine's load.

- **Timeline**: `localqa index` in a new process with its defaults (embeddings on): seconds until
  it says the index is searchable (the lexical index committed), and until it ends (every vector
  committed); a `localqa search` is started the moment it is searchable, to show that it answers
  (while the embedding goes on). The index process's CPU seconds over the embedding phase, against
  the wall time and the cores, say how busy the encoder keeps the machine.
- **Encoder only**, in the same run: a sample of the index's passages embedded by
  `localqa.retrieval.embeddings.embed` (one text per call, one thread per core: what indexing runs), by one
  text per call on ONNX Runtime's own threads (the path before issue 21), and on one thread.
- **Quality at both moments** (with `--set`): page hit@1/@5 through the Python API over the set's
  questions (k=5, defaults otherwise: what `benchmarks.pdfqa` measures through `localqa eval`),
  on the finished index and on a copy without its vector file, which is the index as it is when
  it becomes searchable (every vector still to come: retrieval embeds the lexical top passages at
  question time), and lexical alone.
- **Latency**: a fresh `localqa search` (lexical and hybrid, wall clock and peak memory, the
  median of 7), and the API with the index kept open (what the web app and a Python caller with
  a library open pay): p50 per question, lexical and hybrid, on the finished index and hybrid on
  the copy (the question-time embedding's cost).

**Open fast** (issue 21), on an index that exists, without building one: `python -m
benchmarks.ready --db INDEX [--compare OTHER-CHECKOUT]`. Each command runs in a new process,
`--runs` times (median shown), the commands taking turns so that the machine's load falls on
them alike, each run's 1-minute load recorded:

- references: `python -c pass`, then what every search must import whatever localqa does (click,
  numpy, pydantic with one model, and the four together), and `import localqa.cli`;
- `localqa search` with `--retriever lexical`, `hybrid` and the default (`auto`), from this
  checkout and from each `--compare` checkout (its own code, the same interpreter and index);
- where one fresh search's time goes: importing the CLI and the library, opening the index,
  the first search, a second one;
- the Python API with a library kept open (`localqa.Library`): p50 per question over the
  benchmark set's questions (`--questions`, FinanceBench-dev's by default), lexical and hybrid;
- with `--instructions`, each fresh command's instruction count (valgrind), which the load of a
  shared machine does not change.

Every process started here runs with bytecode cached, as an installed package does (`child_env`).
Run it alone on the machine (`flock /tmp/localqa-heavy.lock python -m benchmarks.ready ...`),
without `nice`: these are latency figures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import random
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any, NamedTuple

from benchmarks.common import REPO, bench_folder, child_env, load, table


def _cpu_of(pid: int) -> tuple[float, float]:
    """(own CPU seconds, CPU seconds of its children already waited for) of a live process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick, (int(fields[13]) + int(fields[14])) / tick


def timeline(folder: Path, db: Path, question: str) -> dict[str, Any]:
    """Run `localqa index` and watch it (see the module docstring)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "localqa", "index", "--pdfs", str(folder), "--db", str(db)],
        cwd=REPO,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[tuple[float, str]] = queue.Queue()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.put((time.perf_counter() - started, line.rstrip("\n")))

    threading.Thread(target=read, daemon=True).start()
    found: dict[str, Any] = {"load_start": load()}
    searching: threading.Thread | None = None
    cpu = (0.0, 0.0)

    def search_now() -> None:
        began = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "localqa", "search", question, "--db", str(db), "--as-of", "2026-01-01"],
            cwd=REPO,
            env=child_env(),
            capture_output=True,
            text=True,
            check=False,
        )
        found["search_during_embedding"] = {
            "seconds": time.perf_counter() - began,
            "exit": result.returncode,
            "candidates": result.stdout.count("\n   ["),
            "error": result.stderr.strip(),
        }

    while True:
        done, status, usage = os.wait4(process.pid, os.WNOHANG)
        if done:
            break
        with contextlib.suppress(OSError, IndexError):
            cpu = _cpu_of(process.pid)
        while not lines.empty():
            at, line = lines.get()
            found.setdefault("stderr", []).append(line)
            if line.startswith("Searchable now:") and "ready_s" not in found:
                found["ready_s"] = at
                found["ready_line"] = line
                found["cpu_at_ready"] = cpu
                found["load_ready"] = load()
                searching = threading.Thread(target=search_now)
                searching.start()
        time.sleep(0.1)
    process.returncode = os.waitstatus_to_exitcode(status)
    found["end_s"] = time.perf_counter() - started
    found["load_end"] = load()
    found["exit"] = process.returncode
    total = usage.ru_utime + usage.ru_stime  # the process and its (extraction) children
    own, children = found.get("cpu_at_ready", (total, 0.0))
    found["embedding_cpu_s"] = total - own - children
    if "ready_s" in found:
        embedding_wall = found["end_s"] - found["ready_s"]
        found["embedding_wall_s"] = embedding_wall
        found["cores_busy"] = found["embedding_cpu_s"] / embedding_wall / (os.cpu_count() or 1)
        words = found["ready_line"].split()
        found["to_embed"] = int(words[words.index("embedding") + 1])
    time.sleep(0.2)
    while not lines.empty():
        found.setdefault("stderr", []).append(lines.get()[1])
    if searching is not None:
        searching.join()
    return found


def encoder_only(db: Path, sample: int) -> dict[str, Any]:
    """Passages/s of the encoder alone on a sample of the index's passages (see the docstring)."""
    import sqlite3

    from localqa.indexing.files import cache_dir
    from localqa.retrieval import embeddings, minilm

    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        rows = connection.execute(
            "SELECT d.context, p.section, p.text FROM passages p "
            "JOIN documents d ON d.doc_id = p.doc_id ORDER BY p.id"
        ).fetchall()
    texts = [
        embeddings.passage_text(*row) for row in random.Random(20260101).sample(rows, min(sample, len(rows)))
    ]
    embeddings.embed(texts[:8])  # the model loaded and warm
    files = minilm.model_files()
    model = minilm.ensure_model(cache_dir(), embeddings.PRECISION)
    found: dict[str, Any] = {"sample": len(texts), "load": load()}

    def timed(name: str, run: Any) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        found[name] = {"passages_per_s": len(texts) / wall, "cpu_ms_per_passage": 1000 * cpu / len(texts)}

    timed("pool (indexing's path: one text per call, one thread per core)", lambda: embeddings.embed(texts))
    for threads, name in (
        (0, "one text per call on ONNX Runtime's threads (before)"),
        (1, "one text per call, one thread"),
    ):
        encoder = minilm.Encoder(model, files, threads)
        tokens = encoder.tokenize(texts)
        encoder.encode_ids([tokens[0]])
        timed(name, lambda encoder=encoder, tokens=tokens: [encoder.encode_ids([t]) for t in tokens])
    return found


def without_vectors(db: Path, copy: Path) -> Path:
    """The index as it is the moment it becomes searchable: its lexical part, embedded with the
    model but no vector stored yet (the vector file is not copied)."""
    shutil.copyfile(db, copy)
    return copy


def page_hits(db: Path, cases: list[Any], retriever: str) -> dict[str, Any]:
    """Page hit@1/@5 of the set's questions (k=5) and the seconds per question."""
    from localqa.indexing.index import open_index
    from localqa.retrieval.retrieve import search
    from localqa.settings import RetrievalSettings
    from localqa.types import Caller

    settings = RetrievalSettings(retriever=retriever, k=5)
    hits = {1: 0, 5: 0}
    seconds = []
    with open_index(db) as store:
        for case in cases:
            started = time.perf_counter()
            store.changed()  # what a caller keeping the library open asks before each question
            results = search(store, case.question, as_of=date(2026, 1, 1), caller=Caller(), settings=settings)
            seconds.append(time.perf_counter() - started)
            ranked = [(c.rank, c.location.source, c.location.page) for r in results for c in r.candidates]
            for n in hits:
                hits[n] += any(rank <= n and (source, page) in case.pages for rank, source, page in ranked)
    return {
        "hit@1": hits[1],
        "hit@5": hits[5],
        "questions": len(cases),
        "p50_ms": 1000 * statistics.median(seconds),
        "first_ms": 1000 * seconds[0],
        "load": load(),
    }


def fresh_search(db: Path, question: str, retriever: str, repeat: int = 7) -> dict[str, Any]:
    """`localqa search` in a new process: median wall seconds and peak memory over `repeat` runs."""
    command = Command(f"search --retriever {retriever}", search_argv(db, question, retriever), REPO)
    return fresh_runs([command], repeat)[command.label]


def measure(folder: Path, db: Path, cases: list[Any], sample: int) -> dict[str, Any]:
    question = cases[0].question if cases else "What was the total revenue?"
    print(f"\nIssue 21 timeline: localqa index on {folder.name}/ ({load()}) ...", flush=True)
    found: dict[str, Any] = {"timeline": timeline(folder, db, question)}
    line = found["timeline"]
    print(
        f"  searchable after {line.get('ready_s', float('nan')):.1f} s ({line.get('load_ready')}); "
        f"vectors complete after {line['end_s']:.1f} s ({line['load_end']}); exit {line['exit']}"
    )
    if "embedding_wall_s" in line:
        rate = line["to_embed"] / line["embedding_wall_s"]
        print(
            f"  embedding phase: {line['to_embed']:,} passages in {line['embedding_wall_s']:.1f} s = "
            f"{rate:.1f} passages/s; index process CPU {line['embedding_cpu_s']:.1f} s = "
            f"{line['cores_busy']:.0%} of {os.cpu_count()} cores"
        )
    during = line.get("search_during_embedding")
    if during:
        print(
            f"  localqa search started when searchable: {during['seconds']:.2f} s, exit {during['exit']}, "
            f"{during['candidates']} candidates {during['error'][:200]}"
        )
    found["encoder_only"] = only = encoder_only(db, sample)
    print(f"  encoder only, {only['sample']} of the index's passages ({only['load']}):")
    for name, figures in only.items():
        if isinstance(figures, dict):
            print(
                f"    {name:<64} {figures['passages_per_s']:7.1f} passages/s  "
                f"{figures['cpu_ms_per_passage']:6.1f} CPU ms/passage"
            )
    if "embedding_wall_s" in line:
        pool = next(v for k, v in found["encoder_only"].items() if k.startswith("pool"))
        found["indexing_vs_encoder"] = (line["to_embed"] / line["embedding_wall_s"]) / pool["passages_per_s"]
        share = found["indexing_vs_encoder"]
        print(f"    indexing's embedding rate is {share:.0%} of the encoder-only pool rate")
    copy = without_vectors(db, db.with_name("searchable-moment.sqlite3"))
    if cases:
        found["quality"] = {
            "finished index, hybrid": page_hits(db, cases, "hybrid"),
            "finished index, lexical": page_hits(db, cases, "lexical"),
            "when searchable (no vector stored yet), hybrid": page_hits(copy, cases, "hybrid"),
        }
        print(f"  page hits over {len(cases)} questions (k=5; API, index kept open):")
        for name, q in found["quality"].items():
            print(
                f"    {name:<50} hit@1 {q['hit@1']}/{q['questions']}  hit@5 {q['hit@5']}/{q['questions']}  "
                f"p50 {q['p50_ms']:.1f} ms (first {q['first_ms']:.0f} ms; {q['load']})"
            )
    found["fresh_search"] = {
        retriever: fresh_search(db, question, retriever) for retriever in ("lexical", "hybrid")
    }
    for retriever, figures in found["fresh_search"].items():
        print(
            f"  fresh `localqa search --retriever {retriever}`: {figures['wall_s']:.2f} s wall "
            f"(median of 7), peak RSS {figures['peak_rss_mb']:.0f} MB ({figures['load']})"
        )
    return found


# ---------------------------------------------------------------------------------------------
# Open fast: a fresh process's first question, against references in the same run

AS_OF = "2026-01-01"
# What every fresh search imports whatever localqa's own code does: the CLI (click), BM25's
# arrays (numpy), the records (pydantic: its first model loads its plugin machinery too).
PYDANTIC_MODEL = "from pydantic import BaseModel\nclass M(BaseModel):\n    x: int\nM(x=1)"
REFERENCES = {
    "python -c pass": "pass",
    "import click": "import click",
    "import numpy": "import numpy",
    "pydantic: one model": PYDANTIC_MODEL,
    "click, numpy, sqlite3, pydantic": f"import click, numpy, sqlite3\n{PYDANTIC_MODEL}",
    "import localqa.cli": "import localqa.cli",
}
RETRIEVERS = ("lexical", "hybrid", "auto")


class Command(NamedTuple):
    """One command run in fresh processes, with `checkout` first on its path."""

    label: str
    argv: list[str]
    checkout: Path


def search_argv(db: Path, question: str, retriever: str) -> list[str]:
    return [sys.executable, "-m", "localqa", "search", question, "--db", str(db), "--as-of", AS_OF,
            "--retriever", retriever]  # fmt: skip


def _run_once(command: Command) -> dict[str, float]:
    """Wall seconds (from here), CPU seconds and peak RSS (GNU time's: the process's own; a
    child's maximum RSS seen from here would count the pages it shared with this process before
    it started Python)."""
    timer = ["/usr/bin/time", "-f", "%U %S %M"] if Path("/usr/bin/time").exists() else []
    started = time.perf_counter()
    result = subprocess.run(
        [*timer, *command.argv],
        cwd=command.checkout,
        env=child_env(command.checkout),
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    if result.returncode:
        raise RuntimeError(f"{command.label} failed: {result.stderr.strip()[-500:]}")
    if not timer:
        return {"wall": wall, "cpu": float("nan"), "rss_mb": float("nan")}
    user, system, peak = result.stderr.strip().splitlines()[-1].split()
    return {"wall": wall, "cpu": float(user) + float(system), "rss_mb": int(peak) / 1024}


def fresh_runs(commands: Sequence[Command], runs: int) -> dict[str, dict[str, Any]]:
    """Each command `runs` times, taking turns, after one run each that is not counted (it fills
    the bytecode cache and the OS page cache): medians, every run's figures and 1-minute load."""
    for command in commands:
        _run_once(command)
    found: dict[str, list[dict[str, float]]] = {c.label: [] for c in commands}
    for _ in range(runs):
        for command in commands:
            figures = _run_once(command)
            figures["load"] = os.getloadavg()[0]
            found[command.label].append(figures)
    return {
        label: {
            "wall_s": statistics.median(r["wall"] for r in rows),
            "cpu_s": statistics.median(r["cpu"] for r in rows),
            "peak_rss_mb": max(r["rss_mb"] for r in rows),
            "load": f"load {min(r['load'] for r in rows):.1f}-{max(r['load'] for r in rows):.1f}",
            "runs": rows,
        }
        for label, rows in found.items()
    }


def instructions(command: Command) -> float:
    """Millions of instructions the command executes, every thread's (valgrind's callgrind, the
    caches already filled): a figure the machine's load does not change. Valgrind emulates the
    CPU, so code that would use an extension it lacks (SHA-NI for sha256) counts its fallback."""
    result = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command.argv],
        cwd=command.checkout,
        env=child_env(command.checkout),
        capture_output=True,
        text=True,
    )
    found = re.search(r"Collected : (\d+)", result.stderr)
    return int(found[1]) / 1e6 if found and not result.returncode else float("nan")


# The child side of `stages`: where one fresh search's time goes after the interpreter started
# (`python -c pass` above), printed as JSON. A script of its own, so that it imports nothing
# before localqa; argv: index, retriever, question, as-of date.
STAGES = """
import json, sys, time
marks = [("", time.perf_counter())]
import localqa.cli
marks.append(("import localqa.cli", time.perf_counter()))
from datetime import date
from localqa.library import Library
from localqa.settings import RetrievalSettings
marks.append(("import localqa.library", time.perf_counter()))
db, retriever, question, as_of = sys.argv[1:]
settings = RetrievalSettings.model_validate({"retriever": retriever})
with Library(db) as library:
    library.check()
    marks.append(("open the index", time.perf_counter()))
    for name in ("first search", "second search"):
        library.search(question, as_of=date.fromisoformat(as_of), settings=settings)
        marks.append((name, time.perf_counter()))
print(json.dumps({name: end - start for (_, start), (name, end) in zip(marks, marks[1:])}))
"""


def stages(
    checkouts: list[Path], db: Path, question: str, retriever: str, runs: int
) -> list[dict[str, float]]:
    """Median seconds of each stage of a fresh search (`STAGES`) per checkout over `runs`
    processes, the checkouts taking turns."""
    argv = [sys.executable, "-c", STAGES, str(db), retriever, question, AS_OF]
    found: list[list[dict[str, float]]] = [[] for _ in checkouts]
    for run in range(runs + 1):  # the first fills the caches
        for checkout, times in zip(checkouts, found, strict=True):
            result = subprocess.run(
                argv, cwd=checkout, env=child_env(checkout), capture_output=True, text=True
            )
            if result.returncode:
                raise RuntimeError(f"stages failed: {result.stderr.strip()[-500:]}")
            if run:
                times.append(json.loads(result.stdout.strip().splitlines()[-1]))
    return [{name: statistics.median(t[name] for t in times) for name in times[0]} for times in found]


# The child side of `open_library`: the seconds of each question (a JSON list on stdin) asked of
# one `Library` kept open, printed as JSON. A script of its own, so that it runs the localqa of
# the checkout it is started in (argv: index, retriever, as-of date).
API = """
import json, sys, time
from datetime import date
from localqa.library import Library
from localqa.settings import RetrievalSettings
db, retriever, as_of = sys.argv[1:]
questions = json.loads(sys.stdin.read())
settings = RetrievalSettings.model_validate({"retriever": retriever, "k": 5})
seconds = []
with Library(db) as library:
    for question in questions:
        started = time.perf_counter()
        library.search(question, as_of=date.fromisoformat(as_of), settings=settings)
        seconds.append(time.perf_counter() - started)
print(json.dumps(seconds))
"""


def open_library(
    checkouts: list[Path], db: Path, questions: list[str], retriever: str, rounds: int = 3
) -> list[dict[str, Any]]:
    """Per checkout, the p50 per question of the API with a library kept open, over `rounds`
    processes (the checkouts taking turns), each asking every question once; the first question
    of a process (which opens the index and, hybrid, loads the encoder) apart."""
    later: list[list[float]] = [[] for _ in checkouts]
    first: list[list[float]] = [[] for _ in checkouts]
    for _ in range(rounds):
        for number, checkout in enumerate(checkouts):
            result = subprocess.run(
                [sys.executable, "-c", API, str(db), retriever, AS_OF],
                cwd=checkout,
                env=child_env(checkout),
                input=json.dumps(questions),
                capture_output=True,
                text=True,
            )
            if result.returncode:
                raise RuntimeError(f"the API run failed: {result.stderr.strip()[-500:]}")
            seconds = json.loads(result.stdout.strip().splitlines()[-1])
            first[number].append(seconds[0])
            later[number].extend(seconds[1:] or seconds)
    return [
        {"first_s": statistics.median(f), "p50_s": statistics.median(t), "questions": len(t), "load": load()}
        for f, t in zip(first, later, strict=True)
    ]


def default_questions() -> Path | None:
    """FinanceBench-dev's questions, when the benchmark data is there."""
    path = bench_folder() / "financebench-dev" / "questions.jsonl"
    return path if path.exists() else None


def open_fast(
    db: Path, question: str, checkouts: list[Path], runs: int, questions: list[str], counted: bool
) -> int:
    """Print the Open fast figures (see the module docstring)."""
    names = [_name(c) for c in checkouts]
    print(f"Open fast: {db} ({load()}); {runs} runs each, median shown\n")
    commands = [Command(label, [sys.executable, "-c", code], REPO) for label, code in REFERENCES.items()]
    commands += [
        Command(f"{name}: search --retriever {r}", search_argv(db, question, r), checkout)
        for r in RETRIEVERS
        for name, checkout in zip(names, checkouts, strict=True)
    ]
    fresh = fresh_runs(commands, runs)
    counts = {c.label: f"{instructions(c):,.0f}" for c in commands} if counted else {}
    reference = fresh["python -c pass"]["wall_s"]
    rows = [
        [label, f"{f['wall_s']:.3f}", f"{f['wall_s'] / reference:.1f}", f"{f['cpu_s']:.3f}",
         f"{f['peak_rss_mb']:.0f}", f["load"], *([counts[label]] if counted else [])]
        for label, f in fresh.items()
    ]  # fmt: skip
    headers = ["command", "wall s", "x pass", "cpu s", "peak RSS MB", "load (1 min)"]
    print(f"A fresh process, as a user starts it (question: {question!r})")
    print(table([*headers, *(["M instructions"] if counted else [])], rows))

    for retriever in ("lexical", "hybrid"):
        found = stages(checkouts, db, question, retriever, runs)
        print(f"\nWhere a fresh {retriever} search's time goes (seconds, median of {runs}; {load()})")
        rows = [[label, *(f"{f[label]:.3f}" for f in found)] for label in found[0]]
        print(table(["stage", *names], rows))

    if questions:
        print(f"\nThe API with a library kept open: {len(questions)} questions, 3 processes each")
        rows = []
        for retriever in ("lexical", "hybrid"):
            found = open_library(checkouts, db, questions, retriever)
            for name, f in zip(names, found, strict=True):
                p50, first = f"{f['p50_s'] * 1000:.1f} ms", f"{f['first_s']:.3f} s"
                rows.append([f"{name}: {retriever}", p50, first, f["load"]])
        print(table(["checkout: retriever", "p50 (after the first)", "first question", "load"], rows))
    return 0


def _name(checkout: Path) -> str:
    """A checkout's short name: its branch, else its folder."""
    branch = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "--abbrev-ref", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    return branch or checkout.name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Open fast (issue 21): a fresh process's first question")
    parser.add_argument("--db", type=Path, required=True, help="an index (opened for reading only)")
    parser.add_argument("--question", default="What is the FY2018 capital expenditure amount for 3M?")
    parser.add_argument("--runs", type=int, default=7, help="fresh processes per command (median shown)")
    parser.add_argument(
        "--compare", type=Path, action="append", default=[], metavar="CHECKOUT",
        help="also run another checkout's localqa (repeatable), e.g. /work/main",
    )  # fmt: skip
    parser.add_argument(
        "--questions", type=Path, help="JSONL with a 'question' per line for the API p50 (default: "
        "FinanceBench-dev's, when found); 'none' to skip it",
    )  # fmt: skip
    parser.add_argument(
        "--instructions", action="store_true",
        help="also count each fresh command's instructions once under valgrind (load-independent)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    from localqa.store import password_to_environment

    args.db = password_to_environment(args.db)  # its children see the URL: the password goes in PGPASSWORD
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    source = None if str(args.questions) == "none" else (args.questions or default_questions())
    questions = []
    if source is not None:
        lines = source.read_text(encoding="utf-8").splitlines()
        questions = [json.loads(line)["question"] for line in lines if line.strip()]
    return open_fast(args.db, args.question, [REPO, *args.compare], args.runs, questions, args.instructions)


if __name__ == "__main__":
    sys.exit(main())
