"""Share links in the control store: create, list per issue, revoke, open.

A link's token is a random value signed with the server secret; the control store keeps only its SHA-256, so
a leaked database cannot be turned into working links. A link names one issue, and optionally one event or
a time range (relative when created — "the last 7 days" — or absolute, from / to as picked); the shared
page shows nothing beyond that.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from itsdangerous import BadSignature, Signer
from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.models import ShareLink, User
from stacklens.control.share_publishers import publisher_allowed, require_publisher
from stacklens.errors import Gone, InvalidInput
from stacklens.public_url import absolute_link
from stacklens.settings import Settings

EXPIRY_DAYS = (1, 7, 30)
MAX_RANGE = timedelta(days=366)
LIST_LIMIT = 50


class ShareRefused(InvalidInput):
    """The share form asked for something that cannot be shared; the message says what to change."""


class LinkGone(Gone):
    """A genuine link that expired or was revoked (the page says so, with 410 Gone)."""


@dataclass(frozen=True)
class LinkState:
    link: ShareLink
    state: str  # "active" | "expired" | "revoked"
    created_by: str  # the creator's e-mail ("" when the account is gone)


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def share_url(settings: Settings, token: str) -> str:
    """The link people open: the shared page on the service's public address."""
    return absolute_link(settings, f"/share/{token}")


def parse_moment(value: str) -> datetime:
    """A picked ``datetime-local`` value (``2026-11-20T14:30``), read as UTC like every time on the pages."""
    try:
        return _utc(datetime.fromisoformat(value.strip()))
    except ValueError:
        raise ShareRefused(f"{value!r} is not a date and time (YYYY-MM-DDTHH:MM, UTC)") from None


def absolute_range(start: str, end: str, now: datetime) -> tuple[datetime, datetime]:
    """The [from, to] a person picked, checked: both given, in order, at most a year apart."""
    if not start or not end:
        raise ShareRefused("pick both the start and the end of the time range")
    since, until = parse_moment(start), parse_moment(end)
    if since >= until:
        raise ShareRefused("the start of the time range must come before its end")
    if until - since > MAX_RANGE:
        raise ShareRefused("a shared time range can span at most 366 days")
    if since > now:
        raise ShareRefused("the time range starts in the future; there is nothing to share yet")
    return since, until


def create_link(
    db: Session,
    signer: Signer,
    *,
    org_id: int,
    project_id: int,
    issue_id: int,
    user_id: int,
    expires_days: int,
    event_id: str | None = None,
    window: tuple[datetime, datetime] | None = None,
) -> tuple[ShareLink, str]:
    """Store a new link and return it with its token (shown once; only the hash is kept). The organization's
    setting must let ``user_id`` publish links (stacklens.control.share_publishers)."""
    if expires_days not in EXPIRY_DAYS:
        raise ShareRefused(f"a link expires after {', '.join(map(str, EXPIRY_DAYS))} days")
    require_publisher(db, org_id, user_id)
    token = signer.sign(secrets.token_urlsafe(24)).decode()
    link = ShareLink(
        org_id=org_id,
        project_id=project_id,
        issue_id=str(issue_id),
        event_id=event_id.replace("-", "") if event_id else None,
        range_start=window[0] if window else None,
        range_end=window[1] if window else None,
        created_by_user_id=user_id,
        expires_at=datetime.now(UTC) + timedelta(days=expires_days),
        token_hash=_hash(token),
    )
    db.add(link)
    db.flush()
    return link, token


def state_of(link: ShareLink, now: datetime | None = None) -> str:
    if link.revoked_at is not None:
        return "revoked"
    if _utc(link.expires_at) <= (now or datetime.now(UTC)):
        return "expired"
    return "active"


def issue_links(
    db: Session, org_id: int, project_id: int, issue_id: int | None = None, limit: int = LIST_LIMIT
) -> list[LinkState]:
    """The project's links (one issue's with ``issue_id``), newest first, each with its state; revoked and
    expired ones stay listed."""
    query = (
        select(ShareLink, User.email)
        .outerjoin(User, User.id == ShareLink.created_by_user_id)
        .where(ShareLink.org_id == org_id, ShareLink.project_id == project_id)
        .order_by(ShareLink.created_at.desc(), ShareLink.id.desc())
        .limit(limit)
    )
    if issue_id is not None:
        query = query.where(ShareLink.issue_id == str(issue_id))
    now = datetime.now(UTC)
    return [LinkState(link, state_of(link, now), email or "") for link, email in db.execute(query).all()]


def revoke_link(db: Session, org_id: int, project_id: int, issue_id: int, link_id: int) -> ShareLink | None:
    """Revoke one of the issue's links (``None`` when the organization has no such link on that issue)."""
    link = db.execute(
        select(ShareLink).where(
            ShareLink.id == link_id,
            ShareLink.org_id == org_id,
            ShareLink.project_id == project_id,
            ShareLink.issue_id == str(issue_id),
        )
    ).scalar_one_or_none()
    if link is not None and link.revoked_at is None:
        link.revoked_at = datetime.now(UTC)
    return link


def open_link(db: Session, signer: Signer, token: str) -> ShareLink | None:
    """The link a token opens; ``None`` for a token this server never signed or does not know, and
    :class:`LinkGone` for one that expired or was revoked, or whose publisher may no longer publish it (they
    left the organization: see stacklens.control.share_publishers)."""
    try:
        signer.unsign(token)
    except BadSignature:
        return None
    link = db.execute(select(ShareLink).where(ShareLink.token_hash == _hash(token))).scalar_one_or_none()
    if link is None:
        return None
    if state_of(link) != "active" or not publisher_allowed(db, link.org_id, link.created_by_user_id):
        raise LinkGone()
    return link
