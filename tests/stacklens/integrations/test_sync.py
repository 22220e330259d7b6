"""Reading tickets back, one link at a time: a GitHub-compatible server answering one organization's issue
look-up with a JSON list is that link's error — noted on the link with its next attempt, logged once — while
the other organization's link is read and its change recorded; the broken link waits for its backoff, then
reads normally once the tracker answers properly. A tracker that does not answer costs one attempt per run,
not one per link. A tracker that drips its answer, or answers far too much, holds its own organization's
reads for at most their deadline, and the other organization's links are read at once."""

from __future__ import annotations

import socket
import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from stacklens.control.db import session_scope
from stacklens.control.integrations import create_connection
from stacklens.control.models import ActivityEntry
from stacklens.control.models.integrations import ExternalLink, TrackerConnection
from stacklens.integrations.links import links_of_issues
from stacklens.integrations.sync import sync_states
from stacklens.integrations.trackers.base import Tracker
from stacklens.outbound import AllowList, OutboundClient
from stacklens.settings import Settings
from stacklens.warehouse.client import ensure_database, get_warehouse
from tests.stacklens.alerts.helpers import org_with_project
from tests.stacklens.hostile_receiver import HostileReceiver
from tests.stacklens.integrations import fake_trackers as ft
from tests.stacklens.integrations.fake_trackers import FakeTrackers

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
BROKEN_PATH = "/api/v3/repos/acme/api/issues/1"


@pytest.fixture
def allowed(control_settings: Settings) -> Settings:
    ensure_database(control_settings)  # the warehouse client resolves issues (no connection here asks to)
    return control_settings.model_copy(update={"outbound_allow": "127.0.0.1"})


