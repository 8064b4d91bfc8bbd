"""The typed records that flow between stages: documents, passages, candidates, answers."""

from __future__ import annotations

from datetime import date
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from localqa.formats import SECTION_NUMBERED, SPREADSHEETS, format_of, is_spreadsheet


class Kind(StrEnum):
    PROSE = "prose"
    TABLE = "table"
    OCR = "ocr"


class Status(StrEnum):
    CURRENT = "current"
    RETIRED = "retired"
    DRAFT = "draft"


ACCESS_LABELS = ("public", "staff")
ROLES = ACCESS_LABELS
DEFAULT_ROLE = "public"
DEFAULT_TENANT = "default"
# The largest page, table, row or paragraph number anything accepts: beyond it a number is bad
# input, never an overflow deep in a query (SQLite integers are 64-bit).
MAX_NUMBER = 2**31 - 1


class Frozen(BaseModel):
    """An immutable record that takes no field it does not declare. Its validator is built when it
    is first used, not when its class is defined: a command builds those it uses (a fresh lexical
    `localqa search` 9 of 17)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class Period(Frozen):
    """The reporting period a document covers (`localqa.question.periods`): a label as a catalog writes it
    ("FY2022", "Q2 2024"), or dates. `kind` says what a period known only by its end is: a cover
    says "for the fiscal year ended" (year) or "for the quarterly period ended" (quarter)."""

    label: str | None = None
    start: date | None = None
    end: date | None = None
    kind: Literal["year", "quarter"] | None = None


class Found(Frozen):
    """What extraction read on a source's first page (each None when nothing was): the title, the
    organisation its cover names ("Exact name of registrant") and the period it covers. Routing
    matches a question's names and fiscal years against them (`localqa.question.routing`)."""

    title: str | None = None
    name: str | None = None
    period: Period | None = None


class Document(Frozen):
    """One source file's metadata, as the catalog (or the file name) gives it.

    `access` is None when the catalog's label is missing or unknown: such a document is
    indexed but visible to nobody (closed world).
    """

    doc_id: str
    source: str
    series: str
    version: str | None = None
    effective: date | None = None
    status: Status = Status.CURRENT
    access: str | None = "public"
    tenant: str = DEFAULT_TENANT
    title: str | None = None
    period: Period | None = None  # from the catalog; else what the cover says (`Store.found`)


Box = tuple[float, float, float, float]
"""A rectangle on a PDF page: (x0, y0, x1, y1) in points, origin at the top left (PyMuPDF's
page coordinates, unrotated page)."""


class Passage(Frozen):
    """The unit of retrieval and citation. `text` is exactly what a model sees and what a quote
    is verified against; `section` is the heading path it sits under. `boxes` are where the
    passage is drawn on its page (a paragraph's block or lines, a table row's cells, an OCR
    paragraph's words); empty for Markdown and text files."""

    kind: Kind
    source: str
    page: int | None
    text: str
    section: str | None = None
    paragraph: int | None = None
    table: int | None = None
    row: int | None = None
    boxes: tuple[Box, ...] = ()

    def located(self, beside: Location) -> Location:
        """Where this passage is, cited beside `beside`, a citation of the same document (a
        row of the quote's table, a numbered entry, a defining sentence): its `effective`
        date is that document's."""
        return Location(
            source=self.source,
            page=self.page,
            kind=self.kind,
            section=self.section,
            table=self.table,
            row=self.row,
            paragraph=self.paragraph,
            effective=beside.effective,
        )


