"""The web app in a real headless Chromium (Debian's chromium + chromium-driver, which `make
test` installs; nothing here downloads a browser): ask the compound sample question on the ask
page, wait for the three verified answers, and check by pixels that the EQ-314 page image shows
its table row highlighted and nothing else.

The answers come from the extractive backend: deterministic, and the test is about the page.
Set LOCALQA_SCREENSHOT=docs/ask.png to write the screenshot the README embeds.

Another chooses a document in the search page's picker and checks that only it is searched.

A further test plays the attacker of issue 19: a page served from another loopback port probes a
server run as staff with <img> tags and fetch() calls, and must observe the same outcome for a
quote that is on a page and one that is not.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pymupdf
import pytest
from fake_ollama import free_port
from highlight import mask, share_inside, stray_pixels
from PIL import Image

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
REPO = Path(__file__).resolve().parent.parent
SAMPLE_QUESTION = (
    "What is the loan limit for EQ-314, when does the desk accept maps for the community map "
    "exchange, and how many days does a standard book loan last?"
)
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1100,1400",
    "--force-device-scale-factor=1",
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
        reason="needs Debian's chromium and chromium-driver (make chromium)",
    ),
]


@pytest.fixture
def server(library_db: Path) -> Iterator[str]:
    """`localqa serve` on a free loopback port over the sample library."""
    with serving(library_db) as url:
        yield url


@contextmanager
def serving(library_db: Path, *options: str) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "localqa",
            "serve",
            "--port",
            str(port),
            "--db",
            str(library_db),
            "--pdfs",
            str(library_db.parent / "pdfs"),
            "--model",
            "extractive",
            *options,
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{url}/library", timeout=2):
                    break
            except (urllib.error.URLError, ConnectionError):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"localqa serve did not start: {process.stderr.read()!r}") from None
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    monkeypatch.setenv("SE_OFFLINE", "true")  # Selenium Manager must never fetch a browser or driver
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(tmp_path / "chromium-profile", ignore_errors=True)


def test_ask_page_in_chromium_shows_three_verified_answers_and_the_highlighted_row(
    server: str, browser: object, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.support.ui import WebDriverWait

    driver: WebDriver = browser  # type: ignore[assignment]
    driver.get(f"{server}/ask")
    driver.find_element(By.ID, "question").send_keys(SAMPLE_QUESTION)
    as_of = driver.find_element(By.NAME, "as_of")
    driver.execute_script("arguments[0].value = '2026-11-14'", as_of)
    driver.find_element(By.CSS_SELECTOR, "form.query button[type=submit]").click()

    wait = WebDriverWait(driver, 120)
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "article.part.verified")) == 3)
    wait.until(lambda d: d.find_elements(By.ID, "done"))
    parts = driver.find_elements(By.CSS_SELECTOR, "article.part")
    assert [p.get_attribute("class") for p in parts] == ["part verified"] * 3
    assert "2026-11-14" in driver.find_element(By.CSS_SELECTOR, ".answers .header").text
    assert "45 minutes" in parts[0].find_element(By.CSS_SELECTOR, "blockquote.quote").text
    # "Answering part N…" notes are hidden once the next part has arrived.
    assert not any(p.is_displayed() for p in driver.find_elements(By.CSS_SELECTOR, ".progress"))

    image = parts[0].find_element(By.CSS_SELECTOR, ".page-image img")
    wait.until(lambda d: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", image))
    driver.execute_script("arguments[0].scrollIntoView()", image)
    left, top, width, height = driver.execute_script(
        "const i = arguments[0]; return [i.clientLeft, i.clientTop, i.clientWidth, i.clientHeight];", image
    )
    shot = Image.open(io.BytesIO(image.screenshot_as_png)).convert("RGB")
    with pymupdf.open(REPO / "pdfs" / "equipment-policy-2026-11-01.pdf") as document:
        page_width = document[0].rect.width
        row = document[0].find_tables().tables[0].rows[2].bbox  # EQ-314, data row 2
        assert "EQ-314" in document[0].get_textbox(row)
    scale = width / page_width
    row_pixels = (left + row[0] * scale, top + row[1] * scale, left + row[2] * scale, top + row[3] * scale)
    buffer = io.BytesIO()
    shot.save(buffer, format="PNG")
    found = mask(buffer.getvalue())
    assert share_inside(found, row_pixels) > 0.4  # the row is highlighted
    assert stray_pixels(found, [row_pixels], margin=3) == 0  # and nothing else on the page is
    assert shot.size[1] >= height

    driver.execute_script("window.scrollTo(0, 0)")
    full_height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1100, full_height)
    target = Path(os.environ.get("LOCALQA_SCREENSHOT") or tmp_path / "ask.png")
    target.parent.mkdir(parents=True, exist_ok=True)
    assert driver.save_screenshot(str(target))
    assert Image.open(target).size[0] >= 1000


def test_a_conversation_of_three_turns_shows_the_follow_up_understood_and_highlighted_in_chromium(
    server: str, browser: object
) -> None:
    """Three turns on the ask page: the second, a follow-up ("And EQ-502?"), shows the line it was
    understood as, and its quote (the EQ-502 row) is highlighted on its page image; every earlier
    turn stays above the next."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.support.expected_conditions import staleness_of
    from selenium.webdriver.support.ui import WebDriverWait

    driver: WebDriver = browser  # type: ignore[assignment]
    wait = WebDriverWait(driver, 120)
    driver.get(f"{server}/ask")
    for turn, question in enumerate(
        ["What is the loan limit for EQ-314?", "And EQ-502?", "How many days does a standard book loan last?"]
    ):
        box = driver.find_element(By.ID, "question")
        box.clear()
        box.send_keys(question)
        driver.execute_script("arguments[0].value = '2026-11-14'", driver.find_element(By.NAME, "as_of"))
        leaving = driver.find_element(By.TAG_NAME, "html")
        driver.find_element(By.CSS_SELECTOR, "form.query button[type=submit]").click()
        # The page left still shows the last turn's "done": wait for the new page, then for it.
        wait.until(staleness_of(leaving))
        wait.until(lambda d: d.find_elements(By.ID, "done"))
        assert len(driver.find_elements(By.CSS_SELECTOR, "section.turn")) == turn
        if turn == 1:
            understood = driver.find_element(By.CSS_SELECTOR, "#understood input[name=question]")
            assert understood.get_attribute("value") == "What is the loan limit for EQ-502?"
            part = driver.find_element(By.CSS_SELECTOR, ".answers article.part.verified")
            assert "EQ-502" in part.find_element(By.CSS_SELECTOR, "blockquote.quote").text
            image = part.find_element(By.CSS_SELECTOR, ".page-image img")
            wait.until(
                lambda d, image=image: d.execute_script(
                    "return arguments[0].complete && arguments[0].naturalWidth", image
                )
            )
            driver.execute_script("arguments[0].scrollIntoView()", image)
            left, top, width, _ = driver.execute_script(
                "const i = arguments[0]; return [i.clientLeft, i.clientTop, i.clientWidth, i.clientHeight];",
                image,
            )
            with pymupdf.open(REPO / "pdfs" / "equipment-policy-2026-11-01.pdf") as document:
                page_width = document[0].rect.width
                row = document[0].find_tables().tables[0].rows[5].bbox  # EQ-502, data row 5
                assert "EQ-502" in document[0].get_textbox(row)
            scale = width / page_width
            row_pixels = (
                left + row[0] * scale,
                top + row[1] * scale,
                left + row[2] * scale,
                top + row[3] * scale,
            )
            found = mask(image.screenshot_as_png)
            assert share_inside(found, row_pixels) > 0.4
            assert stray_pixels(found, [row_pixels], margin=3) == 0
    # The third turn changed the subject: asked as it stands, no "Understood as" line for it.
    assert not driver.find_elements(By.ID, "understood")
    earlier = driver.find_elements(By.CSS_SELECTOR, "section.turn")
    assert "Understood as" in earlier[1].text and "EQ-502" in earlier[1].text
    driver.find_element(By.ID, "new-conversation").click()
    wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, "section.turn"))


