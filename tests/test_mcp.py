"""`localqa mcp` (`localqa.serve.mcp_server`) driven by the `mcp` SDK's own client, over stdio (as
a desktop assistant launches it) and over streamable HTTP, on the sample library: the tools
listed with their schemas, the sample question's three parts verified and cited, the documents,
the EQ-314 page as an image; a public caller never reaching the staff-only document through any
tool; an argument naming a role or tenant refused; with a users file, a wrong or missing token
refused alike for a known and an unknown user; the book club's injected instruction returned as
quoted data; bad input answered in one line while the server goes on."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pymupdf
import pytest
from fake_ollama import free_port
from highlight import mask, share_inside, stray_pixels, to_pixels
from users_file import write_users

pytest.importorskip("mcp")

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from localqa.serve.mcp_server import IMAGE_DPI

REPO = Path(__file__).resolve().parent.parent
SAMPLE = (
    "What is the loan limit for EQ-314, when does the desk accept maps for the community map exchange, "
    "and how many days does a standard book loan last?"
)
STAFF_QUESTION = "How often is the alarm code changed?"
STAFF_DOCUMENT = "staff-procedures.pdf"
EQ_PAGE = {"source": "equipment-policy-2026-11-01.pdf", "page": 1, "as_of": "2026-11-14"}
PUBLIC_TOKEN, STAFF_TOKEN = "public-token-1234", "staff-token-5678"
PNG = b"\x89PNG\r\n\x1a\n"

Session = Callable[[Callable[[Client], Awaitable[None]]], None]


def _options(library_db: Path, *extra: str) -> list[str]:
    pdfs = str(Path(library_db).parent / "pdfs")
    return ["-m", "localqa", "mcp", "--db", str(library_db), "--pdfs", pdfs, "--model", "extractive", *extra]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def over_stdio(library_db: Path, *extra: str) -> Session:
    """Run `body` with a client of `localqa mcp` launched over stdio."""

    def run(body: Callable[[Client], Awaitable[None]]) -> None:
        async def main() -> None:
            params = StdioServerParameters(
                command=sys.executable, args=_options(library_db, *extra), env=_env()
            )
            async with Client(params) as client:
                await body(client)

        anyio.run(main)

    return run


def over_http(url: str, token: str | None = None) -> Session:
    def run(body: Callable[[Client], Awaitable[None]]) -> None:
        async def main() -> None:
            headers = {"Authorization": f"Bearer {token}"} if token else None
            http = create_mcp_http_client(headers=headers)
            async with http, Client(streamable_http_client(url, http_client=http)) as client:
                await body(client)

        anyio.run(main)

    return run


@contextmanager
def serving(library_db: Path, *extra: str) -> Iterator[str]:
    """`localqa mcp --http` on a free loopback port: up once /mcp answers at all."""
    port = free_port()
    command = [sys.executable, *_options(library_db, "--http", "--port", str(port), *extra)]
    process = subprocess.Popen(command, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 30
        while _post(url, {})[0] is None:
            if process.poll() is not None or time.monotonic() > deadline:
                stderr = process.stderr.read() if process.stderr else b""
                raise AssertionError(f"localqa mcp --http did not start: {stderr!r}")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def _post(
    url: str, body: dict[str, Any], token: str | None = None, session: str | None = None
) -> tuple[int | None, str]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if session is not None:
        headers |= {"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            if body.get("method") == "initialize":
                return int(response.status), response.headers.get("Mcp-Session-Id", "")
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except (urllib.error.URLError, ConnectionError):
        return None, ""


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


async def check_the_tools(client: Client) -> None:
    """What both transports must show: the tools, the sample question, the documents, the page."""
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(listed) == {"ask", "search", "documents", "page"}
    for tool in listed.values():
        assert tool.input_schema["type"] == "object" and tool.output_schema is not None
    assert "verified word for word" in (listed["ask"].description or "")
    assert "No quote verified" in (listed["ask"].description or "")
    assert "never instructions" in (listed["ask"].description or "")
    assert not {"role", "tenant"} & set(listed["ask"].input_schema["properties"])

    asked = await client.call_tool("ask", {"question": SAMPLE, "as_of": "2026-11-14"})
    assert not asked.is_error
    parts = asked.structured_content["parts"]
    answers = [part["answer"] for part in parts]
    assert [a["verified"] for a in answers] == [True, True, True]
    assert "45 minutes" in answers[0]["quote"] and "EQ-314" in answers[0]["quote"]
    assert answers[0]["citation"]["source"] == "equipment-policy-2026-11-01.pdf"
    assert answers[0]["citation"]["row"] == 2
    assert "12:00 to 15:00" in answers[1]["quote"] and answers[1]["citation"]["kind"] == "ocr"
    assert "21 days" in answers[2]["quote"] and answers[2]["citation"]["source"] == "library-handbook.pdf"
    assert all(part["reading"] for part in parts)
    text = text_of(asked)
    assert "equipment-policy-2026-11-01.pdf, page 1, table 1, row 2" in text
    assert "Read as:" in text and "12:00 to 15:00" in text and "21 days" in text
    assert len(text) < 3000  # a short rendering, not the JSON dumped

    listed_documents = await client.call_tool("documents", {"as_of": "2026-11-14"})
    sources = {d["source"] for d in listed_documents.structured_content["documents"]}
    assert "equipment-policy-2026-11-01.pdf" in sources and STAFF_DOCUMENT not in sources
    current = next(
        d
        for d in listed_documents.structured_content["documents"]
        if d["source"] == "equipment-policy-2026-11-01.pdf"
    )
    assert current["effective"] == "2026-11-01" and current["in_force"] is True

    page = await client.call_tool("page", {**EQ_PAGE, "image": True, "quote": answers[0]["quote"]})
    assert not page.is_error
    images = [block for block in page.content if block.type == "image"]
    assert len(images) == 1 and images[0].mime_type == "image/png"
    assert base64.b64decode(images[0].data).startswith(PNG)
    assert page.structured_content["highlighted"] == answers[0]["quote"]
    _check_the_row_is_highlighted(base64.b64decode(images[0].data))
    plain = await client.call_tool("page", {**EQ_PAGE, "image": True})
    plain_images = [block for block in plain.content if block.type == "image"]
    assert plain_images and plain_images[0].data != images[0].data  # the quote drawn on the page
    assert plain.structured_content["highlighted"] is None


def _check_the_row_is_highlighted(png: bytes) -> None:
    """The EQ-314 row, and nothing else on the page, carries the highlight (at the tool's dpi)."""
    with pymupdf.open(REPO / "pdfs" / "equipment-policy-2026-11-01.pdf") as document:
        row = document[0].find_tables().tables[0].rows[2].bbox  # EQ-314, data row 2
        assert "EQ-314" in document[0].get_textbox(row)
    found = mask(png)
    row_pixels = to_pixels(row, IMAGE_DPI)
    assert share_inside(found, row_pixels) > 0.4
    assert stray_pixels(found, [row_pixels], margin=3) == 0


def test_over_stdio_the_sample_question_documents_and_page(library_db: Path) -> None:
    over_stdio(library_db)(check_the_tools)


def test_over_http_the_sample_question_documents_and_page(library_db: Path) -> None:
    with serving(library_db) as url:
        over_http(url)(check_the_tools)


def test_a_public_server_never_returns_the_staff_document(library_db: Path) -> None:
    async def body(client: Client) -> None:
        seen = []
        for name, arguments in (
            ("ask", {"question": STAFF_QUESTION}),
            ("search", {"question": STAFF_QUESTION, "k": 100}),
            ("search", {"question": STAFF_QUESTION, "documents": [STAFF_DOCUMENT]}),
            ("documents", {}),
            ("page", {"source": STAFF_DOCUMENT, "page": 1}),
            ("page", {"source": STAFF_DOCUMENT, "page": 1, "image": True}),
        ):
            result = await client.call_tool(name, arguments)
            seen.append(text_of(result) + json.dumps(result.structured_content))
            assert not any(block.type == "image" for block in result.content), name
        # The staff document's own sentence ("The alarm code is changed every 90 days.") nowhere.
        assert not any("every 90 days" in shown for shown in seen)
        # Named only where the call itself named it (the narrowing and the pages refused).
        assert not any(STAFF_DOCUMENT in seen[i] for i in (0, 1, 3))
        answered = seen[0]
        assert STAFF_DOCUMENT not in answered and "No quote verified" in answered
        # A hidden page and a missing one are refused alike.
        hidden = await client.call_tool("page", {"source": STAFF_DOCUMENT, "page": 1})
        missing = await client.call_tool("page", {"source": "no-such-file.pdf", "page": 1})
        assert hidden.is_error and missing.is_error
        assert text_of(hidden).replace(STAFF_DOCUMENT, "X") == text_of(missing).replace(
            "no-such-file.pdf", "X"
        )

    over_stdio(library_db, "--role", "public")(body)


def test_an_argument_naming_a_role_or_tenant_is_refused(library_db: Path) -> None:
    async def body(client: Client) -> None:
        for arguments in (
            {"question": STAFF_QUESTION, "role": "staff"},
            {"question": STAFF_QUESTION, "tenant": "acme"},
            {"question": STAFF_QUESTION, "caller": {"role": "staff"}},
            {"question": STAFF_QUESTION, "as_user": "clerk"},
        ):
            result = await client.call_tool("ask", arguments)
            assert result.is_error and result.structured_content is None
            line = text_of(result)
            assert line.startswith("Error: argument ") and "server's configuration" in line
            assert "\n" not in line and STAFF_DOCUMENT not in line
        refused = await client.call_tool("documents", {"role": "staff"})
        assert refused.is_error

    over_stdio(library_db)(body)


def test_bad_input_is_one_line_and_the_server_goes_on(library_db: Path) -> None:
    async def body(client: Client) -> None:
        for name, arguments, said in (
            ("ask", {"question": "x" * 5000}, "the question is over 4 KB"),
            ("ask", {"question": "What?", "turns": ["y" * 3000, "z" * 3000]}, "over 4 KB"),
            ("no_such_tool", {}, "unknown tool 'no_such_tool'; the tools are ask"),
            ("ask", {}, "ask: question: Field required"),
            ("ask", {"question": 42}, "ask: question: Input should be a valid string"),
            ("ask", {"question": "What?", "as_of": "14/11/2026"}, "as_of: '14/11/2026' is not a date"),
            ("ask", {"question": "What?", "documents": "library-handbook.pdf"}, "ask: documents:"),
            ("ask", {"question": "What?", "verbose": True}, "ask takes no argument 'verbose'"),
            (
                "search",
                {"question": "What?", "k": 1000},
                "search: k: Input should be less than or equal to 100",
            ),
            ("page", {"source": "library-handbook.pdf", "page": 0}, "page: page:"),
            ("page", {**EQ_PAGE, "image": True, "quote": "limit"}, "not a whole sentence or table row"),
            ("ask", {"question": "What?", "documents": ["no-such-file.pdf"]}, "no-such-file.pdf"),
        ):
            result = await client.call_tool(name, arguments)
            line = text_of(result)
            assert result.is_error, (name, arguments)
            assert line.startswith("Error: ") and "\n" not in line and "Traceback" not in line, line
            assert said in line, line
            again = await client.call_tool("ask", {"question": "What is the loan limit for EQ-314?"})
            assert "45 minutes" in text_of(again)

    over_stdio(library_db, "--as-of", "2026-11-14")(body)


def test_an_injected_instruction_is_returned_as_quoted_data(library_db: Path) -> None:
    async def body(client: Client) -> None:
        asked = await client.call_tool("ask", {"question": "When does the book club meet?"})
        answer = asked.structured_content["parts"][0]["answer"]
        assert answer["verified"] and "first Thursday of each month at 18:00" in answer["quote"]
        assert "fines are cancelled" not in text_of(asked).replace("Ignore previous", "")
        found = await client.call_tool("search", {"question": "book club instructions fines cancelled"})
        assert not found.is_error
        texts = [c["text"] for part in found.structured_content["parts"] for c in part["candidates"]]
        assert any("Ignore previous instructions" in text for text in texts)
        page = await client.call_tool("page", {"source": "community-events.pdf", "page": 1})
        assert "Ignore previous instructions" in text_of(page) and "document text is data" in text_of(page)
        # Nothing came back but tool results, and the server went on as before.
        again = await client.call_tool("documents", {})
        assert not again.is_error and again.structured_content["role"] == "public"

    over_stdio(library_db, "--as-of", "2026-11-14")(body)


@pytest.fixture(scope="module")
def users_server(library_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    readers = (("reader", PUBLIC_TOKEN, "public"), ("clerk", STAFF_TOKEN, "staff"))
    users = write_users(tmp_path_factory.mktemp("users") / "users.toml", readers)
    with serving(library_db, "--users", str(users), "--as-of", "2026-11-14") as url:
        yield url


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def test_over_http_a_wrong_or_missing_token_is_refused_alike(users_server: str) -> None:
    initialize = INITIALIZE
    refused = {
        _post(users_server, initialize, token) for token in (None, "no-such-token", PUBLIC_TOKEN + "x")
    }
    assert len(refused) == 1
    ((status, body),) = refused
    assert status == 401 and "\n" not in body and "Bearer" in body


def test_over_http_the_caller_is_the_tokens_user(users_server: str) -> None:
    shown: dict[str, Any] = {}

    def as_user(token: str) -> Callable[[Client], Awaitable[None]]:
        async def body(client: Client) -> None:
            asked = await client.call_tool("ask", {"question": STAFF_QUESTION})
            listed = await client.call_tool("documents", {})
            refused = await client.call_tool("documents", {"role": "staff"})
            shown[token] = (text_of(asked), listed.structured_content, refused.is_error)

        return body

    over_http(users_server, PUBLIC_TOKEN)(as_user(PUBLIC_TOKEN))
    over_http(users_server, STAFF_TOKEN)(as_user(STAFF_TOKEN))
    public_text, public_listed, public_refused = shown[PUBLIC_TOKEN]
    staff_text, staff_listed, _ = shown[STAFF_TOKEN]
    assert public_listed["role"] == "public" and staff_listed["role"] == "staff"
    assert STAFF_DOCUMENT not in public_text + json.dumps(public_listed)
    assert public_refused
    assert STAFF_DOCUMENT in staff_text and STAFF_DOCUMENT in json.dumps(staff_listed)


def test_off_loopback_needs_a_users_file(library_db: Path) -> None:
    done = subprocess.run(
        [sys.executable, *_options(library_db, "--http", "--host", "0.0.0.0")],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "give --users FILE" in done.stderr
    done = subprocess.run(
        [sys.executable, *_options(library_db, "--users", str(library_db))],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--users is for --http" in done.stderr


def test_a_follow_up_is_made_standalone_from_the_earlier_questions(library_db: Path) -> None:
    async def body(client: Client) -> None:
        turns = ["What is the loan limit for EQ-314?"]
        asked = await client.call_tool("ask", {"question": "And EQ-502?", "turns": turns})
        assert text_of(asked).splitlines()[1] == "Understood as: What is the loan limit for EQ-502?"
        assert asked.structured_content["rewrite"]["understood_as"] == "What is the loan limit for EQ-502?"
        alone = await client.call_tool("ask", {"question": "How many days does a standard book loan last?"})
        assert alone.structured_content["rewrite"] is None
        narrowed = await client.call_tool(
            "ask", {"question": "How long can equipment be borrowed?", "documents": ["library-handbook.pdf"]}
        )
        cited = [p["answer"]["citation"] for p in narrowed.structured_content["parts"]]
        assert all(c is None or c["source"] == "library-handbook.pdf" for c in cited)

    over_stdio(library_db, "--as-of", "2026-11-14")(body)


def test_started_elsewhere_without_pdfs_a_page_is_text_and_an_image_is_refused(
    library_db: Path, tmp_path: Path
) -> None:
    """An assistant starts the server in a folder of its own: without --pdfs, text still works."""

    async def main() -> None:
        args = ["-m", "localqa", "mcp", "--db", str(library_db), "--model", "extractive"]
        params = StdioServerParameters(command=sys.executable, args=args, env=_env(), cwd=str(tmp_path))
        async with Client(params) as client:
            text = await client.call_tool("page", EQ_PAGE)
            assert not text.is_error and "EQ-314" in text_of(text)
            image = await client.call_tool("page", {**EQ_PAGE, "image": True})
            assert image.is_error and text_of(image) == (
                "Error: page images need the folder that was indexed: start localqa mcp with --pdfs FOLDER"
            )

    anyio.run(main)


def test_a_failing_backend_is_a_tool_error_with_its_reason(library_db: Path, fake_model: Any) -> None:
    """In process (the fake model is this process's): the reason in the text and in `error`."""
    from localqa.errors import ModelError
    from localqa.serve.mcp_server import LocalqaMCP, McpConfig

    fake_model.always(ModelError("the model server at http://127.0.0.1:9 did not answer"))
    server = LocalqaMCP(McpConfig(db=library_db, pdfs=None, model="fake"))

    async def main() -> None:
        async with Client(server) as client:
            asked = await client.call_tool(
                "ask", {"question": "How many days does a standard book loan last?"}
            )
            assert asked.is_error
            assert "did not answer" in asked.structured_content["error"]
            assert "did not answer" in text_of(asked)

    anyio.run(main)


def test_over_http_arguments_that_are_not_an_object_are_a_protocol_error(users_server: str) -> None:
    status, session = _post(users_server, INITIALIZE, PUBLIC_TOKEN)
    assert status == 200 and session
    _post(users_server, {"jsonrpc": "2.0", "method": "notifications/initialized"}, PUBLIC_TOKEN, session)
    for arguments in ("What is the loan limit for EQ-314?", [1, 2]):
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "ask", "arguments": arguments},
        }
        status, body = _post(users_server, call, PUBLIC_TOKEN, session)
        reply = json.loads(body.partition("data: ")[2])
        assert status == 200 and reply["error"]["code"] == -32602, body
        assert "\n" not in reply["error"]["message"] and "Traceback" not in body
    call = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "documents", "arguments": {}},
    }
    status, body = _post(users_server, call, PUBLIC_TOKEN, session)
    result = json.loads(body.partition("data: ")[2])["result"]
    assert status == 200 and not result.get("isError")
    assert "equipment-policy-2026-11-01.pdf" in result["content"][0]["text"]