class Location(Frozen):
    """Where a passage is, in the fields every JSON output shares. Every format fills the same
    fields (`localqa.formats`): a spreadsheet row has its sheet's name as `section`, the sheet's
    position as `table` and the row number the spreadsheet shows as `row`; a slide's number is its
    `page`; Word, HTML and slide paragraphs are numbered within their section."""

    source: str
    page: int | None
    kind: Kind
    section: str | None
    table: int | None
    row: int | None
    paragraph: int | None
    effective: date | None

    def describe(self) -> str:
        """`handbook.pdf, page 1, prose paragraph 3, § Loans, effective 2026-01-01`; as each
        format is cited: `register.xlsx, sheet Loans, row 12`, `handbook.docx, § Loans > Renewals,
        paragraph 3`, `deck.pptx, slide 4, ...` (`localqa.formats`)."""
        fmt = format_of(self.source)
        name = fmt.name if fmt else ""
        parts = [self.source]
        if name in SPREADSHEETS and self.kind is Kind.TABLE:
            parts += [*([f"sheet {self.section}"] if self.section else []), f"row {self.row}"]
        elif name in SECTION_NUMBERED:
            if self.page is not None:
                parts.append(f"{'slide' if name == 'pptx' else 'page'} {self.page}")
            if self.section:
                parts.append(f"§ {self.section}")
            if self.kind is Kind.TABLE:
                parts.append(f"table {self.table}, row {self.row}")
            elif self.paragraph is not None:
                parts.append(f"paragraph {self.paragraph}")
        else:
            if self.page is not None:
                parts.append(f"page {self.page}")
            if self.kind is Kind.TABLE:
                parts.append(f"table {self.table}, row {self.row}")
            elif self.paragraph is not None:
                parts.append(f"{self.kind.value} paragraph {self.paragraph}")
            if self.section:
                parts.append(f"§ {self.section}")
        parts.append(f"effective {self.effective.isoformat()}" if self.effective else "undated")
        return ", ".join(parts)

    def brief(self) -> str:
        """Source, page and passage in a few words, for tables: `handbook.pdf p1 prose ¶3`."""
        where = [self.source]
        if self.page is not None:
            where.append(f"p{self.page}")
        if self.kind is Kind.TABLE and is_spreadsheet(self.source):
            where.append(f"sheet {self.section} row {self.row}" if self.section else f"row {self.row}")
        elif self.kind is Kind.TABLE:
            where.append(f"table {self.table} row {self.row}")
        else:
            where.append(
                self.kind.value if self.paragraph is None else f"{self.kind.value} ¶{self.paragraph}"
            )
        return " ".join(where)


class Candidate(Frozen):
    """A retrieved passage with its rank (1-based) and score, plus who owns it.

    `tenant` and `doc_id` are the structured owner reference the evaluator checks leaks with.
    """

    rank: int
    score: float
    location: Location
    text: str
    doc_id: str
    tenant: str
    boxes: tuple[Box, ...] = ()  # where the passage is drawn on its page (PDF sources)
    # The document context searched with the passage (its title and file-name words,
    # `catalog.searchable_title`): evidence coverage reads it (`localqa.answers.coverage`).
    title: str | None = None
    # The period its document covers (its catalog entry's, else its cover's; `periods.of_document`):
    # evidence coverage counts a year of it as mentioned.
    period: Period | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "score": round(self.score, 4),
            **self.location.model_dump(mode="json"),
            "text": self.text,
        }


def is_tenant_name(text: str) -> bool:
    """A tenant is named by something: a blank name (from a flag, the environment or the users
    file) is refused, never taken as a tenant of its own that sees nothing."""
    return bool(text.strip())


class Caller(Frozen):
    """Who is asking: always from flags, env or config, never from a model or a document."""

    role: str = DEFAULT_ROLE
    tenant: str = DEFAULT_TENANT


# How the reader is told each shape of question (`Reading.describe`).
SHAPE_NAMES = {
    "cause": "a cause",
    "extreme": "an extreme",
    "total": "arithmetic on stated figures",
    "comparison": "a comparison",
    "count": "a count",
    "list": "a list",
    "yes/no": "yes or no",
    "figure": "a figure",
    "value": "a value",
    "fact": "a fact",
}


