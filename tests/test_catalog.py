"""catalog.py: metadata from catalog.toml entries or from file names, and who may see what."""

from __future__ import annotations

import tomllib
from datetime import date, datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from localqa.errors import CatalogError
from localqa.indexing.catalog import (
    Catalog,
    CatalogEntry,
    Problem,
    document_for,
    document_id,
    load_catalog,
    looks_like_catalog,
    visible_labels,
)
from localqa.types import Document, Period, Status

FULL_ENTRY = {
    "series": "equipment-policy",
    "version": "2026-11",
    "effective": date(2026, 11, 1),
    "status": "current",
    "access": "staff",
    "tenant": "north",
    "title": "Equipment Loan Policy",
}


def entry(**changes: object) -> dict[str, object]:
    """FULL_ENTRY with some fields changed; a value of None removes the field."""
    result = {**FULL_ENTRY, **changes}
    return {key: value for key, value in result.items() if value is not None}


# --- file names without a catalog entry -------------------------------------------------------


def test_dated_file_name_gives_series_and_effective_date() -> None:
    document, problems = document_for("equipment-policy-2026-11-01.pdf", None)
    assert problems == []
    assert document == Document(
        doc_id="default/equipment-policy-2026-11-01",
        source="equipment-policy-2026-11-01.pdf",
        series="equipment-policy",
        version="2026-11-01",
        effective=date(2026, 11, 1),
    )


def test_dated_markdown_file_name_is_parsed_like_a_pdf() -> None:
    document, problems = document_for("fee-schedule-2025-03-15.md", None)
    assert problems == []
    assert document is not None
    assert (document.series, document.effective) == ("fee-schedule", date(2025, 3, 15))


def test_file_without_entry_takes_the_defaults() -> None:
    document, problems = document_for("community-events.pdf", None)
    assert problems == []
    assert document == Document(
        doc_id="default/community-events", source="community-events.pdf", series="community-events"
    )
    assert document.effective is None  # no date means always effective
    assert document.status is Status.CURRENT
    assert document.access == "public"
    assert document.tenant == "default"


@pytest.mark.parametrize("name", ["reading-room-rules-2024.pdf", "minutes-2026-11.pdf", "2026-11-01.pdf"])
def test_a_name_without_a_full_trailing_date_is_undated(name: str) -> None:
    document, problems = document_for(name, None)
    assert problems == []
    assert document is not None
    assert document.effective is None
    assert document.series == Path(name).stem


def test_impossible_date_in_a_file_name_is_a_problem_naming_the_file() -> None:
    document, problems = document_for("notice-2026-02-30.pdf", None)
    assert document is None
    assert problems == [Problem("notice-2026-02-30.pdf", "file name date '2026-02-30' is not a real date")]


# --- catalog entries ----------------------------------------------------------------------------


def test_full_entry_gives_every_field() -> None:
    document, problems = document_for("equipment-policy-2026-11-01.pdf", entry())
    assert problems == []
    assert document == Document(
        doc_id="north/equipment-policy-2026-11-01",
        source="equipment-policy-2026-11-01.pdf",
        series="equipment-policy",
        version="2026-11",
        effective=date(2026, 11, 1),
        status=Status.CURRENT,
        access="staff",
        tenant="north",
        title="Equipment Loan Policy",
    )


def test_entry_id_overrides_the_file_stem() -> None:
    document, _ = document_for("policy.pdf", entry(id="equipment-2026"))
    assert document is not None
    assert document.doc_id == "north/equipment-2026"  # scoped by the entry's tenant


def test_document_ids_are_scoped_by_tenant() -> None:
    # The same catalog id (or file stem) in two tenants gives two distinct document ids.
    north, _ = document_for("policy.pdf", entry(id="equipment-2026"))
    south, _ = document_for("other/policy.pdf", entry(id="equipment-2026", tenant="south"))
    untenanted, _ = document_for("policy.pdf", entry(id="equipment-2026", tenant=None))
    assert north is not None and south is not None and untenanted is not None
    assert (north.doc_id, south.doc_id, untenanted.doc_id) == (
        "north/equipment-2026",
        "south/equipment-2026",
        "default/equipment-2026",
    )
    assert document_id("south", "equipment-2026") == "south/equipment-2026"


def test_entry_without_a_date_in_name_or_entry_is_undated_and_series_defaults_to_stem() -> None:
    document, problems = document_for("rules-2026-01-01.pdf", {"access": "public"})
    assert problems == []
    assert document is not None
    # An entry replaces file-name parsing entirely.
    assert (document.series, document.effective, document.version) == ("rules-2026-01-01", None, None)


