"""INP causes benchmark (issue 69): the INP view's speed at scale, and what the attribution adds to the stored
bytes of a page load.

    .venv/bin/python bench/inp.py                       # 10 M page loads, 3,000 page loads for the bytes
    .venv/bin/python bench/inp.py --loads 1000000 --runs 20
    .venv/bin/python bench/inp.py --speed-only --data-dir /tmp/inp-bench-10m   # build once, then reuse

Speed. In a fresh embedded warehouse (own temporary data directory, every migration applied): ``--loads``
page loads over 30 days in one project, as the tables the INP view reads hold them — the page-load states
(`pageload_periods`, hour grain: per page and browser, the page loads and those with INP; 60 % Chromium, 25
% Firefox, 15 % Safari) and ``inp_interactions`` (one row per reported interaction: 0.6 per Chromium page
load, with its parts and its scripts: the handler's, and a third party's in one in three) written by INSERT
… SELECT from ``numbers()``, then its hour and day states (`inp_periods`, `inp_script_periods`) by the
pipeline's own queries. Then the INP view (stacklens.performance.inp.reads.inp_view: parts per page and
target, scripts, parties, browsers) over the last 7 days, for every page and for one page, ``--runs`` times
each after a warm-up: p50 / p95 / max in ms, and the process's CPU time per view (the embedded engine runs in
it; wall times on a loaded machine are upper bounds). Goal: p95 ≤ 100 ms. The view reads on two clients at
once (stacklens.performance.inp.reads); ``--one-after-the-other`` times it beside the same view on a client of
its own, which has no second client and so runs the three reads one after the other, run for run in turn so
both meet the same load. ``--data-dir`` keeps the warehouse and reuses its data set (its window ends where its
interactions end); ``--restate`` rewrites its INP states.

Bytes. ``--size-loads`` demo page loads (demo/browser_pageloads.py, every browser) stored through the
ingest's row builders, each Chromium one with @sentry/browser's own INP span; then the same with the INP
attribution's spans of the demo shop's slow clicks (demo/browser_interactions.py) and their
`inp_interactions` rows. After OPTIMIZE … FINAL, the compressed bytes of the rows of both (transactions,
spans, inp_interactions); printed: bytes per page load without and with the attribution and the increase.
Goal: at most 15 % (the interactions' hour and day states counted with them: `inp_periods`,
`inp_script_periods`)."""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ORG, PROJECT, SIZE_PROJECT, PLAIN_PROJECT = 1, 1, 2, 3
PAGES = 20
FILL_INTERACTIONS = """
INSERT INTO inp_interactions
SELECT {org:UInt64}, {project:UInt64},
       {start:DateTime64(3, 'UTC')} + toIntervalMillisecond(intDiv(number * {span_ms:UInt64}, {n:UInt64})),
       generateUUIDv4(number), '', concat('/page-', toString(number % 20)), 'production', 'shop@1.0.0', 'Chrome',
       concat('button#b', toString(number % 7)), 'click',
       40 + (number % 400), 5 + (number % 60), 20 + (number % 300), 8 + (number % 40), 1,
       if(number % 3 = 0, ['https://shop.test/app.js', 'https://widget.example/w.js'], ['https://shop.test/app.js']),
       if(number % 3 = 0, ['shop.test', 'widget.example'], ['shop.test']),
       if(number % 3 = 0, ['onBuy', 'poll'], ['onBuy']),
       if(number % 3 = 0, ['BUTTON#b.onclick', 'TimerHandler:setInterval'], ['BUTTON#b.onclick']),
       if(number % 3 = 0, [toFloat64(20 + number % 300), toFloat64(5 + number % 60)], [toFloat64(20 + number % 300)]),
       if(number % 3 = 0, ['processing', 'input_delay'], ['processing']),
       if(number % 3 = 0, [0, 1], [0]),
       20 + (number % 300), if(number % 3 = 0, toFloat64(5 + number % 60), 0), now64(6)
FROM numbers({first:UInt64}, {count:UInt64})
"""
FILL_STATES = """
INSERT INTO pageload_periods (org_id, project_id, grain, start, environment, release, browser, page, views, inp_n,
                              materialized_at)
SELECT {org:UInt64}, {project:UInt64}, 'hour', toStartOfHour({start:DateTime64(3, 'UTC')}) + toIntervalHour(h),
       'production', 'shop@1.0.0', b.1, concat('/page-', toString(p)), toUInt64(b.2 * {per_hour:Float64} / 20),
       if(b.1 = 'Chrome', toUInt64(b.2 * {per_hour:Float64} / 20), 0), now64(6)
FROM numbers({hours:UInt64}) AS hs
ARRAY JOIN range(20) AS p, [('Chrome', 0.6), ('Firefox', 0.25), ('Safari', 0.15)] AS b
SETTINGS enable_unaligned_array_join = 1
"""


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def speed(
    client: Any, loads: int, runs: int, restate: bool = False, alone: Any | None = None
) -> dict[str, Any]:
    now = datetime.now(UTC).replace(microsecond=0)
    start = now - timedelta(days=30)
    interactions = int(loads * 0.6 * 0.6)
    began = time.perf_counter()
    if _filled(client):  # a kept data set: its window ends where its interactions end
        now = (
            client.query(
                "SELECT max(ts) FROM inp_interactions WHERE project_id = {p:UInt64}",
                parameters={"p": PROJECT},
            )
            .result_rows[0][0]
            .replace(microsecond=0, tzinfo=UTC)
        )
        now += timedelta(seconds=1)
        if restate:
            _states(client, now - timedelta(days=30), now)
    else:
        _fill(client, loads, interactions, start, now)
    filled = time.perf_counter() - began
    return {
        "page_loads": loads,
        "interactions": interactions,
        "fill_s": round(filled, 1),
        "view_ms": _time_view(client, now, runs, alone),
    }


