"""`localqa mcp` and `/v1` overhead: an MCP `ask` through the SDK's own client, over stdio and over
streamable HTTP, and a `localqa serve` `/v1/chat/completions` completion, against the same
question through the library in this process.

    python -m benchmarks.mcp [--model extractive] [--repeat 5]

Indexes the sample library (pdfs/) into a temporary folder, starts `localqa mcp` over stdio and
`localqa mcp --http` and `localqa serve` on free loopback ports, warms each (and the library here) with one
question, then asks the sample question `--repeat` times through each, the three taking turns.
Prints the median seconds of each and their ratio to the library's. Goal (issue 51): at most
1.1x. Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from datetime import date
from pathlib import Path
from typing import Any

from benchmarks.common import REPO, child_env, load

AS_OF = date(2026, 11, 14)
SAMPLE = (
    "What is the loan limit for EQ-314, when does the desk accept maps for the community map exchange, "
    "and how many days does a standard book loan last?"
)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _up(url: str) -> bool:
    request = urllib.request.Request(url, data=b"{}", headers={"Content-Type": "application/json"})
    try:
        urllib.request.urlopen(request, timeout=2).close()
    except urllib.error.HTTPError:
        return True
    except (urllib.error.URLError, ConnectionError):
        return False
    return True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="extractive")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    try:
        import anyio
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters
    except ImportError:
        print("skipped: localqa[mcp] is not installed (pip install 'localqa[mcp]')")
        return
    from localqa.indexing.index import refresh_index
    from localqa.library import Library
    from localqa.models import get_model

    with tempfile.TemporaryDirectory(prefix="localqa-mcp-bench-") as scratch:
        folder = Path(scratch) / "pdfs"
        shutil.copytree(REPO / "pdfs", folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
        db = Path(scratch) / "library.sqlite3"
        refresh_index(folder, db, embed=False)
        options = ["-m", "localqa", "mcp", "--db", str(db), "--pdfs", str(folder), "--model", args.model]
        port = _free_port()
        http = subprocess.Popen(
            [sys.executable, *options, "--http", "--port", str(port)],
            env=child_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}/mcp"
        web_port = _free_port()
        web = subprocess.Popen(
            [sys.executable, "-m", "localqa", "serve", "--db", str(db), "--pdfs", str(folder), "--model",
             args.model, "--port", str(web_port)],
            env=child_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        chat = f"http://127.0.0.1:{web_port}/v1/chat/completions"
        times: dict[str, list[float]] = {"library": [], "stdio": [], "http": [], "/v1": []}
        try:
            while not (_up(url) and _up(chat)):
                time.sleep(0.1)

            def completion() -> None:
                body = json.dumps({"model": "localqa", "messages": [{"role": "user", "content": SAMPLE}]})
                request = urllib.request.Request(
                    chat, data=body.encode(), headers={"Content-Type": "application/json"}
                )
                with urllib.request.urlopen(request, timeout=120) as response:
                    assert len(json.loads(response.read())["localqa"]["parts"]) == 3

            model = get_model(args.model)  # made once, as the server makes its own
            with Library(db) as library:

                def direct() -> None:
                    asked = library.answer(SAMPLE, as_of=AS_OF, model=model)
                    assert all(p.answer.verified for p in asked.parts)

                async def run() -> None:
                    params = StdioServerParameters(command=sys.executable, args=options, env=child_env())
                    async with Client(params) as stdio, Client(url) as over_http:
                        clients: dict[str, Any] = {"stdio": stdio, "http": over_http}
                        for client in clients.values():
                            await client.call_tool("ask", {"question": SAMPLE, "as_of": AS_OF.isoformat()})
                        direct()  # warm: the model loaded, the index read
                        completion()
                        for _ in range(args.repeat):
                            started = time.perf_counter()
                            direct()
                            times["library"].append(time.perf_counter() - started)
                            for name, client in clients.items():
                                started = time.perf_counter()
                                result = await client.call_tool(
                                    "ask", {"question": SAMPLE, "as_of": AS_OF.isoformat()}
                                )
                                times[name].append(time.perf_counter() - started)
                                assert not result.is_error and len(result.structured_content["parts"]) == 3
                            started = time.perf_counter()
                            completion()
                            times["/v1"].append(time.perf_counter() - started)

                anyio.run(run)
        finally:
            for process in (http, web):
                process.terminate()
                process.wait(timeout=10)

    base = statistics.median(times["library"])
    print(f"model {args.model}, the sample question (3 parts), median of {args.repeat}; {load()}")
    for name, measured in times.items():
        median = statistics.median(measured)
        print(f"  {name:<8} {median * 1000:8.1f} ms  {median / base:5.2f}x the library")


if __name__ == "__main__":
    sys.exit(main())