def test_toml_date_and_iso_string_are_both_dates() -> None:
    parsed = tomllib.loads('["a.pdf"]\neffective = 2026-11-01\naccess = "public"\n')["a.pdf"]
    assert type(parsed["effective"]) is date
    from_toml, problems = document_for("a.pdf", parsed)
    assert problems == []
    from_string, problems = document_for("a.pdf", {"effective": "2026-11-01", "access": "public"})
    assert problems == []
    assert from_toml is not None and from_string is not None
    assert from_toml.effective == from_string.effective == date(2026, 11, 1)


def test_toml_datetime_is_not_a_date() -> None:
    parsed = tomllib.loads('["a.pdf"]\neffective = 2026-11-01T10:00:00\naccess = "public"\n')["a.pdf"]
    assert isinstance(parsed["effective"], datetime)
    document, problems = document_for("a.pdf", parsed)
    assert document is None
    assert len(problems) == 1
    assert problems[0].source == "a.pdf"
    assert problems[0].message.startswith("catalog.toml: effective = ")
    assert problems[0].message.endswith(" is not a date; write it as YYYY-MM-DD")


@pytest.mark.parametrize(
    ("value", "shown"), [("2026-13-45", "'2026-13-45'"), ("next week", "'next week'"), (20261101, "20261101")]
)
def test_invalid_effective_is_a_problem_and_the_file_is_not_indexed(value: object, shown: str) -> None:
    document, problems = document_for("a.pdf", entry(effective=value))
    assert document is None
    assert problems == [
        Problem("a.pdf", f"catalog.toml: effective = {shown} is not a date; write it as YYYY-MM-DD")
    ]


@pytest.mark.parametrize("status", ["archived", "Current", ""])
def test_bad_status_is_a_problem(status: str) -> None:
    document, problems = document_for("a.pdf", entry(status=status))
    assert document is None
    assert problems == [
        Problem("a.pdf", f"catalog.toml: status = {status!r} is not one of current, retired, draft")
    ]


@pytest.mark.parametrize("status", ["current", "retired", "draft"])
def test_each_known_status_is_accepted(status: str) -> None:
    document, problems = document_for("a.pdf", entry(status=status))
    assert problems == []
    assert document is not None and document.status == Status(status)


def test_missing_status_means_current() -> None:
    document, _ = document_for("a.pdf", entry(status=None))
    assert document is not None and document.status is Status.CURRENT


def test_unknown_field_is_a_problem_listing_the_known_ones() -> None:
    document, problems = document_for("a.pdf", entry(colour="red"))
    assert document is None
    assert problems == [
        Problem(
            "a.pdf",
            "catalog.toml: unknown field(s) colour; known fields are "
            "id, series, version, effective, status, access, tenant, title, period",
        )
    ]


JAN_1, DEC_31 = date(2022, 1, 1), date(2022, 12, 31)


@pytest.mark.parametrize(
    ("value", "period"),
    [
        ("FY2022", Period(label="FY2022")),
        ("  Q2   2024 ", Period(label="Q2 2024")),
        (
            {"start": date(2022, 1, 1), "end": date(2022, 12, 31)},
            Period(start=date(2022, 1, 1), end=date(2022, 12, 31)),
        ),
        ({"start": "2022-07-01", "end": "2023-06-30"}, Period(start=date(2022, 7, 1), end=date(2023, 6, 30))),
    ],
)
def test_a_period_is_a_label_or_dates(value: object, period: Period) -> None:
    document, problems = document_for("a.pdf", entry(period=value))
    assert problems == []
    assert document is not None and document.period == period


FORMS = (
    'write it as a fiscal year or quarter ("FY2022", "Q2 2024") or as dates '
    "({start = 2022-01-01, end = 2022-12-31})"
)


