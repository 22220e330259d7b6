"""Server-side dashboard sessions: one row per signed-in browser, found by the SHA-256 of the cookie's token.

A session ends at sign-out, when the user changes their password, when they are removed from an
organization (every session of theirs ends: the removal must take effect in every open tab at once), after
``idle`` without a request and ``absolute`` after sign-in whatever happens. Callers own the transaction.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from stacklens.control.models import User, UserSession, utcnow

TOKEN_BYTES = 32
# Refreshing last_seen_at costs a write; once a minute is precise enough for an idle limit counted in minutes.
TOUCH_EVERY = timedelta(seconds=60)


@dataclass(frozen=True)
class Lifetimes:
    idle: timedelta
    absolute: timedelta


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def start_session(
    session: Session, user_id: int, lifetimes: Lifetimes, *, ip: str = "", user_agent: str = ""
) -> str:
    """A new session for ``user_id``; the returned token goes into the cookie and is stored only hashed."""
    token = secrets.token_urlsafe(TOKEN_BYTES)
    now = utcnow()
    session.add(
        UserSession(
            user_id=user_id,
            token_hash=_hash(token),
            created_at=now,
            last_seen_at=now,
            expires_at=now + lifetimes.absolute,
            ip=ip[:64],
            user_agent=user_agent[:300],
        )
    )
    session.flush()
    return token


def resolve_session(
    session: Session, token: str, lifetimes: Lifetimes, now: datetime | None = None
) -> User | None:
    """The active user of a live session, else ``None`` (unknown, revoked, idle too long, past its end)."""
    if not isinstance(token, str) or not token or len(token) > 200:
        return None
    row = session.scalar(select(UserSession).where(UserSession.token_hash == _hash(token)))
    now = now or utcnow()
    if row is None or row.revoked_at is not None or now >= row.expires_at:
        return None
    if now - row.last_seen_at >= lifetimes.idle:
        row.revoked_at = now  # ended by idleness: record it so the row shows why it stopped
        return None
    user = session.get(User, row.user_id)
    if user is None or not user.is_active:
        return None
    if now - row.last_seen_at >= TOUCH_EVERY:
        row.last_seen_at = now
    return user


def end_session(session: Session, token: str) -> None:
    """Revoke the session of ``token`` (sign-out); unknown tokens are ignored."""
    if isinstance(token, str) and token:
        session.execute(
            update(UserSession)
            .where(UserSession.token_hash == _hash(token), UserSession.revoked_at.is_(None))
            .values(revoked_at=utcnow())
        )


def end_user_sessions(session: Session, user_id: int, keep_token: str | None = None) -> int:
    """Revoke every live session of ``user_id`` (except ``keep_token``'s); returns how many ended."""
    statement = update(UserSession).where(UserSession.user_id == user_id, UserSession.revoked_at.is_(None))
    if keep_token:
        statement = statement.where(UserSession.token_hash != _hash(keep_token))
    result = session.execute(statement.values(revoked_at=utcnow()))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]  # execute() is typed Result; an UPDATE's has rowcount
