"""The demo's alerting: a signed webhook channel to the shop's inbox and a rule of each type, idempotent;
a test send reaches the inbox, which verifies the signature and keeps each webhook-id once."""

from __future__ import annotations

import stat
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from sqlalchemy import select

from demo.alerts import (
    ANOMALY_FIRED,
    ANOMALY_QUIET,
    CRASH_FREE_PERCENT,
    FIRING,
    INBOX_PATH,
    ensure_demo_alerts,
)
from demo.budgets import ensure_demo_budgets
from demo_shop.alert_inbox import inbox_router
from stacklens.alerts.evaluation import evaluate
from stacklens.alerts.measures import measure
from stacklens.alerts.preview import preview
from stacklens.alerts.sending import send_test
from stacklens.cli.launch import demo_allow
from stacklens.control.budgets import list_budgets
from stacklens.control.db import session_scope
from stacklens.control.models.alerts import AlertChannel, AlertRule, AlertRuleState
from stacklens.control.projects import project_by_slug
from stacklens.performance.budget_status import with_status
from stacklens.settings import Settings
from tests.demo import demo_pageloads, demo_sessions
from tests.stacklens.alerts.helpers import free_port, org_with_project
from tests.stacklens.performance.perf_seed import migrated


@pytest.fixture
def shop(tmp_path) -> Iterator[tuple[str, object]]:
    secret_file = tmp_path / "webhook_secret"
    app = FastAPI()
    app.include_router(inbox_router(secret_file))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}", secret_file
    server.should_exit = True
    thread.join(5)


def test_demo_channel_and_rules_fill_the_pages_and_deliver(settings: Settings, shop) -> None:
    url, secret_file = shop
    org_id, _, slug = org_with_project(settings)
    ensure_demo_alerts(settings, "Acme", slug, url, secret_file)
    ensure_demo_alerts(settings, "Acme", slug, url, secret_file)  # again: nothing doubles
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600 and secret_file.read_text().startswith("whsec_")
    with session_scope(settings) as session:
        (channel,) = session.scalars(select(AlertChannel).where(AlertChannel.org_id == org_id))
        types = sorted(r.type for r in session.scalars(select(AlertRule).where(AlertRule.org_id == org_id)))
    assert types == sorted(
        [
            "performance_budget",
            "performance_budget",
            "performance_budget",
            "new_issue",
            "regression",
            "event_frequency",
            "error_rate",
            "crash_free_rate",
            *["anomaly"] * 4,
        ]
    )
    allowed = settings.model_copy(update={"outbound_allow": demo_allow(settings)})
    result = send_test(allowed, org_id, channel.id)
    assert result["outcome"] == "delivered" and result["status_code"] == 200, result
    inbox = httpx.get(url + INBOX_PATH).json()["received"]
    assert inbox[0]["type"] == "alert.test" and inbox[0]["id"] == result["notification_id"]
    forged = httpx.post(
        url + INBOX_PATH,
        json={"type": "x"},
        headers={"webhook-id": "msg_x", "webhook-timestamp": "1", "webhook-signature": "v1,AAAA"},
    )
    assert forged.status_code == 401


