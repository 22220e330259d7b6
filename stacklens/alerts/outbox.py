"""The notification outbox: durable, at-least-once delivery with a stable id per notification.

Life of a notification row: ``pending`` → (claimed: ``sending`` with a lease) → ``delivered`` | ``failed``
(permanent refusal, or still failing 24 h after it was created) | ``digested`` (folded into a digest by the
channel's rate cap) — a retryable failure puts it back to ``pending`` with ``next_attempt_at`` from
:func:`stacklens.outbound.backoff.backoff_delay`.

Crash safety: a claim is committed before anything is sent, and the outcome after. A process killed between
the two (``kill -9`` mid-send) leaves a ``sending`` row whose lease expires; the next drain sends it again
under the **same id** (``webhook-id``, the e-mail's Message-ID), so nothing is lost and a receiver that
deduplicates by the id sees each notification once. The claim is a conditional UPDATE, so two drains never
send the same row at once.
"""

from __future__ import annotations

import base64
import os
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.orm import Session

from stacklens.alerts.channel_rows import build_channel, message_of
from stacklens.alerts.channels.base import RATE_CAPS, Channel, Message, SendResult
from stacklens.control.db import session_scope
from stacklens.control.models import utcnow
from stacklens.control.models.alerts import AlertChannel, AlertDelivery, AlertNotification
from stacklens.isolation import failure_text, is_shared_outage
from stacklens.outbound import AllowList, OutboundClient, backoff_delay
from stacklens.settings import Settings
from stacklens.tenant_pool import Tenant, by_tenant, run_per_tenant

RETRY_PERIOD = timedelta(hours=24)  # retryable failures are retried at least this long
LEASE = timedelta(seconds=60)  # longer than any single send (HTTP: its 30 s deadline; SMTP 15 s a step)
PAUSE_AFTER_PERMANENT_FAILURES = 5
DRAIN_BATCH = 200


def new_id() -> str:
    """``msg_`` + 26 base32 characters: 48-bit milliseconds then 80 random bits (sortable, like a ULID)."""
    raw = int(time.time() * 1000).to_bytes(6, "big") + os.urandom(10)
    return "msg_" + base64.b32encode(raw).decode().rstrip("=").lower()


def enqueue(
    session: Session,
    org_id: int,
    channel_ids: list[int],
    kind: str,
    payload: dict[str, Any],
    rule_id: int | None = None,
) -> list[str]:
    """One outbox row per channel of the organization (others are ignored); returns their ids."""
    ids = []
    owned = session.scalars(
        select(AlertChannel.id).where(AlertChannel.org_id == org_id, AlertChannel.id.in_(channel_ids or [-1]))
    ).all()
    for channel_id in owned:
        row = AlertNotification(
            id=new_id(),
            org_id=org_id,
            channel_id=channel_id,
            rule_id=rule_id,
            kind=kind,
            payload=payload,
            status="pending",
            next_attempt_at=utcnow(),
        )
        session.add(row)
        ids.append(row.id)
    session.flush()
    return ids


def _fields(row: AlertNotification) -> dict[str, Any]:
    """The payload for a digest line; a malformed one contributes its kind only (the row's own send fails
    with the reason, the digest of the others does not)."""
    return row.payload if isinstance(row.payload, dict) else {}


@dataclass
class DrainSummary:
    delivered: int = 0
    retried: int = 0
    failed: int = 0
    digested: int = 0
    deferred: int = 0  # left due for the next drain: their organization's budget for this one was spent
    outcomes: dict[str, str] = field(default_factory=dict)  # notification id -> outcome
    errors: list[str] = field(default_factory=list)  # what went wrong outside a send (logged, not raised)

    def merge(self, other: DrainSummary) -> None:
        """Add one organization's figures (each task counts its own; no counter is shared by threads)."""
        self.delivered += other.delivered
        self.retried += other.retried
        self.failed += other.failed
        self.digested += other.digested
        self.deferred += other.deferred
        self.outcomes.update(other.outcomes)
        self.errors += other.errors


def _due(session: Session, now: datetime, ids: list[str] | None) -> list[AlertNotification]:
    ready = and_(AlertNotification.status == "pending", AlertNotification.next_attempt_at <= now)
    abandoned = and_(AlertNotification.status == "sending", AlertNotification.lease_until < now)
    query = select(AlertNotification).where(or_(ready, abandoned))
    if ids is not None:
        query = query.where(AlertNotification.id.in_(ids))
    return list(
        session.scalars(query.order_by(AlertNotification.created_at, AlertNotification.id).limit(DRAIN_BATCH))
    )


def _sent_recently(session: Session, channel_id: int, since: datetime) -> int:
    return (
        session.scalar(
            select(func.count())
            .select_from(AlertDelivery)
            .where(
                AlertDelivery.channel_id == channel_id,
                AlertDelivery.started_at >= since,
                AlertDelivery.attempt >= 1,
            )
        )
        or 0
    )


