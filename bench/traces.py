"""Traces benchmark: one trace of 5,000 spans from 10 services through the trace API and page, and the trace
search over millions of spans.

    nice -n 10 .venv/bin/python bench/traces.py                        # 1,000,000 spans
    nice -n 10 .venv/bin/python bench/traces.py --spans 10000000
    nice -n 10 .venv/bin/python bench/traces.py --spans 0    # the 5,000-span trace alone: API and page

In an embedded warehouse (its own data directory, every migration): N spans of one project over 7 days as
ingest stores them — traces of 20 spans (one transaction and 19 spans under it; services, operations,
releases and durations varied; one span in 50 failed) — generated inside ClickHouse (`INSERT … SELECT …
FROM numbers()`), plus one trace of 5,000 spans: 10 services, each a transaction of 500 spans continuing a
span of the service before it (as a browser → gateway → … → worker chain), written as ingest writes them.

Then, each CALLS times:
- "api": what `GET /api/traces/{trace_id}` does (stacklens.traces.reads.read_trace → answers.trace_out →
  JSON), without HTTP;
- "page server": the trace page's read and its HTML (dashboards.trace_figures.page_context + trace.html);
- "page browser": Debian's chromium loading that HTML with the page's stylesheet and script (traces.js, which
  draws only the rows in view of the 5,000), until the frame after its load event (layout and paint done);
- "search": `GET /api/projects/{slug}/traces` (stacklens.traces.search.search_traces) with filters varied
  from call to call (service, operation, duration, status, release; 24 h and 7 d).
Per question median and p95 wall ms, and the CPU ms of this process (the engine's threads included; what the
load of a shared machine does not inflate); for the page in chromium, the renderer's main-thread ms, and the
page's CPU (server CPU + main thread) beside its wall total. Goals: api ≤ 300 ms, page ≤ 1 s (server +
browser), search p95 ≤ 500 ms.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ORG, PROJECT, DAYS, CALLS = 1, 1, 7, 20
SERVICES = [
    "browser",
    "gateway",
    "checkout",
    "cart",
    "orders",
    "payments",
    "search",
    "auth",
    "inventory",
    "worker",
]
OPS = ["db", "http.client", "cache.get", "function", "queue.publish"]
RELEASES = ["1.0.0", "1.1.0", "1.2.0", "1.3.0", "2.0.0"]

# Per trace t = number / 20: span 0 is the transaction (in `transactions`), spans 1-19 sit under it.
_TRACE = "lower(concat(hex(cityHash64(intDiv(number, 20))), hex(cityHash64(intDiv(number, 20), 7))))"
_START = "now64(3) - toIntervalMillisecond(intDiv(number, 20) * 7919 % {span_ms})"
SPANS_SQL = f"""
INSERT INTO spans (org_id, project_id, transaction_event_id, trace_id, span_id, parent_span_id, timestamp,
    duration_ms, received_at, op, description, status, status_code, transaction, transaction_op, release,
    environment, service)
SELECT {{org}}, {{project}}, toUUID(UUIDNumToString(toFixedString(unhex({_TRACE}), 16))), {_TRACE},
    lower(hex(cityHash64(number, 's'))), lower(hex(cityHash64(intDiv(number, 20), 's'))),
    {_START} + toIntervalMillisecond(number % 20 * 3), (number * 13) % 400 + 0.5, now64(3),
    {OPS!r}[number % 5 + 1], concat('SELECT * FROM orders WHERE id = ', toString(number % 1000)),
    if(number % 50 = 0, 'internal_error', 'ok'), if(number % 50 = 0, 500, 200), 'GET /orders/{{{{id}}}}',
    'http.server', {RELEASES!r}[intDiv(number, 20) % 5 + 1], 'production',
    {SERVICES!r}[(intDiv(number, 20) + number % 3) % 10 + 1]