class Reading(Frozen):
    """What a part asks, read once from its words (`localqa.question.reading`): its shape, the rule
    that decided it, and its slots. Every later stage takes its cue from this record, and the
    reader sees it ("Read as: a comparison of gross margin, FY2022 against FY2023"), so a wrong
    reading shows before a wrong figure does."""

    # "definition", "cause", "extreme", "comparison", "total", "count", "list", "yes/no", "figure",
    # "value" or "fact"
    shape: str
    rule: str  # the cue that decided the shape, as the reader is told it
    owner: str | None = None  # whose figure ("Boeing"), as the part writes it
    measure: str | None = None  # the line item, metric or topic asked about
    periods: tuple[str, ...] = ()  # the periods named, as written ("FY2022", "Q3 2023")
    counted: str | None = None  # what a count or a list counts ("chapters")
    kind: str | None = None  # the kind of a value ("an amount", "a date") or of a comparison

    def describe(self) -> str:
        """The reading in one line for the reader: "a comparison (improve): operating margin,
        FY2022"; "a count of chapters"; "a figure: Boeing's total revenue, FY2022"."""
        if self.shape == "definition":
            return f"what {self.measure} stands for" if self.measure else "what an acronym stands for"
        text = SHAPE_NAMES.get(self.shape, self.shape) + (f" ({self.kind})" if self.kind else "")
        about = self.counted if self.shape in ("count", "list") else self.measure
        if self.shape in ("count", "list"):
            return f"{text} of {about}" if about else text
        owner = f"{self.owner}'s " if self.owner else ""
        slots = [f"{owner}{about}" if about else owner.strip()]
        joiner = " against " if self.shape == "comparison" and len(self.periods) > 1 else ", "
        slots.append(joiner.join(self.periods))
        said = ", ".join(s for s in slots if s)
        return f"{text}: {said}" if said else text

    def as_json(self) -> dict[str, object]:
        return {**self.model_dump(mode="json"), "described": self.describe()}


class Route(Frozen):
    """The documents a question part was searched mainly in, because it names them
    (`localqa.question.routing`): their sources, and what the part names that they match, as written."""

    sources: tuple[str, ...]
    names: tuple[str, ...]

    @property
    def why(self) -> str:
        """`searched mainly in 3M_2022_10K.pdf: the question names "3M" and "FY2022"`."""
        names = _listed(self.names, quote=True)
        return f"searched mainly in {_listed(self.sources)}: the question names {names}"

    def as_json(self) -> dict[str, Any]:
        return {"sources": list(self.sources), "names": list(self.names), "why": self.why}


def _listed(items: tuple[str, ...], *, quote: bool = False) -> str:
    shown = [f'"{item}"' if quote else item for item in items]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


class PartResult(Frozen):
    """One question part and its candidates in rank order; empty means abstain, and `note` says
    why. `retriever` is the one that ran (lexical, semantic or hybrid); `route` is set when the
    part names documents and was searched mainly in them."""

    question: str
    candidates: tuple[Candidate, ...]
    note: str | None = None
    retriever: str = "lexical"
    route: Route | None = None
    # The part's search terms (stemmed as the index stems them) that no eligible passage holds,
    # title and heading path included, a word's stem also where no passage holding it writes the
    # word by lemma (`localqa.retrieval.held`: "found" for "founded"): what the caller's
    # collection plainly lacks (`localqa.answers.coverage`: a name only these lack refuses); None
    # where not looked up.
    unheld: tuple[str, ...] | None = None
    reading: Reading | None = None  # what the part asks (`localqa.question.reading`), read once


class Outcome(StrEnum):
    VERIFIED = "verified"  # a whole sentence (or row) of a supplied passage, with its citation
    REFUSED = "refused"  # no quote shown: nothing to ask, or the reply failed verification
    MODEL_ERROR = "model_error"  # the backend itself failed (unreachable, not installed, timeout)


class ModelCall(Frozen):
    """What one model call cost: wall time and, where the backend reports them, prompt tokens
    (of which `cached_tokens` were reused from an earlier call) and generated tokens, and the
    seconds spent reading the prompt and generating the reply; and the probability the model gave
    the passage label it chose, where it reports token probabilities."""

    seconds: float
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_seconds: float | None = None
    generation_seconds: float | None = None
    label_confidence: float | None = None


