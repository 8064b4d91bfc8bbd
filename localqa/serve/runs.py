"""The evaluation page's data: runs saved by `localqa eval --save` in one folder, a run's
report and a comparison of two. Only names listed in the folder are opened (no path from a
request is ever used as one)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from localqa.errors import SuiteError
from localqa.evaluate.compare import SavedRun, compare, load_run
from localqa.evaluate.records import Run
from localqa.evaluate.report import comparison_lines, describe_config, markdown, metric_rows


def list_runs(folder: Path) -> list[str]:
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.suffix == ".json" and p.is_file())


def _load(folder: Path, name: str, listed: list[str]) -> tuple[SavedRun, Run]:
    if name not in listed:
        raise SuiteError(f"no saved run named {name!r} in {folder}")
    saved = load_run(folder / name)
    try:
        data = json.loads((folder / name).read_text(encoding="utf-8"))
        # `passed` is computed from the rest of a case: saved with it, never read back.
        cases = [{k: v for k, v in case.items() if k != "passed"} for case in data["cases"]]
        return saved, Run.model_validate({**data, "cases": cases})
    except ValidationError as error:
        raise SuiteError(
            f"{folder / name}: not a run saved by this localqa ({error.error_count()} problems)"
        ) from None


def report(folder: Path, name: str, listed: list[str]) -> dict[str, Any]:
    _, run = _load(folder, name, listed)
    return {
        "name": name,
        "config": describe_config(run),
        "metrics": metric_rows(run.totals),
        "passed": f"{run.totals.passed}/{run.totals.cases}",
        "leaks": run.totals.leaks,
        "cases": [
            {"id": c.id, "passed": c.passed, "stage": c.attribution or ("leak" if c.leaks else "")}
            for c in run.cases
        ],
        "markdown": markdown(run, None),
    }


def comparison(folder: Path, before: str, after: str, listed: list[str]) -> dict[str, Any]:
    old, _ = _load(folder, before, listed)
    new, run = _load(folder, after, listed)
    return {
        "before": before,
        "after": after,
        "lines": comparison_lines(compare(old, new, before)),
        "metrics": metric_rows(run.totals),
    }
