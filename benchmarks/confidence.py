"""Calibrating the answer stage's one threshold on public data: the label confidence.

    python benchmarks/confidence.py [--sets mmlongbench,financebench] [--bench DIR] [--cache DIR]
                                    [--model embedded] [--json OUT]

A small model rarely answers "no passage answers"; when none does, it still picks a label, with a
low probability. `AnswerSettings.min_label_confidence` withholds a verified quote whose label the
model gave less than that probability. This script reads the threshold off the public dev sets.

Each question of the sets is retrieved from the set's shared index (built as `pdfqa.py` builds
it, and cached with it) exactly as `localqa eval --model` retrieves it (`Settings.for_answering`),
and every part is answered with the check off (threshold 0). Per part it records the outcome,
whether the quote cites an evidence page, and the label confidence. Answers are kept in
`--cache` per set, model and code, so an interrupted run resumes.

Then, for each candidate threshold, it prints what a reader would be shown, exactly as eval
decides it (a case shows the first part whose quote is verified and confident enough):
- answerable (FinanceBench; MMLongBench text/table): a verified quote from an evidence page, and
  any verified quote;
- MMLongBench needs_visual, the same, on their own line;
- unanswerable: no quote shown.

Skips with a message when the data is absent.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import pdfqa  # noqa: E402

from localqa.answering import answer_part  # noqa: E402
from localqa.index import open_index  # noqa: E402
from localqa.models import embedded, get_model  # noqa: E402
from localqa.retrieve import resolve, search  # noqa: E402
from localqa.settings import AnswerSettings, Settings  # noqa: E402
from localqa.types import Caller  # noqa: E402

THRESHOLDS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
SETS = ("mmlongbench", "financebench")
# The answering code: a change to it is a new set of answers.
ANSWER_CODE = ("localqa/answering.py", "localqa/prompts.py", "localqa/models/*.py", "localqa/retrieve.py")


def answers_path(cache: Path, name: str, model: str) -> Path:
    key = hashlib.sha256((model + pdfqa.code_hash(ANSWER_CODE + pdfqa.INDEX_CODE)).encode()).hexdigest()
    return cache / name / f"confidence-{key[:16]}.jsonl"


class Recorder:
    """The embedded llama.cpp server, asked for the 5 likeliest alternatives of every reply token
    too. The reply's first 10 tokens (the `source` label and what precedes it) are kept, for other
    signals than the label's own probability (how much `null` got at the label's place, the
    runner-up label)."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.last: list[dict[str, Any]] = []

    def handle_chat_completions(self, body: dict[str, Any]) -> Any:
        reply = self.server.handle_chat_completions({**body, "top_logprobs": 5})
        try:
            content = reply["choices"][0]["logprobs"]["content"]
        except (KeyError, IndexError, TypeError):
            content = []
        self.last = [
            {
                "token": t["token"],
                "logprob": t["logprob"],
                "top": [[a["token"], a["logprob"]] for a in t["top_logprobs"]],
            }
            for t in content[:10]
        ]
        return reply


def recording_model(model_name: str) -> tuple[Any, Recorder | None]:
    if model_name != "embedded":
        return get_model(model_name), None
    loaded = embedded.load()
    recorder = Recorder(loaded.server)
    return embedded.EmbeddedModel(loaded=dataclasses.replace(loaded, server=recorder)), recorder


def answer_cases(
    bench: pdfqa.BenchSet, db: Path, model_name: str, out: Path, only: set[str] | None = None
) -> list[dict[str, Any]]:
    """Every case (or those in `only`) answered with the check and evidence coverage off, one JSON
    line per case (resumes from `out`); the cases answered so far, in the set's order."""
    done = {}
    if out.exists():
        for line in out.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            done[record["id"]] = record
    model, recorder = recording_model(model_name)
    settings = Settings(answering=AnswerSettings(min_label_confidence=0.0, coverage=()))
    as_of = date.fromisoformat(pdfqa.AS_OF)
    with open_index(db) as store, out.open("a", encoding="utf-8") as sink:
        retrieval = resolve(store, settings.for_answering())
        for number, case in enumerate(bench.cases, 1):
            if case.id in done or (only is not None and case.id not in only):
                continue
            started = time.perf_counter()
            parts = search(
                store, case.question, as_of=as_of, caller=Caller(), parts=case.parts, settings=retrieval
            )
            answered = []
            for part in parts:
                answer = answer_part(part.question, part.candidates, model, settings.answering)
                cited = answer.citation
                answered.append(
                    {
                        "verified": answer.verified,
                        "on_evidence": cited is not None and (cited.source, cited.page) in case.pages,
                        "confidence": answer.call.label_confidence if answer.call else None,
                        "reason": answer.reason,
                        "question": part.question,
                        "quote": answer.quote,
                        "citation": cited.model_dump(mode="json") if cited else None,
                        "tokens": recorder.last if recorder and answer.call else [],
                    }
                )
            record = {"id": case.id, "category": case.category, "parts": answered}
            sink.write(json.dumps(record) + "\n")
            sink.flush()
            done[case.id] = record
            print(
                f"  {number}/{len(bench.cases)} {case.id} ({time.perf_counter() - started:.0f} s): "
                + ", ".join(_part_line(p) for p in answered),
                flush=True,
            )
    return [done[case.id] for case in bench.cases if case.id in done]


