"""What the CLI prints as text: the header of a search or an answer, each part's candidates, its
answer with the value it gives, the sentences the model was shown and what it cost. Text only:
`localqa.shapes` holds the JSON shapes, and `localqa.cli` passes every line through
`localqa.terminal.visible` before it reaches a terminal."""

from __future__ import annotations

from datetime import date

from localqa.types import Answer, Caller, PartResult, Selection, Value


def header(as_of: date, caller: Caller, results: list[PartResult], documents: tuple[str, ...]) -> str:
    retriever = results[0].retriever if results else "none"
    within = f" · only in {', '.join(documents)}" if documents else ""
    return (
        f"As of {as_of.isoformat()} · role {caller.role} · tenant {caller.tenant} · retriever {retriever}"
        f"{within}"
    )


def part_head(number: int, result: PartResult) -> list[str]:
    """A part's first lines: its question, and why it was searched mainly in some documents."""
    return ["", f"{number}. {result.question}", *([f"   ({result.route.why})"] if result.route else [])]


def answer_lines(result: PartResult, answer: Answer) -> list[str]:
    """A part's answer: its value first when it has one (`value_lines`), the verified quote and its
    citation, what the answer stage doubts about it (`doubt_lines`), other evidence; or why no
    quote was verified and the evidence retrieved."""
    if answer.verified and answer.citation is not None:
        if answer.value and answer.value.derived:  # its operands' quotes are the evidence
            lines = value_lines(answer.value)
        else:
            lines = value_lines(answer.value) if answer.value else []
            lines += [f'   "{answer.quote}"', f"   — {answer.citation.describe()}"]
        lines += doubt_lines(answer)
        if answer.other_evidence:
            lines.append("   Other evidence (other documents also match; check for a conflict):")
            lines += [f"     · {location.describe()}" for location in answer.other_evidence]
        return lines
    reason = f"model error: {answer.reason}" if answer.model_failed else answer.reason
    lines = [f"   No quote verified from {len(result.candidates)} candidates. Reason: {reason}."]
    if result.candidates:
        lines.append("   Evidence retrieved:")
        lines += candidate_lines(result)
    elif result.note:
        lines.append(f"   ({result.note})")
    return lines


def doubt_lines(answer: Answer) -> list[str]:
    """What the answer stage doubts about the quote, one line each (`Answer.doubts`): the quote is
    shown, and the reader told why it may not answer."""
    return [f"   Doubt: {doubt.note}." for doubt in answer.doubts]


def value_lines(value: Value) -> list[str]:
    """`Answer: 45 minutes`; a table cell with its row, column and scale; a derived figure with its
    expression written out in the operands' values, and each operand's quote and citation."""
    if not value.derived:
        return [f"   Answer: {describe_value(value)}"]
    from localqa.computing import substituted  # a search never needs it

    operands = value.operands or ()
    lines = [
        f"   Answer: {describe_value(value)} = {substituted(value)}",
        f"   Computed by localqa from {len(operands)} verified figure(s), each a span of the passage quoted:",
    ]
    for operand in operands:
        lines.append(f"     {describe_value(operand.value)}")
        lines.append(f'       "{operand.quote}"')
        lines.append(f"       — {operand.citation.describe()}")
    return lines


def describe_value(value: Value) -> str:
    """A value in words: `(1,577), a negative figure (millions) — Purchases of PP&E, 2018`."""
    text = value.text
    if value.number is not None and value.number < 0 and text.strip().startswith("("):
        text += ", a negative figure"
    unit = " ".join(u for u in (value.unit if value.unit not in (None, "%") else None, value.scale) if u)
    if unit and not _states_unit(value):
        text += f" ({unit})"
    where = ", ".join(p for p in (value.row, value.column) if p)
    return f"{text} — {where}" if where else text


def _states_unit(value: Value) -> bool:
    """Whether the value's text already says its unit and scale ("$396 million", "45 minutes")."""
    said = value.text.casefold()
    scale_said = value.scale is None or value.scale.rstrip("s") in said
    unit_said = value.unit is None or value.unit.casefold() in said or any(c in said for c in "$€£¥")
    return scale_said and unit_said


def candidate_lines(result: PartResult) -> list[str]:
    if not result.candidates:
        return [f"   No candidates: {result.note}."]
    lines = []
    for candidate in result.candidates:
        lines.append(f"   [{candidate.rank}] {candidate.score:6.2f}  {candidate.location.describe()}")
        lines.append(f"       {candidate.text}")
    return lines


def selection_lines(selection: Selection | None) -> list[str]:
    """The scorer's ranking of the sentences shown to the model, and the model's choice."""
    if selection is None:
        return []
    lines = [f"   Sentences shown, ranked by the scorer ({selection.scorer}):"]
    for unit in selection.shown:
        semantic = "" if unit.semantic is None else f", cosine {unit.semantic:.2f}"
        demoted = f"  (demoted: {unit.demoted})" if unit.demoted else ""
        lines.append(
            f"     {unit.rank}. {unit.label} sentence {unit.sentence}  {unit.score:.4f} (BM25 "
            f"{unit.lexical:.2f}{semantic})  {unit.location.brief()}{demoted}"
        )
        lines.append(f"        {unit.text}")
    lines.append(f"   {selection.describe()}")
    return lines


def timing(answer: Answer) -> str:
    scorer = f"scorer {answer.selection.seconds * 1000:.0f} ms; " if answer.selection else ""
    call = answer.call
    if call is None:
        return f"{scorer}no model call"
    tokens = "" if call.prompt_tokens is None else f", prompt {call.prompt_tokens} tokens"
    if call.cached_tokens:
        tokens += f" ({call.cached_tokens} cached)"
    if call.completion_tokens is not None:
        tokens += f", {call.completion_tokens} generated"
    if call.label_confidence is not None:
        tokens += f", label probability {call.label_confidence:.2f}"
    return f"{scorer}model {call.seconds * 1000:.0f} ms{tokens}"
