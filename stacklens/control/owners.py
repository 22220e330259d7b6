"""The owner guard: an organization always keeps at least one owner, even when owners demote or remove each
other at the same moment.

Reading "how many owners are there?" and then writing is a race: two owners each demoting the other both read
two owners, both write, and the organization is left with none (nobody could manage its keys or members
again). So every change that can take an owner away first locks the organization's row, and only then reads
the membership and counts the owners: two crossing changes are decided one after the other, and the second
sees the first. The lock lasts until the caller's transaction ends (``session_scope``).
"""

from __future__ import annotations

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from stacklens.control.models import Membership, Organization


def lock_organization(session: Session, org_id: int) -> None:
    """Hold the organization's lock until the session's transaction ends; concurrent holders wait."""
    if session.get_bind().dialect.name == "postgresql":
        # A row lock: the other transaction waits here, and under READ COMMITTED its next statements read
        # what the first one committed.
        session.execute(select(Organization.id).where(Organization.id == org_id).with_for_update())
        return
    # SQLite has no row locks, and pysqlite opens the transaction only at the first write: an UPDATE that
    # changes nothing takes the database's write lock (waiting out the busy timeout behind another writer),
    # and every read after it sees everything committed before.
    session.execute(
        update(Organization).where(Organization.id == org_id).values(name=Organization.name),
        execution_options={"synchronize_session": False},
    )


def locked_membership(session: Session, org_id: int, user_id: int) -> Membership | None:
    """The membership of ``user_id`` in ``org_id`` read under the organization's lock (``None`` when not a
    member). ``populate_existing``: a copy the session loaded before the lock may be out of date."""
    lock_organization(session, org_id)
    return session.scalar(
        select(Membership)
        .where(Membership.org_id == org_id, Membership.user_id == user_id)
        .execution_options(populate_existing=True)
    )


def owner_count(session: Session, org_id: int) -> int:
    """How many owners the organization has (exact only under :func:`lock_organization`)."""
    return (
        session.scalar(
            select(func.count())
            .select_from(Membership)
            .where(Membership.org_id == org_id, Membership.role == "owner")
        )
        or 0
    )


def takes_the_last_owner(session: Session, org_id: int, membership: Membership, new_role: str | None) -> bool:
    """Whether giving ``membership`` the role ``new_role`` (``None``: removing it) would leave no owner.
    Call it on a :func:`locked_membership`."""
    if membership.role != "owner" or new_role == "owner":
        return False
    return owner_count(session, org_id) <= 1
