"""Raw page loads, spans, server transactions and error events for the performance-view tests, with everything
the filters and pages tell apart: environments, releases, browsers (Safari sends no LCP/INP/CLS and no
render-blocking status), mobile and desktop, API calls with ids folded into one endpoint, and a second
organization whose rows must never show."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from clickhouse_connect.driver.client import Client

from pipelines.assets.performance import STATE_QUERIES
from stacklens.performance.score import sql_parameters
from stacklens.settings import Settings
from stacklens.view_filters import ViewFilters
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from stacklens.warehouse.queries import load_query

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
PAGES = ["/", "/products/{id}", "/checkout"]
BROWSERS = [("Chrome", "Linux"), ("Chrome", "Android"), ("Firefox", "Windows"), ("Safari", "macOS")]
TX_COLS = [
    "org_id",
    "project_id",
    "event_id",
    "trace_id",
    "timestamp",
    "end_timestamp",
    "received_at",
    "release",
    "environment",
    "op",
    "duration_ms",
    "page",
    "url",
    "http_method",
    "http_status",
    "measurements",
    "transaction",
    "browser_name",
    "os_name",
]
SPAN_COLS = [
    "org_id",
    "project_id",
    "transaction_event_id",
    "span_id",
    "timestamp",
    "duration_ms",
    "received_at",
    "op",
    "description",
    "status_code",
    "http_method",
    "transaction_op",
    "page",
    "release",
    "environment",
    "response_content_length",
    "decoded_content_length",
    "transfer_size",
    "render_blocking_status",
]


@dataclass
class Seeded:
    transactions: list[dict] = field(default_factory=list)
    spans: list[dict] = field(default_factory=list)


def page_loads_in(data: Seeded, filters: ViewFilters, page: str = "") -> list[dict]:
    """The raw page loads the filters (and ``page``, '' = any) pick: what a read of the window must count."""
    return [
        t
        for t in data.transactions
        if t["op"] == "pageload"
        and filters.since <= t["timestamp"] < filters.until
        and (not filters.environment or t["environment"] == filters.environment)
        and (not filters.release or t["release"] == filters.release)
        and (not filters.browser or t["browser_name"] == filters.browser)
        and (not page or t["page"] == page)
    ]


def migrated(settings: Settings) -> Client:
    apply_migrations(settings)
    return get_warehouse(settings)


def seed(
    client: Client,
    org_id: int,
    project_id: int,
    *,
    loads: int,
    seed: int = 7,
    days: int = 14,
    facts: bool = True,
) -> Seeded:
    """``loads`` page loads spread over the ``days`` before :data:`NOW`, each with resources and API calls.

    ``facts=False`` leaves the fact tables to the next seed of the same ``days`` (its :func:`build_facts`
    covers every organization's rows of those hours): building them is ~90% of a seed's time, and a fixture
    seeding two organizations built them twice."""
    rng = random.Random(seed)
    out = Seeded()
    for i in range(loads):
        start = NOW - timedelta(seconds=rng.randint(60, days * 86_400 - 60), milliseconds=rng.randint(0, 999))
        page = rng.choice(PAGES)
        release = "shop@1.0.0" if start < NOW - timedelta(days=days / 2) else "shop@1.1.0"
        slow = 1.6 if release == "shop@1.1.0" else 1.0
        environment = rng.choice(["production", "production", "staging"])
        browser, os_name = rng.choice(BROWSERS)
        tx_id = uuid.UUID(int=rng.getrandbits(128))
        load = rng.lognormvariate(7, 0.5) * slow
        m = {"ttfb": rng.uniform(50, 1500), "fcp": rng.uniform(300, 3500)}
        if browser != "Safari":
            m["lcp"] = rng.uniform(500, 5000) * slow
            m["cls"] = rng.uniform(0, 0.4)
            if browser == "Chrome" and i % 2:
                m["inp"] = rng.uniform(20, 800)
        url = "https://shop.test" + page.replace("{id}", str(rng.randint(1, 9)))
        out.transactions.append(
            {
                "org_id": org_id,
                "project_id": project_id,
                "event_id": tx_id,
                "trace_id": tx_id.hex,
                "timestamp": start,
                "end_timestamp": start + timedelta(milliseconds=load),
                "received_at": NOW,
                "release": release,
                "environment": environment,
                "op": "pageload",
                "duration_ms": load,
                "page": page,
                "url": url,
                "http_method": "",
                "http_status": 0,
                "measurements": m,
                "transaction": page,
                "browser_name": browser,
                "os_name": os_name,
            }
        )
        blocking = "" if browser == "Safari" else "blocking"
        spans = [
            ("browser.domContentLoadedEvent", url, rng.uniform(100, 1500), None, None, "", 0),
            (
                "resource.script",
                f"https://shop.test/static/app.js?v={i % 3}",
                rng.uniform(20, 400),
                int(350_000 * slow),
                350_000 * 3,
                blocking,
                0,
            ),
            (
                "resource.css",
                "https://shop.test/static/site.css",
                rng.uniform(10, 700),
                60_000,
                60_000,
                blocking,
                0,
            ),
            (
                "resource.img",
                "https://shop.test/img/hero.png",
                rng.uniform(30, 900),
                400_000,
                400_000,
                "" if browser == "Safari" else "non-blocking",
                0,
            ),
            (
                "resource.script",
                "https://cdn.tracker.test/t.js",
                rng.uniform(30, 200),
                90_000,
                200_000,
                "" if browser == "Safari" else "non-blocking",
                0,
            ),
        ]
        for _ in range(rng.randint(1, 4)):
            status = rng.choice([200, 200, 200, 201, 404, 500])
            spans.append(
                (
                    "http.client",
                    f"GET https://shop.test/api/items/{rng.randint(1, 999)}",
                    rng.uniform(20, 2500),
                    700_000,
                    None,
                    "",
                    status,
                )
            )
        for j, (op, desc, dur, size, decoded, rbs, status) in enumerate(spans):
            out.spans.append(
                {
                    "org_id": org_id,
                    "project_id": project_id,
                    "transaction_event_id": tx_id,
                    "span_id": f"{i:08x}{j:08x}",
                    "timestamp": start + timedelta(milliseconds=rng.uniform(0, 50)),
                    "duration_ms": dur,
                    "received_at": NOW,
                    "op": op,
                    "description": desc,
                    "status_code": status,
                    "http_method": "GET" if op == "http.client" else "",
                    "transaction_op": "pageload",
                    "page": page,
                    "release": release,
                    "environment": environment,
                    "response_content_length": size,
                    "decoded_content_length": decoded,
                    "transfer_size": (0 if i % 5 == 0 else size + 300) if size else None,
                    "render_blocking_status": rbs,
                }
            )
        out.transactions.append(
            {
                "org_id": org_id,
                "project_id": project_id,
                "event_id": uuid.UUID(int=rng.getrandbits(128)),
                "trace_id": "",
                "timestamp": start,
                "end_timestamp": start,
                "received_at": NOW,
                "release": release,
                "environment": environment,
                "op": "http.server",
                "duration_ms": rng.uniform(5, 1500),
                "page": rng.choice(["/api/items/{id}", "/api/cart"]),
                "url": "",
                "http_method": "GET",
                "http_status": rng.choice([200, 200, 302, 400, 503]),
                "measurements": {},
                "transaction": "",
                "browser_name": "",
                "os_name": "",
            }
        )
    client.insert("transactions", [[r[c] for c in TX_COLS] for r in out.transactions], column_names=TX_COLS)
    client.insert("spans", [[r[c] for c in SPAN_COLS] for r in out.spans], column_names=SPAN_COLS)
    if facts:
        build_facts(client, NOW - timedelta(days=days + 1), NOW + timedelta(hours=1))
    return out


# In the order the assets run them: the states read the facts the same tick refreshed, the days the hours.
FACT_QUERIES = STATE_QUERIES


def build_facts(client: Client, start: datetime, end: datetime) -> None:
    """What the performance assets do for the hours in [start, end): the fact tables every performance view
    reads (`pageload_facts`, `resource_facts`, `endpoint_facts` and their hourly and daily states; the same
    named queries and parameters)."""
    parameters = {**sql_parameters(), "start": start, "end": end, "materialized_at": datetime.now(UTC)}
    for query in FACT_QUERIES:
        client.command(load_query(f"pipelines/{query}"), parameters=parameters)
    # And as a run does, its watermark: the pages' "building" notice (stacklens/metrics/mart_progress.py)
    # reads what the marts have taken from it.
    mark_built(client, "pageload_facts")


def mark_built(client: Client, asset: str) -> None:
    """Record ``asset``'s watermark at now, as its run does after success (the rows received so far are
    in)."""
    now = datetime.now(UTC)
    client.command(
        load_query("pipelines/pipeline_watermarks"),
        parameters={"asset": asset, "watermark": now, "updated_at": now},
    )
