"""Organizations, people, memberships and quotas, as plain functions over a session.

- Organizations: created with their owner and first API key, found by id or by name.
- People: accounts with argon2id password hashes (rehashed at sign-in when the parameters change), sign-in
  that does the same work for an unknown e-mail, password changes that end the person's other sessions.
- Memberships: an organization's people and a person's organizations; add, change a role, remove (ending the
  removed person's sessions) and make an owner. The last owner always stays (:mod:`stacklens.control.owners`).
- Quotas: an organization's events per minute and requests per second.

Every change of an organization, a membership, a password or a quota writes an activity entry in the same
transaction, so the log can never disagree with them. Callers own the transaction (``session_scope``):
nothing here commits. Projects are :mod:`stacklens.control.projects`', keys
:mod:`stacklens.control.keys.lifecycle`'.
"""

from __future__ import annotations

import re

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from stacklens.control.activity import record_activity
from stacklens.control.errors import AccountError, AccountNotFound
from stacklens.control.keys.lifecycle import new_api_key
from stacklens.control.models import Membership, Organization, User
from stacklens.control.owners import locked_membership, takes_the_last_owner
from stacklens.control.passwords import check_password
from stacklens.control.roles import ROLES as ROLES  # callers read the roles here as before
from stacklens.control.roles import check_change
from stacklens.control.share_publishers import revoke_member_links
from stacklens.control.signin_sessions import end_user_sessions
from stacklens.control.slugs import unique_slug

_EMAIL_RE = re.compile(r"[^@\s]{1,64}@[^@\s]{1,255}\.[^@\s]{1,63}|[^@\s]{1,64}@localhost")
_hasher = PasswordHasher()  # argon2id, the library's current recommended parameters
# Verified against when the e-mail is unknown, so a login takes as long whether or not the user exists. Made
# at a process's first login attempt, known user or not, instead of at import: every CLI command and server
# start imports this module, and one hash with the product's parameters costs 0.1-0.2 s of CPU (an eighth
# of `stacklens --help`).
_DUMMY_HASH: str | None = None


def _dummy_hash() -> str:
    global _DUMMY_HASH  # made once per process, on first use
    if _DUMMY_HASH is None:
        _DUMMY_HASH = _hasher.hash("stacklens-no-such-user")
    return _DUMMY_HASH


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def normalise_email(email: str) -> str:
    email = (email or "").strip().lower()
    if not _EMAIL_RE.fullmatch(email):
        raise AccountError(f"invalid e-mail address {email!r}")
    return email


def _check_name(name: str, what: str) -> str:
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise AccountError(f"the {what} name must have 1 to 200 characters")
    return name


def _ensure_user(session: Session, email: str, password: str) -> User:
    email = normalise_email(email)
    user = session.scalar(select(User).where(User.email == email))
    if user is None:
        check_password(password, email)
        user = User(email=email, password_hash=hash_password(password))
        session.add(user)
        session.flush()
    return user


def create_organization(
    session: Session, name: str, owner_email: str, password: str
) -> tuple[Organization, str]:
    """A new organization with its owner (created when missing) and its first API key (value returned)."""
    name = _check_name(name, "organization")
    if session.scalar(select(Organization.id).where(func.lower(Organization.name) == name.lower())):
        raise AccountError(f"an organization named {name!r} already exists")
    org = Organization(name=name, slug=unique_slug(session, Organization, name))
    session.add(org)
    session.flush()
    owner = _ensure_user(session, owner_email, password)
    session.add(Membership(org_id=org.id, user_id=owner.id, role="owner"))
    record_activity(session, org.id, "organization.created", "organization", org.id, owner.id, {"name": name})
    key, value = new_api_key(session, org.id, owner.id)
    record_activity(session, org.id, "api_key.created", "api_key", key.id, owner.id, {"last4": key.last4})
    return org, value


def add_member(
    session: Session,
    org_id: int,
    email: str,
    password: str,
    role: str = "member",
    actor_user_id: int | None = None,
) -> User:
    """Add a person to an organization (creating the user when missing; an existing user keeps their
    password). For someone already a member this changes the role, never demoting the last owner."""
    if role not in ROLES:
        raise AccountError(f"role must be one of {', '.join(ROLES)}")
    get_organization(session, org_id)
    user = _ensure_user(session, email, password)
    membership = locked_membership(session, org_id, user.id)
    if membership is None:
        session.add(Membership(org_id=org_id, user_id=user.id, role=role))
    else:
        if takes_the_last_owner(session, org_id, membership, role):
            raise AccountError("an organization keeps at least one owner")
        membership.role = role
    record_activity(
        session, org_id, "member.added", "user", user.id, actor_user_id, {"email": user.email, "role": role}
    )
    return user