@pytest.mark.parametrize(
    ("value", "complaint"),
    [
        ("FYxx", f"is not a period; {FORMS}"),
        ("FY2022 and FY2023", f"is not a period; {FORMS}"),
        (2022, f"is not a period; {FORMS}"),
        ({"end": DEC_31}, f"needs exactly start and end dates; {FORMS}"),
        ({"start": JAN_1, "end": DEC_31, "label": "FY2022"}, f"needs exactly start and end dates; {FORMS}"),
        ({"start": "January", "end": DEC_31}, f"has a start or end that is not a date; {FORMS}"),
        ({"start": date(2023, 1, 1), "end": DEC_31}, "starts after it ends; swap start and end"),
    ],
)  # fmt: skip
def test_a_malformed_period_is_a_problem_naming_the_field_and_the_fix(value: object, complaint: str) -> None:
    document, problems = document_for("a.pdf", entry(period=value))
    assert document is None  # not indexed anew until it is fixed, like any unusable entry
    assert problems == [Problem("a.pdf", f"catalog.toml: period = {value!r} {complaint}")]


@pytest.mark.parametrize(("field", "value"), [("series", ""), ("tenant", "  "), ("title", 7), ("id", "")])
def test_blank_or_non_string_text_fields_are_problems(field: str, value: object) -> None:
    document, problems = document_for("a.pdf", entry(**{field: value}))
    assert document is None
    assert problems == [Problem("a.pdf", f"catalog.toml: {field} = {value!r} must be a non-empty string")]


@pytest.mark.parametrize("field", ["id", "tenant"])
@pytest.mark.parametrize("value", ["a/b", "/", "a/", "/b"])
def test_a_slash_in_id_or_tenant_is_a_problem(field: str, value: str) -> None:
    """Document ids are "tenant/id": a slash would let tenant "a" id "b/c" collide with tenant
    "a/b" id "c"."""
    document, problems = document_for("a.pdf", entry(**{field: value}))
    assert document is None
    assert problems == [Problem("a.pdf", f"catalog.toml: {field} = {value!r} must not contain '/'")]


def test_a_slash_is_fine_in_the_other_text_fields() -> None:
    document, problems = document_for("a.pdf", entry(series="a/b", version="2026/11", title="Fees/fines"))
    assert problems == []
    assert document is not None and (document.series, document.version) == ("a/b", "2026/11")


@pytest.mark.parametrize(
    ("access", "shown"),
    [("finance", "'finance' is not public or staff"), ("Public", "'Public' is not public or staff")],
)
def test_unknown_access_label_is_indexed_but_visible_to_nobody(access: str, shown: str) -> None:
    document, problems = document_for("a.pdf", entry(access=access))
    assert document is not None
    assert document.access is None
    assert problems == [
        Problem(
            "a.pdf",
            f"catalog.toml: access {shown}; the document is indexed but visible to nobody until it is fixed",
        )
    ]
    assert not problems[0].warning  # `localqa index` fails on it (exit 1) until it is fixed


def test_entry_without_access_is_visible_to_nobody() -> None:
    document, problems = document_for("a.pdf", entry(access=None))
    assert document is not None and document.access is None
    assert [p.message for p in problems] == [
        "catalog.toml: access missing; the document is indexed but visible to nobody until it is fixed"
    ]


def test_problem_names_file_and_page() -> None:
    assert str(Problem("a.pdf", "broken")) == "a.pdf: broken"
    assert str(Problem("a.pdf", "broken", page=3)) == "a.pdf, page 3: broken"


# --- roles -------------------------------------------------------------------------------------


def test_visible_labels_are_closed_world() -> None:
    assert visible_labels("public") == ("public",)
    assert set(visible_labels("staff")) == {"public", "staff"}
    assert visible_labels("finance") == ()
    assert visible_labels("") == ()
    assert visible_labels("Staff") == ()


# --- catalog.toml as a file ----------------------------------------------------------------------


def test_missing_catalog_is_empty(tmp_path: Path) -> None:
    assert load_catalog(tmp_path) == Catalog()


def test_catalog_is_keyed_by_file_name(tmp_path: Path) -> None:
    (tmp_path / "catalog.toml").write_text(
        '["a-2026-01-01.pdf"]\nseries = "a"\neffective = 2026-01-01\naccess = "public"\n', encoding="utf-8"
    )
    assert load_catalog(tmp_path).entries == {
        "a-2026-01-01.pdf": {"series": "a", "effective": date(2026, 1, 1), "access": "public"}
    }


def test_invalid_toml_is_one_fatal_error_naming_the_file(tmp_path: Path) -> None:
    text = '["a.pdf"]\neffective = 2026-13-45\n'
    (tmp_path / "catalog.toml").write_text(text, encoding="utf-8")
    with pytest.raises(tomllib.TOMLDecodeError) as toml_error:
        tomllib.loads(text)
    with pytest.raises(CatalogError) as error:
        load_catalog(tmp_path)
    assert str(error.value) == (
        f"{tmp_path / 'catalog.toml'}: not valid TOML ({toml_error.value}); fix the file and run again"
    )


