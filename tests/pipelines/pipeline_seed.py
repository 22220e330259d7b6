"""Fixtures for the pipeline tests: a migrated warehouse database, a seeded raw layer, the Dagster
instance."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import dagster as dg
import pytest
from clickhouse_connect.driver.client import Client

from pipelines.definitions import definitions_for
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations

ORG, PROJECT = 3, 30
PAGES = ["/", "/products/{id}", "/checkout"]
API_URLS = [
    "https://api.shop.test/api/items/{n}",
    "https://api.shop.test/api/cart",
    "/api/users/{uuid}/orders",
]


@pytest.fixture
def client(settings: Settings) -> Client:
    # Every table: the `event_counters` step compares the issue list's daily tables (0200-0202) with the
    # events and records what it repaired (0204). Through the runner, so a copy of the process's migrated
    # template (tests/warehouse_template.py): ~0.3 s instead of running every file's statements (1.2-2 s).
    apply_migrations(settings)
    return get_warehouse(settings)


@pytest.fixture
def defs(settings: Settings) -> dg.Definitions:
    """The definitions with resources bound to this test's settings (what the embedded runner uses)."""
    return definitions_for(settings)


@dataclass
class Seeded:
    transactions: list[dict] = field(default_factory=list)
    spans: list[dict] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)


TX_COLS = [
    "org_id",
    "project_id",
    "event_id",
    "timestamp",
    "end_timestamp",
    "received_at",
    "release",
    "op",
    "duration_ms",
    "page",
    "http_method",
    "http_status",
    "measurements",
    "transaction",
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
    "response_content_length",
    "decoded_content_length",
    "render_blocking_status",
]
EV_COLS = [
    "org_id",
    "project_id",
    "event_id",
    "issue_id",
    "fingerprint",
    "timestamp",
    "received_at",
    "title",
    "culprit",
    "level",
    "release",
    "environment",
    "service",
    "user_key",
    "in_app_frames",
]


def _insert(client: Client, table: str, rows: list[dict], cols: list[str]) -> None:
    if rows:
        client.insert(table, [[r[c] for c in cols] for r in rows], column_names=cols)


