from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from stacklens.alerts import outbox, rule_validation, rules
from stacklens.alerts.errors import AlertInputError
from stacklens.alerts.evaluation import evaluate
from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from stacklens.control.models.alerts import AlertEvaluation, AlertNotification, AlertRuleState
from stacklens.settings import Settings
from tests.stacklens.alerts.helpers import org_with_project
from tests.stacklens.alerts.receiver import Receiver
from tests.stacklens.performance.budget_seed import bucketed
from tests.stacklens.performance.perf_seed import build_facts

NOW = datetime.now(UTC).replace(second=0, microsecond=0)
TX = [
    "org_id",
    "project_id",
    "event_id",
    "timestamp",
    "end_timestamp",
    "received_at",
    "release",
    "environment",
    "op",
    "status",
    "http_status",
    "duration_ms",
    "page",
    "measurements",
    "transaction",
]
EV = [
    "org_id",
    "project_id",
    "event_id",
    "issue_id",
    "fingerprint",
    "timestamp",
    "received_at",
    "title",
    "level",
    "release",
    "environment",
    "user_key",
    "tags",
]


def tx(project: int, load: float, at: datetime, status: str = "ok", page: str = "/checkout") -> list:
    return [
        1,
        project,
        uuid.uuid4(),
        at,
        at,
        NOW,
        "2.0.0",
        "production",
        "pageload",
        status,
        200,
        load,
        page,
        {"lcp": load},
        page,
    ]


def ev(project: int, issue: int, at: datetime, user: str, level: str = "error") -> list:
    return [
        1,
        project,
        uuid.uuid4(),
        issue,
        f"fp{issue}",
        at,
        NOW,
        f"TypeError in issue {issue}",
        level,
        "2.0.0",
        "production",
        user,
        {"browser": "Firefox"},
    ]


@pytest.fixture
def world(settings: Settings, client):
    settings = settings.model_copy(update={"outbound_allow": "127.0.0.1"})
    receiver = Receiver().start()
    org_id, project_id, slug = org_with_project(settings)
    with session_scope(settings) as session:
        channel, secret = create_channel(
            session, org_id, settings, type="webhook", name="hook", url=receiver.url
        )
    receiver.secret = secret
    yield settings, client, org_id, project_id, slug, channel.id, receiver
    receiver.stop()


def _load(client, rows: list[list], events: list[list] | None = None, days: int = 2) -> None:
    if rows:
        client.insert("transactions", rows, column_names=TX)
        fold(client, NOW - timedelta(days=days), NOW + timedelta(hours=1))
    if events:
        client.insert("events", events, column_names=EV)


def fold(client, start: datetime, end: datetime) -> None:
    """The page-load facts and states of [start, end) rebuilt from the raw rows (what the pipeline does)."""
    build_facts(client, start, end)


def _states(settings: Settings, rule_id: int) -> dict[str, str]:
    with session_scope(settings) as session:
        return {
            s.scope_key: s.state
            for s in session.scalars(select(AlertRuleState).where(AlertRuleState.rule_id == rule_id))
        }


def test_performance_rule_fires_once_resolves_with_hysteresis_and_notifies(world) -> None:
    settings, client, org_id, project_id, slug, channel_id, receiver = world
    with session_scope(settings) as session:
        rule = rules.create_rule(
            session,
            org_id,
            {
                "name": "Checkout LCP",
                "type": "performance_budget",
                "project": slug,
                "metric": "lcp_ms",
                "statistic": "p75",
                "threshold": 2000,
                "resolve_threshold": 1800,
                "scope": "/check*",
                "window": "1h",
                "min_samples": 5,
                "channels": [channel_id],
            },
        )
    _load(client, [tx(project_id, 3000, NOW - timedelta(minutes=m)) for m in range(1, 4)])
    evaluate(settings, client, "http://sl.test", NOW)
    assert _states(settings, rule.id) == {"*": "insufficient_data"}  # 3 samples < 5: never fires
    _load(client, [tx(project_id, 3000, NOW - timedelta(minutes=m)) for m in range(4, 8)])
    first = evaluate(settings, client, "http://sl.test", NOW)
    again = evaluate(settings, client, "http://sl.test", NOW + timedelta(minutes=1))
    assert first.notifications == 1 and again.notifications == 0  # transitions only
    # The server log warns when a rule begins firing, not again each minute it stays firing.
    assert len(first.newly_firing) == 1 and first.firing == first.newly_firing
    assert again.newly_firing == [] and again.firing == first.firing
    assert _states(settings, rule.id) == {"*": "firing"}
    outbox.drain(settings)
    body = receiver.received[0].json()
    assert receiver.received[0].signature_ok
    assert (
        body["type"] == "alert.firing"
        and body["data"]["value"] == bucketed(3000)
        and body["data"]["threshold"] == 2000
    )
    assert body["data"]["release"] == "2.0.0" and body["data"]["samples"] == 7
    assert (
        f"Largest contentful paint (LCP) p75 on /check* {bucketed(3000):,.1f} ms > 2,000.0 ms"
        in body["data"]["subject"]
    )
    assert body["data"]["link"] == f"http://sl.test/orgs/acme/projects/{slug}/performance"
    with session_scope(settings) as session:
        evaluations = list(
            session.scalars(
                select(AlertEvaluation).where(AlertEvaluation.rule_id == rule.id).order_by(AlertEvaluation.id)
            )
        )
    assert [e.decision for e in evaluations] == [
        "insufficient data: 3 samples < 5 needed",
        f"firing: {bucketed(3000):,.1f} ms > 2,000.0 ms",
        f"still firing: {bucketed(3000):,.1f} ms > 2,000.0 ms",
    ]
    assert evaluations[1].samples == 7 and evaluations[1].threshold == 2000 and evaluations[1].notified
    assert evaluations[1].window_end - evaluations[1].window_start >= timedelta(hours=1)


