"""Planning a refresh: what the folder holds, what each source's metadata is, what must be
extracted, removed or kept. Reads the folder and the catalog; never the index itself (it is
given what the index holds), so every rule here is testable without SQLite.

A source that cannot be indexed now (bad catalog entry, a document id claimed twice) is
`blocked`: it keeps its previously indexed passages, if any, but is visible to nobody until it is
fixed. A file that fails to extract keeps its previous version too (see `Outcome`).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localqa.catalog import CATALOG_NAME, Problem, document_for
from localqa.errors import LocalQAError
from localqa.extract.ocr import parse_sidecar_name
from localqa.store.base import IndexedFile, IndexedState
from localqa.types import Document

SOURCE_SUFFIXES = (".pdf", ".md", ".markdown", ".txt")


@dataclass(frozen=True)
class Unit:
    """One input file that yields passages: a source, or an OCR sidecar of a PDF page."""

    name: str
    path: Path
    sha256: str
    doc_source: str  # the source file whose document the passages belong to

    @property
    def is_source(self) -> bool:
        return self.name == self.doc_source


@dataclass(frozen=True)
class Scan:
    folder: Path
    units: list[Unit]
    problems: list[Problem]
    catalog_sha256: str | None  # None: the folder has no catalog.toml


@dataclass(frozen=True)
class Plan:
    documents: dict[str, Document]  # metadata to write, by source
    blocked: set[str]  # sources that cannot be indexed now
    extract: list[Unit]  # to extract, every source before any sidecar
    remove: list[str]  # indexed files that are gone
    problems: list[Problem]


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def scan_folder(folder: Path) -> Scan:
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
    catalog = folder / CATALOG_NAME
    return Scan(folder, units, problems, sha256_file(catalog) if catalog.is_file() else None)


def plan_refresh(
    scan: Scan, catalog: dict[str, dict[str, Any]], indexed: IndexedState, *, rebuild: bool
) -> Plan:
    """Decide metadata, blocked sources and the work to do. `indexed` is what the live index
    holds; with `rebuild` everything present is extracted again."""
    problems = list(scan.problems)
    present = {u.name for u in scan.units}
    for name in sorted(set(catalog) - present):
        problems.append(
            Problem(
                name,
                f"catalog.toml has an entry for a file that is not in {scan.folder}; "
                "remove the entry or add the file",
                warning=True,
            )
        )
    if CATALOG_NAME in indexed.files and scan.catalog_sha256 is None:
        problems.append(
            Problem(
                CATALOG_NAME,
                "was removed: every document is now public and in "
                "the default tenant; restore it if that is not intended",
                warning=True,
            )
        )
    old_ids = {} if rebuild else {source: d.doc_id for source, d in indexed.documents.items()}
    documents, blocked = _documents(scan.units, catalog, problems, old_ids)
    old_files = {} if rebuild else indexed.files
    extract = sorted(
        (u for u in scan.units if u.doc_source not in blocked and _changed(u, old_files.get(u.name))),
        key=lambda u: not u.is_source,
    )
    remove = sorted(n for n in old_files if n not in present and n != CATALOG_NAME)
    return Plan(documents, blocked, extract, remove, problems)


def _changed(unit: Unit, indexed: IndexedFile | None) -> bool:
    return indexed is None or indexed.sha256 != unit.sha256


def _documents(
    units: list[Unit], catalog: dict[str, dict[str, Any]], problems: list[Problem], old_ids: dict[str, str]
) -> tuple[dict[str, Document], set[str]]:
    """Metadata per source; `blocked` holds sources that cannot be indexed now. A blocked source
    keeps its previous id (`old_ids`: source -> id), so nobody else may claim that id meanwhile."""
    documents: dict[str, Document] = {}
    blocked: set[str] = set()
    for unit in units:
        if not unit.is_source:
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


@dataclass
class Outcome:
    """What a refresh did, per file, once extraction has run."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    problems: list[Problem] = field(default_factory=list)


def outcome(
    scan: Scan,
    plan: Plan,
    indexed: IndexedState,
    extracted: dict[str, tuple[int, ...]],
    failed: set[str],
    problems: list[Problem],
) -> Outcome:
    """Sort the units into added / changed / unchanged, and warn about pages that still need
    OCR. `extracted`: unit name -> its pages without a text layer; `failed`: units that could
    not be read (they keep their previous version)."""
    keep_previous = plan.blocked | failed
    result = Outcome(removed=plan.remove, problems=plan.problems + problems)
    for unit in scan.units:
        if unit.name in extracted:
            (result.changed if unit.name in indexed.files else result.added).append(unit.name)
        elif unit.name in indexed.files and unit.doc_source not in keep_previous:
            result.unchanged += 1
    result.problems += _pages_needing_ocr(scan.units, extracted, indexed, keep_previous)
    return result


def _pages_needing_ocr(
    units: list[Unit], extracted: dict[str, tuple[int, ...]], indexed: IndexedState, skipped: set[str]
) -> list[Problem]:
    """Pages without a text layer or a sidecar, from this run's extraction or the stored record,
    so that deleting a sidecar is warned about although its PDF is not re-extracted."""
    present = {u.name for u in units}
    problems = []
    for unit in units:
        if not unit.is_source or unit.name in skipped or not unit.name.lower().endswith(".pdf"):
            continue
        if unit.name in extracted:
            pages = extracted[unit.name]
        else:
            pages = indexed.files[unit.name].pages_without_text if unit.name in indexed.files else ()
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
