"""The `anomaly_bands` table (docs/alerts.md, docs/pipelines.md): every enabled anomaly rule's last 24 hours
written with the value, expected value, band, score, seasonality and firing flag the tick decides on; a
rule that cannot be read is that rule's error, the others are written."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from stacklens.alerts import rules
from stacklens.anomalies.band_rows import recent, write_bands
from stacklens.control.db import session_scope
from stacklens.control.models.alerts import AlertRule
from stacklens.settings import Settings
from tests.stacklens.alerts.helpers import org_with_project

NOW = datetime.now(UTC).replace(minute=10, second=0, microsecond=0)
LAST = NOW.replace(minute=0) - timedelta(hours=1)
EV = ["org_id", "project_id", "event_id", "issue_id", "fingerprint", "timestamp", "received_at", "user_key"]


def test_the_last_day_of_each_rule_is_written(settings: Settings, client) -> None:
    org_id, project_id, slug = org_with_project(settings)
    rows = []
    for h in range(5 * 24):
        at = LAST - timedelta(hours=h)
        n = 300 if h == 0 else 20 + h % 3
        rows += [
            [org_id, project_id, uuid.uuid4(), 1, "fp", at + timedelta(seconds=i), at, "u"] for i in range(n)
        ]
    client.insert("events", rows, column_names=EV)
    with session_scope(settings) as session:
        rule = rules.create_rule(
            session, org_id, {"name": "Errors", "type": "anomaly", "project": slug, "metric": "events"}
        )
        broken = rules.create_rule(
            session, org_id, {"name": "Broken", "type": "anomaly", "project": slug, "metric": "events"}
        )
        session.get(AlertRule, broken.id).scope = "not-an-issue"
        rule_id = rule.id
    written = write_bands(settings, client, NOW)
    assert (written.rules, written.rows, written.firing) == (2, 24, 1)
    assert len(written.errors) == 1 and written.errors[0].startswith("Broken: ")
    got = client.query(
        "SELECT bucket, value, expected, lower, upper, score, seasonality, firing FROM anomaly_bands "
        "WHERE rule_id = {rule:UInt64} ORDER BY bucket",
        parameters={"rule": rule_id},
    ).result_rows
    assert len(got) == 24 and got[-1][0] == LAST.replace(tzinfo=None)
    _, value, expected, lower, upper, score, seasonality, firing = got[-1]
    assert value == 300 and lower < expected < upper < 300 and score > 5
    assert seasonality == "daily" and firing == 1 and got[-2][7] == 0
    shown = recent(client, org_id, rule_id, LAST - timedelta(hours=23))  # what the rule page reads
    assert len(shown) == 24 and shown[0].bucket == LAST and shown[0].value == 300 and shown[0].firing
    assert recent(client, org_id + 1, rule_id, LAST - timedelta(hours=23)) == []  # another organization's
    write_bands(settings, client, NOW)  # a later run replaces the hours' rows
    assert len(recent(client, org_id, rule_id, LAST - timedelta(hours=23))) == 24
