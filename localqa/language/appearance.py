"""Appearance: the words of a question that name how something looks, which only a document's text
can carry. localqa indexes the documents' text (and the OCR text of scanned pages), never
colours, typefaces or pictures, so a quote answers "What is the word written in the green box?"
only when its evidence writes "green" (`localqa.answers.coverage`, the "visual" term kind).

What names an appearance (`appearances`):

- a colour (`COLOURS`: "green", "grey" or "gray"), in any case ("Green box");
- a colour word (`COLOUR_WORDS`: "colour", "colored") where the question names no colour ("What
  colour badge do visitors wear?"): any colour the evidence writes carries it ("a green badge");
- a typeface (`TYPEFACES`: "italic", "bold", "underlined", "font"), carried by any of its forms.

Not an appearance, a colour word that is part of something else:

- a name: a run of two or more words written as names (`words.name_runs`: "Green Bay", "Red
  Hat", "Orange County"), or a capitalised colour after an honorific ("Mr Green");
- a compound (`_compound`): a colour hyphenated to a word that is no colour or shade ("white-box",
  "black-box", "blue-chip"; "dark-green" and "green-coloured" still name a colour);
- an idiom (`IDIOMS`: "white paper", "grey area", "red tape", "in the black");
- a word of a label the question quotes (`_QUOTED`: the "White, Non-Hispanic" category), which
  the document writes as it is.

Not here: "highlighted", which questions mostly use for "stressed" ("the risks highlighted in the
report"; "highlighted in yellow" names its colour), and picture words ("picture", "image",
"subfigure"), which point at where the answer is, as "figure" and "chart" do
(`lexicon.DOCUMENT_PARTS`): the OCR text of a picture can answer what is in it
(docs/measured.md, "Visual terms").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from localqa.language import lexicon, words

# Colour names, folded; each set is one colour's spellings.
COLOURS: tuple[frozenset[str], ...] = tuple(
    frozenset(spellings.split())
    for spellings in (
        "red",
        "green",
        "blue",
        "yellow",
        "orange",
        "purple",
        "pink",
        "brown",
        "black",
        "white",
        "grey gray",
        "violet",
        "cyan",
        "magenta",
        "turquoise",
    )
)
# Words for colour itself, folded: an appearance where the question names no colour.
COLOUR_WORDS = frozenset("colour color colours colors coloured colored colouring coloring".split())
# Typefaces, folded: each set is one typeface's forms, carried by any of them.
TYPEFACES: tuple[frozenset[str], ...] = tuple(
    frozenset(forms.split())
    for forms in (
        "italic italics italicised italicized",
        "bold bolded boldface",
        "underlined underline underlining",
        "font fonts typeface typefaces",
        "strikethrough",
    )
)
# Shades a colour is written with in a compound that still names a colour ("dark-green").
SHADES = frozenset("light dark pale bright deep".split())
# Phrases where a colour names no colour, folded: what they say is written in the text.
IDIOMS = re.compile(
    r"\b(?:white\s+papers?|gr[ae]y\s+areas?|red\s+tape|red\s+flags?|black\s+markets?|blue\s+chips?"
    r"|(?:white|blue)\s+collar|black\s+box(?:es)?|white\s+box(?:es)?|green\s+light|in\s+the\s+(?:red|black))\b",
    re.IGNORECASE,
)
# A label the question quotes, in straight or curly quotation marks.
_QUOTED = re.compile(r"\"[^\"]*\"|\u201c[^\u201d]*\u201d|(?<!\w)'[^']*'(?!\w)")
_ANY_COLOUR = frozenset().union(*COLOURS)
_HONORIFIC_BEFORE = re.compile(r"\b(?:" + "|".join(lexicon.HONORIFICS) + r")\.?\s+$", re.IGNORECASE)


@dataclass(frozen=True)
class Appearance:
    """One appearance the question names, as written, and the folded words that carry it."""

    text: str
    carriers: frozenset[str]


def appearances(text: str) -> list[Appearance]:
    """The appearances `text` names, in order, each once (the module docstring)."""
    text = _outside_names(_blanked(_blanked(text, _QUOTED), IDIOMS))
    found: list[Appearance] = []
    generic: list[Appearance] = []
    for match in words.WORD.finditer(text):
        word = match.group(0)
        folded = words.fold(word)
        if _compound(text, match.start(), match.end()):
            continue
        if folded in _ANY_COLOUR:
            if word[:1].isupper() and _HONORIFIC_BEFORE.search(text, 0, match.start()):
                continue  # "Mr Green"
            found.append(Appearance(word, next(c for c in COLOURS if folded in c)))
        elif folded in COLOUR_WORDS:
            generic.append(Appearance(word, _ANY_COLOUR | COLOUR_WORDS))
        else:
            typeface = next((t for t in TYPEFACES if folded in t), None)
            if typeface is not None:
                found.append(Appearance(word, typeface))
    if not any(a.carriers <= _ANY_COLOUR for a in found):
        found += generic[:1]  # "colour" only where no colour is named ("the quote colored in green")
    unique: dict[frozenset[str], Appearance] = {}
    for appearance in found:
        unique.setdefault(appearance.carriers, appearance)
    return list(unique.values())


def appearance_words(text: str) -> set[str]:
    """Every word of `text` that names an appearance, folded, the colour words beside a named
    colour included ("colored" of "the quote colored in green"): words no other rule need judge."""
    named = {words.fold(a.text) for a in appearances(text)}
    return named | {w for w in words.plain(text).split() if w in COLOUR_WORDS and named}


def carried(appearance: Appearance, text: str) -> bool:
    """Whether `text` writes a word that carries `appearance` (folded, a plural's ending removed:
    "greens", "Italics")."""
    said = words.plain(text).split()
    return any(w in appearance.carriers or words.singular(w) in appearance.carriers for w in said)


def _blanked(text: str, pattern: re.Pattern[str]) -> str:
    return pattern.sub(lambda m: " " * len(m.group(0)), text)


def _outside_names(text: str) -> str:
    """`text` with each run of two or more words written as names blanked ("Green Bay")."""
    for run in words.name_runs(text):
        if len(run.words) >= 2:
            text = text.replace(run.text, " " * len(run.text))
    return text


def _compound(text: str, start: int, end: int) -> bool:
    """Whether the word at `start:end` is hyphenated to a word that is no colour, shade or colour
    word ("white-box", "blue-chip"; not "dark-green", "green-coloured")."""
    before = re.search(r"([^\W_]+)-$", text[max(0, start - 40) : start])
    after = re.match(r"-([^\W_]+)", text[end:])
    partners = [m.group(1) for m in (before, after) if m]
    plain_partner = {*_ANY_COLOUR, *SHADES, *COLOUR_WORDS}
    return any(words.fold(p) not in plain_partner for p in partners)