@pytest.fixture
def no_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The trackers' in-call retry waits, recorded instead of slept (the clients' documented test seam)."""
    waits: list[float] = []
    monkeypatch.setattr(Tracker, "sleep", staticmethod(waits.append))
    return waits


def _tenant(settings: Settings, fake: FakeTrackers, name: str, tickets: list[str]) -> tuple[int, list[int]]:
    """An organization with a GitHub connection to the fake and a linked ticket per key: (org, link ids)."""
    org_id, project_id, _ = org_with_project(settings, name)
    with session_scope(settings) as session:
        body = {"type": "github", "name": f"{name} repo", "base_url": fake.url, "token": ft.GITHUB_TOKEN}
        connection = create_connection(session, org_id, settings, body)
        links = []
        for i, key in enumerate(tickets):
            repo, number = key.split("#")
            fake.tickets[key] = {"key": key, "title": "t", "body": "", "state": "open", "target": repo}
            link = ExternalLink(
                org_id=org_id,
                project_id=project_id,
                issue_id=100 + i,
                connection_id=connection.id,
                target=repo,
                state="linked",
                marker="",
                ticket_key=key,
                ticket_url=f"https://github.example.com/{repo}/issues/{number}",
                ticket_state="open",
            )
            session.add(link)
            session.flush()
            links.append(link.id)
        return org_id, links


def _link(settings: Settings, link_id: int) -> ExternalLink:
    with session_scope(settings) as session:
        row = session.get(ExternalLink, link_id)
        assert row is not None
        return row


def _activity(settings: Settings, org_id: int) -> list[str]:
    with session_scope(settings) as session:
        return list(
            session.scalars(
                select(ActivityEntry.action).where(ActivityEntry.org_id == org_id).order_by(ActivityEntry.id)
            )
        )


def test_a_malformed_answer_is_the_links_error_and_the_other_tenant_is_read(
    allowed: Settings, fake: FakeTrackers
) -> None:
    broken_org, (broken,) = _tenant(allowed, fake, "Initech", ["acme/api#1"])
    healthy_org, (healthy,) = _tenant(allowed, fake, "Globex", ["acme/web#1"])
    fake.answers[BROKEN_PATH] = [{"number": 1, "state": "closed"}]  # a list where GitHub answers an object
    fake.close_ticket("acme/web#1")
    client = get_warehouse(allowed)

    summary = sync_states(allowed, client, now=NOW)

    assert (summary.checked, summary.changed, summary.failed) == (2, 1, 1)
    read = _link(allowed, healthy)
    assert (read.ticket_state, read.last_error, read.failures, read.retry_at) == ("closed", "", 0, None)
    assert read.checked_at is not None
    failed = _link(allowed, broken)
    expected = "GitHub answered issue acme/api#1 with a JSON list where an object was expected"
    assert expected in failed.last_error and failed.ticket_state == "open" and failed.checked_at is None
    assert failed.failures == 1 and failed.retry_at is not None
    # The outbox's schedule: the first retry after 15-30 s.
    assert timedelta(seconds=15) <= failed.retry_at - NOW <= timedelta(seconds=30)
    assert summary.errors == [f"acme/api#1: {failed.last_error}"]
    # Shown where the link is shown (the issue page and GET /api/issues/{id}/external-links).
    with session_scope(allowed) as session:
        shown = links_of_issues(session, broken_org, failed.project_id, [100])[100][0]
    assert expected in shown["last_error"] and shown["failures"] == 1 and shown["retry_at"]
    assert _activity(allowed, broken_org)[-1] == "external_link.sync_failed"
    assert _activity(allowed, healthy_org)[-1] == "external_link.closed"

    # Within its backoff the broken link is not asked again; the healthy one is.
    fake.calls.clear()
    again = sync_states(allowed, client, now=NOW + timedelta(seconds=10))
    assert again.checked == 1 and again.failed == 0
    assert [c.path for c in fake.calls] == ["/api/v3/repos/acme/web/issues/1"]

    # Still broken at its retry: counted again, the backoff grows, the activity log is not repeated.
    third = sync_states(allowed, client, now=NOW + timedelta(minutes=1))
    assert third.failed == 1
    twice = _link(allowed, broken)
    assert twice.failures == 2 and twice.retry_at is not None
    assert twice.retry_at - (NOW + timedelta(minutes=1)) >= timedelta(seconds=30)
    assert _activity(allowed, broken_org).count("external_link.sync_failed") == 1

    # Once the tracker answers as documented, the link reads normally and its error is cleared.
    fake.answers.clear()
    fake.close_ticket("acme/api#1")
    fixed = sync_states(allowed, client, now=NOW + timedelta(hours=1))
    assert fixed.failed == 0
    healed = _link(allowed, broken)
    assert (healed.ticket_state, healed.last_error, healed.failures, healed.retry_at) == (
        "closed",
        "",
        0,
        None,
    )


def test_a_tracker_that_does_not_answer_costs_one_attempt_per_run(
    allowed: Settings, fake: FakeTrackers, no_waits: list[float]
) -> None:
    down_org, down_links = _tenant(allowed, fake, "Initech", ["acme/api#1", "acme/api#2", "acme/api#3"])
    _, (healthy,) = _tenant(allowed, fake, "Globex", ["acme/web#1"])
    with socket.socket() as s:  # a port nothing listens on: every connection is refused
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    with session_scope(allowed) as session:
        for connection in session.scalars(
            select(TrackerConnection).where(TrackerConnection.org_id == down_org)
        ):
            connection.base_url = closed
    fake.close_ticket("acme/web#1")

    summary = sync_states(allowed, get_warehouse(allowed), now=NOW)

    # One link of the unreachable tracker is tried (with its in-call retries), the others wait for the next
    # run; the healthy organization's link is read.
    assert (summary.checked, summary.failed, summary.deferred) == (2, 1, 2)
    assert no_waits == [1.0, 3.0]
    assert _link(allowed, healthy).ticket_state == "closed"
    tried = [_link(allowed, i) for i in down_links]
    assert [bool(t.last_error) for t in tried] == [True, False, False]
    assert "GitHub could not be reached" in tried[0].last_error


def _point_at(settings: Settings, org_id: int, url: str) -> None:
    with session_scope(settings) as session:
        for connection in session.scalars(
            select(TrackerConnection).where(TrackerConnection.org_id == org_id)
        ):
            connection.base_url = url


def test_a_dripping_tracker_delays_only_its_own_organization(
    allowed: Settings, fake: FakeTrackers, no_waits: list[float]
) -> None:
    slow_org, slow_links = _tenant(allowed, fake, "Initech", ["acme/api#1", "acme/api#2"])
    _, (healthy,) = _tenant(allowed, fake, "Globex", ["acme/web#1"])
    drip = HostileReceiver(mode="drip", interval_s=0.5, drip_s=10.0).start()
    try:
        _point_at(allowed, slow_org, drip.url.removesuffix("/hook"))
        fake.close_ticket("acme/web#1")
        fake.calls.clear()  # (creating the connections asked the fake who the token is)
        outbound = OutboundClient(allow=AllowList.parse("127.0.0.1"), deadline_s=3.0)
        summary = sync_states(allowed, get_warehouse(allowed), outbound=outbound, now=NOW)
        ended = time.monotonic()
    finally:
        drip.stop()
    # Globex's tracker is asked while Initech's read is under way, not after its 10 s drip or its 3 s
    # deadline; Initech's read ends at its deadline and its second link waits for the next run (one slow
    # answer per connection per run). Times are taken from Initech's arrival at its tracker, so a loaded
    # machine's delay before the run's first call does not count.
    (initech_asked,) = drip.arrivals
    assert abs(fake.calls[0].at - initech_asked) < 2.0
    assert _link(allowed, healthy).ticket_state == "closed"
    assert ended - initech_asked < 6.0
    assert (summary.failed, summary.deferred) == (1, 1)
    assert "deadline" in _link(allowed, slow_links[0]).last_error


def test_a_tracker_answering_too_much_is_read_only_up_to_the_cap(
    allowed: Settings, fake: FakeTrackers, no_waits: list[float]
) -> None:
    org, (link,) = _tenant(allowed, fake, "Initech", ["acme/api#1"])
    huge = HostileReceiver(mode="large", size=200 * 1024 * 1024).start()
    try:
        _point_at(allowed, org, huge.url.removesuffix("/hook"))
        summary = sync_states(allowed, get_warehouse(allowed), now=NOW)
        time.sleep(0.2)
    finally:
        huge.stop()
    assert summary.failed == 1
    assert "larger than 4 MiB" in _link(allowed, link).last_error
    assert huge.sent < 16 * 1024 * 1024, huge.sent
