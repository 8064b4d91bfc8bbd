"""HNSW on the PostgreSQL store's vectors against exact search, with and without filters.

Issue 22 asked for "exact search, plus an HNSW index where it keeps page hit@5 within 0.01".

    python benchmarks/pg_hnsw.py --db postgresql://… [--ef-search 40,100,200,1000] [--cache DIR]

On FinanceBench-dev's indexes as `pdfqa.py --db URL` builds them in that database (built first
when absent, which takes as long as pdfqa's build). An HNSW index (pgvector `hnsw`, inner product,
default m=16, ef_construction=64) is created on `vector::vector(384)` (the store's column has no
fixed width, so the index is on the expression) for the run and dropped afterwards, so nothing
of it stays in the database. Two measurements per `hnsw.ef_search`:

- **Vectors**: each question's embedding, its best `semantic_depth` (100, what hybrid retrieval
  reads) neighbours by an HNSW scan against exact search, among all vectors and among those of a
  random subset of the documents (1/2, 1/4, 1/8 of them; seeded) and of one document, the
  question's own (what a tenant of one document searches): recall@100 against exact, and how many
  questions got fewer than 100 rows. The planner's own choice is taken (no setting forces the
  index); the plan it chose is counted.
- **End to end**: the 41 questions as pdfqa asks them (shared; scoped, `documents = [its file]`;
  as the tenant of its document, each document a tenant of its own) and as the tenant of eight
  documents (four tenants, documents dealt out in name order: an index built like pdfqa's
  per-document one), evaluated in this process as `localqa eval` does, by exact search and then
  with the store's `similarities` answered by the HNSW scan: page hit@1 and hit@5, and each HNSW
  call's recall@100 against the exact answer.

pgvector before 0.8 filters an index scan's `ef_search` nearest rows afterwards (0.8 added
iterative scans), so a filter that keeps a fraction f of the vectors returns about
f x ef_search rows. `SELECT extversion FROM pg_extension WHERE extname = 'vector'` is printed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import re
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402
import pdfqa  # noqa: E402
import psycopg  # noqa: E402

from localqa import embeddings  # noqa: E402
from localqa.evaluate.run import run_suite  # noqa: E402
from localqa.evaluate.suite import load_suite  # noqa: E402
from localqa.settings import RetrievalSettings  # noqa: E402
from localqa.store import describe, password_to_environment  # noqa: E402
from localqa.store.postgres import PostgresStore, _vector_text  # noqa: E402

WIDTH = 384
DEPTH = RetrievalSettings().semantic_depth
FRACTIONS = (1.0, 1 / 2, 1 / 4, 1 / 8)  # of the documents; then one document, the question's own
INDEX = "pg_hnsw_benchmark"
GROUPS = 4  # tenants in the grouped index
HNSW_ORDER = f"vector::vector({WIDTH}) <#> %(q)s::vector({WIDTH})"


@contextlib.contextmanager
def hnsw_index(url: str) -> Iterator[float]:
    """An HNSW index on the schema's vectors while the block runs (its build seconds), dropped
    afterwards."""
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f"DROP INDEX IF EXISTS {INDEX}")
        started = time.perf_counter()
        db.execute(f"CREATE INDEX {INDEX} ON embeddings USING hnsw ((vector::vector({WIDTH})) vector_ip_ops)")
        seconds = time.perf_counter() - started
        db.execute("ANALYZE embeddings")
        try:
            yield seconds
        finally:
            db.execute(f"DROP INDEX IF EXISTS {INDEX}")


def exact_ids(db: psycopg.Connection[Any], vector: str, docs: list[str] | None) -> list[int]:
    # The store's own query: the tie-break on passage_id keeps any index out of it.
    where = "" if docs is None else " AND doc_id = ANY(%(docs)s)"
    rows = db.execute(
        f"SELECT passage_id FROM embeddings WHERE true{where} "
        "ORDER BY vector <#> %(q)s::vector, passage_id LIMIT %(n)s",
        {"q": vector, "docs": docs, "n": DEPTH},
    ).fetchall()
    return [pid for (pid,) in rows]


def hnsw_sql(where: str) -> str:
    return (
        f"SELECT passage_id, -({HNSW_ORDER}) FROM embeddings WHERE true{where} "
        f"ORDER BY {HNSW_ORDER} LIMIT %(n)s"
    )


@dataclass
class Tally:
    """Per filter: recall@DEPTH against exact, questions with fewer than DEPTH rows, plans."""

    recalls: list[float] = field(default_factory=list)
    short: int = 0
    index_plans: int = 0
    exact_ms: list[float] = field(default_factory=list)
    hnsw_ms: list[float] = field(default_factory=list)

    def add(
        self, exact: list[int], found: list[int], used_index: bool, exact_s: float, hnsw_s: float
    ) -> None:
        self.recalls.append(len(set(exact) & set(found)) / len(exact) if exact else 1.0)
        self.short += len(found) < min(DEPTH, len(exact))
        self.index_plans += used_index
        self.exact_ms.append(exact_s * 1000)
        self.hnsw_ms.append(hnsw_s * 1000)


def vector_level(
    url: str, cases: list[pdfqa.Case], doc_of: dict[str, str], ef_search: int, seed: int = 22
) -> dict[str, Tally]:
    vectors = [_vector_text(v) for v in embeddings.embed([c.question for c in cases])]
    documents = sorted(set(doc_of.values()))
    tallies: dict[str, Tally] = {}
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("SELECT set_config('hnsw.ef_search', %s, false)", (str(ef_search),))
        for fraction in (*FRACTIONS, None):
            if fraction is None:
                label = "one document (its own)"
            else:
                label = f"{max(1, round(len(documents) * fraction))} of {len(documents)} documents"
            tally = tallies.setdefault(label, Tally())
            chooser = random.Random(seed)
            for case, vector in zip(cases, vectors, strict=True):
                if fraction is None:
                    docs: list[str] | None = [doc_of[case.source]]
                elif fraction == 1.0:
                    docs = None
                else:
                    docs = chooser.sample(documents, max(1, round(len(documents) * fraction)))
                where = "" if docs is None else " AND doc_id = ANY(%(docs)s)"
                params = {"q": vector, "docs": docs, "n": DEPTH}
                started = time.perf_counter()
                exact = exact_ids(db, vector, docs)
                exact_s = time.perf_counter() - started
                started = time.perf_counter()
                found = [pid for pid, _ in db.execute(hnsw_sql(where), params).fetchall()]
                hnsw_s = time.perf_counter() - started
                plan = "\n".join(
                    row[0] for row in db.execute("EXPLAIN " + hnsw_sql(where), params).fetchall()
                )
                tally.add(exact, found, INDEX in plan, exact_s, hnsw_s)
    return tallies


def hnsw_similarities(ef_search: int, calls: Tally) -> Any:
    """`PostgresStore.similarities` answered by the HNSW scan when a limit is given (hybrid's
    `semantic_depth`; without one every eligible vector is wanted), each call tallied against
    the exact answer."""
    exact = PostgresStore.similarities

    def similarities(
        self: PostgresStore, scope: Any, model: str, vector: Any, limit: int | None = None
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        started = time.perf_counter()
        ids, scores = exact(self, scope, model, vector, limit)
        exact_s = time.perf_counter() - started
        if limit is None:
            return ids, scores
        inside, doc_ids = self._filter(scope)
        self._query("SELECT set_config('hnsw.ef_search', %s, false)", str(ef_search))
        where = f" AND model = %(model)s AND {'' if inside else 'NOT '}doc_id = ANY(%(docs)s)"
        started = time.perf_counter()
        rows = self._db.execute(
            hnsw_sql(where), {"q": _vector_text(vector), "model": model, "docs": doc_ids, "n": limit}
        ).fetchall()
        hnsw_s = time.perf_counter() - started
        rows.sort(key=lambda row: (-row[1], row[0]))  # as the exact query orders them
        found = self._numbers([pid for pid, _ in rows])
        calls.add(ids.tolist(), found.tolist(), True, exact_s, hnsw_s)
        return found, np.array([score for _, score in rows], dtype=np.float32)

    return similarities


def end_to_end(
    suites: dict[str, tuple[Path, str]], cases: list[pdfqa.Case], ef_search: int | None
) -> dict[str, Any]:
    """Page hits of each suite against its index: exact (`ef_search` None) or through HNSW."""
    results: dict[str, Any] = {}
    exact = PostgresStore.similarities
    for mode, (suite, url) in suites.items():
        calls = Tally()
        if ef_search is not None:
            PostgresStore.similarities = hnsw_similarities(ef_search, calls)  # type: ignore[method-assign]
        try:
            run = run_suite(load_suite(suite), db=url, settings=RetrievalSettings(k=5))
        finally:
            PostgresStore.similarities = exact  # type: ignore[method-assign]
        scores = pdfqa.page_scores(cases, run.model_dump(mode="json"))
        results[mode] = {"scores": scores, "calls": calls, "retriever": run.config.retrieval.retriever}
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, metavar="URL", help="the PostgreSQL database pdfqa --db uses")
    parser.add_argument(
        "--ef-search", default="40,100,200,1000", help="hnsw.ef_search values, comma-separated"
    )
    parser.add_argument("--cache", type=Path, default=pdfqa.DEFAULT_CACHE, help="pdfqa's cache")
    parser.add_argument("--bench", type=Path, help="the benchmark folder (default: ../shared/bench)")
    args = parser.parse_args(argv)
    args.db = password_to_environment(args.db)  # its children see the URL: the password goes in PGPASSWORD
    bench_dir = args.bench or next((p for p in pdfqa.BENCH_PLACES if p.is_dir()), pdfqa.BENCH_PLACES[0])
    if not (bench_dir / "financebench-dev").is_dir():
        print(f"Skipped: financebench-dev not found under {bench_dir} (pass --bench DIR).")
        return 0
    efs = [int(v) for v in args.ef_search.split(",") if v.strip()]
    bench = pdfqa.load_financebench(bench_dir / "financebench-dev")
    flags = pdfqa.index_flags(None)
    shared, _, _ = pdfqa.shared_index(bench, args.cache, flags, True, args.db)
    names = sorted(d.name for d in bench.documents)
    by_document = pdfqa.tenant_names(names)
    # Four tenants of eight documents each, dealt out in name order: a tenant's documents have
    # nothing to do with what its users ask.
    by_four = {name: f"group{number % GROUPS}" for number, name in enumerate(names)}
    perdoc = pdfqa.tenant_index(bench, args.cache, flags, shared, by_document, server=args.db)
    grouped = pdfqa.tenant_index(bench, args.cache, flags, shared, by_four, f"tenants{GROUPS}", args.db)
    urls = {"shared": str(shared.path), "per document": str(perdoc.path), "grouped": str(grouped.path)}
    with psycopg.connect(urls["shared"]) as db:
        (version,) = db.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone() or ("?",)
        passages, documents = db.execute(
            "SELECT count(*), count(DISTINCT doc_id) FROM embeddings"
        ).fetchone() or (0, 0)
        doc_of = dict(db.execute("SELECT source, doc_id FROM documents").fetchall())
    print(
        f"{time.strftime('%Y-%m-%d %H:%M')}, load {' '.join(f'{x:.1f}' for x in os.getloadavg())}; "
        f"PostgreSQL {describe(args.db)}, pgvector {version}; FinanceBench-dev: "
        f"{len(bench.cases)} questions, {documents} documents, {passages:,} vectors; depth {DEPTH}"
    )
    folder = Path(args.cache) / "financebench" / "pg-hnsw-suites"
    suites: dict[str, tuple[Path, str]] = {}
    for mode, text, url in (
        ("shared (routing may narrow)", pdfqa.cases_toml(bench.cases, None), urls["shared"]),
        ("scoped to its document", pdfqa.cases_toml(bench.cases, None, scoped=True), urls["shared"]),
        ("tenant of its document", pdfqa.cases_toml(bench.cases, by_document), urls["per document"]),
        (
            f"tenant of {len(names) // GROUPS} documents",
            pdfqa.cases_toml(bench.cases, by_four),
            urls["grouped"],
        ),
    ):
        suite = folder / re.sub(r"\W+", "-", mode).strip("-")
        pdfqa.write_if_changed(suite / "cases.toml", text.encode("utf-8"))
        suites[mode] = (suite, url)

    exact = end_to_end(suites, bench.cases, None)
    rows = [["exact", mode, *_hits(exact[mode]), "", ""] for mode in suites]
    vector_rows: list[list[str]] = []
    with contextlib.ExitStack() as stack:
        built = [stack.enter_context(hnsw_index(url)) for url in urls.values()]
        print(f"HNSW index built in {built[0]:.1f} s (shared index; load {os.getloadavg()[0]:.1f})")
        for ef in efs:
            through = end_to_end(suites, bench.cases, ef)
            for mode in suites:
                calls = through[mode]["calls"]
                recall = f"{statistics.fmean(calls.recalls):.3f}" if calls.recalls else ""
                short = f"{calls.short}/{len(calls.recalls)}"
                rows.append([f"HNSW, ef_search {ef}", mode, *_hits(through[mode]), recall, short])
            for label, tally in vector_level(urls["shared"], bench.cases, doc_of, ef).items():
                vector_rows.append([str(ef), label, *_vector_cells(tally)])
    print(f"\nVectors: each question's {DEPTH} nearest by HNSW against exact (shared index)")
    print(
        table(
            ["ef_search", "filter", "recall@100", "< 100 rows", "plan: HNSW", "exact ms", "HNSW ms"],
            vector_rows,
        )
    )
    print(
        "\nEnd to end (k=5, default retriever): page hits, and the HNSW calls' recall@100 against exact "
        "and how many returned fewer than 100 rows"
    )
    print(table(["search", "questions asked", "hit@1", "hit@5", "recall@100", "< 100 rows"], rows))
    print(f"\nload {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


def _hits(result: dict[str, Any]) -> list[str]:
    return [pdfqa.show(result["scores"][f"hit@{n}"]) for n in (1, 5)]


def _vector_cells(tally: Tally) -> list[str]:
    n = len(tally.recalls)
    return [
        f"{statistics.fmean(tally.recalls):.3f}",
        f"{tally.short}/{n}",
        f"{tally.index_plans}/{n}",
        f"{statistics.median(tally.exact_ms):.1f}",
        f"{statistics.median(tally.hnsw_ms):.1f}",
    ]


def table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
