"""The committed suites in evals/ keep their shape and stay green retrieval-only, on both index
backends, with identical runs.

library is scored against the session index of the sample library (its documents are pdfs/);
lab, company and tenants carry their own docs/ (with a PostgreSQL --db, indexed into a temporary
schema in that database). "Green" means exit status 0 (no gate fails) and every failing case is
one the suite marks `known_failure`, so a new failure cannot hide.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from backends import BOTH, SAMPLE_PDFS, NewIndex
from click.testing import CliRunner
from test_evaluate import bypass_eligibility

from localqa.cli import cli
from localqa.indexing.index import refresh_index
from localqa.store import Db

BACKENDS = BOTH
REPO = Path(__file__).resolve().parent.parent
EVALS = REPO / "evals"


def raw_cases(name: str) -> list[dict[str, Any]]:
    data = tomllib.loads((EVALS / name / "cases.toml").read_text(encoding="utf-8"))
    cases: list[dict[str, Any]] = data["case"]
    return cases


def run_json(runner: CliRunner, *args: str | Path) -> tuple[int, dict[str, Any], str]:
    result = runner.invoke(cli, ["eval", *map(str, args), "--json"])
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout), result.stderr


@pytest.mark.parametrize(
    ("name", "least", "most"),
    [("library", 20, None), ("lab", 10, 10), ("company", 10, 10), ("tenants", 85, None)],
)
def test_suite_size(name: str, least: int, most: int | None) -> None:
    count = len(raw_cases(name))
    assert count >= least
    if most is not None:
        assert count <= most


def test_tenant_cases_state_their_caller_and_cover_both_tenants() -> None:
    cases = raw_cases("tenants")
    unstated = [c["id"] for c in cases if "tenant" not in c or "role" not in c]
    assert unstated == []
    tenants = {c["tenant"] for c in cases}
    assert {"acme", "globex"} <= tenants
    # both tenants are asked answerable questions, not only no-answer ones
    for tenant in ("acme", "globex"):
        assert any(c["tenant"] == tenant and c["expect"] for c in cases), tenant


@pytest.mark.parametrize("name", ["library", "lab", "company", "tenants"])
def test_expected_sources_exist(name: str) -> None:
    folder = REPO / "pdfs" if name == "library" else EVALS / name / "docs"
    files = {p.name for p in folder.iterdir()}
    missing = {e["source"] for c in raw_cases(name) for e in c["expect"]} - files
    assert missing == set()


@pytest.mark.parametrize("name", ["library", "lab", "company", "tenants"])
def test_committed_suite_is_green_retrieval_only(runner: CliRunner, library_db: Db, name: str) -> None:
    code, run, stderr = run_json(runner, EVALS / name, "--db", library_db)

    assert code == 0, stderr
    assert stderr == ""
    assert run["totals"]["leaks"] == 0
    assert all(case["leaks"] == [] for case in run["cases"])
    assert run["totals"]["cases"] == len(raw_cases(name))
    unexpected = [c["id"] for c in run["cases"] if c["attribution"] and not c["known_failure"]]
    assert unexpected == [], "failing cases not marked known_failure"


def test_committed_tenants_suite_catches_a_bypassed_filter(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, new_index: NewIndex
) -> None:
    bypass_eligibility(monkeypatch)

    code, run, stderr = run_json(runner, EVALS / "tenants", "--db", new_index())

    assert code == 1
    assert stderr.startswith("Error: gate failed: ") and "leak" in stderr
    [pol12] = [c for c in run["cases"] if c["id"] == "acme-pol12-hotel-id"]
    leaked = {(lk["tenant"], lk["doc_id"]) for lk in pol12["leaks"]}
    assert ("globex", "globex/globex-travel-policy") in leaked


@pytest.mark.parametrize("name", ["lab", "company"])
def test_heading_chunking_beats_body_chunking(runner: CliRunner, name: str) -> None:
    hit = {}
    for chunking in ("body", "heading"):
        code, run, stderr = run_json(runner, EVALS / name, "--chunking", chunking)
        assert code == 0, stderr
        hit[chunking] = run["totals"]["hit_at_1"]
        assert hit[chunking]["denominator"] == 10

    assert hit["heading"]["value"] > hit["body"]["value"]


def test_library_and_tenants_suites_give_identical_runs_on_both_backends(
    runner: CliRunner, postgres: Any, tmp_path: Path
) -> None:
    """Every case's candidates, ranks, scores and metrics, to the last bit: only the run's time
    and the index it names differ."""
    sqlite_db = tmp_path / "library.sqlite3"
    postgres_db = postgres.create_database()
    for db in (sqlite_db, postgres_db):
        assert not refresh_index(SAMPLE_PDFS, db, embed=False).failed
    for name in ("library", "tenants"):
        runs = []
        for db in (sqlite_db, postgres_db):
            code, run, stderr = run_json(runner, EVALS / name, "--db", db)
            assert code == 0, stderr
            assert run["totals"]["leaks"] == 0
            runs.append(run)
        on_sqlite, on_postgres = runs
        assert on_sqlite["config"].pop("index") != on_postgres["config"].pop("index")
        for run in runs:
            del run["config"]["created"]
        assert on_postgres == on_sqlite


# Abstention on the session index, built without embeddings (lexical retrieval): issue 49 measured
# 11/12 and 36/38 there (9/12 and 30/38 before), the same with hybrid retrieval (8/12, 24/38 before).
@pytest.mark.parametrize(("name", "least"), [("library", (11, 12)), ("tenants", (36, 38))])
def test_committed_suite_holds_its_answer_stage_with_extractive(
    runner: CliRunner, library_db: Db, name: str, least: tuple[int, int]
) -> None:
    """`make eval-gates` (issue 49): the suites hold the answer stage to themselves. With the
    extractive backend no no-answer case is shown a quote and no stated value is wrong, but for
    the cases marked known_failure, and abstention is at least where issue 49 left it."""
    code, run, stderr = run_json(runner, EVALS / name, "--db", library_db, "--model", "extractive")

    assert code == 0, stderr
    assert run["holds_answers"] is True and run["totals"]["answer_stage"] == 0
    abstention = run["totals"]["abstention"]
    assert (abstention["numerator"], abstention["denominator"]) >= least
    assert abstention["denominator"] == least[1]