class RankedUnit(Frozen):
    """One quotable unit of a candidate (a sentence; a table row is one unit) as the sentence
    scorer (`localqa.answers.sentences`) ranked it for a question part: `score` is the fused score of
    `lexical` (BM25 over the part's units) and `semantic` (cosine to the question; None without
    the semantic extra). `label` is its passage's label (P1..Pn, the candidates' rank order) and
    `sentence` its number within that passage (1-based). `demoted` says why the unit cannot be
    the answer and was ranked below every unit that can, or is None."""

    rank: int
    score: float
    lexical: float
    semantic: float | None
    label: str
    sentence: int
    location: Location
    text: str
    demoted: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "score": round(self.score, 4),
            "demoted": self.demoted,
            "lexical": round(self.lexical, 4),
            "semantic": None if self.semantic is None else round(self.semantic, 4),
            "label": self.label,
            "sentence": self.sentence,
            **self.location.model_dump(mode="json"),
            "text": self.text,
        }


DecidedBy = Literal["evidence", "model"]


class Selection(Frozen):
    """How one part's quote was chosen: the scorer that ranked the units (`note` says when it
    ran without the semantic model) and what that cost, the units shown to the model (best
    first), and the unit the model chose (None: it chose none, or its reply named no unit it was
    shown). `overrode`: the model chose another unit than the scorer's first. `kept_first`: it
    did, less sure of it than `AnswerSettings.min_override_confidence`, so the scorer's first is
    what was quoted. `decided_by`: "evidence" when the evidence decided and no model was asked
    (`decided` names the rule, `localqa.answers.deciding`), else "model"."""

    scorer: str
    note: str | None = None
    seconds: float
    shown: tuple[RankedUnit, ...]
    choice: RankedUnit | None = None
    kept_first: bool = False
    decided_by: DecidedBy = "model"
    decided: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def overrode(self) -> bool | None:
        return None if self.choice is None else self.choice.rank != 1

    def describe(self) -> str:
        """The choice in a sentence, as `ask --verbose` and the web app show it."""
        choice = self.choice
        if choice is None:
            return "Chose no sentence."
        named = f"{choice.label} sentence {choice.sentence}"
        if self.decided_by == "evidence":
            return f"Decided by the evidence ({self.decided}): {named}, the scorer's first; no model call."
        if choice.rank == 1:
            return f"Chose {named}, the scorer's first."
        if self.kept_first:
            return (
                f"Chose {named}, ranked {choice.rank} by the scorer, too unsure to override its first: "
                "quoted the scorer's first."
            )
        return f"Chose {named}, ranked {choice.rank} by the scorer: overrode its first."

    def as_json(self) -> dict[str, Any]:
        choice = self.choice
        return {
            "scorer": self.scorer,
            "note": self.note,
            "units": [unit.as_json() for unit in self.shown],
            "choice": None
            if choice is None
            else {"label": choice.label, "sentence": choice.sentence, "rank": choice.rank},
            "overrode": self.overrode,
            "kept_first": self.kept_first,
            "decided_by": self.decided_by,
            "decided": self.decided,
        }


# "visual": a word naming how something looks ("green", "italic", "colour"), which only the
# document's text can carry: localqa reads text, never colours, typefaces or pictures.
TermKind = Literal["name", "identifier", "year", "figure", "word", "visual"]
TERM_KINDS: tuple[TermKind, ...] = ("name", "identifier", "year", "figure", "word", "visual")