# --- another web page cannot read the server ----------------------------------------------------

STAFF = "staff-procedures.pdf"
PROBES = {
    "true": "The alarm code is changed every 90 days.",  # a whole sentence on the page
    "false": "The alarm code is changed every 91 days.",
    "piece": "alarm code is changed every 90 ",  # the bit-by-bit oracle
}
ATTACKER_PAGE = """<!doctype html>
<html><body><script>
const probes = PROBES;
window.results = {};
window.pending = 3 * Object.keys(probes).length;
function record(name, how, outcome) {
  (window.results[name] = window.results[name] || {})[how] = outcome;
  window.pending -= 1;
}
for (const [name, url] of Object.entries(probes)) {
  const image = new Image();
  image.onload = () => record(name, "img", "load " + image.naturalWidth);
  image.onerror = () => record(name, "img", "error");
  image.src = url;
  fetch(url, {mode: "no-cors", credentials: "include"}).then(
    (r) => record(name, "no-cors fetch", r.type + " " + r.status),
    () => record(name, "no-cors fetch", "rejected"));
  fetch(url, {credentials: "include"}).then(
    (r) => record(name, "fetch", "status " + r.status),
    () => record(name, "fetch", "rejected"));
}
</script></body></html>
"""


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def attacker_site(folder: Path) -> Iterator[int]:
    """A plain web server on another loopback port, serving `folder`."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(folder)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()


def probe_url(base: str, quote: str) -> str:
    query = urllib.parse.urlencode({"quote": quote, "as_of": "2026-11-14"})
    return f"{base}/api/pages/{STAFF}/1.png?{query}"


def direct_status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


def test_the_ask_page_shows_a_doubted_quote_only_as_the_closest_passage_in_chromium(
    server: str, browser: object
) -> None:
    """Unsure is not an answer (issue 49): a name found only as a near spelling leaves the answer
    stage unsure, and the ask page shows `No quote verified`, the reason, and the passage under a
    label that claims nothing, in its own block, with no quote in the answer's place."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.support.ui import WebDriverWait

    driver: WebDriver = browser  # type: ignore[assignment]
    driver.get(f"{server}/ask")
    question = "How long do book loans last at the Riverrsidee library?"
    driver.find_element(By.ID, "question").send_keys(question)
    driver.execute_script("arguments[0].value = '2026-11-14'", driver.find_element(By.NAME, "as_of"))
    driver.find_element(By.CSS_SELECTOR, "form.query button[type=submit]").click()

    WebDriverWait(driver, 120).until(lambda d: d.find_elements(By.ID, "done"))
    [part] = driver.find_elements(By.CSS_SELECTOR, "article.part")
    assert part.get_attribute("class") == "part refused"
    assert part.find_elements(By.CSS_SELECTOR, "blockquote.quote") == []
    reason = part.find_element(By.CSS_SELECTOR, "p.reason").text
    assert reason.startswith("No quote verified from ") and 'never mentions "Riverrsidee"' in reason
    closest = part.find_element(By.CSS_SELECTOR, "div.closest")
    assert closest.is_displayed()
    label = closest.find_element(By.CSS_SELECTOR, ".closest-label").text
    assert label == 'Closest passage, which does not mention "Riverrsidee":'
    assert closest.find_element(By.CSS_SELECTOR, "blockquote.closest-quote").text == (
        "“Standard book loans last 21 days.”"
    )
    assert closest.find_element(By.CSS_SELECTOR, ".citation").text.startswith("— library-handbook.pdf")


