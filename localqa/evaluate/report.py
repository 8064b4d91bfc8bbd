"""Presenting runs: the terminal summary and the Markdown report."""

from __future__ import annotations

from localqa.evaluate.compare import Comparison
from localqa.evaluate.records import CaseRecord, Metric, Run, Totals
from localqa.terminal import visible


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
        ("Abstention correct", totals.abstention),
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
    return f"{status}  {case.id:<34} {_top(case)}{why}{known}{later}"


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
    if comparison is not None:
        lines.append("")
        lines += comparison_lines(comparison)
    return lines


def comparison_lines(comparison: Comparison) -> list[str]:
    lines = [f"Compared with {comparison.before}:"]
    for label, ids in (
        ("fixed", comparison.fixed),
        ("regressed", comparison.regressed),
        ("still blocking", comparison.still_blocking),
        ("new", comparison.new),
        ("dropped", comparison.dropped),
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
        "| case | result | stage | expected | retrieved #1 | text |",
        "|---|---|---|---|---|---|",
    ]
    for case in run.cases:
        top = case.candidates[0] if case.candidates else None
        text = _cell(top.text[:90]) if top else "—"
        result = "pass" if case.passed else "**fail**"
        expected = "; ".join(case.expect) or "nothing (abstain)"
        out.append(
            f"| {case.id} | {result} | {case.attribution or ''} | {_cell(expected)} | {_top(case)} | {text} |"
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


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
