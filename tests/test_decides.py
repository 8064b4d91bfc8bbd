"""When the evidence decides a part, no model is asked (localqa.answers.deciding): the identifier's own table
row, a value of the asked kind in the scorer's clear first unit, a figure computed from cited
operands. The decision is verified, covered and valued like any model's choice, and
`selection.decided_by` says who decided; `--always-ask-model` asks the model on every part. An
embedded model's load starts before retrieval, in the background."""

from __future__ import annotations

import html
import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fake_model import FakeModel, serving
from fastapi.testclient import TestClient
from filings import write_filing

from localqa.answers import deciding
from localqa.answers.answering import answer_part
from localqa.cli import cli
from localqa.indexing.index import refresh_index
from localqa.library import Library
from localqa.models import embedded
from localqa.models.extractive import ExtractiveModel
from localqa.serve import state as serve_state
from localqa.serve.app import ServeConfig, create_app
from localqa.settings import AnswerSettings, Settings
from localqa.types import Candidate, Kind, Location, RankedUnit

NOV = date(2026, 11, 14)
DEFAULTS = AnswerSettings()
ASKING = AnswerSettings(always_ask_model=True)


def location(kind: Kind = Kind.PROSE, row: int = 1, source: str = "policy.pdf") -> Location:
    table = kind is Kind.TABLE
    return Location(
        source=source,
        page=1,
        kind=kind,
        section="Equipment Loan Policy > Equipment loan limits",
        table=1 if table else None,
        row=row if table else None,
        paragraph=None if table else row,
        effective=date(2026, 1, 1),
    )


def candidate(text: str, rank: int = 1, kind: Kind = Kind.PROSE, source: str = "policy.pdf") -> Candidate:
    return Candidate(
        rank=rank,
        score=10.0 - rank,
        location=location(kind, rank, source),
        text=text,
        doc_id=source,
        tenant="default",
    )


def unit(
    text: str,
    rank: int,
    score: float,
    kind: Kind = Kind.PROSE,
    lexical: float = 1.0,
    demoted: str | None = None,
) -> RankedUnit:
    return RankedUnit(
        rank=rank,
        score=score,
        lexical=lexical,
        semantic=None,
        label=f"P{rank}",
        sentence=1,
        location=location(kind, rank),
        text=text,
        demoted=demoted,
    )


EQ_ROW = "Equipment loan limits: Item ID: EQ-314; Item: Portable scanner; Loan limit: 45 minutes"
EQ_OTHER_ROW = "Equipment loan limits: Item ID: EQ-314; Item: Scanner bag; Loan limit: 2 days"
OTHER_ROW = "Equipment loan limits: Item ID: CT-41; Item: Camera; Loan limit: 3 days"
EQ_PROSE = "The EQ-314 scanner must be returned to the desk."
DAYS = "Standard book loans last 21 days."
EQUIPMENT_DAYS = "Standard equipment loans last seven calendar days."
NO_VALUE = "Standard book loans are popular."
LIMIT = "What is the loan limit for EQ-314?"
HOW_LONG = "How many days does a standard book loan last?"
PROSE = "Why are standard book loans popular?"

