"""HTML pages (.html, .htm), read with trafilatura: the page's main content only (navigation,
headers and footers, sidebars, scripts, styles and forms are left out), its headings as the
section path, its tables as rows with their header cells, and the page's own title as the
document title.

trafilatura reads the page from the bytes given to it: nothing it links to (scripts, images,
stylesheets, frames) is fetched, and no script runs.

Hidden content is not indexed (one rule with the other formats, `docs/formats.md`): what the
page itself keeps a browser from drawing is removed before trafilatura reads the page, and the
index says how many elements: one with the `hidden` attribute, a `<template>` (a browser never
renders its content), and one whose inline style hides it (`localqa.extract.inline_style`, read
as a browser reads it: `display:/**/none` is `display: none`). No stylesheet is evaluated, so
what a class hides through a stylesheet is read; `aria-hidden` is not hiding (it hides from a
screen reader what the screen shows, such as an icon's text).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lxml import etree

from localqa.extract.checks import BadFile
from localqa.extract.inline_style import Hides, Style, declarations
from localqa.extract.structured import Sections
from localqa.language.text import squash
from localqa.types import Passage


@dataclass(frozen=True)
class PageExtraction:
    passages: list[Passage]
    title: str | None
    left_out: list[str] = field(default_factory=list)  # what was hidden, for a warning


def extract_html(path: Path, source: str) -> PageExtraction:
    import trafilatura

    raw = path.read_bytes()
    page = _parsed(raw)
    title = _title(page)
    hidden = _remove_hidden(page) if page is not None else 0
    left_out = [f"{hidden} hidden element(s)"] if hidden else []
    try:
        xml = trafilatura.extract(
            page if page is not None else raw,
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
        return PageExtraction([], title, left_out)
    root = etree.fromstring(xml.encode("utf-8"), etree.XMLParser(resolve_entities=False, no_network=True))
    out = Sections(source)
    main = root.find("main")
    if main is not None:
        _walk(main, out)
    return PageExtraction(out.passages, title or squash(root.get("title") or "") or None, left_out)


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


def _parsed(raw: bytes) -> Any:
    """The page parsed with lxml's HTML parser (what trafilatura parses it with), or None when
    it cannot be: trafilatura is then given the bytes and says what is wrong."""
    import lxml.html

    try:
        return lxml.html.document_fromstring(raw)
    except (etree.ParserError, ValueError):
        return None


def _title(page: Any) -> str | None:
    """The page's own <title> (trafilatura's metadata prefers a heading it finds, which on a page
    with a dialog or a sidebar is not the page's)."""
    if page is None:
        return None
    return squash(page.findtext(".//title") or "") or None


def _remove_hidden(page: Any) -> int:
    """Remove from `page` what it keeps a browser from drawing (the module docstring); how many
    elements hid something (the outermost, and each hiding inside an inherited one's exception)."""
    hidden = 0
    # An element, and the inherited hidings it is under ("font-size: 0"): each until a descendant
    # undoes it, so a child of `visibility: hidden; font-size: 0` saying `visibility: visible`
    # is still at font size 0.
    stack: list[tuple[Any, frozenset[str]]] = [(page, frozenset())]
    while stack:
        element, inherited = stack.pop()
        if not isinstance(element.tag, str):
            continue  # a comment or processing instruction: trafilatura leaves them out
        written = element.get("style")  # most elements have none: nothing to read, nothing undone
        style = declarations(written) if written else None
        if style is not None and inherited:
            inherited = frozenset(h for h in inherited if not style.undoes(h))
        hidings = _hidings(element, style)
        if any(how is Hides.ALL for how, _ in hidings) and element is not page:
            hidden += not inherited
            element.drop_tree()
            continue
        own = frozenset(said for how, said in hidings if how is Hides.INHERITED)
        hidden += bool(own) and not inherited
        inherited |= own
        if inherited:
            element.text = None  # its own text is drawn under the hiding, as are its children's tails
            for child in element:
                child.tail = None
        stack.extend((child, inherited) for child in reversed(element))
    # Every style is decided now: what one hides is gone. Dropped, so trafilatura's own rules on
    # style text (it discards any element whose style names "hidden" or "display:none") do not
    # drop what a browser draws: `overflow: hidden`, a hiding a child undoes, a later `display`.
    for styled in page.xpath("//*[@style]"):
        del styled.attrib["style"]
    return hidden


def _hidings(element: Any, style: Style | None) -> list[tuple[Hides, str]]:
    if element.get("hidden") is not None:
        return [(Hides.ALL, "the hidden attribute")]
    if element.tag == "template":
        return [(Hides.ALL, "<template>")]
    return style.hidings() if style is not None else []
