"""Conversations: a follow-up question rewritten into a standalone one, shown and checked.

People ask a folder a question, then "And EQ-502?", "What about FY2018?", "Does it apply to
DVDs?", "Why?". Each turn is answered exactly as `ask` answers a question, so a follow-up first
gets what it leaves out from the turn before it (`rewrite`):

- **Slots.** A follow-up made only of an identifier, a period or a name ("And EQ-502?", "Same
  for FY2018", "What about Globex?") replaces the slot of that kind in the previous standalone
  question (a period range shifts: "from FY2016 to FY2017" then "Same for FY2018" is "from FY2017
  to FY2018"); every other slot carries.
- **Line item.** "And the deposit?" replaces the topic of the previous question ("What is the
  loan limit for EQ-314?" gives "What is the deposit for EQ-314?"); its slots carry.
- **Frame.** The previous question is read once as its frame (`Frame`: head, owner, line item,
  the rest), and a follow-up that changes one of them fills that slot: "And Verizon's?" the owner
  ("What was Verizon's total revenue in FY2022?"), "And its net income?" the line item, owner and
  period kept ("What was Amcor's net income in FY2023?").
- **Reference.** "it", "its", "they", "the same" and "that" stand for the previous question's
  subject ("Does it apply to DVDs?"); "Why?" asks why the previous answer is what it is.
- A question with none of these marks needs nothing from earlier turns and is left as it is;
  later follow-ups then carry from it, so a turn that changes the subject starts afresh.

Where the rules cannot decide (the previous question has no slot of the kind changed, or no topic
to replace), a language model may rewrite (`model_request`, a JSON schema admitting one question);
its rewrite is refused when it brings a word from nowhere (`from_nowhere`: a name, year,
identifier or figure that neither the follow-up nor an earlier turn or its shown answer holds),
and the rules' plain carrying form is used instead. Earlier turns hold only what their caller was
shown (`Turn`): evidence hidden from the caller never exists here to carry, and turns asked by
another caller (a role or tenant switch) are not carried (`carried_turns`).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from localqa.errors import ModelError
from localqa.language import words
from localqa.language.text import IDENTIFIER, squash
from localqa.models.base import AnswerModel, AnswerRequest
from localqa.question import periods
from localqa.question.frames import AUX, COPULAS, SHAPE, Frame
from localqa.settings import AnswerSettings
from localqa.types import Answer, Caller

How = Literal["standalone", "rule", "model", "carried", "edited"]
# A turn longer than this is refused (`localqa chat` reads whatever stdin holds), and a model's
# rewrite longer than this is no question (a run-on reply).
MAX_QUESTION_CHARS = 4096
# A question without a question word is elliptic ("EQ-502?", "For FY2018?") only when this short:
# a longer one ("Audio recorder deposit and overdue book fine") asks on its own.
MAX_ELLIPTIC_WORDS = 5

# --- the marks of a follow-up: named tables ----------------------------------------------------

# Words a follow-up opens with that say "as before, but ...": stripped before the rest is read.
OPENERS = re.compile(
    r"^(?:(?:and|but|also|now|then|ok(?:ay)?|so)\s*,?\s+)*"
    r"(?:(?:what|how)\s+about|(?:and\s+)?(?:the\s+)?same(?:\s+again|\s+(?:for|with|under|in|at|on))?|again|"
    r"and|also|now|then|how\s+about)\b\s*(?:(?:for|with|under|in|at|on|of)\b\s*)?",
    re.IGNORECASE,
)
# Words that stand for the previous question's subject. "that"/"this" only before the end or a
# verb-less end ("Why is that?"), where they cannot open a relative clause ("items that ...").
REFERENCES = re.compile(
    r"\b(?:it|they|them|the\s+same)\b"
    r"|(?:(?<=^does )|(?<=^did )|(?<=^do )|(?<=^is )|(?<=^was )|(?<=^will )|(?<=^can ))(?:that|this)\b|"
    r"\b(?:that|this)(?=\s*\?*\s*$)|\b(?:that|this)\s+(?=(?:one|rule|limit|"
    r"fee|cap|amount|policy|item)\b)",
    re.IGNORECASE,
)
# "it" that stands for nothing ("Is it allowed to bring food?"): no reference, the question stands.
DUMMY_IT = re.compile(
    r"\b(?:is|was|will)\s+it\s+(?:possible|allowed|permitted|ok(?:ay)?|true|necessary|required)\s+(?:to|that)\b",
    re.IGNORECASE,
)
POSSESSIVE_REFERENCE = re.compile(r"\b(?:its|their)\b", re.IGNORECASE)
WHY = re.compile(r"^\s*why(?:\s+(?:is|was|are|were)\s+(?:that|this|it|so))?\s*\?*\s*$", re.IGNORECASE)
# Its subject, for a reference: what follows the question word and auxiliary.
SUBJECT = re.compile(
    rf"^(?:what|which|how(?:\s+(?:much|many|long|often))?|when|where|who)\s+(?:\w+\s+)?(?P<aux>{AUX})\s+(?P<subject>.+?)\s*\?*\s*$",
    re.IGNORECASE,
)
# A follow-up's words that fill no slot and name no topic.
_FILLER = frozenset("the a an for with under in at on of please same about what how and".split())
_FIGURE = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")


@dataclass(frozen=True)
class Turn:
    """One earlier turn as its caller saw it: what was typed, the standalone question asked, and
    the shown answer texts (verified quotes, values in words, cited sources). Nothing else of an
    answer is kept, so nothing hidden from the caller can be carried."""

    question: str
    standalone: str
    caller: Caller
    shown: tuple[str, ...] = ()
    value: str | None = None  # the first part's value in words, for "Why?"

    def texts(self) -> tuple[str, ...]:
        return (self.question, self.standalone, *self.shown, *([self.value] if self.value else []))


@dataclass(frozen=True)
class Rewrite:
    """A follow-up as it will be asked: `standalone`, how it was made, the slots it carried or
    replaced, and why a model's rewrite was refused (None when none was)."""

    question: str
    standalone: str
    how: How
    carried: tuple[str, ...] = ()
    refused: str | None = None
    model_seconds: float | None = None

    @property
    def rewritten(self) -> bool:
        return self.standalone != self.question

    def record(self) -> dict[str, object]:
        """The JSON record (`chat --json`, the API): what was typed and what was asked."""
        return {
            "question": self.question,
            "understood_as": self.standalone,
            "how": self.how,
            "carried": list(self.carried),
            "model_refused": self.refused,
            "model_seconds": self.model_seconds,
        }


