"""Whose statements the FinanceBench figures are computed from, and what their cross-checks refuse
(issue 48), before against after, from the runs `benchmarks.pdfqa --model M --runs DIR` keeps.

    python -m benchmarks.statements --before DIR --after DIR --index-before JSON [--index-after JSON]
                                    [--sets financebench,financebench2] [--bench DIR] [--json OUT]

`DIR` is a `--runs` folder of `benchmarks.pdfqa` (one subfolder per set, with `run-shared.json`
and `run-shared-model.json`); `JSON` its `--json` report, which names each set's shared index
(the after run's defaults to the before run's). Printed per set, before and after:

- **figure questions** (FinanceBench's metrics, those with a `value`): value correct;
- **comparison and sign questions** (those `localqa.derived.comparing` plans): the direction shown,
  right or wrong against the gold answer's words ("declined", "No ... decreased", "positive"), or
  none (the goal for wrong: 0);
- **operands' statements**: every operand shown, by the scope of the table it is read from
  (`localqa.language.statements`, recognised again from the shared index for both runs:
  primary, segment, other entity, quarter, summary, adjusted, other, or prose);
- **checks passed**: the computed figures shown (each compared figure counts), by the kind of
  check each passed (`Value.checks`);
- **refusals by check**: the figures a cross-check refused (`not computed: ...`), by check, and
  whether the refusal was right: the figure shown before for that question was wrong (right), was
  right (wrong), or there was none;
- **page hit@1 / hit@5 by question type** (metrics-generated, domain-relevant, novel-generated),
  from the shared index's retrieval;
- **time of a figure part**: the median seconds of the parts that computed or refused a figure.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from datetime import date
from pathlib import Path
from typing import Any

from benchmarks.common import FOLDERS, bench_folder, load_financebench, table
from benchmarks.pdfqa import AS_OF, HITS_AT, ranked_pages, value_fields
from localqa.derived import comparing
from localqa.library import IndexContext, Library
from localqa.types import Caller, Kind, Location

# A refusal's check, by the words its note says (`localqa.derived.crosschecks`).
CHECKS = (
    ("one scale", re.compile(r"not in one scale")),
    ("one statement", re.compile(r"not from one statement")),
    ("a total at least each part", re.compile(r"a part of it")),
    ("gross profit identity", re.compile(r"is not its gross profit")),
    ("balance identity", re.compile(r"total liabilities and equity")),
    ("another statement's line", re.compile(r"disagrees with the consolidated")),
    ("the stated figure", re.compile(r"the document states")),
)
# The gold answer's direction, by its first word of one: up or down.
_UP = re.compile(r"\b(?:improv\w*|increas\w*|positive|higher|grew|rose|above|yes)\b", re.I)
_DOWN = re.compile(r"\b(?:declin\w*|decreas\w*|negative|lower|fell|below|worsen\w*|no)\b", re.I)
UP = {"improved", "increased", "positive", "above", "higher"}
DOWN = {"declined", "decreased", "negative", "below", "lower"}


# "changed from 20% in FY2021 to 23% in FY2022": the direction of the two figures.
_FROM_TO = re.compile(
    r"\bfrom\s+\$?(?P<a>-?\d[\d,]*(?:\.\d+)?).{0,40}?\bto\s+\$?(?P<b>-?\d[\d,]*(?:\.\d+)?)", re.I
)


def gold_direction(answer: str) -> str | None:
    """Up or down, by the first direction word of the gold answer ("No. Microsoft decreased ..."
    is down; "Yes, the FCF conversion ... improved" is up), else by the figures it says it went
    from and to ("changed from 20% in FY2021 to 23% in FY 2022" is up)."""
    up, down = _UP.search(answer), _DOWN.search(answer)
    if up is None and down is None:
        moved = _FROM_TO.search(answer)
        if moved is None:
            return None
        a, b = (float(moved[k].replace(",", "")) for k in ("a", "b"))
        return "up" if b > a else "down" if b < a else None
    if down is None or (up is not None and up.start() < down.start()):
        return "up"
    return "down"


def shown_direction(answer: dict[str, Any] | None) -> str | None:
    comparison = ((answer or {}).get("value") or {}).get("comparison") or {}
    direction = comparison.get("direction")
    return "up" if direction in UP else "down" if direction in DOWN else None


def operands(answer: dict[str, Any] | None) -> list[dict[str, Any]]:
    value = (answer or {}).get("value") or {}
    compared = (value.get("comparison") or {}).get("figures") or ()
    return [*(value.get("operands") or ()), *(o for f in compared for o in f.get("operands") or ())]


def scope_of(operand: dict[str, Any], library: Library, question: str) -> str:
    """The scope of the table an operand's row sits in, recognised from the index as the operands
    rule recognises it (`operands.statement_of`)."""
    from localqa.derived.operands import over_row, statement_of
    from localqa.values.cells import read_row

    location = Location.model_validate(operand["citation"])
    if location.kind is not Kind.TABLE:
        return "prose"
    context = IndexContext(library, date.fromisoformat(AS_OF), Caller(), question)
    label = read_row(operand["quote"]).label or ""
    return statement_of(location, over_row(operand["quote"], label), context).scope.value


def refusal_check(note: str | None) -> str | None:
    if not note or not note.startswith("not computed:"):
        return None
    return next((name for name, words in CHECKS if words.search(note)), "other")


def figure_seconds(run: dict[str, Any]) -> list[float]:
    """The seconds of each answered part whose answer computed a figure or refused one."""
    seconds = []
    for case in run["cases"]:
        answer = case.get("answer") or {}
        value = answer.get("value") or {}
        if value.get("operands") is not None or value.get("comparison") or answer.get("figure_note"):
            seconds += [p["seconds"] for p in answer.get("parts") or () if "seconds" in p]
    return seconds


def measure(name: str, bench: Path, runs: dict[str, Path], dbs: dict[str, Path | None]) -> dict[str, Any]:
    cases = load_financebench(bench / FOLDERS[name], name).cases
    report: dict[str, Any] = {"set": name}
    answered = {
        when: {c["id"]: c.get("answer") for c in _read(folder / name / "run-shared-model.json")["cases"]}
        for when, folder in runs.items()
    }
    valued = [c for c in cases if value_fields(c)]
    report["figure questions, value correct"] = {
        when: f"{sum(bool((a.get(c.id) or {}).get('value_correct')) for c in valued)}/{len(valued)}"
        for when, a in answered.items()
    }
    compared = [c for c in cases if comparing.plan(c.question) is not None]
    directions: dict[str, dict[str, int]] = {}
    for when, by_id in answered.items():
        shown_tally = {"right": 0, "wrong": 0, "none": 0}
        for case in compared:
            shown, gold = shown_direction(by_id.get(case.id)), gold_direction(case.answer)
            shown_tally["none" if shown is None else "right" if shown == gold else "wrong"] += 1
        directions[when] = shown_tally
    report[f"comparison and sign questions ({len(compared)}), direction"] = directions
    scopes: dict[str, dict[str, int]] = {}
    for when, by_id in answered.items():
        tally: dict[str, int] = {}
        db = dbs.get(when)
        if db is None:
            continue
        with Library(db) as library:
            for case in cases:
                for operand in operands(by_id.get(case.id)):
                    scope = scope_of(operand, library, case.question)
                    tally[scope] = tally.get(scope, 0) + 1
        scopes[when] = dict(sorted(tally.items()))
    report["operands by statement scope"] = scopes
    report["figures shown, by check passed"] = {
        when: _passed(by_id.get(c.id) for c in cases) for when, by_id in answered.items()
    }
    before, after = answered.get("before", {}), answered.get("after", {})
    refusals: dict[str, dict[str, int]] = {}
    for case in cases:
        check = refusal_check((after.get(case.id) or {}).get("figure_note"))
        if check is None:
            continue
        earlier = before.get(case.id) or {}
        if value_fields(case) and (earlier.get("value") or {}).get("operands") is not None:
            verdict = "wrong" if earlier.get("value_correct") else "right"
        elif case in compared and shown_direction(earlier) is not None:
            verdict = "right" if shown_direction(earlier) != gold_direction(case.answer) else "wrong"
        else:
            verdict = "no figure before"
        refusals.setdefault(check, {}).setdefault(verdict, 0)
        refusals[check][verdict] += 1
    report["refusals by check (right / wrong / no figure before)"] = refusals
    hits: dict[str, dict[str, str]] = {}
    for when, folder in runs.items():
        run = {c["id"]: c for c in _read(folder / name / "run-shared.json")["cases"]}
        for kind in sorted({c.answer_type or "" for c in cases}):
            typed = [c for c in cases if c.answer_type == kind]
            counted = [
                sum(any(r <= n and (s, p) in c.pages for r, s, p in ranked_pages(run[c.id])) for c in typed)
                for n in HITS_AT
            ]
            hits.setdefault(kind, {})[when] = " ".join(
                f"@{n} {k}/{len(typed)}" for n, k in zip(HITS_AT, counted, strict=True)
            )
    report["page hit by question type"] = hits
    report["figure part seconds (median)"] = {
        when: round(statistics.median(s), 3)
        if (s := figure_seconds(_read(folder / name / "run-shared-model.json")))
        else None
        for when, folder in runs.items()
    }
    return report


# A passed check's family, by how `localqa.derived.crosschecks` names it.
_PASSED = (
    ("one scale", "one scale"),
    ("operands from", "registrant's statements"),
    ("a total is at least", "total at least each part"),
    ("gross profit =", "gross profit identity"),
    ("total assets =", "balance identity"),
    ("agrees with the consolidated", "another statement's line"),
    ("agrees with the", "the stated figure"),
)


def _passed(answers: Any) -> dict[str, int]:
    """How many computed figures shown (each compared figure counts) passed each kind of check,
    and how many were shown at all."""
    tally: dict[str, int] = {"figures": 0}
    for answer in answers:
        value = (answer or {}).get("value") or {}
        figures = (value.get("comparison") or {}).get("figures") or ([value] if value.get("operands") else [])
        for figure in figures:
            tally["figures"] += 1
            kinds = {
                next((name for start, name in _PASSED if c.startswith(start) or start in c), "other")
                for c in figure.get("checks") or ()
            }
            for kind in kinds:
                tally[kind] = tally.get(kind, 0) + 1
    return tally


def _read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def print_report(report: dict[str, Any]) -> None:
    print(f"\n== {report['set']}")
    for key, value in report.items():
        if key == "set":
            continue
        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            columns = sorted({k for v in value.values() for k in v})
            print(f"{key}:")
            print(table(["", *columns], [[k, *(v.get(c, 0) for c in columns)] for k, v in value.items()]))
        else:
            print(f"{key}: {value}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the before run's --runs folder")
    parser.add_argument("--after", type=Path, required=True, help="the after run's --runs folder")
    parser.add_argument("--sets", default="financebench,financebench2")
    parser.add_argument("--bench", type=Path, help="the benchmark folder (default: ../shared/bench)")
    parser.add_argument("--index-before", type=Path, required=True, help="the before run's --json report")
    parser.add_argument("--index-after", type=Path, help="the after run's --json report")
    parser.add_argument("--json", type=Path, metavar="OUT")
    args = parser.parse_args(argv)
    bench = bench_folder(args.bench)
    reports = []
    for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
        dbs = {
            "before": _db(args.index_before, bench / FOLDERS[name]),
            "after": _db(args.index_after or args.index_before, bench / FOLDERS[name]),
        }
        report = measure(name, bench, {"before": args.before, "after": args.after}, dbs)
        print_report(report)
        reports.append(report)
    if args.json:
        args.json.write_text(json.dumps(reports, indent=2) + "\n", encoding="utf-8")
    return 0


def _db(report: Path, folder: Path) -> Path | None:
    """The shared index a `benchmarks.pdfqa --json` report names for the set of `folder`."""
    sets = json.loads(report.read_text(encoding="utf-8"))["sets"]
    found = next((s for s in sets if s["set"] == folder.name), None)
    return Path(found["index"]["shared"]["path"]) if found else None


if __name__ == "__main__":
    raise SystemExit(main())
