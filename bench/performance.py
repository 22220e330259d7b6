"""Performance-view benchmark: server time of every performance page's reads and JSON API view.

    .venv/bin/python bench/performance.py                    # 100,000 page loads (small scale)
    .venv/bin/python bench/performance.py --loads 1000000    # the 1M goal (≤ 100 ms per view)
    .venv/bin/python bench/performance.py --loads 10000000   # the 10M goal (≤ 250 ms per view)

In a fresh embedded warehouse (own temporary data directory, every migration applied): N page loads of one
project over 30 days on 20 routes and 5 releases, from Chrome, Firefox and Safari (Safari without LCP/INP/CLS,
only Chrome with render-blocking status), each with 9 spans (3 scripts, a stylesheet, an image, the
DOMContentLoaded span and 3 API calls on 50 endpoints with ids in their paths
and a web font), plus N/5 server transactions,
all generated inside ClickHouse (`INSERT … SELECT … FROM numbers()`). Then the pipeline builds what the views
read (the performance assets' facts and states — pipelines.assets.performance.STATE_QUERIES — run day by day
as a backfill does; its time is printed, and the time of one incremental tick's hour). Then each view the
pages and the API serve (stacklens.performance: the same calls the routes make, without HTTP) runs CALLS
times, cycling through varied filters (24h / 7d / 14d / 30d windows, an explicit since/until window, browser,
environment and release filters); per view the median and the p95 in ms.

    .venv/bin/python bench/performance.py --loads 10000000 --data-dir /tmp/perf-10m   # keep and reuse

`--data-dir` keeps the warehouse: a second run skips the generation (the data keeps the clock of its first
run, and the views are timed against that clock), applies migrations added since, and builds again only the
pipeline tables whose queries are new or changed since (`--rebuild` builds them all again)."""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ORG, PROJECT, DAYS, CALLS = 1, 1, 30, 20
SPANS = 10  # per page load: 10 M page loads carry the goal's 100 M spans
from pipelines.assets.performance import STATE_QUERIES  # noqa: E402 - after the path insert above

# The pipeline queries that build what the views read: the performance assets' facts and states, in the order
# a step runs them for a range of hours.
FACT_QUERIES = list(STATE_QUERIES)

LOADS_SQL = """
INSERT INTO transactions (org_id, project_id, event_id, trace_id, timestamp, end_timestamp, received_at, release,
    environment, op, duration_ms, page, url, measurements, transaction, browser_name, os_name)
SELECT {org}, {project}, toUUID(concat('00000000-0000-4000-8000-', leftPad(lower(hex(number)), 12, '0'))), hex(number),
    now64(3) - toIntervalMillisecond(number * 7919 % {span_ms}) AS ts, ts, ts,
    concat('web@1.', toString(intDiv(number * 7919 % {span_ms}, intDiv({span_ms}, 5)))),
    if(number % 5 = 0, 'staging', 'production'), 'pageload', 300 + cityHash64(number) % 4000,
    concat('/page/', toString(number % 20)), concat('https://shop.test/page/', toString(number % 20)),
    if(b = 'Safari', map('ttfb', toFloat64(50 + number % 900), 'fcp', toFloat64(300 + number % 2500)),
       map('ttfb', toFloat64(50 + number % 900), 'fcp', toFloat64(300 + number % 2500),
           'lcp', toFloat64(500 + cityHash64(number, 1) % 5000), 'cls', (number % 40) / 100,
           'inp', toFloat64(20 + number % 700))),
    concat('/page/', toString(number % 20)), ['Chrome', 'Chrome', 'Firefox', 'Safari'][number % 4 + 1] AS b,
    ['Linux', 'Android', 'Windows', 'macOS'][number % 4 + 1]
FROM numbers({offset}, {count})
"""