def _filled(client: Any) -> bool:
    """Whether a kept warehouse (--data-dir) holds the speed data set (built once, read often)."""
    rows = client.query(
        "SELECT count() FROM inp_periods WHERE project_id = {p:UInt64}", parameters={"p": PROJECT}
    ).result_rows
    return bool(rows[0][0])


def _fill(client: Any, loads: int, interactions: int, start: datetime, now: datetime) -> None:
    step = 2_000_000
    for first in range(0, interactions, step):
        client.command(
            FILL_INTERACTIONS.replace("{span_ms:UInt64}", str(30 * 86_400_000)),
            parameters={
                "org": ORG,
                "project": PROJECT,
                "start": start,
                "n": interactions,
                "first": first,
                "count": min(step, interactions - first),
            },
        )
    _states(client, start, now)
    hours = 30 * 24
    client.command(
        FILL_STATES.replace("toIntervalHour(h)", "toIntervalHour(hs.number)"),
        parameters={
            "org": ORG,
            "project": PROJECT,
            "start": start,
            "per_hour": loads / hours,
            "hours": hours,
        },
    )


def _states(client: Any, start: datetime, now: datetime) -> None:
    """The hour and day states of the interactions, as the pipeline step writes them."""
    from pipelines.assets.interactions import INTERACTIONS
    from stacklens.warehouse.queries import load_query

    for query in INTERACTIONS.queries[1:]:
        client.command(
            load_query(f"pipelines/{query}"),
            parameters={
                "start": start,
                "end": now + timedelta(hours=1),
                "materialized_at": datetime.now(UTC),
            },
        )


def _time_view(client: Any, now: datetime, runs: int, alone: Any | None = None) -> dict[str, Any]:
    """The INP view over the last 7 days, every page and one page: p50 / p95 / max (ms) of ``runs`` after a
    warm-up, and the CPU time (the process's own: the embedded engine runs in it) per view. With ``alone`` (a
    client with no second one: its three reads one after the other) each run of the view is followed by one
    on ``alone``, timed as ``… one after the other``."""
    from stacklens.performance.inp.reads import inp_view
    from stacklens.view_filters import ViewFilters

    out: dict[str, Any] = {}
    lanes = {"": client} if alone is None else {"": client, ", one after the other": alone}
    for name, page in (("every page", ""), ("one page", "/page-3")):
        filters = ViewFilters(since=now - timedelta(days=7), until=now)
        spent: dict[str, list[float]] = {lane: [] for lane in lanes}
        cpu: dict[str, list[float]] = {lane: [] for lane in lanes}
        views = {
            lane: inp_view(reader, ORG, PROJECT, filters, page) for lane, reader in lanes.items()
        }  # warm-up
        for _ in range(runs):
            for lane, reader in lanes.items():
                t0, c0 = time.perf_counter(), time.process_time()
                view = inp_view(reader, ORG, PROJECT, filters, page)
                spent[lane].append((time.perf_counter() - t0) * 1000)
                cpu[lane].append((time.process_time() - c0) * 1000)
                assert view.parts and view.scripts and view.browsers and view == views[lane]
        assert len({repr(v) for v in views.values()}) == 1, "the lanes answered different views"
        for lane in lanes:
            out[name + lane] = {
                "p50": round(statistics.median(spent[lane]), 1),
                "p95": round(_p(spent[lane], 0.95), 1),
                "max": round(max(spent[lane]), 1),
                "cpu_p50": round(statistics.median(cpu[lane]), 1),
                "cpu_p95": round(_p(cpu[lane], 0.95), 1),
            }
    return out


def _store(client: Any, project: int, loads: list[dict], spans: list[dict]) -> None:
    from stacklens.ingest.fields import Origin
    from stacklens.ingest.inp import inp_rows
    from stacklens.ingest.transactions import spans_rows, transaction_row
    from stacklens.ingest.writer import insert_rows

    origin = Origin(ORG, project, None, uuid.uuid4().hex, time.time())
    tx, sp = [], []
    for payload in loads:
        raw = json.dumps(payload)
        row = transaction_row(payload, origin, raw.encode(), raw)
        tx.append(row)
        sp.extend(spans_rows(payload, row, origin))
    insert_rows(client, "transactions", tx, uuid.uuid4().hex)
    insert_rows(client, "spans", sp, uuid.uuid4().hex)
    insert_rows(
        client, "transactions", [r for span in spans for r in inp_rows(span, origin)], uuid.uuid4().hex
    )