FROM numbers({{offset}}, {{count}}) WHERE number % 20 != 0
"""  # noqa: S608 - the bench's own constants, no input
TRANSACTIONS_SQL = f"""
INSERT INTO transactions (org_id, project_id, event_id, trace_id, timestamp, end_timestamp, received_at, op,
    status, duration_ms, transaction, release, environment, service, http_status, payload)
SELECT {{org}}, {{project}}, toUUID(UUIDNumToString(toFixedString(unhex({_TRACE}), 16))), {_TRACE}, {_START},
    {_START} + toIntervalMillisecond(900), now64(3), 'http.server', 'ok', 900 + number % 700,
    concat('GET /orders/', toString(number % 7)), {RELEASES!r}[intDiv(number, 20) % 5 + 1], 'production',
    {SERVICES!r}[intDiv(number, 20) % 10 + 1], 200,
    concat('{{{{"contexts":{{{{"trace":{{{{"span_id":"', lower(hex(cityHash64(intDiv(number, 20), 's'))),
           '"}}}}}}}}}}}}')
FROM numbers({{offset}}, {{count}}) WHERE number % 20 = 0
"""  # noqa: S608 - the bench's own constants, no input


def _generate(client: Any, spans: int) -> None:
    common = {"org": ORG, "project": PROJECT, "span_ms": DAYS * 86_400_000}
    chunk = 2_000_000
    for start in range(0, spans, chunk):
        for sql in (SPANS_SQL, TRANSACTIONS_SQL):
            client.command(sql.format(offset=start, count=min(chunk, spans - start), **common))
        print(f"spans: {min(start + chunk, spans):,}", file=sys.stderr, flush=True)


def _big_trace(client: Any) -> str:
    """5,000 spans from 10 services, as ingest writes them: each service a transaction of 500 spans (its root
    and 499 under it, nested up to 4 deep) whose root continues a span of the service before it."""
    rng = random.Random(5000)
    trace_id = uuid.uuid4().hex
    start = datetime.now(UTC) - timedelta(hours=1)
    tx_rows, span_rows = [], []
    parent = ""
    for k, service in enumerate(SERVICES):
        event_id, root = str(uuid.uuid4()), uuid.uuid4().hex[:16]
        t0 = start + timedelta(milliseconds=40 * k)
        ids = [root]
        for i in range(499):
            sid = uuid.uuid4().hex[:16]
            offset = rng.uniform(0, 1500)
            span_rows.append(
                {
                    "org_id": ORG, "project_id": PROJECT, "transaction_event_id": event_id,
                    "trace_id": trace_id, "span_id": sid, "parent_span_id": rng.choice(ids[-8:]),
                    "timestamp": (t0 + timedelta(milliseconds=offset)).isoformat(sep=" ")[:23],
                    "duration_ms": rng.uniform(0.2, 300), "received_at": t0.isoformat(sep=" ")[:23],
                    "op": OPS[i % 5], "description": f"SELECT * FROM t{i} WHERE id = %s",  # noqa: S608
                    "status": "ok", "service": service, "release": "2.0.0", "environment": "production",
                }
            )  # fmt: skip
            ids.append(sid)
        payload = json.dumps({"contexts": {"trace": {"span_id": root, "parent_span_id": parent}}})
        tx_rows.append(
            {
                "org_id": ORG, "project_id": PROJECT, "event_id": event_id, "trace_id": trace_id,
                "timestamp": t0.isoformat(sep=" ")[:23], "end_timestamp": t0.isoformat(sep=" ")[:23],
                "received_at": t0.isoformat(sep=" ")[:23], "op": "http.server" if k else "pageload",
                "status": "ok", "duration_ms": 1800.0 - 40 * k, "transaction": f"/{service}",
                "service": service, "release": "2.0.0", "environment": "production", "payload": payload,
            }
        )  # fmt: skip
        parent = ids[rng.randrange(1, 500)]
    for table, rows in (("transactions", tx_rows), ("spans", span_rows)):
        client.raw_insert(
            table, insert_block="\n".join(json.dumps(r) for r in rows).encode(), fmt="JSONEachRow"
        )
    return trace_id


def _time(label: str, call: Callable[[int], Any], calls: int = CALLS) -> dict[str, float]:
    """Wall ms per call (median, p95) and the CPU ms this process spent in it (the engine's threads
    included): on a machine shared with other work the wall time grows with the load, the CPU time less."""
    call(calls)  # warm: parsed queries, the engine's marks
    samples, cpu = [], []
    for i in range(calls):
        started, cpu_started = time.perf_counter(), time.process_time()
        call(i)
        samples.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - cpu_started) * 1000)
    samples.sort()
    cpu.sort()
    p95 = min(len(samples) - 1, math.ceil(0.95 * len(samples)) - 1)
    out = {
        "median_ms": round(statistics.median(samples), 1),
        "p95_ms": round(samples[p95], 1),
        "cpu_median_ms": round(statistics.median(cpu), 1),
        "cpu_p95_ms": round(cpu[p95], 1),
    }
    print(f"{label:<52} {out}", file=sys.stderr, flush=True)
    return out


def _browser_ms(html: str, calls: int, max_rows: int = 200) -> dict[str, float]:
    """Chromium loading the page's HTML (its stylesheet and script served beside it) until the frame after its
    load event; beside the wall time, the renderer's main-thread busy time for it (the DevTools protocol's
    TaskDuration: parse, script, style, layout, paint), which a loaded machine inflates far less."""
    from playwright.sync_api import sync_playwright

    from tests.browser import launch

    static = ROOT / "dashboards" / "static"
    files = {name: (static / name).read_text() for name in ("traces.css", "style.css", "traces.js")}
    samples: list[float] = []
    busy: list[dict[str, float]] = []
    with sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        cdp = page.context.new_cdp_session(page)
        cdp.send("Performance.enable")
        page.route("http://bench.test/page", lambda r: r.fulfill(body=html, content_type="text/html"))

        def serve(body: str, kind: str) -> Callable[[Any], None]:
            return lambda route: route.fulfill(body=body, content_type=kind)

        for name, body in files.items():
            page.route(
                f"**/static/{name}", serve(body, "text/css" if name.endswith(".css") else "text/javascript")
            )
        page.route("**/static/app.js", lambda r: r.fulfill(body="", content_type="text/javascript"))
        page.route("**/favicon.svg", lambda r: r.fulfill(body="", content_type="image/svg+xml"))

        def main_thread_ms() -> dict[str, float]:
            """The document's main-thread time so far (the protocol counts from its navigation)."""
            metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
            return {k: metrics[k] * 1000 for k in ("TaskDuration", "ScriptDuration", "LayoutDuration")}

        for _ in range(calls + 1):
            started = time.perf_counter()
            page.goto("http://bench.test/page", wait_until="load")
            # The waterfall's script has drawn the rows in view (it runs before the load event); the next
            # frame has laid them out and painted them.
            drawn = page.evaluate(
                "() => new Promise(r => requestAnimationFrame(() => r([document.body.offsetHeight,"
                " document.querySelectorAll('#trace-waterfall .trace-row').length])))"
            )
            samples.append((time.perf_counter() - started) * 1000)
            busy.append(main_thread_ms())
            assert 0 < drawn[1] < max_rows, f"the rows in view are drawn, not every span: {drawn}"
        browser.close()
    samples = sorted(samples[1:])
    task, script, layout = (sorted(b[k] for b in busy[1:]) for k in busy[0])
    out = {
        "median_ms": round(statistics.median(samples), 1),
        "p95_ms": round(samples[-1], 1),
        "main_thread_median_ms": round(statistics.median(task), 1),
        "main_thread_p95_ms": round(task[-1], 1),
        "script_median_ms": round(statistics.median(script), 1),
        "layout_median_ms": round(statistics.median(layout), 1),
    }
    print(f"{'page browser: chromium load + layout + paint':<52} {out}", file=sys.stderr, flush=True)
    return out


