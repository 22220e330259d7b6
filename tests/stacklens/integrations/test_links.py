"""Two requests creating the same link at the same moment (a double click, a retried call) make one ticket:
the unique constraint and the committed ``creating`` row let exactly one of them call the tracker."""

from __future__ import annotations

import threading

from stacklens.control.db import session_scope
from stacklens.control.integrations import create_connection
from stacklens.errors import StackLensError
from stacklens.integrations.links import LinkInProgress, create_link
from stacklens.integrations.prefill import Draft
from stacklens.settings import Settings
from tests.stacklens.alerts.helpers import org_with_project
from tests.stacklens.integrations import fake_trackers as ft
from tests.stacklens.integrations.fake_trackers import FakeTrackers


def test_simultaneous_creates_make_one_ticket(control_settings: Settings, fake: FakeTrackers) -> None:
    settings = control_settings.model_copy(update={"outbound_allow": "127.0.0.1"})
    org_id, project_id, _ = org_with_project(settings)
    with session_scope(settings) as session:
        body = {
            "type": "github",
            "base_url": fake.url,
            "token": ft.GITHUB_TOKEN,
            "default_target": "acme/web",
        }
        connection_id = create_connection(session, org_id, settings, body).id
    draft = Draft("TypeError: x is undefined", "", {"title": "TypeError"}, "", "https://sl.test/i/1")
    fake.script[:] = [(0, {}, 0.5)]  # the first tracker call is slow, so the second request overlaps it
    results: list[object] = []
    barrier = threading.Barrier(2)

    def attempt() -> None:
        barrier.wait()
        try:
            results.append(create_link(settings, org_id, project_id, 42, connection_id, "", draft))
        except StackLensError as exc:
            results.append(exc)

    threads = [threading.Thread(target=attempt) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(results) == 2
    assert sum(isinstance(r, LinkInProgress) for r in results) == 1, results
    assert list(fake.tickets) == ["acme/web#1"]
    again = create_link(settings, org_id, project_id, 42, connection_id, "", draft)
    assert not again.created and again.link["key"] == "acme/web#1"
    assert [c.method for c in fake.calls].count("POST") == 1
