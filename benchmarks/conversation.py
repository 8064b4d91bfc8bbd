"""What a follow-up's rewrite costs (issue 40): the rules on every turn of the conversation
suites (evals/conversations), and with `--model`, a language model's rewrite of the follow-ups the
rules leave undecided (and of every follow-up with `--every`, to have enough to time).

    python -m benchmarks.conversation                      # rules only: ms per turn
    python -m benchmarks.conversation --model embedded     # and the embedded model's rewrites

Earlier turns are the suites' own questions as asked (no answers: the rules do not need them for
timing), so no index is read. Each figure is printed with the machine's 1-minute load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from localqa.conversation import Turn, is_follow_up, model_rewrite, rewrite, rule_rewrite
from localqa.evaluate.conversations import load_conversations
from localqa.settings import AnswerSettings
from localqa.types import Caller

SUITES = (Path("evals/conversations/library"), Path("evals/conversations/tenants"))
REPEATS = 50


def conversations() -> list[list[tuple[str, Caller]]]:
    found = []
    for folder in SUITES:
        for case in load_conversations(folder).conversations:
            found.append(
                [
                    (t.question, Caller(role=t.role or case.role, tenant=t.tenant or case.tenant))
                    for t in case.turn
                ]
            )
    return found


def time_rules(suite: list[list[tuple[str, Caller]]]) -> list[float]:
    """Milliseconds per turn of `rewrite` without a model, each the median of REPEATS runs."""
    rewrite(
        "And EQ-502?",
        [Turn("What is the loan limit for EQ-314?", "What is the loan limit for EQ-314?", Caller())],
        Caller(),
    )  # warm the dictionary
    times = []
    for turns in suite:
        earlier: list[Turn] = []
        for question, caller in turns:
            runs = []
            for _ in range(REPEATS):
                started = time.perf_counter()
                made = rewrite(question, earlier, caller)
                runs.append((time.perf_counter() - started) * 1000)
            times.append(statistics.median(runs))
            earlier.append(Turn(question, made.standalone, caller))
    return times


def time_model(suite: list[list[tuple[str, Caller]]], spec: str, every: bool, limit: int) -> None:
    from localqa.models import get_model

    model = get_model(spec)
    settings = AnswerSettings()
    seconds_each: list[float] = []
    for turns in suite:
        earlier: list[Turn] = []
        for question, caller in turns:
            wanted = every or (earlier and rule_rewrite(question, earlier[-1]) is None)
            if earlier and is_follow_up(question) and wanted and len(seconds_each) < limit:
                started = time.perf_counter()
                made = model_rewrite(question, earlier, model, settings)
                seconds = time.perf_counter() - started
                seconds_each.append(seconds)
                shown = made.standalone if not isinstance(made, str) else f"refused: {made}"
                print(f"  {seconds:6.2f} s  {question!r} -> {shown!r}")
            earlier.append(Turn(question, rewrite(question, earlier, caller).standalone, caller))
    if seconds_each:
        print(
            f"model rewrite: median {statistics.median(seconds_each):.2f} s, "
            f"max {max(seconds_each):.2f} s over {len(seconds_each)} follow-ups (the first loads the model)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="also time this backend's rewrites (e.g. embedded)")
    parser.add_argument("--every", action="store_true", help="have the model rewrite every follow-up")
    parser.add_argument("--limit", type=int, default=10, help="at most this many model rewrites (default 10)")
    args = parser.parse_args()
    suite = conversations()
    print(f"load {os.getloadavg()[0]:.2f} · {sum(len(t) for t in suite)} turns in {len(suite)} conversations")
    times = time_rules(suite)
    print(
        f"rule rewrite per turn: median {statistics.median(times):.3f} ms, "
        f"p95 {sorted(times)[int(len(times) * 0.95)]:.3f} ms, max {max(times):.3f} ms (budget 5 ms)"
    )
    if args.model:
        print(f"model rewrites ({args.model}):")
        time_model(suite, args.model, args.every, args.limit)


if __name__ == "__main__":
    main()
