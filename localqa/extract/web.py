"""HTML pages (.html, .htm), read with trafilatura: the page's main content only (navigation,
headers and footers, sidebars, scripts, styles and forms are left out), its headings as the
section path, its tables as rows with their header cells, and the page's own title as the
document title.

trafilatura reads the page from the bytes given to it: nothing it links to (scripts, images,
stylesheets, frames) is fetched, and no script runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lxml import etree

from localqa.extract.checks import BadFile
from localqa.extract.structured import Sections
from localqa.text import squash
from localqa.types import Passage


@dataclass(frozen=True)
class PageExtraction:
    passages: list[Passage]
    title: str | None


def extract_html(path: Path, source: str) -> PageExtraction:
    import trafilatura

    raw = path.read_bytes()
    try:
        xml = trafilatura.extract(
            raw,
            output_format="xml",
            include_tables=True,
            include_comments=False,
            include_images=False,
            include_links=False,
            include_formatting=False,
            with_metadata=True,
            favor_recall=True,
            deduplicate=False,
        )
    except Exception as error:  # trafilatura reports a page it cannot parse in its own ways
        raise BadFile(f"cannot be read as HTML ({type(error).__name__}: {error}); check the file") from None
    if not xml:
        return PageExtraction([], _title(raw))
    root = etree.fromstring(xml.encode("utf-8"), etree.XMLParser(resolve_entities=False, no_network=True))
    out = Sections(source)
    main = root.find("main")
    if main is not None:
        _walk(main, out)
    return PageExtraction(out.passages, _title(raw) or squash(root.get("title") or "") or None)


def _walk(parent: Any, out: Sections) -> None:
    for element in parent:
        tag = element.tag
        if tag == "head":
            level = str(element.get("rend", "h2")).lstrip("h")
            out.heading(int(level) - 1 if level.isdigit() else 1, _text(element))
        elif tag == "table":
            _table(element, out)
        elif tag == "list":
            out.paragraph(" ".join(f"• {_text(item)}" for item in element.iter("item") if _text(item)))
        elif tag in ("p", "quote", "code", "item"):
            out.paragraph(_text(element))
        elif tag in ("div", "section"):
            _walk(element, out)


def _table(table: Any, out: Sections) -> None:
    rows = [[_text(cell) for cell in row.findall("cell")] for row in table.iter("row")]
    heads = 0
    for row in table.iter("row"):
        if row.findall("cell") and all(cell.get("role") == "head" for cell in row.findall("cell")):
            heads += 1
        else:
            break
    out.table(rows, None, max(1, heads))


def _text(element: Any) -> str:
    return squash("".join(element.itertext()))


def _title(raw: bytes) -> str | None:
    """The page's own <title> (trafilatura's metadata prefers a heading it finds, which on a page
    with a dialog or a sidebar is not the page's)."""
    import lxml.html

    try:
        title = lxml.html.document_fromstring(raw).findtext(".//title")
    except (etree.ParserError, ValueError):
        return None
    return squash(title or "") or None
