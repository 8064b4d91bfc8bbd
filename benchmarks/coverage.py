"""What the evidence-coverage check (localqa/answers/coverage.py) silences on the public PDF dev sets.

    python -m benchmarks.coverage [--sets mmlongbench,financebench] [--bench DIR] [--cache DIR]
                                  [--answers-from DIR] [--model embedded] [--json OUT]

Each question is retrieved from the set's shared index exactly as `localqa eval --model`
retrieves it (`Settings.for_answering`: the k passages a model is shown). Two measurements:

1. **Model-independent**: what the check does to any quote a model could give.
   - answerable (FinanceBench; MMLongBench text/table and needs_visual): the first candidate on an
     evidence page, i.e. where a right quote comes from; *silenced* when the check refuses a quote
     from it. *From any evidence-page candidate*: questions where a quote from some evidence-page
     candidate would be refused, the most the check can cost in right quotes, whatever the model.
   - unanswerable: *silenced at rank 1* when a quote from the first candidate is refused, and
     *silenced whatever is quoted* when a quote from any of the k candidates is.
2. **A model's own quotes** (`--model`, default embedded), as `benchmarks.confidence`
   recorded them (with the check off, in its answers file for this code under `--answers-from`,
   default the cache, or the file `--answers SET=FILE` names): the quote a reader would be shown
   (first verified, label probability >= the default threshold), before and after the check.

Both are printed for the default settings, for each kind of term on its own, and for a few
`coverage_neighbour` values; every silenced question is listed with its missing term.

3. **Coverage as a classifier**: per kind of term (all kinds, then each kind on its own), the
   questions of each category the check refuses (it withholds every quote the case would show,
   so the reader gets none), against all questions of the category: answerable ones refused
   are its cost, unanswerable ones refused its use. Printed for the quotes `--model extractive`
   shows (the sentence scorer's first unit of each part: no model needed) and for the recorded
   quotes of measurement 2, every refused question listed with the reason.

4. **Every kind of refusal as a classifier** (`--runs DIR`: the saved runs of `benchmarks.pdfqa
   --model ... --runs DIR`, no index needed): per kind (word, name, year, number, identifier, the
   model's confidence, the figure planner, retrieval's own abstention), the answerable and the
   unanswerable text/table questions it refused outright and those it doubted (refused with the
   quote as the closest passage; in runs of code before issue 49, shown with the doubt), and
   its precision beside the share of unanswerable questions (`localqa.evaluate.refusals`); then
   the answerable questions refused and the unanswerable ones shown no quote. needs_visual
   questions are left out (their evidence is a picture), but for one line: those whose quote's
   evidence never writes a colour or typeface they name (the visual kind), and of them those with
   a right value (what refusing them would cost).

Skips with a message when the data is absent.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

from benchmarks import confidence, pdfqa
from benchmarks.common import CACHE, FOLDERS, LOADERS, BenchSet, Case, bench_folder
from localqa.answers import coverage, sentences
from localqa.evaluate import refusals
from localqa.indexing.index import open_index
from localqa.retrieval.retrieve import resolve, search
from localqa.settings import AnswerSettings, Settings
from localqa.types import REFUSAL_KINDS, TERM_KINDS, Caller, Candidate, Coverage, Doubt, Location, PartResult

SETS = ("mmlongbench", "mmlongbench2", "financebench")
NEIGHBOURS = (0.25, 0.3, 0.35, 0.4, 0.5)


def retrieve(bench: BenchSet, db: Path) -> dict[str, list[PartResult]]:
    settings = Settings()
    as_of = date.fromisoformat(pdfqa.AS_OF)
    with open_index(db) as store:
        retrieval = resolve(store, settings.for_answering())
        return {
            case.id: search(
                store, case.question, as_of=as_of, caller=Caller(), parts=case.parts, settings=retrieval
            )
            for case in bench.cases
        }


def refusal(part: PartResult, cited: Candidate, quote: str, settings: AnswerSettings) -> str | None:
    """The check's reason for refusing a quote from `cited` (None: shown)."""
    verdict = coverage.check(part.question, quote, cited, part.candidates, settings, unheld=part.unheld)
    missing = coverage.refusal(verdict, settings)
    if missing is None:
        return None
    closest = f" (closest in meaning {missing.similarity:.2f})" if missing.similarity is not None else ""
    return missing.reason() + closest


