"""Delivery, one notification at a time: one organization's receiver breaks (its answer cannot even be read)
and one of its notifications is stored malformed — each is that notification's error, in the delivery log
with its next attempt, retried after the outbox's backoff — while the other organization's notification is
delivered in the same drain. "Send test" on the broken channel answers the recorded delivery, not a crash."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import select

from stacklens.alerts import outbox
from stacklens.alerts.sending import delivery_dict, send_test
from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from stacklens.control.models import utcnow
from stacklens.control.models.alerts import AlertDelivery, AlertNotification
from stacklens.settings import Settings
from tests.stacklens.alerts.helpers import org_with_project
from tests.stacklens.alerts.receiver import Receiver

BROKEN_ANSWER = {"content-encoding": "gzip"}  # over a body that is not gzip: unreadable


@pytest.fixture
def receivers() -> Iterator[tuple[Receiver, Receiver]]:
    broken, healthy = Receiver().start(), Receiver().start()
    yield broken, healthy
    broken.stop()
    healthy.stop()


def _channel(settings: Settings, org_id: int, receiver: Receiver) -> int:
    with session_scope(settings) as session:
        row, secret = create_channel(session, org_id, settings, type="webhook", name="hook", url=receiver.url)
        receiver.secret = secret
        return row.id


def _enqueue(settings: Settings, org_id: int, channel_id: int, subject: str) -> str:
    with session_scope(settings) as session:
        payload = {"subject": subject, "text": "t", "html": "<p>t</p>"}
        return outbox.enqueue(session, org_id, [channel_id], "firing", payload)[0]


def _log(settings: Settings, org_id: int, channel_id: int) -> list[dict]:
    """The channel's delivery log as the channels page and GET /api/alerts/deliveries show it."""
    with session_scope(settings) as session:
        rows = session.scalars(
            select(AlertDelivery)
            .where(AlertDelivery.org_id == org_id, AlertDelivery.channel_id == channel_id)
            .order_by(AlertDelivery.id)
        )
        return [delivery_dict(r) for r in rows]


def test_a_broken_receiver_is_its_notifications_error_and_the_other_tenant_is_delivered(
    control_settings: Settings, receivers: tuple[Receiver, Receiver]
) -> None:
    settings = control_settings.model_copy(update={"outbound_allow": "127.0.0.1"})
    broken, healthy = receivers
    broken_org, _, _ = org_with_project(settings, "Initech")
    healthy_org, _, _ = org_with_project(settings, "Globex")
    broken_channel = _channel(settings, broken_org, broken)
    healthy_channel = _channel(settings, healthy_org, healthy)
    unreadable = _enqueue(settings, broken_org, broken_channel, "checkout slow")
    malformed = _enqueue(settings, broken_org, broken_channel, "stored wrong")
    with session_scope(settings) as session:  # what a faulty writer or a hand edit could leave
        row = session.get(AlertNotification, malformed)
        assert row is not None
        row.payload = ["not", "an", "object"]  # type: ignore[assignment]
    delivered = _enqueue(settings, healthy_org, healthy_channel, "api errors")
    broken.answer(200, BROKEN_ANSWER)

    summary = outbox.drain(settings)

    assert summary.outcomes == {unreadable: "retry", malformed: "retry", delivered: "delivered"}
    assert summary.errors == []
    assert healthy.accepted[delivered] == 1
    log = _log(settings, broken_org, broken_channel)
    by_id = {d["notification_id"]: d for d in log}
    assert "the receiver's answer cannot be read" in by_id[unreadable]["error"]
    assert "unexpected error (ValueError" in by_id[malformed]["error"]
    assert "stored payload is a list" in by_id[malformed]["error"]
    for entry in log:
        assert entry["outcome"] == "retry" and entry["next_retry_at"] is not None
    assert [d["outcome"] for d in _log(settings, healthy_org, healthy_channel)] == ["delivered"]

    # Backoff: within it nothing is sent again; after it both are tried again, and the one the receiver now
    # answers properly is delivered (the malformed one keeps failing, with its error each time).
    requests = len(broken.received)
    assert outbox.drain(settings).outcomes == {}
    assert len(broken.received) == requests
    later = outbox.drain(settings, now=utcnow() + timedelta(hours=2))
    assert later.outcomes == {unreadable: "delivered", malformed: "retry"}
    # The first answer was a 200 the sender could not read, so it was sent again under the same id (which
    # is what a receiver deduplicates by).
    assert broken.accepted[unreadable] == 2


def test_send_test_on_a_broken_receiver_answers_the_recorded_delivery(
    control_settings: Settings, receivers: tuple[Receiver, Receiver]
) -> None:
    settings = control_settings.model_copy(update={"outbound_allow": "127.0.0.1"})
    broken, healthy = receivers
    broken_org, _, _ = org_with_project(settings, "Initech")
    healthy_org, _, _ = org_with_project(settings, "Globex")
    broken_channel = _channel(settings, broken_org, broken)
    healthy_channel = _channel(settings, healthy_org, healthy)
    broken.answer(200, BROKEN_ANSWER)

    failed = send_test(settings, broken_org, broken_channel)
    assert failed["outcome"] == "retry" and failed["next_retry_at"]
    assert "the receiver's answer cannot be read" in failed["error"]
    assert send_test(settings, healthy_org, healthy_channel)["outcome"] == "delivered"
