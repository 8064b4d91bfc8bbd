"""Importing a part of localqa loads only what that part needs: a backend author importing
`localqa.models.base` never pays for PyMuPDF, numpy or the index (issue 20)."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("pymupdf", "fitz", "numpy", "sqlite3", "onnxruntime", "xllamacpp", "click", "fastapi")


def loaded_after(statement: str) -> set[str]:
    script = f"import sys\n{statement}\nprint(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


@pytest.mark.parametrize(
    "statement",
    [
        "import localqa",
        "import localqa.errors",
        "import localqa.models.base",
        "import localqa.types",
        "import localqa.settings",
        "import localqa.language.text",
        "import localqa.values.numbers",
    ],
)
def test_light_modules_load_nothing_heavy(statement: str) -> None:
    loaded = loaded_after(statement)
    assert "localqa" in loaded
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


def test_the_values_package_reexports_nothing() -> None:
    """`localqa.values` is a folder of one module per job (issue 41.3): importing the package runs
    none of them, so importing one (`localqa.values.numbers`) loads only what it needs."""
    assert not {m for m in loaded_after("import localqa.values") if m.startswith("localqa.values.")}
    assert not {
        m for m in loaded_after("import localqa.values.numbers") if m.startswith("localqa.values.")
    } - {"localqa.values.numbers"}


def test_top_level_names_load_on_first_use() -> None:
    loaded = loaded_after("import localqa\nprint(localqa.answer.__module__, file=sys.stderr)")
    assert {"localqa.library", "localqa.store"} <= loaded  # the API needs the index


def test_searching_loads_neither_extraction_nor_the_answer_stage() -> None:
    """A fresh `localqa search` pays for what a search runs (issue 21): not PyMuPDF (refreshing
    imports it), not the model backends, prompts and their plugin entry points (answering does),
    not the embedding runtime (a hybrid search loads it, beside the lexical side)."""
    loaded = loaded_after("import localqa.library, localqa.cli")
    assert {"localqa.retrieval.retrieve", "localqa.store", "numpy"} <= loaded
    unwanted = {
        "pymupdf",
        "localqa.extract",
        "localqa.answers.answering",
        "localqa.models",
        "onnxruntime",
        "tokenizers",
        "psycopg",
    }
    assert loaded.isdisjoint(unwanted), sorted(loaded & unwanted)


def test_no_module_shares_a_name_with_an_exported_function() -> None:
    """`import localqa.X as m` must give the module, and `mock.patch("localqa.X.name")` patch it."""
    import importlib
    import pkgutil

    import localqa

    modules = {m.name for m in pkgutil.iter_modules(localqa.__path__)}
    assert modules.isdisjoint(localqa.__all__)
    for name in localqa.__all__:
        assert callable(getattr(localqa, name)) or isinstance(getattr(localqa, name), type)
    assert importlib.import_module("localqa.answers.answering").__name__ == "localqa.answers.answering"
