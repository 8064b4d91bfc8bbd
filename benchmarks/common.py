"""What the benchmarks share: where the repository, the benchmark data and the caches are, the
environment of a localqa process a benchmark starts, the machine's load, one table printer,
BEIR's metrics and the loaders of the dev sets.

Imports nothing beyond the standard library, so that a benchmark can be run by another
interpreter (`layout --pymupdf4llm`) or print its help without localqa's dependencies.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# ../shared/bench beside the repository (or beside the folder of worktrees it sits in).
BENCH_PLACES = (REPO.parent / "shared/bench", REPO.parents[1] / "shared/bench")
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "localqa-bench"
PYCACHE = CACHE / "pycache"


def bench_folder(given: Path | None = None) -> Path:
    """The benchmark data: `given` (a `--bench DIR`), else the first of `BENCH_PLACES` there is."""
    return given or next((p for p in BENCH_PLACES if p.is_dir()), BENCH_PLACES[0])


def child_env(checkout: Path = REPO) -> dict[str, str]:
    """The environment of a localqa process started here: `checkout` first on the path, and
    bytecode cached as an installed package has it, in a cache of its own per checkout (so no
    checkout is written to). With PYTHONDONTWRITEBYTECODE, as this machine's sessions run, every
    process would compile localqa again: 26 % more instructions for a fresh search."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    tag = hashlib.sha256(str(checkout).encode()).hexdigest()[:12]
    path = os.pathsep.join([str(checkout), os.environ.get("PYTHONPATH", "")])
    return dict(env, PYTHONPATH=path, PYTHONPYCACHEPREFIX=str(PYCACHE / tag))


def load() -> str:
    """The load averages, as printed beside a figure: `load 1.0 0.8 0.5`."""
    one, five, fifteen = os.getloadavg()
    return f"load {one:.1f} {five:.1f} {fifteen:.1f}"


def load_on_cores() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} {five:.1f} {fifteen:.1f} on {os.cpu_count()} cores"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table: the first column left-aligned, the others right-aligned, a rule under
    the headers."""
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


# ---------------------------------------------------------------------------------------------
# Metrics (BEIR / pytrec_eval definitions)


def ndcg_at(ranked: Sequence[str], relevant: dict[str, int], k: int = 10) -> float:
    """nDCG@k of a ranking against graded judgements (log2 discount, ideal from the judgements)."""
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


# ---------------------------------------------------------------------------------------------
# The data


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


@dataclass
class Case:
    """One question of a PDF dev set (or a SciFact claim) and where its evidence is."""

    id: str
    question: str
    source: str  # the question's own document (per-document mode); "" for SciFact
    pages: set[tuple[str, int]]  # evidence (source, 1-based page); empty: unanswerable
    category: str  # answerable | unanswerable | needs_visual | scifact
    parts: list[str] = field(default_factory=list)
    answer: str = ""  # the dataset's reference answer
    # FinanceBench's question_type ("metrics-generated": a figure), MMLongBench-Doc's answer_format
    # (Int, Float, Str, List, None)
    answer_type: str | None = None


@dataclass
class BenchSet:
    name: str
    title: str
    documents: list[Path]
    cases: list[Case]
    notes: list[str] = field(default_factory=list)
    markdown: dict[str, str] | None = None  # SciFact: file name -> Markdown text (written, not copied)
    qrels: dict[str, set[str]] | None = None  # SciFact: case id -> relevant sources


def load_financebench(folder: Path, name: str = "financebench") -> BenchSet:
    """FinanceBench's questions on one split's filings (`financebench-dev`, and `financebench-dev2`
    with the 17 larger filings; both give 0-based evidence pages)."""
    cases = []
    for line in (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        source = f"{record['doc_name']}.pdf"
        # evidence_page_num is 0-based (the README): doc[n] is localqa page n + 1.
        pages = {(f"{e['doc_name']}.pdf", int(e["evidence_page_num"]) + 1) for e in record["evidence"]}
        case = Case(record["financebench_id"], record["question"], source, pages, "answerable")
        cases.append(replace(case, answer=record["answer"], answer_type=record["question_type"]))
    documents = sorted((folder / "pdfs").glob("*.pdf"))
    return BenchSet(name, folder.name, documents, cases)


def load_mmlongbench(folder: Path, name: str = "mmlongbench") -> BenchSet:
    """MMLongBench-Doc's questions on one split's PDFs (the two splits share the format; case ids
    are `mml-NN` on the first and `mml2-NN` on the second)."""
    prefix = "mml" if name == "mmlongbench" else "mml2"
    cases = []
    notes = []
    for number, line in enumerate((folder / "questions.jsonl").read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        record = json.loads(line)
        category = {"text_or_table": "answerable"}.get(record["category"], record["category"])
        listed = [int(p) for p in json.loads(record["evidence_pages"] or "[]")]
        # evidence_pages is 1-based (the README); a 0 cannot be a page.
        pages = {(record["doc_id"], p) for p in listed if p >= 1}
        if category != "unanswerable" and not pages:
            notes.append(
                f"question {number} ({record['category']}) lists evidence pages {listed}, none of them a "
                "1-based page: left out"
            )
            continue
        case = Case(f"{prefix}-{number:02d}", record["question"], record["doc_id"], pages, category)
        cases.append(replace(case, answer=str(record["answer"]), answer_type=record["answer_format"]))
    documents = sorted((folder / "pdfs").glob("*.pdf"))
    return BenchSet(name, folder.name, documents, cases, notes)


def load_scifact_set(folder: Path) -> BenchSet:
    """SciFact as a set of Markdown documents (`# title`, then the abstract) and its test claims,
    each one explicit part (a claim is not a compound question)."""
    data = load_scifact(folder)
    markdown = {}
    for record in data.corpus:
        title = " ".join(record["title"].split())
        markdown[f"{record['_id']}.md"] = f"# {title}\n\n{record['text'].strip()}\n"
    qrels = {
        f"scifact-{query}": {f"{doc}.md" for doc, grade in judged.items() if grade > 0}
        for query, judged in data.qrels.items()
        if any(grade > 0 for grade in judged.values())
    }
    cases = [
        Case(case_id, data.queries[query], "", set(), "scifact", parts=[data.queries[query]])
        for case_id in sorted(qrels, key=lambda c: int(c.removeprefix("scifact-")))
        for query in [case_id.removeprefix("scifact-")]
    ]
    return BenchSet("scifact", "SciFact test", [], cases, markdown=markdown, qrels=qrels)


# The dev sets by name, with their folders under the benchmark data.
# financebench2 and mmlongbench2 are the second development splits: rules are chosen on one split
# and reported on the other.
LOADERS = {
    "financebench": load_financebench,
    "financebench2": lambda folder: load_financebench(folder, "financebench2"),
    "mmlongbench": load_mmlongbench,
    "mmlongbench2": lambda folder: load_mmlongbench(folder, "mmlongbench2"),
    "scifact": load_scifact_set,
}
FOLDERS = {
    "financebench": "financebench-dev",
    "financebench2": "financebench-dev2",
    "mmlongbench": "mmlongbench-dev",
    "mmlongbench2": "mmlongbench-dev2",
    "scifact": "scifact",
}
