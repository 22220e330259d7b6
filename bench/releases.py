"""Release health benchmark: server time of the releases list and of one release's page (what the pages and
the releases API run), with N sessions over 90 days and R releases.

    .venv/bin/python bench/releases.py                                  # 1 M sessions, 100 releases
    .venv/bin/python bench/releases.py --sessions 10000000              # the goal: p95 <= 100 ms each
    .venv/bin/python bench/releases.py --sessions 10000000 --data-dir /tmp/rel-10m   # keep and reuse

In a fresh embedded warehouse (own temporary data directory, every migration applied), generated inside
ClickHouse (`INSERT … SELECT … FROM numbers()`): N sessions of one project over 90 days, release after
release (each of the R releases runs for 90 / R days), in two environments — a third as browser-style
session updates (an init, then exited or crashed, with a user id from a pool of N / 20), two thirds as
server-style aggregates (one row per minute, release, environment and status with its quantity) — and P
page loads (the performance benchmark's generator, bench/performance.py, 5 of the releases). Then the
pipelines build what the pages read: the performance facts and states and the session states
(`session_periods`, its asset's queries), day by day as a backfill does; both times are printed. Then the
list (stacklens.releases.health: 30d, 7d, 24h, 90d, an explicit window, each environment) and the release
page (stacklens.releases.detail, for the newest, a middle and an old release) each run CALLS times; per
view the median and the p95 in ms."""

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
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ORG, PROJECT, DAYS = 1, 1, 90
CALLS = 20  # timed calls per view (--calls)

# A third of the sessions as updates (two rows each: the init, then the end), the rest as aggregates.
UPDATES_SQL = """
INSERT INTO sessions (org_id, project_id, session_id, distinct_id, status, errors, init, seq, quantity, started,
    timestamp, duration, release, environment, user_agent, source, received, batch_id, dedup_key)
SELECT {org}, {project}, toUUID(concat('00000000-0000-4000-8000-', leftPad(lower(hex(s)), 12, '0'))),
    concat('u', toString(cityHash64(s) % {users})), if(k = 0, 'ok', if(cityHash64(s, 7) % 100 < 2, 'crashed', 'exited')),
    if(k = 1 AND cityHash64(s, 9) % 100 < 10, 1, 0), 1 - k, k + 1, 1, st, st + toIntervalSecond(k * 60), NULL,
    concat('web@1.', toString(least({releases} - 1, intDiv(age_ms, {release_ms})))),
    if(s % 4 = 0, 'staging', 'production'), '', 'session', now64(3), 'bench', concat(toString(s), '-', toString(k))
FROM (SELECT number, intDiv(number, 2) AS s, number % 2 AS k,
             ({span_ms} - 1) - (s * 7919 % {span_ms}) AS age_ms,
             now64(3) - toIntervalMillisecond({span_ms} - 1 - age_ms) AS st
      FROM numbers({offset}, {count}))
"""
AGGREGATES_SQL = """
INSERT INTO sessions (org_id, project_id, session_id, distinct_id, status, errors, init, seq, quantity, started,
    timestamp, duration, release, environment, user_agent, source, received, batch_id, dedup_key)
SELECT {org}, {project}, toUUID('00000000-0000-0000-0000-000000000000'), '', status, 0, 1, 0, q, minute, minute,
    NULL, concat('web@1.', toString(least({releases} - 1, intDiv(age_ms, {release_ms})))),
    env, '', 'sessions', now64(3), 'bench', concat('a', toString(number), status, env)
FROM (SELECT number, toStartOfMinute(now64(3)) - toIntervalMinute(number) AS minute,
             {span_ms} - (number + 1) * 60000 AS age_ms
      FROM numbers({minutes}))
ARRAY JOIN ['exited', 'errored', 'crashed', 'abnormal'] AS status, [{per_exited}, {per_errored}, 1, 0] AS q
ARRAY JOIN ['production', 'staging'] AS env
WHERE age_ms >= 0
SETTINGS max_block_size = 65536
"""


