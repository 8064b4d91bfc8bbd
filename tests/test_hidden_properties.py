"""The hidden-content rule as a property, per format (issue 50): documents that mix visible and
hidden spans in random ways, written as the format's own files. Nothing hidden is ever in a
passage, and every visible sentence still is.

Each sentence carries its own code (`K12X`), so a hidden one is found in any passage that holds
any of it, and a visible one must be found whole."""

from __future__ import annotations

import io
from pathlib import Path

import docx
import openpyxl
from docx.enum.style import WD_STYLE_TYPE
from docx.oxml import parse_xml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import get_column_letter
from properties import examples

from localqa.extract import extract_file

SETTINGS = settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
W_NS = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
WORDS = "harbour quay gate desk berth mooring office slipway crane pontoon".split()


def sentence(number: int) -> str:
    return f"The {WORDS[number % len(WORDS)]} code for desk K{number}X is posted at the door."


def code(number: int) -> str:
    return f"K{number}X"


def texts_of(path: Path) -> str:
    return "\n".join(p.text for p in extract_file(path, path.name, path.name).passages)


def check(text: str, visible: list[int], hidden: list[int]) -> None:
    leaked = [code(n) for n in hidden if code(n) in text]
    missing = [sentence(n) for n in visible if sentence(n) not in text]
    assert not leaked and not missing, (leaked, missing, text)


# --- Word ----------------------------------------------------------------------------------------

WORD_RUNS = {  # how a run is written: run properties, or a wrapper around it; hidden or not
    "plain": ("", "", False),
    "vanish": ("<w:vanish/>", "", True),
    "vanish on": ('<w:vanish w:val="true"/>', "", True),
    "spec vanish": ("<w:specVanish/>", "", True),
    "hidden style": ('<w:rStyle w:val="Secret"/>', "", True),
    "unhidden in a hidden style": ('<w:rStyle w:val="Secret"/><w:vanish w:val="0"/>', "", False),
    "moved away": ("", "moveFrom", True),
    "moved here": ("", "moveTo", False),
    "deleted": ("", "del", True),
    "inserted": ("", "ins", False),
}


UNHIDABLE = {"plain", "moved here", "inserted"}  # runs that may say `w:vanish w:val="false"` of themselves


def word_run(number: int, how: str, unhides_paragraph: bool) -> str:
    properties, wrapper, _ = WORD_RUNS[how]
    if unhides_paragraph and how in UNHIDABLE:
        properties += '<w:vanish w:val="false"/>'
    tag = "w:delText" if wrapper == "del" else "w:t"
    run = f'<w:r><w:rPr>{properties}</w:rPr><{tag} xml:space="preserve">{sentence(number)} </{tag}></w:r>'
    if wrapper:
        return f'<w:{wrapper} w:id="{number}" w:author="a" w:date="2026-01-01T00:00:00Z">{run}</w:{wrapper}>'
    return run


@st.composite
def word_documents(draw: st.DrawFn) -> list[tuple[bool, list[tuple[str, bool]]]]:
    """Paragraphs: whether its style hides it, and its runs (how each is written, and whether it
    says `w:vanish w:val="false"`, which shows it in a hidden paragraph)."""
    runs = st.tuples(st.sampled_from(sorted(WORD_RUNS)), st.booleans())
    return draw(
        st.lists(st.tuples(st.booleans(), st.lists(runs, min_size=1, max_size=4)), min_size=1, max_size=6)
    )


def run_hidden(how: str, in_hidden_paragraph: bool, unhides: bool) -> bool:
    if WORD_RUNS[how][2]:
        return True
    if how == "unhidden in a hidden style":
        return False
    return in_hidden_paragraph and not (unhides and how in UNHIDABLE)


@SETTINGS
@given(paragraphs=word_documents())
def test_no_hidden_word_text_is_a_passage_and_every_shown_sentence_is(
    paragraphs: list[tuple[bool, list[tuple[str, bool]]]], tmp_path: Path
) -> None:
    document = docx.Document()
    document.styles.add_style("Secret", WD_STYLE_TYPE.CHARACTER).font.hidden = True
    document.styles.add_style("Hidden body", WD_STYLE_TYPE.PARAGRAPH).font.hidden = True
    hidden_body = document.styles["Hidden body"].style_id
    visible: list[int] = []
    hidden: list[int] = []
    number = 0
    for hides_paragraph, runs in paragraphs:
        xml = ""
        for how, unhides in runs:
            number += 1
            xml += word_run(number, how, unhides)
            (hidden if run_hidden(how, hides_paragraph, unhides) else visible).append(number)
        style = f'<w:pPr><w:pStyle w:val="{hidden_body}"/></w:pPr>' if hides_paragraph else ""
        document.add_paragraph()._p.addprevious(parse_xml(f"<w:p {W_NS}>{style}{xml}</w:p>"))
    path = tmp_path / "mixed.docx"
    document.save(path)
    check(texts_of(path), visible, hidden)


# --- HTML ----------------------------------------------------------------------------------------