def _sentry_inp_span(load: dict) -> dict:
    """@sentry/browser's own INP span of a page load (its worst interaction, no attribution)."""
    inp = load["measurements"]["inp"]["value"]
    return {
        "op": "ui.interaction.click",
        "description": "body > button#add-to-cart",
        "span_id": uuid.uuid4().hex[:16],
        "trace_id": load["contexts"]["trace"]["trace_id"],
        "start_timestamp": load["timestamp"] + 2,
        "timestamp": load["timestamp"] + 2 + inp / 1000,
        "measurements": {"inp": {"value": inp, "unit": "millisecond"}},
        "data": {
            "url.full": load["request"]["url"],
            "user_agent.original": load["request"]["headers"]["User-Agent"],
        },
    }


def _bytes(client: Any, project: int) -> int:
    """Compressed bytes of the project's rows: each table's compressed bytes in the share of its rows."""
    total = 0
    for table, column in (
        ("transactions", "project_id"),
        ("spans", "project_id"),
        ("inp_interactions", "project_id"),
        ("inp_periods", "project_id"),
        ("inp_script_periods", "project_id"),
    ):
        client.command("OPTIMIZE TABLE {t:Identifier} FINAL", parameters={"t": table})
        size = int(
            client.query(
                "SELECT sum(data_compressed_bytes) FROM system.parts WHERE active AND database = currentDatabase() "
                "AND table = {t:String}",
                parameters={"t": table},
            ).result_rows[0][0]
            or 0
        )
        rows = client.query(
            "SELECT countIf({c:Identifier} = {p:UInt64}), count() FROM {t:Identifier}",
            parameters={"c": column, "p": project, "t": table},
        ).result_rows[0]
        total += round(size * int(rows[0]) / max(int(rows[1]), 1))
    return total


def size(client: Any, loads_n: int) -> dict[str, Any]:
    from demo.browser_interactions import interactions
    from demo.browser_pageloads import pageload
    from demo.traffic import RELEASES
    from pipelines.assets.interactions import INTERACTIONS, host_parameters
    from stacklens.warehouse.queries import load_query

    rng = random.Random(69)
    now = datetime.now(UTC)
    origin = "http://127.0.0.1:8000"
    loads = [
        pageload(rng, origin, RELEASES[0], "production", now - timedelta(minutes=i), None, False)
        for i in range(loads_n)
    ]
    own = [_sentry_inp_span(load) for load in loads if "inp" in load["measurements"]]
    clicks = [span for load in loads for span in interactions(load, origin)]
    for span in clicks:
        span.pop("type", None)
        span.pop("event_id", None)
    _store(client, PLAIN_PROJECT, loads, own)
    _store(client, SIZE_PROJECT, loads, own + clicks)
    for query in INTERACTIONS.queries:
        client.command(
            load_query(f"pipelines/{query}"),
            parameters={
                **host_parameters({}),
                "start": now - timedelta(days=2),
                "end": now + timedelta(hours=1),
                "materialized_at": now,
            },
        )
    plain, attributed = _bytes(client, PLAIN_PROJECT), _bytes(client, SIZE_PROJECT)
    return {
        "page_loads": loads_n,
        "attributed_interactions": len(clicks),
        "bytes_per_page_load": round(plain / loads_n, 1),
        "with_attribution": round(attributed / loads_n, 1),
        "increase_pct": round(100 * (attributed - plain) / plain, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--loads", type=int, default=10_000_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--size-loads", type=int, default=3000)
    parser.add_argument("--data-dir", help="keep the warehouse here and reuse its speed data set next time")
    parser.add_argument("--restate", action="store_true", help="rewrite a kept data set's INP states")
    parser.add_argument("--speed-only", action="store_true", help="skip the bytes measurement")
    parser.add_argument(
        "--one-after-the-other",
        action="store_true",
        help="also time the view with its three reads one after the other (interleaved with the usual runs)",
    )
    args = parser.parse_args()

    from stacklens.settings import Settings
    from stacklens.warehouse.client import get_warehouse, own_client
    from stacklens.warehouse.migrations import apply_migrations

    kept = bool(args.data_dir)
    data_dir = Path(args.data_dir) if kept else Path(tempfile.mkdtemp(prefix="stacklens-bench-inp-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    try:
        settings = Settings(data_dir=data_dir, warehouse_database="bench", run_schedules=False)
        apply_migrations(settings)
        client = get_warehouse(settings)
        if not args.speed_only:
            print(json.dumps({"bytes": size(client, args.size_loads)}), flush=True)
        alone = own_client(settings.resolved_warehouse_url, "bench") if args.one_after_the_other else None
        print(json.dumps({"speed": speed(client, args.loads, args.runs, args.restate, alone)}), flush=True)
    finally:
        if not kept:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