def _apply_rate_cap(
    session: Session,
    channel: AlertChannel,
    rows: list[AlertNotification],
    now: datetime,
    summary: DrainSummary,
) -> list[AlertNotification]:
    """The rows to send now; beyond the channel's cap they are folded into one digest, never dropped."""
    limit, period = RATE_CAPS.get(channel.type, (60, 60.0))
    allowed = limit - _sent_recently(session, channel.id, now - timedelta(seconds=period))
    tests = [r for r in rows if r.kind == "test"]
    others = [r for r in rows if r.kind != "test"]
    if len(others) <= max(allowed - len(tests), 0):
        return rows
    if allowed - len(tests) <= 0:  # nothing may go now: they wait (pending), the next drain retries the cap
        return tests
    singles, folded = others[: allowed - len(tests) - 1], others[allowed - len(tests) - 1 :]
    if len(folded) == 1:
        return tests + singles + folded
    digest = AlertNotification(
        id=new_id(),
        org_id=channel.org_id,
        channel_id=channel.id,
        kind="digest",
        payload=digest_payload(folded),
        status="pending",
        next_attempt_at=now,
    )
    session.add(digest)
    for row in folded:
        row.status, row.digest_id = "digested", digest.id
        summary.outcomes[row.id] = "digested"
    summary.digested += len(folded)
    session.flush()
    return [*tests, *singles, digest]


def digest_payload(rows: list[AlertNotification]) -> dict[str, Any]:
    subjects = [_fields(r).get("subject", r.kind) for r in rows]
    texts = [f"• {_fields(r).get('subject', '')}\n{_fields(r).get('text', '')}" for r in rows]
    items = "".join(f"<li>{_fields(r).get('html', '')}</li>" for r in rows)
    return {
        "subject": f"{len(rows)} alert notifications (digest)",
        "text": "Several notifications arrived faster than this channel's rate cap; here they are together.\n\n"
        + "\n\n".join(texts),
        "html": f"<p>{len(rows)} notifications arrived faster than this channel's rate cap:</p><ul>{items}</ul>",
        "link": _fields(rows[0]).get("link", ""),
        "data": {"digest_of": [r.id for r in rows], "subjects": subjects},
    }


def _claim(session: Session, notification_id: str, now: datetime, lease: timedelta) -> int | None:
    """Take the row for this sender just before sending: a conditional UPDATE (still due, or its sender's
    lease expired), so two drains never send the same row at once. The attempt number, or ``None`` if
    taken."""
    ready = and_(AlertNotification.status == "pending", AlertNotification.next_attempt_at <= now)
    abandoned = and_(AlertNotification.status == "sending", AlertNotification.lease_until < now)
    result = session.execute(
        update(AlertNotification)
        .where(AlertNotification.id == notification_id, or_(ready, abandoned))
        .values(status="sending", lease_until=utcnow() + lease, attempts=AlertNotification.attempts + 1)
        .execution_options(synchronize_session=False)
    )
    if result.rowcount != 1:  # type: ignore[attr-defined]  # execute() is typed Result; an UPDATE's has rowcount
        return None
    return session.scalar(select(AlertNotification.attempts).where(AlertNotification.id == notification_id))


def drain(
    settings: Settings,
    *,
    now: datetime | None = None,
    lease: timedelta = LEASE,
    client: OutboundClient | None = None,
    notification_ids: list[str] | None = None,
) -> DrainSummary:
    """Send every due notification once (claim → send → record); safe to run from several processes."""
    summary = DrainSummary()
    now = now or utcnow()
    with session_scope(settings) as session:
        due = _due(session, now, notification_ids)
        by_channel: dict[int, list[AlertNotification]] = defaultdict(list)
        for row in due:
            by_channel[row.channel_id].append(row)
        planned: list[_Planned] = []
        for channel_id, rows in by_channel.items():
            channel = session.get(AlertChannel, channel_id)
            if channel is None:
                continue
            if channel.paused_at is not None:
                rows = [r for r in rows if r.kind == "test"]  # the others wait for a resume
            planned += [
                _Planned(row.id, channel_id, channel.org_id)
                for row in _apply_rate_cap(session, channel, rows, now, summary)
            ]
    client = client or OutboundClient(allow=AllowList.parse(settings.outbound_allow))

    # Each organization's notifications are sent by a task of their own (stacklens.tenant_pool), so one
    # organization's slow receiver delays only its own; a task stops at its organization's budget, and what
    # it did not send stays due for the next drain.
    def send_tenant(tenant: Tenant[_Planned]) -> DrainSummary:
        own = DrainSummary()
        bounded = client.until(tenant.not_after)
        for item in tenant.items:
            if tenant.out_of_time():
                own.deferred += 1
                continue
            _send_isolated(settings, item, bounded, own, now, lease)
        return own

    for part in run_per_tenant(by_tenant(planned, lambda p: p.org_id), send_tenant):
        summary.merge(part)
    return summary


