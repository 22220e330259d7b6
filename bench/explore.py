"""Explore benchmark: a grouped p75 over 30 days of page loads (load time, and the web vitals), a count by
release over error events, and 1,000,000-row Parquet downloads streamed.

    .venv/bin/python bench/explore.py                                   # 1,000,000 of each (small scale)
    .venv/bin/python bench/explore.py --loads 10000000 --events 10000000 --data-dir /work/data/explore-10m

In an embedded warehouse (its own data directory, every migration applied): N page loads of one project over
30 days on 20 routes and 5 releases, from Chrome, Firefox and Safari (bench/performance.py's page loads, the
same rows, without their spans: Explore reads the raw page loads, not the states the spans feed), and M error
events over the same 30 days (5 releases, 5,000 issues, 50,000 users, 1,000,000 request URLs, a `region` tag),
all generated inside ClickHouse (`INSERT … SELECT … FROM numbers()`). `--data-dir` keeps them: a second run
skips the generation (migrations added since are applied to the kept rows) and times against the data's own
clock.

Then each question runs CALLS times through :func:`stacklens.explore.run.run_explore` — what
``POST /api/explore/query`` and the page run, without HTTP — cycling through groupings (release, page,
browser, release and environment) and filters; per question the median and p95 in ms and the median CPU
time. The downloads (:data:`DOWNLOADS`: error events counted by request URL, 1,000,000 groups of 10 events;
and the last 3 days' events by URL and region, ~1,000,000 groups of one event) are
:func:`stacklens.explore.download.open_download` on a connection of their own, as the route streams them,
each in a process of its own, twice: first on a cold engine, then again as a running server's engine
answers. Per run: when the engine's first block was read, the first chunk (the route's first byte), the
total time, the rows, the bytes, and the process's resident memory before and at its peak (sampled every 10
ms; the embedded engine runs in the process, so its memory for the grouping counts too). For contrast, in
another process, the grouped file built the way a download was before it streamed (the whole result read as
Arrow, then written)."""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import resource
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ORG, PROJECT, DAYS, CALLS = 1, 1, 30, 20
URLS = 1_000_000  # distinct request URLs of the error events: the download's 1,000,000 groups

# bench/performance.py's page loads (the same rows, without their spans and server transactions).
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

EVENTS_SQL = """
INSERT INTO events (org_id, project_id, event_id, issue_id, fingerprint, grouping_version, timestamp, received_at,
    platform, level, release, environment, transaction, title, exception_type, handled, request_url, user_key,
    tags, browser_name, os_name)
SELECT {org}, {project}, toUUID(concat('00000000-0000-4000-a000-', leftPad(lower(hex(number)), 12, '0'))),
    cityHash64(number % 5000) % 4503599627370496, lower(hex(cityHash64(number % 5000))), 'v1',
    now64(3) - toIntervalMillisecond(number * 7919 % {span_ms}) AS ts, ts, 'javascript',
    ['error', 'error', 'error', 'warning', 'fatal'][number % 5 + 1],
    concat('web@1.', toString(intDiv(number * 7919 % {span_ms}, intDiv({span_ms}, 5)))),
    if(number % 5 = 0, 'staging', 'production'), concat('/page/', toString(number % 20)),
    concat('TypeError ', toString(number % 5000)), concat('Error', toString(number % 50)), toUInt8(number % 3 = 0),
    concat('https://shop.test/item/', toString(number % {urls})), concat('u-', toString(number % 50000)),
    map('region', ['eu', 'us', 'ap'][number % 3 + 1]), ['Chrome', 'Chrome', 'Firefox', 'Safari'][number % 4 + 1],
    ['Linux', 'Android', 'Windows', 'macOS'][number % 4 + 1]
FROM numbers({offset}, {count})
"""


def _generate(client: Any, table: str, sql: str, rows: int) -> None:
    common = {"org": ORG, "project": PROJECT, "span_ms": DAYS * 86_400_000, "urls": URLS}
    chunk = 1_000_000  # bounded memory per statement on a small machine
    for start in range(0, rows, chunk):
        client.command(sql.format(offset=start, count=min(chunk, rows - start), **common))
        print(f"{table}: {min(start + chunk, rows):,} rows", file=sys.stderr, flush=True)


