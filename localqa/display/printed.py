"""What the CLI prints as text: the header of a search or an answer, each part's candidates, its
answer with the value it gives, the sentences the model was shown and what it cost. Text only:
`localqa.shapes` holds the JSON shapes, and `localqa.cli` passes every line through
`localqa.display.terminal.visible` before it reaches a terminal."""

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
    """A part's first lines: its question, how it was read (`Reading`: a wrong reading shows before
    a wrong figure does), and why it was searched mainly in some documents."""
    return [
        "",
        f"{number}. {result.question}",
        *([f"   Read as: {result.reading.describe()}"] if result.reading else []),
        *([f"   ({result.route.why})"] if result.route else []),
    ]


def answer_lines(result: PartResult, answer: Answer) -> list[str]:
    """A part's answer: its value first when it has one (`value_lines`), the verified quote and its
    citation, other evidence; or why no quote was verified, the closest passage when the answer
    stage was only unsure (`closest_lines`), and the evidence retrieved."""
    if answer.verified and answer.citation is not None:
        if answer.value and (answer.value.derived or answer.value.listed):  # each cites its own quote
            lines = value_lines(answer.value)
        else:
            lines = value_lines(answer.value) if answer.value else []
            lines += [f'   "{answer.quote}"', f"   — {answer.citation.describe()}"]
            if answer.figure_note:  # the quote stands; the figure asked for could not be computed
                lines.append(f"   ({answer.figure_note})")
        if answer.other_evidence:
            lines.append("   Other evidence (other documents also match; check for a conflict):")
            lines += [f"     · {location.describe()}" for location in answer.other_evidence]
        return lines
    reason = f"model error: {answer.reason}" if answer.model_failed else answer.reason
    lines = [f"   No quote verified from {len(result.candidates)} candidates. Reason: {reason}."]
    lines += closest_lines(answer)
    if result.candidates:
        lines.append("   Evidence retrieved:")
        lines += candidate_lines(result)
    elif result.note:
        lines.append(f"   ({result.note})")
    return lines


def closest_lines(answer: Answer) -> list[str]:
    """A refusal's closest passage (`Answer.closest`) under its label, which claims nothing
    ('Closest passage, which does not mention "founded":'), the quote and its citation; nothing
    for any other answer."""
    closest = answer.closest
    if closest is None:
        return []
    return [f"   {closest.label()}:", f'     "{closest.quote}"', f"     — {closest.citation.describe()}"]


def value_lines(value: Value) -> list[str]:
    """`Answer: 45 minutes`; a table cell with its row, column and scale; a derived figure with its
    expression written out in the operands' values, and each operand's quote and citation; a list
    or a count with each item, its quote and its citation (`list_lines`); a comparison with each
    figure compared (`comparison_lines`)."""
    if value.listed:
        return list_lines(value)
    if value.comparison is not None:
        return comparison_lines(value)
    if not value.derived:
        return [f"   Answer: {describe_value(value)}"]
    from localqa.derived.computing import substituted  # a search never needs it

    operands = value.operands or ()
    lines = [
        f"   Answer: {describe_value(value)} = {substituted(value)}",
        f"   Computed by localqa from {len(operands)} verified figure(s), each a span of the passage quoted:",
    ]
    lines += _operand_lines(value)
    return lines + check_lines(value)


def check_lines(value: Value) -> list[str]:
    """The checks against the document's own arithmetic a computed figure passed
    (`localqa.derived.crosschecks`), one line: `Checked: one scale (millions); ...`."""
    return [f"   Checked: {'; '.join(value.checks)}"] if value.checks else []


EXTREMES = ("largest", "smallest")  # an extreme over rows (`localqa.derived.extremes`)
ITEMS_COMPARED = ("higher", "lower", "equal")  # two items in one period (`localqa.derived.pairs`)


def comparison_head(value: Value) -> str:
    """A comparison in one line: `declined — operating margin 36.82 % (FY2021) → 34.63 % (FY2022)`."""
    comparison = value.comparison
    assert comparison is not None
    if comparison.direction in EXTREMES:  # "Corporate bonds: 1,234 — the largest figure of 4 rows ..."
        return f"{value.row}: {value.text} — {comparison.rule}"
    if comparison.threshold is not None:  # a judgment: "0.80: below the 1.0 the glossary uses for ..."
        return f"{value.text}: {comparison.direction} {comparison.rule}"
    # Periods follow one another (→); two items in one period stand side by side (vs).
    joiner = " vs " if comparison.direction in ITEMS_COMPARED else " → "
    figures = joiner.join(f"{f.text} ({f.column})" if f.column else f.text for f in comparison.figures)
    if comparison.direction in ITEMS_COMPARED:  # the items' phrases label the figures already
        return f"{comparison.direction} — {figures}"
    return (
        f"{comparison.direction} — {value.row} {figures}"
        if value.row
        else f"{comparison.direction} — {figures}"
    )


def comparison_lines(value: Value) -> list[str]:
    """A comparison: its direction and figures, the rule it was judged by, then each figure with
    its expression written out and its operands' quotes and citations."""
    from localqa.derived.computing import substituted  # a search never needs it

    comparison = value.comparison
    assert comparison is not None
    extreme = comparison.direction in EXTREMES
    lines = [
        f"   Answer: {comparison_head(value)}",
        *([f"   (rule: {comparison.rule})"] if comparison.threshold is None and not extreme else []),
        f"   Compared by localqa: {len(comparison.figures)} figure(s), each computed from verified spans:",
    ]
    for figure in comparison.figures:
        label = figure.row if extreme else figure.column
        lines.append(f"   {label or ''}: {figure.text} = {substituted(figure)}")
        lines += _operand_lines(figure)
        lines += [f"  {line}" for line in check_lines(figure)]
    return lines


def _operand_lines(value: Value) -> list[str]:
    lines = []
    for operand in value.operands or ():
        lines.append(f"     {describe_value(operand.value)}")
        lines.append(f'       "{operand.quote}"')
        where = f"{operand.statement}, " if operand.statement else ""
        lines.append(f"       — {where}{operand.citation.describe()}")
    return lines


def list_lines(value: Value) -> list[str]:
    """A list answer as a short list: `Answer: 3 items listed` (a count: `Answer: at least 12, the
    items listed`), then each item with its verified quote and citation."""
    items = value.items or ()
    head = (
        f"{value.text}, counted from the items listed"
        if value.number is not None
        else f"{len(items)} item(s)"
    )
    lines = [f"   Answer: {head}, each a verified quote:"]
    for number, item in enumerate(items, start=1):
        lines.append(f"     {number}. {item.text}")
        if item.text != item.quote:
            lines.append(f'        "{item.quote}"')
        lines.append(f"        — {item.citation.describe()}")
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
