"""One issue's raw events on the real chdb engine: latest, by id, neighbours, history pages, counts over time,
and lookups by event id that never cross an organization."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from stacklens.issues.events import IssueEvents, bucket_seconds, event_window, find_event, valid_event_id
from stacklens.issues.reads import BadListRequest
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.dashboards.landing import land, sdk_event


def _fail() -> None:
    raise RuntimeError("card declined")


def _at(minutes_ago: int) -> dict:
    payload = sdk_event(_fail)
    payload["timestamp"] = (datetime.now(UTC) - timedelta(minutes=minutes_ago)).isoformat()
    return payload


def test_reads_of_one_issue_walk_its_events_newest_first(settings: Settings) -> None:
    apply_migrations(settings)
    client = get_warehouse(settings)
    rows = land(1, 1, [_at(30), _at(20), _at(10)])
    issue_id = rows[0]["issue_id"]
    assert {r["issue_id"] for r in rows} == {issue_id}
    oldest, middle, newest = (str(r["event_id"]) for r in rows)
    land(2, 9, [_at(5)])  # the same error in another organization

    events = IssueEvents(client, 1, 1, issue_id, "")  # the fingerprint is looked up when not given
    assert events.latest() == newest
    row = events.get(middle.replace("-", ""))  # either spelling of an id
    assert row is not None and row["event_id"] == middle
    assert events.neighbours(row) == (newest, oldest)
    assert events.get("not-an-id") is None and events.get("0" * 32) is None

    first, cursor = events.history(limit=2)
    assert [r["event_id"] for r in first] == [newest, middle] and cursor
    second, last = events.history(cursor=cursor, limit=2)
    assert [r["event_id"] for r in second] == [oldest] and last is None
    with pytest.raises(BadListRequest, match="cursor"):
        events.history(cursor="garbage")

    now = datetime.now(UTC).replace(tzinfo=None)
    assert sum(int(b["events"]) for b in events.over_time(now - timedelta(hours=1), now)) == 3
    # Only the first of an event's window bounds may be given: the other end stays open.
    assert events.latest(since=now - timedelta(minutes=25)) == newest
    assert events.latest(until=now - timedelta(minutes=25)) == oldest

    found = find_event(client, 1, [1], newest)
    assert found is not None and (found.project_id, found.issue_id) == (1, issue_id)
    assert find_event(client, 2, [1], newest) is None  # another organization's id finds nothing
    assert find_event(client, 1, [], newest) is None and find_event(client, 1, [1], "nope") is None


def test_event_ids_and_bar_widths() -> None:
    assert valid_event_id("0123456789ABCDEF0123456789abcdef") == "01234567-89ab-cdef-0123-456789abcdef"
    assert valid_event_id("xyz") is None and valid_event_id(None) is None
    now = datetime(2026, 1, 1)
    assert bucket_seconds(now - timedelta(hours=6), now) == 300
    assert bucket_seconds(now - timedelta(days=4), now) == 3600
    assert bucket_seconds(now - timedelta(days=30), now) == 86400


def test_an_open_window_works_on_29_february_and_in_utc() -> None:
    # The old bound was `now.replace(year=now.year + 1)` in local time: ValueError on 29 February.
    leap = datetime(2028, 2, 29, 23, 30, tzinfo=UTC)
    window = event_window(None, None, leap)
    assert window == {"since": datetime(1970, 1, 1), "until": datetime(2029, 3, 1, 23, 30)}
    # An aware `now` in another zone gives the same naive-UTC bound as the warehouse stores timestamps.
    tokyo = leap.astimezone(timezone(timedelta(hours=9)))
    assert event_window(None, None, tokyo)["until"] == window["until"]
    given = (datetime(2026, 1, 1), datetime(2026, 1, 2))
    assert event_window(*given, leap) == {"since": given[0], "until": given[1]}
    # Without `now`, the end is a year past the current UTC time, not the machine's local time.
    until = event_window(None, None)["until"]
    assert abs(until - (datetime.now(UTC).replace(tzinfo=None) + timedelta(days=366))) < timedelta(minutes=1)