def test_the_picker_narrows_a_search_to_the_document_chosen_in_chromium(server: str, browser: object) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.support.ui import Select, WebDriverWait

    driver: WebDriver = browser  # type: ignore[assignment]
    question = "What are the Saturday opening hours?"
    driver.get(f"{server}/search?" + urllib.parse.urlencode({"question": question, "as_of": "2026-11-14"}))
    everywhere = {
        w.text.split(" · ")[-1].split(",")[0] for w in driver.find_elements(By.CSS_SELECTOR, ".where")
    }
    assert {"library-handbook.pdf", "opening-hours-notice.pdf"} <= everywhere
    driver.find_element(By.CSS_SELECTOR, "details.picker summary").click()
    Select(driver.find_element(By.NAME, "doc")).select_by_value("opening-hours-notice.pdf")
    driver.find_element(By.CSS_SELECTOR, "form.query button[type=submit]").click()

    # The header found may belong to the page being left while the new one loads: look again.
    WebDriverWait(driver, 60, ignored_exceptions=[StaleElementReferenceException]).until(
        lambda d: "only in" in d.find_element(By.CSS_SELECTOR, "p.header").text
    )
    assert driver.find_element(By.CSS_SELECTOR, "p.header").text.endswith(
        "· only in opening-hours-notice.pdf"
    )
    shown = {w.text.split(" · ")[-1].split(",")[0] for w in driver.find_elements(By.CSS_SELECTOR, ".where")}
    assert shown == {"opening-hours-notice.pdf"}
    chosen = Select(driver.find_element(By.NAME, "doc")).all_selected_options
    assert [o.get_attribute("value") for o in chosen] == ["opening-hours-notice.pdf"]


def test_a_page_on_another_port_cannot_learn_whether_a_quote_is_on_a_page(
    library_db: Path, browser: object, tmp_path: Path
) -> None:
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.support.ui import WebDriverWait

    driver: WebDriver = browser  # type: ignore[assignment]
    site = tmp_path / "site"
    site.mkdir()
    Image.new("RGB", (7, 7), "white").save(site / "present.png")
    with serving(library_db, "--role", "staff") as server, attacker_site(site) as port:
        # The server does tell the quotes apart, for a client of its own origin.
        statuses = {name: direct_status(probe_url(server, quote)) for name, quote in PROBES.items()}
        assert statuses == {"true": 200, "false": 422, "piece": 422}
        # 127.0.0.1 on another port is the same site (ports do not count); localhost is another.
        for host in ("127.0.0.1", "localhost"):
            probes = {name: probe_url(server, quote) for name, quote in PROBES.items()}
            # Controls on the attacker's own origin: the page can see a difference where there is one.
            probes["control-present"] = f"http://{host}:{port}/present.png"
            probes["control-missing"] = f"http://{host}:{port}/missing.png"
            page = ATTACKER_PAGE.replace("PROBES", json.dumps(probes))
            (site / f"{host}.html").write_text(page, encoding="utf-8")
            driver.get(f"http://{host}:{port}/{host}.html")
            WebDriverWait(driver, 60).until(lambda d: d.execute_script("return window.pending === 0"))
            seen = driver.execute_script("return window.results")
            assert seen["control-present"]["img"] == "load 7" and seen["control-missing"]["img"] == "error"
            assert seen["true"] == seen["false"] == seen["piece"], (host, seen)
