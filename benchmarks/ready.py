"""Ready in minutes (issue 21): `localqa index` on a real folder as a user runs it, and what a
question costs from then on. Used by `ingest.py --folder DIR --ready`; every figure is printed with
the machine's load.

- **Timeline**: `localqa index` in a new process with its defaults (embeddings on): seconds until
  it says the index is searchable (the lexical index committed), and until it ends (every vector
  committed); a `localqa search` is started the moment it is searchable, to show that it answers
  (while the embedding goes on). The index process's CPU seconds over the embedding phase, against
  the wall time and the cores, say how busy the encoder keeps the machine.
- **Encoder only**, in the same run: a sample of the index's passages embedded by
  `localqa.embeddings.embed` (one text per call, one thread per core: what indexing runs), by one
  text per call on ONNX Runtime's own threads (the path before issue 21), and on one thread.
- **Quality at both moments** (with `--set`): page hit@1/@5 through the Python API over the set's
  questions (k=5, defaults otherwise: what `benchmarks/pdfqa.py` measures through `localqa eval`),
  on the finished index and on a copy without its vector file, which is the index as it is when
  it becomes searchable (every vector still to come: retrieval embeds the lexical top passages at
  question time), and lexical alone.
- **Latency**: a fresh `localqa search` (lexical and hybrid, wall clock and peak memory, the
  median of 5), and the API with the index kept open (what the web app and a Python caller with
  a library open pay): p50 per question, lexical and hybrid, on the finished index and hybrid on
  the copy (the question-time embedding's cost).
"""

from __future__ import annotations

import contextlib
import os
import queue
import random
import shutil
import statistics
import subprocess
import sys
import threading
import time
from datetime import date
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.1f} {five:.1f} {fifteen:.1f}"


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))


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
        env=_env(),
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
            env=_env(),
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

    from localqa import embeddings, minilm
    from localqa.files import cache_dir

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
    from localqa.index import open_index
    from localqa.retrieve import search
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


def fresh_search(db: Path, question: str, retriever: str, repeat: int = 5) -> dict[str, Any]:
    """`localqa search` in a new process: median wall seconds and peak memory over `repeat` runs.
    The peak is the searching process's own, measured by GNU time (a child's maximum RSS seen
    from here would count the pages it shared with this process before it started Python)."""
    walls, peaks = [], []
    timer = ["/usr/bin/time", "-f", "%M"] if Path("/usr/bin/time").exists() else []
    for _ in range(repeat):
        started = time.perf_counter()
        result = subprocess.run(
            [*timer, sys.executable, "-m", "localqa", "search", question, "--db", str(db),
             "--as-of", "2026-01-01", "--retriever", retriever],
            cwd=REPO,
            env=_env(),
            capture_output=True,
            text=True,
            check=False,
        )  # fmt: skip
        walls.append(time.perf_counter() - started)
        if timer and result.stderr.strip():
            peaks.append(int(result.stderr.strip().splitlines()[-1]) / 1024)
    peak = max(peaks) if peaks else float("nan")
    return {"wall_s": statistics.median(walls), "peak_rss_mb": peak, "runs": walls, "load": load()}


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
            f"(median of 5), peak RSS {figures['peak_rss_mb']:.0f} MB ({figures['load']})"
        )
    return found
