"""Which cell styles of a workbook show a cell as nothing: read from its styles part with lxml,
since calamine reads values and not styles.

A cell's style (`s`, an index into `cellXfs`) shows its value as nothing when:

- its number format's section for the value is empty: `;;;` shows no number and no text, `0;-0;;@`
  no zero. A format has up to four sections (positive; negative; zero; text); with one, it is every
  number's, with two the first is for zero and above; text has its own only in the fourth, and is
  shown as it is without one. A section with conditions (`[<100]`) is not decided: it is shown;
- or its text is white on white: a font colour of white (`FFFFFF` in any alpha, the legacy palette's
  white, or a theme colour the workbook's theme makes white, without a tint) over no fill (the
  sheet's own white) or a solid white one, or a number format that colours its section `[White]`.

Conditional formats and table styles are not evaluated (a rule that colours a cell is decided by a
value at the time of display; a table style draws its own fills): on a sheet that has either, no
cell is taken for white on white (`sheets._facts_of`). Nor is a colour that is not the background's
exactly (light grey on white).
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from typing import Any

from lxml import etree

_X = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_BRACKETS = re.compile(r"\[[^\]]*\]")
_CONDITION = re.compile(r"\[\s*(?:[<>=]|<=|>=|<>)")
_WHITE_SECTION = re.compile(r"\[\s*white\s*\]", re.IGNORECASE)
_LEGACY_WHITE = frozenset({"1", "9"})  # the default palette's whites (indexed colours)
# Excel's theme colour indices name the scheme's colours with the first two pairs swapped.
_THEME_ORDER = ("lt1", "dk1", "lt2", "dk2", "accent1", "accent2", "accent3", "accent4", "accent5", "accent6")

TEXT, NUMBER, OTHER = "text", "number", "other"
SHOWS_NOTHING, WHITE_ON_WHITE = "formatted to show nothing", "white on white"


@dataclass(frozen=True)
class Blank:
    """How one cell style shows values as nothing: `white` text on white for every value, or per
    `sections` (the number format's, as written) for the values whose section is empty or, on
    white (`on_white`), coloured `[White]`."""

    white: bool
    on_white: bool
    sections: tuple[str, ...]

    def hides(self, kind: str, value: str) -> str | None:
        """Why a cell of this style and `kind` (TEXT, NUMBER, OTHER: a boolean or an error) with
        stored `value` shows nothing ("formatted to show nothing", "white on white"), or None."""
        section = _section(self.sections, kind, value)
        if section is not None and not _shown(section):
            return SHOWS_NOTHING
        if self.white or (self.on_white and section is not None and _WHITE_SECTION.search(section)):
            return WHITE_ON_WHITE
        return None


def blank_styles(
    archive: zipfile.ZipFile, styles_part: str | None, theme_part: str | None
) -> dict[str, Blank]:
    """The cell styles that show some value as nothing, by their `cellXfs` index as a cell's `s`
    writes it ("3"); {} when none does, so the sheets are read without looking at any cell's
    style."""
    if styles_part is None:
        return {}
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    root = etree.fromstring(archive.read(styles_part), parser)
    theme = _theme_whites(archive, theme_part, parser)
    custom_palette = root.find(f"{_X}colors/{_X}indexedColors") is not None
    formats = {f.get("numFmtId"): f.get("formatCode", "") for f in root.iter(f"{_X}numFmt")}
    fonts = [_white(font.find(f"{_X}color"), theme, custom_palette) for font in _list(root, "fonts", "font")]
    fills = [_white_fill(fill, theme, custom_palette) for fill in _list(root, "fills", "fill")]
    found: dict[str, Blank] = {}
    for index, xf in enumerate(_list(root, "cellXfs", "xf")):
        code = formats.get(xf.get("numFmtId", "0"), "")
        sections = tuple(_sections(code)) if code else ()
        if any(_CONDITION.search(s) for s in sections):
            sections = ()  # which section a value takes is the conditions': not decided
        font, fill = _index(xf.get("fontId")), _index(xf.get("fillId"))
        on_white = fill is None or (fill < len(fills) and fills[fill])
        white_text = font is not None and font < len(fonts) and fonts[font]
        white = bool(on_white and white_text)
        empty = any(not _shown(s) for s in sections)
        coloured = bool(on_white) and any(_WHITE_SECTION.search(s) for s in sections)
        if white or empty or coloured:
            found[str(index)] = Blank(white, bool(on_white), sections)
    return found


def _list(root: Any, holder: str, item: str) -> list[Any]:
    parent = root.find(f"{_X}{holder}")
    return [] if parent is None else parent.findall(f"{_X}{item}")


def _index(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None


def _sections(code: str) -> list[str]:
    """A number format's sections, split at `;` outside quotes, brackets and escapes."""
    sections: list[str] = []
    current: list[str] = []
    quoted = bracket = escaped = False
    for char in code:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif quoted:
            quoted = char != '"'
        elif char == '"':
            quoted = True
        elif bracket:
            bracket = char != "]"
        elif char == "[":
            bracket = True
        elif char == ";":
            sections.append("".join(current))
            current = []
            continue
        current.append(char)
    sections.append("".join(current))
    return sections[:4]


def _section(sections: tuple[str, ...], kind: str, value: str) -> str | None:
    """The section that formats a value of `kind`; None when the format has none for it (text
    without a fourth section is shown as it is)."""
    if not sections:
        return None
    if kind == TEXT:
        return sections[3] if len(sections) == 4 else None
    if kind == OTHER:  # a boolean or an error: hidden only by a format that hides every section
        return sections[0] if len(sections) == 4 and not any(_shown(s) for s in sections) else None
    try:
        number = float(value)
    except ValueError:
        return None
    if len(sections) == 1 or (len(sections) == 2 and number >= 0) or (len(sections) >= 3 and number > 0):
        return sections[0]
    if number < 0:
        return sections[1]
    return sections[2]


def _shown(section: str) -> bool:
    """Does a section display anything: something other than colours, conditions and spaces?"""
    return bool(_BRACKETS.sub("", section).strip())


def _white(color: Any, theme: frozenset[str], custom_palette: bool) -> bool:
    """Is a colour white? One with a tint (or a tint that is no number) is not decided: not white."""
    if color is None or color.get("tint", "0") not in ("0", "0.0", ""):
        return False
    rgb = color.get("rgb")
    if rgb is not None:
        return str(rgb).upper()[-6:] == "FFFFFF"
    if color.get("indexed") is not None:
        return not custom_palette and color.get("indexed") in _LEGACY_WHITE
    return color.get("theme") in theme


def _white_fill(fill: Any, theme: frozenset[str], custom_palette: bool) -> bool:
    """Is the fill the sheet's white: no pattern (none is the sheet's own background) or solid white?"""
    pattern = fill.find(f"{_X}patternFill")
    if fill.find(f"{_X}gradientFill") is not None:
        return False
    kind = pattern.get("patternType", "none") if pattern is not None else "none"
    if kind == "none":
        return True
    return (
        kind == "solid"
        and pattern is not None
        and _white(pattern.find(f"{_X}fgColor"), theme, custom_palette)
    )


def _theme_whites(archive: zipfile.ZipFile, part: str | None, parser: Any) -> frozenset[str]:
    """The theme colour indices ("0") whose colour the workbook's theme makes white."""
    if part is None:
        return frozenset()
    scheme = etree.fromstring(archive.read(part), parser).find(f".//{_A}clrScheme")
    if scheme is None:
        return frozenset()
    whites = set()
    for index, name in enumerate(_THEME_ORDER):
        entry = scheme.find(f"{_A}{name}")
        colour = None if entry is None else next(iter(entry), None)
        value = None if colour is None else (colour.get("lastClr") or colour.get("val"))
        if value is not None and value.upper() == "FFFFFF":
            whites.add(str(index))
    return frozenset(whites)
