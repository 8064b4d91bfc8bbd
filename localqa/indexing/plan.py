"""Planning a refresh: what the folder holds, what each source's metadata is, what must be
extracted, removed or kept. Reads the folder and the catalog; never the index itself (it is
given what the index holds), so every rule here is testable without SQLite.

A source that cannot be indexed now (bad catalog entry, a document id claimed twice) is
`blocked`: it keeps its previously indexed passages, if any, but is visible to nobody until it is
fixed. A file that fails to extract keeps its previous version too (see `Outcome`). A catalog
whose entries and files do not match up (a file without an entry beside an entry without a file)
stops the whole refresh: which entry was meant for which file cannot be known.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from localqa.errors import CatalogError, LocalQAError
from localqa.extract.ocr import parse_sidecar_name
from localqa.formats import NOT_READ, SOURCE_SUFFIXES, format_of
from localqa.indexing.catalog import (
    CATALOG_NAME,
    DEFAULT_ACCESS,
    Catalog,
    Problem,
    document_for,
    document_id,
    file_key,
    looks_like_catalog,
    visible_labels,
)
from localqa.indexing.files import sha256_file
from localqa.store.base import IndexedFile, IndexedState
from localqa.types import ROLES, Document, Status

FEW = 5  # names a message lists before it counts the rest


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
    # Sources without a catalog entry that are public only by the default (`unlabelled_warning`).
    public_by_default: list[str] = field(default_factory=list)


def scan_folder(folder: Path) -> Scan:
    """The units in `folder` (not recursive), sidecars attached to their PDF. Links are not
    followed out of the folder: a link to a file of the folder is that file (indexed once, under
    its own name and catalog entry); any other link is reported and skipped."""
    if not folder.is_dir():
        raise LocalQAError(f"{folder}: no such folder; pass --pdfs DIR with your documents")
    root = folder.resolve()
    problems: list[Problem] = []
    files: list[Path] = []
    for path in sorted(folder.iterdir()):
        if not _is_input(path.name):
            unread = NOT_READ.get(path.suffix.lower())
            if unread and not path.name.startswith(".") and path.is_file():
                problems.append(Problem(path.name, unread, warning=True))
            continue
        if path.is_symlink():
            problems.append(_link_problem(path, root))
        elif path.is_file():
            files.append(path)
    paged = defaultdict(list)  # stem -> the sources with page images a sidecar may belong to
    for p in files:
        if parse_sidecar_name(p.name) is None and (fmt := format_of(p.name)) is not None and fmt.rendered:
            paged[p.stem].append(p.name)
    units: list[Unit] = []
    for path in files:
        sidecar = parse_sidecar_name(path.name)
        if sidecar is not None:
            owners = paged.get(sidecar[0], [])
            if len(owners) != 1:
                problems.append(_sidecar_problem(path.name, sidecar[0], owners))
                continue
            units.append(Unit(path.name, path, sha256_file(path), owners[0]))
        else:
            units.append(Unit(path.name, path, sha256_file(path), path.name))
    catalog = folder / CATALOG_NAME
    return Scan(folder, units, problems, sha256_file(catalog) if catalog.is_file() else None)


def _sidecar_problem(name: str, stem: str, owners: list[str]) -> Problem:
    if not owners:
        return Problem(
            name, f"OCR sidecar without its PDF ({stem}.pdf); remove it or restore the PDF", warning=True
        )
    return Problem(
        name,
        f"OCR sidecar of {' or '.join(owners)}, which share the name {stem}: it is not read until one "
        "of them is renamed",
    )


def _is_input(name: str) -> bool:
    if looks_like_catalog(name):  # never a document (`load_catalog` refuses to run beside one)
        return False
    return parse_sidecar_name(name) is not None or Path(name).suffix.lower() in SOURCE_SUFFIXES


def _link_problem(path: Path, root: Path) -> Problem:
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return Problem(path.name, "a link that leads nowhere; remove it or restore its target")
    if target.parent == root and target.is_file():
        return Problem(
            path.name, f"a link to {target.name}, which is indexed once, as {target.name}", warning=True
        )
    return Problem(
        path.name,
        "a link that leads out of the library folder is not followed; copy the file into the folder instead",
    )


def plan_refresh(scan: Scan, catalog: Catalog, indexed: IndexedState, *, rebuild: bool) -> Plan:
    """Decide metadata, blocked sources and the work to do. `indexed` is what the live index
    holds; with `rebuild` everything present is extracted again (metadata history still counts:
    access never widens because an index was rebuilt)."""
    problems = list(scan.problems)
    if CATALOG_NAME in indexed.files and not catalog.exists:
        problems.append(
            Problem(
                CATALOG_NAME,
                "was removed: documents indexed before keep the metadata they had (access, status, "
                "tenant); new files are public; restore it if that is not intended",
                warning=True,
            )
        )
    old_ids = {} if rebuild else {source: d.doc_id for source, d in indexed.documents.items()}
    public_by_default: list[str] = []
    documents, blocked = _documents(scan, catalog, indexed, problems, old_ids, public_by_default)
    old_files = {} if rebuild else indexed.files
    extract = sorted(
        (u for u in scan.units if u.doc_source not in blocked and _changed(u, old_files.get(u.name))),
        key=lambda u: not u.is_source,
    )
    present = {u.name for u in scan.units}
    remove = sorted(n for n in old_files if n not in present and n != CATALOG_NAME)
    return Plan(documents, blocked, extract, remove, problems, public_by_default)


def _changed(unit: Unit, indexed: IndexedFile | None) -> bool:
    return indexed is None or indexed.sha256 != unit.sha256


def _documents(
    scan: Scan,
    catalog: Catalog,
    indexed: IndexedState,
    problems: list[Problem],
    old_ids: dict[str, str],
    public_by_default: list[str],
) -> tuple[dict[str, Document], set[str]]:
    """Metadata per source; `blocked` holds sources that cannot be indexed now, and
    `public_by_default` is filled with the sources indexed public only by the default. A blocked source
    keeps its previous id (`old_ids`: source -> id), so nobody else may claim that id meanwhile.
    Sources with a catalog entry are decided first: a source without one may have the same
    content as one of them (see `_same_content`)."""
    sources = [u.name for u in scan.units if u.is_source]
    documents: dict[str, Document] = {}
    blocked: set[str] = set()
    for source, problem in _unmatched_entries(sources, catalog, scan.folder).items():
        problems.append(problem)
        if not problem.warning:
            blocked.add(source)
    without_entry = []
    for source in sources:
        if source in blocked:
            continue
        entry = catalog.entries.get(file_key(source))
        if entry is None:
            without_entry.append(source)
            continue
        document, found = document_for(source, entry)
        problems.extend(found)
        if document is None:
            blocked.add(source)
        else:
            documents[source] = document
    contents = _contents(scan, indexed, documents, blocked)
    hashes = {u.name: u.sha256 for u in scan.units}
    for source in without_entry:
        previous = indexed.documents.get(source)
        if previous is not None:
            document, found = _kept(previous, catalog.default_access)
        else:
            document, found = document_for(source, None, catalog.default_access)
        problems.extend(found)
        if document is None:
            blocked.add(source)
            continue
        same = [c for c in contents.get(hashes[source], []) if c[0] != source]
        narrowed = _same_content(document, same, kept=previous is not None)
        if narrowed != document:
            holders = ", ".join(sorted({name for name, _ in same}))
            label = narrowed.access or "visible to nobody"
            problems.append(
                Problem(
                    source,
                    f"has the same content as {holders}, so it is indexed as narrowly (access {label}, "
                    f"status {narrowed.status.value}, tenant {narrowed.tenant}) until catalog.toml has an "
                    "entry for it",
                    warning=True,
                )
            )
        documents[source] = narrowed
        public_by_default += [source] if narrowed.access == "public" and not same else []
    _block_contested_ids(documents, blocked, problems, old_ids)
    public_by_default[:] = [s for s in public_by_default if s not in blocked]
    return documents, blocked


def _contents(
    scan: Scan, indexed: IndexedState, documents: dict[str, Document], blocked: set[str]
) -> dict[str, list[tuple[str, Document | None]]]:
    """The metadata each content hash carries, in the index and in this run's catalog entries:
    sha256 -> [(source, its document, None for one blocked now)]."""
    found: dict[str, list[tuple[str, Document | None]]] = defaultdict(list)
    for source, document in indexed.documents.items():
        if source in indexed.files:
            found[indexed.files[source].sha256].append((source, document))
    for unit in scan.units:
        if unit.is_source and (unit.name in documents or unit.name in blocked):
            found[unit.sha256].append((unit.name, documents.get(unit.name)))
    return found


def _same_content(document: Document, same: list[tuple[str, Document | None]], *, kept: bool) -> Document:
    """Content keeps its access: a source without a catalog entry whose bytes the index (or this
    run's catalog) holds under another name, with a narrower access or status or in another
    tenant, takes the narrowest of them. A renamed or copied staff file stays staff. A new file
    goes to the tenant that holds its content; content held by several tenants is visible to
    nobody (a file kept from before stays in its own tenant)."""
    if not same:
        return document
    others = [d for _, d in same]
    access = min([document.access, *(d.access if d else None for d in others)], key=_width)
    status = max([document.status, *(d.status if d else Status.DRAFT for d in others)], key=_hiding)
    tenant = document.tenant
    if not kept:
        tenants = {d.tenant for d in others if d is not None} or {document.tenant}
        if len(tenants) > 1 or None in others:
            access = None
        elif tenants != {document.tenant}:
            (tenant,) = tenants
    if (access, status, tenant) == (document.access, document.status, document.tenant):
        return document
    update: dict[str, object] = {"access": access, "status": status, "tenant": tenant}
    if tenant != document.tenant:
        update["doc_id"] = document_id(tenant, document.doc_id.partition("/")[2])
    return document.model_copy(update=update)


def _width(access: str | None) -> int:
    """How many roles see a document with this access label."""
    return sum(access in visible_labels(role) for role in ROLES)


def _hiding(status: Status) -> int:
    return (Status.CURRENT, Status.DRAFT, Status.RETIRED).index(status)


def _unmatched_entries(sources: list[str], catalog: Catalog, folder: Path) -> dict[str, Problem]:
    """Problems with catalog keys that match no file, by the name they concern: a name written
    without quotes or twice (in two Unicode forms), or a key naming a file with its folder, is an
    error that blocks that file. Otherwise, while some file has no entry and some entry matches
    no file, the refresh stops (`CatalogError`): a renamed or misnamed file would fall back to
    the defaults (public), and which entry was meant for it cannot be known. An entry that
    matches no file while every file has one is a warning."""
    keys = {file_key(s): s for s in sources}
    if len(keys) < len(sources):
        clashes = sorted(s for s in sources if sum(file_key(o) == file_key(s) for o in sources) > 1)
        return {
            s: Problem(s, "has the same name as another file in another Unicode form; rename one of them")
            for s in clashes
        }
    found: dict[str, Problem] = {}
    for meant, written in catalog.unquoted.items():
        source = keys.get(meant, meant)
        found[source] = Problem(
            source,
            f"catalog.toml: {written} is read by TOML as nested tables, not as this file name; write it "
            f'in quotes: ["{meant}"]',
        )
    for key, forms in catalog.duplicates.items():
        source = keys.get(key, key)
        found[source] = Problem(
            source,
            f"catalog.toml has {len(forms)} entries for this name, written in different Unicode forms "
            f"({' and '.join(ascii(form) for form in forms)}); keep one (the file is not indexed until then)",
        )
    orphans = []
    for key in sorted(set(catalog.entries) - set(keys)):
        base = file_key(re.split(r"[/\\]", key)[-1])
        if base != key and base in keys:
            found[keys[base]] = Problem(
                keys[base],
                f'catalog.toml names this file with a folder ("{key}"); a key is the file name alone: '
                f'["{base}"] (the file is not indexed until then)',
            )
        else:
            orphans.append(key)
    without_entry = sorted(s for k, s in keys.items() if k not in catalog.entries and s not in found)
    if orphans and without_entry:
        raise CatalogError(
            f"{folder / CATALOG_NAME}: {_count(without_entry, 'file has', 'files have')} no entry "
            f"({_first(without_entry)}) while {_count(orphans, 'entry matches', 'entries match')} no "
            f"file ({_first(orphans)}); was a file renamed? Name each entry exactly as its file, give "
            "every file an entry, or remove the entries that match no file (the index was not changed)"
        )
    if len(orphans) > FEW:  # one line, not one per entry (a catalog of 100,000 printed 100,000)
        found[str(folder / CATALOG_NAME)] = Problem(
            str(folder / CATALOG_NAME),
            f"{len(orphans)} entries are for files that are not in {folder} ({_first(orphans)}); remove "
            "the entries or add the files",
            warning=True,
        )
        return found
    for key in orphans:
        found[key] = Problem(
            key,
            f"catalog.toml has an entry for a file that is not in {folder}; remove the entry or add the file",
            warning=True,
        )
    return found


def unlabelled_warning(catalog: Catalog, folder: Path, public: list[str]) -> Problem | None:
    """The warning for the files (`public`) that have no catalog entry and are public only by the
    default, in a folder whose catalog labels files and does not set `default_access`: a staff
    file saved again under a new name is such a file, and nobody decided it is public. A folder
    without a catalog is public by design, and a catalog that sets the default has decided."""
    if not public or not catalog.exists or catalog.default_access is not None:
        return None
    names = sorted(public)
    are = "is" if len(names) == 1 else "are"
    return Problem(
        str(folder / CATALOG_NAME),
        f"{_count(names, 'file has', 'files have')} no catalog entry and {are} "
        f'public by default: {_first(names)}; give each an entry, or set {DEFAULT_ACCESS} = "staff" at the '
        f"top of {CATALOG_NAME}",
        warning=True,
    )


def _count(names: list[str], one: str, many: str) -> str:
    return f"1 {one}" if len(names) == 1 else f"{len(names)} {many}"


def _first(names: list[str]) -> str:
    """`a, b, c, d, e and 95 more`: the first FEW names, and how many more there are."""
    shown = ", ".join(names[:FEW])
    return shown if len(names) <= FEW else f"{shown} and {len(names) - FEW} more"


def _kept(previous: Document, default_access: str | None) -> tuple[Document, list[Problem]]:
    """A document indexed before whose catalog entry is gone keeps its metadata: access, status
    and tenant never change because an entry vanished (only an explicit entry may widen access);
    a catalog's `default_access` narrower than its access narrows it."""
    if default_access is not None and _width(default_access) < _width(previous.access):
        previous = previous.model_copy(update={"access": default_access})
    defaults, _ = document_for(previous.source, None, default_access)
    if defaults is not None and previous == defaults:
        return previous, []
    label = previous.access or "visible to nobody"
    return previous, [
        Problem(
            previous.source,
            f"has no catalog entry any more; it keeps the metadata it was indexed with (access {label}, "
            f"status {previous.status.value}, tenant {previous.tenant}); add an entry to change them",
            warning=True,
        )
    ]


def _block_contested_ids(
    documents: dict[str, Document], blocked: set[str], problems: list[Problem], old_ids: dict[str, str]
) -> None:
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
    empty: set[str],
) -> Outcome:
    """Sort the units into added / changed / unchanged, and warn about pages that still need
    OCR and about documents in which nothing can be found. `extracted`: unit name -> its pages
    without a text layer; `failed`: units that could not be read (they keep their previous
    version); `empty`: extracted units that gave no passage."""
    keep_previous = plan.blocked | failed
    result = Outcome(removed=plan.remove, problems=plan.problems + problems)
    for unit in scan.units:
        if unit.name in extracted:
            (result.changed if unit.name in indexed.files else result.added).append(unit.name)
        elif unit.name in indexed.files and unit.doc_source not in keep_previous:
            result.unchanged += 1
    needing_ocr = _pages_needing_ocr(scan.units, extracted, indexed, keep_previous)
    result.problems += needing_ocr
    result.problems += _without_passages(scan.units, empty, {p.source for p in needing_ocr})
    return result