def _part_line(part: dict[str, Any]) -> str:
    if not part["verified"]:
        return "no quote"
    where = "evidence page" if part["on_evidence"] else "other page"
    return f"quote from an {where}, label p={part['confidence']:.2f}"


def shown(record: dict[str, Any], threshold: float) -> dict[str, Any] | None:
    """The part whose quote eval would show under `threshold` (the first verified, confident one)."""
    return next(
        (
            p
            for p in record["parts"]
            if p["verified"] and (p["confidence"] is None or p["confidence"] >= threshold)
        ),
        None,
    )


def table(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for threshold in THRESHOLDS:
        row: dict[str, Any] = {"threshold": threshold}
        for category in ("answerable", "needs_visual", "unanswerable"):
            cases = [r for r in records if r["category"] == category]
            if not cases:
                continue
            quotes = [shown(r, threshold) for r in cases]
            if category == "unanswerable":
                row[category] = (sum(q is None for q in quotes), len(cases))
            else:
                row[category] = (
                    sum(q is not None and q["on_evidence"] for q in quotes),
                    sum(q is not None for q in quotes),
                    len(cases),
                )
        rows.append(row)
    return rows


def print_table(title: str, rows: list[dict[str, Any]]) -> None:
    print(f"\n{title}: what a reader is shown, by threshold")
    header = ["threshold"]
    for category, label in (
        ("answerable", "answerable: from evidence page / any quote"),
        ("needs_visual", "needs_visual: evidence page / any"),
        ("unanswerable", "unanswerable: no quote"),
    ):
        if category in rows[0]:
            header.append(label)
    print("  ".join(f"{h:>44}" if i else f"{h:>9}" for i, h in enumerate(header)))
    for row in rows:
        cells = [f"{row['threshold']:>9.2f}"]
        for category in ("answerable", "needs_visual", "unanswerable"):
            if category in row:
                value = row[category]
                if category == "unanswerable":
                    cells.append(f"{value[0]:>3}/{value[1]:<3}".rjust(44))
                else:
                    cells.append(f"{value[0]:>3}/{value[2]:<3} {value[1]:>3}/{value[2]:<3}".rjust(44))
        print("  ".join(cells))


def confidences(records: list[dict[str, Any]]) -> dict[str, list[float]]:
    """The label confidence of each case's first verified quote, by category and by where it cites."""
    found: dict[str, list[float]] = {}
    for record in records:
        first = shown(record, 0.0)
        if first is None or first["confidence"] is None:
            continue
        where = record["category"]
        if where != "unanswerable":
            where += ", evidence page" if first["on_evidence"] else ", other page"
        found.setdefault(where, []).append(round(first["confidence"], 3))
    return {k: sorted(v) for k, v in sorted(found.items())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, from {', '.join(SETS)}")
    parser.add_argument("--bench", type=Path, help="the benchmark folder (default: ../shared/bench)")
    parser.add_argument("--cache", type=Path, default=pdfqa.DEFAULT_CACHE, help="indexes and answers")
    parser.add_argument("--model", default="embedded", help="the backend to calibrate (default: embedded)")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write every figure as JSON")
    parser.add_argument("--cases", help="comma-separated case ids: answer only these (the rest later)")
    args = parser.parse_args(argv)
    only = {c.strip() for c in args.cases.split(",") if c.strip()} if args.cases else None
    chosen = [s.strip() for s in args.sets.split(",") if s.strip()]
    if set(chosen) - set(SETS):
        parser.error(f"choose sets from {', '.join(SETS)}")
    bench = args.bench or next((p for p in pdfqa.BENCH_PLACES if p.is_dir()), pdfqa.BENCH_PLACES[0])
    folders = {"financebench": "financebench-dev", "mmlongbench": "mmlongbench-dev"}
    loaders = {"financebench": pdfqa.load_financebench, "mmlongbench": pdfqa.load_mmlongbench}
    missing = [folders[s] for s in chosen if not (bench / folders[s]).is_dir()]
    if missing:
        print(f"Skipped: {', '.join(missing)} not found under {bench} (pass --bench DIR).")
        return 0
    report: dict[str, Any] = {"model": args.model, "sets": {}}
    every: list[dict[str, Any]] = []
    for name in chosen:
        data = loaders[name](bench / folders[name])
        built, _, _ = pdfqa.shared_index(data, args.cache, pdfqa.index_flags(None), with_ocr=True)
        out = answers_path(args.cache, name, args.model)
        print(f"{data.title}: {len(data.cases)} questions, index {built.path.name}; answers in {out}")
        records = answer_cases(data, built.path, args.model, out, only)
        rows = table(records)
        print_table(data.title, rows)
        report["sets"][name] = {"rows": rows, "confidences": confidences(records)}
        every += records
    if len(chosen) > 1:
        print_table("all sets together", table(every))
    print("\nLabel confidence of each case's first verified quote:")
    for where, values in confidences(every).items():
        print(f"  {where} ({len(values)}): {' '.join(f'{v:.2f}' for v in values)}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
