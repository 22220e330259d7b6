"""Tracker connections (rows): validate, test on save, store the token encrypted, list, delete.

A connection is tested before anything is stored: the tracker must accept the token and say who it is
("connected as …") and which repositories, projects or teams it reaches. A token the tracker refuses is
never saved. Tokens are encrypted under the server secret like the viewable key copies and never shown
again (lists show the last four characters). Every change writes an activity entry; callers own the
transaction.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from typing_extensions import TypedDict  # typing's own is not a response model before Python 3.12

from stacklens.control.activity import record_activity
from stacklens.control.keys.values import decrypt_value, encrypt_value
from stacklens.control.models.integrations import TrackerConnection
from stacklens.errors import InvalidInput, NotFound
from stacklens.integrations.trackers import TRACKER_TYPES, tracker_for
from stacklens.integrations.trackers.base import Connection, Tracker
from stacklens.outbound import AllowList, OutboundClient, OutboundRefused, validate_target
from stacklens.settings import Settings

EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
MAX_TARGETS = 200  # what the target picker lists; a token reaching more still works with a typed target
# Where each tracker's cloud service answers when no base URL is given (GitHub Enterprise, self-managed
# GitLab and Jira sites give theirs).
DEFAULT_BASE = {
    "github": "https://api.github.com",
    "gitlab": "https://gitlab.com",
    "linear": "https://api.linear.app",
}
LABELS = {"github": "GitHub", "gitlab": "GitLab", "jira": "Jira", "linear": "Linear"}


class IntegrationInputError(InvalidInput):
    """A field of a connection or a link is wrong; the message starts with the field's name."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


class IntegrationNotFound(NotFound):
    """No such connection or link in this organization (another organization's answers the same)."""


def outbound_for(settings: Settings) -> OutboundClient:
    return OutboundClient(allow=AllowList.parse(settings.outbound_allow))


def _text(body: dict[str, Any], name: str, limit: int) -> str:
    value = body.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise IntegrationInputError(name, f"must be text (got {type(value).__name__})")
    value = value.strip()
    if len(value) > limit:
        raise IntegrationInputError(name, f"must be at most {limit} characters")
    return value


def _base_url(kind: str, value: str, allow: AllowList) -> str:
    if not value:
        if kind == "jira":
            raise IntegrationInputError(
                "base_url", "give your Jira site, like https://your-team.atlassian.net"
            )
        return DEFAULT_BASE[kind]
    try:
        value = validate_target(value, allow)
    except OutboundRefused as exc:
        raise IntegrationInputError("base_url", str(exc)) from exc
    return value.rstrip("/")


