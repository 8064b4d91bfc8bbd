"""PowerPoint (.pptx) extraction with python-pptx: a slide is a page, its title the heading of
everything on it; each text frame's top-level paragraph, with the indented ones under it, is a
prose passage; a table's data rows are `table` passages with their header cells; the speaker
notes are passages of their own in `§ <title> > Speaker notes`.

Shapes are read top to bottom, then left to right, groups included; pictures and charts carry no
text to read.

Hidden content is not indexed (one rule with the other formats, `docs/formats.md`): a slide hidden
in the slide show (`show="0"`, keeping its number: the slides after it are cited as the
application numbers them) and a shape hidden in the selection pane (`hidden="1"` on its
properties); the index says which slides and how many shapes it left out."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lxml import etree

from localqa.extract.checks import BadFile
from localqa.extract.structured import Sections
from localqa.language.text import squash
from localqa.types import Passage

NOTES = "Speaker notes"
_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"


@dataclass(frozen=True)
class SlidesExtraction:
    passages: list[Passage]
    title: str | None
    slides: int
    left_out: list[str] = field(default_factory=list)  # what was hidden, for a warning


def extract_pptx(path: Path, source: str) -> SlidesExtraction:
    from pptx import Presentation
    from pptx.exc import PackageNotFoundError

    try:
        presentation = Presentation(str(path))
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile, etree.XMLSyntaxError) as error:
        raise BadFile(
            f"is a damaged PowerPoint presentation ({type(error).__name__}: {error}); re-save it and "
            "run again"
        ) from None
    passages: list[Passage] = []
    first_title: str | None = None
    count = 0
    left_out: list[str] = []
    for number, slide in enumerate(presentation.slides, start=1):
        count = number
        if slide.element.get("show") in ("0", "false"):
            left_out.append(f"hidden slide {number}")
            continue
        out = Sections(source, page=number)
        shapes = list(_reading_order(slide.shapes))
        visible = [shape for shape in shapes if not _hidden(shape)]
        if len(visible) < len(shapes):
            left_out.append(f"{len(shapes) - len(visible)} hidden shape(s) of slide {number}")
        title_shape = slide.shapes.title
        title = (
            squash(title_shape.text_frame.text)
            if title_shape is not None and title_shape.has_text_frame
            else ""
        )
        if title_shape is not None and _hidden(title_shape):
            title = ""
        if title:
            out.heading(0, title)
            first_title = first_title or title
        for shape in visible:
            if title_shape is not None and shape.shape_id == title_shape.shape_id:
                continue
            if getattr(shape, "has_table", False) and shape.has_table:
                rows = [[cell.text for cell in row.cells] for row in shape.table.rows]
                out.table(rows)
            elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
                for item in _items(shape.text_frame):
                    out.paragraph(item)
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame
            for item in _items(notes) if notes is not None else []:
                out.paragraph(item, under=NOTES)
        passages += out.passages
    core_title = squash(presentation.core_properties.title or "")
    return SlidesExtraction(passages, core_title or first_title, count, left_out)


def _hidden(shape: Any) -> bool:
    """Is the shape hidden in the selection pane (`hidden` on its non-visual properties), or is a
    group it is in?"""
    for element in (shape.element, *shape.element.iterancestors(f"{_P}grpSp")):
        properties = element.find(f"./*/{_P}cNvPr")
        if properties is not None and properties.get("hidden") in ("1", "true"):
            return True
    return False


def _reading_order(shapes: Any, layouts: dict[Any, tuple[int, int]] | None = None) -> Iterator[Any]:
    """Shapes top to bottom, then left to right; a group's shapes in their own order there."""
    layouts = {} if layouts is None else layouts
    placed = sorted(shapes, key=lambda shape: _position(shape, layouts))
    for shape in placed:
        if hasattr(shape, "shapes"):  # a group
            yield from _reading_order(shape.shapes, layouts)
        else:
            yield shape


def _position(shape: Any, layouts: dict[Any, tuple[int, int]]) -> tuple[int, int]:
    """(top, left). A placeholder without a position of its own has its layout's: looked up once
    per layout placeholder (python-pptx searches the layout for it on every access)."""
    from pptx.shapes.base import BaseShape

    top, left = BaseShape.top.fget(shape), BaseShape.left.fget(shape)  # type: ignore[attr-defined]
    if (top is None or left is None) and shape.is_placeholder:
        key = (shape.part.slide_layout.part.partname, shape.placeholder_format.idx)
        if key not in layouts:
            layouts[key] = (shape.top or 0, shape.left or 0)
        return layouts[key]
    return (top or 0, left or 0)


def _items(frame: Any) -> Iterator[str]:
    """Each top-level paragraph of a text frame with the indented paragraphs under it."""
    item: list[str] = []
    for paragraph in frame.paragraphs:
        text = squash(paragraph.text)
        if not text:
            continue
        if paragraph.level == 0 and item:
            yield " ".join(item)
            item = []
        item.append(text)
    if item:
        yield " ".join(item)