HTML_HIDING = {  # an element around a sentence: its opening tag and whether a browser draws it
    "plain": ("<span>", True),
    "hidden attribute": ("<span hidden>", False),
    "until found": ('<span hidden="until-found">', False),
    "template": ("<template>", False),
    "display none": ('<span style="display:none">', False),
    "display comment": ('<span style="DISPLAY:/**/none">', False),
    "display escaped": ('<span style="display: n\\6f ne">', False),
    "display important": ('<span style="display:none!important;display:inline">', False),
    "opacity": ('<span style="opacity: 0.0">', False),
    "half opacity": ('<span style="opacity: .5">', True),
    "display overridden": ('<span style="display:none;display:inline">', True),
    "overflow hidden": ('<span style="overflow:hidden">', True),
    "font size": ('<span style="font-size:0px">', False),
    "visibility": ('<span style="visibility : hidden">', False),
    "clip": ('<span style="position:absolute; clip: rect(0 0 0 0)">', False),
    "clip path": ('<span style="clip-path: inset(50%)">', False),
    "zero height": ('<span style="display:block;height:0;overflow:hidden">', False),
    "content visibility": ('<span style="content-visibility:hidden">', False),
}
# Not drawn here, though localqa does not hide them: `aria-hidden` and a class named "hidden".
# trafilatura's own boilerplate rules drop some of those wherever they are (docs/formats.md), so
# "every shown sentence is read" is not localqa's to promise for them.


@st.composite
def pages(draw: st.DrawFn) -> list[list[tuple[str, str | None]]]:
    """Paragraphs of spans: how each is hidden, and, for an inherited hiding, how a child inside
    undoes it (None: no child)."""
    undoing = st.sampled_from([None, "visibility:visible", "font-size:16px", "font-size:2em"])
    span = st.tuples(st.sampled_from(sorted(HTML_HIDING)), undoing)
    return draw(st.lists(st.lists(span, min_size=1, max_size=4), min_size=1, max_size=6))


@SETTINGS
@given(paragraphs=pages())
def test_no_hidden_html_text_is_a_passage_and_every_shown_sentence_is(
    paragraphs: list[list[tuple[str, str | None]]], tmp_path: Path
) -> None:
    body = ""
    visible: list[int] = []
    hidden: list[int] = []
    number = 0
    for spans in paragraphs:
        body += "<p>"
        for how, undo in spans:
            opening, shown = HTML_HIDING[how]
            closing = "</template>" if opening == "<template>" else "</span>"
            number += 1
            outer = number
            (visible if shown else hidden).append(outer)
            inner = ""
            if undo is not None and how in ("visibility", "font size"):  # the inherited hidings
                number += 1
                inner = f' <span style="{undo}">{sentence(number)}</span>'
                undoes = undo == ("visibility:visible" if how == "visibility" else "font-size:16px")
                (visible if undoes else hidden).append(number)
            body += f"{opening}{sentence(outer)}{inner}{closing} "
        body += "</p>"
    path = tmp_path / "mixed.html"
    page = (
        f"<html><head><title>Codes</title></head><body><main><h1>Desk codes</h1>{body}</main></body></html>"
    )
    path.write_text(page, encoding="utf-8")
    check(texts_of(path), visible, hidden)


# --- spreadsheets --------------------------------------------------------------------------------

COLUMN_HIDING = {"shown": None, "hidden": "hidden", "width 0.01": 0.01}
ROW_HIDING = {"shown": None, "hidden": "hidden", "height 0.1": 0.1}
CELL_HIDING = {
    "shown": None,
    ";;;": ";;;",
    "no text section": "0;-0;",  # three sections: text is shown as it is
    "empty text section": "0;-0;;",  # four, the text's empty: text shows nothing
    "white font": "white",
    "white on white": "white fill",
    "white font on yellow": "yellow fill",
}
HIDING_CELLS = {";;;", "empty text section", "white font", "white on white"}


@st.composite
def sheets(draw: st.DrawFn) -> tuple[list[str], list[str], list[list[str]]]:
    width = draw(st.integers(2, 5))
    columns = draw(st.lists(st.sampled_from(sorted(COLUMN_HIDING)), min_size=width, max_size=width))
    height = draw(st.integers(1, 6))
    rows = draw(st.lists(st.sampled_from(sorted(ROW_HIDING)), min_size=height, max_size=height))
    cells = st.lists(st.sampled_from(sorted(CELL_HIDING)), min_size=width, max_size=width)
    return columns, rows, draw(st.lists(cells, min_size=height, max_size=height))


@SETTINGS
@given(drawn=sheets())
def test_no_hidden_cell_is_a_passage_and_every_shown_cell_is(
    drawn: tuple[list[str], list[str], list[list[str]]], tmp_path: Path
) -> None:
    columns, rows, cells = drawn
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Codes"
    sheet.append([f"Desk {WORDS[c]}" for c in range(len(columns))])
    visible: list[int] = []
    hidden: list[int] = []
    number = 0
    for r, (row_how, row_cells) in enumerate(zip(rows, cells, strict=True), start=2):
        for c, cell_how in enumerate(row_cells):
            number += 1
            cell = sheet.cell(row=r, column=c + 1, value=sentence(number))
            said = CELL_HIDING[cell_how]
            if said in (";;;", "0;-0;", "0;-0;;"):
                cell.number_format = said
            elif said is not None:
                cell.font = Font(color="FFFFFFFF")
                if said != "white":
                    colour = "FFFFFFFF" if said == "white fill" else "FFFFFF00"
                    cell.fill = PatternFill("solid", fgColor=colour)
            shown = row_how == "shown" and columns[c] == "shown" and cell_how not in HIDING_CELLS
            (visible if shown else hidden).append(number)
        if row_how == "hidden":
            sheet.row_dimensions[r].hidden = True
        elif row_how != "shown":
            sheet.row_dimensions[r].height = ROW_HIDING[row_how]
    for c, column_how in enumerate(columns):
        letter = get_column_letter(c + 1)
        if column_how == "hidden":
            sheet.column_dimensions[letter].hidden = True
        elif column_how != "shown":
            sheet.column_dimensions[letter].width = COLUMN_HIDING[column_how]
    buffer = io.BytesIO()
    book.save(buffer)
    path = tmp_path / "mixed.xlsx"
    path.write_bytes(buffer.getvalue())
    check(texts_of(path), visible, hidden)
