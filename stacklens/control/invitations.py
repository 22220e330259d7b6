"""Invitations to an organization: a signed, expiring, single-use link, accepted by the invited person.

Nobody is added to an organization without consent: an owner creates an invitation for an e-mail address
and hands the link over; the person opens it and accepts while signed in, or creates their account from it.
Creating one answers the same whether or not an account exists for the address, so the form cannot be used
to find out who has an account. The token is random and signed with the server secret; only its SHA-256 is
stored, so a leaked database yields no working links. Callers own the transaction.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from itsdangerous import BadSignature, Signer
from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control import accounts
from stacklens.control.activity import record_activity
from stacklens.control.errors import AccountError
from stacklens.control.models import Invitation, Membership, Organization, User, utcnow
from stacklens.control.roles import RoleRefused, check_grant

SIGNER_SALT = "stacklens.invitation"


class InvitationGone(AccountError):
    """A genuine invitation that expired, was revoked or was used already."""


@dataclass(frozen=True)
class OpenInvitation:
    invitation: Invitation
    organization: Organization


def signer_for(secret: bytes) -> Signer:
    return Signer(secret, salt=SIGNER_SALT)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_invitation(
    session: Session,
    signer: Signer,
    org_id: int,
    email: str,
    *,
    role: str = "member",
    days: int = 7,
    actor_user_id: int | None = None,
    actor_role: str = "owner",
) -> tuple[Invitation, str]:
    """A new invitation and its token (shown once). Earlier open invitations for the address are revoked,
    so one link at most works per person. An admin (``actor_role``) invites up to admin."""
    if role not in accounts.ROLES:
        raise AccountError(f"role must be one of {', '.join(accounts.ROLES)}")
    check_grant(actor_role, role)
    address = accounts.normalise_email(email)
    accounts.get_organization(session, org_id)
    now = utcnow()
    for earlier in session.scalars(
        select(Invitation).where(
            Invitation.org_id == org_id,
            Invitation.email == address,
            Invitation.accepted_at.is_(None),
            Invitation.revoked_at.is_(None),
        )
    ):
        earlier.revoked_at = now
    token = signer.sign(secrets.token_urlsafe(24)).decode()
    invitation = Invitation(
        org_id=org_id,
        email=address,
        role=role,
        token_hash=_hash(token),
        created_by_user_id=actor_user_id,
        created_at=now,
        expires_at=now + timedelta(days=days),
    )
    session.add(invitation)
    session.flush()
    detail = {"email": address, "role": role, "expires_at": invitation.expires_at.isoformat()}
    record_activity(session, org_id, "invitation.created", "invitation", invitation.id, actor_user_id, detail)
    return invitation, token


def pending_invitations(session: Session, org_id: int) -> list[Invitation]:
    """Invitations of the organization that can still be accepted, newest first."""
    return list(
        session.scalars(
            select(Invitation)
            .where(
                Invitation.org_id == org_id,
                Invitation.accepted_at.is_(None),
                Invitation.revoked_at.is_(None),
                Invitation.expires_at > utcnow(),
            )
            .order_by(Invitation.created_at.desc(), Invitation.id.desc())
        )
    )


def revoke_invitation(
    session: Session, org_id: int, invitation_id: int, actor_user_id: int | None, *, actor_role: str = "owner"
) -> None:
    invitation = session.get(Invitation, invitation_id)
    if invitation is None or invitation.org_id != org_id or invitation.revoked_at or invitation.accepted_at:
        raise AccountError(f"no open invitation with id {invitation_id} in this organization")
    if invitation.role == "owner" and actor_role != "owner":
        raise RoleRefused("only an owner can withdraw an invitation to become an owner")
    invitation.revoked_at = utcnow()
    detail = {"email": invitation.email}
    record_activity(session, org_id, "invitation.revoked", "invitation", invitation_id, actor_user_id, detail)


def open_invitation(session: Session, signer: Signer, token: str) -> OpenInvitation | None:
    """The invitation a token opens; ``None`` for a token this server never signed or does not know;
    :class:`InvitationGone` for one expired, revoked or used."""
    try:
        signer.unsign(token)
    except BadSignature:
        return None
    invitation = session.scalar(select(Invitation).where(Invitation.token_hash == _hash(token)))
    if invitation is None:
        return None
    if invitation.accepted_at is not None:
        raise InvitationGone("this invitation has been used already")
    if invitation.revoked_at is not None:
        raise InvitationGone("this invitation was withdrawn; ask for a new one")
    if invitation.expires_at <= utcnow():
        raise InvitationGone("this invitation has expired; ask for a new one")
    organization = session.get(Organization, invitation.org_id)
    if organization is None:
        return None
    return OpenInvitation(invitation, organization)


def accept_invitation(session: Session, signer: Signer, token: str, user: User) -> Organization:
    """Make ``user`` a member with the invitation's role. The signed-in account must be the invited
    address: a forwarded link does not let someone else in."""
    found = open_invitation(session, signer, token)
    if found is None:
        raise AccountError("this invitation link is not valid")
    invitation = found.invitation
    if user.email != invitation.email:
        raise AccountError(
            f"this invitation is for {invitation.email}; sign in with that address (you are {user.email})"
        )
    membership = session.scalar(
        select(Membership).where(Membership.org_id == invitation.org_id, Membership.user_id == user.id)
    )
    if membership is None:
        session.add(Membership(org_id=invitation.org_id, user_id=user.id, role=invitation.role))
    invitation.accepted_at = utcnow()
    invitation.accepted_by_user_id = user.id
    role = invitation.role if membership is None else membership.role
    detail = {"email": user.email, "role": role, "invitation_id": invitation.id}
    record_activity(session, invitation.org_id, "member.added", "user", user.id, user.id, detail)
    return found.organization


def accept_with_new_account(
    session: Session, signer: Signer, token: str, password: str
) -> tuple[User, Organization]:
    """Create the invited address's account with ``password`` and accept the invitation with it."""
    found = open_invitation(session, signer, token)
    if found is None:
        raise AccountError("this invitation link is not valid")
    user = accounts.create_user(session, found.invitation.email, password)
    return user, accept_invitation(session, signer, token, user)