@dataclass
class Conversation:
    """The turns so far, bounded (MAX_TURNS kept), of one caller with one scope."""

    caller: Caller
    documents: tuple[str, ...] = ()
    turns: list[Turn] = field(default_factory=list)

    MAX_TURNS = 20

    def add(self, turn: Turn) -> None:
        self.turns.append(turn)
        del self.turns[: -self.MAX_TURNS]


def turn_of(rewritten: Rewrite, caller: Caller, answers: Sequence[Answer]) -> Turn:
    """The turn a conversation keeps of an answered question: only what was shown (verified
    quotes, their sources, the first value), so a refusal keeps nothing but the question."""
    shown = tuple(
        text
        for answer in answers
        if answer.verified and answer.quote and answer.citation
        for text in (answer.quote, answer.citation.source)
    )
    value = next((a.value.text for a in answers if a.verified and a.value is not None), None)
    return Turn(rewritten.question, rewritten.standalone, caller, shown, value)


def carried_turns(turns: Sequence[Turn], caller: Caller) -> list[Turn]:
    """The turns a follow-up of `caller` may carry from: only those asked by the same caller (role
    and tenant). A role or tenant switch starts afresh: what another caller was shown is not this
    caller's to see."""
    return [turn for turn in turns if turn.caller == caller]


# --- the rules ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Slots:
    """What a question names: identifiers, periods (as written) and names (runs as written)."""

    identifiers: tuple[str, ...]
    periods: tuple[periods.Mention, ...]
    names: tuple[str, ...]

    @classmethod
    def of(cls, text: str) -> Slots:
        names = tuple(run.text for run in words.name_runs(text) if run.words and not _only_periods(run.text))
        return cls(tuple(m.group(1) for m in IDENTIFIER.finditer(text)), tuple(periods.mentions(text)), names)

    def __bool__(self) -> bool:
        return bool(self.identifiers or self.periods or self.names)

    def all(self) -> tuple[str, ...]:
        return (*self.identifiers, *(m.text for m in self.periods), *self.names)


def _only_periods(text: str) -> bool:
    return all(periods.PERIOD_WORD.fullmatch(w) for w in text.split())


def is_follow_up(question: str) -> bool:
    """Whether a question needs an earlier turn: it opens with "and"/"what about"/"same for", it
    refers to the previous subject ("it", "its", "that?"), it is "Why?", or it asks nothing of
    its own (no question word: "EQ-502?", "For FY2018?")."""
    text = squash(question)
    return bool(
        OPENERS.match(text)
        or (REFERENCES.search(text) and not DUMMY_IT.search(text))
        or POSSESSIVE_REFERENCE.search(text)
        or WHY.match(text)
        or (
            len(text.split()) <= MAX_ELLIPTIC_WORDS
            and not SUBJECT.match(text)
            and not re.match(
                r"^(?:is|are|was|were|does|do|did|can|may|must|will|should|has|have)\b", text, re.I
            )
        )
    )


