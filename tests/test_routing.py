"""Routing by what a question names (localqa/question/routing.py) on real PDFs built here with PyMuPDF:
two years of one company's annual filings, named by the year they were filed, and another
company's. The fiscal year a question names finds the filing covering it (read from its cover),
not the one filed that year; the part says why; a question that names no document is ranked as
before; a document the caller may not see is never matched. On both index backends."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pymupdf
import pytest
from backends import BOTH, NewIndex, execute
from click.testing import CliRunner

from localqa.cli import cli
from localqa.indexing.index import refresh_index
from localqa.library import Library
from localqa.question.routing import Directory, question_names
from localqa.store import Db
from localqa.types import Caller, Document, Found, PartResult, Period

BACKENDS = BOTH
AS_OF = date(2026, 1, 1)
STAFF = Caller(role="staff")


def filing(path: Path, company: str, form: str, period_line: str, revenue: str, year: int) -> None:
    """A small 10-K: an SEC cover page, then a page of results."""
    with pymupdf.open() as document:
        cover = document.new_page()
        lines = [
            ("UNITED STATES SECURITIES AND EXCHANGE COMMISSION", 14),
            (f"FORM {form}", 14),
            ("ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934", 9),
            (period_line, 11),
            ("Commission File Number 1-0000", 9),
            (company, 12),
            ("(Exact name of registrant as specified in its charter)", 9),
        ]
        y = 72.0
        for text, size in lines:
            cover.insert_text((72, y), text, fontsize=size)
            y += size * 2.2
        results = document.new_page()
        results.insert_text((72, 72), "Results of Operations", fontsize=14)
        results.insert_textbox(
            pymupdf.Rect(72, 100, 520, 300),
            f"Total revenue for the fiscal year was {revenue}, compared with the prior year. "
            f"Revenue grew in every segment during fiscal {year}.",
            fontsize=11,
        )
        document.save(path)


@pytest.fixture(scope="module")
def filings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Acme's 10-Ks filed in 2023 (fiscal 2022) and 2024 (fiscal 2023), Globex's filed in 2023,
    and Initech's, which only staff may see. The file names carry the year of filing."""
    folder = tmp_path_factory.mktemp("filings") / "pdfs"
    folder.mkdir()
    filing(folder / "acme-10k-2023.pdf", "ACME CORPORATION", "10-K",
           "For the fiscal year ended December 31, 2022", "$120 million", 2022)  # fmt: skip
    filing(folder / "acme-10k-2024.pdf", "ACME CORPORATION", "10-K",
           "For the fiscal year ended December 31, 2023", "$150 million", 2023)  # fmt: skip
    filing(folder / "globex-10k-2023.pdf", "GLOBEX INC.", "10-K",
           "For the fiscal year ended June 30, 2022", "$90 million", 2022)  # fmt: skip
    filing(folder / "initech-10k-2023.pdf", "INITECH LLC", "10-K",
           "For the fiscal year ended December 31, 2022", "$70 million", 2022)  # fmt: skip
    (folder / "catalog.toml").write_text(
        "".join(
            f'["{name}"]\naccess = "{access}"\n\n'
            for name, access in [
                ("acme-10k-2023.pdf", "public"),
                ("acme-10k-2024.pdf", "public"),
                ("globex-10k-2023.pdf", "public"),
                ("initech-10k-2023.pdf", "staff"),
            ]
        ),
        encoding="utf-8",
    )
    return folder


def indexed(pdfs: Path, backend: str, request: pytest.FixtureRequest) -> Db:
    """`pdfs` indexed in a new index on `backend`."""
    db: Db = pdfs.parent / f"{pdfs.name}.sqlite3"
    if backend == "postgresql":
        db = request.getfixturevalue("postgres").create_database()
    report = refresh_index(pdfs, db, embed=False)
    assert not report.failed, report.problems
    return db


