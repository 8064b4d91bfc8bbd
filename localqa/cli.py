"""The `localqa` command line: thin commands over the library, errors converted once here."""

from __future__ import annotations

import functools
import json
import os
import sqlite3
import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any, TypeVar

import click

from localqa.api import DEFAULT_DB
from localqa.errors import LocalQAError, QuestionError, UnknownModelError
from localqa.types import DEFAULT_ROLE, DEFAULT_TENANT, ROLES, Answer, Caller, ModelCall, PartResult

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_PDFS = Path("pdfs")


def fail_cleanly(function: F) -> F:
    """Turn domain errors into one `Error: ...` line and exit status 1 (2 for usage errors)."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except (QuestionError, UnknownModelError) as error:
            raise click.UsageError(str(error)) from None
        except LocalQAError as error:
            raise click.ClickException(str(error)) from None
        except BrokenPipeError:
            raise  # the reader went away (`| head`): handled quietly in main()
        except (OSError, sqlite3.Error) as error:
            # A path that cannot be written or a database that cannot be opened: name it.
            raise click.ClickException(_describe(error)) from None

    return wrapper  # type: ignore[return-value]


def _describe(error: OSError | sqlite3.Error) -> str:
    if isinstance(error, OSError) and error.filename:
        return f"{error.filename}: {error.strerror or error}"
    return str(error)


def _iso_date(_ctx: click.Context, _param: click.Parameter, value: str | None) -> date:
    if value is None:
        return date.today()
    try:
        # fromisoformat alone would also take 20261114 and week dates; the contract is YYYY-MM-DD.
        if len(value) != 10 or value[4] != "-" or value[7] != "-":
            raise ValueError(value)
        return date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date; write it as YYYY-MM-DD") from None


def db_option(function: F) -> F:
    return click.option(
        "--db",
        type=click.Path(path_type=Path, dir_okay=False),
        default=DEFAULT_DB,
        show_default=True,
        help="The index file.",
    )(function)


def pdfs_option(function: F) -> F:
    return click.option(
        "--pdfs",
        type=click.Path(path_type=Path, file_okay=False, exists=True),
        default=DEFAULT_PDFS,
        show_default=True,
        help="Folder of PDFs, Markdown/text files, OCR sidecars and catalog.toml.",
    )(function)


def json_option(function: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")(function)


def retriever_option(function: F) -> F:
    return click.option(
        "--retriever",
        type=click.Choice(["lexical", "semantic", "hybrid"]),
        default="lexical",
        show_default=True,
        help="lexical (BM25), semantic (embeddings; needs 'localqa index --embed') or hybrid "
        "(reciprocal rank fusion of both). Identifiers and eligibility apply in every mode.",
    )(function)


def caller_options(function: F) -> F:
    """--as-of, --role and --tenant: who is asking and when. Never taken from a document."""
    function = click.option(
        "--tenant",
        envvar="LOCALQA_TENANT",
        default=DEFAULT_TENANT,
        show_default=True,
        help="Caller's tenant (env LOCALQA_TENANT); only this tenant's documents are searched.",
    )(function)
    function = click.option(
        "--role",
        envvar="LOCALQA_ROLE",
        type=click.Choice(ROLES),
        default=DEFAULT_ROLE,
        show_default=True,
        help="Caller's role (env LOCALQA_ROLE): public sees public documents, staff also staff ones.",
    )(function)
    return click.option(
        "--as-of",
        callback=_iso_date,
        metavar="YYYY-MM-DD",
        help="Answer as the documents stood on this date (default: today).",
    )(function)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="localqa")
def cli() -> None:
    """Answer questions about local PDFs with verbatim, re-verified quotes.

    \b
    Typical session:
      localqa ocr                  # OCR sidecars for scanned pages
      localqa index                # build or refresh index/library.sqlite3
      localqa search "What is the loan limit for EQ-314?" --as-of 2026-11-14
      localqa ask "What is the loan limit for EQ-314?" --as-of 2026-11-14
      localqa eval                 # score the evals/library suite
    """


@cli.command()
@pdfs_option
@click.option("--force", is_flag=True, help="Redo pages that already have a sidecar.")
@fail_cleanly
def ocr(pdfs: Path, force: bool) -> None:
    """Write an OCR sidecar for every PDF page without a text layer.

    Sidecars are plain text files beside the PDF, named <stem>.page-<N>.ocr.txt; correct them by
    hand if tesseract misread something, then run 'localqa index'. Pages that have a text layer
    are never touched.
    """
    from localqa.extract.ocr import OcrJob, check_tesseract, pages_needing_ocr, run_ocr, write_sidecar
    from localqa.extract.pdf import PdfUnreadable

    check_tesseract()
    jobs: list[OcrJob] = []
    unreadable = 0
    for pdf in sorted(p for p in pdfs.iterdir() if p.suffix.lower() == ".pdf"):
        try:
            jobs.extend(pages_needing_ocr(pdf, force=force))
        except PdfUnreadable as error:
            click.echo(f"Error: {pdf.name}: {error}", err=True)
            unreadable += 1
    if not jobs:
        click.echo("No page needs OCR (every page has a text layer or a sidecar; --force redoes sidecars).")
        sys.exit(1 if unreadable else 0)
    with click.progressbar(jobs, label="OCR", item_show_func=_job_label, file=sys.stderr) as bar:
        for job in bar:
            write_sidecar(job, run_ocr(job))
    for job in jobs:
        click.echo(f"wrote {job.sidecar}")
    if unreadable:
        sys.exit(1)


def _job_label(job: Any) -> str | None:
    return f"{job.pdf.name} page {job.page}" if job else None


@cli.command()
@pdfs_option
@db_option
@click.option("--rebuild", is_flag=True, help="Re-extract everything instead of only what changed.")
@click.option(
    "--embed/--no-embed",
    default=None,
    help="Compute sentence embeddings for semantic/hybrid retrieval (needs localqa[semantic]). "
    "Default: keep them current if the index has them.",
)
@json_option
@fail_cleanly
def index(pdfs: Path, db: Path, rebuild: bool, embed: bool | None, as_json: bool) -> None:
    """Bring the index up to date with the documents folder.

    Only added or changed files are extracted (by content hash); removed files are dropped. The
    index is replaced atomically: an interrupted or failed run leaves the previous index intact.
    Exit status 1 when any file could not be indexed (each is named with the reason).
    """
    from localqa.index import refresh_index

    show = not as_json and sys.stderr.isatty()
    with _ProgressBar("Extracting", show) as progress, _ProgressBar("Embedding", show) as embedding:
        report = refresh_index(
            pdfs, db, rebuild=rebuild, progress=progress, embed=embed, embed_progress=embedding
        )
    if as_json:
        click.echo(
            json.dumps(
                {
                    "db": str(report.db),
                    "added": report.added,
                    "changed": report.changed,
                    "removed": report.removed,
                    "unchanged": report.unchanged,
                    "documents": report.documents,
                    "passages": report.passages,
                    "embedded": report.embedded,
                    "corpus_digest": report.digest,
                    "problems": [
                        {"source": p.source, "page": p.page, "message": p.message, "warning": p.warning}
                        for p in report.problems
                    ],
                },
                indent=2,
            )
        )
    else:
        for label, names in (
            ("added", report.added),
            ("changed", report.changed),
            ("removed", report.removed),
        ):
            for name in names:
                click.echo(f"{label:>8}  {name}")
        click.echo(
            f"Index {report.db}: {report.documents} documents, {report.passages} passages "
            f"({len(report.added)} added, {len(report.changed)} changed, {len(report.removed)} removed, "
            f"{report.unchanged} unchanged)."
        )
        if report.embedded:
            click.echo(f"Embedded {report.embedded} new or changed passages for semantic retrieval.")
        for problem in report.problems:
            click.echo(f"{'Warning' if problem.warning else 'Error'}: {problem}", err=True)
    if report.failed:
        sys.exit(1)


class _ProgressBar:
    """A click progress bar on stderr for library code that reports (done, total, item): the
    bar is created on the first report, when the total is known. Click hides it off a terminal."""

    def __init__(self, label: str, enabled: bool = True) -> None:
        self.label = label
        self.enabled = enabled
        self.bar: Any = None

    def __call__(self, done: int, total: int, item: str) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            self.bar = click.progressbar(
                length=total, label=self.label, file=sys.stderr, item_show_func=lambda name: name
            )
            self.bar.__enter__()
        self.bar.update(done - self.bar.pos, item)

    def __enter__(self) -> _ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.update(self.bar.length - self.bar.pos)
            self.bar.__exit__(*exc)


@cli.command()
@db_option
@json_option
@fail_cleanly
def status(db: Path, as_json: bool) -> None:
    """Show what the index holds: documents, passages by kind, sidecars, corpus digest."""
    from localqa.index import index_status

    info = index_status(db)
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    kinds = ", ".join(f"{count} {kind}" for kind, count in info["passages"].items())
    click.echo(f"Index:          {info['db']}")
    click.echo(f"Documents:      {info['documents']}")
    click.echo(f"Passages:       {sum(info['passages'].values())} ({kinds})")
    click.echo(f"OCR sidecars:   {info['sidecars']}")
    click.echo(f"Corpus digest:  {info['corpus_digest']}")
    for model, count in info["embeddings"].items():
        click.echo(f"Embeddings:     {count} ({model})")
    click.echo(f"Schema version: {info['schema_version']}")
    for source in info["invisible_documents"]:
        click.echo(f"Warning: {source} has no valid access label and is visible to nobody", err=True)


@cli.command()
@click.argument("question", required=False, default="")
@click.option("--part", "parts", multiple=True, help="A question part, searched on its own (repeatable).")
@click.option(
    "-k", "k", type=click.IntRange(1, 100), default=5, show_default=True, help="Candidates per part."
)
@retriever_option
@caller_options
@db_option
@json_option
@fail_cleanly
def search(
    question: str,
    parts: tuple[str, ...],
    k: int,
    retriever: str,
    as_of: date,
    role: str,
    tenant: str,
    db: Path,
    as_json: bool,
) -> None:
    """Retrieval only, no model: the ranked candidates for each part of QUESTION.

    A compound question is split on clause boundaries, or give the parts with --part. Only
    documents the caller may see, in force on the --as-of date, are searched.
    """
    from localqa.api import search_parts
    from localqa.retrieve import RetrievalSettings

    caller = Caller(role=role, tenant=tenant)
    settings = RetrievalSettings(retriever=retriever, k=k)  # type: ignore[arg-type]
    results = search_parts(question, as_of=as_of, caller=caller, parts=parts, db=db, settings=settings)
    if as_json:
        click.echo(json.dumps(_search_json(results, as_of, caller), indent=2))
        return
    click.echo(_header(as_of, caller))
    for number, result in enumerate(results, start=1):
        click.echo(f"\n{number}. {result.question}")
        click.echo(_format_candidates(result))


@cli.command()
@click.argument("question", required=False, default="")
@click.option("--part", "parts", multiple=True, help="A question part, answered on its own (repeatable).")
@click.option(
    "--model",
    "model_spec",
    metavar="NAME",
    help="ollama, ollama:NAME, embedded, extractive, openai:NAME or a plugin's (see 'localqa models'; "
    "default: LOCALQA_MODEL, else Ollama if a server answers, else embedded).",
)
@click.option(
    "-k",
    "k",
    type=click.IntRange(1, 20),
    default=4,
    show_default=True,
    help="Passages shown to the model per part.",
)
@retriever_option
@caller_options
@db_option
@json_option
@click.option(
    "--verbose", is_flag=True, help="Also print timing: retrieval, and per part model time and tokens."
)
@fail_cleanly
def ask(
    question: str,
    parts: tuple[str, ...],
    model_spec: str | None,
    k: int,
    retriever: str,
    as_of: date,
    role: str,
    tenant: str,
    db: Path,
    as_json: bool,
    verbose: bool,
) -> None:
    """Answer each part of QUESTION with a verified quote and its citation.

    The model picks a sentence from the retrieved passages; localqa checks that it is a literal
    substring of the cited passage before showing it. Otherwise it prints
    'No quote verified from N candidates.' with the reason. Exit status 1 if the model failed.
    """
    from localqa.api import answer
    from localqa.models import get_model
    from localqa.retrieve import RetrievalSettings

    caller = Caller(role=role, tenant=tenant)
    model = get_model(model_spec)
    settings = RetrievalSettings(retriever=retriever, k=k)  # type: ignore[arg-type]
    asked = answer(question, as_of=as_of, caller=caller, parts=parts, model=model, db=db, settings=settings)
    if as_json:
        payload = _search_json([p.result for p in asked.parts], as_of, caller)
        for part, shown in zip(payload["parts"], asked.parts, strict=True):
            part["answer"] = shown.answer.as_json()
            if verbose:
                part["timing"] = shown.answer.call.model_dump() if shown.answer.call else None
        payload["model"] = {"backend": asked.backend, "name": asked.model}
        if verbose:
            payload["retrieval_seconds"] = asked.retrieval_seconds
        click.echo(json.dumps(payload, indent=2))
    else:
        baseline = "" if model.is_language_model else " (a baseline: no language model)"
        click.echo(f"{_header(as_of, caller)} · model {model.label}{baseline}")
        if verbose:
            click.echo(f"Retrieval: {asked.retrieval_seconds * 1000:.0f} ms for {len(asked.parts)} part(s)")
        for number, part in enumerate(asked.parts, start=1):
            click.echo(f"\n{number}. {part.result.question}")
            click.echo(_format_answer(part.result, part.answer))
            if verbose:
                click.echo(f"   ({_timing(part.answer.call)})")
    faults = {p.answer.reason for p in asked.parts if p.answer.model_failed and p.answer.reason}
    if faults:
        for fault in sorted(faults):
            click.echo(f"Error: {fault}", err=True)
        sys.exit(1)


def _timing(call: ModelCall | None) -> str:
    if call is None:
        return "no model call"
    tokens = "" if call.prompt_tokens is None else f", prompt {call.prompt_tokens} tokens"
    if call.cached_tokens:
        tokens += f" ({call.cached_tokens} cached)"
    return f"model {call.seconds * 1000:.0f} ms{tokens}"


def _format_answer(result: PartResult, answer: Answer) -> str:
    if answer.verified and answer.citation is not None:
        lines = [f'   "{answer.quote}"', f"   — {answer.citation.describe()}"]
        if answer.other_evidence:
            lines.append("   Other evidence (other documents also match; check for a conflict):")
            lines += [f"     · {location.describe()}" for location in answer.other_evidence]
        return "\n".join(lines)
    reason = f"model error: {answer.reason}" if answer.model_failed else answer.reason
    lines = [f"   No quote verified from {len(result.candidates)} candidates. Reason: {reason}."]
    if result.candidates:
        lines.append("   Evidence retrieved:")
        lines.append(_format_candidates(result))
    elif result.note:
        lines.append(f"   ({result.note})")
    return "\n".join(lines)


@cli.command()
@json_option
@fail_cleanly
def models(as_json: bool) -> None:
    """List the answer backends, which are available here, and the default."""
    from localqa.models import backends, default_backend

    found = backends()
    env = os.environ.get("LOCALQA_MODEL")
    try:
        default = env or default_backend()
    except LocalQAError:
        default = None
    if as_json:
        click.echo(json.dumps({"default": default, "backends": [vars(b) for b in found]}, indent=2))
        return
    for info in found:
        mark = "*" if default and default.partition(":")[0] == info.name else " "
        state = "available" if info.available else "not available"
        click.echo(f"{mark} {info.name:<11} {state:<14} {info.detail}")
    source = "from LOCALQA_MODEL" if env else "chosen automatically"
    click.echo(
        f"Default: {default} ({source})" if default else "Default: none available (use --model extractive)"
    )


@cli.command(name="eval")
@click.argument(
    "suite_path",
    metavar="[SUITE]",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("evals/library"),
)
@click.option(
    "--model", "model_spec", metavar="NAME", help="Also answer with this backend and score the answers."
)
@click.option(
    "--answers",
    "answers_path",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="Grade recorded answers (JSONL: id, quote, citation) from another system.",
)
@click.option(
    "--coverage",
    is_flag=True,
    help="Compare one search over each compound question with one search per part.",
)
@click.option(
    "--save", "save_path", type=click.Path(path_type=Path, dir_okay=False), help="Write the run as JSON."
)
@click.option(
    "--compare",
    "compare_path",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="A run saved earlier: list fixed, regressed, unchanged and still-blocking cases.",
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write a Markdown report.",
)
@click.option(
    "-k", "k", type=click.IntRange(1, 100), default=5, show_default=True, help="Candidates per part."
)
@click.option(
    "--chunking",
    type=click.Choice(["heading", "body"]),
    default="heading",
    show_default=True,
    help="heading: a passage's heading path is searchable with it; body: its text only.",
)
@retriever_option
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON.")
@fail_cleanly
def evaluate(
    suite_path: Path,
    model_spec: str | None,
    answers_path: Path | None,
    coverage: bool,
    save_path: Path | None,
    compare_path: Path | None,
    report_path: Path | None,
    k: int,
    chunking: str,
    retriever: str,
    db: Path,
    as_json: bool,
) -> None:
    """Score a suite: retrieval, answers and authorization, each separately.

    SUITE is a folder with cases.toml (default evals/library); a suite with its own docs/ is
    indexed into a temporary index, otherwise --db is used. Without --model only retrieval is
    scored. Exit status 1 when a gate fails: any tenant/access leak, any unverified quote shown.
    """
    from localqa.evaluate import compare as comparing
    from localqa.evaluate.report import markdown, terminal_summary
    from localqa.evaluate.run import load_answers, run_suite
    from localqa.evaluate.suite import load_suite
    from localqa.models import get_model
    from localqa.retrieve import RetrievalSettings

    if model_spec and answers_path:
        raise click.UsageError("choose --model (answer now) or --answers (grade recorded answers), not both")
    suite = load_suite(suite_path)
    settings = RetrievalSettings(retriever=retriever, k=k, chunking=chunking)  # type: ignore[arg-type]
    if coverage:
        if model_spec or answers_path or save_path or compare_path or report_path or as_json:
            raise click.UsageError(
                "--coverage compares retrieval only; use it without --model, --answers, "
                "--save, --compare, --report and --json"
            )
        _print_coverage(suite, db, settings)
        return
    model = get_model(model_spec) if model_spec else None
    answers = load_answers(answers_path) if answers_path else None
    with _ProgressBar("Cases", enabled=sys.stderr.isatty()) as progress:
        run = run_suite(
            suite,
            db=db,
            settings=settings,
            model=model,
            answers=answers,
            answers_file=str(answers_path) if answers_path else None,
            progress=progress,
        )
    comparison = None
    if compare_path is not None:
        comparison = comparing.compare(
            comparing.load_run(compare_path), run.model_dump(mode="json"), str(compare_path)
        )
    if save_path is not None:
        save_path.parent.mkdir(parents=True, exist_ok=True)
        run.save(save_path)
    if report_path is not None:
        report_path.parent.mkdir(parents=True, exist_ok=True)
        report_path.write_text(markdown(run, comparison), encoding="utf-8")
    if as_json:
        click.echo(json.dumps(run.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        click.echo("\n".join(terminal_summary(run, comparison)))
    for gate in run.gates_failed:
        click.echo(f"Error: gate failed: {gate}", err=True)
    if run.totals.get("model_errors"):
        click.echo(
            f"Error: the model failed on {run.totals['model_errors']} case(s); see the answers' "
            "reasons (is the backend running and the model installed?)",
            err=True,
        )
    if run.gates_failed or run.totals.get("model_errors"):
        sys.exit(1)


def _print_coverage(suite: Any, db: Path, settings: Any) -> None:
    from localqa.evaluate.coverage import coverage

    rows = coverage(suite, db, settings)
    if not rows:
        click.echo("No compound question in this suite (a case whose question splits into parts).")
        return
    click.echo(f"Coverage by expected record (k={settings.k}): one search / per-part search")
    for row in rows:
        one = "found" if row.one_search else "MISSED"
        each = "found" if row.per_part else "MISSED"
        click.echo(f"  {one:<6} / {each:<6}  {row.case}: {row.expected}")
    missed = sum(not r.one_search for r in rows)
    click.echo(
        f"One search found {len(rows) - missed}/{len(rows)}; per-part search found "
        f"{sum(r.per_part for r in rows)}/{len(rows)}."
    )


def _header(as_of: date, caller: Caller) -> str:
    return f"As of {as_of.isoformat()} · role {caller.role} · tenant {caller.tenant}"


def _search_json(results: list[PartResult], as_of: date, caller: Caller) -> dict[str, Any]:
    return {
        "as_of": as_of.isoformat(),
        "role": caller.role,
        "tenant": caller.tenant,
        "parts": [
            {"question": r.question, "candidates": [c.as_json() for c in r.candidates], "note": r.note}
            for r in results
        ],
    }


def _format_candidates(result: PartResult) -> str:
    if not result.candidates:
        return f"   No candidates: {result.note}."
    lines = []
    for candidate in result.candidates:
        lines.append(f"   [{candidate.rank}] {candidate.score:6.2f}  {candidate.location.describe()}")
        lines.append(f"       {candidate.text}")
    return "\n".join(lines)


def main() -> None:
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    try:
        cli(prog_name="localqa")
    except BrokenPipeError:
        # Output piped into something that stopped reading: not an error worth a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
