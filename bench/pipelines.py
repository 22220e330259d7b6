"""Pipelines benchmark: full materialization, a tick after 10,000 new events, and issue freshness.

    .venv/bin/python bench/pipelines.py                 # 1M error events (default)
    .venv/bin/python bench/pipelines.py --size 10000000 # the 10M run
    .venv/bin/python bench/pipelines.py --size 1000000 --size 10000000

For each size N, in a fresh embedded warehouse (own temporary data directory, every migration applied):
N error events over 5 projects, 2,000 issues each and 14 days, plus N/10 transactions (70 % page loads
with web vitals on 20 routes, 30 % API requests) and 4 spans per page load (script, CSS, image, API call),
all generated inside ClickHouse with `INSERT … SELECT … FROM numbers()` (so the insert-time materialized
views run as they do at ingest). That history is received as it happened: each row 2 s after its timestamp,
the last ten minutes' rows ten minutes ago (a running service's stored data; had every row the same
received_at, the 30 s re-read overlap behind a watermark would make the first tick re-read all of it). Then it
times:

- full: every schedule due at once, from empty marts — what the embedded runner executes for a tick (one
  merged run of the requested jobs' assets, `run_schedules`);
- ticks: the embedded runner's ticks, each after 10,000 new error events (+1,000 transactions, 4,000 spans)
  with timestamps in the last ten minutes, received now, one in every issue — the schedules due in that minute
  of the hour (pipelines/schedules.py: the 5-minute and hourly jobs are staggered), executed as the runner
  executes them (one merged run): `:00` issues + daily counts + the performance facts and states, `:01` issues
  + daily counts alone (most minutes), `:02` … + budgets. The first tick (`:00`) is reported alone: the first
  insert after the bulk load lets the warehouse merge the bulk load's big parts of the insert-time aggregate
  tables (several seconds of work at 10M), which that tick shares the machine with. Then ROUNDS rounds of the
  three kinds; per kind the median and maximum. A tick's time varies by ±30 % on this machine (a fixed
  pure-Python loop varies by ±25 % from one second to the next; its median is printed as `reference_loop_s`),
  hence medians; the goals are read against the slowest kind;
- all marts at once: every schedule due in one run after 10,000 new events (ROUNDS times; what `stacklens
  pipelines run` executes, and what one tick cost before the schedules were staggered);
- freshness: one sentry-sdk error landed through the ingest service, then polling `issue_list` until the
  issue's event count includes it (the live counters are a materialized view, so no pipeline run is
  needed); p50 and max of 20.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PROJECTS, ISSUES_PER_PROJECT, DAYS = 5, 2000, 14
ROUNDS = 3  # rounds of the three tick kinds (and of all marts at once) after the first tick
# The tick kinds: a minute of the hour and what runs in it (pipelines/schedules.py).
TICK_KINDS = {":00": 0, ":01": 1, ":02": 2}

EVENTS_SQL = """
INSERT INTO events (org_id, project_id, event_id, issue_id, fingerprint, grouping_version, timestamp,
    received_at, platform, level, release, environment, service, title, culprit, exception_type,
    exception_value, in_app_frames, user_key, payload)
SELECT 1, 1 + number % {projects}, generateUUIDv4(number), cityHash64(p, f) % 4503599627370496, f, 'v1',
    now64(3) - toIntervalMillisecond(({offset} + number) * 7919 % {span_ms}) AS ts,
    {received}, 'python', 'error', concat('1.', toString(intDiv(number, 50000) % 8)),
    'production', 'web', concat('ValueError: bad value ', toString(number)), concat('app.views:view_', toString(i % 300)),
    'ValueError', concat('bad value ', toString(number)),
    [concat('app.views:view_', toString(i % 300)), concat('app.services:step_', toString(i % 40)), 'app.middleware:wrap'],
    concat('user-', toString(cityHash64(number) % 50000)), '{{}}'
FROM (SELECT number, 1 + number % {projects} AS p, (intDiv(number, {projects}) * 2654435761) % {issues} AS i,
             hex(cityHash64(p, i)) AS f FROM numbers({offset}, {count}))