# (name, question, candidates' texts and kinds, ranked units (text, score, kind, demoted), rule)
DECISIONS: list[
    tuple[str, str, list[tuple[str, Kind]], list[tuple[str, float, Kind, str | None]], str | None]
] = [
    (
        "the identifier's only row, first",
        LIMIT,
        [(EQ_ROW, Kind.TABLE), (EQ_PROSE, Kind.PROSE)],
        [(EQ_ROW, 0.049, Kind.TABLE, None), (EQ_PROSE, 0.0485, Kind.PROSE, None)],
        deciding.IDENTIFIER_ROW,
    ),
    (
        "two rows carry the identifier",
        LIMIT,
        [(EQ_ROW, Kind.TABLE), (EQ_OTHER_ROW, Kind.TABLE)],
        [(EQ_ROW, 0.049, Kind.TABLE, None), (EQ_OTHER_ROW, 0.0485, Kind.TABLE, None)],
        deciding.VALUE_MARGIN,  # not the identifier's row: the first's value decides (margin 0)
    ),
    (
        "a candidate does not carry the identifier",
        LIMIT,
        [(EQ_ROW, Kind.TABLE), (OTHER_ROW, Kind.TABLE)],
        [(EQ_ROW, 0.049, Kind.TABLE, None), (OTHER_ROW, 0.0485, Kind.TABLE, None)],
        deciding.VALUE_MARGIN,  # not the identifier's row: the first's value decides (margin 0)
    ),
    (
        "the identifier's row is not the scorer's first",
        LIMIT,
        [(EQ_ROW, Kind.TABLE), (EQ_PROSE, Kind.PROSE)],
        [(EQ_PROSE, 0.049, Kind.PROSE, None), (EQ_ROW, 0.0485, Kind.TABLE, None)],
        None,
    ),
    (
        "a value of the asked kind, the scorer's first",
        HOW_LONG,
        [(DAYS, Kind.PROSE), (EQUIPMENT_DAYS, Kind.PROSE)],
        [(DAYS, 0.0492, Kind.PROSE, None), (EQUIPMENT_DAYS, 0.030, Kind.PROSE, None)],
        deciding.VALUE_MARGIN,
    ),
    (
        "a close call between two values is the first's at margin 0 (test_the_margin_is_the_settings)",
        HOW_LONG,
        [(DAYS, Kind.PROSE), (EQUIPMENT_DAYS, Kind.PROSE)],
        [(DAYS, 0.0492, Kind.PROSE, None), (EQUIPMENT_DAYS, 0.0490, Kind.PROSE, None)],
        deciding.VALUE_MARGIN,
    ),
    (
        "a demoted second is no rival",
        HOW_LONG,
        [(DAYS, Kind.PROSE), (NO_VALUE, Kind.PROSE)],
        [(DAYS, 0.040, Kind.PROSE, None), (NO_VALUE, 0.049, Kind.PROSE, "states no quantity")],
        deciding.VALUE_MARGIN,
    ),
    (
        "the first holds no value of the asked kind",
        HOW_LONG,
        [(NO_VALUE, Kind.PROSE), (DAYS, Kind.PROSE)],
        [(NO_VALUE, 0.0492, Kind.PROSE, None), (DAYS, 0.030, Kind.PROSE, None)],
        None,
    ),
    (
        "a prose question asks for no value kind",
        PROSE,
        [(NO_VALUE, Kind.PROSE), (DAYS, Kind.PROSE)],
        [(NO_VALUE, 0.0492, Kind.PROSE, None), (DAYS, 0.030, Kind.PROSE, None)],
        None,
    ),
    (
        "a demoted first is never decided for",
        HOW_LONG,
        [(DAYS, Kind.PROSE)],
        [(DAYS, 0.0492, Kind.PROSE, "repeats the question")],
        None,
    ),
]


@pytest.mark.parametrize(
    ("question", "texts", "ranked", "rule"),
    [pytest.param(q, t, r, rule, id=name) for name, q, t, r, rule in DECISIONS],
)
def test_when_the_evidence_decides(
    question: str,
    texts: list[tuple[str, Kind]],
    ranked: list[tuple[str, float, Kind, str | None]],
    rule: str | None,
) -> None:
    candidates = [candidate(text, rank, kind) for rank, (text, kind) in enumerate(texts, start=1)]
    units = [
        unit(text, rank, score, kind, demoted=demoted)
        for rank, (text, score, kind, demoted) in enumerate(ranked, start=1)
    ]
    assert deciding.decides(question, candidates, units, DEFAULTS) == rule
    assert deciding.decides(question, candidates, units, ASKING) is None


def test_the_margin_is_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    candidates = [candidate(DAYS), candidate(EQUIPMENT_DAYS, 2)]
    units = [unit(DAYS, 1, 0.050), unit(EQUIPMENT_DAYS, 2, 0.045)]  # leads by 10 % of its score
    assert deciding.decides(HOW_LONG, candidates, units, AnswerSettings(decide_margin=0.1)) is not None
    assert deciding.decides(HOW_LONG, candidates, units, AnswerSettings(decide_margin=0.11)) is None