SPANS_SQL = """
INSERT INTO spans (org_id, project_id, transaction_event_id, trace_id, span_id, timestamp, duration_ms, received_at,
    op, description, status_code, http_method, transaction_op, page, release, environment,
    response_content_length, decoded_content_length, transfer_size, render_blocking_status)
SELECT {org}, {project}, toUUID(concat('00000000-0000-4000-8000-', leftPad(lower(hex(t)), 12, '0'))), hex(t),
    hex(number), now64(3) - toIntervalMillisecond(t * 7919 % {span_ms}) + toIntervalMillisecond(k * 30) AS ts,
    20 + cityHash64(number) % 900, ts,
    ['resource.script', 'resource.script', 'resource.script', 'resource.css', 'resource.img',
     'browser.domContentLoadedEvent', 'http.client', 'http.client', 'http.client', 'resource.font'][k + 1],
    ['https://shop.test/static/app.js', 'https://shop.test/static/vendor.js', 'https://cdn.other.test/tag.js',
     'https://shop.test/static/site.css', concat('https://shop.test/img/p', toString(t % 40), '.png'),
     'https://shop.test/', concat('GET https://shop.test/api/items/', toString(t % 997)),
     concat('GET https://shop.test/api/e', toString(t % 50), '/', toString(t % 991)),
     'POST https://shop.test/api/cart', 'https://fonts.other.test/inter.woff2'][k + 1],
    if(k BETWEEN 6 AND 8, if(t % 40 = 0, 500, 200), 0), if(k BETWEEN 6 AND 8, 'GET', ''), 'pageload', concat('/page/', toString(t % 20)),
    concat('web@1.', toString(intDiv(t * 7919 % {span_ms}, intDiv({span_ms}, 5)))),
    if(t % 5 = 0, 'staging', 'production'),
    if(k = 5, NULL, 20000 + cityHash64(number) % 300000), if(k = 5, NULL, 60000 + cityHash64(number) % 600000),
    if(k = 5, NULL, 20300 + cityHash64(number) % 300000),
    if(k < 4 AND t % 4 < 2, if(k = 2, 'non-blocking', 'blocking'), '')
FROM (SELECT number, intDiv(number, {spans}) AS t, number % {spans} AS k FROM numbers({offset}, {count}))
"""

SERVER_SQL = """
INSERT INTO transactions (org_id, project_id, event_id, timestamp, end_timestamp, received_at, release, environment,
    op, duration_ms, page, http_method, http_status, transaction)
SELECT {org}, {project}, toUUID(concat('00000000-0000-4000-9000-', leftPad(lower(hex(number)), 12, '0'))),
    now64(3) - toIntervalMillisecond(number * 7919 % {span_ms}) AS ts, ts, ts, 'web@1.0', 'production',
    'http.server', 5 + cityHash64(number) % 1500, concat('/api/e', toString(number % 50), '/{{id}}'), 'GET',
    [200, 200, 200, 404, 500][number % 5 + 1], concat('/api/e', toString(number % 50), '/{{id}}')
FROM numbers({offset}, {count})
"""


