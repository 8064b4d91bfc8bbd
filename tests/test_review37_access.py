"""Review of this stop's new reads (`Library.passages_containing`, definitions of acronyms,
numbered runs under candidates' headings): nothing a caller may not see is read, scored or shown,
whatever the hidden document is (staff-only, another tenant's, a draft, superseded, not yet in
force) and however its name resembles a visible one's (a prefix, a suffix, SQL wildcards, a quote,
a look-alike letter). On SQLite and PostgreSQL, on reports drawn with PyMuPDF."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pymupdf
import pytest
from backends import BOTH

from localqa.indexing.index import refresh_index
from localqa.library import Library
from localqa.models.extractive import ExtractiveModel
from localqa.store import Db
from localqa.types import Answer, Caller

BACKENDS = BOTH
AS_OF = date(2026, 1, 1)
PUBLIC = "sp_ce%report.pdf"  # the one document the public may see; SQL wildcards in its name
MENTIONS = [
    "NARL at Gadanki is a centre for atmospheric research.",
    "The MST Radar facility at NARL observes the winds.",
]
# Each hidden document, why it is hidden (its catalog entry), and the long form it gives NARL.
HIDDEN: dict[str, tuple[str, str]] = {
    "space-report.pdf": ('access = "staff"', "Northern Aviation Rescue League"),  # LIKE 'sp_ce%report.pdf'
    "sp_ce%report.pdf.pdf": ('access = "staff"', "Naval Acoustic Range Laboratory"),  # the name a prefix
    "p_ce%report.pdf": ('access = "staff"', "Nordic Arctic Relay Link"),  # the name a suffix
    "\u0455p_ce%report.pdf": ('access = "staff"', "North Atlantic Radio League"),  # a Cyrillic look-alike
    'it\'s a "draft".pdf': ('access = "public"\nstatus = "draft"', "Nominal Aerial Range Limit"),
    "glossary-2020.pdf": (
        'access = "public"\nseries = "glossary"\neffective = 2020-01-01',
        "Neutral Atmosphere Research Lab",
    ),  # superseded by glossary-2025.pdf
    "glossary-2027.pdf": (
        'access = "public"\nseries = "glossary"\neffective = 2027-01-01',
        "New Atmospheric Radar Lidar",
    ),  # not yet in force
    "other-tenant.pdf": ('access = "public"\ntenant = "other"', "Noble Art Restoration League"),
}
VISIBLE = {
    PUBLIC: 'access = "public"',
    "glossary-2025.pdf": 'access = "public"\nseries = "glossary"\neffective = 2025-01-01',
}


def write_report(path: Path, title: str, paragraphs: list[str], chapters: list[str]) -> None:
    """A page of paragraphs, then a contents page numbering `chapters` under "CHAPTERS"."""
    with pymupdf.open() as document:
        page = document.new_page()
        page.insert_text((72, 72), title, fontname="hebo", fontsize=16)
        for n, paragraph in enumerate(paragraphs):
            page.insert_textbox(
                pymupdf.Rect(72, 110 + 80 * n, 520, 170 + 80 * n), paragraph, fontname="helv", fontsize=10
            )
        contents = document.new_page()
        contents.insert_text((72, 72), "TABLE OF CONTENTS", fontname="hebo", fontsize=14)
        contents.insert_text((72, 100), "CHAPTERS", fontname="hebo", fontsize=12)
        for n, entry in enumerate(chapters):
            contents.insert_text(
                (72, 124 + 24 * n), f"{entry} {'.' * 30} {n + 3}", fontname="helv", fontsize=10
            )
        document.set_metadata({"title": title})
        document.save(path)


def _key(name: str) -> str:
    return json.dumps(name, ensure_ascii=False)  # a TOML basic string is a JSON string


@pytest.fixture(scope="module")
def hostile(backend: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Db:
    folder = tmp_path_factory.mktemp("review37-access")
    entries = []
    write_report(
        folder / PUBLIC, "Space Programme", MENTIONS, ["1. Launchers", "2. Satellites", "3. Science"]
    )
    write_report(
        folder / "glossary-2025.pdf", "Glossary", ["NARL is named in the glossary."], ["1. Terms", "2. Names"]
    )
    for name, entry in VISIBLE.items():
        entries.append(f"[{_key(name)}]\n{entry}\n")
    for n, (name, (entry, long)) in enumerate(HIDDEN.items()):
        words = long.split()
        write_report(
            folder / name,
            f"Hidden {n}",
            [f"The {long} (NARL) meets on Fridays.", "NARL keeps its records in the hidden archive."],
            [f"{k}. Hidden chapter {words[k - 1]}" for k in range(1, 4)],
        )
        entries.append(f"[{_key(name)}]\n{entry}\n")
    (folder / "catalog.toml").write_text("\n".join(entries), encoding="utf-8")
    db: Db = folder / "index.sqlite3"
    if backend == "postgresql":
        db = request.getfixturevalue("postgres").create_database()
    report = refresh_index(folder, db, embed=False)
    assert not report.problems, report.problems
    return db


def _shown(answer: Answer) -> str:
    return json.dumps(answer.as_json(), ensure_ascii=False)


def ask(db: Db, question: str, docs: tuple[str, ...] = (), caller: Caller | None = None) -> Answer:
    with Library(db) as opened:
        asked = opened.answer(
            question, as_of=AS_OF, caller=caller, model=ExtractiveModel(), documents=docs, k=20
        )
    return asked.parts[0].answer


@pytest.mark.parametrize("name", sorted(HIDDEN))
def test_a_hidden_documents_passages_are_never_read_by_the_public(hostile: Db, name: str) -> None:
    with Library(hostile) as opened:
        assert opened.passages_containing(name, "NARL", as_of=AS_OF, limit=100) == ()
        # A tenant sees its own; the public of the default tenant never see another's.
        if name == "other-tenant.pdf":
            assert opened.passages_containing(
                name, "NARL", as_of=AS_OF, caller=Caller(tenant="other"), limit=9
            )


def test_the_public_documents_passages_are_its_own_whatever_its_name_holds(hostile: Db) -> None:
    with Library(hostile) as opened:
        seen = opened.passages_containing(PUBLIC, "NARL", as_of=AS_OF, limit=100)
        staff = opened.passages_containing(
            PUBLIC, "NARL", as_of=AS_OF, caller=Caller(role="staff"), limit=100
        )
        # The text is compared as written, never as a pattern: SQL wildcards, quotes and escapes
        # match only themselves.
        for text in ("%", "_", "N_RL", "N%L", "%NARL%", "'", "\\", "' OR 1=1 --", "NARL\x00"):
            assert opened.passages_containing(PUBLIC, text, as_of=AS_OF, limit=100) == (), text
    assert [p.source for p in seen] == [PUBLIC, PUBLIC] and staff == seen
    assert all("NARL" in p.text for p in seen)


def test_the_staff_see_their_own_definition(hostile: Db) -> None:  # the fixture hides what it means to
    answer = ask(hostile, "What does NARL stand for?", ("space-report.pdf",), Caller(role="staff"))
    assert answer.value is not None and answer.value.text == "Northern Aviation Rescue League", answer


@pytest.mark.parametrize("docs", [(), (PUBLIC,), ("glossary-2025.pdf",)])
def test_no_hidden_documents_definition_is_shown_to_the_public(hostile: Db, docs: tuple[str, ...]) -> None:
    shown = _shown(ask(hostile, "What does NARL stand for?", docs))
    for name, (_entry, long) in HIDDEN.items():
        assert long not in shown and name not in shown.replace(f"{PUBLIC}", ""), name


@pytest.mark.parametrize(
    "question",
    ["What are the last 2 chapters?", "What is the third chapter?", "What are the chapters listed?"],
)
def test_no_hidden_documents_contents_are_shown_to_the_public(hostile: Db, question: str) -> None:
    shown = _shown(ask(hostile, question))
    assert "Hidden" not in shown, shown