def test_error_rules_new_issue_frequency_and_error_rate(world) -> None:
    settings, client, org_id, project_id, slug, channel_id, _ = world
    base = {"project": slug, "channels": [channel_id], "window": "1h"}
    with session_scope(settings) as session:
        new = rules.create_rule(
            session, org_id, {**base, "name": "New", "type": "new_issue", "level": "error"}
        )
        freq = rules.create_rule(
            session,
            org_id,
            {
                **base,
                "name": "Busy",
                "type": "event_frequency",
                "threshold": 2,
                "count_kind": "users",
                "tag": "browser:Firefox",
            },
        )
        rate = rules.create_rule(
            session,
            org_id,
            {**base, "name": "Failing", "type": "error_rate", "threshold": 10, "min_samples": 4},
        )
    old = NOW - timedelta(days=3)
    _load(
        client,
        [
            tx(project_id, 100, NOW - timedelta(minutes=5), "internal_error"),
            *[tx(project_id, 100, NOW - timedelta(minutes=5)) for _ in range(3)],
        ],
        [
            ev(project_id, 11, old, "u1"),
            ev(project_id, 11, NOW - timedelta(minutes=2), "u1"),
            *[ev(project_id, 22, NOW - timedelta(minutes=3), f"u{i}") for i in range(3)],
            ev(project_id, 33, NOW - timedelta(minutes=1), "u9", level="warning"),
        ],
    )
    summary = evaluate(settings, client, "http://sl.test", NOW)
    assert _states(settings, new.id) == {
        "*": "ok",
        "22": "firing",
    }  # 11 is old, 33 is a warning (level filter)
    assert _states(settings, freq.id) == {"22": "firing"}  # issues within the threshold keep no state
    assert _states(settings, rate.id) == {"*": "firing"}  # 1 of 4 failed: 25 % > 10 %
    assert summary.notifications == 3
    assert evaluate(settings, client, "http://sl.test", NOW + timedelta(minutes=1)).notifications == 0
    later = evaluate(settings, client, "http://sl.test", NOW + timedelta(hours=2))  # window empty: resolves
    assert _states(settings, freq.id)["22"] == "resolved" and later.notifications >= 1
    assert _states(settings, new.id)["22"] == "resolved"  # the occurrence's window has passed
    with session_scope(settings) as session:
        kinds = sorted(n.kind for n in session.scalars(select(AlertNotification)))
    assert kinds.count("resolved") == 1 and kinds.count("firing") == 3


def test_rule_validation_names_the_field(world) -> None:
    settings, _, org_id, _, slug, _, _ = world
    good = {"name": "x", "type": "performance_budget", "project": slug, "metric": "lcp_ms", "threshold": 1}
    cases = [
        ({"metric": "fcp"}, "metric: unknown metric 'fcp'"),
        ({"threshold": "fast"}, "threshold: must be a number (got 'fast')"),
        ({"threshold": [1]}, "threshold: must be a number (got list)"),
        ({"window": "7 weeks"}, "window: '7 weeks' is not a window"),
        ({"statistic": "p95"}, "statistic: lcp_ms keeps p75"),
        ({"project": "nope"}, "project: no project 'nope'"),
        ({"channels": [999]}, "channels: no channel 999"),
        ({"type": "weird"}, "type: unknown rule type 'weird'"),
        ({"resolve_threshold": 5}, "resolve_threshold: must be at most the threshold"),
    ]
    with session_scope(settings) as session:
        for change, message in cases:
            with pytest.raises(AlertInputError) as caught:
                rule_validation.clean(session, org_id, {**good, **change})  # type: ignore[dict-item]
            assert str(caught.value).startswith(message), (change, str(caught.value))
