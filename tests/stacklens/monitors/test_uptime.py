"""Uptime probes through the outbound guard against a real local HTTP server: each probe is a row of
`monitor_checks`, the monitor is `down` only after `failure_threshold` failures in a row, and a private
address is refused unless the allow-list names it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from sqlalchemy import select

from stacklens.alerts.rule_types import fires_below
from stacklens.alerts.state import Thresholds, decide
from stacklens.control.db import session_scope
from stacklens.control.models import Project
from stacklens.control.models.monitors import Monitor
from stacklens.explore.query_parser import parse_query
from stacklens.explore.run import run_explore
from stacklens.metrics.catalog import CATALOG
from stacklens.monitors.store import create_monitor
from stacklens.monitors.uptime import probe_due
from stacklens.monitors.uptime_reads import uptime_daily
from stacklens.outbound import AllowList, OutboundClient
from stacklens.performance import window_series
from stacklens.performance.budget_eval import BudgetSpec, evaluate, request
from stacklens.performance.budget_rules import BudgetError, validate_budget
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse

ANSWER = {"code": 200}


class _Site(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(ANSWER["code"])
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"hi")

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/health"
    server.shutdown()
    server.server_close()


def test_probes_land_in_monitor_checks_and_down_needs_the_threshold(
    stores: Settings, org_factory, site: str
) -> None:
    org = org_factory()
    allowed = AllowList.parse("127.0.0.1")
    start = datetime.now(UTC)
    with session_scope(stores) as session:
        project = session.get(Project, org["project_id"])
        assert project is not None
        body = {"slug": "shop", "kind": "uptime", "url": site, "interval_seconds": 30, "failure_threshold": 2}
        create_monitor(session, project, body, allowed, now=start)
    warehouse = get_warehouse(stores)
    client = OutboundClient(allow=allowed)

    def tick(at: datetime) -> str:
        probe_due(stores, warehouse, "https://x.test", client, now=at)
        with session_scope(stores) as session:
            monitor = session.scalar(select(Monitor).where(Monitor.slug == "shop"))
            assert monitor is not None
            return monitor.status

    ANSWER["code"] = 200
    assert tick(start) == "ok"
    assert tick(start + timedelta(seconds=10)) == "ok"  # not due again before its interval: no probe
    ANSWER["code"] = 503
    assert tick(start + timedelta(seconds=30)) == "ok"  # one failure: below the threshold
    assert tick(start + timedelta(seconds=60)) == "down"
    ANSWER["code"] = 200
    assert tick(start + timedelta(seconds=90)) == "ok"
    rows = warehouse.query(
        "SELECT status, http_code, ttfb_ms > 0, total_ms >= ttfb_ms, tls_days_left FROM monitor_checks "
        "WHERE org_id = {org:UInt64} ORDER BY timestamp",
        parameters={"org": org["org_id"]},
    ).result_rows
    assert [tuple(r) for r in rows] == [
        ("ok", 200, True, True, None),
        ("down", 503, True, True, None),
        ("down", 503, True, True, None),
        ("ok", 200, True, True, None),
    ]

    # Without the allow-list, the same private address is refused by the guard: a probe that is down.
    with session_scope(stores) as session:
        monitor = session.scalar(select(Monitor).where(Monitor.slug == "shop"))
        assert monitor is not None
        monitor.failure_threshold = 1
    probe_due(stores, warehouse, "https://x.test", OutboundClient(), now=start + timedelta(seconds=120))
    last = warehouse.query(
        "SELECT status, http_code, error FROM monitor_checks WHERE org_id = {org:UInt64} "
        "ORDER BY timestamp DESC LIMIT 1",
        parameters={"org": org["org_id"]},
    ).result_rows[0]
    assert last[0] == "down" and last[1] == 0 and "STACKLENS_OUTBOUND_ALLOW" in last[2]
    daily = uptime_daily(warehouse, org["org_id"], org["project_id"], monitor.id)
    assert sum(d["probes"] for d in daily) == 5
    if len(daily) == 1:  # (the probes may straddle midnight UTC)
        assert daily[0]["uptime_pct"] == 40.0

    # Explore's monitor_checks dataset answers the same share per monitor.
    body = {
        "dataset": "monitor_checks",
        "project": org["project"],
        "group_by": ["monitor"],
        "aggregates": [{"fn": "avg", "metric": "uptime_pct"}, {"fn": "count", "metric": "monitor_probes"}],
        "since": (start - timedelta(minutes=1)).isoformat(),
        "until": (start + timedelta(minutes=5)).isoformat(),
    }
    explored = run_explore(warehouse, parse_query(body), org["org_id"], [org["project_id"]])
    row = explored.rows[0]
    assert row["monitor"] == "shop"
    assert (row["uptime_pct"], row["count"]) == (40.0, 5), row

    # uptime_pct as a budget: higher is better, so a budget is a floor — the same 40 % everywhere.
    now = start + timedelta(minutes=5)
    spec = BudgetSpec(1, org["project_id"], "uptime_pct", "avg", "*", 99.0, 1, 1)
    floor_failed, floor_passed, other = evaluate(
        warehouse,
        [spec, replace(spec, id=2, value=30.0, scope="sh*"), replace(spec, id=3, scope="other")],
        now,
    )
    assert (floor_failed.value, floor_failed.samples, floor_failed.status) == (40.0, 5, "fail")
    assert floor_failed.margin == pytest.approx(-59.0)  # 59 points under the floor
    assert (floor_passed.status, floor_passed.margin) == ("pass", pytest.approx(10.0))
    assert (other.value, other.status) == (None, "insufficient_data")  # no probes of a monitor "other"
    assert window_series.series(warehouse, request(spec), [now])[0][1:] == (40.0, 5)
    # A rule on it fires below its threshold, as a crash-free rate's does.
    assert fires_below("performance_budget", "uptime_pct") and not fires_below("performance_budget", "lcp_ms")
    assert decide("ok", 40.0, 5, Thresholds(99.0, below=True), "%").state == "firing"


def test_uptime_budget_fields_are_named() -> None:
    assert validate_budget("uptime_pct", "shop", 99.9).scope == "shop"
    for scope, value, field in (("/checkout", 99.0, "scope"), ("*", 100.5, "value")):
        with pytest.raises(BudgetError) as refused:
            validate_budget("uptime_pct", scope, value)
        assert refused.value.field == field


def test_every_metric_has_a_direction() -> None:
    higher = {k for k, m in CATALOG.items() if m.better == "higher"}
    assert {"uptime_pct", "crash_free_sessions", "crash_free_users", "score", "cache_hit_pct"} <= higher
    lower = {
        "lcp_ms",
        "inp_ms",
        "cls",
        "load_time_ms",
        "js_bytes",
        "api_p95_ms",
        "error_pct",
        "probe_total_ms",
    }
    assert all(CATALOG[k].better == "lower" for k in lower)
    for m in CATALOG.values():  # the bands and the direction never disagree
        assert m.thresholds is None or m.thresholds.higher_is_better == (m.better == "higher"), m.key
