"""Document metadata: `catalog.toml` entries, dates in file names, and who may see what.

The catalog is keyed by file name. A file without an entry takes its series and effective date
from its name (`series-YYYY-MM-DD.pdf`) and is current, in the default tenant, and public, or what
the catalog's top-level `default_access` says (`default_access = "staff"`: a file nobody labelled
is not public by accident; a label that is not public or staff stops the run). While a catalog
exists without `default_access`, `index` names the files it leaves public by default
(`plan.unlabelled_warning`). An entry's problems are reported per file and field; an access label that
is missing or unknown leaves the document indexed but visible to nobody (closed world).
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, PlainValidator, StrictStr, ValidationError
from pydantic_core import PydanticCustomError

from localqa.errors import CatalogError
from localqa.question.periods import parse_label
from localqa.tomlfile import TomlFileError, read_toml
from localqa.types import ACCESS_LABELS, DEFAULT_TENANT, Document, Period, Status

CATALOG_NAME = "catalog.toml"
DEFAULT_ACCESS = "default_access"  # the catalog's one top-level setting: the access of files without entry
FIELDS = ("id", "series", "version", "effective", "status", "access", "tenant", "title", "period")
_DATED_NAME = re.compile(r"^(?P<series>.+?)-(?P<date>\d{4}-\d{2}-\d{2})$")


@dataclass(frozen=True)
class Problem:
    """Something wrong with one source, reported by file (and page where it applies)."""

    source: str
    message: str
    page: int | None = None
    warning: bool = False  # a warning does not make `localqa index` fail

    def __str__(self) -> str:
        where = self.source if self.page is None else f"{self.source}, page {self.page}"
        return f"{where}: {self.message}"


def visible_labels(role: str) -> tuple[str, ...]:
    """Access labels a role may see. Unknown roles see nothing."""
    if role == "staff":
        return ACCESS_LABELS
    if role == "public":
        return ("public",)
    return ()


@dataclass(frozen=True)
class Catalog:
    """The entries of `catalog.toml`, keyed by file name in Unicode NFC (names on disk are
    compared the same way). `unquoted` holds file names written as bare TOML keys
    (`[report.pdf]`, which TOML reads as a table "report" holding a table "pdf"): name as meant ->
    the key as written. `duplicates` holds names written more than once in different Unicode
    forms (TOML sees different keys): name -> the keys as written; such a name has no entry."""

    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    unquoted: dict[str, str] = field(default_factory=dict)
    duplicates: dict[str, tuple[str, ...]] = field(default_factory=dict)
    exists: bool = False
    default_access: str | None = None  # None: not set, files without an entry are public


def file_key(name: str) -> str:
    """How file names and catalog keys are compared: Unicode NFC, so that a name typed on one
    system matches the same name stored by another."""
    return unicodedata.normalize("NFC", name)


def load_catalog(folder: Path) -> Catalog:
    """Read `folder/catalog.toml` (absent means empty). A catalog that exists but cannot be read
    (not valid TOML, not UTF-8, not a regular file, a dangling link, a link out of the folder,
    unreadable), or a file named almost like it, is fatal for the whole run: guessing metadata
    would risk exposing a document to the wrong caller."""
    misnamed = misnamed_catalogs(folder)
    if misnamed:
        raise CatalogError(
            f"{', '.join(str(folder / name) for name in misnamed)}: named like the catalog but not "
            f"{CATALOG_NAME}; name the catalog exactly {CATALOG_NAME}, or move this file out of the "
            "folder (nothing is indexed until then)"
        )
    path = folder / CATALOG_NAME
    if not path.exists() and not path.is_symlink():
        return Catalog()
    if path.is_symlink() and not _inside(path, folder):
        raise CatalogError(
            f"{path}: a link that leads outside {folder} or nowhere; replace it with the file itself"
        )
    try:
        data = read_toml(path)
    except TomlFileError as error:
        raise CatalogError(f"{path}: {error}; fix the file and run again") from None
    setting = data.get(DEFAULT_ACCESS)
    default_access: str | None = None
    if setting is not None and not isinstance(setting, dict):  # a table of that name is a file's entry
        del data[DEFAULT_ACCESS]
        if not isinstance(setting, str) or setting not in ACCESS_LABELS:
            raise CatalogError(
                f"{path}: {DEFAULT_ACCESS} = {setting!r} is not one of {', '.join(ACCESS_LABELS)}; fix "
                "the file and run again (nothing is indexed until then)"
            )
        default_access = setting
    catalog = Catalog(exists=True, default_access=default_access)
    written: dict[str, list[str]] = defaultdict(list)
    for name, entry in data.items():
        if not isinstance(entry, dict):
            raise CatalogError(f'{path}: "{name}" must be a table (["{name}"] followed by key = value lines)')
        if entry and not set(entry) & set(FIELDS) and all(isinstance(v, dict) for v in entry.values()):
            for meant, unquoted in _dotted_names(name, entry):
                catalog.unquoted[file_key(meant)] = unquoted
            continue
        catalog.entries[file_key(name)] = entry
        written[file_key(name)].append(name)
    for key, names in written.items():
        if len(names) > 1:
            catalog.duplicates[key] = tuple(names)
            del catalog.entries[key]
    return catalog


def looks_like_catalog(name: str) -> bool:
    """Is `name` (not `catalog.toml` itself) one a person may have meant as the catalog: any
    `catalog.toml.*` (a `.txt` an editor added, a backup), or within two edits of `catalog.toml`
    ignoring case (`Catalog.toml`, `catalogue.toml`, `catalog.tom`)? Such a file is never a
    document, and it is never silently passed over."""
    folded = file_key(name).casefold()
    if name == CATALOG_NAME:
        return False
    return folded.startswith(f"{CATALOG_NAME}.") or _within_edits(folded, CATALOG_NAME, 2)


def misnamed_catalogs(folder: Path) -> list[str]:
    """Names in `folder` that look like the catalog but are not `catalog.toml`."""
    try:
        return sorted(
            path.name for path in folder.iterdir() if looks_like_catalog(path.name) and not path.is_dir()
        )
    except OSError:
        return []  # the folder itself is reported when it is scanned


def _within_edits(a: str, b: str, limit: int) -> bool:
    """Is the edit distance of `a` and `b` (insertions, deletions, substitutions and swaps of
    two neighbours) at most `limit`?"""
    if abs(len(a) - len(b)) > limit:
        return False
    before: list[int] = []
    row = list(range(len(b) + 1))
    for i, char in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, other in enumerate(b, start=1):
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + (char != other))
            if i > 1 and j > 1 and char == b[j - 2] and a[i - 2] == other:
                current[j] = min(current[j], before[j - 2] + 1)
        before, row = row, current
    return row[-1] <= limit


def _dotted_names(name: str, table: dict[str, Any]) -> list[tuple[str, str]]:
    """`[report.pdf]` parses as {"report": {"pdf": {...}}}: the file names it was meant to be.
    Walked without recursion: a header can name thousands of levels."""
    found: list[tuple[str, str]] = []
    todo = [(name, table)]
    while todo:
        prefix, current = todo.pop()
        for key, value in current.items():
            if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
                todo.append((f"{prefix}.{key}", value))
            else:
                found.append((f"{prefix}.{key}", f"[{prefix}.{key}]"))
    return sorted(found)


def _inside(path: Path, folder: Path) -> bool:
    """Does `path` (a link, perhaps) lead to an existing file inside `folder`?"""
    try:
        return path.resolve(strict=True).is_relative_to(folder.resolve(strict=True))
    except (OSError, RuntimeError):  # dangling, or a loop
        return False


def _complaint(text: str) -> PydanticCustomError:
    """A validation error whose message is what is wrong with the value (`_problems` adds the
    field and the value)."""
    return PydanticCustomError("catalog", text)


def _text(value: str) -> str:
    if not value.strip():
        raise _complaint(_NOT_TEXT)
    return value


def _no_slash(value: str) -> str:
    # Document ids are "tenant/id": a slash would let two different pairs collide.
    if "/" in value:
        raise _complaint("must not contain '/'")
    return value


def _date(value: object) -> date:
    """A catalog date (`effective`, a period's `start` and `end`): TOML gives dates natively, an
    ISO string is one too; a datetime is not a date."""
    if isinstance(value, str):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    elif isinstance(value, date) and not isinstance(value, datetime):
        return value
    raise _complaint("is not a date; write it as YYYY-MM-DD")


_PERIOD_FORMS = (
    'write it as a fiscal year or quarter ("FY2022", "Q2 2024") or as dates '
    "({start = 2022-01-01, end = 2022-12-31})"
)


def _period(value: object) -> Period:
    """A catalog `period`: a label naming one fiscal year or quarter, or a table of `start` and
    `end` dates, start not after end."""
    if isinstance(value, str):
        label = " ".join(value.split())
        if parse_label(label):
            return Period(label=label)
    if not isinstance(value, dict):
        raise _complaint(f"is not a period; {_PERIOD_FORMS}")
    if set(value) != {"start", "end"}:
        raise _complaint(f"needs exactly start and end dates; {_PERIOD_FORMS}")
    try:
        start, end = _date(value["start"]), _date(value["end"])
    except PydanticCustomError:
        raise _complaint(f"has a start or end that is not a date; {_PERIOD_FORMS}") from None
    if start > end:
        raise _complaint("starts after it ends; swap start and end")
    return Period(start=start, end=end)


Text = Annotated[StrictStr, AfterValidator(_text)]
NamePart = Annotated[StrictStr, AfterValidator(_text), AfterValidator(_no_slash)]  # id, tenant
CatalogDate = Annotated[date, PlainValidator(_date)]
CatalogPeriod = Annotated[Period, PlainValidator(_period)]


class CatalogEntry(BaseModel):
    """One `catalog.toml` entry, checked strictly: no field it does not know, no value of another
    type taken for one of its own (`version = 2026` is not "2026"). Its validation errors are the
    entry's problems (`_problems`). `access` is checked after: a bad label does not block the file,
    it leaves the document indexed and visible to nobody."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    id: NamePart | None = None
    series: Text | None = None
    version: Text | None = None
    effective: CatalogDate | None = None
    status: Literal["current", "retired", "draft"] = "current"
    access: Any = None
    tenant: NamePart | None = None
    title: Text | None = None
    period: CatalogPeriod | None = None


# What is wrong with a value that pydantic's own types refuse (a number for a text), by field.
_REFUSED = {"status": "is not one of current, retired, draft"}
_NOT_TEXT = "must be a non-empty string"


def document_for(
    source: str, entry: dict[str, Any] | None, default_access: str | None = None
) -> tuple[Document | None, list[Problem]]:
    """The metadata of `source`, from its catalog entry or its file name (and then the catalog's
    `default_access`, public when it has none).

    Returns (None, problems) when the entry is unusable (the file is not indexed anew; a version
    indexed before stays, visible to nobody), and a document with `access=None` plus a problem
    when only the access label is bad.
    """
    stem = Path(source).stem
    if entry is None:
        return _from_file_name(source, stem, default_access or "public")
    try:
        checked = CatalogEntry.model_validate(entry)
    except ValidationError as error:
        return None, _problems(source, entry, error)
    problems = []
    access = checked.access
    if access not in ACCESS_LABELS:
        shown = "missing" if "access" not in entry else f"{access!r} is not public or staff"
        problems.append(
            Problem(
                source,
                f"catalog.toml: access {shown}; the document is indexed "
                "but visible to nobody until it is fixed",
            )
        )
        access = None
    tenant = checked.tenant or DEFAULT_TENANT
    document = Document(
        doc_id=document_id(tenant, checked.id or stem),
        source=source,
        series=checked.series or stem,
        version=checked.version,
        effective=checked.effective,
        status=Status(checked.status),
        access=access,
        tenant=tenant,
        title=checked.title,
        period=checked.period,
    )
    return document, problems


def _problems(source: str, entry: dict[str, Any], error: ValidationError) -> list[Problem]:
    """An entry's validation errors as its problems, one per field (unknown fields: one for all),
    each naming the field, its value and the fix."""
    errors = error.errors()
    unknown = sorted(str(e["loc"][0]) for e in errors if e["type"] == "extra_forbidden")
    problems = (
        [
            Problem(
                source,
                f"catalog.toml: unknown field(s) {', '.join(unknown)}; known fields are {', '.join(FIELDS)}",
            )
        ]
        if unknown
        else []
    )
    wrong = {str(e["loc"][0]): e for e in reversed(errors) if e["type"] != "extra_forbidden"}
    for name in sorted(wrong, key=FIELDS.index):
        found = wrong[name]
        complaint = (
            found["msg"] if found["type"] == "catalog" else _REFUSED.get(name, "must be a non-empty string")
        )
        problems.append(Problem(source, f"catalog.toml: {name} = {entry[name]!r} {complaint}"))
    return problems


def searchable_heading(context: str, section: str | None) -> str:
    """A passage's heading as it is searched and embedded: its document's context (title, file
    name), then its heading path."""
    return " > ".join(part for part in (context, section) if part)


def searchable_title(source: str, title: str | None) -> str:
    """The document context indexed with each of its passages: its title (catalog, else the one
    found in the file) and the words of its file name when they add any (people name files
    meaningfully: `3M_2018_10K.pdf`, `acme-travel-policy.md`); a trailing date is left out, it
    is the effective date."""
    stem = Path(source).stem
    dated = dated_name(stem)
    words = " ".join(re.split(r"[\W_]+", dated[0] if dated else stem)).strip()
    if not title:
        return words
    known = {w.casefold() for w in re.findall(r"\w+", title)}
    adds = any(w.casefold() not in known for w in re.findall(r"\w+", words))
    return f"{title} ({words})" if adds and words else title


def document_id(tenant: str, name: str) -> str:
    """Document ids are scoped by tenant: two tenants may use the same id (or file stem) without
    colliding, so one tenant's files can never displace another's."""
    return f"{tenant}/{name}"


def dated_name(stem: str) -> tuple[str, str] | None:
    """(series, date) of a file stem that ends in a date (`series-YYYY-MM-DD`), else None."""
    if len(stem) < 12 or stem[-11] != "-":  # spares the pattern most names
        return None
    match = _DATED_NAME.match(stem)
    return (match["series"], match["date"]) if match else None


def _from_file_name(source: str, stem: str, access: str) -> tuple[Document | None, list[Problem]]:
    """No catalog entry: `series-YYYY-MM-DD` names a dated version; otherwise always effective."""
    dated = dated_name(stem)
    if dated is None:
        return Document(
            doc_id=document_id(DEFAULT_TENANT, stem), source=source, series=stem, access=access
        ), []
    series, written = dated
    try:
        effective = date.fromisoformat(written)
    except ValueError:
        return None, [Problem(source, f"file name date {written!r} is not a real date")]
    return Document(
        doc_id=document_id(DEFAULT_TENANT, stem),
        source=source,
        series=series,
        effective=effective,
        version=written,
        access=access,
    ), []