@dataclass(frozen=True)
class _Planned:
    notification_id: str
    channel_id: int
    org_id: int


def _send_isolated(
    settings: Settings,
    item: _Planned,
    client: OutboundClient,
    summary: DrainSummary,
    now: datetime,
    lease: timedelta,
) -> None:
    """Each notification is its own item (stacklens.isolation): whatever one send raises is recorded on it
    (the delivery log) and retried with backoff; the next notification goes on."""
    try:
        _send_one(settings, item.notification_id, item.channel_id, client, summary, now, lease)
    except Exception as exc:
        if is_shared_outage(exc):
            raise  # the control store is down: every notification would fail alike
        # Recording the outcome itself failed: the row keeps its lease and is sent again after it.
        summary.errors.append(
            f"{item.notification_id}: {failure_text(exc, f'notification {item.notification_id}')}"
        )


def _send_one(
    settings: Settings,
    notification_id: str,
    channel_id: int,
    client: OutboundClient | None,
    summary: DrainSummary,
    now: datetime,
    lease: timedelta,
) -> None:
    # The claim commits before the send: a crash from here on leaves a leased row for another drain.
    with session_scope(settings) as session:
        attempt = _claim(session, notification_id, now, lease)
        row = session.get(AlertNotification, notification_id)
        channel = session.get(AlertChannel, channel_id)
        if attempt is None or row is None or channel is None:
            return
        session.refresh(row)
        what = f"notification {notification_id} to channel {channel_id}"
        result, sender, message = _prepare(row, channel, settings, client, what)
    if sender is not None and message is not None:
        try:
            result = sender.send(message)
        except Exception as exc:  # noqa: BLE001 - a channel that raises instead of answering: retried
            result = SendResult(ok=False, retryable=True, error=failure_text(exc, what))
    _record(settings, notification_id, channel_id, attempt, result, summary)


def _prepare(
    row: AlertNotification,
    channel: AlertChannel,
    settings: Settings,
    client: OutboundClient | None,
    what: str,
) -> tuple[SendResult, Channel | None, Message | None]:
    """The message and its sender, or the failure to record instead of a send."""
    try:
        message = message_of(row)
    except Exception as exc:  # noqa: BLE001 - a malformed stored notification is its own error
        return SendResult(ok=False, retryable=True, error=failure_text(exc, what)), None, None
    try:
        return SendResult(ok=False), build_channel(channel, settings, client), message
    except (ValueError, KeyError) as exc:  # e.g. the server secret changed: the webhook secret is gone
        return SendResult(ok=False, error=str(exc)[:500]), None, None
    except Exception as exc:  # noqa: BLE001 - anything else is this notification's error, retried
        return SendResult(ok=False, retryable=True, error=failure_text(exc, what)), None, None


def _record(
    settings: Settings,
    notification_id: str,
    channel_id: int,
    attempt: int,
    result: SendResult,
    summary: DrainSummary,
) -> None:
    now = utcnow()
    with session_scope(settings) as session:
        row = session.get(AlertNotification, notification_id)
        channel = session.get(AlertChannel, channel_id)
        if row is None or channel is None:
            return
        next_retry = None
        if result.ok:
            outcome, row.status, row.delivered_at, row.last_error = "delivered", "delivered", now, ""
            channel.consecutive_failures, channel.last_success_at = 0, now
            if row.kind == "test" and channel.paused_at is not None:  # a passing test lifts the pause
                channel.paused_at, channel.pause_reason = None, ""
            summary.delivered += 1
        elif result.retryable and now - row.created_at < RETRY_PERIOD:
            next_retry = now + timedelta(seconds=backoff_delay(attempt, result.retry_after_s))
            outcome, row.status, row.next_attempt_at = "retry", "pending", next_retry
            row.last_error = result.error[:500]
            channel.last_failure_at = now
            summary.retried += 1
        else:
            outcome = "permanent" if not result.retryable else "expired"
            row.status, row.last_error = "failed", result.error[:500]
            channel.last_failure_at = now
            if outcome == "permanent":
                channel.consecutive_failures += 1
                if (
                    channel.consecutive_failures >= PAUSE_AFTER_PERMANENT_FAILURES
                    and channel.paused_at is None
                ):
                    channel.paused_at = now
                    channel.pause_reason = (result.error or f"status {result.status_code}")[:300]
            summary.failed += 1
        row.lease_until = None
        summary.outcomes[notification_id] = outcome
        session.add(
            AlertDelivery(
                org_id=row.org_id,
                notification_id=row.id,
                channel_id=channel_id,
                attempt=attempt,
                started_at=now,
                outcome=outcome,
                status_code=result.status_code,
                latency_ms=result.latency_ms,
                response_excerpt=(result.excerpt or "")[:500],
                error=(result.error or "")[:500],
                next_retry_at=next_retry,
            )
        )
