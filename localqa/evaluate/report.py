"""Presenting runs: the terminal summary and the Markdown report."""

from __future__ import annotations

from localqa.display.terminal import visible
from localqa.evaluate import refusals
from localqa.evaluate.compare import Comparison
from localqa.evaluate.records import CaseRecord, Metric, Run, Totals


def metric_rows(totals: Totals) -> list[tuple[str, str]]:
    metrics: list[tuple[str, Metric]] = [
        ("Retrieval hit@1", totals.hit_at_1),
        ("Retrieval recall@k", totals.recall),
        ("Retrieval MRR", totals.mrr),
        ("Context precision", totals.precision),
        ("No-answer correct", totals.no_answer),
    ]
    answers: list[tuple[str, Metric | None]] = [
        ("Answers verified", totals.verified),
        ("Citation correct", totals.citation_correct),
        ("Contains phrase", totals.contains_phrase),
        ("Value correct", totals.value_correct),
        ("Abstention correct", totals.abstention),
        ("Model overrode scorer", totals.overrode),
        ("Model decided", totals.model_decided),  # of the parts whose quote was chosen
    ]
    metrics += [(label, metric) for label, metric in answers if metric is not None]
    return [(label, _shown(metric)) for label, metric in metrics]


def _shown(metric: Metric) -> str:
    value = "n/a" if metric.value is None else f"{metric.value:.3f}"
    numerator = metric.numerator
    count = f"{numerator:g}" if float(numerator).is_integer() else f"{numerator:.2f}"
    return f"{value}  ({count}/{metric.denominator})"


def describe_config(run: Run) -> str:
    c = run.config
    r = c.retrieval
    model = (
        f"{c.model['backend']}:{c.model['name']}"
        if c.model
        else (f"recorded answers {c.answers_file}" if c.answers_file else "none (retrieval only)")
    )
    index = f" · index {c.index}" if c.index else ""
    return (
        f"suite {c.suite}{index} · retriever {r.retriever} k={r.k} chunking={r.chunking} "
        f"(k1={r.k1}, b={r.b}, neighbour={r.neighbour}) · model {model} · prompt {c.prompt_hash} · "
        f"corpus {c.corpus_digest[:12]} · localqa {c.localqa_version}"
    )


def case_line(case: CaseRecord) -> str:
    status = "PASS" if case.passed else "FAIL"
    why = "" if case.passed else f"  [{case.attribution or 'leak'}]"
    known = f"  (known failure: {case.known_failure})" if case.known_failure and not case.passed else ""
    deferred = not case.expect and case.candidates and case.answer is None and case.abstain_at == "answer"
    later = "  (no-answer: the answer stage decides)" if deferred else ""
    return f"{status}  {case.id:<34} {_top(case)}{why}{known}{later}{_wrong_value(case)}"


def terminal_summary(run: Run, comparison: Comparison | None) -> list[str]:
    totals = run.totals
    lines = [describe_config(run), ""]
    lines += [case_line(case) for case in run.cases]
    lines.append("")
    lines.append(f"Cases passed: {totals.passed}/{totals.cases}")
    lines += [f"{label + ':':<22}{value}" for label, value in metric_rows(totals)]
    lines.append("Failures by stage:    " + ", ".join(f"{k} {v}" for k, v in totals.attribution.items()))
    lines.append(f"Tenant/access leaks:  {totals.leaks} (gate: must be 0)")
    if totals.unverified_shown is not None:
        lines.append(f"Unverified shown:     {totals.unverified_shown} (gate: must be 0)")
    if totals.unchecked_figures is not None:
        lines.append(f"Unchecked figures shown: {totals.unchecked_figures} (gate: must be 0)")
    if totals.unchecked_items is not None:
        lines.append(f"Unchecked list items shown: {totals.unchecked_items} (gate: must be 0)")
    if totals.answer_stage is not None and run.holds_answers:
        lines.append(
            f"Answer stage failures: {totals.answer_stage} (gate: must be 0; a no-answer case shown a quote,"
            " a wrong value)"
        )
    lines += answer_stage_lines(totals)
    lines += refusal_lines(run)
    if comparison is not None:
        lines.append("")
        lines += comparison_lines(comparison)
    return lines


def answer_stage_lines(totals: Totals) -> list[str]:
    """Why values were wrong, and the answer stage set against retrieval's first passage."""
    lines = []
    causes = value_causes(totals)
    if causes is not None:
        lines.append(f"Wrong values by cause: {causes}")
    if totals.losses is not None and totals.rescues is not None:
        lines.append(
            f"Losses/rescues:       {totals.losses}/{totals.rescues} (first passage right, answer cites "
            "elsewhere / the reverse)"
        )
    waited = part_seconds(totals)
    if waited is not None:
        lines.append(f"Seconds per part:     {waited}")
    return lines


def part_seconds(totals: Totals) -> str | None:
    """The median and p90 seconds of an answered part, with what they count; None for a run
    that answered nothing."""
    spread = totals.part_seconds
    if spread is None:
        return None
    return (
        f"median {spread.median:.2f}, p90 {spread.p90:.2f} ({spread.parts} parts: the answer stage and "
        "its share of the search)"
    )


def refusal_lines(run: Run) -> list[str]:
    """Each kind of refusal as a classifier (`localqa.evaluate.refusals`), for a run that answered
    a suite with unanswerable cases; a refusal carrying its closest passage counts as refused, in
    the "closest" column."""
    answered = [c for c in run.cases if c.answer is not None]
    if not any(not c.expect for c in answered):
        return []
    found = refusals.table(
        [
            refusals.judged(
                bool(c.expect), c.answer.quote, c.answer.reason, c.answer.coverage, c.answer.doubts
            )
            for c in answered
            if c.answer is not None
        ]
    )
    return ["", *refusals.lines(found)] if found.rows else []