def run(spans: int) -> dict[str, Any]:
    import os

    import orjson

    from dashboards.rendering import templates
    from dashboards.trace_figures import page_context
    from stacklens.settings import Settings
    from stacklens.traces.answers import trace_out
    from stacklens.traces.reads import read_trace
    from stacklens.traces.search import TraceFilters, search_traces
    from stacklens.warehouse.client import get_warehouse, release_client
    from stacklens.warehouse.migrations import apply_migrations

    data_dir = Path(tempfile.mkdtemp(prefix="stacklens-bench-traces-"))
    settings = Settings(data_dir=data_dir, warehouse_database="bench", run_schedules=False)
    apply_migrations(settings)
    client = get_warehouse(settings)
    started = time.perf_counter()
    _generate(client, spans)
    trace_id = _big_trace(client)
    client.command("OPTIMIZE TABLE spans FINAL")
    client.command("OPTIMIZE TABLE transactions FINAL")
    result: dict[str, Any] = {"spans": spans + 5000, "generate_s": round(time.perf_counter() - started, 1)}
    result["load_before"] = [round(x, 1) for x in os.getloadavg()]
    projects = {PROJECT: "shop"}
    trace = read_trace(client, ORG, trace_id, projects)
    assert trace is not None and len(trace.spans) == 5000, "the 5,000-span trace reads whole"
    result["big_trace"] = {"spans": len(trace.spans), "services": len(trace.services)}

    def api(_i: int) -> bytes:
        found = read_trace(client, ORG, trace_id, projects)
        assert found is not None
        return orjson.dumps(trace_out(found, projects))

    template = templates.get_template("trace.html")

    def page_server(_i: int) -> str:
        found = read_trace(client, ORG, trace_id, projects)
        assert found is not None
        return template.render({"org": "acme", **page_context(found, projects, "acme")})

    result["api"] = _time("api: GET /api/traces/{id}, 5,000 spans", api)
    result["page_server"] = _time("page server: read + HTML, 5,000 spans", page_server)
    html = page_server(0)
    result["page_html_kib"] = round(len(html.encode()) / 1024)
    # What travels to a browser that accepts gzip (api/compression.py: zlib level 6).
    result["page_html_gzip_kib"] = round(len(gzip.compress(html.encode(), 6)) / 1024)
    result["page_browser"] = _browser_ms(html, 5)
    server, browser = result["page_server"], result["page_browser"]
    result["page_total_median_ms"] = round(server["median_ms"] + browser["median_ms"], 1)
    result["page_total_p95_ms"] = round(server["p95_ms"] + browser["p95_ms"], 1)
    # What the page costs in CPU whatever the load: the server's time and the renderer's main thread.
    result["page_cpu_median_ms"] = round(server["cpu_median_ms"] + browser["main_thread_median_ms"], 1)
    result["page_cpu_p95_ms"] = round(server["cpu_p95_ms"] + browser["main_thread_p95_ms"], 1)
    now = datetime.now(UTC)
    searches: list[dict[str, str]] = [
        {},
        {"range": "7d"},
        {"service": "payments"},
        {"service": "worker", "range": "7d"},
        {"operation": "db", "min_duration": "350"},
        {"status": "error", "range": "7d"},
        {"release": "1.2.0", "operation": "queue.publish"},
        {"min_duration": "399", "service": "auth", "range": "7d"},
        {"service": "no-such-service", "range": "7d"},
    ]

    def search(i: int) -> int:
        return len(
            search_traces(
                client, ORG, PROJECT, TraceFilters.parse(now=now, **searches[i % len(searches)]), projects
            )
        )

    result["search"] = _time("search: 9 filter sets, 24 h and 7 d", search, calls=45)
    result["load_after"] = [round(x, 1) for x in os.getloadavg()]
    release_client(settings.resolved_warehouse_url, settings.warehouse_database)
    shutil.rmtree(data_dir, ignore_errors=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--spans", type=int, default=1_000_000, help="spans of the search (default 1,000,000)"
    )
    args = parser.parse_args()
    print(json.dumps(run(args.spans), indent=2))


if __name__ == "__main__":
    main()
