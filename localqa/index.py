"""Building and opening the SQLite index.

`refresh_index` brings the index in line with a folder of sources by content hash: only added or
changed files (PDFs, Markdown/text files, OCR sidecars) are extracted; removed ones are dropped.
It never writes to the live index: it copies it, applies the changes to the copy in one
transaction and moves the copy over the original with `os.replace`, so a reader sees the old
index or the new one, and a build that dies leaves the old one as it was.

A source that cannot be indexed now (unreadable, bad catalog entry, a document id claimed twice)
is reported and keeps its previously indexed version, if it had one: bad input loses nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Literal

from localqa import embeddings
from localqa.catalog import CATALOG_NAME, Problem, document_for, load_catalog
from localqa.errors import IndexMissingError, LocalQAError
from localqa.extract.ocr import extract_sidecar, parse_sidecar_name
from localqa.extract.pdf import PdfUnreadable, extract_pdf
from localqa.extract.plain import extract_markdown, extract_plain
from localqa.extract.text import identifiers
from localqa.schema import SCHEMA_VERSION, migrate
from localqa.tokens import tokenizer
from localqa.types import Document, Kind, Passage

SOURCE_SUFFIXES = (".pdf", ".md", ".markdown", ".txt")
Progress = Callable[[int, int, str], None]  # (done, total, file about to be extracted)


@dataclass
class Unit:
    """One input file that yields passages: a source, or an OCR sidecar of a PDF page."""

    name: str
    path: Path
    sha256: str
    doc_source: str  # the source file whose document the passages belong to


@dataclass
class Extracted:
    passages: list[Passage]
    pages_without_text: list[int] = field(default_factory=list)


@dataclass
class RefreshReport:
    db: Path
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    problems: list[Problem] = field(default_factory=list)
    documents: int = 0
    passages: int = 0
    embedded: int = 0
    digest: str = ""

    @property
    def failed(self) -> bool:
        return any(not p.warning for p in self.problems)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def scan_folder(folder: Path) -> tuple[list[Unit], list[Problem]]:
    """The units in `folder` (not recursive), sidecars attached to their PDF."""
    if not folder.is_dir():
        raise LocalQAError(f"{folder}: no such folder; pass --pdfs DIR with your documents")
    files = sorted(p for p in folder.iterdir() if p.is_file())
    pdfs = {p.stem: p.name for p in files if p.suffix.lower() == ".pdf"}
    units: list[Unit] = []
    problems: list[Problem] = []
    for path in files:
        sidecar = parse_sidecar_name(path.name)
        if sidecar is not None:
            pdf = pdfs.get(sidecar[0], f"{sidecar[0]}.pdf")
            if sidecar[0] not in pdfs:
                problems.append(
                    Problem(
                        path.name,
                        f"OCR sidecar without its PDF ({pdf}); remove it or restore the PDF",
                        warning=True,
                    )
                )
                continue
            units.append(Unit(path.name, path, sha256_file(path), pdf))
        elif path.suffix.lower() in SOURCE_SUFFIXES:
            units.append(Unit(path.name, path, sha256_file(path), path.name))
    return units, problems


def extract_unit(unit: Unit) -> Extracted:
    """Passages of one unit. Raises PdfUnreadable / OSError / UnicodeDecodeError on bad input."""
    sidecar = parse_sidecar_name(unit.name)
    if sidecar is not None:
        # Boxes come from tesseract's words on the page image (about a second a page): found when
        # the sidecar is added or edited, like its text.
        passages, warning = extract_sidecar(
            unit.path, unit.path.with_name(unit.doc_source), unit.doc_source, sidecar[1]
        )
        if warning:
            # Indexed without boxes: a warning, as for a partly readable PDF.
            raise _PartialPdf([Problem(unit.name, warning, warning=True)], Extracted(passages))
        return Extracted(passages)
    suffix = unit.path.suffix.lower()
    if suffix == ".pdf":
        pdf = extract_pdf(unit.path, unit.name)
        if pdf.problems:
            raise _PartialPdf(pdf.problems, Extracted(pdf.passages, pdf.pages_without_text))
        return Extracted(pdf.passages, pdf.pages_without_text)
    if suffix == ".txt":
        return Extracted(extract_plain(unit.path.read_text(encoding="utf-8"), unit.name, None, Kind.PROSE))
    return Extracted(extract_markdown(unit.path, unit.name))


class _PartialPdf(Exception):
    """Some pages failed; the rest were extracted and are still indexed."""

    def __init__(self, problems: list[Problem], extracted: Extracted) -> None:
        super().__init__("partial")
        self.problems = problems
        self.extracted = extracted


def refresh_index(
    folder: Path,
    db_path: Path,
    *,
    rebuild: bool = False,
    progress: Progress | None = None,
    embed: bool | None = None,
    embed_progress: Progress | None = None,
) -> RefreshReport:
    """Bring the index at `db_path` up to date with `folder`. See the module docstring.

    `embed`: compute sentence embeddings for passages that lack them (needs the `semantic`
    extra); None keeps embeddings current only in an index that already has them."""
    report = RefreshReport(db=db_path)
    catalog = load_catalog(folder)
    units, problems = scan_folder(folder)
    report.problems.extend(problems)
    present = {u.name for u in units}
    for name in sorted(set(catalog) - present):
        report.problems.append(
            Problem(
                name,
                "catalog.toml has an entry for a file that is not in "
                f"{folder}; remove the entry or add the file",
                warning=True,
            )
        )

    old_files, old_ids = ({}, {}) if rebuild or not db_path.exists() else _indexed(db_path)
    documents, blocked = _documents(units, catalog, report.problems, old_ids)
    if CATALOG_NAME in old_files and CATALOG_NAME not in catalog_names(folder):
        report.problems.append(
            Problem(
                CATALOG_NAME,
                "was removed: every document is now public and in "
                "the default tenant; restore it if that is not intended",
                warning=True,
            )
        )

    # Sources before their sidecars: a sidecar of a PDF that cannot be read now is not indexed
    # either (the document keeps its previous version, sidecars included).
    pending = sorted(
        (u for u in units if u.doc_source not in blocked and old_files.get(u.name, ("",))[0] != u.sha256),
        key=lambda u: u.name != u.doc_source,
    )
    extracted: dict[str, Extracted] = {}
    failed: set[str] = set()
    for done, unit in enumerate(pending):
        if progress:
            progress(done, len(pending), unit.name)
        if unit.doc_source in failed:
            continue
        try:
            extracted[unit.name] = extract_unit(unit)
        except _PartialPdf as partial:
            report.problems.extend(partial.problems)
            extracted[unit.name] = partial.extracted
        except PdfUnreadable as error:
            report.problems.append(Problem(unit.name, str(error)))
            failed.add(unit.name)
        except (OSError, UnicodeDecodeError) as error:
            report.problems.append(Problem(unit.name, f"cannot be read ({error}); check the file"))
            failed.add(unit.name)
    keep_previous = blocked | failed
    report.problems += _pages_needing_ocr(units, extracted, old_files, keep_previous)

    for unit in units:
        if unit.name in extracted:
            (report.changed if unit.name in old_files else report.added).append(unit.name)
        elif unit.name in old_files and unit.doc_source not in keep_previous:
            report.unchanged += 1
    report.removed = sorted(n for n in old_files if n not in present and n != CATALOG_NAME)

    _write(db_path, rebuild, folder, units, documents, blocked, extracted, report, embed, embed_progress)
    return report


def catalog_names(folder: Path) -> set[str]:
    return {CATALOG_NAME} if (folder / CATALOG_NAME).exists() else set()


def _pages_needing_ocr(
    units: list[Unit],
    extracted: dict[str, Extracted],
    old_files: dict[str, tuple[str, list[int]]],
    skipped: set[str],
) -> list[Problem]:
    """Pages without a text layer or a sidecar, from this run's extraction or the stored record,
    so that deleting a sidecar is warned about although its PDF is not re-extracted."""
    present = {u.name for u in units}
    problems = []
    for unit in units:
        if unit.name != unit.doc_source or unit.name in skipped or not unit.name.lower().endswith(".pdf"):
            continue
        pages = (
            extracted[unit.name].pages_without_text
            if unit.name in extracted
            else old_files.get(unit.name, ("", []))[1]
        )
        stem = Path(unit.name).stem
        problems += [
            Problem(
                unit.name,
                "no text layer and no OCR sidecar; run 'localqa ocr' to add one",
                page=page,
                warning=True,
            )
            for page in pages
            if f"{stem}.page-{page}.ocr.txt" not in present
        ]
    return problems


def _documents(
    units: Iterable[Unit],
    catalog: dict[str, dict[str, Any]],
    problems: list[Problem],
    old_ids: dict[str, str],
) -> tuple[dict[str, Document], set[str]]:
    """Metadata per source; `blocked` holds sources that cannot be indexed now. A blocked source
    keeps its previous id (`old_ids`: source -> id), so nobody else may claim that id meanwhile."""
    documents: dict[str, Document] = {}
    blocked: set[str] = set()
    for unit in units:
        if unit.doc_source != unit.name:
            continue
        document, found = document_for(unit.name, catalog.get(unit.name))
        problems.extend(found)
        if document is None:
            blocked.add(unit.name)
        else:
            documents[unit.name] = document
    claims: dict[str, list[str]] = defaultdict(list)
    for source, document in documents.items():
        claims[document.doc_id].append(source)
    for source in blocked:
        if source in old_ids:
            claims[old_ids[source]].append(source)
    for doc_id, sources in claims.items():
        if len(sources) > 1:
            for source in (s for s in sources if s in documents):
                others = ", ".join(s for s in sources if s != source)
                problems.append(
                    Problem(
                        source,
                        f"document id {doc_id!r} is also claimed by {others}; "
                        "give each an `id` of its own in catalog.toml",
                    )
                )
                blocked.add(source)
                del documents[source]
    return documents, blocked


def _indexed(db_path: Path) -> tuple[dict[str, tuple[str, list[int]]], dict[str, str]]:
    """What the live index holds: every file's content hash and (PDFs) pages without a text
    layer, and every document's id by source."""
    try:
        with closing(sqlite3.connect(db_path)) as db:
            files = db.execute("SELECT name, sha256, pages_without_text FROM files").fetchall()
            ids = dict(db.execute("SELECT source, doc_id FROM documents").fetchall())
    except sqlite3.DatabaseError:
        raise LocalQAError(
            f"{db_path} is not a localqa index; "
            "rebuild it with 'localqa index --rebuild' or choose another --db"
        ) from None
    return {name: (sha, [int(p) for p in pages.split(",") if p]) for name, sha, pages in files}, ids


