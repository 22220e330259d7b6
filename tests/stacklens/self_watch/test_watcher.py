"""The service's watch on a real server, with a real SMTP server for the owners' channel: events accepted but
not landing for longer than the limit, and refusals for a full queue, each alert once and recover once."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from email import message_from_bytes
from email.policy import default
from typing import Any

import httpx
import pytest

from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from stacklens.ingest.front_door import door as door_module
from stacklens.ingest.front_door import front_door
from stacklens.self_watch.watcher import watching
from stacklens.settings import Settings, override_settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.api.live import serve
from tests.shipper.harness import wait_until
from tests.stacklens.alerts.helpers import MailSink, start_smtp


@pytest.fixture
def mailed(settings: Settings) -> Iterator[tuple[Settings, MailSink]]:
    """``settings`` with alert e-mail going to a real local SMTP server, the warehouse migrated."""
    sink = MailSink()
    smtp = start_smtp(sink)
    current = settings.model_copy(update={"smtp_url": f"smtp://127.0.0.1:{smtp.port}"})
    override_settings(current)
    apply_migrations(current)
    try:
        yield current, sink
    finally:
        smtp.stop()


def _owners_channel(settings: Settings, org: dict[str, Any]) -> None:
    with session_scope(settings) as session:
        create_channel(
            session, int(org["org_id"]), settings, type="email", name="owners", to=["owner@acme.test"]
        )


def _subjects(sink: MailSink) -> list[str]:
    return [str(message_from_bytes(e.content, policy=default)["subject"]) for e in sink.messages]


def _envelope(message: str) -> bytes:
    event_id = uuid.uuid4().hex
    payload = {"event_id": event_id, "message": message, "level": "error"}
    return b"\n".join(
        [json.dumps({"event_id": event_id}).encode(), b'{"type":"event"}', json.dumps(payload).encode()]
    )


def test_events_accepted_but_not_landing_alert_once_and_recover(
    mailed: tuple[Settings, MailSink], make_org
) -> None:
    settings, sink = mailed
    org = make_org()
    other = make_org("Globex")  # every organization's owners hear about the service
    _owners_channel(settings, org)
    _owners_channel(settings, other)
    warehouse = get_warehouse(settings)
    # The drain looks the rows up in `events` first: without the table every drain fails, as with a broken
    # warehouse, while the requests are answered 200 from the spool.
    warehouse.command("RENAME TABLE events TO events_away")
    try:
        with (
            serve(settings) as url,
            watching(settings, poll_seconds=0.2, clear_seconds=0.5, visible_seconds=2),
        ):
            answer = httpx.post(
                f"{url}/api/{org['project_id']}/envelope/",
                params={"sentry_key": str(org["app_key"])},
                content=_envelope("spooled, not landed"),
            )
            assert answer.status_code == 200, answer.text
            wait_until(lambda: len(sink.messages) == 2, 30, "one alert per organization's channel")
            time.sleep(1.0)
            assert len(sink.messages) == 2  # one episode, one alert each
            assert all("Accepted events are not visible" in s for s in _subjects(sink))
            warehouse.command("RENAME TABLE events_away TO events")
            wait_until(lambda: len(sink.messages) == 4, 30, "the recovery notes")
            assert all("[Resolved]" in s for s in _subjects(sink)[2:])
            count = warehouse.query(
                "SELECT count() FROM events WHERE org_id = {org:UInt64}", parameters={"org": org["org_id"]}
            ).result_rows[0][0]
            assert count == 1
    finally:
        if not warehouse.query("EXISTS TABLE events").result_rows[0][0]:
            warehouse.command("RENAME TABLE events_away TO events")


def test_queue_refusals_alert_once_and_recover(
    mailed: tuple[Settings, MailSink], make_org, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, sink = mailed
    org = make_org()
    _owners_channel(settings, org)
    door = front_door(settings)
    monkeypatch.setattr(door_module, "MAX_ROWS_WAITING", 3)
    monkeypatch.setattr(door.state, "rows_spooled", 3)  # rows waiting for the warehouse fill the queue
    monkeypatch.setattr("stacklens.self_watch.watcher.QUEUE_REFUSAL_SECONDS", 1.0)
    line = json.dumps({"v": 1, "type": "event", "app_key": org["app_key"], "payload": {"message": "m"}})
    auth = {"Authorization": f"Bearer {org['api_key']}"}
    with serve(settings) as url, watching(settings, poll_seconds=0.2, clear_seconds=0.5):
        for _ in range(5):  # a burst of refusals is one episode
            refused = httpx.post(f"{url}/api/ingest", content=line.encode(), headers=auth)
            assert refused.status_code == 503
            time.sleep(0.2)
        wait_until(lambda: len(sink.messages) == 1, 30, "the owners' alert")
        assert "Ingest refused: the front door's queue is full" in _subjects(sink)[0]
        monkeypatch.setattr(door.state, "rows_spooled", 0)
        wait_until(lambda: len(sink.messages) == 2, 30, "the recovery note")
        assert "[Resolved]" in _subjects(sink)[1]
