"""The ingest cost of a project's data scrubbing rules (docs/scrubbing.md): events/s of the per-line path
(parse, built-in scrubbing, the project's rules, normalise, encode: ``prepare_lines``) on one core, with no
rules and with 5, on the sentry-sdk corpus of bench/ingest.py (errors with local variables, breadcrumbs, user
and request data; transactions with spans).

    .venv/bin/python bench/scrubbing.py                # 3,000 lines, 5 rounds each
    .venv/bin/python bench/scrubbing.py --events 10000

Each round prepares the whole corpus with fresh event ids; the median round is printed, in events per CPU
second of this process (the figure a core gives when it is not shared). Two sets of five rules: on named
fields (the user's e-mail hashed, e-mails masked in messages, bearer tokens in headers, a customer-id pattern
hashed in `extra`, the user's IP removed), and with e-mails masked in every string (`$string`, which walks
every string of every payload) beside bearer tokens in headers, the pattern, the IP and card numbers in frame
variables.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ingest import build_corpus, fresh_ids  # noqa: E402 - after the path is set
from stacklens.ingest.prepare import prepare_lines  # noqa: E402
from stacklens.ingest.prepared_rows import Attribution, BatchContext  # noqa: E402
from stacklens.scrubbing.apply import NO_RULES, ScrubRules  # noqa: E402
from stacklens.scrubbing.rules import RuleSpec, check_rules  # noqa: E402

APP_KEY = "stacklens_app_bench_scrubbing_key_0000000000"
# Five rules on named fields: what a project that knows where its personal data goes writes.
TARGETED = [
    RuleSpec("hash", "email", None, "user.email"),
    RuleSpec("mask", "email", None, "$error.value || $message"),
    RuleSpec("mask", "bearer", None, "$http.headers"),
    RuleSpec("hash", "pattern", r"cust_(\d+)", "extra.*"),
    RuleSpec("remove", "ip", None, "user"),
]
# Five rules, one of them on every string of every payload: the costliest kind.
FIVE = [
    RuleSpec("mask", "email", None, "$string"),
    RuleSpec("mask", "bearer", None, "$http.headers"),
    RuleSpec("hash", "pattern", r"cust_(\d+)", "extra.*"),
    RuleSpec("remove", "ip", None, "user"),
    RuleSpec("mask", "credit_card", None, "$frame.vars"),
]


def rate(lines: list[bytes], rules: ScrubRules) -> float:
    who = Attribution(1, None, 1, scrubbing=rules)
    context = BatchContext(org_id=1, batch_id=uuid.uuid4().hex, received=time.time(), header_app_key=APP_KEY)
    started = time.process_time()  # CPU seconds: a machine shared with other work skews wall time
    prepared = prepare_lines(lines, 1, context, lambda raw: who if raw == APP_KEY else None)
    elapsed = time.process_time() - started
    assert not prepared.rejected, prepared.rejected[:3]
    return len(lines) / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    corpus = build_corpus(args.events, APP_KEY)
    sets = {
        "0 rules": NO_RULES,
        "5 targeted": ScrubRules(tuple(check_rules(TARGETED)), b"bench-salt"),
        "5 with $string": ScrubRules(tuple(check_rules(FIVE)), b"bench-salt"),
    }
    figures: dict[str, list[float]] = {label: [] for label in sets}
    for _ in range(args.rounds):  # alternated, so a burst of load on a shared machine skews them alike
        for label, rules in sets.items():
            figures[label].append(rate(fresh_ids(corpus), rules))
    base = statistics.median(figures["0 rules"])
    print(
        f"{len(corpus)} lines (errors and transactions of sentry-sdk), median of {args.rounds} rounds, per CPU second"
    )
    for label, values in figures.items():
        median = statistics.median(values)
        print(
            f"{label:>14}: {median:8.0f} events/s  ({1e6 / median:6.0f} µs/event, {median / base:.0%} of 0 rules)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