def list_members(session: Session, org_id: int) -> list[tuple[User, str]]:
    """The organization's people with their role, by e-mail."""
    rows = session.execute(
        select(User, Membership.role)
        .join(Membership, Membership.user_id == User.id)
        .where(Membership.org_id == org_id)
        .order_by(User.email)
    )
    return [(user, role) for user, role in rows]


def change_role(
    session: Session,
    org_id: int,
    user_id: int,
    role: str,
    actor_user_id: int | None = None,
    *,
    actor_role: str = "owner",
) -> tuple[User, str]:
    """Give a member another role; returns the person and their previous role. The last owner keeps the
    role (an organization without an owner could never manage its keys or members again). Setting the role
    a member already has changes nothing and logs nothing. Decided under the organization's lock, so two
    owners demoting each other at once leave one owner (``stacklens.control.owners``). An admin
    (``actor_role``) neither touches an owner nor makes one (:class:`~stacklens.control.roles.RoleRefused`);
    the operator's and the API key's changes are an owner's."""
    if role not in ROLES:
        raise AccountError(f"role must be one of {', '.join(ROLES)}")
    membership = locked_membership(session, org_id, user_id)
    if membership is None:
        raise AccountNotFound(f"no member with id {user_id} in this organization")
    user = session.get(User, user_id)
    email = user.email if user else ""
    previous = membership.role
    check_change(actor_role, previous, role)
    if previous == role:
        return user, previous  # type: ignore[return-value]  # a membership row implies its user
    if takes_the_last_owner(session, org_id, membership, role):
        raise AccountError(
            f"{email} is the only owner, so they stay an owner: make someone else an owner first"
        )
    membership.role = role
    record_activity(
        session,
        org_id,
        "member.role_changed",
        "user",
        user_id,
        actor_user_id,
        {"email": email, "from": previous, "to": role},
    )
    return user, previous  # type: ignore[return-value]  # a membership row implies its user (foreign key)


def remove_member(
    session: Session,
    org_id: int,
    user_id: int,
    actor_user_id: int | None = None,
    *,
    actor_role: str = "owner",
) -> User:
    """Take a person out of an organization (their account stays); the last owner cannot be removed, even by
    two owners removing each other at once (decided under the organization's lock), and an admin
    (``actor_role``) removes no owner."""
    membership = locked_membership(session, org_id, user_id)
    if membership is None:
        raise AccountNotFound(f"no member with id {user_id} in this organization")
    check_change(actor_role, membership.role, None)
    if takes_the_last_owner(session, org_id, membership, None):
        raise AccountError("the last owner cannot be removed; make someone else an owner first")
    user = session.get(User, user_id)
    session.delete(membership)
    # Every open tab of the removed person ends now, not when the session would have expired; so do the
    # public links they published (a link must not outlive its publisher's membership, issue #62).
    end_user_sessions(session, user_id)
    revoke_member_links(session, org_id, user_id)
    record_activity(
        session,
        org_id,
        "member.removed",
        "user",
        user_id,
        actor_user_id,
        {"email": user.email if user else ""},
    )
    return user  # type: ignore[return-value]  # a membership row implies its user (foreign key)


def make_owner(session: Session, org_id: int, email: str) -> tuple[User, str]:
    """Make an existing member an owner (the operator's way back when an organization has no owner left);
    returns the person and their previous role. Someone who is not a member is refused: joining takes an
    invitation the person accepts, never an operator's say-so."""
    return set_role(session, org_id, email, "owner")


def set_role(session: Session, org_id: int, email: str, role: str) -> tuple[User, str]:
    """Give an existing member (by e-mail) any role, with an owner's authority (the operator's command line);
    returns the person and their previous role. The last owner stays one; a non-member is refused."""
    if role not in ROLES:
        raise AccountError(f"role must be one of {', '.join(ROLES)}")
    address = normalise_email(email)
    user = session.scalar(select(User).where(User.email == address))
    member = user is not None and locked_membership(session, org_id, user.id) is not None
    if user is None or not member:
        raise AccountNotFound(_not_a_member(session, org_id, address))
    return change_role(session, org_id, user.id, role)