@pytest.fixture(scope="module")
def db(filings: Path, backend: str, request: pytest.FixtureRequest) -> Db:
    return indexed(filings, backend, request)


def search(db: Db, question: str, caller: Caller | None = None, k: int | None = None) -> list[PartResult]:
    with Library(db) as library:
        return library.search(question, as_of=AS_OF, caller=caller, k=k)


# --- what the cover says ------------------------------------------------------------------------


def test_the_period_and_the_registrant_are_read_from_the_cover(db: Db) -> None:
    with Library(db) as library:
        listed = {row.document.source: row for row in library.documents(as_of=AS_OF, caller=STAFF)}
        found = library.store.found()
    acme = listed["acme-10k-2023.pdf"]
    assert (acme.period, acme.period_from) == (Period(end=date(2022, 12, 31), kind="year"), "cover")
    assert acme.shown_period == "FY2022 (year ended 2022-12-31)"
    assert listed["globex-10k-2023.pdf"].shown_period == "FY2022 (year ended 2022-06-30)"
    assert found[acme.document.doc_id].name == "ACME CORPORATION"


# --- routing ------------------------------------------------------------------------------------


def test_a_company_and_fiscal_year_route_to_the_filing_covering_that_year(db: Db) -> None:
    (part,) = search(db, "What was Acme's total revenue in FY2022?")
    assert part.route is not None
    assert part.route.sources == ("acme-10k-2023.pdf",)  # filed in 2023, covering fiscal 2022
    assert part.route.why == ('searched mainly in acme-10k-2023.pdf: the question names "Acme" and "FY2022"')
    assert part.candidates[0].location.source == "acme-10k-2023.pdf"
    assert "$120 million" in part.candidates[0].text


def test_the_next_fiscal_year_routes_to_the_next_filing(db: Db) -> None:
    (part,) = search(db, "What was Acme's total revenue in fiscal 2023?")
    assert part.route is not None and part.route.sources == ("acme-10k-2024.pdf",)
    assert "$150 million" in part.candidates[0].text


def test_a_company_without_a_year_routes_to_its_series_across_years(db: Db) -> None:
    (part,) = search(db, "What was Globex's total revenue?")
    assert part.route is not None and part.route.sources == ("globex-10k-2023.pdf",)
    (part,) = search(db, "How did Acme's total revenue change?")
    assert part.route is not None
    assert part.route.sources == ("acme-10k-2023.pdf", "acme-10k-2024.pdf")
    assert {c.location.source for c in part.candidates[:2]} <= set(part.route.sources)


def test_a_question_that_names_no_document_is_not_routed(db: Db) -> None:
    for question in ("What was total revenue in FY2022?", "What was the total revenue for the fiscal year?"):
        (part,) = search(db, question)
        assert part.route is None, question


def test_the_routed_documents_come_first_and_the_others_fill_the_places_left(db: Db) -> None:
    (part,) = search(db, "What was Globex's total revenue?", k=20)
    sources = [c.location.source for c in part.candidates]
    routed = [s for s in sources if s == "globex-10k-2023.pdf"]
    assert sources[: len(routed)] == routed and len(routed) < len(sources)
    assert [c.rank for c in part.candidates] == list(range(1, len(sources) + 1))


