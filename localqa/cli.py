"""The `localqa` command line: thin commands over the library, errors converted once here."""

from __future__ import annotations

import functools
import json
import os
import sqlite3
import sys
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click

from localqa.display import printed
from localqa.display.terminal import visible
from localqa.errors import LocalQAError, QuestionError, UnknownModelError
from localqa.settings import (
    ASK_K,
    CHUNKINGS,
    DEFAULT_DB,
    RETRIEVERS,
    SEARCH_K,
    AnswerSettings,
    RetrievalSettings,
    Settings,
)
from localqa.shapes import (
    ask_json,
    document_json,
    index_json,
    parse_as_of,
    search_json,
    status_json,
    timing_json,
)
from localqa.types import DEFAULT_ROLE, DEFAULT_TENANT, ROLES, Caller, is_tenant_name

if TYPE_CHECKING:
    from localqa.evaluate.suite import Suite
    from localqa.library import Asked, Library
    from localqa.store import Db
    from localqa.store.base import WriteSummary

F = TypeVar("F", bound=Callable[..., Any])
P = ParamSpec("P")
R = TypeVar("R")
DEFAULT_PDFS = Path("pdfs")
RETRIEVAL = RetrievalSettings()  # option defaults are the settings' own
ANSWERING = AnswerSettings()


def fail_cleanly(function: Callable[P, R]) -> Callable[P, R]:
    """Turn domain errors into one `Error: ...` line and exit status 1 (2 for usage errors)."""

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return function(*args, **kwargs)
        except (QuestionError, UnknownModelError) as error:
            raise click.UsageError(visible(str(error))) from None
        except LocalQAError as error:
            raise click.ClickException(visible(str(error))) from None
        except BrokenPipeError:
            raise  # the reader went away (`| head`): handled quietly in main()
        except (OSError, sqlite3.Error) as error:
            # A path that cannot be written or a database that cannot be opened: name it.
            raise click.ClickException(visible(_describe(error))) from None

    return wrapper


def _describe(error: OSError | sqlite3.Error) -> str:
    if isinstance(error, OSError) and error.filename:
        return f"{error.filename}: {error.strerror or error}"
    return str(error)


def say(lines: str | list[str], *, err: bool = False) -> None:
    """Print text output, one line at a time, each made safe for a terminal: document text and
    file names never control it (see `localqa.display.terminal`)."""
    for line in [lines] if isinstance(lines, str) else lines:
        click.echo(visible(line), err=err)


