"""`localqa eval` end to end: gates and exit status, recorded answers, a (fake) model, saved runs,
comparisons, reports, coverage and one-line errors for malformed suites.

The small suites come from test_evaluate.py (documents and cases in the test); the lab suite's
body-vs-heading chunking lever gives a real before/after with eight fixed cases.
"""

from __future__ import annotations

import json
import re
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from test_evaluate import (
    HANDBOOK_CASES,
    HANDBOOK_CATALOG,
    HANDBOOK_DOCS,
    TENANT_CASES,
    TENANT_CATALOG,
    TENANT_DOCS,
    answering_with,
    bypass_eligibility,
    figure,
    reply,
    write_suite,
)

from localqa.answers.prompts import prompt_hash
from localqa.cli import cli
from localqa.errors import ModelError
from localqa.settings import RetrievalSettings

REPO = Path(__file__).resolve().parent.parent
LAB = REPO / "evals" / "lab"
LIBRARY = REPO / "evals" / "library"
LAB_HEADING_CASES = [
    "lab-ns7-calibration",
    "lab-r17-storage",
    "lab-qx41-threshold",
    "lab-p204-washes",
    "lab-cf9-rotor",
    "lab-s88-thaw",
    "lab-rd5-wavelength",
    "lab-drift-escalation-owner",
]
THAW_CITATION = {
    "source": "northstar-protocols.md",
    "page": None,
    "kind": "prose",
    "section": None,
    "table": None,
    "row": None,
    "paragraph": 6,
    "effective": None,
}


def evaluate(runner: CliRunner, *args: str | Path) -> Result:
    return runner.invoke(cli, ["eval", *map(str, args)])


def one_error_line(result: Result) -> str:
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


@pytest.fixture
def tenant_suite(tmp_path: Path) -> Path:
    return write_suite(tmp_path / "tenants", TENANT_DOCS, TENANT_CATALOG, TENANT_CASES)


@pytest.fixture
def handbook_suite(tmp_path: Path) -> Path:
    return write_suite(tmp_path / "handbook", HANDBOOK_DOCS, HANDBOOK_CATALOG, HANDBOOK_CASES)


# --- The leak gate ---------------------------------------------------------------------------------


def test_eval_exits_zero_without_leaks(runner: CliRunner, tenant_suite: Path) -> None:
    result = evaluate(runner, tenant_suite)

    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert "Tenant/access leaks:  0 (gate: must be 0)" in result.stdout


