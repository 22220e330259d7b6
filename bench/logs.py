"""Logs search benchmark: the logs view's questions over 10,000,000 log records of one project.

    nice -n 10 .venv/bin/python bench/logs.py                                       # 1,000,000 records
    nice -n 10 .venv/bin/python bench/logs.py --records 10000000 --data-dir /work/data/logs-10m

In an embedded warehouse (its own data directory, the raw layer's migrations, a 90-day log retention so
nothing expires under the bench): N log records of one project over 30 days (about 14,000 an hour at 10 M),
from 8 services, 2 environments and 5 releases, severities weighted as services log (half info, a quarter
debug, 12 % warn, 9 % error, 1 % fatal, 1 % trace), bodies from ten templates with ids in them (one in ten
carries a token of its own), five attributes each (route, user, order, region, host), 40 % with a trace id
(four records a trace), all generated inside ClickHouse (`INSERT … SELECT … FROM numbers()`). `--data-dir`
keeps them: a second run skips the generation and asks its questions against the data's own clock.

Then each question runs CALLS times through :mod:`stacklens.logs.search` — what `GET
/api/projects/{slug}/logs` and the Logs page run, without HTTP — with the parameters varied from call to
call (other words, other services, other users); per question the median and p95 wall time in ms and the
median CPU time of this process (the engine runs in it; a loaded machine does not inflate CPU time). "page"
questions are one page of 50 records newest first; "chart" questions are the volume-by-severity chart of
the same filters; "view" is what one load of the Logs page asks (page, chart, services, the page's trace
links). Goal: every search p95 ≤ 500 ms."""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ORG, PROJECT, DAYS, CALLS, PAGE = 1, 1, 30, 20, 50

# One record per number n, over DAYS days back from the insert: the view's own columns, as ingest writes them.
LOGS_SQL = """
INSERT INTO logs (org_id, project_id, timestamp, observed, severity, severity_number, severity_text, body,
    attributes, trace_id, span_id, service, release, environment, source, received, batch_id, dedup_key)
SELECT {org}, {project}, now64(6) - toIntervalMicrosecond((number * 7919 % {span_ms}) * 1000 + number % 997) AS ts,
    ts, level.1, level.2, upper(level.1),
    multiIf(
        number % 10 = 0, concat('GET /orders/', toString(number % 100000), ' answered 200 in ',
                                toString(number % 900), ' ms'),
        number % 10 = 1, concat('payment provider declined the card for cart ', toString(number % 50000)),
        number % 10 = 2, concat('cache miss for key user:', toString(number % 20000)),
        number % 10 = 3, concat('user ', toString(number % 50000), ' signed in from 10.0.',
                                toString(number % 255), '.', toString(number % 253)),
        number % 10 = 4, 'connection pool exhausted, waiting for a free connection',
        number % 10 = 5, concat('job ', toString(number % 700), ' finished in ', toString(number % 60000), ' ms'),
        number % 10 = 6, concat('reserved ', toString(number % 7 + 1), ' items of sku-', toString(number % 3000)),
        number % 10 = 7, concat('email queued for order ', toString(number % 100000)),
        number % 10 = 8, concat('slow query on orders: ', toString(200 + number % 5000), ' ms'),
        concat('request ', lower(hex(cityHash64(number, 3))), ' completed')),
    map('http.route', ['/orders/{{id}}', '/carts/{{id}}', '/checkout', '/search', '/login'][number % 5 + 1],
        'user.id', concat('u-', toString(number % 50000)), 'order.id', toString(number % 100000),
        'region', ['eu', 'us', 'ap'][number % 3 + 1], 'host.name', concat('web-', toString(number % 12))),
    if(number % 5 < 2, lower(hex(MD5(toString(intDiv(number, 4))))), ''),
    if(number % 5 < 2, leftPad(lower(hex(cityHash64(number))), 16, '0'), ''),
    ['checkout', 'cart', 'orders', 'payments', 'search', 'auth', 'inventory', 'email'][number % 8 + 1],
    concat('shop@1.', toString(intDiv(number * 7919 % {span_ms}, intDiv({span_ms}, 5)))),
    if(number % 5 = 0, 'staging', 'production'), 'otlp', ts, 'bench', lower(hex(MD5(toString(number))))
FROM (
    SELECT number, multiIf(roll < 25, ('debug', 5), roll < 75, ('info', 9), roll < 87, ('warn', 13),
                           roll < 96, ('error', 17), roll < 97, ('fatal', 21), ('trace', 1)) AS level
    FROM (SELECT number, cityHash64(number, 1) % 100 AS roll FROM numbers({offset}, {count}))
)
"""