def rule_rewrite(question: str, previous: Turn) -> Rewrite | None:
    """The follow-up `question` made standalone from the turn before it by the rules of the
    module docstring; None when the rules cannot decide."""
    text = squash(question)
    prev = squash(previous.standalone)
    if WHY.match(text):
        found = SUBJECT.match(prev)
        if not found:
            return None
        value = f" {previous.value}" if previous.value else ""
        return Rewrite(
            question, f"Why {found['aux'].lower()} {found['subject']}{value}?", "rule", ("subject",)
        )
    rest = OPENERS.sub("", text, count=1).strip()
    slotted = _slot_follow_up(question, rest, prev)
    if slotted is not None:
        return slotted
    if (REFERENCES.search(text) and not DUMMY_IT.search(text)) or POSSESSIVE_REFERENCE.search(text):
        return _referred(question, text, prev)
    own = Slots.of(question)
    topic = _topic_words(rest, own)
    standalone = prev
    carried: list[str] = []
    if own.identifiers:
        standalone = _replace_all(standalone, Slots.of(standalone).identifiers, own.identifiers[0])
        carried.append("identifier")
    if own.periods:
        shifted = _shift_periods(standalone, own.periods)
        if shifted is None:
            return None
        standalone = shifted
        carried.append("period")
    if not own and not topic:  # "And now?", "Same again?": the same question (on another date)
        return Rewrite(question, _sentence(prev), "rule", ("question",))
    if own.names:
        shown = Slots.of(standalone).names
        if len(shown) != 1:  # with none, "DVDs" (an item) and "Globex" (a company) read alike
            return None
        standalone = _replace_word(standalone, shown[0], own.names[0])
        carried.append("name")
    if topic:
        shape = SHAPE.match(standalone)
        if not shape or shape["aux"].lower() not in COPULAS or (own and not shape["tail"]):
            return None
        owner = f"{shape['owner']} " if shape["owner"] and not own.names else ""
        head = shape["head"] if not shape["owner"] else shape["head"][: shape.start("owner")]
        # A name inside the replaced topic ("the Acme payroll date") carries unless one is given.
        named = [n for n in Slots.of(prev).names if n in shape["topic"]] if not own.names else []
        topic = " ".join([*named, topic])
        standalone = f"{head}{owner}{topic}{shape['tail'] or ''}?"
        carried.append("topic")
    if standalone == prev and not carried:
        return None
    return Rewrite(question, _sentence(standalone), "rule", tuple(carried))


# A follow-up that only names another owner ("And Verizon's?") or only another line item of the
# same owner ("And its net income?"): one slot of the previous question's frame changes.
_OWNER_ONLY = re.compile(r"^(?P<owner>[^\s?][^?]*?)['\u2019]s?\s*\?*\s*$")
_ITS_TOPIC = re.compile(r"^(?:its|their)\s+(?P<topic>[^?]+?)\s*\?*\s*$", re.IGNORECASE)


def _slot_follow_up(question: str, rest: str, prev: str) -> Rewrite | None:
    """A follow-up that changes one slot of the previous question's frame (`Frame`: who it is
    about, what line item, the rest kept): "And Verizon's?" after "What was Boeing's total revenue
    in FY2022?" asks for Verizon's total revenue in FY2022; "And its net income?" after "What was
    Amcor's net sales in FY2023?" asks for Amcor's net income in FY2023. None when the follow-up
    is not of these shapes or the previous question has no frame to fill."""
    frame = Frame.of(prev)
    if frame is None:
        return None
    owner = _OWNER_ONLY.match(rest)
    if owner is not None and not SUBJECT.match(rest) and len(owner["owner"].split()) <= MAX_ELLIPTIC_WORDS:
        if frame.owner is not None:
            return Rewrite(
                question, _sentence(replace(frame, owner=owner["owner"]).text()), "rule", ("owner",)
            )
        names = Slots.of(prev).names
        if len(names) != 1:  # whose, when the previous question names none or several: undecided
            return None
        return Rewrite(question, _sentence(_replace_word(prev, names[0], owner["owner"])), "rule", ("name",))
    topic = _ITS_TOPIC.match(rest)
    if topic is not None and not SUBJECT.match(rest) and frame.copula:
        return Rewrite(question, _sentence(replace(frame, topic=topic["topic"]).text()), "rule", ("topic",))
    return None