"""

TX_SQL = """
INSERT INTO transactions (org_id, project_id, event_id, timestamp, end_timestamp, received_at, platform,
    release, environment, service, transaction, op, status, duration_ms, page, http_method, http_status,
    measurements, user_key, payload)
SELECT 1, 1 + number % {projects}, toUUID(concat('00000000-0000-4000-8000-', leftPad(lower(hex(number)), 12, '0'))), ts,
    ts + toIntervalMillisecond(toUInt32(dur)), {received}, 'javascript',
    concat('1.', toString(intDiv(number, 5000) % 8)), 'production', 'web', page,
    if(number % 10 < 7, 'pageload', 'http.server'), 'ok', dur, page, if(number % 10 < 7, '', 'GET'),
    if(number % 10 < 7, 0, if(number % 50 = 0, 500, 200)),
    if(number % 10 < 7, map('ttfb', dur * 0.2, 'lcp', dur * 0.9, 'cls', (number % 30) / 100, 'inp', 40 + number % 300),
       map()), concat('user-', toString(cityHash64(number) % 50000)), '{{}}'
FROM (SELECT number, now64(3) - toIntervalMillisecond(number * 6007 % {span_ms}) AS ts,
             200 + (cityHash64(number) % 4000) AS dur, concat('/page/', toString(number % 20)) AS page
      FROM numbers({offset}, {count}))
"""

SPANS_SQL = """
INSERT INTO spans (org_id, project_id, transaction_event_id, span_id, timestamp, duration_ms, received_at, op,
    description, status_code, http_method, transaction, transaction_op, page, release, environment, service,
    response_content_length, decoded_content_length, render_blocking_status)
SELECT 1, 1 + t % {projects}, toUUID(concat('00000000-0000-4000-8000-', leftPad(lower(hex(t)), 12, '0'))),
    hex(number), now64(3) - toIntervalMillisecond(t * 6007 % {span_ms}) + toIntervalMillisecond(k * 40) AS ts,
    20 + cityHash64(number) % 900, {received},
    ['resource.script', 'resource.css', 'resource.img', 'http.client'][k + 1],
    ['https://cdn.test/app.js', 'https://cdn.test/site.css', 'https://cdn.test/hero.png',
     concat('GET https://api.test/api/items/', toString(t % 997))][k + 1],
    if(k = 3, if(t % 40 = 0, 500, 200), 0), if(k = 3, 'GET', ''), concat('/page/', toString(t % 20)), 'pageload',
    concat('/page/', toString(t % 20)), concat('1.', toString(intDiv(t, 5000) % 8)), 'production', 'web',
    if(k = 3, NULL, 20000 + cityHash64(number) % 300000), NULL, if(k < 2, 'blocking', 'non-blocking')