def _generate(client: Any, loads: int) -> None:
    common = {"org": ORG, "project": PROJECT, "span_ms": DAYS * 86_400_000}
    chunk = 1_000_000  # bounded memory per statement on a small machine
    for start in range(0, loads, chunk):
        n = min(chunk, loads - start)
        client.command(LOADS_SQL.format(offset=start, count=n, **common))
        client.command(SPANS_SQL.format(offset=start * SPANS, count=n * SPANS, spans=SPANS, **common))
    client.command(SERVER_SQL.format(offset=0, count=max(loads // 5, 1), **common))


def _time(label: str, call: Callable[[Any], Any], filter_sets: list[Any]) -> dict[str, float]:
    call(filter_sets[0])  # the first call warms the parsed-query cache and the engine's marks
    samples = []
    for i in range(CALLS):
        filters = filter_sets[i % len(filter_sets)]
        started = time.perf_counter()
        call(filters)
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    p95 = samples[min(len(samples) - 1, math.ceil(0.95 * len(samples)) - 1)]
    out = {"median_ms": round(statistics.median(samples), 1), "p95_ms": round(p95, 1)}
    print(label, out, file=sys.stderr, flush=True)  # progress of long runs
    return out


def _views(client: Any, filter_sets: list[Any]) -> dict[str, Any]:
    """Each view's timings over the filter sets (what one page or API call runs)."""
    from stacklens.performance import endpoint_reads, page_load_reads, view_data

    timings: dict[str, Any] = {}
    for view in view_data.VIEWS:
        timings[view] = _time(
            view, lambda f, view=view: view_data.build(view, client, ORG, PROJECT, f), filter_sets
        )
    timings["pages+sparklines"] = _time(
        "pages+sparklines", lambda f: page_load_reads.sparklines(client, ORG, PROJECT, f), filter_sets
    )
    timings["facets"] = _time(
        "facets", lambda f: page_load_reads.facets(client, ORG, PROJECT, f), filter_sets
    )
    timings["page_detail"] = _time(
        "page_detail",
        lambda f: page_load_reads.page_detail(
            client, ORG, PROJECT, f, "/page/3"
        ),  # what the page detail route reads
        filter_sets,
    )
    timings["endpoint_detail"] = _time(
        "endpoint_detail",
        lambda f: endpoint_reads.endpoint_detail(client, ORG, PROJECT, f, "client", "GET", "/api/items/{id}"),
        filter_sets,
    )
    return timings


def _build(client: Any, now: datetime, queries: list[str]) -> dict[str, float]:
    """The pipeline's per-hour fill of what the views read, day by day over the data (a backfill), then one
    incremental tick's hour again (what a scheduled tick costs for an hour that received rows)."""
    from pipelines.warehouse_ops import run_insert
    from stacklens.performance.score import sql_parameters

    params = sql_parameters()
    end = now.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    day = end - timedelta(days=DAYS + 1)
    started = time.perf_counter()
    while day < end:
        bounds = {
            "start": day,
            "end": min(day + timedelta(days=1), end),
            "materialized_at": datetime.now(UTC),
        }
        for query in queries:
            run_insert(client, query, {**params, **bounds})
        day += timedelta(days=1)
    full_s = time.perf_counter() - started
    print(f"facts built in {full_s:.1f} s", file=sys.stderr, flush=True)
    hour = {
        "start": end - timedelta(hours=2),
        "end": end - timedelta(hours=1),
        "materialized_at": datetime.now(UTC),
    }
    started = time.perf_counter()
    for query in queries:
        run_insert(client, query, {**params, **hour})
    return {"facts_full_s": round(full_s, 1), "facts_hour_tick_s": round(time.perf_counter() - started, 2)}


def _filter_sets(now: datetime) -> list[Any]:
    from stacklens.view_filters import ViewFilters

    since = (now - timedelta(days=10)).strftime("%Y-%m-%dT%H:%M:%SZ")
    until = (now - timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return [
        ViewFilters.parse(range="7d", now=now),
        ViewFilters.parse(range="30d", now=now),
        ViewFilters.parse(range="24h", now=now),
        ViewFilters.parse(range="14d", browser="Chrome", now=now),
        ViewFilters.parse(range="30d", environment="staging", now=now),
        ViewFilters.parse(range="7d", browser="Safari", now=now),
        ViewFilters.parse(since=since, until=until, now=now),
        ViewFilters.parse(range="30d", release="web@1.2", now=now),
        ViewFilters.parse(range="30d", browser="Firefox", environment="production", now=now),
        ViewFilters.parse(range="14d", now=now),
    ]


def _insert_target(text: str) -> str:
    """The table an ``INSERT INTO <table> …`` pipeline query fills."""
    match = re.search(r"\bINSERT\s+INTO\s+(\w+)", text, re.IGNORECASE)
    if match is None:
        raise ValueError(f"not an INSERT query: {text[:80]!r}")
    return match.group(1)


def _prepare(client: Any, loads: int, data_dir: Path, rebuild: bool) -> dict[str, Any]:
    """Generate the data unless the kept data directory already holds it, then build the pipeline tables
    it lacks or whose queries changed; the marker file records the data's clock and the digest of each query
    that was built."""
    from stacklens.warehouse.queries import load_query

    marker = data_dir / "bench-performance.json"
    state: dict[str, Any] = json.loads(marker.read_text()) if marker.exists() else {}
    if state.get("loads") != loads:
        started = time.perf_counter()
        _generate(client, loads)
        state = {
            "loads": loads,
            "now": datetime.now(UTC).isoformat(),
            "generate_s": time.perf_counter() - started,
        }
        marker.write_text(json.dumps(state))
    now = datetime.fromisoformat(state["now"])
    texts = {q: load_query(f"pipelines/{q}") for q in FACT_QUERIES}
    digests = {q: hashlib.sha256(text.encode()).hexdigest() for q, text in texts.items()}
    targets = {q: _insert_target(text) for q, text in texts.items()}
    built_before = state.get("built", {}) if isinstance(state.get("built"), dict) else {}
    stale = {targets[q] for q in FACT_QUERIES if rebuild or built_before.get(q) != digests[q]}
    # A table filled by several queries (hours, days, blocks) is built again whole when any of them changed.
    missing = [q for q in FACT_QUERIES if targets[q] in stale]
    for table in stale:  # start each rebuilt table empty, not beside old rows
        client.command(f"TRUNCATE TABLE IF EXISTS {table}")
    built = _build(client, now, missing) if missing else {}
    state["built"] = digests
    marker.write_text(json.dumps(state))
    return {"now": now, "generate_s": round(state["generate_s"], 1), **built}


def run(loads: int, keep_dir: Path | None = None, rebuild: bool = False) -> dict[str, Any]:
    from stacklens.performance.waterfall import waterfall
    from stacklens.settings import Settings
    from stacklens.warehouse.client import get_warehouse, reset_clients
    from stacklens.warehouse.migrations import apply_migrations

    data_dir = keep_dir or Path(tempfile.mkdtemp(prefix="stacklens-bench-performance-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    settings = Settings(data_dir=data_dir, warehouse_database="bench", run_schedules=False)
    apply_migrations(settings)
    client = get_warehouse(settings)
    prepared = _prepare(client, loads, data_dir, rebuild)
    now = prepared.pop("now")
    rows = {
        t: int(client.query(f"SELECT count() FROM {t}").result_rows[0][0])  # noqa: S608 - two fixed names
        for t in ("transactions", "spans")
    }
    event_id = str(
        client.query("SELECT toString(any(event_id)) FROM transactions WHERE op = 'pageload'").result_rows[0][
            0
        ]
    )
    views_ms = _views(client, _filter_sets(now))
    views_ms["waterfall"] = _time("waterfall", lambda f: waterfall(client, ORG, PROJECT, event_id), [None])
    reset_clients()
    if keep_dir is None:
        shutil.rmtree(data_dir, ignore_errors=True)
    worst = max(v["p95_ms"] for v in views_ms.values())
    return {
        "loads": loads,
        "rows": rows,
        **prepared,
        "calls": CALLS,
        "views": views_ms,
        "worst_p95_ms": worst,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--loads", type=int, action="append", help="page loads (repeatable; default 100000)")
    parser.add_argument("--data-dir", type=Path, help="keep the warehouse here and reuse it on the next run")
    parser.add_argument("--rebuild", action="store_true", help="build every pipeline table again")
    args = parser.parse_args()
    if args.data_dir and len(args.loads or []) > 1:
        parser.error("--data-dir keeps one data set: give one --loads")
    for loads in args.loads or [100_000]:
        print(json.dumps(run(loads, args.data_dir, args.rebuild), indent=1))


if __name__ == "__main__":
    main()
