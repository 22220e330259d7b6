"""Who may publish public share links, and how long a published link lives on its publisher's membership.

A share link (an issue page, an event, a dashboard) is readable by anyone who has its URL, for up to a year.
So (issue #62):

- the organization chooses who may publish one (``Organization.share_links_by``): ``owners`` (the default;
  admins count as owners) or every member (``members``: owners, admins and members, never a viewer, who
  changes nothing); the organization's API key speaks for its owners;
- a link lives only while the person who published it could publish it now: when they leave the
  organization their links are revoked (:func:`revoke_member_links`, called by
  :func:`stacklens.control.accounts.remove_member`), and every open checks it again
  (:func:`publisher_allowed`), so a link outlives neither a removal that happened some other way nor a
  setting tightened after it was made (loosened again, the links of those it covers work again until they
  expire; revoked links never do).

Links made with the organization's API key (no person) follow the key's authority: an owner's.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from stacklens.control.activity import record_activity
from stacklens.control.models import DashboardShare, Membership, Organization, ShareLink
from stacklens.control.roles import manages, writes
from stacklens.errors import Forbidden, InvalidInput, NotFound

PUBLISHERS = ("owners", "members")
LABELS = {"owners": "Owners and admins", "members": "All members (not viewers)"}
DEFAULT = "owners"


class PublishRefused(Forbidden):
    """The person may not publish share links in this organization (403, the message says who may)."""


def share_links_by(session: Session, org_id: int) -> str:
    """The organization's setting: ``owners`` or ``members``."""
    org = session.get(Organization, org_id)
    if org is None:
        raise NotFound(f"no organization {org_id}")
    return org.share_links_by if org.share_links_by in PUBLISHERS else DEFAULT


def set_share_links_by(session: Session, org_id: int, value: object, actor_user_id: int | None = None) -> str:
    """Change who may publish share links (an owner's decision, checked by the caller); the value kept."""
    if not isinstance(value, str) or value not in PUBLISHERS:
        raise InvalidInput(f"share_links_by: one of {', '.join(PUBLISHERS)}")
    org = session.get(Organization, org_id)
    if org is None:
        raise NotFound(f"no organization {org_id}")
    previous = org.share_links_by
    if previous != value:
        org.share_links_by = value
        record_activity(
            session,
            org_id,
            "share_links.publishers_changed",
            "organization",
            org_id,
            actor_user_id,
            {"from": previous, "to": value},
        )
    return value


def _role(session: Session, org_id: int, user_id: int) -> str | None:
    return session.scalar(
        select(Membership.role).where(Membership.org_id == org_id, Membership.user_id == user_id)
    )


def publisher_allowed(session: Session, org_id: int, user_id: int | None) -> bool:
    """Whether a link published by ``user_id`` (None: the organization's API key) may be opened now: its
    publisher is still a member whose role the organization's setting lets publish."""
    if user_id is None:
        return True
    role = _role(session, org_id, user_id)
    if role is None:
        return False
    if manages(role):
        return True  # an admin publishes as an owner does
    return writes(role) and share_links_by(session, org_id) == "members"  # a viewer never publishes


def require_publisher(session: Session, org_id: int, user_id: int | None) -> None:
    """Refuse (:class:`PublishRefused`) a person the organization does not let publish share links."""
    if not publisher_allowed(session, org_id, user_id):
        raise PublishRefused(
            "only the organization's owners and admins may publish share links here (viewers never do); an "
            "owner or admin can open it to every member in the organization's settings (Share links)"
        )


def revoke_member_links(session: Session, org_id: int, user_id: int, now: datetime | None = None) -> int:
    """Revoke every link ``user_id`` published in the organization (they are leaving it); how many were not
    revoked yet (expired ones included)."""
    moment = now or datetime.now(UTC)
    revoked = 0
    for table in (ShareLink, DashboardShare):
        result = session.execute(
            update(table)
            .where(
                table.org_id == org_id,
                table.created_by_user_id == user_id,
                table.revoked_at.is_(None),
            )
            .values(revoked_at=moment)
            .execution_options(synchronize_session=False)
        )
        revoked += int(getattr(result, "rowcount", 0) or 0)
    return revoked
