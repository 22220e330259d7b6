"""Personal API tokens for agents (`POST /api/tokens`, `/account/tokens`) and who a bearer token speaks for.

A token is ``stacklens_pat_`` and 43 random URL-safe characters; only its SHA-256 digest is stored, with its
first characters (``prefix``) to tell tokens apart on the page. Scopes are ``read`` or ``read`` + ``write``;
a ``write`` token of a viewer still writes nothing (the role decides, :mod:`stacklens.control.roles`). An
expired or revoked token is refused with the reason, so the door can answer 401 pointing at the OAuth
metadata (docs/agents.md).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.models import AgentToken, Membership, User, utcnow
from stacklens.errors import InvalidInput, NotFound

PERSONAL_PREFIX = "stacklens_pat_"
ACCESS_PREFIX = "stacklens_oat_"
REFRESH_PREFIX = "stacklens_ort_"
SCOPES = ("read", "write")
DEFAULT_DAYS = 30
MAX_DAYS = 365
NAME_MAX = 100


@dataclass(frozen=True)
class AgentIdentity:
    """Who a call speaks for: the organization, the member (``None`` for the organization's API key), their
    role, the token's scopes and how it was obtained (``personal``, ``oauth`` or ``api_key``)."""

    org_id: int
    user_id: int | None
    email: str
    role: str
    scopes: frozenset[str]
    kind: str
    token_id: int | None = None
    client: str = ""

    @property
    def may_write(self) -> bool:
        """Scope ``write`` and a role that changes things (every role but viewer)."""
        return "write" in self.scopes and self.role != "viewer"


@dataclass(frozen=True)
class TokenRow:
    id: int
    name: str
    kind: str
    scopes: list[str]
    prefix: str
    created_at: datetime
    expires_at: datetime | None
    last_used_at: datetime | None
    client_id: str | None


class TokenRefused(Exception):
    """The bearer token is unknown, expired or revoked (``reason``), or its member left the organization."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def digest(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def new_secret(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(32)


def check_scopes(value: object) -> list[str]:
    """``["read"]`` or ``["read", "write"]`` (any order, ``write`` alone implies ``read``)."""
    if not isinstance(value, list) or not value or not all(isinstance(s, str) for s in value):
        raise InvalidInput('scopes: send ["read"] or ["read", "write"]')
    unknown = sorted(set(value) - set(SCOPES))
    if unknown:
        raise InvalidInput(f"scopes: unknown scope {unknown[0]!r}; the scopes are read and write")
    return ["read", "write"] if "write" in value else ["read"]


def check_name(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("name: give the token a name (what uses it, e.g. 'Claude Code on my laptop')")
    name = value.strip()
    if len(name) > NAME_MAX:
        raise InvalidInput(f"name: at most {NAME_MAX} characters")
    return name


def check_days(value: object) -> int | None:
    """Days until expiry: 1 to 365, or ``None`` (JSON null: never expires)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_DAYS:
        raise InvalidInput(f"expires_in_days: a whole number of days from 1 to {MAX_DAYS}, or null")
    return value


def create_token(
    session: Session,
    org_id: int,
    user_id: int,
    name: object,
    scopes: object,
    expires_in_days: object = DEFAULT_DAYS,
    now: datetime | None = None,
) -> tuple[AgentToken, str]:
    """A new personal token of ``user_id`` in ``org_id``; the raw token is answered once, here."""
    checked_name = check_name(name)
    checked_scopes = check_scopes(scopes)
    days = check_days(expires_in_days)
    now = now or utcnow()
    raw = new_secret(PERSONAL_PREFIX)
    row = AgentToken(
        org_id=org_id,
        user_id=user_id,
        name=checked_name,
        kind="personal",
        scopes=checked_scopes,
        token_hash=digest(raw),
        prefix=raw[: len(PERSONAL_PREFIX) + 4],
        created_at=now,
        expires_at=now + timedelta(days=days) if days else None,
    )
    session.add(row)
    session.flush()
    return row, raw


def member_of(session: Session, org_id: int, email: object) -> User:
    """The member of ``org_id`` with ``email`` (the API key's ``"member"``); 404 for anyone else."""
    if not isinstance(email, str) or "@" not in email:
        raise InvalidInput("member: the e-mail of a member of this organization")
    user = session.scalars(
        select(User)
        .join(Membership, Membership.user_id == User.id)
        .where(Membership.org_id == org_id, User.email == email.strip().lower())
    ).first()
    if user is None:
        raise NotFound(f"member: no member {email.strip()!r} in this organization")
    return user


def _row(token: AgentToken) -> TokenRow:
    return TokenRow(
        id=token.id,
        name=token.name,
        kind=token.kind,
        scopes=list(token.scopes),
        prefix=token.prefix,
        created_at=token.created_at,
        expires_at=token.expires_at,
        last_used_at=token.last_used_at,
        client_id=token.client_id,
    )


def list_tokens(session: Session, org_id: int, user_id: int, now: datetime | None = None) -> list[TokenRow]:
    """The member's live tokens in the organization (personal and OAuth), newest first."""
    now = now or utcnow()
    rows = session.scalars(
        select(AgentToken)
        .where(AgentToken.org_id == org_id, AgentToken.user_id == user_id, AgentToken.revoked_at.is_(None))
        .order_by(AgentToken.id.desc())
    )
    return [_row(t) for t in rows if t.expires_at is None or t.expires_at > now]


def revoke_token(session: Session, org_id: int, user_id: int | None, token_id: int) -> None:
    """Revoke one token of the member (``user_id``; ``None``: any member's, for the organization's API key);
    a token of someone else or of another organization is 404."""
    query = select(AgentToken).where(AgentToken.id == token_id, AgentToken.org_id == org_id)
    if user_id is not None:
        query = query.where(AgentToken.user_id == user_id)
    token = session.scalars(query).first()
    if token is None or token.revoked_at is not None:
        raise NotFound(f"no token {token_id} here")
    token.revoked_at = utcnow()


def resolve(session: Session, raw: str, now: datetime | None = None) -> AgentIdentity:
    """Who ``raw`` (a personal or OAuth access token) speaks for; :class:`TokenRefused` with the reason."""
    now = now or utcnow()
    token = session.scalars(select(AgentToken).where(AgentToken.token_hash == digest(raw))).first()
    if token is None:
        raise TokenRefused("unknown token")
    if token.revoked_at is not None:
        raise TokenRefused("the token has been revoked")
    if token.expires_at is not None and token.expires_at <= now:
        raise TokenRefused("the token has expired")
    found = session.execute(
        select(User.email, Membership.role)
        .join(Membership, Membership.user_id == User.id)
        .where(User.id == token.user_id, Membership.org_id == token.org_id)
    ).first()
    if found is None:
        raise TokenRefused("the token's member has left the organization")
    if token.last_used_at is None or now - token.last_used_at > timedelta(minutes=1):
        token.last_used_at = now  # once a minute at most: a busy agent does not write on every call
    return AgentIdentity(
        org_id=token.org_id,
        user_id=token.user_id,
        email=str(found[0]),
        role=str(found[1]),
        scopes=frozenset(token.scopes),
        kind=token.kind,
        token_id=token.id,
        client=token.name,
    )


def ensure_token(
    session: Session, org_id: int, user_id: int, raw: str, name: str, scopes: list[str]
) -> AgentToken:
    """The never-expiring token whose secret is ``raw`` (one derived from the server secret, which the
    installation can print again: the demo's agent token), created or made live again."""
    token = session.scalars(select(AgentToken).where(AgentToken.token_hash == digest(raw))).first()
    if token is None:
        token = AgentToken(
            org_id=org_id,
            user_id=user_id,
            name=check_name(name),
            kind="personal",
            scopes=check_scopes(scopes),
            token_hash=digest(raw),
            prefix=raw[: len(PERSONAL_PREFIX) + 4],
            created_at=utcnow(),
        )
        session.add(token)
    token.revoked_at = None
    token.expires_at = None
    session.flush()
    return token
