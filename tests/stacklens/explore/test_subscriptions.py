"""Report subscriptions: the next run in the subscription's own time zone (across a daylight-saving
change), weekly on its day; stored within the organization (dashboards, saved queries and channels of
another organization are refused); to_me makes one e-mail channel for the member; paused and resumed; each
bad field named."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from stacklens.errors import NotFound
from stacklens.explore.dashboards import create_dashboard
from stacklens.explore.subscriptions import (
    BadSubscription,
    Schedule,
    as_json,
    create_subscription,
    delete_subscription,
    due,
    list_subscriptions,
    parse_schedule,
    replace_subscription,
    set_paused,
)
from stacklens.settings import Settings

NOW = datetime(2026, 10, 24, 12, 0, tzinfo=UTC)  # a Saturday; Berlin leaves summer time on Sunday the 25th


def test_next_runs_in_the_time_zone() -> None:
    daily = Schedule("day", "08:00", None, "Europe/Berlin")
    first = daily.next_run(NOW)
    assert first == datetime(2026, 10, 25, 7, 0, tzinfo=UTC)  # 08:00 CET (UTC+1) after the change
    assert daily.next_run(datetime(2026, 10, 24, 5, 0, tzinfo=UTC)) == datetime(
        2026, 10, 24, 6, 0, tzinfo=UTC
    )  # CEST
    assert daily.next_run(first) == datetime(2026, 10, 26, 7, 0, tzinfo=UTC)
    weekly = parse_schedule(
        {"every": "week", "at": "09:30", "weekday": "Mon", "timezone": "America/New_York"}
    )
    assert weekly.weekday == 0 and weekly.next_run(NOW) == datetime(2026, 10, 26, 13, 30, tzinfo=UTC)
    assert weekly.next_run(datetime(2026, 10, 26, 13, 30, tzinfo=UTC)) == datetime(
        2026, 11, 2, 14, 30, tzinfo=UTC
    )


def _setup(settings: Settings, make_org):
    acme, other = make_org("Acme"), make_org("Globex")
    with session_scope(settings) as session:
        board = create_dashboard(session, int(acme["org_id"]), {"name": "Vitals"})
        theirs = create_dashboard(session, int(other["org_id"]), {"name": "Theirs"})
        channel, _ = create_channel(
            session, int(acme["org_id"]), settings, type="email", name="team", to=["team@acme.test"]
        )
        their_channel, _ = create_channel(
            session, int(other["org_id"]), settings, type="email", name="t", to=["t@x.test"]
        )
        return acme, other, board.id, theirs.id, channel.id, their_channel.id


def test_create_pause_replace_and_delete(settings: Settings, make_org) -> None:
    acme, other, board, _, channel, _ = _setup(settings, make_org)
    org = int(acme["org_id"])
    body = {
        "target": {"dashboard_id": board},
        "schedule": {"every": "day", "at": "08:00", "timezone": "Europe/Berlin"},
        "format": "summary",
        "channel_id": channel,
    }
    with session_scope(settings) as session:
        row = create_subscription(session, org, body, now=NOW)
        assert (
            as_json(row)["next_run_at"] == "2026-10-25T07:00:00Z"
            and as_json(row)["schedule"]["weekday"] is None
        )
        mine = create_subscription(
            session,
            org,
            {**body, "channel_id": None, "to_me": True},
            me="ana@acme.test",
            owner_user_id=None,
            now=NOW,
        )
        again = create_subscription(
            session, org, {**body, "channel_id": None, "to_me": True}, me="ana@acme.test", now=NOW
        )
        assert mine.channel_id == again.channel_id != channel  # one channel "Reports to ana@acme.test"
        assert [s.id for s in due(session, datetime(2026, 10, 25, 7, 0, tzinfo=UTC))] == [
            row.id,
            mine.id,
            again.id,
        ]
        set_paused(session, org, row.id, True)
        assert row.id not in [s.id for s in due(session, datetime(2026, 10, 26, tzinfo=UTC))]
        set_paused(session, org, row.id, False, now=datetime(2026, 10, 30, 9, 0, tzinfo=UTC))
        assert row.next_run_at == datetime(
            2026, 10, 31, 7, 0, tzinfo=UTC
        )  # from the resume, not the missed runs
        weekly = replace_subscription(
            session,
            org,
            row.id,
            {**body, "schedule": {"every": "week", "at": "07:00", "weekday": "friday"}, "format": "csv"},
            now=NOW,
        )
        assert (weekly.format, weekly.weekday, weekly.next_run_at) == (
            "csv",
            4,
            datetime(2026, 10, 30, 7, 0, tzinfo=UTC),
        )
        assert list_subscriptions(session, int(other["org_id"])) == []
        with pytest.raises(NotFound):
            delete_subscription(session, int(other["org_id"]), row.id)
        delete_subscription(session, org, row.id)
        assert [s.id for s in list_subscriptions(session, org)] == [mine.id, again.id]


def test_each_bad_field_is_named(settings: Settings, make_org) -> None:
    acme, _, board, theirs, channel, their_channel = _setup(settings, make_org)
    good = {
        "target": {"dashboard_id": board},
        "schedule": {"every": "day", "at": "08:00"},
        "channel_id": channel,
    }
    cases = [
        ([], "body"),
        ({**good, "when": 1}, "when"),
        ({**good, "target": {"dashboard_id": theirs}}, "target.dashboard_id"),
        ({**good, "target": {"saved_query_id": 99}}, "target.saved_query_id"),
        ({**good, "target": {}}, "target"),
        ({**good, "schedule": {"every": "hour", "at": "08:00"}}, "schedule.every"),
        ({**good, "schedule": {"every": "day", "at": "8am"}}, "schedule.at"),
        ({**good, "schedule": {"every": "day", "at": "24:00"}}, "schedule.at"),
        (
            {**good, "schedule": {"every": "day", "at": "08:00", "timezone": "Mars/Olympus"}},
            "schedule.timezone",
        ),
        ({**good, "schedule": {"every": "week", "at": "08:00"}}, "schedule.weekday"),
        ({**good, "schedule": {"every": "day", "at": "08:00", "weekday": "monday"}}, "schedule.weekday"),
        ({**good, "format": "PDF"}, "format"),
        ({**good, "format": "xls"}, "format"),
        ({**good, "channel_id": their_channel}, "channel_id"),
        ({**good, "channel_id": None}, "channel_id"),
        ({**good, "channel_id": None, "to_me": True}, "to_me"),  # no signed-in member over the API
        ({**good, "to_me": True}, "to_me"),
        ({**good, "paused": "no"}, "paused"),
    ]
    with session_scope(settings) as session:
        for body, field in cases:
            with pytest.raises(BadSubscription) as refused:
                create_subscription(session, int(acme["org_id"]), body, now=NOW)
            assert refused.value.field == field, body
