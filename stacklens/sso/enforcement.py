"""Enforced single sign-on: password sign-in refused for an organization's people, except break-glass
accounts.

A person belongs to the organizations of their memberships, and a dashboard session opens all of them; so a
password sign-in is refused when **any** organization of theirs enforces SSO and has not named them a
break-glass account (else a second organization would be a way around the first one's rule). Break-glass
accounts are named by an operator on the command line (`stacklens admin break-glass`), never from the web, so
a stolen owner session cannot make itself one; each of their sign-ins is audited for the owners to see.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control import accounts
from stacklens.control.models import BreakGlassAccount, Membership, Organization, SsoConfig, User
from stacklens.errors import InvalidInput
from stacklens.sso import audit


@dataclass(frozen=True)
class PasswordDecision:
    """``refused_by``: the organizations whose enforcement refuses this password sign-in (empty: allowed)."""

    refused_by: list[Organization]

    @property
    def allowed(self) -> bool:
        return not self.refused_by


def password_sign_in(session: Session, user: User, ip: str = "") -> PasswordDecision:
    """Decide a password sign-in of ``user`` (whose password was right) and audit it in each of their
    organizations: ``signin.password``, ``signin.break_glass`` or ``signin.refused`` (``sso_enforced``)."""
    rows = session.execute(
        select(Organization, SsoConfig.enforce, BreakGlassAccount.id)
        .join(Membership, Membership.org_id == Organization.id)
        .outerjoin(SsoConfig, SsoConfig.org_id == Organization.id)
        .outerjoin(
            BreakGlassAccount,
            (BreakGlassAccount.org_id == Organization.id) & (BreakGlassAccount.user_id == user.id),
        )
        .where(Membership.user_id == user.id)
    ).all()
    refused = [org for org, enforce, glass in rows if enforce and glass is None]
    detail = {"email": user.email, "ip": ip}
    for org, enforce, glass in rows:
        if refused:
            if org in refused:
                audit.record(
                    session,
                    org.id,
                    "signin.refused",
                    target_id=user.id,
                    detail={**detail, "reason": "sso_enforced", "method": "password"},
                )
        elif enforce and glass is not None:
            audit.record(
                session, org.id, "signin.break_glass", target_id=user.id, actor_user_id=user.id, detail=detail
            )
        else:
            audit.record(
                session, org.id, "signin.password", target_id=user.id, actor_user_id=user.id, detail=detail
            )
    return PasswordDecision(refused)


def name_break_glass(session: Session, org: Organization, email: str, *, remove: bool = False) -> User:
    """Make the member ``email`` of ``org`` a break-glass account (or, with ``remove``, no longer one)."""
    address = accounts.normalise_email(email)
    user = session.scalar(select(User).where(User.email == address))
    member = (
        session.scalar(select(Membership).where(Membership.org_id == org.id, Membership.user_id == user.id))
        if user
        else None
    )
    if user is None or member is None:
        raise InvalidInput(f"{address} is not a member of {org.name}")
    row = session.scalar(
        select(BreakGlassAccount).where(
            BreakGlassAccount.org_id == org.id, BreakGlassAccount.user_id == user.id
        )
    )
    if remove:
        if row is not None:
            session.delete(row)
            audit.record(
                session, org.id, "sso.break_glass_removed", target_id=user.id, detail={"email": address}
            )
    elif row is None:
        session.add(BreakGlassAccount(org_id=org.id, user_id=user.id))
        audit.record(session, org.id, "sso.break_glass_named", target_id=user.id, detail={"email": address})
    session.flush()
    return user


def break_glass_accounts(session: Session, org_id: int) -> list[str]:
    """The e-mails of the organization's break-glass accounts."""
    return list(
        session.scalars(
            select(User.email)
            .join(BreakGlassAccount, BreakGlassAccount.user_id == User.id)
            .where(BreakGlassAccount.org_id == org_id)
            .order_by(User.email)
        )
    )