def test_a_first_unit_nothing_ties_to_the_question_is_never_decided_for() -> None:
    candidates = [candidate(DAYS)]
    assert deciding.decides(HOW_LONG, candidates, [unit(DAYS, 1, 0.05, lexical=0.0)], DEFAULTS) is None


# --- the answer stage ------------------------------------------------------------------------------


def test_a_decided_part_calls_no_model_and_says_the_evidence_decided() -> None:
    model = FakeModel()  # it raises when called: nothing is enqueued
    answer = answer_part(LIMIT, (candidate(EQ_ROW, kind=Kind.TABLE),), model)
    assert model.history == []
    assert answer.verified and answer.quote == EQ_ROW and answer.call is None
    assert answer.value is not None and answer.value.text == "45 minutes"
    assert answer.selection is not None
    assert (answer.selection.decided_by, answer.selection.decided) == ("evidence", deciding.IDENTIFIER_ROW)
    assert answer.selection.choice is not None and answer.selection.choice.rank == 1
    assert "Decided by the evidence (the identifier's own table row)" in answer.selection.describe()
    assert answer.selection.as_json()["decided_by"] == "evidence"


def test_always_ask_model_asks_it_on_a_decided_part() -> None:
    model = FakeModel().enqueue(json.dumps({"source": "P1", "sentence": 1}))
    answer = answer_part(LIMIT, (candidate(EQ_ROW, kind=Kind.TABLE),), model, ASKING)
    assert len(model.history) == 1 and answer.call is not None
    assert answer.selection is not None and answer.selection.decided_by == "model"


def test_the_extractive_baseline_is_not_spared_a_call_it_does_not_make() -> None:
    answer = answer_part(LIMIT, (candidate(EQ_ROW, kind=Kind.TABLE),), ExtractiveModel())
    assert answer.verified and answer.selection is not None
    assert answer.selection.decided_by == "model"


def test_an_undecided_part_asks_the_model() -> None:
    model = FakeModel().enqueue(json.dumps({"source": "P2", "sentence": 1}))
    candidates = (candidate(NO_VALUE), candidate(DAYS, 2))
    answer = answer_part(PROSE, candidates, model)
    assert len(model.history) == 1
    assert answer.selection is not None and answer.selection.decided_by == "model"


# --- through the library and the CLI ---------------------------------------------------------------

CATALOG = """
["acme-10k-fy2018.pdf"]
series = "acme-10k"
access = "public"
period = "FY2018"
"""


@pytest.fixture(scope="module")
def filings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("filings")
    write_filing(folder / "acme-10k-fy2018.pdf", "Acme Retail Inc.")
    (folder / "catalog.toml").write_text(CATALOG, encoding="utf-8")
    db = folder / "index.sqlite3"
    report = refresh_index(folder, db, embed=False)
    assert not report.problems, report.problems
    return db


def test_a_computed_figure_needs_no_model_for_the_parts_own_quote(filings: Path) -> None:
    model = FakeModel()  # raises when called
    with Library(filings) as library:
        asked = library.answer(
            "What is Acme Retail's FY2018 gross margin?", as_of=date(2026, 1, 1), model=model
        )
    answer = asked.parts[0].answer
    assert model.history == []
    assert answer.verified and answer.value is not None and answer.value.operands
    assert answer.selection is not None
    assert (answer.selection.decided_by, answer.selection.decided) == ("evidence", deciding.FIGURE)


def test_a_figure_not_computed_asks_the_model_for_the_quote(filings: Path) -> None:
    model = FakeModel().always(json.dumps({"source": None, "sentence": None}))
    with Library(filings) as library:
        asked = library.answer(
            "What is Acme Retail's FY2016 - FY2018 revenue CAGR?", as_of=date(2026, 1, 1), model=model
        )
    assert len(model.history) == 1
    assert asked.parts[0].answer.selection is not None
    assert asked.parts[0].answer.selection.decided_by == "model"