def test_catalog_that_is_not_utf8_is_a_fatal_error(tmp_path: Path) -> None:
    (tmp_path / "catalog.toml").write_bytes(b'["caf\xe9.pdf"]\naccess = "public"\n')
    with pytest.raises(
        CatalogError, match=r"catalog\.toml: not valid TOML \(.*\); fix the file and run again"
    ):
        load_catalog(tmp_path)


def test_top_level_value_instead_of_a_table_is_a_fatal_error(tmp_path: Path) -> None:
    (tmp_path / "catalog.toml").write_text('title = "Handbook"\n', encoding="utf-8")
    with pytest.raises(CatalogError) as error:
        load_catalog(tmp_path)
    assert str(error.value) == (
        f'{tmp_path / "catalog.toml"}: "title" must be a table (["title"] followed by key = value lines)'
    )


@pytest.mark.parametrize(
    ("name", "looks"),
    [
        ("catalog.toml", False),  # the catalog itself
        ("Catalog.toml", True),
        ("CATALOG.TOML", True),
        ("catalogue.toml", True),
        ("catalogs.toml", True),
        ("catalog.tmol", True),
        ("catalog.toml.txt", True),
        ("catalog.toml.bak", True),
        ("catalog.toml\u200b", True),
        ("catalog.pdf", False),  # a library's catalogue of holdings is a document
        ("catalog.md", False),
        ("catalog-2024.pdf", False),
        ("dialog.toml", False),
    ],
)
def test_a_name_that_looks_like_the_catalog(name: str, looks: bool) -> None:
    assert looks_like_catalog(name) is looks


def test_each_field_of_an_entry_is_one_problem_in_the_fields_order() -> None:
    """`CatalogEntry` reports every field that is wrong, each once, after the unknown ones."""
    wrong = entry(colour="red", status="old", effective="soon", version=2026)
    document, problems = document_for("a.pdf", wrong)
    assert document is None
    assert [p.message for p in problems] == [
        "catalog.toml: unknown field(s) colour; known fields are "
        "id, series, version, effective, status, access, tenant, title, period",
        "catalog.toml: version = 2026 must be a non-empty string",
        "catalog.toml: effective = 'soon' is not a date; write it as YYYY-MM-DD",
        "catalog.toml: status = 'old' is not one of current, retired, draft",
    ]


def test_a_catalog_entry_takes_no_value_of_another_type() -> None:
    """Strict: nothing is coerced (a number is not a version, true is not a status)."""
    checked = CatalogEntry.model_validate({"version": "2026", "effective": "2026-01-01"})
    assert checked.effective == date(2026, 1, 1)
    for wrong in ({"version": 2026}, {"status": True}, {"title": ["Fees"]}, {"tenant": b"acme"}):
        with pytest.raises(ValidationError):
            CatalogEntry.model_validate(wrong)


# --- files without an entry in a folder whose catalog labels files -------------------------------

ROTA = "Day,Opening shift\nMonday,Priya Natarajan\nFriday,Lena Brandt\n"
LABELLED = '["desk-rota.csv"]\naccess = "staff"\n'