def _quantity(total: int, minutes: int) -> dict[str, int]:
    per_minute = max(1, total // (minutes * 2))  # two environments
    return {"per_exited": max(1, per_minute - per_minute // 20 - 1), "per_errored": per_minute // 20}


def _generate(client: Any, sessions: int, releases: int) -> dict[str, Any]:
    span_ms = DAYS * 86_400_000
    common = {"org": ORG, "project": PROJECT, "span_ms": span_ms, "releases": releases}
    common["release_ms"] = span_ms // releases
    updates = sessions // 3
    chunk = 2_000_000
    started = time.perf_counter()
    for offset in range(0, updates * 2, chunk):
        count = min(chunk, updates * 2 - offset)
        client.command(UPDATES_SQL.format(offset=offset, count=count, users=max(sessions // 20, 1), **common))
    minutes = DAYS * 1440
    quantities = _quantity(sessions - updates, minutes)
    client.command(AGGREGATES_SQL.format(minutes=minutes, **quantities, **common))
    generated = client.query(
        "SELECT sumIf(quantity, init = 1), count() FROM sessions WHERE project_id = {p:UInt64}",
        parameters={"p": PROJECT},
    ).result_rows[0]
    return {
        "sessions": int(generated[0]),
        "session_rows": int(generated[1]),
        "generate_sessions_s": round(time.perf_counter() - started, 1),
    }


def _fill_sessions(client: Any, now: datetime) -> dict[str, float]:
    from pipelines.assets.sessions import GRAIN_QUERIES
    from pipelines.warehouse_ops import run_insert

    end = now.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    day = end - timedelta(days=DAYS + 1)
    started = time.perf_counter()
    while day < end:
        bounds = {
            "start": day,
            "end": min(day + timedelta(days=1), end),
            "materialized_at": datetime.now(UTC),
        }
        for query in GRAIN_QUERIES:
            run_insert(client, query, bounds)
        day += timedelta(days=1)
    full = time.perf_counter() - started
    hour = {
        "start": end - timedelta(hours=2),
        "end": end - timedelta(hours=1),
        "materialized_at": datetime.now(UTC),
    }
    started = time.perf_counter()
    for query in GRAIN_QUERIES:
        run_insert(client, query, hour)
    return {
        "session_states_full_s": round(full, 1),
        "session_states_hour_tick_s": round(time.perf_counter() - started, 2),
    }


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _time(label: str, call: Callable[[Any], Any], arguments: list[Any], calls: int) -> dict[str, float]:
    """Median and p95 wall time of ``calls`` calls, and the median and p95 CPU time of a call (the engine
    runs in this process: both clients' threads count), which a machine loaded by others does not inflate
    much: on an idle machine with two cores a call's wall time lies between half its CPU time (both clients
    busy throughout) and its CPU time."""
    for warm in arguments:  # warms the parsed-query cache and the engine's marks
        call(warm)
    samples, cpu = [], []
    for i in range(calls):
        started, used = time.perf_counter(), _cpu()
        call(arguments[i % len(arguments)])
        samples.append((time.perf_counter() - started) * 1000)
        cpu.append((_cpu() - used) * 1000)
    out = {
        "median_ms": round(statistics.median(samples), 1),
        "p95_ms": round(_p95(samples), 1),
        "cpu_median_ms": round(statistics.median(cpu), 1),
        "cpu_p95_ms": round(_p95(cpu), 1),
        "load_average": round(os.getloadavg()[0], 1),
    }
    print(label, out, file=sys.stderr, flush=True)
    return out


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]


def _performance_bench() -> Any:
    """bench/performance.py (its page-load generator and fact build), loaded from its file: the bench
    folder is not on the path (its pipelines.py would hide the package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_performance", ROOT / "bench" / "performance.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(
    sessions: int, releases: int, page_loads: int, keep_dir: Path | None = None, calls: int = CALLS
) -> dict[str, Any]:
    perf_bench = _performance_bench()
    from stacklens.releases.detail import release_detail
    from stacklens.releases.health import Window, release_health
    from stacklens.settings import Settings
    from stacklens.view_filters import ViewFilters
    from stacklens.warehouse.client import get_warehouse, reset_clients
    from stacklens.warehouse.migrations import apply_migrations

    data_dir = keep_dir or Path(tempfile.mkdtemp(prefix="stacklens-bench-releases-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    settings = Settings(data_dir=data_dir, warehouse_database="bench", run_schedules=False)
    apply_migrations(settings)
    client = get_warehouse(settings)
    marker = data_dir / "bench-releases.json"
    state: dict[str, Any] = json.loads(marker.read_text()) if marker.exists() else {}
    if state.get("key") != [sessions, releases, page_loads]:
        now = datetime.now(UTC)
        started = time.perf_counter()
        perf_bench._generate(client, page_loads)
        built = perf_bench._build(client, now, perf_bench.FACT_QUERIES)
        generated = _generate(client, sessions, releases)
        filled = _fill_sessions(client, now)
        state = {
            "key": [sessions, releases, page_loads],
            "now": now.isoformat(),
            "prepare_s": round(time.perf_counter() - started, 1),
            **generated,
            **built,
            **filled,
        }
        marker.write_text(json.dumps(state))
    now = datetime.fromisoformat(state["now"])
    if not int(client.query("SELECT count() FROM session_periods").result_rows[0][0]):
        # A kept data directory whose session states a migration re-created (the asset would refill them).
        state.update(_fill_sessions(client, now))
        marker.write_text(json.dumps(state))
    rows = int(client.query("SELECT count() FROM session_periods").result_rows[0][0])

    def window(range_: str = "", **kw: str) -> tuple[Window, str]:
        filters = ViewFilters.parse(range=range_, now=now, **kw)
        return Window.of(filters), filters.environment

    windows = [
        window("30d"),
        window("7d"),
        window("24h"),
        window("90d"),
        window("30d", environment="staging"),
        window(
            "",
            since=(now - timedelta(days=20)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            until=(now - timedelta(days=6)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        ),
        window("14d", environment="production"),
    ]
    listed = release_health(client, ORG, PROJECT, *window("90d"))
    timings = {
        "list": _time("list", lambda a: release_health(client, ORG, PROJECT, a[0], a[1]), windows, calls),
    }
    newest = [r.version for r in release_health(client, ORG, PROJECT, *window("30d"))]
    picks = [
        (newest[-1], *window("30d")),
        (newest[len(newest) // 2], *window("30d")),
        (newest[0], *window("90d")),
    ]
    timings["detail"] = _time(
        "detail", lambda a: release_detail(client, ORG, PROJECT, a[0], a[1], a[2]), picks, calls
    )
    reset_clients()
    if keep_dir is None:
        shutil.rmtree(data_dir, ignore_errors=True)
    return {
        **{k: v for k, v in state.items() if k not in ("key", "now")},
        "releases": releases,
        "page_loads": page_loads,
        "releases_listed_90d": len(listed),
        "session_period_rows": rows,
        "calls": calls,
        "views": timings,
        "worst_p95_ms": max(v["p95_ms"] for v in timings.values()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=1_000_000)
    parser.add_argument("--releases", type=int, default=100)
    parser.add_argument("--page-loads", type=int, default=100_000)
    parser.add_argument("--data-dir", type=Path, help="keep the warehouse here and reuse it on the next run")
    parser.add_argument("--calls", type=int, default=CALLS, help="timed calls per view")
    args = parser.parse_args()
    print(json.dumps(run(args.sessions, args.releases, args.page_loads, args.data_dir, args.calls), indent=1))


if __name__ == "__main__":
    main()