def test_the_cli_says_who_decided(runner: CliRunner, library_db: Path) -> None:
    with serving(FakeModel()) as fake_model:
        _cli_says_who_decided(runner, library_db, fake_model)


def _cli_says_who_decided(runner: CliRunner, library_db: Path, fake_model: FakeModel) -> None:
    fake_model.always(json.dumps({"source": "P1", "sentence": 1}))
    args = ["ask", LIMIT, "--as-of", "2026-11-14", "--db", str(library_db), "--model", "fake"]
    verbose = runner.invoke(cli, [*args, "--verbose"])
    assert verbose.exit_code == 0, verbose.output
    assert "Decided by the evidence (the identifier's own table row)" in verbose.stdout
    assert "no model call" in verbose.stdout
    assert fake_model.history == []
    payload = json.loads(runner.invoke(cli, [*args, "--json"]).stdout)
    assert payload["parts"][0]["answer"]["selection"]["decided_by"] == "evidence"
    asked = json.loads(runner.invoke(cli, [*args, "--json", "--always-ask-model"]).stdout)
    assert asked["parts"][0]["answer"]["selection"]["decided_by"] == "model"
    assert len(fake_model.history) == 1


def test_eval_always_ask_model_is_recorded_in_the_run(
    runner: CliRunner, library_db: Path, tmp_path: Path
) -> None:
    saved = tmp_path / "run.json"
    args = ["eval", "evals/library", "--db", str(library_db), "--model", "fake", "--save", str(saved)]
    with serving(FakeModel().always(json.dumps({"source": "P1", "sentence": 1}))):
        runner.invoke(cli, [*args, "--always-ask-model"])
    run = json.loads(saved.read_text(encoding="utf-8"))
    assert run["config"]["answering"]["always_ask_model"] is True


# --- the first part's load --------------------------------------------------------------------------


def test_the_embedded_model_file_is_read_ahead_before_retrieval(
    library_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    order: list[str] = []
    monkeypatch.setattr(embedded, "preload", lambda directory=None: order.append("read ahead") or True)

    def load(*args: Any, **kwargs: Any) -> Any:
        raise embedded.ModelError("no model here")

    monkeypatch.setattr(embedded, "load", load)
    with Library(library_db, Settings()) as library:
        searching = library.search

        def search(*args: Any, **kwargs: Any) -> Any:
            order.append("search")
            return searching(*args, **kwargs)

        monkeypatch.setattr(library, "search", search)
        asked = library.answer(PROSE, as_of=NOV, model=embedded.EmbeddedModel())
    assert order[:2] == ["read ahead", "search"]
    # A load that fails is reported where the model is first used, not by the read-ahead.
    assert all(p.answer.reason == "no model here" for p in asked.parts if p.answer.model_failed)


def test_reading_ahead_loads_nothing_and_never_raises(tmp_path: Path) -> None:
    assert embedded.preload(tmp_path) is False  # no assembled model there: nothing to read
    path = embedded.cached_model_path(tmp_path)
    path.write_bytes(b"gguf")
    embedded._marker(path).write_text(f"{embedded.MODEL_SHA256} 4\n", encoding="ascii")
    assert embedded.preload(tmp_path) is True
    assert embedded._loaded is None or embedded._loaded.path != path


def test_the_web_app_says_who_decided(library_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = FakeModel()  # raises when called
    monkeypatch.setattr(serve_state, "get_model", lambda spec=None: model)
    config = ServeConfig(db=library_db, pdfs=library_db.parent / "pdfs")
    with TestClient(create_app(config)) as client:
        page = html.unescape(client.get("/ask", params={"question": LIMIT, "as_of": "2026-11-14"}).text)
        payload = client.post("/api/ask", json={"question": LIMIT, "as_of": "2026-11-14"}).json()
    assert model.history == []
    assert payload["parts"][0]["answer"]["selection"]["decided_by"] == "evidence"
    assert "How the sentence was chosen: Decided by the evidence (the identifier's own table row)" in page
    assert "Sentences the evidence decided among (no model call)" in page
    assert "· the evidence's choice</span>" in page
