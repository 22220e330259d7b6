"""A project's own retention: at most the installation's, logged in its organization's activity."""

from __future__ import annotations

import pytest

from stacklens.control.activity import list_activity
from stacklens.control.db import session_scope
from stacklens.control.project_retention import (
    retention_of,
    retentions,
    set_event_caps,
    set_project_retention,
)
from stacklens.errors import InvalidInput, NotFound


def test_retention_is_bounded_scoped_and_logged(control_settings, make_org) -> None:
    acme, other = make_org("Acme"), make_org("Other")
    with session_scope(control_settings) as session:
        for bad in (0, 91, True):
            with pytest.raises(InvalidInput, match="days: must be from 1 to 90"):
                set_project_retention(session, acme["org_id"], acme["project_id"], bad, 90)
        with pytest.raises(NotFound):
            set_project_retention(session, other["org_id"], acme["project_id"], 30, 90)
        kept = set_project_retention(session, acme["org_id"], acme["project_id"], 30, 90)
        assert kept.days == 30 and kept.name.endswith("/web-app")
    with session_scope(control_settings) as session:
        assert retention_of(session, acme["project_id"]).days == 30
        assert {r.project_id: r.days for r in retentions(session)} == {
            acme["project_id"]: 30,
            other["project_id"]: None,
        }
        set_project_retention(session, acme["org_id"], acme["project_id"], None, 90)
    with session_scope(control_settings) as session:
        assert retention_of(session, acme["project_id"]).days is None
        rows, _ = list_activity(session, acme["org_id"])
        entries = [e for e in rows if e.action == "project_retention.changed"]
    assert [e.detail["days"] for e in entries] == [None, 30]


def test_event_caps_are_bounded_scoped_and_logged(control_settings, make_org) -> None:
    acme, other = make_org("Acme"), make_org("Other")
    with session_scope(control_settings) as session:
        for bad in (0, -5, 100_000_001, True):
            with pytest.raises(InvalidInput, match="max_events_per_project: must be from 1 to 100,000,000"):
                set_event_caps(session, acme["org_id"], acme["project_id"], None, bad)
        with pytest.raises(NotFound):
            set_event_caps(session, other["org_id"], acme["project_id"], 10, None)
        kept = set_event_caps(session, acme["org_id"], acme["project_id"], 1000, 50_000)
        assert (kept.max_events_per_issue, kept.max_events_per_project) == (1000, 50_000)
    with session_scope(control_settings) as session:
        by_project = {r.project_id: r for r in retentions(session)}
        assert (by_project[acme["project_id"]].max_events_per_issue, by_project[acme["project_id"]].days) == (
            1000,
            None,
        )
        assert by_project[other["project_id"]].max_events_per_issue is None
        set_event_caps(session, acme["org_id"], acme["project_id"], None, None)
    with session_scope(control_settings) as session:
        lifted = retention_of(session, acme["project_id"])
        assert (lifted.max_events_per_issue, lifted.max_events_per_project) == (None, None)
        rows, _ = list_activity(session, acme["org_id"])
        entries = [e.detail for e in rows if e.action == "project_event_caps.changed"]
    assert [(e["max_events_per_issue"], e["before"]["max_events_per_issue"]) for e in entries] == [
        (None, 1000),
        (1000, None),
    ]