def value_causes(totals: Totals) -> str | None:
    """The count of wrong values by cause ("retrieval 1, quote 0, span 2, arithmetic 0"); None when
    no case states a value."""
    if totals.value_blame is None or not totals.value_correct or not totals.value_correct.denominator:
        return None
    return ", ".join(f"{cause} {count}" for cause, count in totals.value_blame.items())


def comparison_lines(comparison: Comparison) -> list[str]:
    lines = [f"Compared with {comparison.before}:"]
    for label, ids in (
        ("fixed", comparison.fixed),
        ("regressed", comparison.regressed),
        ("still blocking", comparison.still_blocking),
        ("new", comparison.new),
        ("dropped", comparison.dropped),
        ("value fixed", comparison.value_fixed),
        ("value regressed", comparison.value_regressed),
    ):
        if ids:
            lines.append(f"  {label} ({len(ids)}): {', '.join(ids)}")
    lines.append(f"  unchanged (passing): {len(comparison.unchanged)}")
    for key, (old, new) in comparison.config_changes.items():
        lines.append(f"  config {key}: {old} -> {new}")
    return lines


def markdown(run: Run, comparison: Comparison | None) -> str:
    totals = run.totals
    out = ["# localqa evaluation report", "", f"Configuration: {describe_config(run)}", ""]
    out += ["## Totals", "", "| metric | value (numerator/denominator) |", "|---|---|"]
    out += [f"| {label} | {value} |" for label, value in metric_rows(totals)]
    out.append(f"| Cases passed | {totals.passed}/{totals.cases} |")
    out.append(f"| Tenant/access leaks (gate) | {totals.leaks} |")
    if totals.unverified_shown is not None:
        out.append(f"| Unverified quotes shown (gate) | {totals.unverified_shown} |")
    if totals.unchecked_figures is not None:
        out.append(f"| Unchecked figures shown (gate) | {totals.unchecked_figures} |")
    if totals.unchecked_items is not None:
        out.append(f"| Unchecked list items shown (gate) | {totals.unchecked_items} |")
    if totals.answer_stage is not None and run.holds_answers:
        out.append(f"| Answer stage failures (gate) | {totals.answer_stage} |")
    causes = value_causes(totals)
    if causes is not None:
        out.append(f"| Wrong values by cause | {causes} |")
    if totals.losses is not None and totals.rescues is not None:
        out.append(f"| Answer stage losses / rescues | {totals.losses} / {totals.rescues} |")
    waited = part_seconds(totals)
    if waited is not None:
        out.append(f"| Seconds per part | {waited} |")
    if comparison is not None:
        out += ["", "## Before / after", ""]
        first, *rest = comparison_lines(comparison)
        out += [f"**{first}**", ""] + [f"- {line.strip()}" for line in rest]
    out += ["", "## Failures by stage", ""]
    out += [f"- **{kind}**: {count}" for kind, count in totals.attribution.items()]
    out += [
        "",
        "## Cases",
        "",
        "| case | result | stage | expected | retrieved #1 | text | sentence chosen | value |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for case in run.cases:
        top = case.candidates[0] if case.candidates else None
        text = _cell(top.text[:90]) if top else "—"
        result = "pass" if case.passed else "**fail**"
        expected = "; ".join(case.expect) or "nothing (abstain)"
        out.append(
            f"| {case.id} | {result} | {case.attribution or ''} | {_cell(expected)} | {_top(case)} | {text} "
            f"| {_choice(case)} | {_cell(_value(case))} |"
        )
    # Document text and file names are data, in a file that may well be printed on a terminal.
    return "\n".join(visible(line) for line in out) + "\n"


def _top(case: CaseRecord) -> str:
    """The first candidate of each part, or "no candidates"."""
    tops = []
    for number in range(1, len(case.parts) + 1):
        first = next((c for c in case.candidates if c.part == number), None)
        tops.append("no candidates" if first is None else first.location.brief())
    return " | ".join(tops)


def _choice(case: CaseRecord) -> str:
    """The answered part's choice among the sentences the scorer ranked: `P2 s3 (scorer's #1)`,
    `P1 s2 (scorer's #3: overrode)`, `none`; empty when no model answered."""
    selection = case.answer.selection if case.answer else None
    if selection is None:
        return ""
    choice = selection.choice
    if choice is None:
        return "none"
    overrode = ": overrode" if selection.overrode else ""
    return f"{choice.label} s{choice.sentence} (scorer's #{choice.rank}{overrode})"


def _value(case: CaseRecord) -> str:
    """The answer's value and its verdict: `'45 minutes' (right)`, `'1,373' (wrong: span)`."""
    answer = case.answer
    if answer is None:
        return ""
    shown = "none" if answer.value is None else repr(answer.value.text)
    if answer.value_correct is None:
        return shown if answer.value is not None else ""
    return f"{shown} (right)" if answer.value_correct else f"{shown} (wrong: {answer.value_blame})"


def _wrong_value(case: CaseRecord) -> str:
    answer = case.answer
    if answer is None:
        return ""
    unchecked = f"  (unchecked figure {answer.unchecked_figure})" if answer.unchecked_figure else ""
    if answer.unchecked_item:
        unchecked += f"  (unchecked list item {answer.unchecked_item})"
    if answer.value_correct is not False:
        return unchecked
    return f"  (value, {answer.value_blame}: {answer.value_why}){unchecked}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