def _prepare(client: Any, loads: int, events: int, data_dir: Path) -> dict[str, Any]:
    """Generate the data unless the kept data directory holds it (the rows are generated backwards from the
    time of their insert over 30 days; the questions ask of the 30 days before the end of the generation)."""
    marker = data_dir / "bench-explore.json"
    state: dict[str, Any] = json.loads(marker.read_text()) if marker.exists() else {}
    if state.get("loads") == loads and state.get("events") == events:
        return state
    state = {"loads": loads, "events": events}
    for table, target, sql, rows in (
        ("loads", "transactions", LOADS_SQL, loads),
        ("events", "events", EVENTS_SQL, events),
    ):
        started = time.perf_counter()
        client.command(f"TRUNCATE TABLE {target}")
        _generate(client, table, sql, rows)
        state[f"generate_{table}_s"] = round(time.perf_counter() - started, 1)
    state["now"] = datetime.now(UTC).isoformat()  # after the last row: every row lies before the clock
    marker.write_text(json.dumps(state))
    return state


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _time(label: str, call: Callable[[int], Any]) -> dict[str, float]:
    """Median and p95 wall time of CALLS calls, and the median CPU time they used (the engine runs in this
    process: its threads count), which a loaded machine does not inflate."""
    call(0)  # the first call warms the parsed-query cache and the engine's marks
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
    print(label, out, file=sys.stderr, flush=True)
    return out


def _window(now: datetime, days: int = DAYS) -> dict[str, str]:
    return {
        "since": (now - timedelta(days=days)).isoformat().replace("+00:00", "Z"),
        "until": now.isoformat().replace("+00:00", "Z"),
    }


def _questions(client: Any, now: datetime) -> dict[str, Any]:
    from stacklens.explore.query_parser import parse_query
    from stacklens.explore.run import run_explore

    window = _window(now)
    groupings = [["release"], ["page"], ["browser"], ["release", "environment"]]
    filters: list[list[dict[str, Any]]] = [
        [],
        [{"field": "environment", "op": "=", "value": "production"}],
        [{"field": "browser", "op": "in", "value": ["Chrome", "Firefox"]}],
        [],
    ]

    def pageloads(i: int, aggregates: list[dict[str, str]], interval: str = "") -> Any:
        body = {
            "dataset": "pageloads",
            **window,
            "group_by": groupings[i % 4],
            "filters": filters[i % 4],
            "aggregates": aggregates,
            "interval": interval,
        }
        return run_explore(client, parse_query(body), ORG, [PROJECT])

    def p75(i: int, interval: str = "", vitals: bool = False) -> Any:
        aggregates = [{"fn": "count"}, {"fn": "p75", "metric": "load_time_ms"}]
        if vitals:
            aggregates.append({"fn": "p75", "metric": "lcp"})
        return pageloads(i, aggregates, interval)

    def web_vitals(i: int) -> Any:
        metrics = ("lcp_ms", "fcp_ms", "ttfb_ms", "inp_ms", "cls")
        return pageloads(i, [{"fn": "count"}, *({"fn": "p75", "metric": m} for m in metrics)])

    def errors(i: int) -> Any:
        body = {
            "dataset": "errors",
            **window,
            "group_by": ["release"],
            "filters": filters[i % 2],
            "aggregates": [{"fn": "count"}],
        }
        return run_explore(client, parse_query(body), ORG, [PROJECT])

    def error_users(i: int) -> Any:
        body = {
            "dataset": "errors",
            **window,
            "group_by": ["release", "tag:region"][: 1 + i % 2],
            "aggregates": [{"fn": "count"}, {"fn": "unique_users"}],
            "interval": "1d",
        }
        return run_explore(client, parse_query(body), ORG, [PROJECT])

    return {
        "pageloads_grouped_p75_load_30d": _time("pageloads grouped p75 load time, 30 days", p75),
        "pageloads_grouped_p75_load_lcp_30d": _time(
            "pageloads grouped p75 load time and LCP, 30 days", lambda i: p75(i, vitals=True)
        ),
        "pageloads_grouped_p75_five_vitals_30d": _time(
            "pageloads grouped p75 of LCP, FCP, TTFB, INP and CLS, 30 days", web_vitals
        ),
        "pageloads_grouped_p75_load_30d_daily_series": _time(
            "pageloads grouped p75 load time + daily series", lambda i: p75(i, "1d")
        ),
        "errors_count_by_release_30d": _time("errors count by release, 30 days", errors),
        "errors_users_by_release_region_daily": _time(
            "errors users by release/region + daily series", error_users
        ),
    }


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


