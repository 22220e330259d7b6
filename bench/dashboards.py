"""Time the server side of the issue list, the issue detail and the event history over a filled warehouse.

    .venv/bin/python bench/dashboards.py                 # 1M events over 500 issues (quick)
    .venv/bin/python bench/dashboards.py --events 10000000
    .venv/bin/python bench/dashboards.py --events 10000000 --keep /tmp/bench-10m   # fill once, rerun later

Events are generated inside ClickHouse (INSERT ... SELECT FROM numbers()), in a fresh embedded warehouse
under a temporary directory, so the run never touches a real installation. Prints p50 / p95 per read.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# This script's own name is `dashboards`: put the repository first so `dashboards` is the package.
sys.path[0] = str(Path(__file__).resolve().parents[1])

from stacklens.settings import Settings, override_settings  # noqa: E402 - after the path change above

FILL = """
INSERT INTO events (org_id, project_id, event_id, issue_id, fingerprint, grouping_version, timestamp, received_at,
    platform, level, release, environment, service, server_name, title, culprit, user_key, user_id, tags, payload)
SELECT 1, 1, generateUUIDv4(number), 1000 + number % {issues:UInt32}, concat('fp', toString(number % {issues:UInt32})),
    'v1', now64(3) - toIntervalSecond(number % (30 * 86400)), now64(3), 'python',
    ['error', 'warning', 'fatal'][1 + number % 3], concat('1.', toString(number % 7)),
    ['production', 'staging'][1 + number % 2], ['web', 'worker', ''][1 + number % 3], 'host-1',
    concat('ValueError: failure ', toString(number % {issues:UInt32})), 'app.views in handler',
    concat('u', toString(number % 5000)), concat('u', toString(number % 5000)),
    map('tenant', concat('t', toString(number % 20))),
    '{"exception":{"values":[{"type":"ValueError","value":"failure","stacktrace":{"frames":[{"filename":"app/views.py","function":"handler","lineno":10,"in_app":true}]}}]}}'
FROM numbers({start:UInt64}, {count:UInt64})
"""


def timed(label: str, func: Callable[[], object], runs: int) -> None:
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        func()
        samples.append((time.perf_counter() - began) * 1000)
    samples.sort()
    p95 = samples[max(0, int(len(samples) * 0.95) - 1)]
    print(f"{label:<36} p50 {statistics.median(samples):7.1f} ms   p95 {p95:7.1f} ms   ({runs} runs)")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--issues", type=int, default=500)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument(
        "--keep",
        type=Path,
        help="warehouse directory to fill once and reuse on later runs (timings after background merges)",
    )
    args = parser.parse_args()

    from stacklens.issues.events import IssueEvents
    from stacklens.issues.reads import IssueFilters, daily_counts, facet_values, issue_summary, list_issues
    from stacklens.warehouse.client import get_warehouse
    from stacklens.warehouse.migrations import apply_migrations

    place = contextlib.nullcontext(str(args.keep)) if args.keep else tempfile.TemporaryDirectory()
    with place as tmp:
        settings = Settings(
            data_dir=Path(tmp),
            warehouse_url=f"chdb://{tmp}/warehouse",
            warehouse_database="bench",
            secret_key="bench-secret-0123456789",
        )
        override_settings(settings)
        apply_migrations(settings)
        client = get_warehouse(settings)
        stored = client.query("SELECT count() FROM events").result_rows[0][0]
        if stored:
            print(f"reusing {stored:,} events in {tmp}")
        else:
            began = time.perf_counter()
            step = 1_000_000
            for start in range(0, args.events, step):
                client.command(
                    FILL,
                    parameters={
                        "issues": args.issues,
                        "start": start,
                        "count": min(step, args.events - start),
                    },
                )
            elapsed = time.perf_counter() - began
            print(f"filled {args.events:,} events over {args.issues} issues in {elapsed:.1f} s")

        def page(**kw: str) -> None:
            list_issues(client, 1, 1, IssueFilters(**kw).validate())

        deep = IssueFilters(sort="events", limit=25).validate()
        cursor = None
        for _ in range(10):  # walk ten pages in, to time a deep page
            deep.cursor = cursor or ""
            _, cursor = list_issues(client, 1, 1, deep)
        summary = issue_summary(client, 1, 1, 1000)
        assert summary is not None
        events = IssueEvents(client, 1, 1, 1000, summary.get("fingerprint") or "")
        latest = events.latest()
        assert latest is not None
        timed("issue list (14d, last seen)", lambda: page(), args.runs)
        timed(
            "issue list (env+level filters)",
            lambda: page(environment="production", level="error", range="30d"),
            args.runs,
        )
        timed("issue list (tag search)", lambda: page(query="tenant:t3"), args.runs)
        timed("issue list (page 10, by events)", lambda: list_issues(client, 1, 1, deep), args.runs)
        timed("issue list (sorted by users)", lambda: page(sort="users"), args.runs)

        def whole_page() -> None:
            # Everything the list page reads: the rows, their sparklines and the filter menus.
            filters = IssueFilters().validate()
            rows, _ = list_issues(client, 1, 1, filters)
            daily_counts(client, 1, 1, [int(r["issue_id"]) for r in rows], filters)
            facet_values(client, 1, 1, filters)

        timed("issue list page (rows+sparks+menus)", whole_page, args.runs)

        def detail() -> None:
            issue_summary(client, 1, 1, 1000)
            row = events.get(latest)
            events.neighbours(row)

        timed("issue detail (summary+event+nav)", detail, args.runs)
        timed("event history (first page)", lambda: events.history(), args.runs)
        override_settings(None)


if __name__ == "__main__":
    main()