def test_a_document_the_caller_may_not_see_is_never_matched(
    db: Db, filings: Path, backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    question = "What was Initech's total revenue in FY2022?"
    (public,) = search(db, question)
    assert public.route is None
    assert all(c.location.source != "initech-10k-2023.pdf" for c in public.candidates)
    (staff,) = search(db, question, STAFF)
    assert staff.route is not None and staff.route.sources == ("initech-10k-2023.pdf",)
    # The public answer is exactly what an index without Initech's filing gives.
    without = tmp_path / "without"
    without.mkdir()
    for path in filings.iterdir():
        if not path.name.startswith("initech"):
            (without / path.name).write_bytes(path.read_bytes())
    catalog = (without / "catalog.toml").read_text(encoding="utf-8")
    (without / "catalog.toml").write_text(catalog.split('["initech')[0], encoding="utf-8")
    (alone,) = search(indexed(without, backend, request), question)
    assert public.model_dump() == alone.model_dump()


# --- the why line in every output ---------------------------------------------------------------

WHY = 'searched mainly in acme-10k-2023.pdf: the question names "Acme" and "FY2022"'
QUESTION = "What was Acme's total revenue in FY2022?"


def test_the_why_line_in_the_cli_text_and_json(db: Db) -> None:
    runner = CliRunner()
    args = ["--db", str(db), "--as-of", AS_OF.isoformat()]
    text = runner.invoke(cli, ["search", QUESTION, *args])
    assert text.exit_code == 0, text.output
    assert f"1. {QUESTION}\n   Read as: a figure: Acme's total revenue, FY2022\n   ({WHY})\n" in text.output
    data = json.loads(runner.invoke(cli, ["search", QUESTION, *args, "--json"]).stdout)
    assert data["parts"][0]["route"] == {
        "sources": ["acme-10k-2023.pdf"],
        "names": ["Acme", "FY2022"],
        "why": WHY,
    }
    assert data["documents"] == []
    asked = runner.invoke(cli, ["ask", QUESTION, *args, "--model", "extractive"])
    assert f"   ({WHY})\n" in asked.output
    asked_json = json.loads(
        runner.invoke(cli, ["ask", QUESTION, *args, "--model", "extractive", "--json"]).stdout
    )
    assert asked_json["parts"][0]["route"]["why"] == WHY
    unrouted = json.loads(runner.invoke(cli, ["search", "What was total revenue?", *args, "--json"]).stdout)
    assert unrouted["parts"][0]["route"] is None


def test_the_why_line_in_an_evaluation_run(db: Db, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "cases.toml").write_text(
        f'[[case]]\nid = "acme-fy2022"\nas_of = {AS_OF.isoformat()}\nquestion = "{QUESTION}"\n'
        'expect = [{ source = "acme-10k-2023.pdf", page = 2 }]\n',
        encoding="utf-8",
    )
    run = tmp_path / "run.json"
    result = CliRunner().invoke(cli, ["eval", str(suite), "--db", str(db), "--save", str(run)])
    assert result.exit_code == 0, result.output
    (case,) = json.loads(run.read_text(encoding="utf-8"))["cases"]
    assert case["parts"][0]["route"] == WHY
    assert case["parts"][0]["routed_to"] == ["acme-10k-2023.pdf"]


# --- the rule on its own ------------------------------------------------------------------------


def directory(*documents: tuple[str, Found]) -> Directory:
    docs = [
        Document(doc_id=f"default/{source}", source=source, series=Path(source).stem)
        for source, _ in documents
    ]
    return Directory(docs, {f"default/{source}": found for source, found in documents})


def test_names_are_words_written_as_names() -> None:
    names = question_names("What was Lockheed Martin's revenue? Compare JnJ and 3M, per the 10-K for FY2022.")
    assert [n.spellings[-1] for n in names] == [
        ("lockheedmartin", "Lockheed Martin"),
        ("jnj", "JnJ"),
        ("3m", "3M"),
    ]
    # The first word of a sentence, topic words, weekdays, identifiers and periods are not names.
    assert question_names("Opening hours at Zeta on Saturday? What is the limit for EQ-314 in FY2022?") == [
        question_names("at Zeta")[0]
    ]


def test_glued_and_camel_case_file_names_match_the_words_a_question_writes() -> None:
    names = directory(("ACTIVISIONBLIZZARD_2019_10K.pdf", Found()), ("AmericanWaterWorks-2020.pdf", Found()),
                      ("other.pdf", Found()))  # fmt: skip
    routed = names.route("What is the capex of Activision Blizzard?")
    assert routed is not None and routed[1].sources == ("ACTIVISIONBLIZZARD_2019_10K.pdf",)
    routed = names.route("How much did American Water Works pay out?")
    assert routed is not None and routed[1].sources == ("AmericanWaterWorks-2020.pdf",)


QUARTER = Period(end=date(2022, 12, 31), kind="quarter")


def test_a_report_type_chooses_among_one_company_s_documents() -> None:
    amcor = directory(
        ("AMCOR_2022_8K_dated-2022-07-01.pdf", Found(name="AMCOR PLC")),
        (
            "AMCOR_2023Q2_10Q.pdf",
            Found(name="AMCOR PLC", period=Period(end=date(2022, 12, 31), kind="quarter")),
        ),
        ("AMCOR_2023Q4_EARNINGS.pdf", Found()),
        ("BOEING_2018_10K.pdf", Found(period=Period(end=date(2018, 12, 31), kind="year"))),
    )
    routed = amcor.route("What was the key agenda of the AMCOR's 8k filing dated 1st July 2022?")
    assert routed is not None and routed[1].sources == ("AMCOR_2022_8K_dated-2022-07-01.pdf",)


def test_claims_that_name_no_document_are_not_routed() -> None:
    """SciFact-like: abstracts named by number, claims full of capitalised terms."""
    abstracts = directory(*((f"{number}.md", Found()) for number in (4983, 5836, 7912, 2010)))
    for claim in (
        "ALDH1 expression is associated with poorer prognosis for breast cancer primary tumors.",
        "In 2010, 5836 patients with Type 2 Diabetes were treated with Metformin.",
    ):
        assert abstracts.route(claim) is None, claim


def test_the_why_line_on_the_web_pages_and_the_api(db: Db, filings: Path) -> None:
    from fastapi.testclient import TestClient
    from markupsafe import escape

    from localqa.serve.app import ServeConfig, create_app

    shown = f'<p class="route">({escape(WHY)})</p>'
    config = ServeConfig(db=db, pdfs=filings, model="extractive")
    with TestClient(create_app(config)) as client:
        query = {"question": QUESTION, "as_of": AS_OF.isoformat()}
        assert shown in client.get("/search", params=query).text
        assert shown in client.get("/ask", params={**query, "model": "extractive"}).text
        assert client.post("/api/search", json=query).json()["parts"][0]["route"]["why"] == WHY
        assert client.post("/api/ask", json=query).json()["parts"][0]["route"]["why"] == WHY
        listed = client.get("/library", params={"as_of": AS_OF.isoformat()}).text
        assert 'FY2022 (year ended 2022-12-31) <span class="hint">(from its cover)</span>' in listed


def test_an_index_of_the_previous_schema_is_migrated_and_its_covers_read(
    filings: Path, new_index: NewIndex
) -> None:
    """m006_document_periods: the columns are added, and every PDF is re-extracted so that its
    cover is read (an index written before knows no period)."""
    old = new_index()
    assert not refresh_index(filings, old, embed=False).failed
    for column in ("period", "found_period", "found_name"):
        execute(old, f"ALTER TABLE documents DROP COLUMN {column}")
    execute(old, "DELETE FROM migrations WHERE name = 'm006_document_periods'")
    execute(old, "UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    report = refresh_index(filings, old, embed=False)
    assert not report.failed, report.problems
    assert sorted(report.changed) == sorted(p.name for p in filings.glob("*.pdf"))
    (part,) = search(old, QUESTION)
    assert part.route is not None and part.route.why == WHY


def test_a_document_sharing_one_word_of_a_longer_name_is_not_that_name() -> None:
    names = directory(
        ("AMERICANWATERWORKS_2020_10K.pdf", Found(name="AMERICAN WATER WORKS COMPANY, INC.")),
        ("AMERICANEXPRESS_2022_10K.pdf", Found(name="American Express Company")),
        ("BOEING_2018_10K.pdf", Found(name="THE BOEING COMPANY")),
    )
    routed = names.route("How much did American Water Works pay out in cash dividends?")
    assert routed is not None and routed[1].sources == ("AMERICANWATERWORKS_2020_10K.pdf",)
    routed = names.route("What were American Express's card fees?")
    assert routed is not None and routed[1].sources == ("AMERICANEXPRESS_2022_10K.pdf",)


def test_a_common_word_inside_an_organisation_s_name_never_routes_alone() -> None:
    """"Health" of "Consumer Health" (Johnson & Johnson's segment) is an ordinary word: it does not
    route to CVS Health's filing, while the whole run, and a one-word name, still route."""
    names = directory(
        ("CVSHEALTH_2022_10K.pdf", Found(name="CVS HEALTH CORPORATION")),
        ("JOHNSON_JOHNSON_2022Q4_EARNINGS.pdf", Found()),
        ("BLOCK_2020_10K.pdf", Found(name="Block, Inc.")),
        ("MGM_Resorts_2018_10K.pdf", Found()),
    )
    assert names.route("How did sales of the Consumer Health segment change in 2022?") is None
    routed = names.route("How did Johnson & Johnson's Consumer Health sales change in 2022?")
    assert routed is not None and routed[1].sources == ("JOHNSON_JOHNSON_2022Q4_EARNINGS.pdf",)
    routed = names.route("What was CVS Health's revenue in 2022?")
    assert routed is not None and routed[1].sources == ("CVSHEALTH_2022_10K.pdf",)
    routed = names.route("What was the gross profit of Block in 2020?")  # a name of one word
    assert routed is not None and routed[1].sources == ("BLOCK_2020_10K.pdf",)
    routed = names.route("What did MGM Resorts earn?")  # an acronym with a common word: the whole run
    assert routed is not None and routed[1].sources == ("MGM_Resorts_2018_10K.pdf",)


def test_a_long_name_misspelt_by_one_letter_still_routes() -> None:
    """"Activsion Blizzard" (MMLongBench-dev's spelling): "Blizzard" is an ordinary word and routes
    only with a name beside it, which matches misspelt by one letter; a short name never does."""
    names = directory(
        ("ACTIVISIONBLIZZARD_2019_10K.pdf", Found(name="Activision Blizzard, Inc.")),
        ("BLIZZARDCOUNTY_2019_REPORT.pdf", Found()),
        ("TACRED_2019.pdf", Found()),
    )
    routed = names.route("What value stock does Activsion Blizzard repurchase in FY2019?")
    assert routed is not None and routed[1].sources == ("ACTIVISIONBLIZZARD_2019_10K.pdf",)
    assert names.route("What is the F1 on TACREV?") is None


def test_a_mixed_case_initialism_routes_to_the_document_it_abbreviates() -> None:
    """FinanceBench writes Johnson & Johnson as "JnJ": it routes to the filings whose names it
    abbreviates, by the rule coverage reads titles with (`words.initialism_of`). An all-capitals
    acronym ("JJ") and an initialism of nothing routed ("GmB") route nowhere."""
    names = directory(
        ("JOHNSON_JOHNSON_2022Q4_EARNINGS.pdf", Found()),
        ("JOHNSON_JOHNSON_2023Q2_EARNINGS.pdf", Found()),
        ("GENERALMILLS_2022_10K.pdf", Found(name="General Mills, Inc.")),
    )
    routed = names.route("How did JnJ's US sales growth compare to international sales growth in FY2022?")
    assert routed is not None and routed[1].sources == ("JOHNSON_JOHNSON_2022Q4_EARNINGS.pdf",)
    routed = names.route("What does JnJ forecast?")
    assert routed is not None
    assert routed[1].sources == ("JOHNSON_JOHNSON_2022Q4_EARNINGS.pdf", "JOHNSON_JOHNSON_2023Q2_EARNINGS.pdf")
    for question in ("What does JJ report?", "What did GmB report?"):
        assert names.route(question) is None, question
