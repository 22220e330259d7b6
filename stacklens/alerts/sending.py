""" "Send test": a test notification goes through the same outbox as real alerts, delivered at once, and the
answer is the real delivery (status, latency, response excerpt, error, next retry)."""

from __future__ import annotations

from sqlalchemy import select
from typing_extensions import TypedDict  # typing's own is not a response model before Python 3.12

from stacklens.alerts import outbox
from stacklens.alerts.messages import channel_test_payload
from stacklens.control.channels import get_channel
from stacklens.control.db import session_scope
from stacklens.control.models import Organization, iso_utc
from stacklens.control.models.alerts import AlertDelivery
from stacklens.public_url import public_base_url
from stacklens.settings import Settings


class DeliveryOut(TypedDict):
    """One attempt to deliver a notification, as the API answers it (a test's answer, a line of the log)."""

    id: int | None  # None: the attempt has not been made yet (a test held back by the channel's rate cap)
    notification_id: str
    channel_id: int
    attempt: int
    at: str | None
    outcome: str  # delivered | failed | retrying | pending
    status_code: int | None
    latency_ms: float
    response: str  # the receiver's answer, cut to an excerpt
    error: str
    next_retry_at: str | None


def delivery_dict(row: AlertDelivery) -> DeliveryOut:
    return {
        "id": row.id,
        "notification_id": row.notification_id,
        "channel_id": row.channel_id,
        "attempt": row.attempt,
        "at": iso_utc(row.started_at),
        "outcome": row.outcome,
        "status_code": row.status_code,
        "latency_ms": row.latency_ms,
        "response": row.response_excerpt,
        "error": row.error,
        "next_retry_at": iso_utc(row.next_retry_at) if row.next_retry_at else None,
    }


def send_test(settings: Settings, org_id: int, channel_id: int) -> DeliveryOut:
    """Enqueue a test notification for the organization's channel, drain it now, return its delivery."""
    with session_scope(settings) as session:
        channel = get_channel(session, org_id, channel_id)
        org = session.get(Organization, org_id)
        payload = channel_test_payload(channel.name, public_base_url(settings), org.slug if org else "")
        (notification_id,) = outbox.enqueue(session, org_id, [channel.id], "test", payload)
    outbox.drain(settings, notification_ids=[notification_id])
    with session_scope(settings) as session:
        row = session.scalars(
            select(AlertDelivery)
            .where(AlertDelivery.notification_id == notification_id)
            .order_by(AlertDelivery.id.desc())
        ).first()
        if row is None:  # held back (the channel's rate cap): it goes out on the next drain
            return {
                "id": None,
                "notification_id": notification_id,
                "channel_id": channel_id,
                "attempt": 0,
                "at": None,
                "outcome": "pending",
                "status_code": None,
                "latency_ms": 0.0,
                "response": "",
                "error": "waiting for the channel's rate cap",
                "next_retry_at": None,
            }
        return delivery_dict(row)
