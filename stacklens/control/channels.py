"""Notification channels (rows): create, list, delete, resume, and the health badge.

A webhook channel gets a ``whsec_…`` signing secret, returned once at creation and kept encrypted under the
server secret (like the viewable key copies). Every change writes an activity entry. Callers own the
transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.alerts.channels.base import CHANNEL_TYPES
from stacklens.alerts.channels.email import validate_recipients
from stacklens.alerts.channels.webhook import generate_secret
from stacklens.alerts.errors import AlertInputError, AlertNotFound
from stacklens.control.activity import record_activity
from stacklens.control.keys.values import encrypt_value
from stacklens.control.models.alerts import AlertChannel
from stacklens.outbound import AllowList, OutboundRefused, validate_target
from stacklens.settings import Settings


@dataclass(frozen=True)
class Health:
    badge: str  # healthy | failing | paused | untested
    text: str


def validate_url(url: object, allow: AllowList) -> str:
    """An http(s) URL with a host, literal hosts written canonically; internal literal addresses (in any
    form browsers accept) are refused now, names are resolved, checked and pinned at every send."""
    if not isinstance(url, str) or not url.strip():
        raise AlertInputError("url", "give the URL to post to (https://…)")
    url = url.strip()
    if len(url) > 2000:
        raise AlertInputError(
            "url", f"{url[:80]!r} is not a valid http:// or https:// URL (over 2,000 characters)"
        )
    try:
        return validate_target(url, allow)
    except OutboundRefused as exc:
        raise AlertInputError("url", str(exc)) from exc


def create_channel(
    session: Session,
    org_id: int,
    settings: Settings,
    *,
    type: str,
    name: str,
    url: str | None = None,
    to: list[str] | str | None = None,
    actor_user_id: int | None = None,
) -> tuple[AlertChannel, str | None]:
    """A new channel and, for a webhook, its signing secret (shown once)."""
    if type not in CHANNEL_TYPES:
        raise AlertInputError("type", f"unknown channel type {type!r}; use one of {', '.join(CHANNEL_TYPES)}")
    name = (name or "").strip() if isinstance(name, str) else ""
    if not name or len(name) > 200:
        raise AlertInputError("name", "give the channel a name of 1 to 200 characters")
    secret = None
    if type == "email":
        try:
            config: dict[str, Any] = {"to": validate_recipients(to)}
        except ValueError as exc:
            raise AlertInputError("to", str(exc).removeprefix("to: ")) from exc
    else:
        config = {"url": validate_url(url, AllowList.parse(settings.outbound_allow))}
    row = AlertChannel(org_id=org_id, name=name, type=type, config=config)
    if type == "webhook":
        secret = generate_secret()
        row.secret_encrypted = encrypt_value(secret, settings)
    session.add(row)
    session.flush()
    record_activity(
        session,
        org_id,
        "alert_channel.created",
        "alert_channel",
        row.id,
        actor_user_id,
        {"type": type, "name": name},
    )
    return row, secret


def list_channels(session: Session, org_id: int) -> list[AlertChannel]:
    return list(
        session.scalars(
            select(AlertChannel)
            .where(AlertChannel.org_id == org_id, AlertChannel.personal_user_id.is_(None))
            .order_by(AlertChannel.id)
        )
    )


def get_channel(session: Session, org_id: int, channel_id: int) -> AlertChannel:
    """The organization's channel; another organization's answers exactly like a missing one."""
    row = session.get(AlertChannel, channel_id)
    # A person's own channel (issue notifications) is not the organization's to see or change.
    if row is None or row.org_id != org_id or row.personal_user_id is not None:
        raise AlertNotFound("channel", f"no channel {channel_id} in this organization")
    return row


def delete_channel(session: Session, org_id: int, channel_id: int, actor_user_id: int | None = None) -> None:
    row = get_channel(session, org_id, channel_id)
    session.delete(row)
    record_activity(
        session,
        org_id,
        "alert_channel.deleted",
        "alert_channel",
        channel_id,
        actor_user_id,
        {"name": row.name},
    )


def resume_channel(session: Session, org_id: int, channel_id: int, actor_user_id: int | None = None) -> None:
    """Lift an automatic pause; the notifications that waited are sent on the next drain."""
    row = get_channel(session, org_id, channel_id)
    row.paused_at = None
    row.pause_reason = ""
    row.consecutive_failures = 0
    record_activity(session, org_id, "alert_channel.resumed", "alert_channel", channel_id, actor_user_id, {})


def target_text(row: AlertChannel) -> str:
    """Where the channel delivers, for lists: recipients, or the URL without its secret path."""
    if row.type == "email":
        return ", ".join(row.config.get("to", []))
    parts = urlsplit(row.config.get("url", ""))
    path = parts.path if row.type == "webhook" else "/…"  # a Slack hook's path is its credential
    return f"{parts.scheme}://{parts.netloc}{path}"


def health(row: AlertChannel) -> Health:
    if row.paused_at is not None:
        return Health("paused", f"paused after repeated permanent failures: {row.pause_reason}")
    last_ok: datetime | None = row.last_success_at
    if row.last_failure_at is not None and (last_ok is None or row.last_failure_at > last_ok):
        return Health("failing", f"{row.consecutive_failures} failure(s) in a row")
    if last_ok is not None:
        return Health("healthy", "last delivery succeeded")
    return Health("untested", "nothing delivered yet: send a test")