FROM (SELECT number, intDiv(number, 4) AS t, number % 4 AS k FROM numbers({offset}, {count}))
WHERE t % 10 < 7
"""


def _generate(client: Any, offset: int, count: int, age_s: int, span_s: int, as_they_happen: bool) -> None:
    """``count`` error events from ``offset`` over the last ``span_s`` seconds and a tenth as many
    transactions with 4 spans per page load. ``as_they_happen``: each row received 2 s after its timestamp
    but no later than ``age_s`` ago (the history a running service has stored); else every row received
    ``age_s`` ago."""
    received = f"now64(3) - toIntervalSecond({int(age_s)})"
    if as_they_happen:
        received = f"least(ts + toIntervalSecond(2), {received})"
    common = {"projects": PROJECTS, "received": received, "span_ms": span_s * 1000}
    chunk = 2_000_000  # bounded memory per statement on a small machine
    for start in range(offset, offset + count, chunk):
        n = min(chunk, offset + count - start)
        client.command(EVENTS_SQL.format(offset=start, count=n, issues=ISSUES_PER_PROJECT, **common))
    tx_offset, tx_count = offset // 10, max(count // 10, 1)
    client.command(TX_SQL.format(offset=tx_offset, count=tx_count, **common))
    for start in range(tx_offset * 4, (tx_offset + tx_count) * 4, chunk):
        n = min(chunk, (tx_offset + tx_count) * 4 - start)
        client.command(SPANS_SQL.format(offset=start, count=n, **common))


def _materialize(settings: Any, minute: int | None = None) -> tuple[float, int, dict[str, float]]:
    """The schedules due in ``minute`` of the hour (None: every schedule), executed as the embedded runner
    executes a tick (one merged run); total seconds, runs executed and per-asset step seconds."""
    from datetime import UTC, datetime

    from pipelines.cron import cron_due
    from pipelines.definitions import definitions_for
    from pipelines.embedded import dagster_instance, run_schedules

    defs = definitions_for(settings)
    instance = dagster_instance(settings)
    now = datetime.now(UTC)
    schedules = list(defs.schedules or [])
    if minute is not None:
        at = now.replace(minute=minute, second=0, microsecond=0)
        schedules = [s for s in schedules if cron_due(s.cron_schedule, at)]
    per_step: dict[str, float] = {}
    try:
        started = time.perf_counter()
        outcomes = run_schedules(defs, schedules, instance, now)
        elapsed = time.perf_counter() - started
        failed = [o for o in outcomes if not o.success]
        if failed:
            raise SystemExit(f"run failed: {failed[0].job}: {failed[0].error}")
        run_ids = {o.run_id for o in outcomes if o.run_id}
        for run_id in run_ids:
            for stat in instance.get_run_step_stats(run_id):
                if stat.start_time and stat.end_time:
                    per_step[stat.step_key] = round(stat.end_time - stat.start_time, 2)
    finally:
        instance.dispose()
    # Asset steps only (the checks' steps are named <asset>_<check>).
    steps = {k: v for k, v in per_step.items() if not any(k.startswith(a + "_") for a in per_step if a != k)}
    return elapsed, len(run_ids), steps


def _reference_loop() -> float:
    """Median seconds of a fixed pure-Python loop (5 runs): how fast this machine runs right now."""
    times = []
    for _ in range(5):
        started, total = time.perf_counter(), 0
        for i in range(2_000_000):
            total += i * i
        times.append(time.perf_counter() - started)
    return round(statistics.median(times), 3)


def _sdk_error() -> dict[str, Any]:
    import sentry_sdk
    from sentry_sdk.transport import Transport

    class Keep(Transport):
        def __init__(self) -> None:
            super().__init__({})
            self.events: list[dict[str, Any]] = []

        def capture_envelope(self, envelope: Any) -> None:
            self.events += [i.payload.json for i in envelope.items if i.type == "event"]

    transport = Keep()
    client = sentry_sdk.Client(
        dsn="https://k@stacklens.invalid/1", transport=transport, default_integrations=False
    )
    with sentry_sdk.isolation_scope() as scope:
        scope.set_client(client)
        try:
            {"sku": 1}["missing-sku"]
        except KeyError as exc:
            sentry_sdk.capture_exception(exc)
    client.close()
    return transport.events[0]


def _freshness(settings: Any, client: Any, rounds: int = 20) -> list[float]:
    import orjson

    from stacklens.ingest.service import Attribution, ingest_batch

    payload = _sdk_error()
    line = orjson.dumps(
        {"v": 1, "type": "event", "ts": "2026-01-01T00:00:00Z", "app_key": "k", "payload": payload}
    )
    project = PROJECTS + 1
    query = "SELECT sum(events) FROM issue_list(project_id = {p:UInt64})"
    seen = int(client.query(query, parameters={"p": project}).result_rows[0][0] or 0)
    out = []
    for _ in range(rounds):
        started = time.perf_counter()
        ingest_batch(
            settings,
            1,
            line.replace(payload["event_id"].encode(), uuid.uuid4().hex.encode()),
            header_app_key=None,
            idempotency_key=None,
            resolve=lambda _k: Attribution(project, None, 1),
            take_events=lambda _n: None,
        )
        while int(client.query(query, parameters={"p": project}).result_rows[0][0] or 0) <= seen:
            time.sleep(0.005)
        out.append(time.perf_counter() - started)
        seen += 1
    return out


def run(size: int) -> dict[str, Any]:
    from stacklens.control.db import migrate_control_store
    from stacklens.settings import Settings, override_settings
    from stacklens.warehouse.client import get_warehouse, reset_clients
    from stacklens.warehouse.migrations import apply_migrations

    data_dir = Path(tempfile.mkdtemp(prefix="stacklens-bench-pipelines-"))
    settings = Settings(data_dir=data_dir, warehouse_database="bench", run_schedules=False)
    override_settings(settings)
    migrate_control_store(settings)
    apply_migrations(settings)
    client = get_warehouse(settings)
    started = time.perf_counter()
    # History received as it happened (each row 2 s after its timestamp, the last ten minutes' rows 10 minutes
    # ago): a tick re-reads what arrived in the 30 s overlap before its watermark, not the whole history.
    _generate(client, 0, size, age_s=600, span_s=DAYS * 86400, as_they_happen=True)
    build_s = time.perf_counter() - started
    rows = {
        t: int(client.query(f"SELECT count() FROM {t}").result_rows[0][0])  # noqa: S608 - constant names
        for t in ("events", "transactions", "spans")
    }
    full_s, full_runs, full_steps = _materialize(settings)
    # New data arrives as it happens: timestamps in the last 10 minutes, received now, one event in every
    # issue.
    offset = size

    def tick(minute: int | None) -> tuple[float, dict[str, float]]:
        nonlocal offset
        _generate(client, offset, 10_000, age_s=0, span_s=600, as_they_happen=False)
        offset += 10_000
        seconds, _, steps = _materialize(settings, minute)
        return seconds, steps

    first_s, first_steps = tick(TICK_KINDS[":00"])
    kinds: dict[str, list[tuple[float, dict[str, float]]]] = {k: [] for k in TICK_KINDS}
    at_once: list[float] = []
    for _ in range(ROUNDS):
        for kind, minute in TICK_KINDS.items():
            kinds[kind].append(tick(minute))
        at_once.append(tick(None)[0])
    medians = {k: round(statistics.median(t for t, _ in v), 2) for k, v in kinds.items()}
    maxima = {k: round(max(t for t, _ in v), 2) for k, v in kinds.items()}
    fresh = _freshness(settings, client)
    reference_s = _reference_loop()
    reset_clients()
    override_settings(None)
    shutil.rmtree(data_dir, ignore_errors=True)
    return {
        "size": size,
        "raw_rows": rows,
        "build_s": round(build_s, 1),
        "full_materialization_s": round(full_s, 2),
        "full_runs": full_runs,
        "full_assets_s": full_steps,
        "first_tick_s": round(first_s, 2),
        "first_tick_assets_s": first_steps,
        "ticks_s": {k: [round(t, 2) for t, _ in v] for k, v in kinds.items()},
        "tick_median_s": medians,
        "tick_max_s": maxima,
        "tick_assets_s": {k: max(v, key=lambda t: t[0])[1] for k, v in kinds.items()},
        "slowest_kind_median_s": max(medians.values()),
        "tick_max_overall_s": max(maxima.values()),
        "all_at_once_s": [round(t, 2) for t in at_once],
        "all_at_once_median_s": round(statistics.median(at_once), 2),
        "reference_loop_s": reference_s,
        "freshness_p50_ms": round(statistics.median(fresh) * 1000, 1),
        "freshness_max_ms": round(max(fresh) * 1000, 1),
    }


def main() -> int:
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    logging.getLogger("dagster").setLevel(logging.WARNING)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--size", type=int, action="append", help="error events (default 1,000,000); repeatable"
    )
    args = parser.parse_args()
    sizes = args.size or [1_000_000]
    if len(sizes) == 1:
        print(json.dumps(run(sizes[0])), flush=True)
        return 0
    # One process per size: the embedded engine opens one data directory per process.
    results = []
    for size in sizes:
        done = subprocess.run(
            [sys.executable, __file__, "--size", str(size)], capture_output=True, text=True, check=False
        )
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode != 0 or not lines:
            print(done.stderr[-3000:], file=sys.stderr)
            return 1
        result = json.loads(lines[-1])
        results.append(result)
        print(json.dumps(result), flush=True)
    if len(results) > 1:
        first, last = results[0], results[-1]
        for key in ("first_tick_s", "slowest_kind_median_s", "tick_max_overall_s", "all_at_once_median_s"):
            ratio = last[key] / first[key]
            print(f"{key}: at {last['size']:,} / at {first['size']:,} = {ratio:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