def _write(
    db_path: Path,
    rebuild: bool,
    folder: Path,
    units: list[Unit],
    documents: dict[str, Document],
    blocked: set[str],
    extracted: dict[str, Extracted],
    report: RefreshReport,
    embed: bool | None = None,
    embed_progress: Progress | None = None,
) -> None:
    with _replacing(db_path, from_live=not rebuild) as target:
        _apply(target, folder, units, documents, blocked, extracted, report)
        if embed or (embed is None and embeddings.has_embeddings(target)):
            report.embedded = embeddings.embed_missing(target, embed_progress)


@contextmanager
def _replacing(db_path: Path, *, from_live: bool) -> Iterator[sqlite3.Connection]:
    """A migrated copy of the index (of the live one when `from_live`, else empty) open in one
    transaction. Only when the block completes is it committed and moved over `db_path`; on any
    failure it is deleted and the live index is untouched."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    temporary = db_path.with_name(f"{db_path.name}.tmp-{os.getpid()}")
    temporary.unlink(missing_ok=True)
    target = sqlite3.connect(temporary)
    try:
        if from_live and db_path.exists():
            with closing(sqlite3.connect(db_path)) as live:
                live.backup(target)
        migrate(target)
        with target:
            yield target
    except BaseException:
        target.close()
        temporary.unlink(missing_ok=True)
        raise
    target.close()
    os.replace(temporary, db_path)


def _stamp(db: sqlite3.Connection) -> str:
    """Record the corpus digest, schema version and build date; returns the digest."""
    digest = corpus_digest(db)
    db.executemany(
        "INSERT OR REPLACE INTO meta VALUES (?, ?)",
        [
            ("corpus_digest", digest),
            ("schema_version", str(SCHEMA_VERSION)),
            ("built", date.today().isoformat()),
        ],
    )
    return digest


def _apply(
    db: sqlite3.Connection,
    folder: Path,
    units: list[Unit],
    documents: dict[str, Document],
    blocked: set[str],
    extracted: dict[str, Extracted],
    report: RefreshReport,
) -> None:
    present = {u.name: u for u in units}
    indexed = {name for (name,) in db.execute("SELECT name FROM files")}
    stale = [n for n in indexed if n not in present and n != CATALOG_NAME]
    stale += [n for n in extracted if n in indexed]
    for name in stale:
        _drop_origin(db, name)
        db.execute("DELETE FROM files WHERE name = ?", (name,))

    # Forget the rows being rewritten first, so that ids can move between documents (a swap).
    db.executemany("DELETE FROM documents WHERE source = ?", ((source,) for source in documents))
    for source, document in documents.items():
        holder = db.execute("SELECT source FROM documents WHERE doc_id = ?", (document.doc_id,)).fetchone()
        if holder is not None and holder[0] in present:
            # `_documents` blocks every contested id; reaching this would hand one file's passages
            # (and their access) to another, so stop rather than write.
            raise LocalQAError(f"{source}: document id {document.doc_id!r} is held by {holder[0]}")
        db.execute("DELETE FROM documents WHERE doc_id = ?", (document.doc_id,))  # a removed file's row
        # A catalog edit may give the document a new id: move what is indexed under the old one.
        db.execute("UPDATE passages SET doc_id = ? WHERE source = ?", (document.doc_id, source))
        _insert_document(db, document)
    # A source whose metadata cannot be used keeps its passages but is visible to nobody until it
    # is fixed: its old entry may grant wider access than the one just (mis)written.
    db.executemany("UPDATE documents SET access = NULL WHERE source = ?", ((source,) for source in blocked))

    for name, result in extracted.items():
        unit = present[name]
        document = documents[unit.doc_source]
        for passage in result.passages:
            _insert_passage(db, document.doc_id, name, passage)
        db.execute(
            "INSERT OR REPLACE INTO files VALUES (?, ?, ?)",
            (name, unit.sha256, ",".join(map(str, result.pages_without_text))),
        )

    # Documents whose source is gone lose their row; passages went with their origin above.
    db.execute(
        "DELETE FROM documents WHERE doc_id NOT IN (SELECT doc_id FROM passages) "
        "AND source NOT IN (SELECT name FROM files)"
    )
    catalog = folder / CATALOG_NAME
    if catalog.exists():
        db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, '')", (CATALOG_NAME, sha256_file(catalog)))
    else:
        db.execute("DELETE FROM files WHERE name = ?", (CATALOG_NAME,))
    report.digest = _stamp(db)
    report.documents = db.execute("SELECT count(*) FROM documents").fetchone()[0]
    report.passages = db.execute("SELECT count(*) FROM passages").fetchone()[0]


def _insert_document(db: sqlite3.Connection, document: Document) -> None:
    effective = document.effective.isoformat() if document.effective else None
    db.execute(
        "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            document.doc_id,
            document.source,
            document.series,
            document.version,
            effective,
            document.status.value,
            document.access,
            document.tenant,
            document.title,
        ),
    )


def _drop_origin(db: sqlite3.Connection, origin: str) -> None:
    ids = [i for (i,) in db.execute("SELECT id FROM passages WHERE origin = ?", (origin,))]
    db.executemany("DELETE FROM passages_fts WHERE rowid = ?", ((i,) for i in ids))
    db.executemany("DELETE FROM identifiers WHERE passage_id = ?", ((i,) for i in ids))
    db.executemany("DELETE FROM embeddings WHERE passage_id = ?", ((i,) for i in ids))
    db.execute("DELETE FROM passages WHERE origin = ?", (origin,))


def _insert_passage(db: sqlite3.Connection, doc_id: str, origin: str, passage: Passage) -> None:
    tokens = tokenizer()
    section = passage.section or ""
    cursor = db.execute(
        "INSERT INTO passages (doc_id, origin, kind, source, page, section, paragraph, table_no, "
        "row_no, boxes, text, section_len, body_len) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            doc_id,
            origin,
            passage.kind.value,
            passage.source,
            passage.page,
            passage.section,
            passage.paragraph,
            passage.table,
            passage.row,
            json.dumps(passage.boxes),
            passage.text,
            tokens.length(section),
            tokens.length(passage.text),
        ),
    )
    rowid = cursor.lastrowid
    db.execute(
        "INSERT INTO passages_fts (rowid, section, body) VALUES (?, ?, ?)", (rowid, section, passage.text)
    )
    for column, text in (("section", section), ("body", passage.text)):
        db.executemany(
            "INSERT OR IGNORE INTO identifiers VALUES (?, ?, ?)",
            ((rowid, code, column) for code in identifiers(text)),
        )


def write_documents(
    db_path: Path, documents: Iterable[tuple[Document, Iterable[Passage]]], *, embed: bool = False
) -> None:
    """Build an index straight from documents and passages, skipping extraction: for benchmarks
    and synthetic corpora. Replaces any index at `db_path`, atomically like `refresh_index`."""
    with _replacing(db_path, from_live=False) as db:
        for document, passages in documents:
            _insert_document(db, document)
            for passage in passages:
                _insert_passage(db, document.doc_id, document.source, passage)
            db.execute(
                "INSERT INTO files VALUES (?, ?, '')",
                (document.source, hashlib.sha256(document.source.encode()).hexdigest()),
            )
        if embed:
            embeddings.embed_missing(db)
        _stamp(db)


def corpus_digest(db: sqlite3.Connection) -> str:
    """sha256 over every indexed file's name and content hash: equal digests, equal corpus."""
    digest = hashlib.sha256()
    for name, sha in db.execute("SELECT name, sha256 FROM files ORDER BY name"):
        digest.update(f"{name}\0{sha}\n".encode())
    return digest.hexdigest()