class TermCheck(Frozen):
    """One term of a question part and where the quote's evidence mentions it (`localqa.answers.coverage`).

    `found` is "quote", "passage", "heading", "title", "effective date", "period" (a year the
    document's fiscal period covers) or "column" (a year of the table column the answer reads);
    "evidence" for a name whose words sit in different ones; "other passages" for one of several
    names or years the question compares, mentioned by another of the part's passages; for a
    word, "meaning" when a quotable unit is `similarity` close to it; None when it is missing.
    `elsewhere`: another of the caller's candidates mentions it. `judged` is False for a word
    that could not be judged by meaning (no embeddings)."""

    term: str
    kind: TermKind
    found: str | None
    elsewhere: bool = False
    similarity: float | None = None
    judged: bool = True
    # The word of the evidence a name misspelt in the question most likely is ("Amazon" for
    # "Amazn"; `coverage.closest_name`): shown in the doubt, never taken for a mention.
    closest: str | None = None
    # Whether some eligible document holds the term (a name: every one of its search terms has a
    # posting; `PartResult.unheld`); None where not looked up. A name the candidates never mention
    # but the collection holds is retrieval's miss, a doubt; one the collection lacks refuses.
    collection: bool | None = None

    @property
    def missing(self) -> bool:
        return self.found is None and self.judged

    def reason(self) -> str:
        """Why a quote was withheld for this term, in the question's own words only."""
        if self.kind == "word" and self.collection is False:
            return f'no eligible document writes "{self.term}"'
        if self.kind == "word":
            return f'no passage mentions "{self.term}" or anything close to it in meaning'
        if self.kind == "visual":
            where = "quoted passage" if self.elsewhere else "evidence"
            return f'localqa reads the documents\' text, and the {where} never writes "{self.term}"'
        if self.elsewhere:
            return f'the quoted passage never mentions "{self.term}"'
        return f'the evidence never mentions "{self.term}"'

    def describe(self) -> str:
        if self.found == "meaning":
            return f'"{self.term}" ({self.kind}): close in meaning ({self.similarity:.2f})'
        if self.found:
            return f'"{self.term}" ({self.kind}): in the {self.found}'
        if not self.judged:
            return f'"{self.term}" ({self.kind}): not judged'
        near = f", closest {self.similarity:.2f}" if self.similarity is not None else ""
        return f'"{self.term}" ({self.kind}): missing{near}'


RefusalKind = Literal[
    "word", "name", "year", "number", "identifier", "visual", "confidence", "planner", "retrieval", "other"
]
# Every kind of refusal, as `localqa.evaluate.refusals` reports each as a classifier: a term of
# the question the evidence never mentions (by kind; a figure of the question is a "number"), the
# model unsure of its choice, a figure the planner could not compute, and retrieval finding nothing.
REFUSAL_KINDS: tuple[RefusalKind, ...] = (
    "word",
    "name",
    "year",
    "number",
    "identifier",
    "visual",
    "confidence",
    "planner",
    "retrieval",
    "other",
)


# A question's term kind as a kind of refusal: a figure of the question is a "number" the evidence
# never gives ("planner" is the figure planner's own refusal).
TERM_REFUSALS: dict[TermKind, RefusalKind] = {
    "name": "name",
    "identifier": "identifier",
    "year": "year",
    "figure": "number",
    "word": "word",
    "visual": "visual",
}


class Doubt(Frozen):
    """Why the answer stage is unsure a shown quote answers (docs/answers.md, "Doubts beside a
    quote"): the kind of check that doubted (a `RefusalKind`), the question's term it doubts, and
    one line for the reader ('the evidence never mentions "Amazn"; closest: "Amazon"')."""

    kind: RefusalKind
    term: str | None
    note: str


class Coverage(Frozen):
    """The evidence-coverage verdict on a quote: every term checked, in question order."""

    terms: tuple[TermCheck, ...] = ()
    note: str | None = None

    @property
    def missing(self) -> TermCheck | None:
        return next((t for t in self.terms if t.missing), None)

    def describe(self) -> str:
        checked = "; ".join(t.describe() for t in self.terms) or "no names, years, figures or words to check"
        return f"{checked}{f' ({self.note})' if self.note else ''}"


class Operand(Frozen):
    """One input of a derived figure (`localqa.derived.figures`): its name in the expression, its value
    (a verified span of `quote`, `localqa.values`), and the quote and citation it comes from."""

    name: str
    value: Value
    quote: str
    citation: Location
    # The statement its row sits in, as a citation names it ("consolidated balance sheet"), when
    # a table's (`localqa.language.statements`).
    statement: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value.as_json(),
            "quote": self.quote,
            "citation": self.citation.model_dump(mode="json"),
            "statement": self.statement,
        }


class ListItem(Frozen):
    """One item of a list answer (`localqa.answers.listing`): `text` is a span of `quote`, a verified
    whole sentence or table row of the passage at `citation`."""

    text: str
    quote: str
    citation: Location

    def as_json(self) -> dict[str, Any]:
        return {"text": self.text, "quote": self.quote, "citation": self.citation.model_dump(mode="json")}


