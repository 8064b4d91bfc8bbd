"""The answer stage on public data: what a reader is shown, the label-confidence threshold, the
sentence scorer and the model's choices.

    python -m benchmarks.confidence [--sets mmlongbench,financebench] [--bench DIR] [--cache DIR]
                                    [--model embedded] [--setting FIELD=VALUE]... [--json OUT]

A small model rarely answers "no passage answers"; when none does, it still picks a label, with a
low probability. `AnswerSettings.min_label_confidence` withholds a verified quote whose label the
model gave less than that probability. This script reads the threshold off the public dev sets.

Each question of the sets is retrieved from the set's shared index (built as `benchmarks.pdfqa` builds
it, and cached with it) exactly as `localqa eval --model` retrieves it (`Settings.for_answering`),
and every part is answered with the check and evidence coverage off (threshold 0; coverage is
judged on the recorded quotes by `benchmarks.coverage`) and any other answer settings given
with `--setting` (e.g. `--setting units=4`). Per part it records the outcome, whether the quote
cites an evidence page, the label confidence, whether the sentence scorer's first sentence is on
an evidence page and whether any sentence the model was shown is, the rank (in the scorer's
ranking) of the sentence the model chose, the tokens and the times. Answers are kept in
`--cache` per set, model, settings and code, so an interrupted run resumes.

Then, for each candidate threshold, it prints what a reader would be shown, exactly as eval
decides it (a case shows the first part whose quote is verified and confident enough):
- answerable (FinanceBench; MMLongBench text/table): a verified quote from an evidence page, and
  any verified quote;
- MMLongBench needs_visual, the same, on their own line;
- unanswerable: no quote shown.
and, per category, the scorer alone: cases whose scorer's first sentence (of the first part with
candidates) is on an evidence page; the model's override rate (of the parts where it chose a
sentence, those not the scorer's first; overrides onto an evidence page and away from one); and
per part the median prompt and generated tokens, model seconds and scorer milliseconds.
`--model extractive` is the scorer alone: its table is the scorer's.

Skips with a message when the data is absent.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import statistics
import time
from datetime import date
from pathlib import Path
from typing import Any

from benchmarks import pdfqa
from benchmarks.common import CACHE, FOLDERS, LOADERS, BenchSet, bench_folder
from localqa.answers.answering import answer_part
from localqa.indexing.index import open_index
from localqa.models import embedded, get_model
from localqa.retrieval.retrieve import resolve, search
from localqa.settings import AnswerSettings, Settings
from localqa.types import Caller

THRESHOLDS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
SETS = ("mmlongbench", "mmlongbench2", "financebench")
# The answering code: a change to it is a new set of answers.
ANSWER_CODE = (
    "localqa/answers/answering.py",
    "localqa/answers/prompts.py",
    "localqa/answers/sentences.py",
    "localqa/settings.py",
    "localqa/models/*.py",
    "localqa/retrieval/retrieve.py",
)


def recording(fields: dict[str, Any] | None = None) -> AnswerSettings:
    """The answer settings answers are recorded with: `fields`, with the label-confidence check
    and evidence coverage off (both are judged afterwards, from the record)."""
    return AnswerSettings.model_validate({**(fields or {}), "min_label_confidence": 0.0, "coverage": ()})


def answers_path(cache: Path, name: str, model: str, settings: AnswerSettings | None = None) -> Path:
    """Where the answers of `model` with `settings` (default: `recording()`) are kept for this code."""
    settings = settings or recording()
    key = hashlib.sha256(
        (model + settings.model_dump_json() + pdfqa.code_hash(ANSWER_CODE + pdfqa.INDEX_CODE)).encode()
    ).hexdigest()
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
    bench: BenchSet,
    db: Path,
    model_name: str,
    answering: AnswerSettings,
    out: Path,
    only: set[str] | None = None,
) -> list[dict[str, Any]]:
    """Every case (or those in `only`) answered with `answering` (the check and evidence coverage
    off), one JSON line per case (resumes from `out`); the cases answered so far, in the set's
    order."""
    done = {}
    if out.exists():
        for line in out.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            done[record["id"]] = record
    model, recorder = recording_model(model_name)
    settings = Settings(answering=answering)
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
                selection, call = answer.selection, answer.call
                first = selection.shown[0].location if selection and selection.shown else None
                choice = selection.choice if selection else None
                answered.append(
                    {
                        "verified": answer.verified,
                        "on_evidence": cited is not None and (cited.source, cited.page) in case.pages,
                        "confidence": call.label_confidence if call else None,
                        "reason": answer.reason,
                        "question": part.question,
                        "quote": answer.quote,
                        "candidates": len(part.candidates),
                        "scorer_first_on_evidence": first is not None
                        and (first.source, first.page) in case.pages,
                        "shown_on_evidence": selection is not None
                        and any((u.location.source, u.location.page) in case.pages for u in selection.shown),
                        "choice_rank": choice.rank if choice else None,
                        "choice_on_evidence": choice is not None
                        and (choice.location.source, choice.location.page) in case.pages,
                        "kept_first": bool(selection and selection.kept_first),
                        "scorer_ms": selection.seconds * 1000 if selection else None,
                        "seconds": call.seconds if call else None,
                        "prompt_tokens": call.prompt_tokens if call else None,
                        "completion_tokens": call.completion_tokens if call else None,
                        "citation": cited.model_dump(mode="json") if cited else None,
                        "tokens": recorder.last if recorder and call else [],
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
    confidence = "" if part["confidence"] is None else f", label p={part['confidence']:.2f}"
    return f"quote from an {where}{confidence}"


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


def by_threshold(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
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


def scorer_and_choices(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per category: the scorer's first sentence on an evidence page (first part with candidates),
    the model's overrides, and the median tokens and times per part that asked the model."""
    found: dict[str, dict[str, Any]] = {}
    for category in ("answerable", "needs_visual", "unanswerable"):
        cases = [r for r in records if r["category"] == category]
        if not cases:
            continue
        firsts = [next((p for p in r["parts"] if p.get("candidates")), None) for r in cases]
        asked = [p for r in cases for p in r["parts"] if p.get("seconds") is not None]
        chose = [p for p in asked if p.get("choice_rank") is not None]
        overrode = [p for p in chose if p["choice_rank"] != 1]
        found[category] = {
            "cases": len(cases),
            "scorer_first_on_evidence": sum(bool(p and p["scorer_first_on_evidence"]) for p in firsts),
            # The most a model's choice could reach: a sentence from an evidence page was shown
            # (answers recorded before this was kept have None).
            "shown_on_evidence": sum(bool(p and p.get("shown_on_evidence")) for p in firsts)
            if all(p is None or "shown_on_evidence" in p for p in firsts)
            else None,
            "parts_asked": len(asked),
            "chose": len(chose),
            "overrode": len(overrode),
            # Overrides too unsure to stand (AnswerSettings.min_override_confidence): the scorer's
            # first was quoted instead.
            "kept_first": sum(bool(p.get("kept_first")) for p in overrode),
            "overrode_onto_evidence": sum(
                p["choice_on_evidence"] and not p["scorer_first_on_evidence"] for p in overrode
            ),
            "overrode_away_from_evidence": sum(
                p["scorer_first_on_evidence"] and not p["choice_on_evidence"] for p in overrode
            ),
            **{f"{key}_median": _median([p.get(key) for p in asked]) for key in PER_PART},
        }
    return found