class ReadConnection(sqlite3.Connection):
    """A connection that `with` also closes (sqlite3's own only ends the transaction)."""

    def __exit__(self, *exc: Any) -> Literal[False]:
        super().__exit__(*exc)
        self.close()
        return False


def open_index(db_path: Path) -> sqlite3.Connection:
    """Open an existing index for reading (read-only, so a query can never modify it)."""
    if not db_path.exists():
        raise IndexMissingError(f"no index at {db_path}; build it with 'localqa index'")
    # An escaped URI: a '#' or '?' in the path must not be read as URI syntax.
    uri = f"{db_path.resolve().as_uri()}?mode=ro"
    db = sqlite3.connect(uri, uri=True, check_same_thread=False, factory=ReadConnection)
    try:
        version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.DatabaseError:
        db.close()
        raise IndexMissingError(
            f"{db_path} is not a localqa index; rebuild it with 'localqa index --rebuild'"
        ) from None
    if version is None or int(version[0]) != SCHEMA_VERSION:
        db.close()
        raise LocalQAError(
            f"{db_path} has schema version {version[0] if version else '?'}, this "
            f"localqa needs {SCHEMA_VERSION}; run 'localqa index' to migrate it"
        )
    return db


def index_status(db_path: Path) -> dict[str, Any]:
    with open_index(db_path) as db:
        kinds = dict(db.execute("SELECT kind, count(*) FROM passages GROUP BY kind").fetchall())
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        return {
            "db": str(db_path),
            "documents": db.execute("SELECT count(*) FROM documents").fetchone()[0],
            "passages": {kind.value: kinds.get(kind.value, 0) for kind in Kind},
            "sidecars": db.execute("SELECT count(*) FROM files WHERE name LIKE '%.ocr.txt'").fetchone()[0],
            "invisible_documents": [
                s for (s,) in db.execute("SELECT source FROM documents WHERE access IS NULL ORDER BY source")
            ],
            "corpus_digest": meta.get("corpus_digest"),
            "embeddings": dict(
                db.execute("SELECT model, count(*) FROM embeddings GROUP BY model").fetchall()
            ),
            "schema_version": int(meta.get("schema_version", 0)),
            "built": meta.get("built"),
        }