class _Peak:
    """The process's resident memory at its peak while a block runs (sampled every 10 ms)."""

    def __enter__(self) -> _Peak:
        self.before = self.peak = _rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.01):
            self.peak = max(self.peak, _rss())

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss())


# The downloads' questions, each answering 1,000,000 rows (or cut there): how long its first byte waits is how
# long the engine takes to group the rows it scans, so one groups many rows into each of 1,000,000 groups and
# one groups ~1,000,000 rows into groups of one row each (the nearest an aggregate question comes to a raw
# read).
DOWNLOADS: dict[str, dict[str, Any]] = {
    # 10,000,000 error events of 30 days → 1,000,000 request URLs (10 events each).
    "grouped": {"dataset": "errors", "days": 30, "group_by": ["url"], "aggregates": [{"fn": "count"}]},
    # The 1,014,157 error events of the last 3 days → one group each (every URL and region once), cut at
    # 1,000,000.
    "raw_ish": {
        "dataset": "errors",
        "days": 3,
        "group_by": ["url", "tag:region"],
        "aggregates": [{"fn": "count"}],
    },
}


def _download(settings: Any, now: datetime, question: str, mode: str) -> dict[str, Any]:
    """One 1,000,000-row Parquet download of ``question`` in this (fresh) process: ``streamed`` as the route
    streams it, twice — first on a cold engine (nothing run yet in the process), then again, as a running
    server's engine answers — or ``whole``: read as Arrow, then written (what a download was before it
    streamed), for contrast. Per run: when ``open_download`` returned (the engine's first block is read),
    the first chunk (the route's first byte), the end, rows, bytes, and the resident memory before and at
    its peak."""
    import polars as pl

    from stacklens.explore.download import open_download
    from stacklens.explore.query_parser import parse_query
    from stacklens.explore.sql import Limits, table_statement
    from stacklens.warehouse.client import get_warehouse, own_client

    spec = DOWNLOADS[question]
    body = {
        "dataset": spec["dataset"],
        **_window(now, spec["days"]),
        "group_by": spec["group_by"],
        "aggregates": spec["aggregates"],
    }
    query = parse_query(body, download=True)
    client = get_warehouse(settings)
    client.query("SELECT 1")  # the engine open before the clock starts, as in a running server

    def streamed() -> dict[str, Any]:
        started = time.perf_counter()
        download = open_download(
            lambda: own_client(settings.resolved_warehouse_url, settings.warehouse_database),
            query,
            ORG,
            [PROJECT],
            "parquet",
        )
        opened = time.perf_counter() - started
        size, first_at = 0, 0.0
        while (chunk := download.next_chunk()) is not None:
            first_at = first_at or time.perf_counter() - started
            size += len(chunk)
        return {
            "first_block_s": round(opened, 2),
            "first_byte_s": round(first_at, 2),
            "total_s": round(time.perf_counter() - started, 2),
            "rows": download.rows_sent,
            "truncated": download.truncated,
            "bytes": size,
        }

    def whole() -> dict[str, Any]:
        started = time.perf_counter()
        statement = table_statement(query, ORG, [PROJECT], Limits(), query.limit + 1, counts=False)
        frame = pl.from_arrow(client.query_arrow(statement.sql, parameters=statement.parameters))
        buffer = io.BytesIO()
        frame.head(query.limit).write_parquet(buffer)
        done = round(time.perf_counter() - started, 2)
        return {
            "first_byte_s": done,
            "total_s": done,
            "rows": min(frame.height, query.limit),
            "bytes": buffer.tell(),
        }

    runs: dict[str, Any] = {}
    for run_name in ("cold", "warm") if mode == "streamed" else ("cold",):
        with _Peak() as peak:
            result = streamed() if mode == "streamed" else whole()
        runs[run_name] = {
            **result,
            "rss_before_mib": round(peak.before / 2**20),
            "rss_peak_mib": round(peak.peak / 2**20),
            "rss_growth_mib": round((peak.peak - peak.before) / 2**20),
        }
    return runs