PER_PART = ("prompt_tokens", "completion_tokens", "seconds", "scorer_ms")


def _median(values: list[Any]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def print_scorer(title: str, found: dict[str, dict[str, Any]]) -> None:
    print(f"\n{title}: the sentence scorer and the model's choices")
    for category, row in found.items():
        first = f"{row['scorer_first_on_evidence']}/{row['cases']}"
        line = f"  {category}: scorer's first sentence on an evidence page {first}"
        if row["shown_on_evidence"] is not None:
            line += f", any sentence shown on one {row['shown_on_evidence']}/{row['cases']}"
        if row["chose"]:
            line += (
                f"; the model chose a sentence in {row['chose']}/{row['parts_asked']} parts and overrode "
                f"the scorer's first in {row['overrode']} ({row['overrode_onto_evidence']} onto an evidence "
                f"page, {row['overrode_away_from_evidence']} away from one; "
                f"{row['kept_first']} too unsure to stand)"
            )
        print(line)
        figures = [
            f"{label} {row[key]:.{digits}f}"
            for key, label, digits in (
                ("prompt_tokens_median", "prompt tokens", 0),
                ("completion_tokens_median", "generated tokens", 0),
                ("seconds_median", "model s", 2),
                ("scorer_ms_median", "scorer ms", 0),
            )
            if row.get(key) is not None
        ]
        if figures:
            print(f"    per part (median): {', '.join(figures)}")


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
    parser.add_argument("--cache", type=Path, default=CACHE, help="indexes and answers")
    parser.add_argument("--model", default="embedded", help="the backend to calibrate (default: embedded)")
    parser.add_argument(
        "--setting",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="an AnswerSettings field for this run (repeatable), e.g. units=4",
    )
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write every figure as JSON")
    parser.add_argument("--cases", help="comma-separated case ids: answer only these (the rest later)")
    args = parser.parse_args(argv)
    only = {c.strip() for c in args.cases.split(",") if c.strip()} if args.cases else None
    chosen = [s.strip() for s in args.sets.split(",") if s.strip()]
    if set(chosen) - set(SETS):
        parser.error(f"choose sets from {', '.join(SETS)}")
    bench = bench_folder(args.bench)
    missing = [FOLDERS[s] for s in chosen if not (bench / FOLDERS[s]).is_dir()]
    if missing:
        print(f"Skipped: {', '.join(missing)} not found under {bench} (pass --bench DIR).")
        return 0
    fields = dict(item.partition("=")[::2] for item in args.setting)
    try:
        answering = recording(fields)
    except ValueError as error:
        parser.error(f"--setting: {error}")
    report: dict[str, Any] = {"model": args.model, "settings": answering.model_dump(), "sets": {}}
    every: list[dict[str, Any]] = []
    for name in chosen:
        data = LOADERS[name](bench / FOLDERS[name])
        built, _, _ = pdfqa.shared_index(data, args.cache, pdfqa.index_flags(None), with_ocr=True)
        out = answers_path(args.cache, name, args.model, answering)
        print(f"{data.title}: {len(data.cases)} questions, index {built.path.name}; answers in {out}")
        records = answer_cases(data, built.path, args.model, answering, out, only)
        rows = by_threshold(records)
        print_table(data.title, rows)
        scorer = scorer_and_choices(records)
        print_scorer(data.title, scorer)
        report["sets"][name] = {"rows": rows, "scorer": scorer, "confidences": confidences(records)}
        every += records
    if len(chosen) > 1:
        print_table("all sets together", by_threshold(every))
        print_scorer("all sets together", scorer_and_choices(every))
    print("\nLabel confidence of each case's first verified quote:")
    for where, values in confidences(every).items():
        print(f"  {where} ({len(values)}): {' '.join(f'{v:.2f}' for v in values)}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