def _topic_words(rest: str, own: Slots) -> str:
    """What of a follow-up's remainder names a line item: its slots and filler words removed."""
    for slot in own.all():
        rest = rest.replace(slot, " ")
    rest = IDENTIFIER.sub(" ", periods.MENTIONS.sub(" ", rest))
    kept = [w for w in rest.strip(" ?.!").split() if w.strip("?,.!")]
    while kept and kept[0].lower() in _FILLER:
        kept.pop(0)
    while kept and kept[-1].lower() in _FILLER:
        kept.pop()
    return " ".join(kept).strip(" ?,.")


def _referred(question: str, text: str, prev: str) -> Rewrite | None:
    found = SUBJECT.match(prev)
    if not found:
        return None
    subject = found["subject"]
    owner = _owner(prev) or subject
    standalone = POSSESSIVE_REFERENCE.sub(f"{owner}'s" if _owner(prev) else f"the {subject}'s", text, count=1)
    standalone = REFERENCES.sub(subject + " ", standalone, count=1)
    return Rewrite(question, _sentence(squash(standalone)), "rule", ("subject",))


def _owner(prev: str) -> str | None:
    """What the previous question is about when it names one thing: its identifier, else its one
    name ("EQ-314", "Amazon")."""
    slots = Slots.of(prev)
    if slots.identifiers:
        return slots.identifiers[0]
    return slots.names[0] if len(slots.names) == 1 else None


def _replace_all(text: str, old: Sequence[str], new: str) -> str:
    if not old:
        return f"{text.rstrip(' ?')} for {new}?"
    for item in dict.fromkeys(old):
        text = _replace_word(text, item, new)
    return text


def _replace_word(text: str, old: str, new: str) -> str:
    return re.sub(rf"(?<![\w-]){re.escape(old)}(?![\w]|-\d)", lambda _: new, text)


def _shift_periods(text: str, wanted: Sequence[periods.Mention]) -> str | None:
    """`text` with its periods replaced by `wanted`: one for one when as many are given; a range
    shifted so that its last year is the one given ("from FY2016 to FY2017", "FY2018": "from
    FY2017 to FY2018"); appended when `text` names none."""
    found = periods.mentions(text)
    if not found:
        return f"{text.rstrip(' ?')} in {wanted[0].text}?"
    if len(wanted) == len(found):
        for old, new in zip(found, wanted, strict=True):
            text = _replace_word(text, old.text, new.text)
        return text
    if len(wanted) == 1 and wanted[0].quarter is None and all(m.quarter is None for m in found):
        delta = wanted[0].year - found[-1].year
        return re.sub(periods.YEAR_DIGITS, lambda m: str(int(m.group(0)) + delta), text) if delta else text
    return None


def _sentence(text: str) -> str:
    text = squash(text).rstrip(" ?.")
    return text[:1].upper() + text[1:] + "?"


def carrying_form(question: str, previous: Turn) -> Rewrite:
    """When neither rules nor a model decide: the follow-up with the previous question's slots
    carried in brackets, so it is searched where the conversation was ("And operating income?
    (Amazon, FY2017)")."""
    slots = Slots.of(previous.standalone).all()
    own = set(Slots.of(question).all())
    carried = [s for s in slots if s not in own]
    text = OPENERS.sub("", squash(question), count=1).strip(" ?") or squash(question).strip(" ?")
    standalone = _sentence(text) if not carried else f"{_sentence(text)[:-1]} ({', '.join(carried)})?"
    return Rewrite(question, standalone, "carried", tuple(carried))


# --- the check ---------------------------------------------------------------------------------


def checked_terms(text: str) -> list[str]:
    """The names, years, identifiers and figures of `text`: what a rewrite may not invent."""
    terms = [m.group(1).upper() for m in IDENTIFIER.finditer(text)]
    terms += [m.group(1) for m in words.YEAR.finditer(text)]
    blanked = IDENTIFIER.sub(" ", text)
    terms += [
        m.group(0) for m in _FIGURE.finditer(blanked) if not re.fullmatch(periods.YEAR_DIGITS, m.group(0))
    ]
    for run in words.name_runs(text):
        terms += [words.POSSESSIVE.sub("", w) for w in words.WORD.findall(run.text)]
    return terms


