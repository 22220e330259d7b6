"""Rate limits as the dashboard shows them: the limits, this hour's use, and `Rate Limited` answers counted
one entry per limit and minute."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import update

from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.control.keys.use import record_key_use
from stacklens.control.models import ActivityEntry, utcnow
from stacklens.control.rate_limits import EVENTS, REQUESTS, limits_view, recent_refusals, record_refusal
from stacklens.settings import Settings


def test_refusals_are_counted_per_limit_and_minute(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, _ = accounts.create_organization(session, "Acme", "owner@example.test", "a long enough password")
        for _ in range(5):
            record_refusal(session, org.id, EVENTS, 600, 2.0)
        record_refusal(session, org.id, REQUESTS, 50, 0.5, key_id=7)
        rows = recent_refusals(session, org.id)
        assert sorted((r.target_kind, r.detail["refusals"]) for r in rows) == [(EVENTS, 5), (REQUESTS, 1)]
        two_minutes_ago = utcnow() - timedelta(minutes=2)  # the first minute is over
        session.execute(update(ActivityEntry).values(created_at=two_minutes_ago))
        record_refusal(session, org.id, EVENTS, 600, 3.0)
        assert [
            r.detail["refusals"] for r in recent_refusals(session, org.id) if r.target_kind == EVENTS
        ] == [1, 5]


def test_limits_view_counts_this_hours_use(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, _ = accounts.create_organization(session, "Acme", "owner@example.test", "a long enough password")
        accounts.set_quota(session, org.id, events_per_minute=1200, requests_per_second=20)
        record_key_use(session, org.id, "api", 1, requests=3, events=40)  # a shipper batch: API key...
        record_key_use(session, org.id, "app", 1, requests=0, events=40)  # ...and the app key it names
        record_key_use(session, org.id, "app", 2, requests=1, events=1)  # a DSN envelope
        view = limits_view(session, org.id)
    assert (view.events_per_minute, view.requests_per_second) == (1200, 20)
    assert (view.events_this_hour, view.requests_this_hour) == (41, 4)
