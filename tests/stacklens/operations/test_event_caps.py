"""Event caps: after ingest, the retention run keeps at most N error events per issue and per project (the
newest), other projects keep theirs, the counters still say how many events happened, and the issue's pages
answer with the events kept."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta

import pytest

from stacklens.control.db import session_scope
from stacklens.control.project_retention import retentions, set_event_caps
from stacklens.errors import InvalidInput
from stacklens.operations.retention import run_retention
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.dashboards.conftest import sign_in
from tests.dashboards.landing import land, sdk_event


def _checkout() -> None:
    raise RuntimeError("checkout failed")


def _search() -> None:
    raise KeyError("query")


def _land(org: dict, func, count: int, start: datetime, step: timedelta = timedelta(minutes=1)) -> None:
    """``count`` events of ``func``'s issue, one every ``step`` back from ``start``."""
    payloads = []
    for n in range(count):
        payload = sdk_event(func)
        payload["timestamp"] = (start - n * step).isoformat()
        payloads.append(payload)
    land(org["org_id"], org["project_id"], payloads)


def _stored(settings: Settings, project_id: int) -> dict[int, list[datetime]]:
    """Per issue: the stored events' times, newest first."""
    rows = (
        get_warehouse(settings)
        .query(
            "SELECT issue_id, groupArray(timestamp) FROM (SELECT issue_id, timestamp FROM events FINAL "
            "WHERE project_id = {p:UInt64} ORDER BY timestamp DESC) GROUP BY issue_id",
            parameters={"p": project_id},
        )
        .result_rows
    )
    return {int(issue): list(times) for issue, times in rows}


def _run(settings: Settings):
    with session_scope(settings) as session:
        projects = retentions(session)
    return run_retention(get_warehouse(settings), settings.warehouse_database, projects, 30)


def _now_with_today_behind(span: timedelta) -> datetime:
    """Now, at a moment whose last ``span`` lies within today (UTC), waiting for it just after midnight: the
    14-day figure counts today's stored events and past days' insert-time counters, so events on both sides
    of midnight would mix the two."""
    now = datetime.now(UTC).replace(microsecond=0)
    midnight = now.replace(hour=0, minute=0, second=0)
    if now - span < midnight:
        time.sleep((midnight + span - now).total_seconds() + 1)
        now = datetime.now(UTC).replace(microsecond=0)
    return now


def test_caps_keep_the_newest_events_and_the_counts(stores, org_factory, client) -> None:
    capped, other = org_factory("Capped"), org_factory("Other")
    second = timedelta(seconds=1)
    now = _now_with_today_behind(timedelta(minutes=3))
    _land(capped, _checkout, 30, now - timedelta(minutes=1), second)
    _land(capped, _search, 5, now - timedelta(minutes=2), second)
    _land(other, _checkout, 30, now - timedelta(minutes=1), second)
    with session_scope(stores) as session:
        with pytest.raises(InvalidInput, match="max_events_per_issue: must be from 1 to"):
            set_event_caps(session, capped["org_id"], capped["project_id"], 0, None)
        set_event_caps(session, capped["org_id"], capped["project_id"], 10, None)

    outcome = _run(stores)

    kept = _stored(stores, capped["project_id"])
    assert sorted(len(times) for times in kept.values()) == [5, 10]
    big = max(kept.values(), key=len)
    # The newest ten of the thirty: one a second back from a minute ago.
    assert [t.replace(tzinfo=UTC) for t in big] == [
        now - timedelta(minutes=1) - n * second for n in range(10)
    ]
    assert sorted(len(t) for t in _stored(stores, other["project_id"]).values()) == [30]
    assert outcome.rows_deleted == 20
    assert outcome.caps == [
        {
            "project": f"{capped['org_slug']}/{capped['project']}",
            "max_events_per_issue": 10,
            "max_events_per_project": None,
            "events_deleted": 20,
        }
    ]

    # The counters still tell how many events happened; the event browser pages through the ten kept.
    auth = {"Authorization": f"Bearer {capped['api_key']}"}
    issues = client.get(f"/api/projects/{capped['project']}/issues", headers=auth).json()["issues"]
    assert len(issues) == 2
    totals = {i["id"]: client.get(f"/api/issues/{i['id']}", headers=auth).json()["events"] for i in issues}
    assert sorted(totals.values()) == [5, 30]  # all time: the insert-time counters
    loud = next(i for i in issues if totals[i["id"]] == 30)
    events = client.get(f"/api/issues/{loud['id']}/events?limit=100", headers=auth).json()["events"]
    assert len(events) == 10
    sign_in(client, capped["email"])
    page = client.get(f"/orgs/{capped['org_slug']}/projects/{capped['project']}/issues/{loud['id']}")
    assert page.status_code == 200 and "checkout failed" in page.text
    shown = " ".join(re.sub(r"<[^>]+>", " ", page.text).split())
    assert (
        "all time: 30 events" in shown and "Events (14d): 10" in shown
    )  # today's figures count what is stored
    listing = client.get(f"/orgs/{capped['org_slug']}/projects/{capped['project']}/issues")
    assert listing.status_code == 200 and "checkout failed" in listing.text

    # A second run finds nothing over the cap: no mutation, nothing deleted.
    assert _run(stores).rows_deleted == 0


def test_a_project_cap_keeps_the_newest_across_issues(stores, org_factory) -> None:
    org = org_factory("Whole")
    now = datetime.now(UTC).replace(microsecond=0)
    _land(org, _checkout, 8, now - timedelta(hours=3))  # older
    _land(org, _search, 6, now - timedelta(hours=1))  # newer
    with session_scope(stores) as session:
        set_event_caps(session, org["org_id"], org["project_id"], None, 9)

    assert _run(stores).rows_deleted == 5

    kept = _stored(stores, org["project_id"])
    assert sorted(len(times) for times in kept.values()) == [3, 6]  # the six newer, and three of the older
    oldest_kept = min(t for times in kept.values() for t in times).replace(tzinfo=UTC)
    assert oldest_kept == now - timedelta(hours=3, minutes=2)