def seed_performance(
    client: Client,
    *,
    days: list[datetime],
    views_per_day: int,
    seed: int,
    received: datetime | None = None,
    releases: tuple[str, ...] = ("1.0.0", "1.1.0"),
) -> Seeded:
    """Page loads with measurements, resource and API spans, and server transactions, shaped like the raw
    tables; each page load in one of ``releases``."""
    rng = random.Random(seed)
    out = Seeded()
    received = received or datetime.now(UTC)
    for day in days:
        for i in range(views_per_day):
            start = day + timedelta(seconds=rng.randint(0, 80_000), milliseconds=rng.randint(0, 999))
            page = rng.choice(PAGES)
            release = rng.choice(releases)
            tx_id = uuid.UUID(int=rng.getrandbits(128))
            load = rng.lognormvariate(7, 0.5)
            measurements = {
                "ttfb": rng.uniform(50, 900),
                "lcp": rng.uniform(500, 4000),
                "cls": rng.uniform(0, 0.4),
            }
            if i % 3 == 0:
                measurements["inp"] = rng.uniform(20, 600)
            out.transactions.append(
                {
                    "org_id": ORG,
                    "project_id": PROJECT,
                    "event_id": tx_id,
                    "timestamp": start,
                    "end_timestamp": start + timedelta(milliseconds=load),
                    "received_at": received,
                    "release": release,
                    "op": "pageload",
                    "duration_ms": load,
                    "page": page,
                    "http_method": "",
                    "http_status": 0,
                    "measurements": measurements,
                    "transaction": page,
                }
            )
            spans = [("browser", "domContentLoadedEvent", rng.uniform(100, 1500), None, "", 0)]
            spans.append(
                (
                    "resource.script",
                    f"https://cdn.shop.test/app.{i % 4}.js",
                    rng.uniform(20, 400),
                    rng.randint(50_000, 400_000),
                    "blocking" if i % 2 else "non-blocking",
                    0,
                )
            )
            spans.append(
                (
                    "resource.css",
                    "https://cdn.shop.test/site.css?v=3",
                    rng.uniform(10, 700),
                    rng.randint(10_000, 120_000),
                    "blocking",
                    0,
                )
            )
            spans.append(
                (
                    "resource.img",
                    "https://cdn.shop.test/hero.png",
                    rng.uniform(30, 900),
                    rng.randint(90_000, 400_000),
                    "non-blocking",
                    0,
                )
            )
            for _ in range(rng.randint(0, 3)):
                url = rng.choice(API_URLS).format(
                    n=rng.randint(1, 999), uuid=uuid.UUID(int=rng.getrandbits(128))
                )
                status = rng.choice([200, 200, 200, 201, 404, 500])
                spans.append(("http.client", f"GET {url}", rng.uniform(20, 2500), None, "", status))
            for j, (op, desc, dur, size, blocking, status) in enumerate(spans):
                out.spans.append(
                    {
                        "org_id": ORG,
                        "project_id": PROJECT,
                        "transaction_event_id": tx_id,
                        "span_id": f"{i:08x}{j:08x}",
                        "timestamp": start + timedelta(milliseconds=rng.uniform(0, 50))
                        if op != "browser"
                        else start,
                        "duration_ms": dur,
                        "received_at": received,
                        "op": op,
                        "description": desc,
                        "status_code": status,
                        "http_method": "GET" if op == "http.client" else "",
                        "transaction_op": "pageload",
                        "page": page,
                        "release": release,
                        "response_content_length": size,
                        "decoded_content_length": size * 3 if size else None,
                        "render_blocking_status": blocking,
                    }
                )
            # A server-side API request too.
            server_path = rng.choice(["/api/items/{id}", "/api/cart"])
            out.transactions.append(
                {
                    "org_id": ORG,
                    "project_id": PROJECT,
                    "event_id": uuid.UUID(int=rng.getrandbits(128)),
                    "timestamp": start,
                    "end_timestamp": start,
                    "received_at": received,
                    "release": release,
                    "op": "http.server",
                    "duration_ms": rng.uniform(5, 1500),
                    "page": server_path,
                    "http_method": rng.choice(["GET", "POST"]),
                    "http_status": rng.choice([200, 200, 302, 400, 503]),
                    "measurements": {},
                    "transaction": server_path,
                }
            )
    _insert(client, "transactions", out.transactions, TX_COLS)
    _insert(client, "spans", out.spans, SPAN_COLS)
    return out


def seed_errors(
    client: Client,
    *,
    issues: int,
    per_issue: int,
    days: list[datetime],
    seed: int,
    received: datetime | None = None,
) -> Seeded:
    """Error events for ``issues`` distinct issues with users, releases and in-app frames."""
    rng = random.Random(seed)
    out = Seeded()
    received = received or datetime.now(UTC)
    for k in range(issues):
        fingerprint = f"fp{k:04d}"
        for _ in range(per_issue):
            ts = rng.choice(days) + timedelta(seconds=rng.randint(0, 86_000))
            out.events.append(
                {
                    "org_id": ORG,
                    "project_id": PROJECT,
                    "event_id": uuid.UUID(int=rng.getrandbits(128)),
                    "issue_id": 1000 + k,
                    "fingerprint": fingerprint,
                    "timestamp": ts,
                    "received_at": received,
                    "title": f"ValueError: bad {k}",
                    "culprit": f"app.views:handler_{k}",
                    "level": "error",
                    "release": rng.choice(["1.0.0", "1.1.0", ""]),
                    "environment": rng.choice(["production", "staging"]),
                    "service": "web",
                    "user_key": rng.choice(["", "u1", "u2", "u3", f"u{k}x"]),
                    "in_app_frames": [f"app.views:handler_{k}", "app.middleware:wrap"],
                }
            )
    _insert(client, "events", out.events, EV_COLS)
    return out


@pytest.fixture
def instance(settings: Settings):
    from pipelines.embedded import dagster_instance

    inst = dagster_instance(settings)
    yield inst
    inst.dispose()