def from_nowhere(standalone: str, question: str, turns: Sequence[Turn]) -> list[str]:
    """The names, years, identifiers and figures of `standalone` that neither `question` nor an
    earlier turn (its question, its standalone form, its shown answer) holds."""
    # What the conversation holds, word by word (a name's words, an identifier's and a figure's
    # pieces) and its years inside tokens ("FY2017"): no name rule is needed on this side.
    known: set[str] = set()
    for text in (question, *(t for turn in turns for t in turn.texts())):
        known |= {words.fold(w) for w in words.ALNUM.findall(text)}
        known |= {m.group(1) for m in words.YEAR.finditer(text)}
    missing = []
    for term in checked_terms(standalone):
        pieces = [words.fold(p) for p in words.ALNUM.findall(term)] or [words.fold(term)]
        if words.fold(term) not in known and not all(p in known for p in pieces):
            missing.append(term)
    return list(dict.fromkeys(missing))


# --- the model, where the rules cannot decide ----------------------------------------------------

REWRITE_SYSTEM = (
    "You rewrite a follow-up question into one standalone question. Use only names, years, "
    "identifiers and figures written in the conversation. Keep the follow-up's words; add only what "
    'it leaves out from the earlier questions. Reply with JSON: {"question": "..."}.'
)


class _Rewritten(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    question: str


def model_request(question: str, turns: Sequence[Turn], settings: AnswerSettings) -> AnswerRequest:
    """The request a language model answers with a standalone question, under a schema that
    admits nothing else."""
    shown = "\n".join(
        f"Q: {turn.standalone}" + (f"\nA: {turn.shown[0]}" if turn.shown else "") for turn in turns[-3:]
    )
    user = f"Conversation:\n{shown}\n\nFollow-up: {question}\n\nThe follow-up as a standalone question:"
    schema = {
        "type": "object",
        "properties": {"question": {"type": "string", "minLength": 3, "maxLength": 300}},
        "required": ["question"],
        "additionalProperties": False,
    }
    return AnswerRequest(
        question=question,
        passages={},
        units=(),
        messages=({"role": "system", "content": REWRITE_SYSTEM}, {"role": "user", "content": user}),
        schema=schema,
        max_tokens=settings.reply_tokens * 2,
        settings=settings,
    )


def model_rewrite(
    question: str, turns: Sequence[Turn], model: AnswerModel, settings: AnswerSettings
) -> Rewrite | str:
    """A language model's rewrite, checked; or why it is refused (said to the reader; it never
    repeats the model's text beyond the terms it invented)."""
    started = time.perf_counter()
    try:
        completion = model.complete(model_request(question, turns, settings))
        reply = _Rewritten.model_validate(json.loads(completion.text)).question
    except ModelError as error:
        return f"model error: {error}"
    except (ValueError, TypeError, RecursionError, ValidationError):
        return "the model's reply is not the JSON asked for"
    seconds = time.perf_counter() - started
    reply = squash(reply)
    if not reply or len(reply) > MAX_QUESTION_CHARS:
        return "the model's rewrite is blank or too long"
    invented = from_nowhere(reply, question, turns)
    if invented:
        return f"the model's rewrite names {', '.join(invented[:3])}, which no turn of the conversation holds"
    return Rewrite(question, _sentence(reply), "model", model_seconds=seconds)


def rewrite(
    question: str,
    turns: Sequence[Turn],
    caller: Caller,
    model: AnswerModel | None = None,
    settings: AnswerSettings | None = None,
) -> Rewrite:
    """`question` as it will be asked, given the earlier `turns` (only the caller's own carry):
    left alone when it needs nothing; else by the rules; else by the model (a language model
    only), checked; else the carrying form. Every result is checked: a rewrite with a term from
    nowhere is never returned."""
    own = carried_turns(turns, caller)
    if not own or not is_follow_up(question):
        return Rewrite(question, question, "standalone")
    previous = own[-1]
    found = rule_rewrite(question, previous)
    refused = None
    if found is None and model is not None and model.is_language_model:
        asked = model_rewrite(question, own, model, settings or AnswerSettings())
        if isinstance(asked, Rewrite):
            found = asked
        else:
            refused = asked
    if found is None:
        found = carrying_form(question, previous)
    if from_nowhere(found.standalone, question, own):  # the rules copy; this holds them to it
        found = Rewrite(question, question, "standalone")
    # What a turn carries accumulates (a topic keeps the names of the one it replaces): past the
    # bound a typed question has, the follow-up is asked as typed, so no conversation grows a
    # question without end.
    if len(found.standalone) > MAX_QUESTION_CHARS:
        found = Rewrite(question, question, "standalone")
    return Rewrite(found.question, found.standalone, found.how, found.carried, refused, found.model_seconds)
