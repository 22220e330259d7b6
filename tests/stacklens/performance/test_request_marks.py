"""A page load whose requests straddle an hour boundary, its facts built hour by hour as the scheduled
ticks do: the facts mark its first request of a resource / type and its first call of an endpoint (looking
back an hour into the previous hour's spans), so it counts once across the two hours' states and the views'
edge minutes, and its fan-out counts both calls."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from stacklens.performance import endpoint_reads, resource_reads
from stacklens.view_filters import ViewFilters
from tests.stacklens.performance.perf_seed import NOW, SPAN_COLS, TX_COLS, build_facts, migrated

ORG, PROJECT = 3, 30
BOUNDARY = datetime(2026, 11, 18, 11, 0, tzinfo=UTC)


def _load(client) -> None:
    tx = uuid.UUID(int=42)
    start = BOUNDARY - timedelta(milliseconds=40)
    common = {"org_id": ORG, "project_id": PROJECT, "received_at": NOW, "release": "shop@1.0.0"}
    client.insert(
        "transactions",
        [
            [
                {
                    **common,
                    "event_id": tx,
                    "trace_id": tx.hex,
                    "timestamp": start,
                    "end_timestamp": start + timedelta(seconds=1),
                    "environment": "production",
                    "op": "pageload",
                    "duration_ms": 1000.0,
                    "page": "/",
                    "url": "https://shop.test/",
                    "http_method": "",
                    "http_status": 0,
                    "measurements": {"fcp": 400.0},
                    "transaction": "/",
                    "browser_name": "Chrome",
                    "os_name": "Linux",
                }[c]
                for c in TX_COLS
            ]
        ],
        column_names=TX_COLS,
    )
    spans = [  # (offset ms from the boundary, op, description): one each side of 11:00
        (-30, "resource.script", "https://shop.test/static/app.js?v=1"),
        (-20, "http.client", "GET https://shop.test/api/items/1"),
        (20, "resource.script", "https://shop.test/static/app.js?v=2"),
        (30, "http.client", "GET https://shop.test/api/items/2"),
    ]
    rows = [
        {
            **common,
            "transaction_event_id": tx,
            "span_id": f"{j:016x}",
            "timestamp": BOUNDARY + timedelta(milliseconds=offset),
            "duration_ms": 100.0 + j,
            "op": op,
            "description": desc,
            "status_code": 200 if op == "http.client" else 0,
            "http_method": "GET" if op == "http.client" else "",
            "transaction_op": "pageload",
            "page": "/",
            "environment": "production",
            "response_content_length": 1000,
            "decoded_content_length": 3000,
            "transfer_size": 1300,
            "render_blocking_status": "blocking" if op == "resource.script" else "",
        }
        for j, (offset, op, desc) in enumerate(spans)
    ]
    client.insert("spans", [[r[c] for c in SPAN_COLS] for r in rows], column_names=SPAN_COLS)


@pytest.fixture
def client(settings):
    client = migrated(settings)
    _load(client)
    for hour in (BOUNDARY - timedelta(hours=1), BOUNDARY):  # two ticks, one hour each
        build_facts(client, hour, hour + timedelta(hours=1))
    return client


@pytest.mark.parametrize(
    ("since", "until", "requests", "loads"),
    [
        ("2026-11-18T10:00:00Z", "2026-11-18T12:00:00Z", 2, 1),  # both hours' states
        ("2026-11-18T10:30:00Z", "2026-11-18T11:30:00Z", 2, 1),  # both hours cut: minutes alone
        ("2026-11-18T11:00:00Z", "2026-11-18T12:00:00Z", 1, 0),  # its first requests were the hour before
        ("2026-11-18T11:00:00Z", "2026-11-18T11:30:00Z", 1, 0),
        ("2026-11-18T10:00:00Z", "2026-11-18T11:00:00Z", 1, 1),
    ],
)
def test_a_load_across_an_hour_counts_once(client, since, until, requests, loads) -> None:
    filters = ViewFilters.parse(since=since, until=until, now=NOW)
    types = {r["resource_type"]: r for r in resource_reads.resource_types(client, ORG, PROJECT, filters)}
    assert (types["JavaScript"]["requests"], types["JavaScript"]["loads"]) == (requests, loads)
    assert (types["API"]["requests"], types["API"]["loads"]) == (requests, loads)
    (app,) = resource_reads.resources(client, ORG, PROJECT, filters)
    assert (app["resource"], app["requests"], app["loads"]) == (
        "https://shop.test/static/app.js",
        requests,
        loads,
    )
    (calls,) = endpoint_reads.endpoints(client, ORG, PROJECT, filters)
    assert (calls["path"], calls["calls"], calls["loads"]) == ("/api/items/{id}", requests, loads)
    # the load's calls of the endpoint, as seen from the second one (which looks back into the hour before)
    assert calls["max_per_load"] == (1 if until.endswith("T11:00:00Z") else 2)
