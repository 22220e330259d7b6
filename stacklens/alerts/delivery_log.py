"""The delivery log — one row per attempt to send a notification — with what sent each message: the alert rule
(its current name; the name the message carried when the rule has been deleted since), a channel test, or a
digest and the rules of the messages folded into it. The rule is read through the notification each attempt
delivers (``alert_notifications.rule_id``; a digest's ``data.digest_of``), so the log needs no copy of it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from typing_extensions import TypedDict  # typing's own is not a response model before Python 3.12

from stacklens.alerts.sending import DeliveryOut, delivery_dict
from stacklens.control.models import Subscription, User
from stacklens.control.models.alerts import AlertDelivery, AlertNotification, AlertRule

LOG_ROWS = 50


@dataclass(frozen=True)
class SentBy:
    """What sent a message: ``kind`` ``rule`` (``rules`` holds it), ``digest`` (the rules of its messages),
    ``test`` (a channel test), ``report`` (a scheduled report: its dashboard or query and who subscribed)
    or ``unknown``; ``text`` says it in words."""

    kind: str
    rules: tuple[tuple[int | None, str], ...]  # (rule id, or None once deleted; its name)
    text: str


@dataclass(frozen=True)
class LoggedDelivery:
    row: AlertDelivery
    notification_kind: str  # firing | resolved | renotify | test | digest ('' when the message is gone)
    sent_by: SentBy


def _payload_data(notification: AlertNotification | None) -> dict[str, Any]:
    payload = notification.payload if notification is not None else None
    data = payload.get("data") if isinstance(payload, dict) else None
    return data if isinstance(data, dict) else {}


def _rule_of(notification: AlertNotification, names: dict[int, str]) -> tuple[int | None, str] | None:
    if notification.rule_id is None:
        return None
    if notification.rule_id in names:
        return notification.rule_id, names[notification.rule_id]
    carried = str(_payload_data(notification).get("rule") or f"rule {notification.rule_id}")
    return None, f"{carried} (deleted)"


def _sent_by(
    notification: AlertNotification | None,
    folded: dict[str, AlertNotification],
    names: dict[int, str],
    subscribers: dict[int, str],
) -> SentBy:
    if notification is None:
        return SentBy("unknown", (), "unknown")
    if notification.kind == "test":
        return SentBy("test", (), "channel test")
    if notification.kind == "report":
        data = _payload_data(notification)
        by = subscribers.get(_int(data.get("subscription_id")), "a subscription since deleted")
        return SentBy(
            "report", (), f"scheduled report: {data.get('name') or 'a dashboard'} (subscribed by {by})"
        )
    if notification.kind == "digest":
        ids = [str(i) for i in _payload_data(notification).get("digest_of") or []]
        rules = tuple(
            dict.fromkeys(
                rule for i in ids if i in folded and (rule := _rule_of(folded[i], names)) is not None
            )
        )
        names_text = ", ".join(name for _, name in rules) or "no rule"
        return SentBy("digest", rules, f"digest of {len(ids)}: {names_text}")
    rule = _rule_of(notification, names)
    if rule is None:
        return SentBy("unknown", (), "unknown")
    return SentBy("rule", (rule,), rule[1])


def delivery_log(
    session: Session, org_id: int, channel_id: int | None = None, limit: int = LOG_ROWS
) -> list[LoggedDelivery]:
    """The organization's last ``limit`` delivery attempts (of one channel), newest first, each with what
    sent it. Three more reads whatever the number of rows: the notifications, the messages digests folded,
    the rules."""
    query = select(AlertDelivery).where(AlertDelivery.org_id == org_id)
    if channel_id is not None:
        query = query.where(AlertDelivery.channel_id == channel_id)
    rows = list(session.scalars(query.order_by(AlertDelivery.id.desc()).limit(limit)))
    notifications = _notifications(session, org_id, {r.notification_id for r in rows})
    folded_ids = {
        str(i)
        for n in notifications.values()
        if n.kind == "digest"
        for i in _payload_data(n).get("digest_of") or []
    }
    folded = _notifications(session, org_id, folded_ids)
    rule_ids = {n.rule_id for n in (*notifications.values(), *folded.values()) if n.rule_id is not None}
    found = session.execute(
        select(AlertRule.id, AlertRule.name).where(
            AlertRule.org_id == org_id, AlertRule.id.in_(rule_ids or {-1})
        )
    )
    names: dict[int, str] = {rule_id: name for rule_id, name in found}
    subscribers = _subscribers(session, org_id, notifications.values())
    out = []
    for row in rows:
        notification = notifications.get(row.notification_id)
        out.append(
            LoggedDelivery(
                row,
                notification.kind if notification is not None else "",
                _sent_by(notification, folded, names, subscribers),
            )
        )
    return out


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


def _subscribers(session: Session, org_id: int, notifications: Iterable[AlertNotification]) -> dict[int, str]:
    """Who subscribed to each scheduled report of ``notifications``: subscription id → the member's e-mail
    (one read; a subscription made with the organization's API key names it so)."""
    ids = {_int(_payload_data(n).get("subscription_id")) for n in notifications if n.kind == "report"}
    if not ids:
        return {}
    found = session.execute(
        select(Subscription.id, User.email)
        .outerjoin(User, User.id == Subscription.owner_user_id)
        .where(Subscription.org_id == org_id, Subscription.id.in_(ids))
    )
    return {sub_id: email or "the organization's API key" for sub_id, email in found}


def _notifications(session: Session, org_id: int, ids: set[str]) -> dict[str, AlertNotification]:
    if not ids:
        return {}
    found = session.scalars(
        select(AlertNotification).where(AlertNotification.org_id == org_id, AlertNotification.id.in_(ids))
    )
    return {n.id: n for n in found}


class RuleName(TypedDict):
    id: int | None  # None once the rule is deleted
    name: str


class LoggedDeliveryOut(DeliveryOut):
    """A line of the delivery log: the attempt and what sent its message."""

    kind: str  # firing | resolved | renotify | test | digest ('' when the message is gone)
    sent_by: str  # rule | digest | test | report | unknown
    sent_by_text: str  # what sent it, in words (a report's dashboard and subscriber)
    rule_id: int | None
    rule: str | None
    rules: list[RuleName]


def logged_dict(entry: LoggedDelivery) -> LoggedDeliveryOut:
    """One attempt as the API answers it: the attempt's fields and what sent it (``rule_id`` and ``rule``
    for a rule's message, ``rules`` for every rule of a digest)."""
    sent_by = entry.sent_by
    return {
        **delivery_dict(entry.row),
        "kind": entry.notification_kind,
        "sent_by": sent_by.kind,
        "sent_by_text": sent_by.text,
        "rule_id": sent_by.rules[0][0] if sent_by.kind == "rule" else None,
        "rule": sent_by.rules[0][1] if sent_by.kind == "rule" else None,
        "rules": [{"id": rule_id, "name": name} for rule_id, name in sent_by.rules],
    }
