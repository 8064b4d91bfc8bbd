"""`localqa serve`: the JSON API and the pages over the real sample index (extractive backend;
one real embedded call), the caller's visibility on every endpoint, the limits, and auth."""

from __future__ import annotations

import html
import json
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from highlight import mask, share_inside, stray_pixels, to_pixels

from localqa import library as library_module
from localqa.cli import cli
from localqa.indexing.index import refresh_index
from localqa.models.base import AnswerModel, AnswerRequest, Completion
from localqa.serve import state as serve_state
from localqa.serve.app import ServeConfig, create_app
from localqa.serve.auth import User, token_hash
from localqa.settings import ASK_K, MAX_PARTS, SEARCH_K, AnswerSettings, Bounds, Settings
from localqa.types import Caller

AS_OF = "2026-11-14"
EQ314 = "What is the loan limit for EQ-314?"
ALARM = "When is the alarm code changed?"
COMPOUND = (
    "What is the loan limit for EQ-314, when does the desk accept maps for the community map "
    "exchange, and how many days does a standard book loan last?"
)
STAFF = "staff-procedures.pdf"
EQ314_ROW = (
    "Equipment loan limits: Item ID: EQ-314; Item: Portable scanner; Loan limit: 45 minutes; "
    "Deposit: 20 dollars"
)


def client_for(db: Path, **changes: Any) -> TestClient:
    config = ServeConfig(db=db, pdfs=db.parent / "pdfs", **{"model": "extractive", **changes})
    return TestClient(create_app(config))


@pytest.fixture
def client(library_db: Path) -> Iterator[TestClient]:
    with client_for(library_db) as test_client:
        yield test_client


def cli_json(runner: CliRunner, *args: str) -> dict[str, Any]:
    result = runner.invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


# --- the JSON API speaks the CLI's shapes -----------------------------------------------------


def test_api_search_is_the_cli_search_json(client: TestClient, library_db: Path, runner: CliRunner) -> None:
    response = client.post("/api/search", json={"question": COMPOUND, "as_of": AS_OF})
    assert response.status_code == 200
    expected = cli_json(runner, "search", COMPOUND, "--as-of", AS_OF, "--db", str(library_db))
    assert response.json() == expected


def test_api_ask_is_the_cli_ask_json(client: TestClient, library_db: Path, runner: CliRunner) -> None:
    response = client.post("/api/ask", json={"question": COMPOUND, "as_of": AS_OF, "model": "extractive"})
    assert response.status_code == 200
    expected = cli_json(
        runner, "ask", COMPOUND, "--as-of", AS_OF, "--model", "extractive", "--db", str(library_db)
    )
    assert response.json() == expected
    assert [p["answer"]["verified"] for p in response.json()["parts"]] == [True, True, True]


def test_api_takes_parts_and_k(client: TestClient) -> None:
    response = client.post(
        "/api/search", json={"question": "ignored", "parts": [EQ314], "k": 1, "as_of": AS_OF}
    )
    parts = response.json()["parts"]
    assert [p["question"] for p in parts] == [EQ314]
    assert len(parts[0]["candidates"]) == 1


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        (
            {"question": EQ314, "as_of": "2026-13-01"},
            400,
            "as_of: '2026-13-01' is not a date; write it as YYYY-MM-DD",
        ),
        (
            {"question": EQ314, "as_of": "20261114"},
            400,
            "as_of: '20261114' is not a date; write it as YYYY-MM-DD",
        ),
        (
            {"question": "   "},
            400,
            "the question is blank; ask something, e.g. 'What is the loan limit for EQ-314?'",
        ),
        ({"question": EQ314, "model": "gpt-9"}, 400, None),
        ({"question": EQ314, "role": "staff"}, 400, "role: Extra inputs are not permitted"),
        ({"as_of": AS_OF}, 400, "question: Field required"),
        ({"question": EQ314, "k": 0}, 400, "k: Input should be greater than or equal to 1"),
    ],
)
def test_api_errors_are_one_line_json(
    client: TestClient, body: dict[str, Any], status: int, error: str | None
) -> None:
    response = client.post("/api/ask", json=body)
    assert response.status_code == status
    message = response.json()["error"]
    assert "\n" not in message and "Traceback" not in message
    if error is not None:
        assert message.startswith(error)
    else:
        assert message.startswith("unknown model 'gpt-9'")


