"""Anomaly rules through the real evaluation tick and warehouse (issue #67): a burst of one error fires once,
with a notification that names the value, the expected value, the band, the score, the seasonality and the
release deployed just before; a brand-new issue's first hour never fires; the backtest replays the same
band and finds the same firing."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from sqlalchemy import select

from stacklens.alerts import outbox, rules
from stacklens.alerts.evaluation import evaluate
from stacklens.anomalies.backtest import backtest
from stacklens.anomalies.live import rule_fields
from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from stacklens.control.models import Project
from stacklens.control.models.alerts import AlertEvaluation, AlertRuleState
from stacklens.settings import Settings
from tests.stacklens.alerts.helpers import org_with_project
from tests.stacklens.alerts.receiver import Receiver

# The history's rhythm follows the weekday and the hour (weekends, nights) and its noise is seeded: anchored
# at the same weekday and hour every run (the last Sunday, 06:20 UTC), it is the same history whatever the
# day. Anchored at the run's own hour, a few of the week's hours drew a second firing from the noise.
_RUN = datetime.now(UTC)
NOW = (_RUN - timedelta(days=(_RUN.weekday() - 6) % 7)).replace(hour=6, minute=20, second=0, microsecond=0)
NOW = NOW - timedelta(days=7) if NOW > _RUN else NOW
LAST_HOUR = NOW.replace(minute=0) - timedelta(hours=1)  # the last complete hour: the burst's
DAYS = 15
EV = ["org_id", "project_id", "event_id", "issue_id", "fingerprint", "timestamp", "received_at", "title",
      "level", "release", "environment", "user_key"]  # fmt: skip
ISSUE = ["org_id", "project_id", "issue_id", "fingerprint", "title", "first_seen", "last_seen", "events",
         "first_release", "status", "materialized_at"]  # fmt: skip


def events(org: int, project: int, issue: int, hour: datetime, n: int) -> list[list]:
    return [
        [
            org,
            project,
            uuid.uuid4(),
            issue,
            f"fp{issue}",
            hour + timedelta(seconds=5 * i + 1),
            NOW,
            f"TypeError {issue}",
            "error",
            "2.3.0",
            "production",
            f"u{i % 7}",
        ]
        for i in range(n)
    ]


def issue_row(org: int, project: int, issue: int, first: datetime, release: str) -> list:
    return [
        org,
        project,
        issue,
        f"fp{issue}",
        f"TypeError {issue}",
        first,
        first,
        1,
        release,
        "unresolved",
        NOW,
    ]


@pytest.fixture
def world(settings: Settings, client):
    settings = settings.model_copy(update={"outbound_allow": "127.0.0.1"})
    receiver = Receiver().start()
    org_id, project_id, slug = org_with_project(settings)
    with session_scope(settings) as session:
        other = Project(org_id=org_id, name="Quiet", slug="quiet", platform="javascript")
        session.add(other)
        session.flush()
        quiet_id = other.id
        channel, secret = create_channel(
            session, org_id, settings, type="webhook", name="hook", url=receiver.url
        )
    receiver.secret = secret
    rng = np.random.default_rng(4)
    rows: list[list] = []
    start = LAST_HOUR - timedelta(days=DAYS)
    for h in range(DAYS * 24):
        hour = start + timedelta(hours=h)
        level = 30 * (0.4 if hour.weekday() >= 5 else 1.0) * (0.6 if hour.hour < 6 else 1.0)
        rows += events(org_id, project_id, 1, hour, int(rng.poisson(level)))
        rows += events(org_id, quiet_id, 5, hour, int(rng.poisson(level)))
    rows += events(org_id, project_id, 1, LAST_HOUR, 400)  # a burst of one error after a release
    rows += events(org_id, quiet_id, 5, LAST_HOUR, int(rng.poisson(30)))
    rows += events(org_id, quiet_id, 6, LAST_HOUR, 400)  # a brand-new issue's first hour
    client.insert("events", rows, column_names=EV)
    client.insert(
        "issues",
        [
            issue_row(org_id, project_id, 1, start, "2.3.0"),
            issue_row(org_id, project_id, 9, LAST_HOUR - timedelta(hours=2), "2.4.0"),  # 2.4.0 first seen
            issue_row(org_id, quiet_id, 5, start, "2.3.0"),
            issue_row(org_id, quiet_id, 6, LAST_HOUR + timedelta(minutes=3), "2.3.0"),
        ],
        column_names=ISSUE,
    )
    yield settings, client, org_id, slug, channel.id, receiver
    receiver.stop()


def _rule(settings: Settings, org_id: int, project: str, channel: int) -> int:
    with session_scope(settings) as session:
        rule = rules.create_rule(
            session,
            org_id,
            {
                "name": f"Errors of {project}",
                "type": "anomaly",
                "project": project,
                "metric": "events",
                "channels": [channel],
            },
        )
        return rule.id


def test_a_burst_fires_once_and_explains_itself_and_a_new_issue_never_fires(world) -> None:
    settings, client, org_id, slug, channel_id, receiver = world
    burst, quiet = _rule(settings, org_id, slug, channel_id), _rule(settings, org_id, "quiet", channel_id)
    first = evaluate(settings, client, "http://sl.test", NOW)
    again = evaluate(settings, client, "http://sl.test", NOW + timedelta(minutes=1))
    assert first.notifications == 1 and again.notifications == 0  # once per firing
    with session_scope(settings) as session:
        states = {s.rule_id: s.state for s in session.scalars(select(AlertRuleState))}
        decisions = [
            e.decision
            for e in session.scalars(select(AlertEvaluation).where(AlertEvaluation.rule_id == burst))
        ]
    assert states == {burst: "firing", quiet: "ok"}, states
    assert decisions[0].startswith("firing: 4") and "weekly" in decisions[0]
    outbox.drain(settings)
    (delivery,) = receiver.received
    data = delivery.json()["data"]
    assert data["value"] >= 400 and data["expected"] < 60 and data["lower"] < data["expected"] < data["upper"]
    assert data["score"] > 5 and data["seasonality"] == "weekly" and data["releases"] == ["2.4.0"]
    assert data["time"] == LAST_HOUR.isoformat().replace("+00:00", "Z")
    text = data["text"]
    for line in (
        "Value: 4",
        "Expected: ",
        "Band: ",
        "Score: +",
        "Seasonality: weekly",
        "Releases nearby: 2.4.0",
    ):
        assert line in text, text
    assert data["link"] == f"http://sl.test/orgs/acme/alerts/{burst}"
    # The backtest is the same band and hysteresis: it finds this firing, with the same numbers.
    with session_scope(settings) as session:
        rule = rules.get_rule(session, org_id, burst)
        got = backtest(client, org_id, rule.project_id, rule_fields(rule), "", 7, rule.window_seconds, NOW)
    assert len(got["points"]) == 7 * 24 and got["points"][-1]["time"] == data["time"]
    (fire,) = got["fires"]
    assert fire["time"] == data["time"] and fire["releases"] == ["2.4.0"]
    assert (
        fire["value"] == data["value"]
        and fire["expected"] == data["expected"]
        and fire["upper"] == data["upper"]
    )