class Comparison(Frozen):
    """A comparison computed in code (`localqa.derived.comparing`): a figure at each period (or for each
    item) the part compares, in the order compared, each labelled by its `column` ("FY2021"), and
    the direction their numbers give under `rule` (said to the reader: "higher is better for a
    margin"). `direction` is "improved", "declined", "increased", "decreased" or "unchanged" across
    periods; "positive", "negative" or "zero" for the sign of one figure; "above", "below" or "at"
    a rule of thumb's `threshold` for a judgment."""

    direction: str
    rule: str
    figures: tuple[Value, ...]
    # A judgment's rule of thumb (the glossary's, its source said in `rule`): the direction is
    # "above", "below" or "at" it.
    threshold: float | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "rule": self.rule,
            "figures": [f.as_json() for f in self.figures],
            "threshold": self.threshold,
        }


class Value(Frozen):
    """The value an answer gives: a span of its verified quote (a number with its unit, a date, a
    duration, a name, a list), or for a table row the cell at the row and column asked about; or
    a derived figure computed in code from `operands` by `expression` (`localqa.derived.figures`).

    `text` is the span as the document writes it ("(1,577)", "45 minutes"), or for a derived
    figure the result as rounded ("12.5 %"). `number` is its numeric value, sign included (an
    outflow in parentheses is negative), in the table's `scale` ("millions") and `unit` ("USD",
    "%", "days"); None for a value that is no number. `row` and `column` are a table cell's row
    label and column header. `expression` is written over the operands' names
    ("(revenue_fy2022 - revenue_fy2021) / revenue_fy2021 * 100").

    A list answer (`localqa.answers.listing`) has `items`, each a verified quote with its citation and
    the span it lists: its `text` joins the items' texts with "; "; a count's `number` is how many
    distinct items are listed and its `text` says it ("4", or "at least 12" when the bound or
    retrieval's cut may hide more)."""

    text: str
    number: float | None = None
    unit: str | None = None
    scale: str | None = None
    row: str | None = None
    column: str | None = None
    operands: tuple[Operand, ...] | None = None
    expression: str | None = None
    items: tuple[ListItem, ...] | None = None
    # A comparison the value is the last figure of (`Comparison`): each figure compared, and the
    # direction computed from them.
    comparison: Comparison | None = None
    # The checks against the document's own arithmetic a derived figure passed before it was shown
    # (`localqa.derived.crosschecks`: "gross profit = net sales - cost of sales", "one scale").
    checks: tuple[str, ...] = ()

    @property
    def derived(self) -> bool:
        return self.operands is not None

    @property
    def listed(self) -> bool:
        return self.items is not None

    def as_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "number": self.number,
            "unit": self.unit,
            "scale": self.scale,
            "row": self.row,
            "column": self.column,
            "operands": None if self.operands is None else [o.as_json() for o in self.operands],
            "expression": self.expression,
            "items": None if self.items is None else [i.as_json() for i in self.items],
            "comparison": self.comparison.as_json() if self.comparison else None,
            "checks": list(self.checks),
        }


class Closest(Frozen):
    """The passage nearest to answering a part the answer stage is only unsure of (the contract's
    "Unsure is not an answer"): a verified quote and its citation, shown under a label that does
    not claim to answer, beside `No quote verified` and the reason; never as the answer. `doubts`
    say why it may not answer (at least one)."""

    quote: str
    citation: Location
    doubts: tuple[Doubt, ...]

    @model_validator(mode="after")
    def _doubted(self) -> Closest:
        if not self.doubts or not self.quote.strip():
            raise ValueError("a closest passage has a non-blank quote and the doubts that withheld it")
        return self

    def label(self) -> str:
        """What the passage is, in words that claim nothing: 'Closest passage, which does not
        mention "founded"'; 'Closest passage, which the model was unsure of' for a weak model
        label (a doubt naming no term of the question)."""
        terms = list(dict.fromkeys(d.term for d in self.doubts if d.term))
        if not terms:
            return "Closest passage, which the model was unsure of"
        named = " or ".join(f'"{term}"' for term in terms)
        return f"Closest passage, which does not mention {named}"

    def as_json(self) -> dict[str, Any]:
        return {
            "label": self.label(),
            "quote": self.quote,
            "citation": self.citation.model_dump(mode="json"),
            "doubts": [doubt.model_dump(mode="json") for doubt in self.doubts],
        }