def test_a_body_that_is_not_json_is_a_400(client: TestClient) -> None:
    response = client.post("/api/search", content=b"question=x", headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"].startswith("body: Invalid JSON")


# --- what the default caller may not see is nowhere ------------------------------------------


def test_the_staff_document_is_invisible_to_the_default_caller_everywhere(client: TestClient) -> None:
    seen = []
    seen.append(client.post("/api/search", json={"question": ALARM, "as_of": AS_OF}).text)
    asked = client.post("/api/ask", json={"question": ALARM, "as_of": AS_OF})
    answer = asked.json()["parts"][0]["answer"]
    assert answer["citation"] is None or answer["citation"]["source"] != STAFF
    seen.append(asked.text)
    seen.append(client.get("/api/documents", params={"as_of": AS_OF}).text)
    seen.append(client.get("/search", params={"question": ALARM, "as_of": AS_OF}).text)
    seen.append(client.get("/ask", params={"question": ALARM, "as_of": AS_OF}).text)
    seen.append(client.get("/library", params={"as_of": AS_OF}).text)
    hidden = client.get(
        f"/api/pages/{STAFF}/1.png", params={"quote": "The alarm code is changed every 90 days."}
    )
    assert hidden.status_code == 404
    seen.append(hidden.text)
    seen.append(client.get("/evaluation").text)
    for text in seen:
        assert "alarm code is changed" not in text
        assert "Staff Procedures" not in text and "cash drawer" not in text
    # The only mention of the file name is the error echoing the name the request itself gave.
    assert sum(STAFF in text for text in seen) == 1
    assert STAFF in hidden.text


def test_a_hidden_page_image_is_a_404_exactly_like_a_missing_one(client: TestClient) -> None:
    hidden = client.get(f"/api/pages/{STAFF}/1.png", params={"as_of": AS_OF})
    missing = client.get("/api/pages/no-such-file.pdf/1.png", params={"as_of": AS_OF})
    no_page = client.get("/api/pages/library-handbook.pdf/99.png", params={"as_of": AS_OF})
    assert hidden.status_code == missing.status_code == no_page.status_code == 404
    assert hidden.headers["content-type"] == missing.headers["content-type"] == "application/json"
    assert hidden.json()["error"] == missing.json()["error"].replace("no-such-file.pdf", STAFF)
    assert no_page.json()["error"].startswith("page 99 of 'library-handbook.pdf' is not in the index")


def test_staff_see_the_staff_document_with_a_token(library_db: Path) -> None:
    users = (
        User("reader", token_hash("reader-token"), Caller(role="public")),
        User("clerk", token_hash("clerk-token"), Caller(role="staff")),
    )
    with client_for(library_db, users=users) as client:
        body = {"question": ALARM, "as_of": AS_OF}
        assert client.post("/api/search", json=body).status_code == 401
        wrong = client.post("/api/search", json=body, headers={"Authorization": "Bearer guess"})
        assert wrong.status_code == 401 and "WWW-Authenticate" in wrong.headers
        public = client.post("/api/search", json=body, headers={"Authorization": "Bearer reader-token"})
        assert STAFF not in public.text
        staff = client.post("/api/search", json=body, headers={"Authorization": "Bearer clerk-token"})
        assert staff.json()["role"] == "staff"
        assert staff.json()["parts"][0]["candidates"][0]["source"] == STAFF
        # A browser signs in with HTTP Basic, the token as password.
        basic = client.get(
            f"/api/pages/{STAFF}/1.png", params={"as_of": AS_OF}, auth=("anyone", "clerk-token")
        )
        assert basic.status_code == 200 and basic.headers["content-type"] == "image/png"
        # Headers naming a role are not a way in.
        sneaky = client.post(
            "/api/search", json=body, headers={"Authorization": "Bearer reader-token", "X-Role": "staff"}
        )
        assert STAFF not in sneaky.text


# --- path traversal and size limits -----------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/api/pages/..%2Fpdfs%2Fstaff-procedures.pdf/1.png",
        "/api/pages/%2E%2E/1.png",
        "/api/pages/..%2F..%2F..%2Fetc%2Fpasswd/1.png",
        "/api/pages/..%5Clibrary-handbook.pdf/1.png",
        "/api/pages/library-handbook.pdf%00/1.png",
        "/api/pages/%2Fetc%2Fpasswd/1.png",
    ],
)
def test_source_names_cannot_traverse_paths(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert "error" in response.json()
    assert "root:" not in response.text


def test_questions_over_4_kb_are_refused(client: TestClient) -> None:
    long = "Is " + "x" * 4094  # 4097 bytes
    for endpoint in ("/api/ask", "/api/search"):
        response = client.post(endpoint, json={"question": long})
        assert response.status_code == 413
        assert response.json() == {"error": "the question is over 4 KB; ask something shorter"}
    page = client.get("/ask", params={"question": long})
    assert page.status_code == 413 and "over 4 KB" in page.text
    parts = client.post("/api/search", json={"question": "x", "parts": ["y" * 2100, "z" * 2100]})
    assert parts.status_code == 413
    exactly = client.post("/api/search", json={"question": "Is " + "x" * 4093})
    assert exactly.status_code == 200


def test_a_question_of_300_parts_is_refused_before_any_model_call(library_db: Path, fake_model: Any) -> None:
    """The issue's reproduction: GET /ask with a part repeated 300 times ran 300 model calls under
    the one model lock."""
    fake_model.always(json.dumps({"source": None, "quote": None}))
    many = "Loan period? " * 300
    refusal = f"the question has 300 parts; ask at most {MAX_PARTS} at a time"
    with client_for(library_db, model="fake") as client:
        page = client.get("/ask", params={"question": many, "as_of": AS_OF})
        assert page.status_code == 400 and f"Error: {refusal}" in page.text
        assert client.get("/search", params={"question": many}).status_code == 400
        for endpoint in ("/api/ask", "/api/search"):
            assert client.post(endpoint, json={"question": many}).json() == {"error": refusal}
            given = client.post(endpoint, json={"question": "x", "parts": ["Loan period?"] * (MAX_PARTS + 1)})
            assert given.status_code == 400 and "has 11 parts" in given.json()["error"]
        assert fake_model.history == []
        most = client.post("/api/ask", json={"question": "Loan period? " * MAX_PARTS, "as_of": AS_OF})
        assert most.status_code == 200 and len(most.json()["parts"]) == MAX_PARTS


@pytest.mark.parametrize(
    ("endpoint", "bounds"), [("/api/ask", ASK_K), ("/api/search", SEARCH_K)], ids=["ask", "search"]
)
def test_k_has_the_clis_range(client: TestClient, endpoint: str, bounds: Bounds) -> None:
    """`ask -k` and `search -k` take the same range as the API's `k` (settings)."""
    for k in (bounds.least, bounds.most):
        assert client.post(endpoint, json={"question": EQ314, "k": k}).status_code == 200
    above = client.post(endpoint, json={"question": EQ314, "k": bounds.most + 1})
    assert above.status_code == 400
    assert above.json()["error"].startswith(f"k: Input should be less than or equal to {bounds.most}")


def test_a_huge_body_is_refused_before_it_is_parsed(client: TestClient) -> None:
    response = client.post(
        "/api/search", content=b"{" + b" " * 70_000 + b"}", headers={"content-type": "application/json"}
    )
    assert response.status_code == 413


# --- page images ---------------------------------------------------------------------------------


def test_the_page_image_highlights_the_quote(client: TestClient) -> None:
    response = client.get(
        "/api/pages/equipment-policy-2026-11-01.pdf/1.png", params={"quote": EQ314_ROW, "as_of": AS_OF}
    )
    assert response.status_code == 200 and response.headers["content-type"] == "image/png"
    with pymupdf.open(Path(__file__).parent.parent / "pdfs" / "equipment-policy-2026-11-01.pdf") as document:
        row = tuple(document[0].find_tables().tables[0].rows[2].bbox)
    found = mask(response.content)
    assert share_inside(found, to_pixels(row, 110)) > 0.4
    assert stray_pixels(found, [to_pixels(row, 110)]) == 0


def test_a_quote_not_on_the_page_is_refused(client: TestClient) -> None:
    response = client.get(
        "/api/pages/library-handbook.pdf/1.png", params={"quote": "The alarm code is changed every 90 days."}
    )
    assert response.status_code == 422
    assert response.json() == {
        "error": "the quote is not a whole sentence or table row on page 1 of 'library-handbook.pdf'; "
        "nothing to highlight"
    }


# --- pages ---------------------------------------------------------------------------------------


def test_the_ask_page_streams_each_part_as_it_is_verified(client: TestClient) -> None:
    with client.stream("GET", "/ask", params={"question": COMPOUND, "as_of": AS_OF}) as response:
        chunks = list(response.iter_text())
    page = "".join(chunks)
    assert response.status_code == 200
    assert len(chunks) >= 5  # the head, three parts, the end: sent one after another
    assert chunks[0].count('class="part') == 0 and 'value="2026-11-14"' in chunks[0]
    assert page.count('class="part verified"') == 3
    assert "/api/pages/equipment-policy-2026-11-01.pdf/1.png?quote=Equipment+loan+limits" in page
    assert 'As of <strong class="as-of">2026-11-14</strong>' in page
    # The test index has no embeddings, so `auto` ran lexical; the page says which ran.
    assert '· retriever <span class="retriever">lexical</span> ·' in page


class SecondChoice(AnswerModel):
    """Chooses the scorer's second sentence: an override the page must show."""

    backend = "fake"
    name = "second"

    def complete(self, request: AnswerRequest) -> Completion:
        second = request.units[1]
        return Completion(text=json.dumps({"source": second.label, "sentence": second.sentence}))


def test_the_answer_view_shows_the_scorers_ranking_and_the_models_choice(
    library_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    question = "How many days does a standard book loan last?"
    with client_for(library_db) as client:
        extractive = html.unescape(client.get("/ask", params={"question": question, "as_of": AS_OF}).text)
    assert "<summary>How the sentence was chosen: Chose P1 sentence 1, the scorer's first.</summary>" in (
        extractive
    )
    monkeypatch.setattr(serve_state, "get_model", lambda spec=None: SecondChoice())
    with client_for(library_db) as client:
        page = html.unescape(client.get("/ask", params={"question": question, "as_of": AS_OF}).text)
        payload = client.post("/api/ask", json={"question": question, "as_of": AS_OF}).json()
    selection = payload["parts"][0]["answer"]["selection"]
    second = selection["units"][1]
    assert selection["choice"] == {"label": second["label"], "sentence": second["sentence"], "rank": 2}
    assert selection["overrode"] is True
    assert (
        f"<summary>How the sentence was chosen: Chose {second['label']} sentence {second['sentence']}, "
        "ranked 2 by the scorer: overrode its first.</summary>"
    ) in page
    listed = page[page.index('<ol class="units">') : page.index("</ol>", page.index('<ol class="units">'))]
    texts = [unit["text"] for unit in selection["units"]]
    assert [listed.index(f"<p>{text}</p>") for text in texts] == sorted(
        listed.index(f"<p>{t}</p>") for t in texts
    )
    scorer = selection["scorer"]
    assert f"Sentences shown to the model, ranked by the scorer ({scorer}):" in page
    assert (
        f'<li class="chosen"><span class="where">2. {second["label"]} sentence {second["sentence"]} · '
        in listed
    )
    assert listed.count('class="chosen"') == 1 and "· the model's choice</span>" in listed
    first = selection["units"][0]
    scores = f"{first['score']:.4f} (BM25 {first['lexical']:.2f}"
    assert f"1. {first['label']} sentence {first['sentence']} · {scores}" in listed


def test_the_search_page_shows_its_header_with_the_retriever(client: TestClient) -> None:
    page = client.get(
        "/search", params={"question": "What is the loan limit for EQ-314?", "as_of": AS_OF}
    ).text
    assert 'role public · tenant default · retriever <span class="retriever">lexical</span>' in page


def test_the_as_of_date_defaults_to_today_and_is_shown(client: TestClient) -> None:
    from datetime import date

    page = client.get("/ask").text
    assert f'value="{date.today().isoformat()}"' in page


def test_the_library_page_lists_versions_and_what_is_in_force(client: TestClient) -> None:
    documents = client.get("/api/documents", params={"as_of": AS_OF}).json()["documents"]
    by_source = {d["source"]: d for d in documents}
    assert by_source["equipment-policy-2026-11-01.pdf"]["in_force"] is True
    assert by_source["equipment-policy-2026-06-01.pdf"]["in_force"] is False  # superseded
    assert "reading-room-rules-2024.pdf" not in by_source  # retired: never retrievable
    assert STAFF not in by_source
    june = client.get("/api/documents", params={"as_of": "2026-07-01"}).json()["documents"]
    assert {d["source"]: d["in_force"] for d in june}["equipment-policy-2026-06-01.pdf"] is True


def test_document_text_and_file_names_are_escaped(tmp_path: Path) -> None:
    folder = tmp_path / "pdfs"
    folder.mkdir()
    name = "notes <b>bold.md"
    (folder / name).write_text(
        "# Rules\n\nVisitors <script>alert('x')</script> must sign the register at the desk.\n",
        encoding="utf-8",
    )
    db = tmp_path / "library.sqlite3"
    refresh_index(folder, db)
    with client_for(db) as client:
        page = client.get("/search", params={"question": "Who must sign the register?"}).text
        assert "<script>alert" not in page and "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page
        assert "<b>bold" not in page and "notes &lt;b&gt;bold.md" in page
        answered = client.get("/ask", params={"question": "Who must sign the register at the desk?"}).text
        assert "<script>alert" not in answered and "<mark>Visitors &lt;script&gt;" in answered
        assert "script-src" not in client.get("/ask").headers["content-security-policy"]  # none allowed
        assert "default-src 'none'" in client.get("/ask").headers["content-security-policy"]


def test_controls_and_bidi_overrides_in_text_and_names_are_shown_as_escapes(tmp_path: Path) -> None:
    """Autoescaping stops markup, not a right-to-left override that reverses what follows on
    screen, nor a backspace: they are shown as escapes, as on the terminal."""
    folder = tmp_path / "pdfs"
    folder.mkdir()
    name = "rules\u202efdp.md"  # reads "rules" + "pdf" reversed: a file name that lies
    (folder / name).write_text(
        "# Rules\n\nVisitors must not\b\b\b\b bring food \u202eevitceffe\u202c into the reading room.\n",
        encoding="utf-8",
    )
    db = tmp_path / "library.sqlite3"
    refresh_index(folder, db, embed=False)
    question = {"question": "May visitors bring food into the reading room?"}
    with client_for(db) as client:
        for page in (
            client.get("/search", params=question).text,
            client.get("/ask", params=question).text,
            client.get("/library").text,
        ):
            assert "\u202e" not in page and "\b" not in page
            assert "rules\\u202efdp.md" in page
        searched = client.get("/search", params=question)
        assert "must not\\x08\\x08\\x08\\x08 bring food \\u202eevitceffe\\u202c" in searched.text
        # The JSON API stays exact: JSON escapes what it must.
        api = client.post("/api/search", json=question)
        assert api.json()["parts"][0]["candidates"][0]["source"] == name


def test_a_reindex_while_serving_is_picked_up_by_the_next_request(sample_pdfs: Path, tmp_path: Path) -> None:
    db = tmp_path / "library.sqlite3"
    refresh_index(sample_pdfs, db)
    shutil.copytree(sample_pdfs, tmp_path / "served")  # the server renders from its own copy
    with TestClient(create_app(ServeConfig(db=db, pdfs=sample_pdfs, model="extractive"))) as client:
        before = client.post("/api/search", json={"question": "How long do standard book loans last?"})
        assert before.json()["parts"][0]["candidates"][0]["source"] == "library-handbook.pdf"
        (sample_pdfs / "library-handbook.pdf").unlink()
        (sample_pdfs / "library-handbook.page-4.ocr.txt").unlink()
        refresh_index(sample_pdfs, db)
        after = client.post("/api/search", json={"question": "How long do standard book loans last?"})
        assert "library-handbook.pdf" not in after.text


def test_searches_share_one_open_index_until_it_is_replaced(
    sample_pdfs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the store caches (eligible sets, statistics, vectors) lives as long as the file."""
    db = tmp_path / "library.sqlite3"
    refresh_index(sample_pdfs, db, embed=False)
    opened: list[Path] = []
    real_open = library_module.open_index

    def counting_open(path: Path) -> Any:
        opened.append(path)
        return real_open(path)

    monkeypatch.setattr(library_module, "open_index", counting_open)
    question = {"question": "How long do standard book loans last?", "as_of": AS_OF}
    with TestClient(create_app(ServeConfig(db=db, pdfs=sample_pdfs, model="extractive"))) as client:
        for _ in range(3):
            assert client.post("/api/search", json=question).status_code == 200
        assert client.post("/api/ask", json=question).status_code == 200
        assert client.get("/api/documents").status_code == 200
        assert client.get("/library").status_code == 200
        assert len(opened) == 1
        (sample_pdfs / "fines-and-fees.md").unlink()
        refresh_index(sample_pdfs, db, embed=False)
        assert client.post("/api/search", json=question).status_code == 200
        assert len(opened) == 2
        db.unlink()
        missing = client.post("/api/search", json=question)
        assert missing.status_code != 200 and "no index at" in missing.json()["error"]


# --- the model: one call at a time, constructed once --------------------------------------------


class SlowModel(AnswerModel):
    backend = "extractive"
    name = "slow"

    def __init__(self) -> None:
        self.active = 0
        self.most = 0
        self.lock = threading.Lock()

    def complete(self, request: AnswerRequest) -> Completion:
        with self.lock:
            self.active += 1
            self.most = max(self.most, self.active)
        time.sleep(0.2)
        with self.lock:
            self.active -= 1
        return Completion(text=json.dumps({"source": None, "sentence": None}))


def test_one_model_call_at_a_time_and_the_model_is_made_once(
    library_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[str] = []
    model = SlowModel()

    def get_model(spec: str | None = None) -> AnswerModel:
        made.append(str(spec))
        return model

    monkeypatch.setattr(serve_state, "get_model", get_model)
    asking = Settings(answering=AnswerSettings(always_ask_model=True))  # EQ-314's row decides otherwise
    with client_for(library_db, settings=asking) as client:
        results: list[int] = []

        failures: list[BaseException] = []

        def ask() -> None:
            try:
                results.append(client.post("/api/ask", json={"question": EQ314, "as_of": AS_OF}).status_code)
            except BaseException as error:  # shown below: a thread's exception is otherwise lost
                failures.append(error)

        threads = [threading.Thread(target=ask) for _ in range(3)]
        searches = []
        for thread in threads:
            thread.start()
        # Searches are not queued behind the model.
        started = time.monotonic()
        searches.append(client.post("/api/search", json={"question": EQ314, "as_of": AS_OF}).status_code)
        search_time = time.monotonic() - started
        for thread in threads:
            thread.join()
    assert failures == []
    assert results == [200, 200, 200] and searches == [200]
    assert model.most == 1
    assert made == ["extractive"]
    assert search_time < 0.6 * 3  # not behind all three model calls (a loose bound: shared machine)


# --- who may start it, and the evaluation page -------------------------------------------------


def test_serve_refuses_a_public_address_without_a_users_file(library_db: Path, runner: CliRunner) -> None:
    result = runner.invoke(
        cli,
        ["serve", "--host", "0.0.0.0", "--db", str(library_db), "--pdfs", str(library_db.parent / "pdfs")],
    )
    assert result.exit_code == 2
    assert "Error: --host 0.0.0.0 is not a loopback address; give --users FILE" in result.output


def test_a_users_file_stores_hashes_only(tmp_path: Path) -> None:
    from localqa.serve.auth import UsersFileError, load_users

    good = tmp_path / "users.toml"
    digest = token_hash("s3cret")
    good.write_text(
        f'[[user]]\nname = "clerk"\ntoken_sha256 = "{digest}"\nrole = "staff"\ntenant = "default"\n',
        encoding="utf-8",
    )
    [user] = load_users(good)
    assert user.caller == Caller(role="staff") and not user.operator
    plain = tmp_path / "plain.toml"
    plain.write_text('[[user]]\ntoken_sha256 = "s3cret"\nrole = "staff"\n', encoding="utf-8")
    with pytest.raises(UsersFileError, match="token_sha256 must be 64 lower-case hex digits"):
        load_users(plain)


def test_the_loopback_server_answers_only_to_its_own_names(library_db: Path) -> None:
    own = frozenset({"127.0.0.1:8000", "localhost:8000"})
    with client_for(library_db, allowed_hosts=own) as client:
        assert client.get("/library", headers={"host": "evil.example:8000"}).status_code == 421
        assert client.get("/library", headers={"host": "127.0.0.1:8000"}).status_code == 200


def test_the_evaluation_page_is_an_operator_view(library_db: Path, tmp_path: Path, runner: CliRunner) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ("before.json", "after.json"):
        saved = runner.invoke(
            cli, ["eval", "evals/library", "--db", str(library_db), "--save", str(runs / name)]
        )
        assert saved.exit_code == 0, saved.output
    with client_for(library_db) as client:  # no --runs: no evaluation page
        assert client.get("/evaluation").status_code == 404
    with client_for(library_db, runs=runs) as client:
        listing = client.get("/evaluation").text
        assert "before.json" in listing and "after.json" in listing
        report = client.get("/evaluation", params={"run": "after.json"}).text
        assert "Cases passed" in report and "Tenant/access leaks (gate)" in report
        compared = client.get("/evaluation", params={"before": "before.json", "after": "after.json"}).text
        assert "Compared with before.json" in compared
        assert client.get("/evaluation", params={"run": "../library.sqlite3"}).status_code == 422
    reader = (User("reader", token_hash("t"), Caller()),)
    with client_for(library_db, runs=runs, users=reader) as client:
        assert client.get("/evaluation", headers={"Authorization": "Bearer t"}).status_code == 404


# --- one real model call ---------------------------------------------------------------------------


@pytest.mark.embedded
def test_api_ask_with_the_embedded_model(library_db: Path) -> None:
    with client_for(library_db) as client:
        response = client.post("/api/ask", json={"question": EQ314, "as_of": AS_OF, "model": "embedded"})
    assert response.status_code == 200, response.text
    payload = response.json()
    assert payload["model"]["backend"] == "embedded"
    answer = payload["parts"][0]["answer"]
    assert answer["verified"] is True
    assert (
        "45 minutes" in answer["quote"] and answer["citation"]["source"] == "equipment-policy-2026-11-01.pdf"
    )


def test_the_answer_part_shows_a_doubted_quote_only_as_the_closest_passage(client: TestClient) -> None:
    """Issue 49: a name found only as a near spelling leaves the stage unsure, and unsure is not an
    answer: the page says `No quote verified` with the doubt as the reason and shows the quote under
    a label that claims nothing, never as a quote; the API's answer is a refusal carrying it."""
    question = "How long do book loans last at the Riverrsidee library?"
    shown = client.get("/ask", params={"question": question, "as_of": AS_OF}).text
    assert '<article class="part refused"' in shown and '<blockquote class="quote">' not in shown
    assert (
        "No quote verified from 8 candidates. Reason: the evidence never mentions &#34;Riverrsidee&#34;;"
        " closest: &#34;Riverside&#34;."
    ) in shown
    label = "Closest passage, which does not mention &#34;Riverrsidee&#34;:"
    assert f'<p class="closest-label">{label}</p>' in shown
    assert '<blockquote class="closest-quote">“Standard book loans last 21 days.”</blockquote>' in shown
    api = client.post("/api/ask", json={"question": question, "as_of": AS_OF}).json()
    [part] = api["parts"]
    answer = part["answer"]
    assert (answer["outcome"], answer["verified"], answer["quote"], answer["citation"]) == (
        "refused",
        False,
        None,
        None,
    )
    closest = answer["closest"]
    assert closest["label"] == 'Closest passage, which does not mention "Riverrsidee"'
    assert closest["quote"] == "Standard book loans last 21 days."
    assert closest["citation"]["source"] == "library-handbook.pdf"
    assert closest["doubts"] == [
        {
            "kind": "name",
            "term": "Riverrsidee",
            "note": 'the evidence never mentions "Riverrsidee"; closest: "Riverside"',
        }
    ]


def test_the_answer_part_shows_the_evidence_coverage(client: TestClient) -> None:
    """The web app's answer part says what was checked: where each term was found, or which one
    the evidence never mentions (the extractive backend always quotes its best sentence)."""
    shown = client.get("/ask", params={"question": "What is the loan limit for EQ-314?", "as_of": AS_OF}).text
    assert "Evidence coverage: &#34;EQ-314&#34; (identifier): in the quote" in shown
    # A word no eligible document writes refuses (issue 49: by lemma, so "founded" is no "found").
    refused = client.get("/ask", params={"question": "Who painted the library murals?", "as_of": AS_OF}).text
    assert "Reason: no eligible document writes &#34;painted&#34;." in refused
    api = client.post("/api/ask", json={"question": "Who painted the library murals?", "as_of": AS_OF}).json()
    [part] = api["parts"]
    assert part["answer"]["coverage"]["terms"][0]["term"] == "painted"
    assert part["answer"]["coverage"]["terms"][0]["collection"] is False