def test_on_the_demo_s_traffic_exactly_the_named_rule_fires_and_the_budgets_pass_fail_and_wait(
    settings: Settings, make_org, tmp_path
) -> None:
    """What the README says of the demo: the JavaScript rule fires, the other rules do not; the LCP budget
    passes, the JavaScript budget fails, the cart's INP budget has not enough data. On a week of the demo's
    page loads (its rate and releases; no shop errors: the error rules are checked against the rate in
    test_rates and against real shop traffic in test_traffic) and two weeks of its sessions at the backfill's
    per-release crash-free rates: the crash-free rule is ok on shop@1.4.0."""
    org = make_org("Demo")
    client = migrated(settings)
    loads = demo_pageloads.land(client, org["org_id"], org["project_id"])
    assert 7 * 96 * 0.8 < loads < 8 * 96 * 1.2  # the demo's rate: 96 a day
    sessions = demo_sessions.land(client, org["org_id"], org["project_id"])
    assert {"shop@1.3.0", "shop@1.4.0"} <= set(sessions) and sessions["shop@1.4.0"] > 2000
    ensure_demo_alerts(settings, "Demo", org["project"], f"http://127.0.0.1:{free_port()}", tmp_path / "s")
    ensure_demo_budgets(settings, org["project"])

    summary = evaluate(settings, client, "http://127.0.0.1:8000")
    assert summary.failed == 0, summary.errors
    assert sorted({f.split(" [")[0] for f in summary.firing}) == sorted(FIRING), summary.firing
    with session_scope(settings) as session:
        states = {
            rule.name: {
                s.state
                for s in session.scalars(select(AlertRuleState).where(AlertRuleState.rule_id == rule.id))
            }
            for rule in session.scalars(select(AlertRule).where(AlertRule.org_id == org["org_id"]))
        }
    assert states["Checkout LCP over 2.5 s"] == {"ok"} and states["Page load p75 over 3 s, all pages"] == {
        "ok"
    }
    assert states[f"Crash-free sessions below {CRASH_FREE_PERCENT} %"] == {"ok"}
    with session_scope(settings) as session:
        (crash_rule,) = session.scalars(select(AlertRule).where(AlertRule.type == "crash_free_rate"))
        (crash,) = measure(client, [crash_rule], datetime.now(UTC))[crash_rule.id]
    assert crash.release == "shop@1.4.0" and crash.samples > 2000 and 96.5 < (crash.value or 0) < 98.5
    # Its 30-day preview: firing while shop@1.3.0 (94.7 %) was the newest release, never on shop@1.4.0.
    replayed = preview(client, crash_rule)
    switch = min(
        s.at for s in replayed.steps if s.at.date() >= (datetime.now(UTC) - timedelta(days=7)).date()
    )
    assert replayed.periods and all(
        start < switch and stop is not None for start, stop, _ in replayed.periods
    )
    assert all(s.state != "firing" for s in replayed.steps if s.at > switch)
    with session_scope(settings) as session:
        rows = with_status(client, list_budgets(session, project_by_slug(session, org["project"])))
    status = {(r["metric"], r["scope"]): r["status"] for r in rows}
    assert status == {
        ("lcp_ms", "*"): "pass",
        ("js_bytes", "*"): "fail",
        ("inp_ms", "/cart"): "insufficient_data",
    }, rows


def test_the_demo_s_anomaly_rule_fired_once_on_shop_1_3_0_s_bundle_and_the_others_stay_quiet(
    settings: Settings, make_org, tmp_path
) -> None:
    """Five weeks of the demo's page loads (its rate and releases: shop@1.3.0 shipped fourteen days ago with a
    bundle 57 % heavier, shop@1.4.0 seven days ago with a lighter one): the JavaScript anomaly rule's 28-day
    backtest fired exactly once, in the first hour of shop@1.3.0, and names that release; it is not firing
    now; the LCP anomaly rule stayed quiet through the daily rhythm and the release's slower pages."""
    from stacklens.anomalies.backtest import backtest
    from stacklens.anomalies.live import rule_fields

    org = make_org("Demo")
    client = migrated(settings)
    # The demo's whole history (35 days; the releases ship at the start of their day, shop@1.3.0 three weeks
    # after the history began, in the hour its third week enters the baseline), drawn up to the start of this
    # hour: the draws then depend only on the hour of the day, and each of the 24 was run.
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    demo_pageloads.land(client, org["org_id"], org["project_id"], days=demo_pageloads.HISTORY_DAYS, now=now)
    ensure_demo_alerts(settings, "Demo", org["project"], f"http://127.0.0.1:{free_port()}", tmp_path / "s")
    with session_scope(settings) as session:
        by_name = {r.name: r for r in session.scalars(select(AlertRule).where(AlertRule.type == "anomaly"))}
        answers = {
            name: backtest(client, org["org_id"], r.project_id, rule_fields(r), "", 28, r.window_seconds, now)
            for name, r in by_name.items()
        }
    (fire,) = answers[ANOMALY_FIRED]["fires"]
    assert fire["releases"] == ["shop@1.3.0"] and fire["value"] > fire["upper"] > fire["expected"]
    assert answers[ANOMALY_FIRED]["points"][-1]["score"] is not None
    assert answers[ANOMALY_QUIET[0]]["fires"] == []
    summary = evaluate(settings, client, "http://127.0.0.1:8000")
    assert summary.failed == 0 and not [f for f in summary.firing if "anomaly" in f or "drop" in f]