def _generate(client: Any, rows: int) -> None:
    common = {"org": ORG, "project": PROJECT, "span_ms": DAYS * 86_400_000}
    chunk = 1_000_000  # bounded memory per statement on a small machine
    for start in range(0, rows, chunk):
        client.command(LOGS_SQL.format(offset=start, count=min(chunk, rows - start), **common))
        print(f"logs: {min(start + chunk, rows):,} rows", file=sys.stderr, flush=True)


def _prepare(client: Any, records: int, data_dir: Path) -> dict[str, Any]:
    """Generate the records unless the kept data directory holds them (generated backwards from the time of
    their insert over 30 days; the questions ask of the 30 days before the end of the generation)."""
    marker = data_dir / "bench-logs.json"
    state: dict[str, Any] = json.loads(marker.read_text()) if marker.exists() else {}
    if state.get("records") == records:
        return state
    state = {"records": records}
    started = time.perf_counter()
    client.command("TRUNCATE TABLE logs")
    _generate(client, records)
    client.command("OPTIMIZE TABLE logs FINAL")  # what background merges reach on a table left alone
    state["generate_s"] = round(time.perf_counter() - started, 1)
    state["now"] = datetime.now(UTC).isoformat()  # after the last row: every row lies before the clock
    marker.write_text(json.dumps(state))
    return state


def _settle(client: Any) -> float:
    """Wait for the table's mutations (a migration materializing a column or an index over stored records:
    until they finish, searches compute what they would read). Returns the seconds waited."""
    started = time.perf_counter()
    while True:
        pending = client.query(
            "SELECT count() FROM system.mutations WHERE database = currentDatabase() AND table = 'logs' "
            "AND NOT is_done"
        ).result_rows[0][0]
        if not pending:
            return round(time.perf_counter() - started, 1)
        time.sleep(2)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _time(label: str, call: Callable[[int], Any]) -> dict[str, float]:
    """Median and p95 wall time of CALLS calls (each with its own parameters), and the median CPU time."""
    call(CALLS)  # the first call warms the parsed-query cache and the engine's marks
    samples, cpu = [], []
    for i in range(CALLS):
        started, used = time.perf_counter(), _cpu()
        call(i)
        samples.append((time.perf_counter() - started) * 1000)
        cpu.append((_cpu() - used) * 1000)
    samples.sort()
    p95 = samples[min(len(samples) - 1, math.ceil(0.95 * len(samples)) - 1)]
    out = {
        "median_ms": round(statistics.median(samples), 1),
        "p95_ms": round(p95, 1),
        "cpu_median_ms": round(statistics.median(cpu), 1),
        "load_average": round(os.getloadavg()[0], 1),
    }
    print(f"{label:<58} {out}", file=sys.stderr, flush=True)
    return out


