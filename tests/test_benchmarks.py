"""The benchmarks are a package run as `python -m benchmarks.NAME` from the repository root: every
module imports, none edits `sys.path`, their imports run one way, and the README names each."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "benchmarks"
MODULES = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")


def imported_benchmarks(path: Path) -> set[str]:
    """The modules of the package that `path` imports (at the top or inside a function)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "benchmarks":
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("benchmarks."):
            found.add(node.module.split(".")[1])  # type: ignore[union-attr]
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("benchmarks.")}
    return found


def test_no_module_edits_the_import_path() -> None:
    edits = [
        f"{path.name}:{node.lineno}"
        for path in sorted(PACKAGE.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr == "path" and getattr(node.value, "id", "") == "sys"
    ]
    assert edits == []


def test_imports_between_benchmarks_run_one_way() -> None:
    graph = {name: imported_benchmarks(PACKAGE / f"{name}.py") for name in MODULES}
    assert set().union(*graph.values()) <= set(MODULES)
    try:
        order = list(TopologicalSorter(graph).static_order())
    except CycleError as error:
        raise AssertionError(f"an import circle: {error.args[1]}") from None
    assert order[0] == "common"  # what they share imports none of them
    assert graph["common"] == set()


def test_every_module_imports_and_pdfqa_prints_its_help() -> None:
    """From the repository root, as the README runs them (no PYTHONPATH, no path edits)."""
    statement = "; ".join(f"import benchmarks.{name}" for name in MODULES)
    done = subprocess.run([sys.executable, "-c", statement], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.pdfqa", "--help"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "--sets" in done.stdout


def test_the_readme_is_short_and_names_every_benchmark() -> None:
    readme = (PACKAGE / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    missing = [name for name in MODULES if name != "common" and f"python -m benchmarks.{name}" not in readme]
    assert missing == []


# (answer, FinanceBench question_type or MMLongBench-Doc answer_format, question, category)
REFERENCE_ANSWERS = [
    ("$1577.00", "metrics-generated", "What is capex (in USD millions)?", "answerable"),
    ("1.9%", "metrics-generated", "Answer in percents and round to one decimal place.", "answerable"),
    ("-3.7", "metrics-generated", "Round your answer to two decimal places.", "answerable"),
    ("No, the margin declined.", "domain-relevant", "Does it improve?", "answerable"),
    ("9", "Int", "How many?", "answerable"),
    ("14:04 CET", "Int", "When?", "needs_visual"),  # no number: text
    ("93", "Float", "What is the net fair value? Answer in million.", "answerable"),
    ("['GS5002', 'GS6001']", "List", "Which?", "answerable"),
    ("['3', '4']", "List", "How many?", "answerable"),
    ("__import__('os')", "List", "Which?", "answerable"),  # read as a literal, never run
    ("Not answerable", "None", "Which?", "unanswerable"),
]
VALUE_FIELDS = [
    {"value": 1577.0, "scale": "millions"},
    {"value": 1.9, "decimals": 1, "unit": "%"},
    {"value": -3.7, "decimals": 2},
    {},
    {"value": 9.0, "tolerance": 0},
    {"value": "14:04 CET"},
    {"value": 93.0, "scale": "millions"},
    {"value": ["GS5002", "GS6001"]},
    {"value": [3.0, 4.0], "tolerance": 0},
    {"value": ["__import__('os')"]},
    {},
]


def test_pdfqa_turns_reference_answers_into_value_fields() -> None:
    """FinanceBench's figures in the scale and rounding the question states; MMLongBench-Doc's
    formats as its own evaluation reads them; no value for prose answers or "Not answerable".
    In a child process from the repository root, as the benchmarks run (an unrelated top-level
    `benchmarks` package may sit in site-packages)."""
    script = (
        "import json, sys\n"
        "from benchmarks.common import Case\n"
        "from benchmarks.pdfqa import value_fields\n"
        "rows = json.loads(sys.stdin.read())\n"
        "cases = [Case('c', q, 'd.pdf', {('d.pdf', 1)}, c, answer=a, answer_type=t) for a, t, q, c in rows]\n"
        "print(json.dumps([value_fields(case) for case in cases]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(REFERENCE_ANSWERS),
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert json.loads(result.stdout) == VALUE_FIELDS


def test_coverage_reads_each_kind_of_refusal_from_saved_runs(tmp_path: Path, capsys: Any) -> None:
    """`benchmarks.coverage --runs DIR`: each kind of refusal as a classifier, from a saved run's
    reasons, coverage verdicts and doubts; needs_visual questions left out."""
    from benchmarks import coverage

    def case(
        category: str, quote: str | None, reason: str | None, doubts: tuple[Any, ...] = ()
    ) -> dict[str, Any]:
        answer = {"quote": quote, "reason": reason, "coverage": None, "doubts": list(doubts)}
        return {"category": category, "answer": answer}

    note = 'the evidence never mentions "Amazn"; closest: "Amazon"'
    doubt = {"kind": "name", "term": "Amazn", "note": note}
    run = {
        "cases": [
            case("answerable", None, 'the evidence never mentions "Boeing"'),
            case("unanswerable", None, 'the evidence never mentions "Boeing"'),
            case("unanswerable", None, "no eligible passage matches this part"),
            case("answerable", "a quote", None, (doubt,)),
            case("needs_visual", None, 'the evidence never mentions "2019"'),
        ]
    }
    folder = tmp_path / "mmlongbench"
    folder.mkdir()
    (folder / "run-shared-model.json").write_text(json.dumps(run), encoding="utf-8")
    assert coverage.main(["--sets", "mmlongbench", "--runs", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "(2 answerable, 2 unanswerable; chance precision 0.50)" in printed
    assert "  name                        1/1                1/0       0.33" in printed
    assert "  retrieval                   0/1                0/0       1.00" in printed
    assert "answerable refused 1/2 = 50 %; unanswerable shown no quote 2/2 = 100 %" in printed


def test_coverage_counts_the_picture_questions_the_visual_kind_flags() -> None:
    """needs_visual questions are left out of the classifier table; the visual kind's share of them
    is counted apart, with what a refusal would cost (a right value)."""
    from benchmarks import coverage

    def case(found: str | None, elsewhere: bool, right: bool) -> dict[str, Any]:
        term = {"term": "green", "kind": "visual", "found": found, "elsewhere": elsewhere}
        answer = {"quote": "q", "coverage": {"terms": [term]}, "value_correct": right}
        return {"category": "needs_visual", "answer": answer}

    run = {
        "cases": [
            case(None, False, True),
            case(None, False, False),
            case(None, True, False),
            case("quote", False, True),
        ]
    }
    assert coverage.pictures_flagged(run) == (2, 1, 1)


@pytest.mark.parametrize(
    ("gold", "direction"),
    [
        ("No the operating margins of Adobe have recently declined from 36.8% in FY 2021", "down"),
        ("Yes, the FCF conversion (using net income as the denominator) for Adobe has improved", "up"),
        ("No. Microsoft decreased its debt by $2.5bn in FY 2023 vs FY 2022.", "down"),
        ("The effective tax rate of Corning has changed from 20% in FY2021 to 23% in FY 2022.", "up"),
        ("Pepsico experienced a strong start to FY2023.", None),
    ],
)
def test_statements_reads_the_gold_answers_direction(gold: str, direction: str | None) -> None:
    from benchmarks.statements import gold_direction

    assert gold_direction(gold) == direction