def labelled_folder(tmp_path: Path, catalog: str, unlabelled: int = 1) -> Path:
    """The staff desk rota with its entry, saved again with CRLF line endings under new names
    (other bytes, no entry): `rota-export.csv`, then `rota-export-2.csv`..."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "catalog.toml").write_text(catalog, encoding="utf-8")
    (folder / "desk-rota.csv").write_text(ROTA, encoding="utf-8")
    for number in range(1, unlabelled + 1):
        name = "rota-export.csv" if number == 1 else f"rota-export-{number}.csv"
        (folder / name).write_bytes(ROTA.replace("\n", "\r\n").encode())
    return folder


def sources_seen(db: Path, role: str) -> list[str]:
    from localqa.library import Library
    from localqa.types import Caller

    with Library(db) as library:
        (part,) = library.search("Priya", as_of=date(2026, 12, 1), caller=Caller(role=role), k=50)
    return sorted({candidate.location.source for candidate in part.candidates})


def test_files_without_an_entry_are_named_as_public_by_default(tmp_path: Path) -> None:
    """Issue 36.8: a staff file re-saved under a new name was public, and nobody was told."""
    from localqa.indexing.index import refresh_index

    folder = labelled_folder(tmp_path, LABELLED, unlabelled=7)
    report = refresh_index(folder, tmp_path / "index.sqlite3", embed=False)
    (warning,) = [p for p in report.problems if "public by default" in p.message]
    assert warning.warning
    assert str(warning) == (
        f"{folder / 'catalog.toml'}: 7 files have no catalog entry and are public by default: "
        "rota-export-2.csv, rota-export-3.csv, rota-export-4.csv, rota-export-5.csv, rota-export-6.csv and 2 "
        'more; give each an entry, or set default_access = "staff" at the top of catalog.toml'
    )


def test_one_file_without_an_entry_and_no_warning_without_a_catalog(tmp_path: Path) -> None:
    from localqa.indexing.index import refresh_index

    folder = labelled_folder(tmp_path, LABELLED)
    report = refresh_index(folder, tmp_path / "index.sqlite3", embed=False)
    assert [p.message for p in report.problems if "public by default" in p.message] == [
        "1 file has no catalog entry and is public by default: rota-export.csv; give each an entry, or set "
        'default_access = "staff" at the top of catalog.toml'
    ]
    (folder / "catalog.toml").unlink()  # a folder without a catalog is public by design
    (folder / "desk-rota.csv").unlink()
    report = refresh_index(folder, tmp_path / "other.sqlite3", embed=False)
    assert not [p for p in report.problems if "public by default" in p.message]


def test_default_access_applies_to_files_without_an_entry_and_an_entry_still_wins(tmp_path: Path) -> None:
    from localqa.indexing.index import refresh_index

    catalog = f'default_access = "staff"\n\n{LABELLED}\n["notice.csv"]\naccess = "public"\n'
    folder = labelled_folder(tmp_path, catalog)
    (folder / "notice.csv").write_text("Day,Note\nMonday,Priya Natarajan opens the desk\n", encoding="utf-8")
    db = tmp_path / "index.sqlite3"
    report = refresh_index(folder, db, embed=False)
    assert not [p for p in report.problems if "public by default" in p.message]
    assert sources_seen(db, "public") == ["notice.csv"]
    assert sources_seen(db, "staff") == ["desk-rota.csv", "notice.csv", "rota-export.csv"]


def test_default_access_never_widens_what_was_indexed_before(tmp_path: Path) -> None:
    """A file indexed public by default becomes staff when the catalog sets the default; a file
    whose staff entry is removed stays staff under `default_access = "public"`."""
    from localqa.indexing.index import refresh_index

    folder = labelled_folder(tmp_path, LABELLED)
    db = tmp_path / "index.sqlite3"
    refresh_index(folder, db, embed=False)
    assert sources_seen(db, "public") == ["rota-export.csv"]
    (folder / "catalog.toml").write_text(f'default_access = "staff"\n{LABELLED}', encoding="utf-8")
    refresh_index(folder, db, embed=False)
    assert sources_seen(db, "public") == []
    (folder / "catalog.toml").write_text('default_access = "public"\n', encoding="utf-8")
    refresh_index(folder, db, embed=False)
    assert sources_seen(db, "public") == []


def test_the_default_access_is_read_from_the_top_of_the_catalog(tmp_path: Path) -> None:
    (tmp_path / "catalog.toml").write_text(f'default_access = "staff"\n{LABELLED}', encoding="utf-8")
    catalog = load_catalog(tmp_path)
    assert catalog.default_access == "staff" and list(catalog.entries) == ["desk-rota.csv"]
    document, problems = document_for("rota-export.csv", None, catalog.default_access)
    assert document is not None and document.access == "staff" and problems == []
    assert load_catalog(tmp_path / "nowhere").default_access is None


@pytest.mark.parametrize(
    ("written", "shown"),
    [('"staf"', "'staf'"), ('"Staff"', "'Staff'"), ("3", "3"), ('["staff"]', "['staff']"), ('""', "''")],
)
def test_a_bad_default_access_is_a_clear_fatal_error(written: str, shown: str, tmp_path: Path) -> None:
    (tmp_path / "catalog.toml").write_text(f"default_access = {written}\n{LABELLED}", encoding="utf-8")
    with pytest.raises(CatalogError) as error:
        load_catalog(tmp_path)
    assert str(error.value) == (
        f"{tmp_path / 'catalog.toml'}: default_access = {shown} is not one of public, staff; fix the file "
        "and run again (nothing is indexed until then)"
    )