def validate(body: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """The connection's fields from a request body, each refusal naming its field."""
    if not isinstance(body, dict):
        raise IntegrationInputError("body", "send a JSON object")
    kind = body.get("type")
    if kind not in TRACKER_TYPES:
        raise IntegrationInputError(
            "type", f"must be one of {', '.join(TRACKER_TYPES)} (got {str(kind)[:40]!r})"
        )
    name = _text(body, "name", 200) or LABELS[kind]
    token = _text(body, "token", 2000)
    if not token:
        raise IntegrationInputError("token", f"give the {LABELS[kind]} token (it is stored encrypted)")
    email = _text(body, "email", 320)
    if email and not EMAIL_RE.match(email):
        raise IntegrationInputError("email", f"{email[:80]!r} is not an e-mail address")
    if email and kind != "jira":
        raise IntegrationInputError("email", "only a Jira Cloud connection takes an e-mail")
    resolve = body.get("resolve_on_close", False)
    if not isinstance(resolve, bool):
        raise IntegrationInputError("resolve_on_close", "must be true or false")
    issue_type = _text(body, "issue_type", 60)
    return {
        "type": kind,
        "name": name,
        "token": token,
        "email": email,
        "base_url": _base_url(kind, _text(body, "base_url", 500), AllowList.parse(settings.outbound_allow)),
        "default_target": _text(body, "default_target", 300),
        "resolve_on_close": resolve,
        "options": {"issue_type": issue_type} if issue_type else {},
    }


def create_connection(
    session: Session,
    org_id: int,
    settings: Settings,
    body: dict[str, Any],
    actor_user_id: int | None = None,
    outbound: OutboundClient | None = None,
) -> TrackerConnection:
    """Validate, test against the tracker, then store. A refused token raises before anything is written."""
    fields = validate(body, settings)
    connection = Connection(
        fields["type"], fields["base_url"], fields["token"], fields["email"], fields["options"]
    )
    account = tracker_for(connection, outbound or outbound_for(settings)).account()
    targets = account.targets[:MAX_TARGETS]
    row = TrackerConnection(
        org_id=org_id,
        type=fields["type"],
        name=fields["name"],
        base_url=fields["base_url"],
        email=fields["email"],
        token_encrypted=encrypt_value(fields["token"], settings),
        token_hint=f"…{fields['token'][-4:]}",
        default_target=fields["default_target"] or (targets[0] if targets else ""),
        options=fields["options"],
        resolve_on_close=fields["resolve_on_close"],
        account_name=account.name,
        targets=targets,
        tested_at=datetime.now(UTC),
    )
    session.add(row)
    session.flush()
    record_activity(
        session,
        org_id,
        "integration.created",
        "integration",
        row.id,
        actor_user_id,
        {"type": row.type, "name": row.name, "account": account.name},
    )
    return row


def list_connections(session: Session, org_id: int) -> list[TrackerConnection]:
    query = select(TrackerConnection).where(TrackerConnection.org_id == org_id)
    return list(session.scalars(query.order_by(TrackerConnection.id)))


def get_connection(session: Session, org_id: int, connection_id: object) -> TrackerConnection:
    """The organization's connection; another organization's answers exactly like a missing one."""
    if isinstance(connection_id, str) and connection_id.strip().isdigit():
        connection_id = int(connection_id)
    if not isinstance(connection_id, int) or isinstance(connection_id, bool) or not 0 < connection_id < 2**31:
        raise IntegrationInputError("integration_id", "give the id of one of the organization's connections")
    row = session.get(TrackerConnection, connection_id)
    if row is None or row.org_id != org_id:
        raise IntegrationNotFound(f"no integration {connection_id} in this organization")
    return row


def delete_connection(
    session: Session, org_id: int, connection_id: int, actor_user_id: int | None = None
) -> None:
    """Remove a connection and its links (the tickets stay in the tracker)."""
    row = get_connection(session, org_id, connection_id)
    session.delete(row)
    record_activity(
        session,
        org_id,
        "integration.deleted",
        "integration",
        connection_id,
        actor_user_id,
        {"name": row.name},
    )


def tracker_of(row: TrackerConnection, settings: Settings, outbound: OutboundClient | None = None) -> Tracker:
    """The client of a stored connection (the token decrypted for this use only)."""
    token = decrypt_value(row.token_encrypted, settings)
    connection = Connection(row.type, row.base_url, token, row.email, dict(row.options or {}))
    return tracker_for(connection, outbound or outbound_for(settings))


class ConnectionOut(TypedDict):
    """A tracker connection as the API answers it: never the token, only its last four characters."""

    id: int
    type: str  # github | gitlab | jira | linear
    name: str
    base_url: str
    email: str  # Jira Cloud's account e-mail ("" for the others)
    token: str  # "…abcd"
    default_target: str
    resolve_on_close: bool
    connected_as: str
    targets: list[str]
    issue_type: str


def connection_out(row: TrackerConnection) -> ConnectionOut:
    """A connection for lists and the API: never the token, only its last four characters."""
    return {
        "id": row.id,
        "type": row.type,
        "name": row.name,
        "base_url": row.base_url,
        "email": row.email,
        "token": row.token_hint,
        "default_target": row.default_target,
        "resolve_on_close": row.resolve_on_close,
        "connected_as": row.account_name,
        "targets": list(row.targets or []),
        "issue_type": (row.options or {}).get("issue_type", ""),
    }
