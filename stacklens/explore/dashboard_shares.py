"""Read-only links to a dashboard (docs/explore.md): ``/share/dashboards/{token}``, revocable, with an expiry,
served from a snapshot of the page that is refreshed at most every :data:`SNAPSHOT_MINUTES` — a link posted
on a wall screen or a public page answers from the stored snapshot, never with a query per visitor (a
public view must not become a query storm). Only the token's SHA-256 is stored; the token is shown once."""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from stacklens.control.models import Dashboard, DashboardShare
from stacklens.control.share_publishers import publisher_allowed, require_publisher
from stacklens.errors import InvalidInput, NotFound

SNAPSHOT_MINUTES = 10
MAX_DAYS = 365
PATH = "/share/dashboards/{token}"


class ShareGone(Exception):
    """The link expired or was revoked."""


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def expiry_days(body: object) -> int:
    """``{"expires_in_days": N}`` (1–365; 30 when left out)."""
    if body is None:
        body = {}
    if not isinstance(body, dict) or set(body) - {"expires_in_days"}:
        raise InvalidInput('body: a share takes {"expires_in_days"}')
    days = body.get("expires_in_days", 30)
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_DAYS:
        raise InvalidInput(f"expires_in_days: a whole number of days from 1 to {MAX_DAYS}")
    return days


def create_share(
    session: Session,
    org_id: int,
    dashboard_id: int,
    days: int,
    user_id: int | None = None,
    now: datetime | None = None,
) -> tuple[DashboardShare, str]:
    """A new link to the organization's dashboard and its token (shown once). ``user_id``: the person
    publishing it (None: the organization's API key), whom the organization's setting must let publish."""
    board = session.get(Dashboard, dashboard_id)
    if board is None or board.org_id != org_id:
        raise NotFound(f"no dashboard {dashboard_id} in this organization")
    require_publisher(session, org_id, user_id)
    token = secrets.token_urlsafe(24)
    row = DashboardShare(
        org_id=org_id,
        dashboard_id=dashboard_id,
        token_hash=_hash(token),
        created_by_user_id=user_id,
        expires_at=(now or datetime.now(UTC)) + timedelta(days=days),
    )
    session.add(row)
    session.flush()
    return row, token


def active_shares(
    session: Session, org_id: int, dashboard_id: int, now: datetime | None = None
) -> list[DashboardShare]:
    now = now or datetime.now(UTC)
    rows = session.scalars(
        select(DashboardShare).where(
            DashboardShare.org_id == org_id,
            DashboardShare.dashboard_id == dashboard_id,
            DashboardShare.revoked_at.is_(None),
        )
    )
    return [r for r in rows if _utc(r.expires_at) > now]


def revoke_shares(session: Session, org_id: int, dashboard_id: int, now: datetime | None = None) -> int:
    """Revoke every link of the dashboard; how many were active."""
    board = session.get(Dashboard, dashboard_id)
    if board is None or board.org_id != org_id:
        raise NotFound(f"no dashboard {dashboard_id} in this organization")
    rows = active_shares(session, org_id, dashboard_id, now)
    for row in rows:
        row.revoked_at = now or datetime.now(UTC)
    session.flush()
    return len(rows)


def open_share(session: Session, token: str, now: datetime | None = None) -> DashboardShare:
    """The link of ``token``; :class:`NotFound` for none, :class:`ShareGone` once expired or revoked, or
    once its publisher may no longer publish it (they left the organization: see
    stacklens.control.share_publishers)."""
    row = session.scalar(select(DashboardShare).where(DashboardShare.token_hash == _hash(token)))
    if row is None:
        raise NotFound("no such link")
    if row.revoked_at is not None or _utc(row.expires_at) <= (now or datetime.now(UTC)):
        raise ShareGone()
    if not publisher_allowed(session, row.org_id, row.created_by_user_id):
        raise ShareGone()
    return row


def fresh(row: DashboardShare, now: datetime) -> bool:
    return (
        row.snapshot is not None
        and row.snapshot_at is not None
        and now - _utc(row.snapshot_at) < timedelta(minutes=SNAPSHOT_MINUTES)
    )


def claim_refresh(session: Session, row: DashboardShare, now: datetime) -> bool:
    """Whether this request refreshes the snapshot: a conditional update, so of many visitors arriving when
    it went stale one refreshes and the others serve the snapshot they have."""
    stale = now - timedelta(minutes=SNAPSHOT_MINUTES)
    previous = row.snapshot_at
    condition = (
        DashboardShare.snapshot_at.is_(None) if previous is None else DashboardShare.snapshot_at == previous
    )
    result = session.execute(
        update(DashboardShare)
        .where(DashboardShare.id == row.id, condition)
        .where(DashboardShare.snapshot_at.is_(None) | (DashboardShare.snapshot_at < stale))
        .values(snapshot_at=now)
        .execution_options(synchronize_session=False)
    )
    claimed = int(getattr(result, "rowcount", 0) or 0)
    session.commit()
    return claimed > 0


def store_snapshot(session: Session, row: DashboardShare, snapshot: dict[str, Any], now: datetime) -> None:
    row.snapshot = snapshot
    row.snapshot_at = now
    session.flush()