def _not_a_member(session: Session, org_id: int, address: str) -> str:
    """Why ``address`` cannot be made an owner, and the way forward from here."""
    org = get_organization(session, org_id)
    members = list_members(session, org_id)
    owners = [user.email for user, role in members if role == "owner"]
    if owners:
        return (
            f"{address} is not a member of {org.name}: an owner ({', '.join(owners)}) or admin invites them on "
            "Settings → Members; once they have accepted, run this again"
        )
    if members:
        return (
            f"{address} is not a member of {org.name}, which has no owner to invite them: make one of its "
            f"members an owner first ({', '.join(user.email for user, _ in members)})"
        )
    return f"{address} is not a member of {org.name}, which has no members left: nobody can be made its owner"


def authenticate_user(session: Session, email: str, password: str) -> User | None:
    """The active user with these credentials, else ``None`` (same work done for unknown e-mails)."""
    dummy = _dummy_hash()  # before the lookup: a first attempt costs the same for any e-mail
    user = session.scalar(select(User).where(User.email == (email or "").strip().lower()))
    if user is None or not user.is_active:
        verify_password(dummy, password or "")
        return None
    if not verify_password(user.password_hash, password or ""):
        return None
    if _hasher.check_needs_rehash(user.password_hash):
        user.password_hash = hash_password(password)
    return user


def create_user(session: Session, email: str, password: str) -> User:
    """A new account (an invitation's "create your account"); refused when the e-mail has one already."""
    email = normalise_email(email)
    if session.scalar(select(User.id).where(User.email == email)) is not None:
        raise AccountError("an account with this e-mail exists already; sign in to accept")
    return _ensure_user(session, email, password)


def change_password(
    session: Session, user_id: int, current: str, new: str, keep_session_token: str | None = None
) -> User:
    """Set a new password after checking the current one; every other session of the user ends."""
    user = session.get(User, user_id)
    if user is None or not verify_password(user.password_hash, current or ""):
        raise AccountError("the current password is incorrect")
    check_password(new, user.email)
    user.password_hash = hash_password(new)
    end_user_sessions(session, user_id, keep_token=keep_session_token)
    for org, _role in user_memberships(session, user_id):
        record_activity(session, org.id, "user.password_changed", "user", user_id, user_id, {})
    return user


def _memberships(user_id: int) -> Select[Organization, str]:  # rows of (Organization, role)
    """The one query of a user's organizations with the role in each (every membership read starts here)."""
    return (
        select(Organization, Membership.role)
        .join(Membership, Membership.org_id == Organization.id)
        .where(Membership.user_id == user_id)
    )


def user_memberships(session: Session, user_id: int) -> list[tuple[Organization, str]]:
    """The organizations a user belongs to, with the role, by name."""
    rows = session.execute(_memberships(user_id).order_by(Organization.name))
    return [(org, role) for org, role in rows]


def membership(session: Session, user_id: int, org_slug: str) -> tuple[Organization, str] | None:
    """The organization ``org_slug`` with the user's role in it; ``None`` when the user is not a member
    (or it does not exist: the two are not told apart)."""
    row = session.execute(_memberships(user_id).where(Organization.slug == org_slug)).first()
    return (row[0], row[1]) if row else None


def get_organization(session: Session, org_id: int) -> Organization:
    org = session.get(Organization, org_id)
    if org is None:
        raise AccountNotFound(f"no organization with id {org_id}")
    return org


def organization_by_name(session: Session, name: str) -> Organization:
    """The organization named ``name`` (case-insensitive), or by its slug."""
    name = (name or "").strip()
    org = session.scalar(select(Organization).where(func.lower(Organization.name) == name.lower()))
    org = org or session.scalar(select(Organization).where(Organization.slug == name.lower()))
    if org is None:
        raise AccountNotFound(f"no organization named {name!r}")
    return org


def set_quota(
    session: Session,
    org_id: int,
    *,
    events_per_minute: int | None = None,
    requests_per_second: int | None = None,
    actor_user_id: int | None = None,
) -> Organization:
    """Change an organization's rate limits; the limiter reads them on the next request."""
    org = get_organization(session, org_id)
    changed: dict[str, int] = {}
    for field, value in (
        ("events_per_minute", events_per_minute),
        ("requests_per_second", requests_per_second),
    ):
        if value is None:
            continue
        if not isinstance(value, int) or value < 1 or value > 100_000_000:
            raise AccountError(f"{field.replace('_', '-')} must be an integer from 1 to 100000000")
        changed[field] = value
        setattr(org, field, value)
    if changed:
        record_activity(session, org_id, "quota.changed", "organization", org_id, actor_user_id, changed)
    return org
