"""The server's daily retention run at a fixed clock: due once the day's slot has passed (and not before the
scheduler started), applied with the projects' days and event caps, recorded in the maintenance log as a
scheduled run with outcome and duration, and not run twice for one slot."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from stacklens.control.db import session_scope
from stacklens.control.maintenance_log import list_runs
from stacklens.control.project_retention import set_event_caps, set_project_retention
from stacklens.operations.retention_schedule import is_due, last_slot, next_slot, run_at, tick
from stacklens.warehouse.client import get_warehouse
from tests.dashboards.landing import land, sdk_event

AT = time(3, 30, tzinfo=UTC)


def _at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, day, hour, minute, tzinfo=UTC)


def test_a_slot_is_due_once_after_it_passed() -> None:
    started = _at(20, 5)  # a server started after the day's slot waits for the next one
    assert last_slot(AT, _at(20, 5)) == _at(20, 3, 30)
    assert next_slot(AT, _at(20, 5)) == _at(21, 3, 30)
    assert not is_due(AT, _at(20, 23, 59), None, started)
    assert not is_due(AT, _at(21, 3, 29), None, started)
    assert is_due(AT, _at(21, 3, 30), None, started)
    assert is_due(AT, _at(21, 9), _at(20, 3, 31), started)  # stopped over the slot: caught up the same day
    assert not is_due(AT, _at(21, 9), _at(21, 3, 31), started)  # the slot's run happened
    assert not is_due(AT, _at(21, 9), _at(21, 8), started)  # a run by hand after the slot counts
    assert is_due(AT, _at(22, 3, 31), _at(21, 3, 31), started)


def _fail() -> None:
    raise RuntimeError("nightly")


def test_the_scheduled_run_applies_days_and_caps_and_is_recorded(stores, org_factory) -> None:
    org = org_factory("Nightly")
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    payloads = []
    for n, days_ago in enumerate([40] * 4 + [1] * 12):
        payload = sdk_event(_fail)
        payload["timestamp"] = (today - timedelta(days=days_ago, minutes=n)).isoformat()
        payloads.append(payload)
    land(org["org_id"], org["project_id"], payloads)
    with session_scope(stores) as session:
        set_project_retention(session, org["org_id"], org["project_id"], 30, stores.retention_days)
        set_event_caps(session, org["org_id"], org["project_id"], 5, None)
    started = today - timedelta(hours=20)  # yesterday 04:00: after yesterday's slot
    slot = today + timedelta(hours=3, minutes=30)

    assert tick(stores, slot - timedelta(minutes=1), started) is None  # not yet
    row = tick(stores, slot + timedelta(seconds=20), started)

    assert row is not None
    assert row["kind"] == "retention" and row["outcome"] == "succeeded" and row["duration_ms"] > 0
    assert row["started_at"] == (slot + timedelta(seconds=20)).isoformat()
    assert row["detail"]["trigger"] == "scheduled"
    assert row["summary"].startswith(
        "scheduled retention run over 1 project(s) with days of their own and 1 "
    )
    assert row["detail"]["rows_deleted"] == 4 + 7  # four older than 30 days, then seven over the cap of five
    assert row["detail"]["caps"][0]["events_deleted"] == 7
    counted = get_warehouse(stores).query(
        "SELECT count() FROM events FINAL WHERE project_id = {p:UInt64}", parameters={"p": org["project_id"]}
    )
    assert counted.result_rows[0][0] == 5
    # The next tick of the same day finds the slot's run in the log.
    assert tick(stores, slot + timedelta(minutes=1), started) is None
    with session_scope(stores) as session:
        assert [r.detail["trigger"] for r in list_runs(session, "retention")] == ["scheduled"]

    off = stores.model_copy(update={"retention_run_at": "off"})
    assert run_at(off) is None
    assert tick(off, slot + timedelta(days=1), started) is None
