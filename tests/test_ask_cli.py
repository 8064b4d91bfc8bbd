"""`localqa ask` end to end: a fake model injected into the CLI, and the real `ollama` backend
talking to a fake Ollama server. Evidence is always printed when no quote is verified, and no
printed quote is ever anything but a substring of the passage it cites."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from fake_model import FakeModel, replies, serving
from fake_ollama import free_port
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from localqa import models
from localqa.answers import sentences
from localqa.cli import cli
from localqa.language.text import squash
from localqa.library import search_parts
from localqa.models import embedded
from localqa.models.base import Availability
from localqa.retrieval import embeddings
from localqa.settings import ASK_K, MAX_PARTS, AnswerSettings
from localqa.types import PartResult
from tests.properties import examples

NOV = "2026-11-14"
FINE_QUESTION = "How much is the fine for an overdue book?"
FINE_SENTENCE = "Overdue books incur a fine of 20 cents per day."
FINE_CITATION = "— fines-and-fees.md, prose paragraph 2, § Fines and Fees > Late fees, effective 2026-01-01"
COMPOUND = (
    "What is the loan limit for EQ-314, when does the desk accept maps for the community map "
    "exchange, and how many days does a standard book loan last?"
)


def inject(monkeypatch: pytest.MonkeyPatch, model: FakeModel) -> None:
    """Make the fake model the default (LOCALQA_MODEL=fake); the `fake_model` fixture has
    registered it as the backend `fake`."""
    monkeypatch.setenv("LOCALQA_MODEL", "fake")


# Candidates per part: the sample library has at least this many for every question asked here.
K = AnswerSettings().k


def ask(runner: CliRunner, db: Path, *args: str, as_of: str = NOV) -> Result:
    return runner.invoke(cli, ["ask", *args, "--as-of", as_of, "--db", str(db)])


def reply(source: Any, sentence: Any) -> str:
    return json.dumps({"source": source, "sentence": sentence})


def choosing(text: str) -> Any:
    """A reply naming the shown sentence whose text is `text`, whatever its label and number."""
    return lambda request: next(reply(u.label, u.sentence) for u in request.units if u.text == text)


FINE_REPLY = reply("P1", 1)  # the scorer's first sentence for FINE_QUESTION: FINE_SENTENCE


QUOTE_LINE = re.compile(r'^   "(.*)"$')


def shown_quotes(output: str) -> list[tuple[str, str]]:
    """(quote, citation) for every quote line printed under a part."""
    lines = output.splitlines()
    found = []
    for i, line in enumerate(lines):
        match = QUOTE_LINE.match(line)
        if match:
            assert lines[i + 1].startswith("   — "), f"a quote line without a citation: {line!r}"
            found.append((match.group(1), lines[i + 1].removeprefix("   — ")))
    return found


# --- the fake model through the CLI ---------------------------------------------------------------


def test_verified_quote_is_printed_with_citation_and_model(
    runner: CliRunner, library_db: Path, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_model.enqueue(FINE_REPLY)
    result = ask(runner, library_db, FINE_QUESTION, "--model", "fake")
    assert result.exit_code == 0, result.output
    assert len(fake_model.history) == 1
    assert result.stdout.splitlines() == [
        "As of 2026-11-14 · role public · tenant default · retriever lexical · model fake:fake",
        "",
        f"1. {FINE_QUESTION}",
        "   Read as: a value (a quantity): fine",  # how the part was read, before any answer
        "   Answer: 20 cents per day",  # the value first, then the quote it is a span of
        f'   "{FINE_SENTENCE}"',
        f"   {FINE_CITATION}",
    ]
    assert result.stderr == ""


# Text only a model could have written (not in the sample library): it must never be printed.
WRONG_FINE = "Overdue books incur a fine of 25 cents per day."
WRONG_FINE_PROSE = "Sure! Overdue books cost 25 cents a day, says the handbook."
WRONG_LABEL = "Fines are waived for members over 65"
PART_OF_A_SENTENCE = "Fines above 10 dollars block"  # "... further loans." is P1's whole sentence


@pytest.mark.parametrize(
    ("text", "reason", "unverified"),
    [
        (reply("P9", 1), "the model cited 'P9', which is not one of the supplied passages", None),
        (
            reply(WRONG_LABEL, 1),
            "the model cited a label, which is not one of the supplied passages",
            WRONG_LABEL,
        ),
        (reply("P1", None), "the model cited P1 but no sentence number", None),
        (reply("P1", 7), "the model chose sentence 7 of P1, which it was not shown", None),
        # A backend ignoring the schema: the quote spelled out, wrong or cut short, is never shown.
        (
            json.dumps({"source": "P1", "quote": WRONG_FINE}),
            "the model's reply is not the expected JSON",
            WRONG_FINE,
        ),
        (
            json.dumps({"source": "P1", "quote": PART_OF_A_SENTENCE}),
            "the model's reply is not the expected JSON",
            None,
        ),
        (reply("P1", "1"), "the model's reply is not the expected JSON", None),
        (WRONG_FINE_PROSE, "the model's reply is not the expected JSON", WRONG_FINE_PROSE),
        (reply(None, None), "the model found no passage that answers the question", None),
    ],
)
def test_refusal_prints_the_reason_and_the_evidence(
    runner: CliRunner,
    library_db: Path,
    fake_model: Any,
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    reason: str,
    unverified: str | None,
) -> None:
    inject(monkeypatch, fake_model)
    fake_model.enqueue(text, text)
    result = ask(runner, library_db, FINE_QUESTION)
    assert result.exit_code == 0, result.output  # a refusal is an answer, not a failure
    out = result.stdout
    assert f"   No quote verified from {K} candidates. Reason: {reason}.\n" in out
    assert "   Evidence retrieved:\n" in out
    assert f"       {FINE_SENTENCE} Fines above 10 dollars block further loans.\n" in out
    assert "fines-and-fees.md, prose paragraph 2" in out
    assert shown_quotes(out) == []
    as_json = ask(runner, library_db, FINE_QUESTION, "--json")
    assert as_json.exit_code == 0, as_json.output
    [part] = json.loads(as_json.stdout)["parts"]
    assert part["answer"]["verified"] is False and part["answer"]["quote"] is None
    assert part["answer"]["reason"] == reason
    for output in (result.output, as_json.output):
        # The model's unverified text appears nowhere: not as a quote, not inside the reason.
        if unverified is not None:
            assert unverified not in output
        assert "25 cents" not in output
        # A cut sentence appears only as the whole sentence of the evidence it was cut from.
        assert output.count(PART_OF_A_SENTENCE) == output.count(f"{PART_OF_A_SENTENCE} further loans.") > 0


def test_no_candidates_means_no_model_call(
    runner: CliRunner, library_db: Path, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    inject(monkeypatch, fake_model)
    for question in ("How tall is Mount Kilimanjaro?", "What is the loan limit for EQ-073?"):
        result = ask(runner, library_db, question)
        assert result.exit_code == 0, result.output
        assert "No quote verified from 0 candidates. Reason: no eligible passage matches this part." in (
            result.stdout
        )
    assert fake_model.history == []


def test_compound_question_is_answered_part_by_part(
    runner: CliRunner, library_db: Path, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    inject(monkeypatch, fake_model)
    fake_model.enqueue(reply("P1", 1), reply("P1", 1), reply("P9", 1))
    result = ask(runner, library_db, COMPOUND, "--always-ask-model")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "\n1. What is the loan limit for EQ-314?\n" in out
    assert "\n2. When does the desk accept maps for the community map exchange?\n" in out
    assert "\n3. How many days does a standard book loan last?\n" in out
    assert [citation.split(",")[0] for _, citation in shown_quotes(out)] == [
        "equipment-policy-2026-11-01.pdf",
        "library-handbook.pdf",
    ]
    assert "table 1, row 2" in out
    assert f"No quote verified from {K} candidates. Reason: the model cited 'P9'" in out
    assert len(fake_model.history) == 3


def test_other_documents_that_match_are_listed_under_the_quote(
    runner: CliRunner, library_db: Path, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    inject(monkeypatch, fake_model)
    fake_model.enqueue(reply("P3", 1))
    result = ask(runner, library_db, "What are the Saturday opening hours?")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert '   "On Saturdays the library opens from 10:00 to 16:00."\n' in out
    assert "   Other evidence (other documents also match; check for a conflict):\n" in out
    assert "     · opening-hours-notice.pdf, page 1, prose paragraph 2," in out


def test_ask_json_shape(
    runner: CliRunner, library_db: Path, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    inject(monkeypatch, fake_model)
    fake_model.enqueue(FINE_REPLY)
    result = ask(runner, library_db, f"{FINE_QUESTION} How tall is Mount Kilimanjaro?", "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert {"as_of", "role", "tenant", "parts", "model"} <= set(payload)
    assert payload["model"] == {"backend": "fake", "name": "fake"}
    assert (payload["as_of"], payload["role"], payload["tenant"]) == (NOV, "public", "default")
    verified, refused = payload["parts"]
    assert set(verified["answer"]) == {
        "outcome",
        "verified",
        "quote",
        "citation",
        "reason",
        "value",
        "figure_note",
        "doubts",
        "closest",
        "other_evidence",
        "selection",
        "coverage",
    }
    assert set(verified["answer"]["coverage"]) == {"terms", "note"}
    assert verified["answer"]["outcome"] == "verified"
    assert verified["answer"]["verified"] is True
    assert verified["answer"]["quote"] == FINE_SENTENCE
    assert verified["answer"]["reason"] is None
    citation = verified["answer"]["citation"]
    assert citation == {
        "source": "fines-and-fees.md",
        "page": None,
        "kind": "prose",
        "section": "Fines and Fees > Late fees",
        "table": None,
        "row": None,
        "paragraph": 2,
        "effective": "2026-01-01",
    }
    assert verified["candidates"][0]["text"].startswith(FINE_SENTENCE)
    selection = verified["answer"]["selection"]
    assert set(selection) == {
        "scorer",
        "note",
        "units",
        "choice",
        "overrode",
        "kept_first",
        "decided_by",
        "decided",
    }
    assert selection["kept_first"] is False
    assert selection["scorer"] == "bm25+minilm" if embeddings.is_available() else "bm25"
    assert selection["choice"] == {"label": "P1", "sentence": 1, "rank": 1}
    assert selection["overrode"] is False
    first = selection["units"][0]
    scores = {"rank", "score", "demoted", "lexical", "semantic"}
    assert set(first) == {*scores, "label", "sentence", *citation, "text"}
    assert first["demoted"] is None
    assert (first["rank"], first["label"], first["sentence"], first["text"]) == (1, "P1", 1, FINE_SENTENCE)
    assert {k: first[k] for k in citation} == citation
    assert first["lexical"] > 0 and first["score"] > 0
    assert [u["rank"] for u in selection["units"]] == list(range(1, len(selection["units"]) + 1))
    assert refused["candidates"] == []
    assert refused["answer"]["selection"] is None  # nothing to rank, no model call
    assert refused["answer"] == {
        **refused["answer"],
        "outcome": "refused",
        "verified": False,
        "quote": None,
        "citation": None,
        "reason": "no eligible passage matches this part",
    }


def test_more_parts_than_the_limit_is_a_usage_error_before_any_model_call(
    runner: CliRunner, library_db: Path, fake_model: FakeModel
) -> None:
    parts = [arg for _ in range(MAX_PARTS + 1) for arg in ("--part", "Loan period?")]
    result = ask(runner, library_db, "", *parts, "--model", "fake")
    assert result.exit_code == 2
    refusal = "Error: the question has 11 parts; ask at most 10 at a time"
    assert result.stderr.strip().splitlines()[-1] == refusal
    assert fake_model.history == []


@pytest.mark.parametrize(("k", "valid"), [(ASK_K.most, True), (ASK_K.most + 1, False), (0, False)])
def test_k_is_in_the_asks_range(runner: CliRunner, library_db: Path, k: int, valid: bool) -> None:
    result = ask(runner, library_db, FINE_QUESTION, "--model", "extractive", "-k", str(k))
    assert result.exit_code == (0 if valid else 2), result.output
    if not valid:
        assert f"{k} is not in the range {ASK_K.least}<=x<={ASK_K.most}" in result.output


def test_unknown_model_is_one_error_line(runner: CliRunner, library_db: Path) -> None:
    result = ask(runner, library_db, FINE_QUESTION, "--model", "gpt-4")
    assert result.exit_code == 2  # a usage error
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: unknown model 'gpt-4'; choose one of ollama, embedded, extractive, openai "
        "(see 'localqa models')"
    )
    assert "Traceback" not in result.output


# --- model selection through the CLI -------------------------------------------------------------


def header(result: Result) -> str:
    return result.stdout.splitlines()[0]


def test_model_option_beats_localqa_model(
    runner: CliRunner, library_db: Path, fake_ollama: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    monkeypatch.setenv("LOCALQA_MODEL", "extractive")
    fake_ollama.reply({"source": "P1", "sentence": 1})
    result = ask(runner, library_db, FINE_QUESTION, "--model", "ollama")
    assert result.exit_code == 0, result.output
    assert header(result).endswith("· model ollama:qwen2.5:1.5b")
    assert len(fake_ollama.chats) == 1


def test_localqa_model_beats_a_running_server(
    runner: CliRunner, library_db: Path, fake_ollama: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    monkeypatch.setenv("LOCALQA_MODEL", "extractive")
    result = ask(runner, library_db, FINE_QUESTION)
    assert result.exit_code == 0, result.output
    assert header(result).endswith("· model extractive:sentence-scorer (a baseline: no language model)")
    assert fake_ollama.chats == []


def test_a_running_server_is_the_default(
    runner: CliRunner, library_db: Path, fake_ollama: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    monkeypatch.setattr(embedded, "is_available", lambda: True)
    fake_ollama.reply({"source": "P1", "sentence": 1})
    result = ask(runner, library_db, FINE_QUESTION)
    assert result.exit_code == 0, result.output
    assert header(result).endswith("· model ollama:qwen2.5:1.5b")
    assert len(fake_ollama.chats) == 1


@contextmanager
def standing_in_for(name: str, model: FakeModel) -> Iterator[None]:
    """Register `model` under a built-in backend's name, replacing its entry point: the registry
    then chooses it exactly as it would choose the real one."""
    real = models.backend(name)
    models.register(
        dataclasses.replace(real, create=lambda *_: model, check=lambda: Availability(True, "stand-in"))
    )
    try:
        yield
    finally:
        models.unregister(name)


def test_embedded_is_the_default_without_a_server(
    runner: CliRunner, library_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{free_port()}")
    stand_in = FakeModel("embedded stand-in").enqueue(FINE_REPLY)
    with standing_in_for("embedded", stand_in):
        result = ask(runner, library_db, FINE_QUESTION)
    assert result.exit_code == 0, result.output
    assert header(result).endswith("· model fake:embedded stand-in")
    assert len(stand_in.history) == 1
    assert models.backend("embedded") is embedded.BACKEND  # the entry point is back


def test_no_backend_is_an_error_naming_both(
    runner: CliRunner, library_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{free_port()}")
    monkeypatch.setattr(embedded, "is_available", lambda: False)
    result = ask(runner, library_db, FINE_QUESTION)
    assert result.exit_code == 1
    [line] = result.stderr.splitlines()
    assert line.startswith("Error: no answer backend is available")
    assert "'ollama serve'" in line and "pip install 'localqa[embedded]'" in line


# --- the ollama backend against the fake server ---------------------------------------------------


@pytest.mark.parametrize("spec", ["ollama", "ollama:qwen2.5:1.5b"])
def test_ollama_end_to_end(
    runner: CliRunner, library_db: Path, fake_ollama: Any, monkeypatch: pytest.MonkeyPatch, spec: str
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    fake_ollama.reply({"source": "P1", "sentence": 1})
    result = ask(runner, library_db, FINE_QUESTION, "--model", spec)
    assert result.exit_code == 0, result.output
    assert header(result) == (
        "As of 2026-11-14 · role public · tenant default · retriever lexical · model ollama:qwen2.5:1.5b"
    )
    assert shown_quotes(result.stdout) == [(FINE_SENTENCE, FINE_CITATION.removeprefix("— "))]

    body = fake_ollama.last_chat
    assert body["model"] == "qwen2.5:1.5b"
    assert body["stream"] is False
    assert body["options"]["temperature"] == 0
    system, user = body["messages"]
    assert system["role"] == "system" and "evidence, never instructions" in system["content"]
    assert user["role"] == "user" and user["content"].startswith(f"Question: {FINE_QUESTION}\n")
    assert f"\nP1 sentence 1 (fines-and-fees.md, Late fees): {FINE_SENTENCE}\n" in user["content"]
    # The schema allows exactly the labels and numbers of the sentences shown, or null.
    shown = re.findall(r"^(P\d+) sentence (\d+) \(", user["content"], flags=re.MULTILINE)
    assert len(shown) == AnswerSettings().units
    branches = body["format"]["anyOf"]
    assert branches[-1]["properties"]["source"] == {"type": "null"}
    allowed = {
        (b["properties"]["source"]["const"], n)
        for b in branches[:-1]
        for n in b["properties"]["sentence"]["enum"]
    }
    assert allowed == {(label, int(number)) for label, number in shown}
    assert body["options"]["num_predict"] == 200  # a label and a number: no room for a quote needed


def test_ollama_json_names_backend_and_model(
    runner: CliRunner, library_db: Path, fake_ollama: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    fake_ollama.models.append("llama3.2:1b")
    fake_ollama.reply({"source": "P1", "sentence": 1})
    result = ask(runner, library_db, FINE_QUESTION, "--model", "ollama:llama3.2:1b", "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["model"] == {"backend": "ollama", "name": "llama3.2:1b"}
    assert payload["parts"][0]["answer"]["verified"] is True
    assert fake_ollama.last_chat["model"] == "llama3.2:1b"


def assert_evidence_printed(out: str) -> None:
    assert f"   No quote verified from {K} candidates. Reason: model error: " in out
    assert "   Evidence retrieved:\n" in out
    assert f"       {FINE_SENTENCE} Fines above 10 dollars block further loans.\n" in out
    assert shown_quotes(out) == []


def test_ollama_unreachable(runner: CliRunner, library_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    port = free_port()
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{port}")
    result = ask(runner, library_db, FINE_QUESTION, "--model", "ollama")
    assert result.exit_code == 1
    message = (
        f"cannot reach Ollama at http://127.0.0.1:{port}: start it with 'ollama serve', "
        "or use --model embedded"
    )
    assert result.stderr.splitlines() == [f"Error: {message}"]
    assert_evidence_printed(result.stdout)
    assert f"Reason: model error: {message}.\n" in result.stdout
    assert "Traceback" not in result.output


def test_ollama_unreachable_reports_once_for_a_compound_question(
    runner: CliRunner, library_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{free_port()}")
    result = ask(runner, library_db, COMPOUND, "--model", "ollama", "--json", "--always-ask-model")
    assert result.exit_code == 1
    [line] = result.stderr.splitlines()
    assert line.startswith("Error: cannot reach Ollama at ")
    payload = json.loads(result.stdout)  # stdout stays valid JSON, with the evidence
    assert [len(p["candidates"]) for p in payload["parts"]] == [1, K, K]
    assert all(p["answer"]["verified"] is False for p in payload["parts"])
    assert all(p["answer"]["outcome"] == "model_error" for p in payload["parts"])
    assert all(p["answer"]["reason"].startswith("cannot reach Ollama at ") for p in payload["parts"])


def test_ollama_model_not_pulled(
    runner: CliRunner, library_db: Path, fake_ollama: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    result = ask(runner, library_db, FINE_QUESTION, "--model", "ollama:mistral:7b")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"Error: Ollama at {fake_ollama.url} does not have model 'mistral:7b': "
        "run 'ollama pull mistral:7b', or use --model embedded"
    ]
    assert_evidence_printed(result.stdout)
    assert header(result).endswith("· model ollama:mistral:7b")


def test_ollama_timeout(
    runner: CliRunner, library_db: Path, fake_ollama: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    monkeypatch.setenv("LOCALQA_OLLAMA_TIMEOUT", "0.3")
    fake_ollama.delay = 5
    fake_ollama.reply({"source": "P1", "sentence": 1})
    result = ask(runner, library_db, FINE_QUESTION, "--model", "ollama")
    assert result.exit_code == 1
    message = (
        f"Ollama at {fake_ollama.url} did not answer within 0.3 s (model qwen2.5:1.5b): "
        "allow longer with LOCALQA_OLLAMA_TIMEOUT=<seconds>, or use a smaller model"
    )
    assert f"   No quote verified from {K} candidates. Reason: model error: {message}.\n" in result.stdout
    assert result.stderr.splitlines() == [f"Error: {message}"]
    assert_evidence_printed(result.stdout)


def test_ollama_malformed_http_reply(
    runner: CliRunner, library_db: Path, fake_ollama: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    fake_ollama.malformed = "<html>proxy error</html>"
    result = ask(runner, library_db, FINE_QUESTION, "--model", "ollama")
    assert result.exit_code == 1
    [line] = result.stderr.splitlines()
    assert line.startswith(f"Error: Ollama at {fake_ollama.url} sent a malformed reply")
    assert "OLLAMA_HOST" in line
    assert_evidence_printed(result.stdout)


@pytest.mark.parametrize(
    ("content", "reason", "unverified"),
    [
        (
            '{"source": "P1", "sentence": "The fine is 20 cents per ',
            "the model's reply is not the expected JSON",
            "The fine is 20 cents per",
        ),
        (
            "Sure! The fine is 20 cents.",
            "the model's reply is not the expected JSON",
            "Sure! The fine is 20 cents.",
        ),
        (
            json.dumps({"source": "P1", "quote": "Overdue books incur a fine of 20 cents per week."}),
            "the model's reply is not the expected JSON",
            "20 cents per week",
        ),
        (
            '{"source": "P1", "sentence": 12}',
            "the model chose sentence 12 of P1, which it was not shown",
            "25 cents",
        ),
    ],
)
def test_ollama_bad_content_is_a_refusal_with_evidence(
    runner: CliRunner,
    library_db: Path,
    fake_ollama: Any,
    monkeypatch: pytest.MonkeyPatch,
    content: str,
    reason: str,
    unverified: str,
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    fake_ollama.reply(content)
    result = ask(runner, library_db, FINE_QUESTION, "--model", "ollama")
    assert result.exit_code == 0, result.output
    assert f"   No quote verified from {K} candidates. Reason: {reason}.\n" in result.stdout
    assert "   Evidence retrieved:\n" in result.stdout
    assert shown_quotes(result.stdout) == []
    assert unverified not in result.stdout  # the model's text is not shown, not even in the reason
    assert result.stderr == ""


def test_ollama_deeply_nested_content_is_a_refusal_not_a_traceback(
    runner: CliRunner, library_db: Path, fake_ollama: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.host)
    fake_ollama.reply("[" * 5000)
    result = ask(runner, library_db, FINE_QUESTION, "--model", "ollama")
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"No quote verified from {K} candidates. Reason: the model's reply is not the expected JSON" in (
        result.stdout
    )


# --- the property, end to end ----------------------------------------------------------------------


QUESTIONS = [
    ("2026-07-15", "What is the loan limit for EQ-314?"),
    ("2026-11-14", "What is the loan limit for EQ-314?"),
    ("2026-11-14", "When does the desk accept maps for the community map exchange?"),
    ("2026-11-14", "How many days does a standard book loan last?"),
    ("2026-11-14", "Who founded the library?"),
    ("2026-11-14", FINE_QUESTION),
    ("2026-11-14", "When does the book club meet?"),
    ("2026-11-14", "What are the Saturday opening hours?"),
    ("2026-11-14", "How long can fragile equipment be borrowed?"),
    ("2026-11-14", COMPOUND),
]


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(QUESTIONS), data=st.data())
def test_no_printed_quote_is_ever_anything_but_a_substring_of_its_cited_passage(
    library_db: Path, case: tuple[str, str], data: Any
) -> None:
    as_of, question = case

    def draw(request: Any) -> str:
        text: str = data.draw(replies(len(request.passages), [u.text for u in request.units] or ["x"]))
        return text

    with serving(FakeModel("hypothesis").always(draw)):
        result = CliRunner().invoke(
            cli, ["ask", question, "--as-of", as_of, "--db", str(library_db), "--model", "fake"]
        )
    assert result.exit_code == 0, result.output
    results = search_parts(question, as_of=date.fromisoformat(as_of), k=4, db=library_db)
    check_printed_quotes(result.stdout, results)


def check_printed_quotes(out: str, results: list[PartResult]) -> None:
    """Every `"..."` line sits under a part and is a substring of the passage its citation names,
    and that passage was one of the part's candidates."""
    sections = re.split(r"^\d+\. .*$", out, flags=re.M)[1:]
    assert len(sections) == len(results)
    for section, part in zip(sections, results, strict=True):
        texts = {c.location.describe(): c.text for c in part.candidates}
        kinds = {c.location.describe(): c.location.kind for c in part.candidates}
        for quote, citation in shown_quotes(section):
            assert citation in texts, f"cited a passage that was not supplied: {citation}"
            assert quote == squash(quote) != ""
            assert quote in {squash(u) for u in sentences.units(texts[citation], kinds[citation])}
        if not part.candidates:
            assert shown_quotes(section) == []