def on_evidence(case: Case, location: Location) -> bool:
    return (location.source, location.page) in case.pages


def independent(
    bench: BenchSet, parts: dict[str, list[PartResult]], settings: AnswerSettings
) -> dict[str, Any]:
    """Measurement 1 (see the module docstring)."""
    result: dict[str, Any] = {}
    for case in bench.cases:
        found = parts[case.id]
        row = result.setdefault(
            case.category, {"cases": 0, "silenced": [], "silenced_any": [], "rank1": [], "any": []}
        )
        row["cases"] += 1
        if case.category == "unanswerable":
            first = [(p, c) for p in found for c in p.candidates[:1]]
            reasons = [refusal(p, c, "", settings) for p, c in first]
            if first and all(reasons):
                row["rank1"].append((case.id, reasons[0]))
            every = [(p, c) for p in found for c in p.candidates]
            if every and all(refusal(p, c, "", settings) for p, c in every):
                row["any"].append((case.id, reasons[0] if reasons else None))
            continue
        evidence = [(p, c) for p in found for c in p.candidates if on_evidence(case, c.location)]
        if not evidence:
            continue
        row["with_evidence"] = row.get("with_evidence", 0) + 1
        reasons = [refusal(p, c, "", settings) for p, c in evidence]
        if reasons[0]:
            row["silenced"].append((case.id, reasons[0]))
        if any(reasons):  # some right quote would be withheld: the most the check can cost here
            row["silenced_any"].append((case.id, next(r for r in reasons if r)))
    return result


def recorded_quotes(
    record: dict[str, Any], found: list[PartResult], settings: AnswerSettings
) -> list[tuple[Location, str | None]] | None:
    """Each recorded quote a reader could be shown (`recorded_shown`) with the check's refusal;
    None when today's retrieval differs from the recording's: measure with the code that
    recorded the answers then."""
    shown = recorded_shown(record, found, settings)
    if shown is None:
        return None
    return [(cited.location, refusal(part, cited, quote, settings)) for part, cited, quote in shown]


def with_model(
    bench: BenchSet,
    parts: dict[str, list[PartResult]],
    records: dict[str, dict[str, Any]],
    settings: AnswerSettings,
) -> dict[str, Any]:
    """Measurement 2: the recorded quote a reader is shown, before and after the check."""
    result: dict[str, Any] = {}
    for case in bench.cases:
        if case.id not in records:
            continue
        row = result.setdefault(
            case.category,
            {
                "cases": 0,
                "before": 0,
                "after": 0,
                "shown_before": 0,
                "shown_after": 0,
                "silenced": [],
                "other": 0,
            },
        )
        shown = recorded_quotes(records[case.id], parts[case.id], settings)
        if shown is None:
            row["other"] += 1
            continue
        row["cases"] += 1
        before = shown[0][0] if shown else None
        after = next((location for location, reason in shown if reason is None), None)
        evidence = case.category != "unanswerable"
        for location, key in ((before, "before"), (after, "after")):
            if location is not None:
                row[f"shown_{key}"] += 1
                row[key] += evidence and on_evidence(case, location)
        if before is not None and after is None:
            row["silenced"].append((case.id, shown[0][1], evidence and on_evidence(case, before)))
    return result


# A quote a reader would be shown for one part: the part, the passage it is from, its text.
Shown = tuple[PartResult, Candidate, str]


def scorer_quotes(parts: list[PartResult]) -> list[Shown]:
    """The quote `--model extractive` shows for each part with candidates: the sentence scorer's
    first unit (`localqa.answers.sentences`, default answer settings)."""
    shown = []
    for part in parts:
        if not part.candidates:
            continue
        first = sentences.rank(part.question, part.candidates, AnswerSettings()).units[0]
        cited = next(c for c in part.candidates if c.location == first.location)
        shown.append((part, cited, first.text))
    return shown


