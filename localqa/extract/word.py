"""Word (.docx) extraction with python-docx: paragraphs under the heading path that the
document's heading styles and outline levels give, lists, footnotes, and table rows with their
header cells.

python-docx opens the package (its parts, relationships and styles) with a parser that resolves no
entities; the body is then walked in document order as XML, which is where python-docx's object
API stops short: its `Paragraph.text` leaves out tracked insertions and content controls, has no
footnotes, and costs a style lookup per paragraph (`benchmarks/formats.py` compares them).

- A heading is a paragraph with an outline level, its own or its style's (through `basedOn`), or a
  style named "Heading N", numbered or not; the "Title" style is the document's title, not a
  heading.
- A run of list items is one passage (each item marked `•` or with its number), joined to the
  paragraph before it when that one introduces it (ends with ":").
- A footnote or endnote is a passage in `§ <section> > Footnote N`, numbered in order of reference.
- A table of two or more columns gives one passage per data row; its header is its leading rows
  marked "repeat as header row", else its first row. Its title is the paragraph just before it
  when that one is a caption or short and unpunctuated.
- Text deleted with tracked changes, field codes, a table of contents and running headers and
  footers are not passage text. A tracked move is a deletion where it was (`w:moveFrom`: its old
  copy is left out and counted, the document now says what its `w:moveTo` copy says) and an
  insertion where it went. Text boxes are not read, shown or hidden.
- Hidden text is not indexed (one rule with the other formats, `docs/formats.md`): a run marked
  hidden (`w:vanish`, or `w:specVanish`, which Word never displays), directly or through its
  character style or its paragraph's style (with their `basedOn`), unless the run itself says
  `w:vanish w:val="false"`; the index says how many runs it left out.
- Page numbers only where the file records its pagination (`w:lastRenderedPageBreak`, which Word
  writes when it saves); otherwise passages have no page, like Markdown.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docx
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.exceptions import PackageNotFoundError
from docx.oxml import parse_xml
from lxml import etree

from localqa.extract.checks import BadFile
from localqa.extract.structured import Sections
from localqa.language.text import squash
from localqa.types import Passage

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_HEADING_NAME = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)
_CAPTION_LENGTH = 80
_SKIPPED = {
    f"{MC}Fallback",
    f"{W}txbxContent",
    f"{W}del",
    f"{W}moveFrom",  # counted where it is met: a move's old copy is a deletion (`_paragraph_text`)
    f"{W}instrText",
    f"{W}delText",
    f"{W}rPr",
    f"{W}pPr",
}


@dataclass(frozen=True)
class WordExtraction:
    passages: list[Passage]
    title: str | None
    left_out: list[str] = field(default_factory=list)  # what was hidden, for a warning


@dataclass
class _Hiding:
    """Which styles hide their text (style ids whose run properties, their own or through
    `basedOn`, say `w:vanish`), and how many hidden runs were left out."""

    styles: frozenset[str]
    runs: int = 0
    moved: int = 0  # moves' old copies (`w:moveFrom`) left out


@dataclass(frozen=True)
class _Style:
    name: str
    level: int | None  # outline level (0 = highest), None for body text
    listed: bool  # the style numbers its paragraphs


def extract_docx(path: Path, source: str) -> WordExtraction:
    """Passages of a Word document; `BadFile` when it cannot be opened."""
    try:
        document = docx.Document(str(path))
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile, etree.XMLSyntaxError) as error:
        raise BadFile(
            f"is a damaged Word document ({type(error).__name__}: {error}); re-save it and run again"
        ) from None
    hiding = _Hiding(_hiding_styles(document))
    reader = _Reader(source, _styles(document), _numbering(document), _notes(document), hiding)
    reader.walk(document.element.body)
    left_out = [f"{hiding.runs} hidden run(s) of text"] if hiding.runs else []
    if hiding.moved:
        left_out.append(f"{hiding.moved} moved-away copy(ies) of tracked moves")
    return WordExtraction(reader.out.passages, reader.title, left_out)


def _hiding_styles(document: Any) -> frozenset[str]:
    """Ids of the styles (paragraph or character) that hide their text: `w:vanish` in their run
    properties, or inherited through `basedOn` when they do not say."""
    own: dict[str, bool | None] = {}
    based: dict[str, str | None] = {}
    for style in document.styles.element.findall(f"{W}style"):
        sid = style.get(f"{W}styleId")
        if sid is not None:
            own[sid] = _vanish(style.find(f"{W}rPr"))
            based[sid] = _val(style.find(f"{W}basedOn"))
    hidden = set()
    for sid in own:
        current: str | None = sid
        seen: set[str] = set()
        while current in own and current not in seen and own[current] is None:
            seen.add(current)
            current = based[current]
        if current is not None and own.get(current):
            hidden.add(sid)
    return frozenset(hidden)


def _vanish(rpr: Any) -> bool | None:
    """What run properties say of hiding: True (`w:vanish` or `w:specVanish`), False (`w:vanish
    w:val="false"` and no `w:specVanish`), None (nothing: the style's say). `w:specVanish` is
    hidden whatever `w:vanish` says: Word never displays such a run, even with hidden text shown."""
    if rpr is None:
        return None
    said = [
        _val(rpr.find(f"{W}{tag}")) for tag in ("vanish", "specVanish") if rpr.find(f"{W}{tag}") is not None
    ]
    if not said:
        return None
    return any(value not in ("0", "false", "off") for value in said)


def _styles(document: Any) -> dict[str, _Style]:
    """Paragraph styles by id, each with the outline level it gives (its own, or inherited
    through `basedOn`) and whether it numbers its paragraphs."""
    raw: dict[str, tuple[str, int | None, bool, str | None]] = {}
    for style in document.styles.element.findall(f"{W}style"):
        sid = style.get(f"{W}styleId")
        if sid is None:
            continue
        name = _val(style.find(f"{W}name")) or sid
        ppr = style.find(f"{W}pPr")
        level = _outline(ppr)
        listed = ppr is not None and ppr.find(f"{W}numPr") is not None
        raw[sid] = (name, level, listed, _val(style.find(f"{W}basedOn")))

    def resolve(sid: str, seen: frozenset[str] = frozenset()) -> _Style:
        name, level, listed, based = raw[sid]
        named = _HEADING_NAME.match(name)
        if level is None and named:
            level = int(named.group(1)) - 1
        if based in raw and based not in seen and (level is None or not listed):
            parent = resolve(based, seen | {sid})
            level = parent.level if level is None else level
            listed = listed or parent.listed
        return _Style(name, level, listed)

    return {sid: resolve(sid) for sid in raw}


def _outline(ppr: Any) -> int | None:
    """`w:outlineLvl` 0-8 is a heading level; 9 is body text."""
    if ppr is None:
        return None
    value = _val(ppr.find(f"{W}outlineLvl"))
    return int(value) if value is not None and value.isdigit() and int(value) < 9 else None


def _val(element: Any) -> str | None:
    return None if element is None else element.get(f"{W}val")


def _numbering(document: Any) -> dict[str, dict[int, str]]:
    """numId -> {level: number format} from the numbering part ("decimal", "bullet", ...)."""
    part = document.part
    try:
        numbering = part.numbering_part.element
    except (NotImplementedError, KeyError, AttributeError):
        return {}
    abstract = {
        a.get(f"{W}abstractNumId"): {
            int(lvl.get(f"{W}ilvl", "0")): _val(lvl.find(f"{W}numFmt")) or "bullet"
            for lvl in a.findall(f"{W}lvl")
        }
        for a in numbering.findall(f"{W}abstractNum")
    }
    return {
        num.get(f"{W}numId"): abstract.get(_val(num.find(f"{W}abstractNumId")), {})
        for num in numbering.findall(f"{W}num")
    }


def _notes(document: Any) -> dict[str, Any]:
    """Footnote and endnote bodies by id ("f3", "e1"), from their parts (parsed without entities)."""
    notes: dict[str, Any] = {}
    for rel in document.part.rels.values():
        kind = {RT.FOOTNOTES: ("f", "footnote"), RT.ENDNOTES: ("e", "endnote")}.get(rel.reltype)
        if kind is None or rel.is_external:
            continue
        root = parse_xml(rel.target_part.blob)
        for note in root.findall(f"{W}{kind[1]}"):
            if note.get(f"{W}type") in (None, "normal"):
                notes[f"{kind[0]}{note.get(f'{W}id')}"] = note
    return notes


class _Reader:
    def __init__(
        self,
        source: str,
        styles: dict[str, _Style],
        numbering: dict[str, dict[int, str]],
        notes: dict[str, Any],
        hiding: _Hiding,
    ) -> None:
        self.out = Sections(source)
        self.hiding = hiding
        self.styles = styles
        self.numbering = numbering
        self.notes = notes
        self.title: str | None = None
        self.paged = False
        self._list: list[str] = []
        self._intro: str | None = None  # a paragraph ending with ":" that a list may follow
        self._counters: dict[tuple[str, int], int] = {}
        self._previous: tuple[str, bool] | None = None  # the last paragraph: text, could be a caption
        self._note_numbers: dict[str, int] = {}

    def walk(self, body: Any) -> None:
        self.paged = body.find(f".//{W}lastRenderedPageBreak") is not None
        if self.paged:
            self.out.page = 1
        self._children(body)
        self._flush()

    def _children(self, parent: Any) -> None:
        for child in parent.iterchildren():
            if child.tag == f"{W}p":
                self._paragraph(child)
            elif child.tag == f"{W}tbl":
                self._flush()
                self._table(child)
            elif child.tag == f"{W}sdt":
                if not self._is_table_of_contents(child):
                    content = child.find(f"{W}sdtContent")
                    if content is not None:
                        self._children(content)
            elif child.tag in (f"{W}customXml", f"{W}ins", f"{W}moveTo"):
                self._children(child)
            elif child.tag == f"{W}moveFrom":
                self.hiding.moved += 1

    def _is_table_of_contents(self, sdt: Any) -> bool:
        gallery = sdt.find(f"{W}sdtPr/{W}docPartObj/{W}docPartGallery")
        return gallery is not None and "contents" in (_val(gallery) or "").lower()

    def _paragraph(self, p: Any) -> None:
        text, notes, breaks = _paragraph_text(p, self.hiding)
        ppr = p.find(f"{W}pPr")
        style_id = _val(ppr.find(f"{W}pStyle")) if ppr is not None else None
        style = self.styles.get(style_id or "") or _Style("", None, False)
        if style.name.lower().startswith("toc"):
            return
        level = _outline(ppr)
        level = style.level if level is None else level
        numbered = ppr is not None and ppr.find(f"{W}numPr") is not None
        before, after = breaks
        if self.paged and before:
            self._flush()
            self.out.page = (self.out.page or 1) + before
        text = squash(text)
        self._text(text, ppr, style, level, numbered)
        for note in notes:
            self._note(note)
        if self.paged and after:
            self._flush()
            self.out.page = (self.out.page or 1) + after

    def _text(self, text: str, ppr: Any, style: _Style, level: int | None, numbered: bool) -> None:
        if not text:
            return
        if style.name.lower() == "title" and self.title is None:
            self._flush()
            self.title = text
        elif level is not None:  # a numbered heading ("1.2 Renewals") is a heading all the same
            self._flush()
            self.out.heading(level, text)
            self._previous = None
        elif numbered or style.listed:
            self._list.append(f"{self._marker(ppr)} {text}")
        else:
            self._flush()
            if text.endswith(":"):
                self._intro = text
            else:
                self.out.paragraph(text)
            self._previous = (text, style.name.lower() == "caption" or _short(text))

    def _marker(self, ppr: Any) -> str:
        numpr = ppr.find(f"{W}numPr") if ppr is not None else None
        num = _val(numpr.find(f"{W}numId")) if numpr is not None else None
        level = int(_val(numpr.find(f"{W}ilvl")) or 0) if numpr is not None else 0
        form = self.numbering.get(num or "", {}).get(level, "bullet")
        if form in ("bullet", "none") or num is None:
            return "•"
        for key in [k for k in self._counters if k[0] == num and k[1] > level]:
            del self._counters[key]  # a deeper level starts again under each item
        count = self._counters[(num, level)] = self._counters.get((num, level), 0) + 1
        return _number(count, form)

    def _flush(self) -> None:
        """End a pending list (with the paragraph that introduced it) or introduction."""
        if self._list or self._intro:
            self.out.paragraph(" ".join([*([self._intro] if self._intro else []), *self._list]))
            if self._intro and not self._list:
                self._previous = (self._intro, False)
        self._list, self._intro = [], None

    def _note(self, key: str) -> None:
        body = self.notes.get(key)
        if body is None:
            return
        number = self._note_numbers.setdefault(key, len(self._note_numbers) + 1)
        kind = "Footnote" if key.startswith("f") else "Endnote"
        text = " ".join(_paragraph_text(p, self.hiding)[0] for p in body.iter(f"{W}p"))
        self.out.paragraph(text, under=f"{kind} {number}")

    def _table(self, table: Any) -> None:
        rows: list[list[str]] = []
        header_rows = 0
        above: dict[int, str] = {}  # column -> text of the cell a vertical merge continues
        for tr in table.findall(f"{W}tr"):
            cells: list[str] = []
            for tc in tr.findall(f"{W}tc"):
                tcpr = tc.find(f"{W}tcPr")
                span = int(_val(tcpr.find(f"{W}gridSpan")) or 1) if tcpr is not None else 1
                merge = tcpr.find(f"{W}vMerge") if tcpr is not None else None
                column = len(cells)
                if merge is not None and _val(merge) in (None, "continue"):
                    text = above.get(column, "")
                else:
                    text = squash(" ".join(_paragraph_text(p, self.hiding)[0] for p in tc.iter(f"{W}p")))
                for offset in range(max(1, min(span, 64))):
                    above[column + offset] = text
                    cells.append(text)
            if tr.find(f"{W}trPr/{W}tblHeader") is not None and header_rows == len(rows):
                header_rows += 1
            rows.append(cells)
        title = self._previous[0] if self._previous and self._previous[1] else None
        self.out.table(rows, title, max(1, header_rows))
        self._previous = None


def _hidden_run(run: Any, styles: frozenset[str], by_paragraph: bool) -> bool:
    """Is the run hidden: by its own properties, else its character style, else its paragraph's?"""
    rpr = run.find(f"{W}rPr")
    own = _vanish(rpr)
    if own is not None:
        return own
    character_style = _val(rpr.find(f"{W}rStyle")) if rpr is not None else None
    return character_style in styles or by_paragraph


def _short(text: str) -> bool:
    return len(text) <= _CAPTION_LENGTH and text[-1:] not in ".,;:!?"


def _number(count: int, form: str) -> str:
    if form == "lowerLetter":
        return f"{chr(96 + (count - 1) % 26 + 1)})"
    if form == "upperLetter":
        return f"{chr(64 + (count - 1) % 26 + 1)}."
    if form in ("lowerRoman", "upperRoman"):
        roman = _roman(count)
        return f"{roman if form == 'upperRoman' else roman.lower()}."
    return f"{count}."


def _roman(number: int) -> str:
    values = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L")]
    values += [(40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
    out = ""
    for value, letters in values:
        while number >= value:
            out, number = out + letters, number - value
    return out


def _paragraph_text(p: Any, hiding: _Hiding) -> tuple[str, list[str], tuple[int, int]]:
    """A paragraph's text (tracked deletions, field codes, text boxes, the fallback copies of
    drawings and hidden runs left out, counted in `hiding`), the footnotes and endnotes it refers
    to ("f3"), and how many rendered page breaks come before its first text and after it (it
    starts on the page after the first, the paragraphs after it on the page after both)."""
    out: list[str] = []
    notes: list[str] = []
    before = after = 0
    ppr = p.find(f"{W}pPr")
    paragraph_style = _val(ppr.find(f"{W}pStyle")) if ppr is not None else None
    hidden_by_paragraph = paragraph_style in hiding.styles
    stack = [iter(p)]
    while stack:
        element = next(stack[-1], None)
        if element is None:
            stack.pop()
            continue
        tag = element.tag
        if not isinstance(tag, str) or tag in _SKIPPED:
            if tag == f"{W}moveFrom":
                hiding.moved += 1
            continue
        if tag == f"{W}r" and _hidden_run(element, hiding.styles, hidden_by_paragraph):
            hiding.runs += 1
            continue
        if tag == f"{W}t":
            out.append(element.text or "")
        elif tag in (f"{W}tab", f"{W}ptab"):
            out.append("\t")
        elif tag in (f"{W}br", f"{W}cr"):
            out.append("\n")
        elif tag == f"{W}noBreakHyphen":
            out.append("-")
        elif tag == f"{W}footnoteReference":
            notes.append(f"f{element.get(f'{W}id')}")
        elif tag == f"{W}endnoteReference":
            notes.append(f"e{element.get(f'{W}id')}")
        elif tag == f"{W}lastRenderedPageBreak":
            if "".join(out).strip():
                after += 1
            else:
                before += 1
        elif len(element):
            stack.append(iter(element))
    return "".join(out), notes, (before, after)
