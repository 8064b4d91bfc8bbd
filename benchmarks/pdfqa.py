"""Page-level retrieval on real PDFs (FinanceBench and MMLongBench-Doc dev splits) and SciFact
nDCG@10, measured through `localqa eval` as a user runs it.

    python -m benchmarks.pdfqa [--sets financebench,financebench2,mmlongbench,mmlongbench2,scifact]
                               [--retriever R] [-k 5] [--model NAME] [--bench DIR] [--cache DIR]
                               [--json OUT]

Each set becomes a localqa suite (`cases.toml`) and a folder of documents under `--cache`
(default `~/.cache/localqa-bench`, never the repository). The documents are indexed with
`localqa index` in a subprocess and the suite is scored with `localqa eval SUITE --db INDEX
--save RUN.json` in a subprocess, so the figures are what a user gets from the command line with
its defaults (`--retriever` and `-k` are passed through when given).

Figures, each with its numerator and denominator:

- **page hit@1 / hit@5**: a candidate ranked 1 (or within the first 5) in any question part lies
  on an evidence page. Evidence pages: FinanceBench `evidence_page_num` is 0-based (page n+1 in
  localqa), MMLongBench-Doc `evidence_pages` is 1-based. Measured in **one shared index** of all
  the set's PDFs, **scoped** (the shared index, each case asked within its own document:
  `documents = [...]`, as `--doc` does) and **per document**. Per document uses one index whose
  catalog puts every document in a tenant of its own, and each case asks as its document's
  tenant: eligibility, and with it every BM25 statistic (which comes from eligible passages only),
  then covers that one document, exactly as an index of that document alone would; scoped must
  give the same figures.
- **routed**: how many questions the shared index searched mainly in some documents because they
  name them (`localqa.question.routing`; each part's `routed_to` in the run), and how many of those routes
  include the question's own document. SciFact's claims name no document: 0 is the right count.
- **abstained**: the share of answerable questions with no candidate at all, and of unanswerable
  ones (MMLongBench-Doc `unanswerable`, `expect = []`), where abstaining is right.
- MMLongBench-Doc `needs_visual` questions (evidence is a chart or figure) are scored and reported
  on their own line, never mixed into the text/table figures.
- **values** (with `--model`): each answer becomes its case's `value` and `localqa eval` judges
  the answer's value (`localqa/evaluate/expected_value.py`), beside the page-level figures.
  FinanceBench: the 21 metrics questions' figures, in the scale and rounding the question states
  ("$1577.00" asked "in USD millions" is 1577 in millions, met by a cell of a table in millions;
  "$0.40" in USD billions by 400 in millions; "1.9%" by 1.9 % or 0.019). MMLongBench-Doc: its
  answer formats as its own `eval/eval_score.py` reads them: Int exact, Float within 1 % (a
  percentage or its ratio), Str and List as normalised text (a List's items in any order), where
  Str is held to the suites' text rule (the value holds the answer and is at most twice as long),
  not to MMLongBench-Doc's ANLS. Reported: value correct with its denominator, the wrong values by
  cause (retrieval, quote, span, arithmetic), the answer stage's losses and rescues (retrieval's
  first passage on an evidence page and the answer citing elsewhere, and the reverse), the
  unchecked figures and unchecked list items shown (each must be 0), and the list and count
  answers (`value.items`) apart: how many and how many correct, with MMLongBench-Doc's List and
  Int formats' value correct each.
- **SciFact nDCG@10**: the 5,183 abstracts as Markdown files (`# title` then the abstract), the
  300 test claims each as one explicit part (a claim is not a compound question; clause splitting
  would leave no single ranking to score), k=10, scored BEIR-style (binary qrels, log2 discount).

Indexes are cached: the key is the documents' SHA-256, the catalog, the index options and a hash
of localqa's extraction and indexing code (`localqa/extract/*.py`, `localqa/indexing/index.py`,
`localqa/question/periods.py`, `localqa/store/`; `localqa/retrieval/embeddings.py` too when
embeddings are computed). After a retrieval-only change a re-run reuses the index and only re-runs
`eval`. Build times are printed (and marked "reused" when nothing was built).

Catalog: every document gets `series = <file stem>` and `access = "public"`. Without it, file
names such as `PEPSICO_2023_8K_dated-2023-05-05.pdf` and `..._dated-2023-05-30.pdf` read as two
versions of one series and the earlier one is superseded (invisible), which would measure the
file-name rule, not retrieval.

Exits 0 with a message when the benchmark data is absent.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from benchmarks.common import CACHE, FOLDERS, LOADERS, REPO, BenchSet, Case, bench_folder, ndcg_at

CHECKOUT = [REPO]  # the localqa measured: this one, or --checkout DIR (an older worktree)
SETS = ("financebench", "financebench2", "mmlongbench", "mmlongbench2", "scifact")
AS_OF = "2026-01-01"  # every document is undated for localqa (catalog: no effective date)
# Code whose change changes what an index holds (extraction, passage writing, schema).
INDEX_CODE = (
    "localqa/extract/*.py",
    "localqa/indexing/index.py",
    "localqa/question/periods.py",
    "localqa/schema.py",
    "localqa/store/**/*.py",
    "localqa/language/tokenizer.py",
)
EMBED_CODE = ("localqa/retrieval/embeddings.py",)
HITS_AT = (1, 5)
SCIFACT_K = 10


# ---------------------------------------------------------------------------------------------
# Values: each answer as the case's `value` (`localqa.evaluate.expected_value` judges it)

_SCALE = re.compile(r"\bin\s+(?:usd\s+|us\s+dollars?\s+|\$\s*)?(thousand|million|billion)s?\b", re.IGNORECASE)
_ROUNDING = re.compile(
    r"\bround\w*\s+(?:\w+\s+){0,2}?to\s+(?P<places>one|two|three|four|\d+)\s+decimal", re.IGNORECASE
)
_PLACES = {"one": 1, "two": 2, "three": 3, "four": 4}


def value_fields(case: Case) -> dict[str, Any]:
    """The case's value fields from its reference answer: FinanceBench's metrics questions (a
    figure) and MMLongBench-Doc's answers in their formats; none for the others (prose answers,
    "Not answerable")."""
    if case.answer_type == "metrics-generated":
        return number_value(case.answer, case.question) or {}
    if case.category == "unanswerable" or case.answer_type not in ("Int", "Float", "Str", "List"):
        return {}
    return mmlongbench_value(case.answer.strip(), case.answer_type, case.question)


def stated_rules(question: str) -> dict[str, Any]:
    """The scale ("in USD millions") and the rounding ("round to one decimal place") a question
    states for its figure."""
    rules: dict[str, Any] = {}
    scale = _SCALE.search(question)
    if scale:
        rules["scale"] = scale[1].lower() + "s"
    rounding = _ROUNDING.search(question)
    if rounding:
        places = rounding["places"].lower()
        rules["decimals"] = _PLACES.get(places) or int(places)
    return rules


def number_value(answer: str, question: str, tolerance: float | None = None) -> dict[str, Any] | None:
    """A figure answer ("$1577.00", "1.9%", "-3.7") as value fields, in the scale and rounding the
    question states; None when the answer is not a number alone ("GS5002", "14:04 CET")."""
    number = _number_alone(answer)
    if number is None:
        return None
    fields: dict[str, Any] = {"value": float(number), **stated_rules(question)}
    if answer.strip().endswith("%"):
        fields["unit"] = "%"
    if tolerance is not None:
        fields["tolerance"] = tolerance
    return fields


def mmlongbench_value(answer: str, kind: str, question: str) -> dict[str, Any]:
    """An answer in MMLongBench-Doc's formats, as its own evaluation reads them
    (`eval/eval_score.py`): Int exact, Float within 1 % (a percentage or its ratio), Str and List
    as normalised text (a List's items in any order, numbers as numbers). An Int that is no
    number ("14:04 CET") is text."""
    if kind in ("Int", "Float"):
        found = number_value(answer, question, tolerance=0 if kind == "Int" else None)
        if found is not None:
            return found
    if kind == "List":
        items = _listed(answer)
        numbers = [_number_alone(i) for i in items]
        if all(n is not None for n in numbers):
            return {"value": [float(n) for n in numbers if n is not None], "tolerance": 0}
        return {"value": items}
    return {"value": answer} if answer else {}


def _number_alone(text: str) -> Decimal | None:
    """The number `text` is, a currency sign, a percent sign and thousands commas aside, as
    MMLongBench-Doc's `isfloat` reads its answers; None when it holds anything else."""
    from localqa.evaluate.expected_value import number_in

    if not re.fullmatch(r"\s*\(?\s*[-\u2212]?\s*\$?\s*[\d,]*\.?\d+\s*%?\s*\)?\s*", text):
        return None
    return number_in(text)


def _listed(answer: str) -> list[str]:
    """The items of a list answer ("['GS5002', 'GS6001']"), read as a literal, never evaluated; an
    answer that is no list is one item."""
    import ast

    try:
        found = ast.literal_eval(answer)
    except (ValueError, SyntaxError):
        return [answer]
    items = found if isinstance(found, list) else [found]
    return [str(i).strip() for i in items if str(i).strip()]


def toml_value(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, str):
        return toml_string(value)
    return repr(value)


# ---------------------------------------------------------------------------------------------
# Suites, documents and indexes on disk


def toml_string(value: str) -> str:
    # A JSON string is a valid TOML basic string (same escapes; \uXXXX for control characters).
    return json.dumps(value, ensure_ascii=False)


def cases_toml(cases: Iterable[Case], tenants: dict[str, str] | None, scoped: bool = False) -> str:
    """The suite: with `tenants`, each case asks as its document's tenant (per document); with
    `scoped`, each case is asked within its document (`documents = [...]`) in the shared index."""
    lines = []
    for case in cases:
        lines += ["[[case]]", f"id = {toml_string(case.id)}", f"as_of = {AS_OF}"]
        lines.append(f"question = {toml_string(case.question)}")
        if scoped:
            lines.append(f"documents = [{toml_string(case.source)}]")
        if case.parts:
            lines.append(f"parts = [{', '.join(toml_string(p) for p in case.parts)}]")
        if tenants is not None:
            lines.append(f"tenant = {toml_string(tenants[case.source])}")
        lines.append(f"category = {toml_string(case.category)}")
        lines += [f"{name} = {toml_value(value)}" for name, value in value_fields(case).items()]
        expect = ", ".join(
            f"{{ source = {toml_string(source)}, page = {page} }}" for source, page in sorted(case.pages)
        )
        lines += [f"expect = [{expect}]", ""]
    return "\n".join(lines)


def catalog_toml(names: Iterable[str], tenants: dict[str, str] | None) -> str:
    lines = []
    for name in sorted(names):
        lines += [f"[{toml_string(name)}]", f"series = {toml_string(Path(name).stem)}", 'access = "public"']
        if tenants is not None:
            lines.append(f"tenant = {toml_string(tenants[name])}")
        lines.append("")
    return "\n".join(lines)


def tenant_names(sources: Iterable[str]) -> dict[str, str]:
    return {source: f"doc{number:03d}" for number, source in enumerate(sorted(sources), start=1)}


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


_CODE_HASHES: dict[tuple[str, ...], str] = {}


def code_hash(patterns: Sequence[str]) -> str:
    """Hashed once per run: an edit made while a run is going cannot relabel its indexes."""
    key = tuple(patterns)
    if key not in _CODE_HASHES:
        _CODE_HASHES[key] = _hash_files(patterns)
    return _CODE_HASHES[key]


def _hash_files(patterns: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for pattern in patterns:
        for path in sorted(CHECKOUT[0].glob(pattern)):
            digest.update(str(path.relative_to(CHECKOUT[0])).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def write_if_changed(path: Path, data: bytes) -> None:
    if not path.exists() or path.read_bytes() != data:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


SIDECAR = re.compile(r"^(?P<stem>.+)\.page-[1-9]\d*\.ocr\.txt$")


def fill_docs(folder: Path, bench: BenchSet, catalog: str | None, linked_from: Path | None) -> None:
    """Make `folder` hold exactly the set's documents, their OCR sidecars (kept where `localqa
    ocr` wrote them, or linked from `linked_from`) and the catalog."""
    folder.mkdir(parents=True, exist_ok=True)
    wanted: set[str] = set()
    if bench.markdown is not None:
        for name, text in bench.markdown.items():
            write_if_changed(folder / name, text.encode("utf-8"))
            wanted.add(name)
    for document in bench.documents:
        target = folder / document.name
        if not target.exists() or sha256_file(target) != sha256_file(document):
            _link_or_copy(linked_from / document.name if linked_from else document, target)
        wanted.add(document.name)
    stems = {d.stem for d in bench.documents}
    if linked_from is not None:
        for sidecar in linked_from.iterdir():
            match = SIDECAR.match(sidecar.name)
            if match and match["stem"] in stems:
                target = folder / sidecar.name
                if not target.exists() or target.read_bytes() != sidecar.read_bytes():
                    _link_or_copy(sidecar, target)
    if catalog is not None:
        write_if_changed(folder / "catalog.toml", catalog.encode("utf-8"))
        wanted.add("catalog.toml")
    for stray in folder.iterdir():
        match = SIDECAR.match(stray.name)
        if stray.name not in wanted and not (match and match["stem"] in stems):
            stray.unlink()


def _link_or_copy(source: Path, target: Path) -> None:
    target.unlink(missing_ok=True)
    try:
        os.link(source, target)  # the same bytes twice cost nothing
    except OSError:
        shutil.copyfile(source, target)


def content_key(folder: Path) -> str:
    """What the documents folder holds, by name and content."""
    return sha256_bytes(
        json.dumps(sorted((p.name, sha256_file(p)) for p in folder.iterdir() if p.is_file())).encode()
    )


def ocr(folder: Path) -> tuple[float | None, int]:
    """`localqa ocr` over the folder (pages without a text layer only; existing sidecars are
    kept), skipped when it already ran on these exact PDFs. Returns the seconds it took (None:
    skipped) and how many sidecars the folder then holds."""
    pdfs = sha256_bytes(json.dumps(sorted((p.name, sha256_file(p)) for p in folder.glob("*.pdf"))).encode())
    marker = folder.parent / f"{folder.name}.ocr-done"
    seconds = None
    if not marker.exists() or marker.read_text(encoding="utf-8") != pdfs:
        started = time.perf_counter()
        result = localqa("ocr", "--pdfs", str(folder))
        if result.returncode != 0:
            raise SystemExit(
                f"Error: localqa ocr failed on {folder}: {result.stderr.strip() or result.stdout}"
            )
        seconds = time.perf_counter() - started
        marker.write_text(pdfs, encoding="utf-8")
    return seconds, sum(bool(SIDECAR.match(p.name)) for p in folder.iterdir())


def localqa(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI of this checkout (PYTHONPATH puts it before any installed localqa)."""
    path = os.pathsep.join([str(CHECKOUT[0]), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path)
    # From the checkout's folder: `python -m` puts the working directory first on the path.
    return subprocess.run(
        [sys.executable, "-m", "localqa", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=CHECKOUT[0],
        check=False,
    )


def index_flags(retriever: str | None) -> list[str]:
    """Embeddings only where the retriever needs them; `--no-embed` keeps lexical runs fast when
    the CLI computes embeddings by default. No flag at all when the retriever is the default."""
    if retriever in ("semantic", "hybrid"):
        return ["--embed"]
    if retriever == "lexical":
        return ["--no-embed"]
    return []


@dataclass
class Built:
    path: Path | str  # the --db value: a file, or (--db) a PostgreSQL URL working in one schema
    seconds: float | None  # None: reused from the cache
    key: str
    problems: list[str]


@dataclass
class Place:
    """Where one cached index lives: a file under the cache, or (--db URL) a schema of its own in
    that PostgreSQL database, with a marker file under the cache saying it was finished."""

    file: Path  # the SQLite index, or (PostgreSQL) the name the marker is kept by
    server: str | None = None  # the --db URL given to pdfqa

    @property
    def schema(self) -> str:
        return "pdfqa_" + re.sub(r"\W", "_", self.file.stem.lower())

    @property
    def db(self) -> Path | str:
        if self.server is None:
            return self.file
        from localqa.store.postgres import in_schema

        return in_schema(self.server, self.schema)

    @property
    def done(self) -> Path:
        return self.file.with_suffix(".done" if self.server is None else ".postgresql.done")

    def exists(self) -> bool:
        if self.server is None:
            return self.file.exists()
        return bool(self._sql(f"SELECT to_regclass('{self.schema}.meta') IS NOT NULL"))

    def clear(self, seed: Place | None) -> None:
        """Empty, or a copy of `seed`'s index: `localqa index` then re-extracts nothing whose bytes
        are unchanged."""
        if self.server is None:
            self.file.unlink(missing_ok=True)
            if seed is not None:
                copy_index(seed.file, self.file)
            return
        self._sql(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE; CREATE SCHEMA "{self.schema}"')
        if seed is not None:
            for (table,) in self._sql(f"SELECT tablename FROM pg_tables WHERE schemaname = '{seed.schema}'"):
                self._sql(
                    f'CREATE TABLE "{self.schema}"."{table}" (LIKE "{seed.schema}"."{table}" INCLUDING ALL); '
                    f'INSERT INTO "{self.schema}"."{table}" SELECT * FROM "{seed.schema}"."{table}"'
                )

    def _sql(self, sql: str) -> Any:
        import psycopg

        assert self.server is not None
        with psycopg.connect(self.server, autocommit=True) as db:
            cursor = db.execute(sql)
            return cursor.fetchall() if cursor.description else None


def ensure_index(docs: Path, place: Place, flags: list[str], seed: Place | None = None) -> Built:
    """Index `docs` into `place` unless a finished index is there already. With `seed`, start from
    a copy of that index: `localqa index` then re-extracts nothing whose bytes are unchanged."""
    if place.exists() and place.done.exists():
        return Built(place.db, None, place.file.stem, json.loads(place.done.read_text(encoding="utf-8")))
    place.clear(seed)
    started = time.perf_counter()
    result = localqa("index", "--pdfs", str(docs), "--db", str(place.db), "--json", *flags)
    seconds = time.perf_counter() - started
    problems: list[str] = []
    try:
        report = json.loads(result.stdout)
        problems = [
            f"{p['source']}" + (f", page {p['page']}" if p["page"] else "") + f": {p['message']}"
            for p in report.get("problems", [])
        ]
    except json.JSONDecodeError:
        pass
    if not place.exists():
        raise SystemExit(f"Error: localqa index failed for {docs}: {result.stderr.strip() or result.stdout}")
    place.done.write_text(json.dumps(problems), encoding="utf-8")
    return Built(place.db, seconds, place.file.stem, problems)


def copy_index(source: Path, target: Path) -> None:
    """Copy an index file with the vector files beside it (`<index>.vectors-<token>`, named after
    the index: copied under the new name, they stay the copy's)."""
    shutil.copyfile(source, target)
    for vectors in source.parent.glob(f"{source.name}.vectors-*"):
        shutil.copyfile(vectors, target.with_name(target.name + vectors.name.removeprefix(source.name)))


def index_key(content: str, flags: list[str]) -> str:
    patterns = INDEX_CODE + (EMBED_CODE if "--no-embed" not in flags else ())
    return sha256_bytes(f"{content}|{code_hash(patterns)}|{' '.join(flags)}".encode())[:16]


# ---------------------------------------------------------------------------------------------
# Running a suite


def run_suite(
    suite: Path, db: Path | str, out: Path, retriever: str | None, k: int, model: str | None = None
) -> float:
    """Score `suite` against `db` (answering with `model` when given) and save the run to `out`;
    returns the seconds it took."""
    out.unlink(missing_ok=True)
    started = time.perf_counter()
    args = ["eval", str(suite), "--db", str(db), "--save", str(out), "-k", str(k)]
    if retriever:
        args += ["--retriever", retriever]
    if model:
        args += ["--model", model]
    result = localqa(*args)
    if not out.exists():
        raise SystemExit(f"Error: localqa eval failed on {suite}: {result.stderr.strip() or result.stdout}")
    return time.perf_counter() - started


def ranked_pages(run_case: dict[str, Any]) -> list[tuple[int, str, int | None]]:
    """(rank, source, page) of every candidate, all parts together."""
    return [(c["rank"], c["source"], c.get("page")) for c in run_case["candidates"]]


def fraction(numerator: float, denominator: int) -> dict[str, Any]:
    value = numerator / denominator if denominator else None
    return {"numerator": numerator, "denominator": denominator, "value": value}


def page_scores(cases: list[Case], run: dict[str, Any]) -> dict[str, Any]:
    by_id = {c["id"]: c for c in run["cases"]}
    scores: dict[str, Any] = {}
    for n in HITS_AT:
        hits = 0
        for case in cases:
            found = ranked_pages(by_id[case.id])
            hits += any(rank <= n and (source, page) in case.pages for rank, source, page in found)
        scores[f"hit@{n}"] = fraction(hits, len(cases))
    scores["abstained"] = fraction(sum(not by_id[c.id]["candidates"] for c in cases), len(cases))
    scores["split_into_parts"] = sum(len(by_id[c.id]["parts"]) > 1 for c in cases)
    return scores


def routed(cases: list[Case], run: dict[str, Any]) -> dict[str, Any]:
    """How many questions were searched mainly in some documents because they name them
    (`localqa.question.routing`), and how many of those routes include the question's own document."""
    by_id = {c["id"]: c for c in run["cases"]}
    routes = {c.id: [set(p.get("routed_to", [])) for p in by_id[c.id]["parts"]] for c in cases}
    taken = [c for c in cases if any(routes[c.id])]
    own = [c for c in taken if any(c.source in sources for sources in routes[c.id])]
    return {"routed": fraction(len(taken), len(cases)), "to_its_document": fraction(len(own), len(taken))}


def answer_scores(cases: list[Case], run: dict[str, Any]) -> dict[str, Any]:
    """What a reader is shown: for answerable questions, a verified quote cited from an evidence
    page (and any verified quote); for unanswerable ones, no quote at all."""
    by_id = {c["id"]: c["answer"] for c in run["cases"]}
    scores: dict[str, Any] = {}
    answerable = [c for c in cases if c.pages]
    if answerable:
        verified = [c for c in answerable if by_id[c.id] and by_id[c.id]["verified"]]
        on_page = [c for c in verified if cited_pages(by_id[c.id]) & c.pages]
        scores["verified quote"] = fraction(len(verified), len(answerable))
        scores["verified quote from an evidence page"] = fraction(len(on_page), len(answerable))
        scores |= value_scores([c for c in answerable if value_fields(c)], by_id)
        # Against retrieval's first passage: it was on an evidence page and the answer cites
        # elsewhere (a loss), or the reverse (a rescue); `localqa eval` judges each case.
        scores |= figure_outcomes(answerable, by_id)
        firsts = [(by_id[c.id] or {}).get("first_passage") for c in answerable]
        scores["answer stage losses/rescues"] = f"{firsts.count('loss')}/{firsts.count('rescue')}"
    unanswerable = [c for c in cases if not c.pages]
    if unanswerable:
        silent = [c for c in unanswerable if not (by_id[c.id] and by_id[c.id]["quote"])]
        scores["no quote shown"] = fraction(len(silent), len(unanswerable))
    scores |= part_timings(cases, by_id)
    failed = sum(bool(a and a.get("model_failed")) for a in by_id.values())
    scores["model errors"] = failed
    scores["unchecked figures shown"] = sum(bool((by_id[c.id] or {}).get("unchecked_figure")) for c in cases)
    scores["unchecked list items shown"] = sum(bool((by_id[c.id] or {}).get("unchecked_item")) for c in cases)
    return scores


def part_timings(cases: list[Case], by_id: dict[str, Any]) -> dict[str, Any]:
    """Every answered part of these questions: the seconds it took (`localqa.evaluate.records.Spread`,
    as `localqa eval` prints it) and how many of those whose quote was chosen the model chose."""
    from localqa.evaluate.records import Spread

    parts = [p for c in cases for p in (by_id[c.id] or {}).get("parts", ())]
    spread = Spread.of([p["seconds"] for p in parts])
    if spread is None:
        return {}
    decided = [p for p in parts if p.get("decided_by")]
    return {
        "seconds per part (median, p90)": f"{spread.median:.2f}, {spread.p90:.2f} of {spread.parts}",
        "model decided": fraction(sum(p["decided_by"] == "model" for p in decided), len(decided)),
    }


# A refusal `localqa.derived.deriving` gives when a figure cannot be computed; since issue 37 only where no
# quote was verified either, which it then says.
FIGURE_REFUSAL = "no figure computed"
NO_QUOTE_EITHER = "no quote was verified"


def figure_outcomes(cases: list[Case], by_id: dict[str, Any]) -> dict[str, Any]:
    """Parts whose figure could not be computed: those that keep their verified quote with the
    reason beside it (and how many of those quote an evidence page), and refusals that say only
    that no figure was computed: before issue 37 such a refusal replaced the part's quote whether
    or not one was verified (an upper bound of the quotes it silenced); after, 0 is the goal."""
    answers = [(c, by_id[c.id] or {}) for c in cases]
    kept = [(c, a) for c, a in answers if a.get("verified") and a.get("figure_note")]
    refused = [
        a for _, a in answers if not a.get("verified") and (a.get("reason") or "").startswith(FIGURE_REFUSAL)
    ]
    return {
        "quote kept beside 'no figure computed'": fraction(len(kept), len(cases)),
        "... of which from an evidence page": fraction(
            sum(bool(cited_pages(a) & c.pages) for c, a in kept), len(cases)
        ),
        "refused 'no figure computed' alone": fraction(
            sum(NO_QUOTE_EITHER not in (a.get("reason") or "") for a in refused), len(cases)
        ),
        "refused 'no figure computed' and no quote": fraction(
            sum(NO_QUOTE_EITHER in (a.get("reason") or "") for a in refused), len(cases)
        ),
    }


def cited_pages(answer: dict[str, Any]) -> set[tuple[str, int]]:
    """The pages an answer cites: its quote's, a derived figure's operands' (each is shown with its
    quote; the answer's own citation is its first operand's), and each compared figure's operands',
    as `localqa eval` judges them."""
    value = answer.get("value") or {}
    compared = (value.get("comparison") or {}).get("figures") or ()
    operands = [*(value.get("operands") or ()), *(o for f in compared for o in f.get("operands") or ())]
    citations = [answer["citation"], *(o["citation"] for o in operands)]
    return {(c["source"], c["page"]) for c in citations if c}


def value_scores(valued: list[Case], by_id: dict[str, Any]) -> dict[str, Any]:
    """The values `localqa eval` judged (each case's `value`): how many are correct, and why the
    others are not."""
    from localqa.evaluate.records import VALUE_BLAMES

    if not valued:
        return {}
    answers = [by_id[c.id] or {} for c in valued]
    wrong = [a.get("value_blame") for a in answers if not a.get("value_correct")]
    scores = {
        "value correct": fraction(sum(bool(a.get("value_correct")) for a in answers), len(valued)),
        "wrong values by cause": ", ".join(f"{cause} {wrong.count(cause)}" for cause in VALUE_BLAMES),
    }
    return scores | listed_scores(valued, by_id)


def listed_scores(valued: list[Case], by_id: dict[str, Any]) -> dict[str, Any]:
    """The list and count answers (`value.items`, localqa.answers.listing) counted apart: how many cases
    got each, and of those how many values are correct; and, for MMLongBench-Doc's List and Int
    formats, the value correct of each format."""
    scores: dict[str, Any] = {}
    for kind, is_kind in (("list", _is_list), ("count", _is_count)):
        got = [c for c in valued if is_kind((by_id[c.id] or {}).get("value"))]
        if got:
            right = sum(bool((by_id[c.id] or {}).get("value_correct")) for c in got)
            scores[f"{kind} answers (value correct)"] = fraction(right, len(got))
    for form in ("List", "Int"):
        cases = [c for c in valued if c.answer_type == form]
        if cases:
            right = sum(bool((by_id[c.id] or {}).get("value_correct")) for c in cases)
            scores[f"value correct, {form} format"] = fraction(right, len(cases))
    return scores


def _is_list(value: dict[str, Any] | None) -> bool:
    return isinstance(value, dict) and value.get("items") is not None and value.get("number") is None


def _is_count(value: dict[str, Any] | None) -> bool:
    return isinstance(value, dict) and value.get("items") is not None and value.get("number") is not None


def ndcg_at_10(cases: list[Case], qrels: dict[str, set[str]], run: dict[str, Any]) -> dict[str, Any]:
    """nDCG@10 over the documents of each claim's candidates, in rank order (binary qrels)."""
    by_id = {c["id"]: c for c in run["cases"]}
    total = 0.0
    for case in cases:
        ranked = list(dict.fromkeys(source for _, source, _ in sorted(ranked_pages(by_id[case.id]))))
        total += ndcg_at(ranked, dict.fromkeys(qrels[case.id], 1), SCIFACT_K)
    return {
        "ndcg@10": fraction(round(total, 4), len(cases)),
        "abstained": fraction(sum(not by_id[c.id]["candidates"] for c in cases), len(cases)),
    }


# ---------------------------------------------------------------------------------------------
# One set end to end


def shared_index(
    bench: BenchSet, cache: Path, flags: list[str], with_ocr: bool, server: str | None = None
) -> tuple[Built, float | None, int]:
    """The set's documents in one index, as `localqa index` builds it (OCR sidecars first unless
    `with_ocr` is off): the index, OCR seconds and sidecars written."""
    home = cache / bench.name
    names = [d.name for d in bench.documents] + list(bench.markdown or {})
    shared_docs = home / "docs-shared"
    fill_docs(shared_docs, bench, catalog_toml(names, None), None)
    ocr_seconds, sidecars = ocr(shared_docs) if with_ocr and bench.documents else (None, 0)
    content = content_key(shared_docs)
    place = Place(home / f"index-shared-{index_key(content, flags)}.sqlite3", server)
    return ensure_index(shared_docs, place, flags), ocr_seconds, sidecars


def tenant_index(
    bench: BenchSet,
    cache: Path,
    flags: list[str],
    shared: Built,
    tenants: dict[str, str],
    name: str = "perdoc",
    server: str | None = None,
) -> Built:
    """The set's documents in one index, each in the tenant `tenants` gives it (per document: a
    tenant of its own), started from a copy of the `shared` index (`shared_index`); its documents
    folder and index are named after `name`."""
    home = cache / bench.name
    names = [d.name for d in bench.documents] + list(bench.markdown or {})
    docs = home / f"docs-{name}"
    fill_docs(docs, bench, catalog_toml(names, tenants), home / "docs-shared")
    # Derived from the shared index, so keyed by it too.
    key = index_key(content_key(docs) + shared.key, flags)
    return ensure_index(
        docs,
        Place(home / f"index-{name}-{key}.sqlite3", server),
        flags,
        seed=Place(home / f"{shared.key}.sqlite3", server),
    )


def measure(bench: BenchSet, cache: Path, args: argparse.Namespace) -> dict[str, Any]:
    flags = index_flags(args.retriever)
    names = [d.name for d in bench.documents] + list(bench.markdown or {})
    shared, ocr_seconds, sidecars = shared_index(bench, cache, flags, args.ocr, args.db)
    report: dict[str, Any] = {
        "set": bench.title,
        "documents": len(names),
        "pages": _pages(bench.documents),
        "notes": bench.notes,
        "ocr": {"seconds": ocr_seconds, "sidecars": sidecars} if args.ocr else None,
        "index": {"shared": _built(shared)},
    }
    k = SCIFACT_K if bench.qrels is not None else args.k
    retriever = args.retriever
    with _scratch(args.runs, bench.name) as scratch:
        suite = Path(scratch) / "suite-shared"
        suite.mkdir()
        (suite / "cases.toml").write_text(cases_toml(bench.cases, None), encoding="utf-8")
        run_path = Path(scratch) / "run-shared.json"
        seconds = run_suite(suite, shared.path, run_path, retriever, k)
        shared_run = json.loads(run_path.read_text(encoding="utf-8"))
        report["eval_seconds"] = {"shared": round(seconds, 1)}
        report["config"] = shared_run["config"]["retrieval"]
        if bench.qrels is not None:
            report["shared"] = ndcg_at_10(bench.cases, bench.qrels, shared_run)
            report["routed"] = routed(bench.cases, shared_run)
            return report
        if args.model:
            run_path = Path(scratch) / "run-shared-model.json"
            seconds = run_suite(suite, shared.path, run_path, retriever, k, args.model)
            answered = json.loads(run_path.read_text(encoding="utf-8"))
            report["eval_seconds"]["shared with the model"] = round(seconds, 1)
            report["answers"] = {
                "model": answered["config"]["model"],
                **{
                    category: answer_scores([c for c in bench.cases if c.category == category], answered)
                    for category in ("answerable", "needs_visual", "unanswerable")
                    if any(c.category == category for c in bench.cases)
                },
            }
        suite = Path(scratch) / "suite-scoped"
        suite.mkdir()
        (suite / "cases.toml").write_text(cases_toml(bench.cases, None, scoped=True), encoding="utf-8")
        run_path = Path(scratch) / "run-scoped.json"
        seconds = run_suite(suite, shared.path, run_path, retriever, k)
        scoped_run = json.loads(run_path.read_text(encoding="utf-8"))
        report["eval_seconds"]["scoped"] = round(seconds, 1)
        tenants = tenant_names(names)
        perdoc = tenant_index(bench, cache, flags, shared, tenants, server=args.db)
        report["index"]["per_document"] = _built(perdoc)
        suite = Path(scratch) / "suite-perdoc"
        suite.mkdir()
        (suite / "cases.toml").write_text(cases_toml(bench.cases, tenants), encoding="utf-8")
        run_path = Path(scratch) / "run-perdoc.json"
        seconds = run_suite(suite, perdoc.path, run_path, retriever, k)
        perdoc_run = json.loads(run_path.read_text(encoding="utf-8"))
        report["eval_seconds"]["per_document"] = round(seconds, 1)
    for mode, run in (("shared", shared_run), ("scoped", scoped_run), ("per_document", perdoc_run)):
        report[mode] = {
            category: page_scores([c for c in bench.cases if c.category == category], run)
            for category in ("answerable", "needs_visual", "unanswerable")
            if any(c.category == category for c in bench.cases)
        }
    report["routed"] = routed(bench.cases, shared_run)
    return report


@contextmanager
def _scratch(runs: Path | None, name: str) -> Iterator[str]:
    """Where the suites and runs of one set are written: `runs`/NAME, kept, when given (to read
    each case's candidates and routes), else a temporary folder."""
    if runs is None:
        with tempfile.TemporaryDirectory(prefix="pdfqa-") as scratch:
            yield scratch
        return
    folder = runs / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    yield str(folder)


def _pages(documents: list[Path]) -> int | None:
    if not documents:
        return None
    import pymupdf

    total = 0
    for path in documents:
        with pymupdf.open(path) as document:
            total += document.page_count
    return total


def _built(built: Built) -> dict[str, Any]:
    from localqa.store import describe

    return {"path": describe(built.path), "seconds": built.seconds, "problems": built.problems}


# ---------------------------------------------------------------------------------------------
# Output


def show(value: dict[str, Any]) -> str:
    if value["value"] is None:
        return "—"
    numerator = value["numerator"]
    shown = f"{numerator:g}" if isinstance(numerator, float) else str(numerator)
    return f"{shown}/{value['denominator']} = {value['value']:.3f}"


def print_report(report: dict[str, Any]) -> None:
    config = report["config"]
    pages = f", {report['pages']:,} pages" if report["pages"] else ""
    settings = f"retriever {config['retriever']}, k={config['k']}, neighbour {config.get('neighbour')}"
    print(f"\n== {report['set']}: {report['documents']} documents{pages}; {settings}")
    for note in report["notes"]:
        print(f"   note: {note}")
    if report["ocr"] and report["ocr"]["sidecars"]:
        seconds = report["ocr"]["seconds"]
        timing = "reused" if seconds is None else f"{seconds:.1f} s"
        count = report["ocr"]["sidecars"]
        print(f"   localqa ocr: {count} page(s) without a text layer have a sidecar ({timing})")
    for mode, built in report["index"].items():
        seconds = built["seconds"]
        if seconds is None:
            timing = "reused (built earlier from the same documents and extraction code)"
        else:
            pages = report["pages"] if mode == "shared" else None
            rate = f", {pages / seconds:.1f} pages/s" if pages else ""
            timing = f"built in {seconds:.1f} s{rate}"
        print(f"   index ({mode.replace('_', ' ')}): {timing}; {len(built['problems'])} problem(s) reported")
    evals = ", ".join(f"{mode.replace('_', ' ')} {s} s" for mode, s in report["eval_seconds"].items())
    print(f"   eval: {evals}")
    routes = report["routed"]
    own = f", to their own document {show(routes['to_its_document'])}" if routes["routed"]["value"] else ""
    print(f"   routed by what the question names (shared index): {show(routes['routed'])}{own}")
    if "ndcg@10" in report["shared"]:
        shared = report["shared"]
        print(f"   nDCG@10 {show(shared['ndcg@10'])}; abstained {show(shared['abstained'])}")
        return
    labels = {"answerable": "answerable", "needs_visual": "needs_visual", "unanswerable": "unanswerable"}
    if report["set"].startswith("mmlongbench"):
        labels["answerable"] = "text/table"
    print(f"   {'questions':<26} {'index':<13} {'page hit@1':<18} {'page hit@5':<18} {'abstained':<18}")
    for category, label in labels.items():
        for mode in ("shared", "scoped", "per_document"):
            scores = report[mode].get(category)
            if scores is None:
                continue
            count = scores["abstained"]["denominator"]
            if category == "unanswerable":
                hits = ("(no evidence)", "(no evidence)")
            else:
                hits = (show(scores["hit@1"]), show(scores["hit@5"]))
            print(
                f"   {label + f' ({count})':<26} {mode.replace('_', ' '):<13} {hits[0]:<18} {hits[1]:<18} "
                f"{show(scores['abstained']):<18}"
            )
    if "answers" in report:
        model = report["answers"]["model"]
        print(f"   answers in the shared index, model {model['backend']} {model['name']}:")
        for category, label in labels.items():
            for name, value in report["answers"].get(category, {}).items():
                shown = show(value) if isinstance(value, dict) else str(value)
                print(f"     {label:<14} {name:<40} {shown}")
    split = report["shared"]["answerable"]["split_into_parts"]
    if split:
        print(f"   ({split} answerable question(s) were split into parts; a hit in any part counts)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, from {', '.join(SETS)}")
    parser.add_argument("--bench", type=Path, help="the benchmark folder (default: ../shared/bench)")
    parser.add_argument("--cache", type=Path, default=CACHE, help="suites, documents and indexes")
    parser.add_argument(
        "--retriever",
        choices=("lexical", "semantic", "hybrid"),
        help="passed to localqa eval (default: eval's own default); semantic/hybrid index with --embed",
    )
    parser.add_argument("-k", type=int, default=5, help="candidates per part for the PDF sets (SciFact: 10)")
    parser.add_argument(
        "--no-ocr",
        dest="ocr",
        action="store_false",
        help="skip `localqa ocr` (by default it writes sidecars for pages without a text layer first)",
    )
    parser.add_argument(
        "--model",
        metavar="NAME",
        help="also answer the PDF sets' questions in the shared index with this backend (e.g. "
        "embedded) and report verified quotes from evidence pages and silence on unanswerable ones",
    )
    parser.add_argument(
        "--checkout",
        type=Path,
        metavar="DIR",
        help="measure the localqa of another checkout (e.g. a git worktree of an older commit, for "
        "before/after figures; give it a --cache of its own)",
    )
    parser.add_argument(
        "--db",
        metavar="URL",
        help="build and score the indexes in this PostgreSQL database instead of SQLite files (a "
        "schema of its own per index, kept for reuse like the files)",
    )
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write every figure as JSON")
    parser.add_argument(
        "--runs", type=Path, metavar="DIR", help="keep each set's suites and eval runs in DIR/<set>"
    )
    args = parser.parse_args(argv)
    if args.db:  # its children get the URL on their command line: the password goes in PGPASSWORD
        from localqa.store import password_to_environment

        args.db = password_to_environment(args.db)
    if args.checkout:
        CHECKOUT[0] = args.checkout.resolve()
    chosen = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = sorted(set(chosen) - set(SETS))
    if unknown:
        parser.error(f"unknown set(s) {', '.join(unknown)}; choose from {', '.join(SETS)}")
    bench = bench_folder(args.bench)
    missing = [FOLDERS[s] for s in chosen if not (bench / FOLDERS[s]).is_dir()]
    if missing:
        print(f"Skipped: {', '.join(missing)} not found under {bench} (pass --bench DIR).")
        return 0
    for patterns in (INDEX_CODE, INDEX_CODE + EMBED_CODE):
        code_hash(patterns)  # now, before anything is built
    path = "localqa eval (subprocess)"
    from localqa.store import describe

    where = f"PostgreSQL {describe(args.db)}" if args.db else "SQLite"
    print(f"pdfqa: {path}; indexes in {where}; cache {args.cache}")
    reports = []
    for name in chosen:
        report = measure(LOADERS[name](bench / FOLDERS[name]), args.cache, args)
        print_report(report)
        reports.append(report)
    if args.json:
        args.json.write_text(json.dumps({"path": path, "sets": reports}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