def recorded_shown(
    record: dict[str, Any], found: list[PartResult], settings: AnswerSettings
) -> list[Shown] | None:
    """The recorded quotes a reader could be shown (verified, label confident enough), in part
    order; None when today's retrieval differs from the recording's (other parts, or the cited
    passage not among the candidates)."""
    if len(record["parts"]) != len(found):
        return None
    shown = []
    for recorded, part in zip(record["parts"], found, strict=True):
        probability = recorded["confidence"]
        confident = probability is None or probability >= settings.min_label_confidence
        if not (recorded["verified"] and confident and recorded.get("citation")):
            continue
        location = Location.model_validate(recorded["citation"])
        cited = next((c for c in part.candidates if c.location == location), None)
        if cited is None:
            return None
        shown.append((part, cited, recorded["quote"]))
    return shown


def classify(bench: BenchSet, shown: dict[str, list[Shown]], settings: AnswerSettings) -> dict[str, Any]:
    """Per category: the questions, those shown a quote before the check, and those it refuses
    (every quote withheld: the reader gets none), each with the first refusal's reason, the
    document it would have quoted and whether that quote was from an evidence page."""
    result: dict[str, Any] = {}
    for case in bench.cases:
        if case.id not in shown:
            continue
        row = result.setdefault(case.category, {"cases": 0, "quoted": 0, "refused": []})
        row["cases"] += 1
        quotes = shown[case.id]
        if not quotes:
            continue
        row["quoted"] += 1
        reasons = [refusal(part, cited, quote, settings) for part, cited, quote in quotes]
        if all(reasons):
            location = quotes[0][1].location
            right = case.category != "unanswerable" and on_evidence(case, location)
            row["refused"].append((case.id, reasons[0], location.source, right))
    return result


def kind_variants() -> dict[str, AnswerSettings]:
    """The check as the defaults refuse (`AnswerSettings.refusals`), then each kind of term on its
    own, refusing: what that kind would withhold if it refused."""
    return {
        "default": AnswerSettings(),
        **{kind: AnswerSettings(coverage=(kind,), refusals=REFUSAL_KINDS) for kind in TERM_KINDS},
    }


CATEGORY_ORDER = ("answerable", "needs_visual", "unanswerable")


def print_classifier(
    title: str, tables: dict[str, dict[str, Any]], questions: dict[str, str], detail: bool = True
) -> None:
    categories = [c for c in CATEGORY_ORDER if any(c in t for t in tables.values())]
    print(
        f" Coverage as a classifier, {title}: questions refused (no quote left) / questions"
        " [of them, quotes from an evidence page]"
    )
    print("   " + f"{'kinds':<12}" + "".join(f"{c:>22}" for c in categories))
    for label, table in tables.items():
        cells = []
        for category in categories:
            row = table.get(category, {"cases": 0, "refused": []})
            refused, cases = len(row["refused"]), row["cases"]
            share = f" = {100 * refused / cases:.0f} %" if cases else ""
            right = "" if category == "unanswerable" else f" [{sum(r[3] for r in row['refused'])}]"
            cells.append(f"{f'{refused}/{cases}{share}{right}':>22}")
        print(f"   {label:<12}" + "".join(cells))
    if detail:
        for category, row in tables["default"].items():
            for case_id, reason, source, right in row["refused"]:
                mark = " [from an evidence page]" if right else ""
                print(f"      {category} {case_id}: {reason}{mark} ({source}) | {questions[case_id][:80]}")


def variants() -> dict[str, AnswerSettings]:
    default = AnswerSettings()
    found = {"default": default}
    for kind in TERM_KINDS:
        found[f"{kind} only"] = AnswerSettings(coverage=(kind,), refusals=REFUSAL_KINDS)
    for neighbour in NEIGHBOURS:
        if neighbour != default.coverage_neighbour:
            found[f"word at {neighbour}"] = AnswerSettings(
                coverage=("word",), coverage_neighbour=neighbour, refusals=REFUSAL_KINDS
            )
    return found


def print_independent(name: str, table: dict[str, Any], questions: dict[str, str], detail: bool) -> None:
    cells = []
    for category, row in table.items():
        if category == "unanswerable":
            cells.append(
                f"unanswerable silenced at rank 1 {len(row['rank1'])}/{row['cases']}, "
                f"whatever is quoted {len(row['any'])}/{row['cases']}"
            )
        else:
            silenced, anywhere = len(row["silenced"]), len(row["silenced_any"])
            cells.append(
                f"{category} evidence quote silenced {silenced}/{row.get('with_evidence', 0)} "
                f"(from any evidence-page candidate {anywhere})"
            )
    print(f"  {name:<16} " + "; ".join(cells))
    if detail:
        for category, row in table.items():
            for case_id, reason in row["rank1" if category == "unanswerable" else "silenced_any"]:
                print(f"      {category} {case_id}: {reason} | {questions[case_id][:90]}")


