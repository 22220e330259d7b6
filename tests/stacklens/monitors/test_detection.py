"""Detection from stored deadlines: a missed run and a timed-out check-in are each reported once, open one
incident with one notice per channel of the matching monitor rules, a recovery closes it with one notice,
and the incident's event lands in the warehouse as the monitor's issue."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select

from stacklens.alerts.rules import create_rule
from stacklens.control.accounts import create_organization
from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from stacklens.control.models import AlertNotification, Project
from stacklens.control.models.monitors import Monitor, MonitorCheckIn
from stacklens.control.projects import create_project
from stacklens.ingest.front_door import settle_front_doors
from stacklens.monitors.checkins import CheckIn, record
from stacklens.monitors.detection import detect
from stacklens.monitors.issues import event_id_of, send_issue_events
from stacklens.monitors.store import create_monitor
from stacklens.outbound import AllowList
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse

BASE = "https://stacklens.example"
START = datetime(2026, 11, 28, 10, 0, 30, tzinfo=UTC)


def _notices(settings: Settings) -> list[tuple[str, dict[str, Any]]]:
    with session_scope(settings) as session:
        rows = session.scalars(select(AlertNotification).order_by(AlertNotification.created_at))
        return [(r.kind, r.payload["data"]) for r in rows]


def _setup(settings: Settings, org: dict[str, Any]) -> None:
    with session_scope(settings) as session:
        project = session.get(Project, org["project_id"])
        assert project is not None
        for slug, margin in (("every-minute", 1), ("quiet", 1)):
            create_monitor(
                session,
                project,
                {"slug": slug, "schedule": "* * * * *", "checkin_margin": margin, "max_runtime": 5},
                AllowList(),
                now=START,
            )
        channel, _ = create_channel(
            session, org["org_id"], settings, type="email", name="ops", to=["ops@x.test"]
        )
        # One rule for the first monitor's misses and timeouts; none watches "quiet".
        create_rule(
            session,
            org["org_id"],
            {
                "name": "cron",
                "type": "monitor",
                "project": org["project"],
                "monitors": ["every-minute"],
                "statuses": ["missed", "timeout"],
                "channels": [channel.id],
            },
        )


def test_a_missed_run_is_reported_once_and_recovers_with_one_notice(stores: Settings, org_factory) -> None:
    _missed_run_once(stores, org_factory())


def test_the_same_on_postgresql(pg_stores: Settings) -> None:
    """The conditional updates and row locks of detection, on PostgreSQL's control store."""
    with session_scope(pg_stores) as session:
        created, _ = create_organization(session, "Acme", "owner@acme.test", "a-long-password-1")
        project, _ = create_project(session, created.id, "Jobs")
        org = {"org_id": created.id, "project_id": project.id, "project": project.slug}
    _missed_run_once(pg_stores, org)


def _missed_run_once(stores: Settings, org: dict[str, Any]) -> None:
    _setup(stores, org)
    # Expected at 10:01, margin 1 minute: not missed at 10:01:59, missed at 10:02:00.
    assert detect(stores, BASE, datetime(2026, 11, 28, 10, 1, 59, tzinfo=UTC)).missed == 0
    at = datetime(2026, 11, 28, 10, 2, 0, tzinfo=UTC)
    first = detect(stores, BASE, at)
    assert (first.missed, first.told.opened, first.told.notices) == (2, 2, 1)  # two monitors, one rule
    again = detect(stores, BASE, at)  # the same tick again (a second runner, a retried run)
    assert (again.missed, again.told.notices) == (0, 0)
    notices = _notices(stores)
    assert [(k, d["monitor"], d["status"]) for k, d in notices] == [("firing", "every-minute", "missed")]
    assert notices[0][1]["reason"].startswith("no check-in for the run due at 2026-11-28 10:01")

    # Three minutes later: two more runs missed (10:02, 10:03), still one incident and no new notice.
    later = detect(stores, BASE, at + timedelta(minutes=2))
    assert later.missed == 4 and later.told.notices == 0
    with session_scope(stores) as session:
        monitor = session.scalar(select(Monitor).where(Monitor.slug == "every-minute"))
        assert monitor is not None and monitor.status == "missed" and monitor.failures_in_row == 3
        assert monitor.next_expected_at == datetime(2026, 11, 28, 10, 4, tzinfo=UTC)
        missed = session.scalar(
            select(func.count()).select_from(MonitorCheckIn).where(MonitorCheckIn.monitor_id == monitor.id)
        )
        assert missed == 3
        record(
            session,
            org["org_id"],
            org["project_id"],
            CheckIn("0" * 32, "every-minute", "ok", 2.0, "", None),
            at + timedelta(minutes=2, seconds=5),
            AllowList(),
            BASE,
        )
    assert [(k, d["status"]) for k, d in _notices(stores)] == [("firing", "missed"), ("resolved", "ok")]

    # The incidents' events land once each, as issues of their monitors.
    sent, errors = send_issue_events(stores)
    assert (sent, errors) == (2, [])
    assert send_issue_events(stores) == (0, [])
    settle_front_doors()
    rows = (
        get_warehouse(stores)
        .query(
            "SELECT event_id, message FROM events WHERE org_id = {org:UInt64} ORDER BY message",
            parameters={"org": org["org_id"]},
        )
        .result_rows
    )
    assert [r[1] for r in rows] == [
        "Monitor every-minute missed a check-in",
        "Monitor quiet missed a check-in",
    ]
    assert {r[0].hex for r in rows} == {event_id_of(1), event_id_of(2)}


def test_an_in_progress_check_in_times_out_once(stores: Settings, org_factory) -> None:
    org = org_factory()
    _setup(stores, org)
    began = START + timedelta(seconds=20)
    with session_scope(stores) as session:
        record(
            session,
            org["org_id"],
            org["project_id"],
            CheckIn("1" * 32, "every-minute", "in_progress", None, "", None),
            began,
            AllowList(),
            BASE,
        )
    # max_runtime 5 minutes (the schedule's misses are reported too; the timeout is the one check-in)
    assert detect(stores, BASE, began + timedelta(minutes=4, seconds=59)).timed_out == 0
    assert detect(stores, BASE, began + timedelta(minutes=5)).timed_out == 1
    assert detect(stores, BASE, began + timedelta(minutes=5)).timed_out == 0
    with session_scope(stores) as session:
        row = session.get(MonitorCheckIn, "1" * 32)
        assert row is not None and row.status == "timeout"
        # the job's late "ok" does not reopen a check-in detection closed
        late = record(
            session,
            org["org_id"],
            org["project_id"],
            CheckIn("1" * 32, "every-minute", "ok", None, "", None),
            began + timedelta(minutes=6),
            AllowList(),
            BASE,
        )
        assert late.status == "timeout"