def _questions(client: Any, now: datetime) -> dict[str, Any]:
    from stacklens.logs.search import LogFilters, log_services, log_volume, search_logs
    from stacklens.logs.traces import trace_transactions

    # Words of records that exist: tokens of one record each, users, services (what a user pastes).
    tokens = [
        row[0].split()[1]
        for row in client.query(
            "SELECT body FROM logs WHERE body LIKE 'request % completed' ORDER BY cityHash64(body) LIMIT 41"
        ).result_rows
    ]
    services = ["checkout", "cart", "orders", "payments", "search", "auth", "inventory", "email"]

    def filters(i: int, **given: str) -> Any:
        return LogFilters.parse(now=now, **given)

    def page(i: int, **given: str) -> Any:
        return search_logs(client, ORG, PROJECT, filters(i, **given), limit=PAGE)

    def chart(i: int, **given: str) -> Any:
        return log_volume(client, ORG, PROJECT, filters(i, **given))

    def view(i: int, **given: str) -> Any:
        chosen = filters(i, **given)
        found = search_logs(client, ORG, PROJECT, chosen, limit=PAGE)
        log_volume(client, ORG, PROJECT, chosen)
        log_services(client, ORG, PROJECT, chosen)
        since, until = chosen.window.since, chosen.window.until
        trace_transactions(client, ORG, PROJECT, [r.trace_id for r in found.rows], since, until)
        return found

    # The cursor of pages 2–6 of the newest records of 7 days (a reader paging back).
    cursors: list[str] = []
    cursor = ""
    for _ in range(5):
        cursor = (
            search_logs(client, ORG, PROJECT, filters(0, range="7d"), cursor=cursor, limit=PAGE).next_cursor
            or ""
        )
        cursors.append(cursor)

    def older(i: int) -> Any:
        return search_logs(client, ORG, PROJECT, filters(i, range="7d"), cursor=cursors[i % 5], limit=PAGE)

    def user(i: int) -> str:
        return f"u-{4000 + i * 7}"

    questions: dict[str, tuple[str, Callable[[int], Any]]] = {
        "page_newest_24h": ("page: newest records, 24 h", lambda i: page(i)),
        "page_newest_30d": ("page: newest records, 30 d", lambda i: page(i, range="30d")),
        "page_older_7d": ("page: pages 2–6 by cursor, 7 d", older),
        "page_severity_7d": (
            "page: severity error,fatal, 7 d",
            lambda i: page(i, range="7d", severity="error,fatal"),
        ),
        "page_service_7d": ("page: one service, 7 d", lambda i: page(i, range="7d", service=services[i % 8])),
        "page_common_word_30d": (
            "page: body 'declined' (10 % of records), 30 d",
            lambda i: page(i, range="30d", query="declined"),
        ),
        "page_rare_token_30d": (
            "page: a token of one record, 30 d",
            lambda i: page(i, range="30d", query=tokens[i]),
        ),
        "page_attribute_30d": (
            "page: attribute value (a user, 200 records), 30 d",
            lambda i: page(i, range="30d", query=user(i)),
        ),
        "page_no_match_30d": (
            "page: text found nowhere, 30 d",
            lambda i: page(i, range="30d", query=f"no-such-text-{i}"),
        ),
        "page_all_filters_7d": (
            "page: text + severity + service, 7 d",
            lambda i: page(i, range="7d", query="order", severity="warn,error", service=services[i % 8]),
        ),
        "chart_24h": ("chart: 24 h", lambda i: chart(i)),
        "chart_30d": ("chart: 30 d", lambda i: chart(i, range="30d")),
        "chart_severity_service_30d": (
            "chart: severity + service, 30 d",
            lambda i: chart(i, range="30d", severity="error", service=services[i % 8]),
        ),
        "chart_common_word_30d": (
            "chart: body 'declined', 30 d",
            lambda i: chart(i, range="30d", query="declined"),
        ),
        "chart_rare_token_30d": (
            "chart: a token of one record, 30 d",
            lambda i: chart(i, range="30d", query=tokens[i]),
        ),
        "chart_attribute_30d": (
            "chart: attribute value (a user), 30 d",
            lambda i: chart(i, range="30d", query=user(i)),
        ),
        "view_24h": ("view: the page as it opens (24 h)", lambda i: view(i)),
        "view_search_7d": ("view: a user searched, 7 d", lambda i: view(i, range="7d", query=user(i))),
        "view_common_word_30d": (
            "view: 'declined' + severity, 30 d",
            lambda i: view(i, range="30d", query="declined", severity="info,warn"),
        ),
    }
    return {key: _time(label, call) for key, (label, call) in questions.items()}


def run(records: int, keep_dir: Path | None = None, generate_only: bool = False) -> dict[str, Any]:
    from stacklens.settings import Settings
    from stacklens.warehouse.client import get_warehouse, release_client
    from stacklens.warehouse.migrations import apply_migrations

    data_dir = keep_dir or Path(tempfile.mkdtemp(prefix="stacklens-bench-logs-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    settings = Settings(
        data_dir=data_dir, warehouse_database="bench", run_schedules=False, log_retention_days=90
    )
    apply_migrations(settings, up_to=99)  # the raw layer: `logs`, and the tables a record's trace links to
    client = get_warehouse(settings)
    state = _prepare(client, records, data_dir)
    result: dict[str, Any] = {"records": records, "generate_s": state.get("generate_s")}
    result["mutations_waited_s"] = _settle(client)
    if not generate_only:
        now = datetime.fromisoformat(state["now"])
        result["rows"] = int(client.query("SELECT count() FROM logs").result_rows[0][0])
        parts = client.query(
            "SELECT sum(data_compressed_bytes), sum(data_uncompressed_bytes) FROM system.parts "
            "WHERE active AND database = currentDatabase() AND table = 'logs'"
        ).result_rows[0]
        result["compressed_mib"], result["uncompressed_mib"] = (
            round(parts[0] / 2**20),
            round(parts[1] / 2**20),
        )
        result["calls"] = CALLS
        result["questions"] = _questions(client, now)
    release_client(settings.resolved_warehouse_url, settings.warehouse_database)
    if keep_dir is None:
        shutil.rmtree(data_dir, ignore_errors=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=1_000_000, help="log records (default 1,000,000)")
    parser.add_argument("--data-dir", type=Path, help="keep the warehouse here and reuse it on the next run")
    parser.add_argument(
        "--generate-only", action="store_true", help="generate the data (with --data-dir) and stop"
    )
    args = parser.parse_args()
    result = run(args.records, args.data_dir, args.generate_only)
    print(json.dumps(result, indent=2))
    worst = max((q["p95_ms"] for q in result.get("questions", {}).values()), default=0.0)
    if result.get("questions"):
        print(f"worst p95: {worst:.0f} ms (goal ≤ 500 ms)", file=sys.stderr)


if __name__ == "__main__":
    main()
