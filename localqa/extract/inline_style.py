"""An HTML element's inline `style` attribute read as a browser reads it, for what it hides.

A browser reads `style="display:/**/none"` as `display: none`: comments are dropped, whitespace
around names and values does not count, names are case-insensitive, a CSS escape stands for its
character (`n\\6f ne` is `none`), and of two declarations of one property the last wins unless an
earlier one is `!important`. A pattern over the attribute's text misses each of these, so hiding
is decided on the declarations read here (`declarations`), never on the text.

What hides (`hiding`), and whether a descendant can undo it:

- `display: none`, `opacity: 0` (a descendant's opacity multiplies it), `content-visibility:
  hidden`, and text clipped to nothing (`clip: rect(0 0 0 0)`, a `clip-path` inset of half the
  box or more, a circle or ellipse of radius 0, or a zero `width`, `height`, `max-width` or
  `max-height` with `overflow: hidden` or `clip`): nothing inside is drawn, whatever it says;
- `visibility: hidden` or `collapse`, and `font-size: 0`: inherited, and undone by a descendant
  that says `visibility: visible`, or gives a font size of its own that is not relative to zero
  (`16px`, `1rem`, `medium`; `2em` or `150%` of zero is zero), so only the text between is hidden.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

_COMMENT = re.compile(r"/\*.*?(?:\*/|$)", re.DOTALL)
_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{1,6})\s?|(.))", re.DOTALL)
_IMPORTANT = re.compile(r"!\s*important\s*$", re.IGNORECASE)
_ZERO = re.compile(r"^[-+]?(?:0+\.?0*|\.0+)(?:[a-z]+|%)?$")
_NUMBER = re.compile(r"^([-+]?(?:\d+\.?\d*|\.\d+))(%|[a-z]*)$")
_RELATIVE_SIZES = frozenset(
    {"em", "%", "ex", "ch", "cap", "ic", "lh", "smaller", "larger", "inherit", "unset"}
)
_LENGTHS = ("width", "height", "max-width", "max-height")


class Hides(Enum):
    ALL = "all"  # nothing inside is drawn
    INHERITED = "inherited"  # hidden down to a descendant that undoes it


@dataclass(frozen=True)
class Style:
    """An element's declarations (property -> value, lower case, comments and escapes resolved)."""

    values: dict[str, str]

    def hidings(self) -> list[tuple[Hides, str]]:
        """What this style hides, each with how the index's warning says it; [] when nothing.
        All of them: `visibility: hidden; font-size: 0` stays hidden under a child that undoes one."""
        get = self.values.get
        found = [
            (Hides.ALL, said)
            for said, holds in (
                ("display: none", get("display") == "none"),
                ("opacity: 0", _zero(get("opacity"))),
                ("content-visibility: hidden", get("content-visibility") == "hidden"),
                ("clipped to nothing", self._clipped()),
            )
            if holds
        ]
        if get("visibility") in ("hidden", "collapse"):
            found.append((Hides.INHERITED, "visibility: hidden"))
        if _zero(get("font-size")):
            found.append((Hides.INHERITED, "font-size: 0"))
        return found

    def undoes(self, hidden: str) -> bool:
        """Does this style, on a descendant, undo an inherited hiding (as `hidings` says it)?"""
        if hidden == "visibility: hidden":
            return self.values.get("visibility") == "visible"
        size = self.values.get("font-size")
        if hidden != "font-size: 0" or size is None or _zero(size):
            return False
        number = _NUMBER.match(size)
        unit = number.group(2) if number else size
        return unit not in _RELATIVE_SIZES and not size.startswith("calc(")

    def _clipped(self) -> bool:
        get = self.values.get
        clip = get("clip", "")
        if clip.startswith("rect(") and _empty_box(_args(clip[5:]), sides="trbl"):
            return True
        path = get("clip-path", "")
        if path.startswith("inset("):
            insets = _args(path[6:])
            insets = insets[: insets.index("round")] if "round" in insets else insets
            if _empty_box(insets, sides="insets"):
                return True
        if path.startswith(("circle(", "ellipse(")):
            radii = _args(path[path.index("(") + 1 :])
            radii = radii[: radii.index("at")] if "at" in radii else radii
            if radii and all(_zero(r) for r in radii):
                return True
        overflow = get("overflow", "").split()
        return bool(overflow) and overflow[0] in ("hidden", "clip") and any(_zero(get(n)) for n in _LENGTHS)


def declarations(attribute: str) -> Style:
    """The declarations of an inline style attribute, as a browser reads them (module docstring)."""
    text = _COMMENT.sub("", attribute)
    values: dict[str, str] = {}
    important: set[str] = set()
    for declaration in _split(text):
        name, colon, value = declaration.partition(":")
        if not colon:
            continue
        name = _unescape(name).strip().lower()
        value = _unescape(value).strip()
        is_important = bool(_IMPORTANT.search(value))
        value = " ".join(_IMPORTANT.sub("", value).lower().split())
        if not name or not value or (name in important and not is_important):
            continue
        values[name] = value
        if is_important:
            important.add(name)
    return Style(values)


def _split(text: str) -> list[str]:
    """Declarations split at `;` outside quotes and brackets (a `;` in `url("a;b")` is no end)."""
    parts: list[str] = []
    depth, quote, start = 0, "", 0
    for index, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "([":
            depth += 1
        elif char in ")]":
            depth = max(0, depth - 1)
        elif char == ";" and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def _unescape(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        if match.group(1):
            code = int(match.group(1), 16)
            return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"
        return "" if match.group(2) == "\n" else match.group(2)

    return _ESCAPE.sub(one, text)


def _zero(value: str | None) -> bool:
    return value is not None and bool(_ZERO.match(value))


def _args(inside: str) -> list[str]:
    return inside.rstrip(")").replace(",", " ").split()


def _empty_box(values: list[str], *, sides: str) -> bool:
    """Does a clip leave no area? `clip: rect(top, right, bottom, left)` gives edges from the
    top-left corner (nothing when bottom <= top or right <= left); an `inset()` gives 1 to 4
    distances in from the sides (nothing when the two across make 100% or more). Only what can be
    decided without the box's size: edges in one unit, insets in percent."""
    numbers = [_NUMBER.match(v) for v in values]
    if not values or any(n is None for n in numbers):
        return False
    amounts = [float(n.group(1)) for n in numbers if n is not None]
    units = {n.group(2) for n, a in zip(numbers, amounts, strict=True) if n is not None and a != 0}
    if sides == "trbl":
        if len(amounts) != 4 or len(units) > 1:
            return False
        top, right, bottom, left = amounts
        return bottom <= top or right <= left
    if units - {"%"} or len(amounts) > 4:
        return False
    top, right, bottom, left = (amounts * 4)[:4] if len(amounts) == 1 else _four(amounts)
    return top + bottom >= 100 or left + right >= 100


def _four(values: list[float]) -> tuple[float, float, float, float]:
    """CSS's 2-, 3- and 4-value shorthand as top, right, bottom, left."""
    if len(values) == 2:
        return values[0], values[1], values[0], values[1]
    if len(values) == 3:
        return values[0], values[1], values[2], values[1]
    return values[0], values[1], values[2], values[3]