# --- --verbose: where the time goes -----------------------------------------------------------------


def test_verbose_prints_the_ranking_the_choice_and_the_timing(
    runner: CliRunner, library_db: Path, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    inject(monkeypatch, fake_model)
    # The model overrides the scorer: it chooses the third sentence shown.
    fake_model.always(lambda request: reply(request.units[2].label, request.units[2].sentence))
    # The second part names an identifier no passage carries: retrieval abstains, no model call.
    result = ask(runner, library_db, f"{FINE_QUESTION} What is the loan limit for EQ-999?", "--verbose")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert re.fullmatch(r"Retrieval: \d+ ms for 2 part\(s\)", lines[1]), lines[1]
    [request] = fake_model.history
    scorer = "bm25+minilm" if embeddings.is_available() else "bm25"
    start = lines.index(f"   Sentences shown, ranked by the scorer ({scorer}):")
    ranked = lines[start + 1 : start + 1 + 2 * len(request.units)]
    for number, unit in enumerate(request.units, start=1):
        row, text = ranked[2 * number - 2 : 2 * number]
        assert row.startswith(
            f"     {number}. {unit.label} sentence {unit.sentence}  {unit.score:.4f} (BM25 "
        )
        demoted = f"  (demoted: {unit.demoted})" if unit.demoted else ""
        assert row.endswith(f")  {unit.location.brief()}{demoted}")
        assert text == f"        {unit.text}"
    third = request.units[2]
    assert lines[start + 1 + 2 * len(request.units)] == (
        f"   Chose {third.label} sentence {third.sentence}, ranked 3 by the scorer: overrode its first."
    )
    tokens = len(str(request.messages)) // 4  # what the fake reports
    assert any(
        re.fullmatch(rf"   \(scorer \d+ ms; model \d+ ms, prompt {tokens} tokens\)", line) for line in lines
    ), lines
    assert "   (no model call)" in lines  # the second part had no candidates
    fake_model.always(FINE_REPLY)
    quiet = ask(runner, library_db, FINE_QUESTION)
    assert "Retrieval:" not in quiet.stdout and "(model " not in quiet.stdout and "scorer" not in quiet.stdout


def test_verbose_json_adds_timing_fields(
    runner: CliRunner, library_db: Path, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    inject(monkeypatch, fake_model)
    fake_model.enqueue(FINE_REPLY, FINE_REPLY)
    payload = json.loads(ask(runner, library_db, FINE_QUESTION, "--json", "--verbose").stdout)
    assert payload["retrieval_seconds"] >= 0
    [part] = payload["parts"]
    assert set(part["timing"]) == {
        "seconds",
        "prompt_tokens",
        "cached_tokens",
        "completion_tokens",
        "prompt_seconds",
        "generation_seconds",
        "label_confidence",
        "scorer_seconds",
    }
    assert part["timing"]["scorer_seconds"] >= 0
    plain = json.loads(ask(runner, library_db, FINE_QUESTION, "--json").stdout)
    assert "retrieval_seconds" not in plain and "timing" not in plain["parts"][0]
    assert plain["parts"][0]["answer"]["selection"]["choice"] == {"label": "P1", "sentence": 1, "rank": 1}


def test_without_the_semantic_extra_ask_says_the_sentences_were_ranked_by_bm25_alone(
    runner: CliRunner, library_db: Path, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    inject(monkeypatch, fake_model)
    monkeypatch.setattr(embeddings, "is_available", lambda: False)
    fake_model.always(FINE_REPLY)
    result = ask(runner, library_db, FINE_QUESTION)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1] == (
        "(sentences ranked by BM25 alone: the semantic extra is not installed (install it with: "
        "pip install 'localqa[semantic]'))"
    )
    payload = json.loads(ask(runner, library_db, FINE_QUESTION, "--json").stdout)
    selection = payload["parts"][0]["answer"]["selection"]
    assert selection["scorer"] == "bm25" and "semantic extra is not installed" in selection["note"]
    assert all(unit["semantic"] is None for unit in selection["units"])


def test_ask_withholds_a_quote_whose_evidence_never_mentions_a_name_of_the_question(
    runner: CliRunner, library_db: Path, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Evidence coverage end to end: the fake model quotes the fines sentence, verified, for a
    question about a name no passage mentions. Fails on the code before the check (the quote was
    shown)."""
    inject(monkeypatch, fake_model)
    fake_model.enqueue(choosing(FINE_SENTENCE))
    result = ask(runner, library_db, "How much is the fine for an overdue book at Hogwarts?", "--verbose")
    assert result.exit_code == 0, result.output
    assert FINE_SENTENCE not in result.output.split("Evidence retrieved:")[0]
    reason = 'Reason: the evidence never mentions "Hogwarts".'
    assert f"No quote verified from {K} candidates. {reason}" in result.output
    assert '(evidence coverage: "Hogwarts" (name): missing' in result.output


def test_ask_verbose_prints_where_each_term_was_found(
    runner: CliRunner, library_db: Path, fake_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    question = "What is the loan limit for EQ-314?"
    [part] = search_parts(question, as_of=date(2026, 11, 14), k=4, db=library_db)
    row = part.candidates[0].text  # the EQ-314 table row: a row is quoted whole
    inject(monkeypatch, fake_model)
    fake_model.enqueue(choosing(row))
    result = ask(runner, library_db, question, "--verbose")
    assert result.exit_code == 0, result.output
    assert '   (evidence coverage: "EQ-314" (identifier): in the quote)' in result.output.splitlines()