class Answer(Frozen):
    """The outcome of answering one part. A verified answer has a quote and its citation and no
    reason; a refused or failed one has a reason and no quote, citation or other evidence. Build
    them with `Answer.verified_quote`, `Answer.refused` and `Answer.failed`."""

    outcome: Outcome
    quote: str | None = None
    citation: Location | None = None
    reason: str | None = None
    other_evidence: tuple[Location, ...] = Field(default=())
    call: ModelCall | None = None  # None when no model was asked
    selection: Selection | None = None  # None when there was nothing to choose from
    coverage: Coverage | None = None  # None when no quote was checked (localqa.answers.coverage)
    # What the quote answers, when the part asks for one (`localqa.values`): a span of the quote,
    # a table cell, or a figure derived from verified operands. Never on a refusal.
    value: Value | None = None
    # Why the figure the part asks for was not computed ("no figure computed: the evidence gives
    # FY2022 operating income but not ..."), said beside the part's verified quote, which stands.
    figure_note: str | None = None
    # What the answer stage doubts about the quote (a word no passage carries, a weak model
    # label, a name found only as a near spelling), while it is still being answered: a doubted
    # quote is never shown as the answer, it becomes a refusal carrying it as its `closest`
    # passage (`localqa.answers.unsure.withheld`). Never on a refusal.
    doubts: tuple[Doubt, ...] = Field(default=())
    # A refusal's closest passage, shown under its label beside the reason; never on a verified
    # answer (the JSON's "closest": a refusal carrying it, not an answer).
    closest: Closest | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Answer:
        if self.outcome is Outcome.VERIFIED:
            if not self.quote or not self.quote.strip() or self.citation is None or self.reason is not None:
                raise ValueError("a verified answer has a non-blank quote and a citation, and no reason")
            if self.closest is not None:
                raise ValueError("a verified answer carries no closest passage: it is the answer")
        elif (
            not self.reason
            or self.quote is not None
            or self.citation is not None
            or self.other_evidence
            or self.value is not None
            or self.figure_note is not None
            or self.doubts
        ):
            raise ValueError(
                f"a {self.outcome.value} answer has a reason and no quote, citation, value, doubt or evidence"
            )
        elif self.outcome is Outcome.MODEL_ERROR and self.closest is not None:
            raise ValueError("a model error carries no closest passage: nothing was judged")
        return self

    @classmethod
    def verified_quote(
        cls, quote: str, citation: Location, other_evidence: tuple[Location, ...] = ()
    ) -> Answer:
        return cls(outcome=Outcome.VERIFIED, quote=quote, citation=citation, other_evidence=other_evidence)

    @classmethod
    def refused(cls, reason: str) -> Answer:
        return cls(outcome=Outcome.REFUSED, reason=reason)

    @classmethod
    def failed(cls, reason: str) -> Answer:
        """The backend failed: `reason` is its error message (which names the fix)."""
        return cls(outcome=Outcome.MODEL_ERROR, reason=reason)

    @property
    def verified(self) -> bool:
        return self.outcome is Outcome.VERIFIED

    @property
    def model_failed(self) -> bool:
        return self.outcome is Outcome.MODEL_ERROR

    def as_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome.value,
            "verified": self.verified,
            "quote": self.quote,
            "citation": self.citation.model_dump(mode="json") if self.citation else None,
            "reason": self.reason,
            "value": self.value.as_json() if self.value else None,
            "figure_note": self.figure_note,
            "doubts": [doubt.model_dump(mode="json") for doubt in self.doubts],
            "closest": self.closest.as_json() if self.closest else None,
            "other_evidence": [loc.model_dump(mode="json") for loc in self.other_evidence],
            "selection": self.selection.as_json() if self.selection else None,
            "coverage": self.coverage.model_dump(mode="json") if self.coverage else None,
        }


Operand.model_rebuild()
Comparison.model_rebuild()