def test_eval_exits_one_when_the_eligibility_filter_is_bypassed(
    runner: CliRunner, tenant_suite: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bypass_eligibility(monkeypatch)
    saved = tmp_path / "run.json"

    result = evaluate(runner, tenant_suite, "--save", saved)

    assert result.exit_code == 1, result.output
    error = one_error_line(result)
    assert re.fullmatch(r"Error: gate failed: \d+ tenant/access leak\(s\)", error), error
    assert "FAIL  acme-pol12" in result.stdout
    run = json.loads(saved.read_text())
    [acme] = [c for c in run["cases"] if c["id"] == "acme-pol12"]
    globex = next(leak for leak in acme["leaks"] if leak["tenant"] == "globex")
    assert {"tenant": "globex", "doc_id": "globex/globex-travel", "source": "globex-travel.md"}.items() <= (
        globex.items()
    )
    assert acme["passed"] is False
    assert run["totals"]["leaks"] >= 2


# --- Recorded answers ------------------------------------------------------------------------------


def write_answers(path: Path, *lines: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_recorded_may_to_must_answer_fails_the_gate(runner: CliRunner, tmp_path: Path) -> None:
    answers = write_answers(
        tmp_path / "must.jsonl",
        {"id": "lab-s88-thaw", "quote": "The sample must be thawed once.", "citation": THAW_CITATION},
    )

    result = evaluate(runner, LAB, "--answers", answers, "--json")

    assert result.exit_code == 1, result.output
    assert one_error_line(result) == "Error: gate failed: 1 unverified quote(s) shown"
    run = json.loads(result.stdout)
    [thaw] = [c for c in run["cases"] if c["id"] == "lab-s88-thaw"]
    assert thaw["answer"]["verified"] is False
    assert thaw["answer"]["shown_unverified"] is True
    assert thaw["answer"]["contains_phrase"] is False
    assert thaw["attribution"] == "generation"
    assert run["totals"]["unverified_shown"] == 1
    assert run["config"]["answers_file"] == str(answers)


def test_recorded_verbatim_answer_is_grounded(runner: CliRunner, tmp_path: Path) -> None:
    answers = write_answers(
        tmp_path / "may.jsonl",
        {"id": "lab-s88-thaw", "quote": "The sample may be thawed once.", "citation": THAW_CITATION},
    )

    result = evaluate(runner, LAB, "--answers", answers, "--json")

    assert result.exit_code == 0, result.output
    run = json.loads(result.stdout)
    [thaw] = [c for c in run["cases"] if c["id"] == "lab-s88-thaw"]
    assert thaw["answer"]["verified"] is True
    assert thaw["answer"]["shown_unverified"] is False
    assert thaw["answer"]["citation_correct"] is True
    assert thaw["answer"]["contains_phrase"] is True
    assert thaw["attribution"] is None and thaw["leaks"] == []
    assert run["totals"]["verified"] == {"numerator": 1, "denominator": 1, "value": 1.0}
    assert run["totals"]["unverified_shown"] == 0


def test_malformed_answers_line_is_a_one_line_error(runner: CliRunner, tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        json.dumps({"id": "lab-s88-thaw", "quote": None, "citation": None}) + "\n{not json\n",
        encoding="utf-8",
    )

    result = evaluate(runner, LAB, "--answers", answers)

    assert result.exit_code == 1
    error = one_error_line(result)
    assert error.startswith(f"Error: {answers}, line 2: not a recorded answer")


def test_model_and_answers_together_is_a_usage_error(runner: CliRunner, tmp_path: Path) -> None:
    answers = write_answers(tmp_path / "a.jsonl", {"id": "x"})

    result = evaluate(runner, LAB, "--model", "extractive", "--answers", answers)

    assert result.exit_code == 2
    assert "not both" in result.stderr


# --- A model (the fake one, registered as `--model fake`) ----------------------------------------


def test_paraphrasing_model_is_refused_and_the_gate_holds(
    runner: CliRunner, handbook_suite: Path, fake_model: Any, tmp_path: Path
) -> None:
    fake_model.enqueue(
        json.dumps({"source": "P1", "quote": "Book loans last three weeks."}),  # ignoring the schema
        json.dumps({"source": None, "sentence": None}),
    )
    saved = tmp_path / "run.json"

    result = evaluate(runner, handbook_suite, "--model", "fake", "--save", saved)

    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert "model fake:fake" in result.stdout
    assert "Unverified shown:     0 (gate: must be 0)" in result.stdout
    run = json.loads(saved.read_text())
    assert run["totals"]["unverified_shown"] == 0
    [loan] = [c for c in run["cases"] if c["id"] == "loan-length"]
    assert loan["answer"]["quote"] is None
    assert loan["answer"]["reason"] == "the model's reply is not the expected JSON"
    assert loan["attribution"] == "generation"
    assert run["config"]["model"] == {"backend": "fake", "name": "fake"}
    assert len(fake_model.history) == 2


def test_eval_exits_one_when_the_model_fails(
    runner: CliRunner, handbook_suite: Path, fake_model: Any, tmp_path: Path
) -> None:
    fake_model.always(ModelError("cannot reach the backend at http://127.0.0.1:11434; is it running?"))
    saved = tmp_path / "run.json"

    result = evaluate(runner, handbook_suite, "--model", "fake", "--save", saved)

    assert result.exit_code == 1, result.output
    # two cases retrieve something and so ask the model: loan-length and renewals-said-absent
    assert one_error_line(result) == (
        "Error: the model failed on 2 case(s); see the answers' reasons "
        "(is the backend running and the model installed?)"
    )
    run = json.loads(saved.read_text())
    assert run["totals"]["model_errors"] == 2
    assert run["totals"]["leaks"] == 0 and run["totals"]["unverified_shown"] == 0  # no gate failed
    [loan] = [c for c in run["cases"] if c["id"] == "loan-length"]
    assert loan["answer"]["reason"] == "cannot reach the backend at http://127.0.0.1:11434; is it running?"
    assert loan["answer"]["model_failed"] is True


def test_eval_exits_one_when_an_unchecked_figure_is_shown(
    runner: CliRunner, handbook_suite: Path, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    answering_with(monkeypatch, figure(text="27"))  # 5 + 21 is not 27

    result = evaluate(runner, handbook_suite, "--model", "fake")

    assert result.exit_code == 1, result.output
    # loan-length and renewals-said-absent retrieve something and so are answered
    assert one_error_line(result) == "Error: gate failed: 2 unchecked figure(s) shown"
    assert "Unchecked figures shown: 2 (gate: must be 0)" in result.stdout.splitlines()


def test_eval_with_a_working_model_reports_no_model_errors(
    runner: CliRunner, handbook_suite: Path, fake_model: Any
) -> None:
    fake_model.enqueue(reply(None, None), reply(None, None))

    result = evaluate(runner, handbook_suite, "--model", "fake", "--json")

    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert json.loads(result.stdout)["totals"]["model_errors"] == 0


# --- --save, --compare, --report --------------------------------------------------------------------


def test_save_writes_configuration_and_per_case_records(runner: CliRunner, tmp_path: Path) -> None:
    saved = tmp_path / "runs" / "body.json"

    result = evaluate(runner, LAB, "--chunking", "body", "-k", "3", "--save", saved)

    assert result.exit_code == 0, result.output
    run = json.loads(saved.read_text())
    config = run["config"]
    # every retrieval setting is recorded: the options given, the defaults for the rest, and the
    # retriever that ran (the default, auto, is lexical on an index without embeddings)
    expected = RetrievalSettings(retriever="lexical", k=3, chunking="body").model_dump(mode="json")
    assert config["retrieval"] == expected
    assert {
        "retriever": "lexical",
        "k": 3,
        "k1": 1.2,
        "b": 0.75,
        "neighbour": 0.2,
        "chunking": "body",
    }.items() <= config["retrieval"].items()
    assert config["model"] is None
    assert config["prompt_hash"] == prompt_hash()
    assert re.fullmatch(r"[0-9a-f]{16,}", config["corpus_digest"])
    assert config["localqa_version"] == version("localqa")
    assert config["suite"] == str(LAB)
    assert [c["id"] for c in run["cases"]][:2] == ["lab-ns7-calibration", "lab-r17-storage"]
    for case in run["cases"]:
        assert {"id", "parts", "candidates", "retrieval", "answer", "leaks", "attribution", "passed"} <= (
            case.keys()
        )
        assert case["answer"] is None and case["leaks"] == []
        [part] = case["parts"]
        # candidates are not nested; nothing here names a document
        assert part == {"question": case["question"], "note": None, "routed_to": [], "route": None}
        assert {c["part"] for c in case["candidates"]} == {1}
        ranks = [c["rank"] for c in case["candidates"]]
        assert ranks == list(range(1, len(ranks) + 1)) and len(ranks) <= 3
        scores = [c["score"] for c in case["candidates"]]
        assert scores == sorted(scores, reverse=True)
        assert {"part", "source", "page", "kind", "paragraph", "text"} <= case["candidates"][0].keys()
        assert {"hit_at_1", "recall", "reciprocal_rank", "precision"} <= case["retrieval"].keys()
    [ns7] = [c for c in run["cases"] if c["id"] == "lab-ns7-calibration"]
    assert ns7["attribution"] == "retrieval" and ns7["passed"] is False
    assert run["totals"]["attribution"] == {"retrieval": 8, "generation": 0, "contract": 0}


def test_saved_case_has_the_documented_candidates_list(runner: CliRunner, tmp_path: Path) -> None:
    saved = tmp_path / "run.json"
    assert evaluate(runner, LAB, "--save", saved).exit_code == 0

    case = json.loads(saved.read_text())["cases"][0]

    assert case["parts"] == [{"question": case["question"], "note": None, "routed_to": [], "route": None}]
    assert case["candidates"], "the lab's first case retrieves something"
    assert [(c["part"], c["rank"]) for c in case["candidates"]] == [
        (1, rank) for rank in range(1, len(case["candidates"]) + 1)
    ]


def test_candidates_of_a_compound_question_carry_their_part_number(
    runner: CliRunner, library_db: Path
) -> None:
    result = evaluate(runner, LIBRARY, "--db", library_db, "--json")

    assert result.exit_code == 0, result.output
    [compound] = [c for c in json.loads(result.stdout)["cases"] if c["id"] == "compound-three-parts"]
    assert len(compound["parts"]) == 3
    assert all(p.keys() == {"question", "note", "routed_to", "route"} for p in compound["parts"])
    numbers = [c["part"] for c in compound["candidates"]]
    assert numbers == sorted(numbers) and set(numbers) == {1, 2, 3}  # grouped by part, in part order
    for number in (1, 2, 3):
        ranks = [c["rank"] for c in compound["candidates"] if c["part"] == number]
        assert ranks == list(range(1, len(ranks) + 1))


def test_compare_body_to_heading_lists_fixed_cases_and_report(runner: CliRunner, tmp_path: Path) -> None:
    body, heading, report = tmp_path / "body.json", tmp_path / "heading.json", tmp_path / "out" / "r.md"
    assert evaluate(runner, LAB, "--chunking", "body", "--save", body).exit_code == 0

    result = evaluate(
        runner, LAB, "--chunking", "heading", "--compare", body, "--save", heading, "--report", report
    )

    assert result.exit_code == 0, result.output
    assert f"Compared with {body}:" in result.stdout
    assert f"  fixed (8): {', '.join(LAB_HEADING_CASES)}" in result.stdout
    assert "  unchanged (passing): 2" in result.stdout
    assert "regressed" not in result.stdout and "still blocking" not in result.stdout
    assert "  config retrieval.chunking: body -> heading" in result.stdout
    text = report.read_text()
    assert text.startswith("# localqa evaluation report")
    assert "Configuration: suite " in text and "chunking=heading" in text and "prompt " in text
    assert "## Totals" in text and "| Retrieval hit@1 | 1.000  (10/10) |" in text
    assert "| Tenant/access leaks (gate) | 0 |" in text
    assert "## Before / after" in text and f"- fixed (8): {', '.join(LAB_HEADING_CASES)}" in text
    assert "- config retrieval.chunking: body -> heading" in text
    assert "## Failures by stage" in text and "- **retrieval**: 0" in text
    assert "| case | result | stage | expected | retrieved #1 | text |" in text
    for case_id in LAB_HEADING_CASES:
        assert re.search(rf"^\| {case_id} \| pass \| ", text, re.MULTILINE), case_id


def test_compare_reports_a_regression_and_still_blocking_cases(runner: CliRunner, tmp_path: Path) -> None:
    before, report = tmp_path / "before.json", tmp_path / "report.md"
    assert evaluate(runner, LAB, "--chunking", "body", "--save", before).exit_code == 0
    run = json.loads(before.read_text())
    for case in run["cases"]:
        if case["id"] == "lab-ns7-calibration":  # pretend it passed before
            case["attribution"], case["passed"] = None, True
    before.write_text(json.dumps(run))

    result = evaluate(runner, LAB, "--chunking", "body", "--compare", before, "--report", report)

    assert result.exit_code == 0, result.output  # a regression is not a gate
    still = [i for i in LAB_HEADING_CASES if i != "lab-ns7-calibration"]
    assert "  regressed (1): lab-ns7-calibration" in result.stdout
    assert f"  still blocking (7): {', '.join(still)}" in result.stdout
    assert "  unchanged (passing): 2" in result.stdout
    assert "fixed" not in result.stdout
    text = report.read_text()
    assert "- regressed (1): lab-ns7-calibration" in text
    assert "- still blocking (7):" in text
    assert "- **retrieval**: 8" in text
    assert re.search(r"^\| lab-ns7-calibration \| \*\*fail\*\* \| retrieval \| ", text, re.MULTILINE)


@pytest.mark.parametrize(
    "content",
    [
        pytest.param('{"cases": []}', id="no-config"),
        pytest.param(
            '{"config": {}, "cases": [{"id": "a", "attribution": null, "leaks": []}]}', id="no-passed"
        ),
        pytest.param('{"config": {}, "cases": [{"id": "a", "passed": "yes"}]}', id="passed-not-a-bool"),
        pytest.param('{"config": {}, "cases": [{"passed": true}]}', id="no-id"),
        pytest.param('{"config": [], "cases": []}', id="config-not-a-table"),
        pytest.param("not json", id="not-json"),
    ],
)
def test_compare_with_a_file_that_is_not_a_run(runner: CliRunner, tmp_path: Path, content: str) -> None:
    bogus = tmp_path / "bogus.json"
    bogus.write_text(content)

    result = evaluate(runner, LAB, "--compare", bogus)

    assert result.exit_code == 1
    assert one_error_line(result).startswith(f"Error: {bogus}: not a run saved by 'localqa eval --save'")


# --- --coverage -------------------------------------------------------------------------------------


def test_coverage_shows_what_one_search_misses_on_the_compound_question(
    runner: CliRunner, library_db: Path
) -> None:
    result = evaluate(runner, LIBRARY, "--coverage", "--db", library_db)

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "Coverage by expected record (k=5): one search / per-part search"
    compound = [line for line in lines if "compound-three-parts:" in line]
    assert len(compound) == 3
    assert all(re.match(r"  (found |MISSED) / found   compound-three-parts: ", line) for line in compound)
    missed = [line for line in compound if line.startswith("  MISSED")]
    assert any("library-handbook.pdf, page 4, kind ocr" in line for line in missed)
    assert any("library-handbook.pdf, page 1, kind prose, paragraph 3" in line for line in missed)
    assert re.search(r"^One search found \d+/(\d+); per-part search found \1/\1\.$", lines[-1]), lines[-1]


def test_coverage_without_compound_questions(runner: CliRunner, handbook_suite: Path) -> None:
    result = evaluate(runner, handbook_suite, "--coverage")

    assert result.exit_code == 0
    assert result.stdout.startswith("No compound question in this suite")


# --- Malformed suites: one line naming the file and the case -------------------------------------

CASE = """
[[case]]
id = "{id}"
as_of = 2026-07-01
question = "How long is a loan?"
{extra}
"""


def case_text(case_id: str, extra: str = "expect = []") -> str:
    return CASE.format(id=case_id, extra=extra)


@pytest.mark.parametrize(
    ("cases", "expected"),
    [
        (None, r"Error: {suite}: no cases\.toml; .*"),
        ('[[case]\nid = "x"\n', r"Error: {file}: not valid TOML \(.*\)"),
        (case_text("no-expect", ""), r"Error: {file}: case no-expect: expect: Field required"),
        (
            case_text("twice") + case_text("once") + case_text("twice"),
            r"Error: {file}: duplicate case id\(s\) twice; ids must be unique",
        ),
        (
            case_text("bad-role", 'expect = []\nrole = "admin"'),
            r"Error: {file}: case bad-role: role: .*role must be one of public, staff",
        ),
        (case_text("typo", "expected = []"), r"Error: {file}: case typo: expect(ed)?: .*"),
        (
            case_text("bad-expect", 'expect = [{ source = "a.md", line = 3 }]'),
            r"Error: {file}: case bad-expect: expect\.0\.line: Extra inputs are not permitted",
        ),
        ("# nothing here\n", r"Error: {file}: no \[\[case\]\] entries"),
    ],
    ids=["missing", "invalid-toml", "missing-expect", "duplicate", "bad-role", "typo", "bad-expect", "empty"],
)
def test_malformed_suite_is_a_one_line_error(
    runner: CliRunner, tmp_path: Path, cases: str | None, expected: str
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    file = suite / "cases.toml"
    if cases is not None:
        file.write_text(cases, encoding="utf-8")

    result = evaluate(runner, suite)

    assert result.exit_code == 1, result.output
    error = one_error_line(result)
    assert re.fullmatch(expected.format(suite=re.escape(str(suite)), file=re.escape(str(file))), error), error


EXPECTS = 'expect = [{ source = "handbook.md" }]\n'
WRITE = 'write value = "45 minutes", value = 5409 or value = ["a", "b"]'
SCALES = "thousand, thousands, k, million, millions, mn, mm, billion, billions, bn, trillion, trillions"
BAD_VALUES = {
    "bool": (EXPECTS + "value = true", f"value: Value error, True is neither text nor a number; {WRITE}"),
    "table": (
        EXPECTS + "value = { minutes = 45 }",
        f"value: Value error, {{'minutes': 45}} is neither text nor a number; {WRITE}",
    ),
    "blank": (
        EXPECTS + 'value = "  "',
        "value: Value error, the value is blank; write the text the answer's value must hold",
    ),
    "empty-list": (
        EXPECTS + "value = []",
        "value: Value error, the list is empty; list the items the answer must give",
    ),
    "nan": (EXPECTS + "value = nan", "value: Value error, nan is not a finite number"),
    "nothing-expected": (
        "expect = []\nvalue = 5",
        "value: Value error, a case that expects nothing (expect = []) has no value; remove it",
    ),
    "no-value": (
        EXPECTS + "tolerance = 0.05",
        "tolerance: Value error, tolerance applies to a number, and the case has no value",
    ),
    "text-value": (
        EXPECTS + 'value = "45 minutes"\ndecimals = 1',
        "decimals: Value error, decimals applies to a number, and the case has a text value ('45 minutes')",
    ),
    "tolerance": (
        EXPECTS + "value = 5409\ntolerance = 5",
        "tolerance: Value error, 5.0 is not a relative tolerance; give a share from 0 to 1 (0.01 is 1 %)",
    ),
    "decimals": (
        EXPECTS + "value = 5409\ndecimals = -1",
        "decimals: Value error, -1 is not a number of decimal places; give 0 to 12",
    ),
    "scale": (
        EXPECTS + 'value = 5409\nscale = "dozens"',
        f"scale: Value error, 'dozens' is not a scale; use one of {SCALES}",
    ),
}


@pytest.mark.parametrize(("extra", "message"), BAD_VALUES.values(), ids=BAD_VALUES.keys())
def test_a_bad_value_names_the_file_the_case_and_the_field(
    runner: CliRunner, tmp_path: Path, extra: str, message: str
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "cases.toml").write_text(case_text("v", extra), encoding="utf-8")

    result = evaluate(runner, suite)

    assert result.exit_code == 1, result.output
    assert one_error_line(result) == f"Error: {suite / 'cases.toml'}: case v: {message}"


def test_blank_question_in_a_suite_names_the_file_and_case(runner: CliRunner, tmp_path: Path) -> None:
    suite = write_suite(
        tmp_path / "blank",
        HANDBOOK_DOCS,
        HANDBOOK_CATALOG,
        case_text("blank-q").replace("How long is a loan?", " "),
    )

    result = evaluate(runner, suite)

    assert result.exit_code == 1
    error = one_error_line(result)
    assert (
        error == f"Error: {suite / 'cases.toml'}: case blank-q: question: Value error, the question is blank"
    )


def test_blank_part_in_a_suite_names_the_file_and_case(runner: CliRunner, tmp_path: Path) -> None:
    suite = write_suite(
        tmp_path / "blank",
        HANDBOOK_DOCS,
        HANDBOOK_CATALOG,
        case_text("blank-part", 'expect = []\nparts = ["How long is a loan?", "  "]'),
    )

    result = evaluate(runner, suite)

    assert result.exit_code == 1
    error = one_error_line(result)
    assert error == f"Error: {suite / 'cases.toml'}: case blank-part: parts: Value error, a part is blank"