def print_model(name: str, table: dict[str, Any], questions: dict[str, str], detail: bool) -> None:
    cells = []
    for category, row in table.items():
        if category == "unanswerable":
            cells.append(
                f"unanswerable no quote {row['cases'] - row['shown_before']}/{row['cases']} -> "
                f"{row['cases'] - row['shown_after']}/{row['cases']}"
            )
        else:
            cells.append(
                f"{category} evidence-page quote {row['before']}/{row['cases']} -> "
                f"{row['after']}/{row['cases']}"
                f" (any quote {row['shown_before']} -> {row['shown_after']})"
            )
    other = sum(row["other"] for row in table.values())
    print(
        f"  {name:<16} "
        + "; ".join(cells)
        + (f" ({other} recorded by other retrieval: left out)" if other else "")
    )
    if detail:
        for category, row in table.items():
            for case_id, reason, right in row["silenced"]:
                mark = " [was from an evidence page]" if right else ""
                print(f"      {category} {case_id}: {reason}{mark} | {questions[case_id][:90]}")


def _scored(run: dict[str, Any]) -> Iterator[tuple[bool, dict[str, Any], Coverage | None]]:
    """The answerable (text/table) and unanswerable cases of a saved run: whether answerable, the
    answer, and its coverage verdict."""
    for case in run["cases"]:
        answer = case.get("answer")
        if answer is None or case.get("category") not in ("answerable", "unanswerable"):
            continue
        verdict = Coverage.model_validate(answer["coverage"]) if answer.get("coverage") else None
        yield case["category"] == "answerable", answer, verdict


def run_cases(run: dict[str, Any]) -> list[refusals.Judged]:
    """A saved run's cases as the classifier reads them."""
    return [
        refusals.judged(
            answerable,
            answer.get("quote"),
            answer.get("reason"),
            verdict,
            [Doubt.model_validate(d) for d in answer.get("doubts") or []],
        )
        for answerable, answer, verdict in _scored(run)
    ]


def run_recorded(run: dict[str, Any]) -> list[refusals.Recorded]:
    """A saved run's cases as a choice of refusal settings reads them (`refusals.Recorded`)."""
    return [
        refusals.recorded(answerable, answer.get("quote"), answer.get("reason"), verdict)
        for answerable, answer, verdict in _scored(run)
    ]


def print_choices(splits: dict[str, list[refusals.Recorded]]) -> dict[str, Any]:
    """Measurement 5 (`--choose`): for each ordered pair of splits, each kind's precision and the
    settings chosen on the first (`refusals.choose`), then the same kinds and the chosen settings'
    refusals on the second, where they were not fit. The default: the kinds chosen on every split."""
    base = AnswerSettings()
    result: dict[str, Any] = {}
    chosen_on: dict[str, refusals.Choice] = {}
    for fit, cases in splits.items():
        chosen_on[fit] = refusals.choose(cases, base)
        for held, other in splits.items():
            if held == fit:
                continue
            choice = chosen_on[fit]
            settings = choice.settings(base)
            print(
                f"\nchosen on {fit}, reported on {held}: refusals {', '.join(choice.refusals) or 'none'};"
                f" word floor {choice.word_floor}"
            )
            print(
                f"  {'kind':<12}{f'{fit} ans/unans':>26}{'precision':>10}{'chance':>8}"
                f"{f'{held} ans/unans':>26}{'precision':>10}{'chance':>8}"
            )
            for kind in refusals.TERM_KINDS_CHOSEN:
                row = f"  {kind:<12}"
                for split in (cases, other):
                    found = refusals.score(split, kind, settings)
                    precision = f"{found.precision:.2f}" if found.precision is not None else "-"
                    row += (
                        f"{f'{found.answerable}/{found.unanswerable}':>26}{precision:>10}{found.chance:>8.2f}"
                    )
                print(row)
            done = refusals.outcome(other, settings)
            print(
                f"  on {held}: answerable refused {done.answerable_refused}/{done.answerable};"
                f" unanswerable shown no quote {done.unanswerable_refused}/{done.unanswerable}"
            )
            result[f"{fit}->{held}"] = {"choice": vars(choice), "outcome": vars(done)}
    for name, cases in splits.items():
        floors = [
            refusals.score(
                refusals.by_meaning(cases), "word", base.model_copy(update={"coverage_word_floor": f})
            )
            for f in refusals.WORD_FLOORS
        ]
        words = ", ".join(
            f"{f}: {s.answerable}/{s.unanswerable}" for f, s in zip(refusals.WORD_FLOORS, floors, strict=True)
        )
        missed = refusals.retrieval_missed(cases)
        print(f"\n{name}: a word by its closeness in meaning alone, ans/unans by floor {words}")
        print(
            f"{name}: a name no candidate mentions that the collection holds,"
            f" ans/unans {missed[0]}/{missed[1]}"
        )
        result[f"{name} retrieval missed"] = missed
    default = refusals.default_refusals(list(chosen_on.values()), list(splits.values()), base)
    print(f"\nthe default (kinds chosen on every split, and kinds no case exercises): {', '.join(default)}")
    result["default"] = default
    return result


