"""The hourly series an anomaly rule reads (docs/alerts.md): an hour without samples is a gap, never 0 —
except for event counts after the first event; uptime is ok probes over probes; every read is scoped to
the organization and project."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import numpy as np

from stacklens.anomalies.rule_fields import anomaly_fields
from stacklens.anomalies.series import hourly

START = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=8)
EV = ["org_id", "project_id", "event_id", "issue_id", "fingerprint", "timestamp", "received_at", "user_key"]
CHECKS = ["org_id", "project_id", "monitor_id", "monitor_slug", "timestamp", "status", "http_code"]


def test_gaps_counts_and_shares(client) -> None:
    def at(hour: int, minute: int = 5) -> datetime:
        return START + timedelta(hours=hour, minutes=minute)

    events = [[7, 3, uuid.uuid4(), 1, "fp", at(3), at(3), "a"] for _ in range(4)]
    events += [[7, 3, uuid.uuid4(), 1, "fp", at(5), at(5), u] for u in ("a", "b")]
    events += [[8, 3, uuid.uuid4(), 1, "fp", at(4), at(4), "x"]]  # another organization's: not counted
    client.insert("events", events, column_names=EV)
    client.insert(
        "monitor_checks",
        [[7, 3, 1, "home", at(1), "ok", 200], [7, 3, 1, "home", at(1, 30), "down", 0]],
        column_names=CHECKS,
    )
    until = START + timedelta(hours=8)
    got = hourly(client, 7, 3, anomaly_fields({"metric": "events"}), "", START, until)
    assert np.isnan(got.values[:3]).all()  # before the first event: a gap
    assert got.values[3:].tolist() == [4, 0, 2, 0, 0]  # after it, an hour without events is 0
    users = hourly(client, 7, 3, anomaly_fields({"metric": "users"}), "", START, until)
    assert users.values[3:6].tolist() == [1, 0, 2] and users.counts[3] == 4
    uptime = hourly(client, 7, 3, anomaly_fields({"metric": "uptime_pct", "scope": "home"}), "", START, until)
    assert uptime.values[1] == 50 and uptime.counts[1] == 2 and np.isnan(uptime.values[0])
    sessions = hourly(client, 7, 3, anomaly_fields({"metric": "crash_free_sessions"}), "", START, until)
    assert np.isnan(sessions.values).all() and not sessions.counts.any()  # no sessions: gaps
    lcp = hourly(client, 7, 3, anomaly_fields({"metric": "lcp_ms"}), "", START, until)
    assert np.isnan(lcp.values).all() and len(lcp.values) == 8
    other = hourly(client, 8, 3, anomaly_fields({"metric": "events"}), "", START, until)
    assert other.values[4] == 1 and np.isnan(other.values[3])