def _iso_date(_ctx: click.Context, _param: click.Parameter, value: str | None) -> date:
    try:
        return parse_as_of(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


def _index_location(ctx: click.Context, param: click.Parameter, value: str | Path) -> Path | str:
    """A file path (SQLite; not a folder) or a postgresql:// URL, kept as given: a Path would
    fold its //."""
    from localqa.store import DatabaseURLError, postgres_url

    try:
        url = postgres_url(value)
    except DatabaseURLError as error:
        raise click.BadParameter(visible(str(error))) from None
    if url is not None:
        return url
    path: Path = click.Path(path_type=Path, dir_okay=False).convert(value, param, ctx)
    return path


def db_option(function: F) -> F:
    return click.option(
        "--db",
        envvar="LOCALQA_DB",
        callback=_index_location,
        default=str(DEFAULT_DB),
        show_default=True,
        metavar="PATH|URL",
        help="The index: a file (SQLite), or a postgresql://user@host/dbname URL for an index a team "
        "shares (docs/postgresql.md). Env LOCALQA_DB.",
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
        type=click.Choice(RETRIEVERS),
        default=RETRIEVAL.retriever,
        show_default=True,
        help="auto: hybrid when the index has embeddings, else lexical; lexical (BM25); semantic "
        "(embeddings); hybrid (reciprocal rank fusion of both). Identifiers and eligibility apply "
        "in every mode.",
    )(function)


def documents_option(function: F) -> F:
    return click.option(
        "--doc",
        "documents",
        multiple=True,
        metavar="NAME",
        help="Search only this document (repeatable): a file name, a glob (quote it: 'ADOBE_*') or a "
        "catalog series. A name is read as written first ('Report [2019].pdf' is that file); a glob "
        "only when it names no file or series so. It narrows what the caller may see, never widens it; "
        "'localqa status --documents' lists the names.",
    )(function)


def _tenant(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    if not is_tenant_name(value):
        raise click.BadParameter("a tenant is a name; give the one the catalog gives (default: default)")
    return value


def who_options(role_help: str, tenant_help: str) -> Callable[[F], F]:
    """--role and --tenant: who is asking (or counted, or served). Never taken from a document."""

    def decorate(function: F) -> F:
        function = click.option(
            "--tenant",
            envvar="LOCALQA_TENANT",
            default=DEFAULT_TENANT,
            show_default=True,
            callback=_tenant,
            help=f"{tenant_help} (env LOCALQA_TENANT).",
        )(function)
        return click.option(
            "--role",
            envvar="LOCALQA_ROLE",
            type=click.Choice(ROLES),
            default=DEFAULT_ROLE,
            show_default=True,
            help=f"{role_help} (env LOCALQA_ROLE).",
        )(function)

    return decorate


def caller_options(function: F) -> F:
    """--as-of, --role and --tenant: who is asking and when."""
    function = who_options(
        "Caller's role: public sees public documents, staff also staff ones",
        "Caller's tenant; only this tenant's documents are searched",
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
    """Write an OCR sidecar for every page without a text layer.

    Reads PDF pages, images (.png, .jpg, .tiff) and the pages of other documents PyMuPDF opens.
    Sidecars are plain text files beside the document, named <stem>.page-<N>.ocr.txt; correct them
    by hand if tesseract misread something, then run 'localqa index'. Pages that have a text layer
    are never touched.
    """
    from localqa.extract.ocr import OcrJob, pages_needing_ocr, run_ocr, write_sidecar
    from localqa.extract.pdf import PdfUnreadable
    from localqa.extract.tesseract import check_tesseract
    from localqa.formats import format_of

    check_tesseract()
    jobs: list[OcrJob] = []
    unreadable = 0
    for pdf in sorted(p for p in pdfs.iterdir() if (fmt := format_of(p.name)) is not None and fmt.rendered):
        try:
            jobs.extend(pages_needing_ocr(pdf, force=force))
        except PdfUnreadable as error:
            say(f"Error: {pdf.name}: {error}", err=True)
            unreadable += 1
    if not jobs:
        click.echo("No page needs OCR (every page has a text layer or a sidecar; --force redoes sidecars).")
        sys.exit(1 if unreadable else 0)
    with click.progressbar(jobs, label="OCR", item_show_func=_job_label, file=sys.stderr) as bar:
        for job in bar:
            write_sidecar(job, run_ocr(job))
    say([f"wrote {job.sidecar}" for job in jobs])
    if unreadable:
        sys.exit(1)


def _job_label(job: Any) -> str | None:
    return visible(f"{job.pdf.name} page {job.page}") if job else None


@cli.command()
@pdfs_option
@db_option
@click.option("--rebuild", is_flag=True, help="Re-extract everything instead of only what changed.")
@click.option(
    "--embed/--no-embed",
    default=None,
    help="Compute sentence embeddings for semantic and hybrid retrieval. Default: yes when "
    "localqa[semantic] is installed, unless LOCALQA_EMBED=0.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    help="Worker processes for extraction (default: the machine's cores).",
)
@json_option
@fail_cleanly
def index(pdfs: Path, db: Db, rebuild: bool, embed: bool | None, jobs: int | None, as_json: bool) -> None:
    """Bring the index up to date with the documents folder.

    Only added or changed files are extracted (by content hash); removed files are dropped. The
    index is changed in place, in transactions: an interrupted or failed run leaves the index as
    it was, and searches meanwhile see the previous index. Questions can be asked as soon as the
    text is indexed, while the embeddings are computed; an interrupted run keeps the embeddings it
    finished, and the next one computes the rest. Exit status 1 when any file could not be
    indexed (each is named with the reason).
    """
    from localqa.indexing.index import refresh_index

    events = _IndexEvents(show=not as_json and sys.stderr.isatty(), announce=not as_json)
    try:
        with events:
            report = refresh_index(pdfs, db, rebuild=rebuild, embed=embed, jobs=jobs, events=events)
    except KeyboardInterrupt:
        if not events.searchable_now:
            raise
        say(
            "Interrupted: the index is up to date and searchable; the embeddings computed so far are "
            "kept, run 'localqa index' to compute the rest.",
            err=True,
        )
        sys.exit(130)
    if as_json:
        click.echo(json.dumps(index_json(report), indent=2))
    else:
        for label, names in (
            ("added", report.added),
            ("changed", report.changed),
            ("removed", report.removed),
        ):
            say([f"{label:>8}  {name}" for name in names])
        say(
            f"Index {report.db}: {report.documents} documents, {report.passages} passages "
            f"({len(report.added)} added, {len(report.changed)} changed, {len(report.removed)} removed, "
            f"{report.unchanged} unchanged)."
        )
        if report.embedded:
            say(f"Embedded {report.embedded} new or changed passages for semantic retrieval.")
        say([f"{'Warning' if p.warning else 'Error'}: {p}" for p in report.problems], err=True)
    if report.failed:
        sys.exit(1)


class _IndexEvents:
    """What `localqa index` shows while the index is refreshed (`localqa.indexing.index.RefreshEvents`): a
    progress bar for extraction, the moment the index is searchable, a progress bar for the
    embeddings."""

    def __init__(self, show: bool, announce: bool) -> None:
        self.extraction = _ProgressBar("Extracting", show, unit="pages")
        self.embeddings = _ProgressBar("Embedding", show, unit="passages")
        self.announce = announce
        self.searchable_now = False

    def __enter__(self) -> _IndexEvents:
        return self

    def __exit__(self, *exc: object) -> None:
        self.extraction.close()
        self.embeddings.close()

    def waiting(self, why: str) -> None:
        say(f"Waiting: {why}", err=True)

    def extracting(self, done: int, total: int, item: str) -> None:
        self.extraction(done, total, item)

    def searchable(self, summary: WriteSummary, to_embed: int) -> None:
        self.searchable_now = True
        self.extraction.close()  # the extraction bar ends before the line below
        if to_embed and self.announce:
            say(
                f"Searchable now: {summary.documents} documents, {summary.passages} passages; "
                f"embedding {to_embed} passages for semantic retrieval (interrupt to finish later).",
                err=True,
            )

    def embedding(self, done: int, total: int, item: str) -> None:
        self.embeddings(done, total, item)


class _ProgressBar:
    """A click progress bar on stderr for library code that reports (done, total, item): the
    bar is created on the first report, when the total is known; it shows the rate in `unit`s
    per second and the time left. Click hides it off a terminal."""

    def __init__(self, label: str, enabled: bool = True, unit: str = "") -> None:
        self.label = label
        self.enabled = enabled
        self.unit = unit
        self.bar: Any = None
        self.started = 0.0

    def __call__(self, done: int, total: int, item: str) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            self.started = time.monotonic()
            self.bar = click.progressbar(
                length=total,
                label=self.label,
                file=sys.stderr,
                show_eta=True,
                item_show_func=lambda name: visible(name) if name else name,
            )
            self.bar.__enter__()
        elapsed = time.monotonic() - self.started
        rate = f" · {done / elapsed:.0f} {self.unit}/s" if self.unit and done and elapsed > 0 else ""
        self.bar.update(done - self.bar.pos, f"{item}{rate}")

    def __enter__(self) -> _ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Fill the bar and end its line (it may be reported to again: a new bar starts)."""
        if self.bar is not None:
            self.bar.update(self.bar.length - self.bar.pos)
            self.bar.__exit__(None, None, None)
            self.bar = None


@cli.command()
@who_options("Count only what this role may see", "Count only this tenant's documents")
@click.option(
    "--all",
    "everything",
    is_flag=True,
    help="The operator's view: every document of every tenant and access label, and the ones "
    "visible to nobody.",
)
@click.option(
    "--documents",
    "listing",
    is_flag=True,
    help="Also list the documents the caller may see: file name, series, effective date, the "
    "period each covers (from the catalog or its cover) and whether it is in force today.",
)
@db_option
@json_option
@fail_cleanly
def status(role: str, tenant: str, everything: bool, listing: bool, db: Db, as_json: bool) -> None:
    """Show what the index holds: documents, passages by kind and by format, sidecars, embeddings.

    Counts cover only the documents the caller may see (their tenant and an access label their
    role may see, every version and status), unless --all, which also shows the corpus digest.
    """
    from localqa.library import Library

    if listing and everything:
        raise click.UsageError("--documents lists what one caller may search; use it without --all")
    caller = None if everything else Caller(role=role, tenant=tenant)
    with Library(db) as library:
        info = library.status(caller)
        listed = library.documents(as_of=date.today(), caller=caller) if listing else []
    if as_json:
        payload = status_json(info, caller)
        if listing:
            payload["listed"] = [document_json(row) for row in listed]
        click.echo(json.dumps(payload, indent=2))
        return
    kinds = ", ".join(f"{count} {kind}" for kind, count in info.passages.items())
    formats = ", ".join(f"{count} {name}" for name, count in info.formats.items())
    seen_by = "everyone (--all)" if caller is None else f"role {caller.role} · tenant {caller.tenant}"
    say(
        [
            f"Index:          {info.path}",
            f"Counted for:    {seen_by}",
            f"Documents:      {info.documents}",
            f"Passages:       {sum(info.passages.values())} ({kinds})",
            *([f"By format:      {formats}"] if formats else []),
            f"OCR sidecars:   {info.sidecars}",
            *([f"Corpus digest:  {info.corpus_digest}"] if info.corpus_digest else []),
            *(
                f"Embeddings:     {count} of {sum(info.passages.values())} passages ({model}{_former(model)})"
                for model, count in info.embeddings.items()
            ),
            f"Schema version: {info.schema_version}",
        ]
    )
    if listing:
        say(["", f"Documents role {role} · tenant {tenant} may see ({len(listed)}):"])
        say([f"  {_listed(row)}" for row in listed])
    invisible = info.invisible_documents
    say([f"Warning: {s} has no valid access label and is visible to nobody" for s in invisible], err=True)


def _former(model: str) -> str:
    """What `status` adds to the embeddings of an earlier encoder, which search never uses."""
    from localqa.retrieval.embeddings import FORMER_MODEL_NAMES

    if model not in FORMER_MODEL_NAMES:
        return ""
    return ", an earlier encoder's: 'localqa index' computes them again"


def _listed(row: Any) -> str:
    """One line of `status --documents`."""
    document = row.document
    parts = [document.source, f"series {document.series}"]
    if document.effective:
        parts.append(f"effective {document.effective.isoformat()}")
    if row.period is not None:
        parts.append(f"period {row.shown_period}, from its {row.period_from}")
    if row.in_force:
        parts.append("in force")
    else:
        parts.append(f"in force from {row.in_force_from}" if row.in_force_from else "not in force today")
    return " · ".join(parts)


always_ask_model_option = click.option(
    "--always-ask-model",
    is_flag=True,
    help="Ask the model on every part, also where the evidence decides (the identifier's own row, a "
    "computed figure, a clear first value: docs/answers.md); for evaluating the model itself.",
)


@cli.command()
@click.argument("question", required=False, default="")
@click.option("--part", "parts", multiple=True, help="A question part, searched on its own (repeatable).")
@click.option(
    "-k",
    "k",
    type=click.IntRange(*SEARCH_K),
    default=RETRIEVAL.k,
    show_default=True,
    help="Candidates per part.",
)
@retriever_option
@documents_option
@caller_options
@db_option
@json_option
@fail_cleanly
def search(
    question: str,
    parts: tuple[str, ...],
    k: int,
    retriever: str,
    documents: tuple[str, ...],
    as_of: date,
    role: str,
    tenant: str,
    db: Db,
    as_json: bool,
) -> None:
    """Retrieval only, no model: the ranked candidates for each part of QUESTION.

    A compound question is split on clause boundaries, or give the parts with --part. Only
    documents the caller may see, in force on the --as-of date, are searched (only those --doc
    names, when given). A part that names documents (a company, with a fiscal year or a report
    type) is searched mainly in them, and says so.
    """
    from localqa.library import Library

    caller = Caller(role=role, tenant=tenant)
    settings = RetrievalSettings.model_validate({"retriever": retriever, "k": k})
    with Library(db) as library:
        results = library.search(
            question, as_of=as_of, caller=caller, parts=parts, settings=settings, documents=documents
        )
    if as_json:
        click.echo(json.dumps(search_json(results, as_of, caller, documents), indent=2))
        return
    lines = [printed.header(as_of, caller, results, documents)]
    for number, result in enumerate(results, start=1):
        lines += [*printed.part_head(number, result), *printed.candidate_lines(result)]
    say(lines)


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
    type=click.IntRange(*ASK_K),
    default=ANSWERING.k,
    show_default=True,
    help="Passages per part whose sentences are ranked; the model is shown the best few sentences.",
)
@retriever_option
@click.option(
    "--show",
    "show_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Write each verified quote's page, highlighted, as a PNG into this folder.",
)
@click.option(
    "--pdfs",
    "pdfs_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=DEFAULT_PDFS,
    show_default=True,
    help="The folder that was indexed (for --show).",
)
@documents_option
@caller_options
@db_option
@json_option
@click.option(
    "--verbose",
    is_flag=True,
    help="Also print per part the sentences the model was shown as the scorer ranked them, the "
    "model's choice (or the evidence's), the evidence coverage of its quote, and timing: retrieval, "
    "scorer, model time, tokens and label probability.",
)
@always_ask_model_option
@fail_cleanly
def ask(
    question: str,
    parts: tuple[str, ...],
    model_spec: str | None,
    k: int,
    retriever: str,
    show_dir: Path | None,
    pdfs_dir: Path,
    documents: tuple[str, ...],
    as_of: date,
    role: str,
    tenant: str,
    db: Db,
    as_json: bool,
    verbose: bool,
    always_ask_model: bool,
) -> None:
    """Answer each part of QUESTION with a verified quote and its citation.

    The model picks a sentence from the retrieved passages; localqa checks that it is a whole
    sentence (or table row) of the cited passage before showing it. Otherwise it prints
    'No quote verified from N candidates.' with the reason. Exit status 1 if the model failed.
    """
    from localqa.library import Library
    from localqa.models import get_model

    caller = Caller(role=role, tenant=tenant)
    model = get_model(model_spec)
    settings = RetrievalSettings.model_validate({"retriever": retriever, "k": k})
    with Library(db) as library:
        asked = library.answer(
            question,
            as_of=as_of,
            caller=caller,
            parts=parts,
            model=model,
            settings=settings,
            answer_settings=ANSWERING.model_copy(update={"always_ask_model": always_ask_model}),
            documents=documents,
        )
        images = _page_images(asked, show_dir, pdfs_dir, as_of, caller, library) if show_dir else {}
    if as_json:
        payload = ask_json(
            [p.result for p in asked.parts],
            [p.answer for p in asked.parts],
            as_of,
            caller,
            (asked.backend, asked.model),
            documents,
        )
        for part, shown in zip(payload["parts"], asked.parts, strict=True):
            if verbose:
                part["timing"] = timing_json(shown.answer)
        for index, image in images.items():
            payload["parts"][index]["image"] = image
        if verbose:
            payload["retrieval_seconds"] = asked.retrieval_seconds
        payload["rewrite"] = None  # a single question is asked as it stands ('localqa chat' rewrites)
        click.echo(json.dumps(payload, indent=2))
    else:
        baseline = "" if model.is_language_model else " (a baseline: no language model)"
        header = printed.header(as_of, caller, [p.result for p in asked.parts], documents)
        lines = [f"{header} · model {model.label}{baseline}"]
        notes = {
            p.answer.selection.note for p in asked.parts if p.answer.selection and p.answer.selection.note
        }
        lines += [f"({note})" for note in sorted(notes)]
        if verbose:
            lines.append(f"Retrieval: {asked.retrieval_seconds * 1000:.0f} ms for {len(asked.parts)} part(s)")
        for number, part in enumerate(asked.parts, start=1):
            lines += [
                *printed.part_head(number, part.result),
                *printed.answer_lines(part.result, part.answer),
            ]
            if number - 1 in images:
                lines.append(f"   page image: {images[number - 1]}")
            if verbose:
                lines += printed.selection_lines(part.answer.selection)
                lines.append(f"   ({printed.timing(part.answer)})")
                if part.answer.coverage:
                    lines.append(f"   (evidence coverage: {part.answer.coverage.describe()})")
        say(lines)
    faults = {p.answer.reason for p in asked.parts if p.answer.model_failed and p.answer.reason}
    if faults:
        say([f"Error: {fault}" for fault in sorted(faults)], err=True)
        sys.exit(1)


@cli.command()
@click.option(
    "--model",
    "model_spec",
    metavar="NAME",
    help="As 'ask --model'. A language model also rewrites a follow-up the rules cannot decide.",
)
@click.option(
    "-k",
    "k",
    type=click.IntRange(*ASK_K),
    default=ANSWERING.k,
    show_default=True,
    help="Passages per part whose sentences are ranked (as 'ask -k').",
)
@retriever_option
@documents_option
@caller_options
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per turn (JSON Lines).")
@fail_cleanly
def chat(
    model_spec: str | None,
    k: int,
    retriever: str,
    documents: tuple[str, ...],
    as_of: date,
    role: str,
    tenant: str,
    db: Db,
    as_json: bool,
) -> None:
    """A conversation: each line read is a question; a follow-up ("And EQ-502?", "What about
    FY2018?", "Why?") is rewritten into a standalone question, shown as 'Understood as: ...', and
    answered exactly as 'ask' answers it, with the same caller, date and --doc scope.

    The rewrite uses only names, years, identifiers and figures of the conversation so far (its
    questions and shown answers). Type /new to start a new conversation; end with Ctrl-D. With
    --json each turn is ask's JSON with a "rewrite" record. Reads stdin line by line, so a file
    of questions can be piped in.
    """
    from localqa.conversation import MAX_QUESTION_CHARS, Conversation, rewrite, turn_of
    from localqa.library import Library
    from localqa.models import get_model

    caller = Caller(role=role, tenant=tenant)
    model = get_model(model_spec)
    settings = RetrievalSettings.model_validate({"retriever": retriever, "k": k})
    conversation = Conversation(caller, documents)
    prompt = sys.stdin.isatty() and not as_json
    failed = False
    with Library(db) as library:
        while True:
            if prompt:
                click.echo("> ", nl=False, err=True)
            line = sys.stdin.readline()
            if not line:
                break
            question = line.strip()
            if not question:
                continue
            if len(question) > MAX_QUESTION_CHARS:
                say(
                    f"Error: a question is at most {MAX_QUESTION_CHARS} characters; ask something shorter",
                    err=True,
                )
                continue
            if question == "/new":
                conversation = Conversation(caller, documents)
                if not as_json:
                    say("(new conversation)")
                continue
            rewritten = rewrite(question, conversation.turns, caller, model, library.settings.answering)
            try:
                asked = library.answer(
                    rewritten.standalone,
                    as_of=as_of,
                    caller=caller,
                    model=model,
                    settings=settings,
                    documents=documents,
                )
            except QuestionError as error:  # one bad question does not end the conversation
                say(f"Error: {error}", err=True)
                continue
            answers = [p.answer for p in asked.parts]
            conversation.add(turn_of(rewritten, caller, answers))
            failed = failed or any(a.model_failed for a in answers)
            if as_json:
                payload = ask_json(
                    [p.result for p in asked.parts],
                    answers,
                    as_of,
                    caller,
                    (asked.backend, asked.model),
                    documents,
                )
                payload["rewrite"] = rewritten.record()
                click.echo(json.dumps(payload))
                continue
            lines = []
            if rewritten.rewritten:
                lines.append(f"Understood as: {rewritten.standalone}")
            if rewritten.refused:
                lines.append(f"(the model's rewrite was not used: {rewritten.refused})")
            for number, part in enumerate(asked.parts, start=1):
                lines += [
                    *printed.part_head(number, part.result),
                    *printed.answer_lines(part.result, part.answer),
                ]
            say([*lines, ""])
    if failed:
        sys.exit(1)


@cli.command()
@json_option
@fail_cleanly
def models(as_json: bool) -> None:
    """List the answer backends, which are available here, and the default."""
    from localqa.models import MODEL_ENV, backends, default_spec

    found = backends()
    env = os.environ.get(MODEL_ENV)
    try:
        default: str | None = default_spec()
    except LocalQAError:
        default = None
    if as_json:
        click.echo(json.dumps({"default": default, "backends": [vars(b) for b in found]}, indent=2))
        return
    lines = []
    for info in found:
        mark = "*" if default and default.partition(":")[0] == info.name else " "
        state = "available" if info.available else "not available"
        lines.append(f"{mark} {info.name:<11} {state:<14} {info.detail}")
    source = "from LOCALQA_MODEL" if env else "chosen automatically"
    lines.append(
        f"Default: {default} ({source})" if default else "Default: none available (use --model extractive)"
    )
    say(lines)


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
    help="Grade recorded answers (JSONL: id, quote, citation, value) from another system.",
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
    "-k",
    "k",
    type=click.IntRange(*SEARCH_K),
    default=RETRIEVAL.k,
    show_default=True,
    help="Candidates per part.",
)
@click.option(
    "--chunking",
    type=click.Choice(CHUNKINGS),
    default=RETRIEVAL.chunking,
    show_default=True,
    help="heading: a passage's heading path is searchable with it; body: its text only.",
)
@retriever_option
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON.")
@always_ask_model_option
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
    db: Db,
    as_json: bool,
    always_ask_model: bool,
) -> None:
    """Score a suite: retrieval, answers and authorization, each separately.

    SUITE is a folder with cases.toml (default evals/library); a suite with its own docs/ is
    indexed into a temporary index, otherwise --db is used. Without --model only retrieval is
    scored. Exit status 1 when a gate fails: any tenant/access leak, any unverified quote or
    unchecked figure shown; in a suite that holds its answers (hold_answers = true), a no-answer
    case shown a quote or a wrong value, outside its known failures.
    """
    from localqa.evaluate import compare as comparing
    from localqa.evaluate.report import markdown, terminal_summary
    from localqa.evaluate.run import load_answers, run_suite
    from localqa.evaluate.suite import load_suite
    from localqa.indexing.files import write_atomic
    from localqa.models import get_model

    if model_spec and answers_path:
        raise click.UsageError("choose --model (answer now) or --answers (grade recorded answers), not both")
    from localqa.evaluate.conversations import is_conversation_suite

    if is_conversation_suite(suite_path):
        if answers_path or coverage or compare_path or report_path:
            raise click.UsageError(
                "a conversation suite is scored turn by turn; use it without --answers, --coverage, "
                "--compare and --report"
            )
        _evaluate_conversations(suite_path, model_spec, save_path, k, chunking, retriever, db, as_json)
        return
    suite = load_suite(suite_path)
    retrieval = RetrievalSettings.model_validate({"retriever": retriever, "k": k, "chunking": chunking})
    settings = Settings(
        retrieval=retrieval, answering=ANSWERING.model_copy(update={"always_ask_model": always_ask_model})
    )
    if coverage:
        if model_spec or answers_path or save_path or compare_path or report_path or as_json:
            raise click.UsageError(
                "--coverage compares retrieval only; use it without --model, --answers, "
                "--save, --compare, --report and --json"
            )
        _print_coverage(suite, db, retrieval)
        return
    # Everything that can be refused is checked before minutes of model calls.
    before = comparing.load_run(compare_path) if compare_path is not None else None
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
    say(run.index_problems, err=True)
    comparison = None
    if before is not None:
        comparison = comparing.compare(before, comparing.SavedRun.of(run), str(compare_path))
    if save_path is not None:
        run.save(save_path)
    if report_path is not None:
        write_atomic(report_path, markdown(run, comparison))
    if as_json:
        click.echo(json.dumps(run.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        say(terminal_summary(run, comparison))
    say([f"Error: gate failed: {gate}" for gate in run.gates_failed], err=True)
    if run.model_errors:
        say(
            f"Error: the model failed on {run.model_errors} case(s); see the answers' "
            "reasons (is the backend running and the model installed?)",
            err=True,
        )
    if run.gates_failed or run.model_errors:
        sys.exit(1)


def _evaluate_conversations(
    suite_path: Path,
    model_spec: str | None,
    save_path: Path | None,
    k: int,
    chunking: str,
    retriever: str,
    db: Db,
    as_json: bool,
) -> None:
    """`localqa eval` of a conversation suite (conversations.toml): each turn rewritten as
    `localqa chat` rewrites it, then scored; exit status 1 when a gate fails."""
    from localqa.evaluate.conversations import gates_failed, load_conversations, run_conversations, summary
    from localqa.indexing.files import write_atomic
    from localqa.models import get_model

    suite = load_conversations(suite_path)
    settings = Settings(
        retrieval=RetrievalSettings.model_validate({"retriever": retriever, "k": k, "chunking": chunking})
    )
    model = get_model(model_spec) if model_spec else None
    run = run_conversations(suite, db=db, settings=settings, model=model)
    text = run.model_dump_json(indent=2)
    if save_path:
        write_atomic(save_path, text + "\n")
    if as_json:
        click.echo(text)
    else:
        say(summary(run))
    if gates_failed(run):
        sys.exit(1)


def _print_coverage(suite: Suite, db: Db, settings: RetrievalSettings) -> None:
    from localqa.evaluate.coverage import coverage

    rows = coverage(suite, db, settings)
    if not rows:
        say("No compound question in this suite (a case whose question splits into parts).")
        return
    lines = [f"Coverage by expected record (k={settings.k}): one search / per-part search"]
    for row in rows:
        one = "found" if row.one_search else "MISSED"
        each = "found" if row.per_part else "MISSED"
        lines.append(f"  {one:<6} / {each:<6}  {row.case}: {row.expected}")
    missed = sum(not r.one_search for r in rows)
    lines.append(
        f"One search found {len(rows) - missed}/{len(rows)}; per-part search found "
        f"{sum(r.per_part for r in rows)}/{len(rows)}."
    )
    say(lines)


# --- seeing the evidence: show, ask --show, serve ------------------------------------------------


@cli.command()
@click.argument("source")
@click.argument("page", type=click.IntRange(min=1), required=False)
@click.option("--quote", help="Text to highlight: it must be in a passage on that page.")
@click.option(
    "-o",
    "output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Where to write the PNG (default: <stem>.page-<PAGE>.png in the current folder).",
)
@click.option(
    "--dpi", type=click.IntRange(36, 600), default=110, show_default=True, help="Resolution of the PNG."
)
@pdfs_option
@caller_options
@db_option
@fail_cleanly
def show(
    source: str,
    page: int | None,
    quote: str | None,
    output: Path | None,
    dpi: int,
    pdfs: Path,
    as_of: date,
    role: str,
    tenant: str,
    db: Db,
) -> None:
    """Render PAGE of SOURCE as a PNG with the quote's own place highlighted.

    Only the quote is highlighted: its own lines of text, the whole row for a table row, or its
    words on a scanned page or image. A quote that is not on a page of a document the caller may
    see on --as-of is refused, and nothing is highlighted. A slide's number is its PAGE; its text
    is drawn with the quote highlighted. Word, spreadsheet, HTML, Markdown and text sources have no
    pages: leave PAGE out, and the passage holding --quote is printed with the quote marked, or,
    with -o FILE.png, drawn among the passages around it.
    """
    from localqa.display import show as showing
    from localqa.formats import format_of
    from localqa.library import Library

    fmt = format_of(source)
    if page is None and fmt is not None and (fmt.rendered or fmt.name == "pptx"):
        unit = "a slide number" if fmt.name == "pptx" else "PAGE"
        raise click.UsageError(f"{fmt.label} needs {unit}: localqa show SOURCE PAGE [--quote TEXT]")
    caller = Caller(role=role, tenant=tenant)
    with Library(db) as library:
        found = library.page(source, page, as_of=as_of, caller=caller)
    if page is None and output is None:
        if quote is None:
            raise click.UsageError(
                "a source without pages needs --quote to print its paragraph (or -o FILE.png to draw it)"
            )
        passage, before, marked, after = showing.mark(found, quote)
        where = f"paragraph {passage.paragraph}" + (f", § {passage.section}" if passage.section else "")
        click.echo(f"{visible(source)}, {visible(where)}")
        click.echo(f"   {visible(before)}»{click.style(visible(marked), reverse=True)}«{visible(after)}")
        return
    from localqa.indexing.files import write_atomic

    image = showing.page_image(pdfs, found, quote, dpi=dpi)
    output = output or Path(f"{Path(source).stem}.page-{page}.png")
    write_atomic(output, image)
    say(f"wrote {output}" + ("" if quote else " (no --quote: nothing highlighted)"))


@cli.command()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on. Anything but a loopback address needs --users.",
)
@click.option(
    "--port", type=click.IntRange(1, 65535), default=8000, show_default=True, help="Port to listen on."
)
@click.option(
    "--users",
    "users_file",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="TOML file of [[user]] tables (token_sha256, role, tenant, operator): every request must then "
    "carry 'Authorization: Bearer TOKEN'. Required off loopback.",
)
@click.option(
    "--runs",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    help="Folder of runs saved by 'eval --save', for the evaluation page. An operator's view: runs "
    "quote every suite's documents, so only the local caller (no --users) or users with "
    "operator = true see it.",
)
@click.option(
    "--model",
    "model_spec",
    metavar="NAME",
    help="Default answer backend on the ask page (default: as 'localqa models' chooses).",
)
@who_options("The caller every request is served as, without --users", "The caller's tenant without --users")
@pdfs_option
@db_option
@fail_cleanly
def serve(
    host: str,
    port: int,
    users_file: Path | None,
    runs: Path | None,
    model_spec: str | None,
    role: str,
    tenant: str,
    pdfs: Path,
    db: Db,
) -> None:
    """Serve the web app and JSON API over the library (needs localqa[serve]).

    Pages: ask (each part's verified quote on its highlighted page, shown as it is verified),
    search, library, evaluation. API: POST /api/ask and /api/search with a JSON body {"question",
    "as_of", "parts", "model", "k"}, GET /api/documents, GET /api/pages/SOURCE/PAGE.png?quote=...;
    the same JSON as the CLI's --json. Who is asking never comes from the request: on loopback it
    is the --role/--tenant caller, otherwise the user whose token the request carries. Requests
    that another web page makes a browser send are refused.
    """
    try:
        import uvicorn

        from localqa.serve.app import ServeConfig, create_app
    except ImportError:
        raise click.ClickException("localqa serve needs its extra: pip install 'localqa[serve]'") from None
    from localqa.library import Library
    from localqa.models import get_model
    from localqa.serve.auth import is_loopback, load_users

    loopback = is_loopback(host)
    if not loopback and users_file is None:
        raise click.UsageError(
            f"--host {host} is not a loopback address; give --users FILE so that every request "
            "must carry a token (anyone who can reach the port would otherwise read the library)"
        )
    users = load_users(users_file) if users_file else None
    with Library(db) as library:
        library.check()  # fail now, with the CLI's message, rather than on the first request
    if model_spec:
        get_model(model_spec)  # an unknown name is a usage error now (nothing is loaded yet)
    own_names = frozenset(f"{name}:{port}" for name in ("127.0.0.1", "localhost", "[::1]"))
    config = ServeConfig(
        db=db,
        pdfs=pdfs,
        caller=Caller(role=role, tenant=tenant),
        users=users,
        runs=runs,
        model=model_spec,
        allowed_hosts=own_names if loopback and users is None else None,
    )
    app = create_app(config)
    shown_host = f"[{host}]" if ":" in host else host
    who = f"{len(users)} users from {users_file}" if users else f"role {role}, tenant {tenant}"
    click.echo(f"localqa serving http://{shown_host}:{port} ({who}); Ctrl-C stops it", err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)


@cli.command()
@click.option("--http", "over_http", is_flag=True, help="Serve streamable HTTP at /mcp instead of stdio.")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="With --http: address to listen on. Anything but a loopback address needs --users.",
)
@click.option(
    "--port", type=click.IntRange(1, 65535), default=8765, show_default=True, help="With --http: port."
)
@click.option(
    "--users",
    "users_file",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="With --http: TOML file of [[user]] tables, as for 'localqa serve'; every request must then "
    "carry 'Authorization: Bearer TOKEN', and its user is the caller. Required off loopback.",
)
@click.option(
    "--model",
    "model_spec",
    metavar="NAME",
    help="Answer backend for the ask tool (default: as 'localqa models' chooses).",
)
@click.option(
    "--as-of",
    callback=lambda ctx, param, value: None if value is None else _iso_date(ctx, param, value),
    metavar="YYYY-MM-DD",
    help="The date a call asks about when it gives none (default: the day of the call).",
)
@who_options("The caller every call is served as, without --users", "The caller's tenant without --users")
@click.option(
    "--pdfs",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    help="The folder that was indexed, for page images (default: ./pdfs when there is one; an "
    "assistant may start localqa in another folder, so give it as an absolute path).",
)
@db_option
@fail_cleanly
def mcp(
    over_http: bool,
    host: str,
    port: int,
    users_file: Path | None,
    model_spec: str | None,
    as_of: date | None,
    role: str,
    tenant: str,
    pdfs: Path | None,
    db: Db,
) -> None:
    """A Model Context Protocol server for assistants (needs localqa[mcp]).

    Over stdio by default, as Claude Desktop, VS Code and Cursor launch it (docs/integrations.md);
    with --http, streamable HTTP at http://HOST:PORT/mcp. Tools: ask (verified quotes and their
    citations, or 'No quote verified' and why), search (ranked candidates), documents (what the
    caller may see) and page (a page's text, or its image with a quote highlighted). Who is asking
    comes from --role/--tenant, or with --users from the request's token; never from a tool
    argument, and an argument naming a role or tenant is refused. --as-of sets the date a call
    asks about when it gives none (default: the day of the call).
    """
    try:
        from localqa.serve.mcp_server import LocalqaMCP, McpConfig, serve_http, serve_stdio
    except ImportError:
        raise click.ClickException("localqa mcp needs its extra: pip install 'localqa[mcp]'") from None
    from localqa.library import Library
    from localqa.models import get_model
    from localqa.serve.auth import is_loopback, load_users

    if not over_http and users_file is not None:
        raise click.UsageError("--users is for --http: over stdio the caller is --role/--tenant")
    if over_http and not is_loopback(host) and users_file is None:
        raise click.UsageError(
            f"--host {host} is not a loopback address; give --users FILE so that every request "
            "must carry a token (anyone who can reach the port would otherwise read the library)"
        )
    users = load_users(users_file) if users_file else None
    with Library(db) as library:
        library.check()  # fail now, with the CLI's message, rather than on the first call
    if model_spec:
        get_model(model_spec)  # an unknown name is a usage error now
    if pdfs is None and DEFAULT_PDFS.is_dir():
        pdfs = DEFAULT_PDFS
    config = McpConfig(
        db=db, pdfs=pdfs, caller=Caller(role=role, tenant=tenant), users=users, model=model_spec, as_of=as_of
    )
    server = LocalqaMCP(config)
    if not over_http:
        serve_stdio(server)
        return
    shown_host = f"[{host}]" if ":" in host else host
    who = f"{len(users)} users from {users_file}" if users else f"role {role}, tenant {tenant}"
    click.echo(f"localqa mcp serving http://{shown_host}:{port}/mcp ({who}); Ctrl-C stops it", err=True)
    serve_http(server, host, port)


def _page_images(
    asked: Asked, folder: Path, pdfs: Path, as_of: date, caller: Caller, library: Library
) -> dict[int, str]:
    """One PNG per verified quote (`ask --show`): its page, or for a source without page images
    its own text drawn around it; part index -> the file written, or why none was."""
    import re

    from localqa.display import show as showing

    folder.mkdir(parents=True, exist_ok=True)
    images: dict[int, str] = {}
    for index, part in enumerate(asked.parts):
        citation = part.answer.citation
        if not part.answer.verified or citation is None:
            continue
        stem = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(citation.source).stem)[:80]
        page = "" if citation.page is None else f".page-{citation.page}"
        target = folder / f"{index + 1}-{stem}{page}.png"
        try:
            found = library.page(citation.source, citation.page, as_of=as_of, caller=caller)
            target.write_bytes(showing.page_image(pdfs, found, part.answer.quote, cited=citation))
        except LocalQAError as error:
            images[index] = f"not written ({error})"
            continue
        images[index] = str(target)
    return images


def main() -> None:
    try:
        cli(prog_name="localqa")
    except BrokenPipeError:
        # Output piped into something that stopped reading: not an error worth a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