def pictures_flagged(run: dict[str, Any]) -> tuple[int, int, int]:
    """The picture questions (needs_visual, left out of the classifier table) whose shown quote has
    a colour or typeface its evidence never writes (the visual kind): how many no passage of the
    part writes it for (what the kind refuses where it refuses), how many only the quoted passage
    lacks (doubts either way), and how many of the first have their value right in this run (what a
    refusal would cost)."""
    plain = other = right = 0
    for case in run["cases"]:
        answer = case.get("answer")
        if case.get("category") != "needs_visual" or not answer or not answer.get("coverage"):
            continue
        missing = [
            t for t in Coverage.model_validate(answer["coverage"]).terms if t.kind == "visual" and t.missing
        ]
        if any(not t.elsewhere for t in missing):
            plain += 1
            right += bool(answer.get("value_correct"))
        elif missing:
            other += 1
    return plain, other, right


def print_runs(name: str, path: Path) -> dict[str, Any] | None:
    """Measurement 4 for one set's saved run (see the module docstring)."""
    if not path.exists():
        print(f"\n{name}: no saved run at {path}")
        return None
    run = json.loads(path.read_text(encoding="utf-8"))
    cases = run_cases(run)
    found = refusals.table(cases)
    answerable = [c for c in cases if c.answerable]
    unanswerable = [c for c in cases if not c.answerable]
    refused = sum(c.refused is not None for c in answerable)
    silent = sum(c.refused is not None for c in unanswerable)
    print(f"\n{name} ({path}):")
    print("\n".join("  " + line for line in refusals.lines(found)))
    print(
        f"  answerable refused {refused}/{len(answerable)}"
        f"{f' = {100 * refused / len(answerable):.0f} %' if answerable else ''}; unanswerable shown no"
        f" quote {silent}/{len(unanswerable)}"
        f"{f' = {100 * silent / len(unanswerable):.0f} %' if unanswerable else ''}"
    )
    pictures = pictures_flagged(run)
    print(
        f"  picture questions with a colour or typeface the evidence never writes: {pictures[0]} no passage"
        f" writes (value right: {pictures[2]}), {pictures[1]} only the quoted passage lacks"
    )
    return {
        "pictures_visual": pictures,
        "answerable": len(answerable),
        "answerable_refused": refused,
        "unanswerable": len(unanswerable),
        "unanswerable_no_quote": silent,
        "kinds": [dict(vars(row), precision=row.precision) for row in found.rows],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, from {', '.join(SETS)}")
    parser.add_argument("--bench", type=Path, help="the benchmark folder (default: ../shared/bench)")
    parser.add_argument("--cache", type=Path, default=CACHE, help="indexes (and answers)")
    parser.add_argument("--answers-from", type=Path, help="folder of confidence.py answers per set")
    parser.add_argument("--model", default="embedded", help="whose recorded answers (default: embedded)")
    parser.add_argument(
        "--answers",
        action="append",
        default=[],
        metavar="SET=FILE",
        help="the recorded answers of this set (a confidence.py answers file, e.g. one another "
        "checkout recorded with the same retrieval) instead of this code's",
    )
    parser.add_argument(
        "--index",
        action="append",
        default=[],
        metavar="SET=PATH",
        help="measure against this index of the set instead of building one (an index an earlier "
        "checkout built of the same documents)",
    )
    parser.add_argument(
        "--runs",
        type=Path,
        metavar="DIR",
        help="only measurement 4: each kind of refusal as a classifier, from the saved runs of "
        "'benchmarks.pdfqa --model ... --runs DIR' (DIR/<set>/run-shared-model.json)",
    )
    parser.add_argument(
        "--choose",
        action="store_true",
        help="with --runs: choose the refusal settings on each set and report them on each other "
        "(refusals.choose), the default being the kinds every set chooses",
    )
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write every figure as JSON")
    args = parser.parse_args(argv)
    given = dict(item.split("=", 1) for item in args.index)
    answer_files = {name: Path(path) for name, path in (item.split("=", 1) for item in args.answers)}
    chosen = [s.strip() for s in args.sets.split(",") if s.strip()]
    if set(chosen) - set(SETS):
        parser.error(f"choose sets from {', '.join(SETS)}")
    if args.runs is not None:
        tables: dict[str, Any] = {
            name: print_runs(name, args.runs / name / "run-shared-model.json") for name in chosen
        }
        if args.choose:
            paths = {name: args.runs / name / "run-shared-model.json" for name in chosen}
            splits = {
                name: run_recorded(json.loads(path.read_text(encoding="utf-8")))
                for name, path in paths.items()
                if path.exists() and name != "financebench"  # no unanswerable questions to choose on
            }
            tables["choices"] = print_choices(splits)
        if args.json:
            args.json.write_text(json.dumps(tables, indent=2) + "\n", encoding="utf-8")
        return 0
    bench = bench_folder(args.bench)
    missing = [FOLDERS[s] for s in chosen if not (bench / FOLDERS[s]).is_dir()]
    if missing:
        print(f"Skipped: {', '.join(missing)} not found under {bench} (pass --bench DIR).")
        return 0
    report: dict[str, Any] = {}
    for name in chosen:
        data = LOADERS[name](bench / FOLDERS[name])
        if name in given:
            db = Path(given[name])
        else:
            db = pdfqa.shared_index(data, args.cache, pdfqa.index_flags(None), with_ocr=True)[0].path
        parts = retrieve(data, db)
        questions = {c.id: c.question for c in data.cases}
        print(f"\n{data.title}: {len(data.cases)} questions, index {db}")
        print(" Model-independent (a quote from the first evidence-page candidate; unanswerable: any quote):")
        report[name] = {"independent": {}, "model": {}}
        for label, settings in variants().items():
            table = independent(data, parts, settings)
            report[name]["independent"][label] = table
            print_independent(label, table, questions, detail=label in ("default", "word only"))
        scorer = {case.id: scorer_quotes(parts[case.id]) for case in data.cases}
        tables = {label: classify(data, scorer, s) for label, s in kind_variants().items()}
        report[name]["classifier"] = {"scorer": tables}
        print_classifier("the scorer's first sentence (--model extractive)", tables, questions)
        # The answers this code's confidence.py records (its cache key is this code's).
        answers = answer_files.get(name) or confidence.answers_path(
            args.answers_from or args.cache, name, args.model
        )
        if not answers.exists():
            print(f" No recorded answers ({answers.name}): run benchmarks.confidence first.")
            continue
        records = {}
        for line in answers.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            records[record["id"]] = record
        print(f" The {args.model} model's quotes ({answers.name}, {len(records)} cases), before -> after:")
        for label, settings in variants().items():
            table = with_model(data, parts, records, settings)
            report[name]["model"][label] = table
            print_model(label, table, questions, detail=label == "default")
        recorded = {
            case_id: found
            for case_id, record in records.items()
            if (found := recorded_shown(record, parts[case_id], AnswerSettings())) is not None
        }
        tables = {label: classify(data, recorded, s) for label, s in kind_variants().items()}
        report[name]["classifier"]["model"] = tables
        left = len(records) - len(recorded)
        print_classifier(
            f"the {args.model} model's quotes"
            + (f" ({left} recorded by other retrieval: left out)" if left else ""),
            tables,
            questions,
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