def _without_passages(units: list[Unit], empty: set[str], needing_ocr: set[str]) -> list[Problem]:
    """A source extracted just now that gave no passage, with no sidecar to give it any: nothing
    in it can be found, which is worth a word (a PDF whose pages lack text is already named)."""
    with_sidecars = {u.doc_source for u in units if not u.is_source}
    return [
        Problem(
            unit.name,
            "no passage was found in it, so no search can find it; check that the file has text",
            warning=True,
        )
        for unit in units
        if unit.is_source
        and unit.name in empty
        and unit.name not in with_sidecars
        and unit.name not in needing_ocr
    ]


def _pages_needing_ocr(
    units: list[Unit], extracted: dict[str, tuple[int, ...]], indexed: IndexedState, skipped: set[str]
) -> list[Problem]:
    """Pages without a text layer or a sidecar, from this run's extraction or the stored record,
    so that deleting a sidecar is warned about although its PDF is not re-extracted. One warning
    per file: a scanned book is one problem, not one per page."""
    present = {u.name for u in units}
    problems = []
    for unit in units:
        fmt = format_of(unit.name)
        if not unit.is_source or unit.name in skipped or fmt is None or not fmt.rendered:
            continue
        if unit.name in extracted:
            pages = extracted[unit.name]
        else:
            pages = indexed.files[unit.name].pages_without_text if unit.name in indexed.files else ()
        stem = Path(unit.name).stem
        missing = [page for page in pages if f"{stem}.page-{page}.ocr.txt" not in present]
        if len(missing) == 1:
            problems.append(
                Problem(
                    unit.name,
                    "no text layer and no OCR sidecar; run 'localqa ocr' to add one",
                    page=missing[0],
                    warning=True,
                )
            )
        elif missing:
            problems.append(
                Problem(
                    unit.name,
                    f"pages {_page_ranges(missing)} ({len(missing)} pages) have no text layer and no OCR "
                    "sidecar; run 'localqa ocr' to add them",
                    warning=True,
                )
            )
    return problems


def _page_ranges(pages: list[int], shown: int = 10) -> str:
    """`1-3, 7, 9-12`: runs of consecutive pages, the first `shown` of them."""
    runs: list[list[int]] = []
    for page in sorted(pages):
        if runs and page == runs[-1][-1] + 1:
            runs[-1].append(page)
        else:
            runs.append([page])
    text = ", ".join(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]) for run in runs[:shown])
    return text if len(runs) <= shown else f"{text}, …"