def _download_in_own_process(data_dir: Path, question: str, mode: str) -> dict[str, Any]:
    """The download in a process of its own, so its resident memory is its own (the engine runs
    in-process)."""
    import subprocess

    command = [sys.executable, __file__, "--data-dir", str(data_dir), "--download", f"{question}:{mode}"]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    print(f"download {question} {mode}", result, file=sys.stderr, flush=True)
    return result


def run(loads: int, events: int, keep_dir: Path | None = None, generate_only: bool = False) -> dict[str, Any]:
    from stacklens.warehouse.client import get_warehouse, release_client
    from stacklens.warehouse.migrations import apply_migrations

    data_dir = keep_dir or Path(tempfile.mkdtemp(prefix="stacklens-bench-explore-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    settings = _settings(data_dir)
    apply_migrations(settings)
    client = get_warehouse(settings)
    state = _prepare(client, loads, events, data_dir)
    if generate_only:
        release_client(settings.resolved_warehouse_url, settings.warehouse_database)
        return state
    now = datetime.fromisoformat(state["now"])
    rows = {
        t: int(client.query(f"SELECT count() FROM {t}").result_rows[0][0])  # noqa: S608 - two fixed names
        for t in ("transactions", "events")
    }
    questions = _questions(client, now)
    # The downloads open the data directory in processes of their own: this one gives it back first.
    release_client(settings.resolved_warehouse_url, settings.warehouse_database)
    downloads = {
        f"{question}_{mode}": _download_in_own_process(data_dir, question, mode)
        for question, mode in (("grouped", "streamed"), ("raw_ish", "streamed"), ("grouped", "whole"))
    }
    if keep_dir is None:
        shutil.rmtree(data_dir, ignore_errors=True)
    return {
        "loads": loads,
        "events": events,
        "rows": rows,
        **{k: v for k, v in state.items() if k.startswith("generate_")},
        "calls": CALLS,
        "questions": questions,
        "download_1m_parquet": downloads,
    }


def _settings(data_dir: Path) -> Any:
    from stacklens.settings import Settings

    return Settings(data_dir=data_dir, warehouse_database="bench", run_schedules=False)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--loads", type=int, default=1_000_000, help="page loads (default 1,000,000)")
    parser.add_argument("--events", type=int, default=1_000_000, help="error events (default 1,000,000)")
    parser.add_argument("--data-dir", type=Path, help="keep the warehouse here and reuse it on the next run")
    parser.add_argument(
        "--generate-only", action="store_true", help="generate the data (with --data-dir) and stop"
    )
    parser.add_argument("--download", help=argparse.SUPPRESS)  # one download: <question>:<streamed|whole>
    args = parser.parse_args()
    if (args.generate_only or args.download) and not args.data_dir:
        parser.error("--generate-only keeps the data: give --data-dir")
    if args.download:
        state = json.loads((args.data_dir / "bench-explore.json").read_text())
        now = datetime.fromisoformat(state["now"])
        question, mode = args.download.split(":")
        print(json.dumps(_download(_settings(args.data_dir), now, question, mode)))
        return
    print(json.dumps(run(args.loads, args.events, args.data_dir, args.generate_only), indent=1))


if __name__ == "__main__":
    main()
