"""What a value and a derived figure cost: per question part, the plain answer (retrieval's
candidates answered: scorer, model, verification, coverage), the value of its quote, and the
derived figure (each line item retrieved and read, the arithmetic), for one backend.

    python -m benchmarks.figures [--sets library,financebench] [--model extractive|embedded]
                                 [--db INDEX] [--json OUT]

Question sets:
- `library`: every case of evals/library/cases.toml over the sample library in pdfs/ (indexed into
  a temporary folder, without embeddings);
- `financebench`: the 41 questions of financebench-dev, over one shared index of its 32 filings
  built once into ~/.cache/localqa-bench/figures/ (lexical; `--db` uses another index of them).

Each part is retrieved as `localqa ask` retrieves it, then answered through `Library.answer_part`
with the stages timed apart: `answer` is `answering.answer_part` (its model call included),
`value` the value of its quote (`value_of`), `figure` the derived figure
(`deriving.derive`: the line items' searches and the arithmetic; zero for a part that asks none).
Printed per set: the median, p90 and max of each, the figure's time against the plain answer's
(the goal: a value adds at most 50 ms on the extractive path; a derived figure with the embedded
model at most doubles a plain answer), and how many parts asked for a figure and got one.

Timings are printed, never asserted: read the ratios, and the load printed with them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path
from typing import Any

from benchmarks.common import CACHE, REPO, bench_folder, load, percentile, table
from localqa.answers import answering
from localqa.derived import deriving, figures
from localqa.evaluate.suite import load_suite
from localqa.indexing.index import refresh_index
from localqa.library import IndexContext, Library
from localqa.models import get_model
from localqa.types import Caller
from localqa.values.choosing import value_of

FIGURES = CACHE / "figures"
AS_OF = date(2026, 1, 1)


@dataclass
class Timed:
    set: str
    question: str
    answer_ms: float
    value_ms: float
    figure_ms: float
    asks_figure: bool
    computed: bool  # a figure asked for was computed, or read as one cell


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.figures", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--sets", default="library,financebench", help="comma-separated: library, financebench"
    )
    parser.add_argument("--model", default="extractive", help="the answer backend (default: extractive)")
    parser.add_argument("--db", type=Path, help="an index of the FinanceBench-dev filings to use instead")
    parser.add_argument("--json", type=Path, help="write every timing here")
    args = parser.parse_args(argv)
    model = get_model(args.model)
    print(f"backend {model.label} · {load()}")
    timed: list[Timed] = []
    for name in args.sets.split(","):
        with _index(name, args.db) as found:
            if found is None:
                print(f"{name}: the benchmark data is absent; skipped")
                continue
            db, questions = found
            timed += [_measure(name, db, question, model) for question in questions]
    _report(timed)
    print(load())
    if args.json:
        args.json.write_text(json.dumps([asdict(t) for t in timed], indent=2) + "\n", encoding="utf-8")
    return 0


@contextmanager
def _index(name: str, given: Path | None) -> Iterator[tuple[Path, list[str]] | None]:
    if name == "library":
        suite = load_suite(REPO / "evals/library")
        with tempfile.TemporaryDirectory() as scratch:
            db = Path(scratch) / "library.sqlite3"
            refresh_index(REPO / "pdfs", db, embed=False)
            yield db, [case.question for case in suite.cases]
        return
    folder = bench_folder() / "financebench-dev"
    if not folder.is_dir():
        yield None
        return
    questions = [
        json.loads(line)["question"] for line in (folder / "questions.jsonl").read_text().splitlines() if line
    ]
    if given is not None:
        yield given, questions
        return
    docs = FIGURES / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for pdf in sorted((folder / "pdfs").glob("*.pdf")):
        if not (docs / pdf.name).exists():
            shutil.copy(pdf, docs / pdf.name)
    entries = "".join(
        f'["{p.name}"]\nseries = "{p.stem}"\naccess = "public"\n\n' for p in sorted(docs.glob("*.pdf"))
    )
    (docs / "catalog.toml").write_text(entries, encoding="utf-8")
    db = FIGURES / "financebench.sqlite3"
    refresh_index(docs, db, embed=False)
    yield db, questions


def _measure(name: str, db: Path, question: str, model: Any) -> Timed:
    caller = Caller()
    with Library(db) as library:
        settings = library.settings.answering
        (result, *_) = library.search(
            question, as_of=AS_OF, caller=caller, settings=library.settings.for_answering()
        )
        context = IndexContext(library, AS_OF, caller, result.question)
        started = time.perf_counter()
        answer = answering.answer_part(result.question, result.candidates, model, settings, context)
        answered = time.perf_counter()
        if answer.quote is not None and answer.citation is not None:
            value_of(result.question, answer.quote, answer.citation, context)
        valued = time.perf_counter()
        derived = deriving.derive(library, result, answer, context, None, model, settings)
        done = time.perf_counter()
    # answer_part computed the value too: its own time is measured again apart, and taken out.
    value_ms = (valued - answered) * 1000
    return Timed(
        set=name,
        question=question,
        answer_ms=(answered - started) * 1000 - value_ms,
        value_ms=value_ms,
        figure_ms=(done - valued) * 1000,
        asks_figure=figures.plan(result.question) is not None or figures.asks_computed(result.question),
        computed=derived.value is not None and figures.plan(result.question) is not None,
    )


def _report(timed: list[Timed]) -> None:
    rows = []
    for name in dict.fromkeys(t.set for t in timed):
        these = [t for t in timed if t.set == name]
        asked = [t for t in these if t.asks_figure]
        for stage in ("answer_ms", "value_ms", "figure_ms"):
            numbers = [getattr(t, stage) for t in (asked if stage == "figure_ms" else these)]
            if not numbers:
                continue
            rows.append(
                [
                    name,
                    stage.removesuffix("_ms"),
                    len(numbers),
                    *(f"{percentile(numbers, q):.1f}" for q in (0.5, 0.9, 1.0)),
                ]
            )
        if asked:
            ratio = [(t.answer_ms + t.value_ms + t.figure_ms) / t.answer_ms for t in asked if t.answer_ms > 0]
            rows.append(
                [
                    name,
                    "with figure / plain",
                    len(ratio),
                    *(f"{percentile(ratio, q):.2f}x" for q in (0.5, 0.9, 1.0)),
                ]
            )
            computed = sum(t.computed for t in asked)
            print(f"{name}: {len(asked)} of {len(these)} parts ask for a figure; {computed} computed one")
    print(table(["set", "stage", "parts", "median ms", "p90 ms", "max ms"], rows))


if __name__ == "__main__":
    raise SystemExit(main())
