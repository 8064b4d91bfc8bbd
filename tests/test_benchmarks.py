"""The benchmarks are a package run as `python -m benchmarks.NAME` from the repository root: every
module imports, none edits `sys.path`, their imports run one way, and the README names each."""

from __future__ import annotations

import ast
import subprocess
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

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
