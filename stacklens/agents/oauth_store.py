"""The OAuth 2.1 state behind `/oauth/*` (docs/agents.md): clients that registered themselves (RFC 7591),
authorization codes a member's approval issued, and the access and refresh tokens those become.

The protocol's checks (PKCE's verifier against the challenge, redirect URIs, grant types) are the official
``mcp`` SDK's, in the API adapter; this module keeps what they need. A client's metadata is stored encrypted
(it may hold its secret); codes and tokens only as digests. An access token lives an hour, its refresh token
thirty days; a refresh rotates both.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.agents.tokens import ACCESS_PREFIX, REFRESH_PREFIX, digest, new_secret
from stacklens.control.keys.values import decrypt_value, encrypt_value
from stacklens.control.models import AgentToken, OAuthClient, OAuthCode, utcnow
from stacklens.settings import Settings

CODE_LIFETIME = timedelta(minutes=5)
ACCESS_LIFETIME = timedelta(hours=1)
REFRESH_LIFETIME = timedelta(days=30)
CLIENT_NAME_MAX = 200


def save_client(session: Session, settings: Settings, client_id: str, info: dict[str, Any]) -> None:
    name = str(info.get("client_name") or client_id)[:CLIENT_NAME_MAX]
    session.add(
        OAuthClient(client_id=client_id, name=name, info_encrypted=encrypt_value(json.dumps(info), settings))
    )


def load_client(session: Session, settings: Settings, client_id: str) -> dict[str, Any] | None:
    row = session.scalars(select(OAuthClient).where(OAuthClient.client_id == client_id)).first()
    if row is None:
        return None
    loaded: dict[str, Any] = json.loads(decrypt_value(row.info_encrypted, settings))
    return loaded


def client_name(session: Session, client_id: str) -> str:
    row = session.scalars(select(OAuthClient.name).where(OAuthClient.client_id == client_id)).first()
    return str(row or client_id)


@dataclass(frozen=True)
class Grant:
    """What a member approved: for whom, which scopes, and the PKCE challenge and redirect to check."""

    client_id: str
    org_id: int
    user_id: int
    scopes: list[str]
    code_challenge: str
    redirect_uri: str
    redirect_uri_explicit: bool
    resource: str | None
    expires_at: datetime


def issue_code(session: Session, grant: Grant) -> str:
    raw = new_secret("")
    session.add(
        OAuthCode(
            code_hash=digest(raw),
            client_id=grant.client_id,
            org_id=grant.org_id,
            user_id=grant.user_id,
            scopes=grant.scopes,
            code_challenge=grant.code_challenge,
            redirect_uri=grant.redirect_uri,
            redirect_uri_explicit=grant.redirect_uri_explicit,
            resource=grant.resource,
            expires_at=grant.expires_at,
        )
    )
    session.flush()
    return raw


def find_code(session: Session, client_id: str, raw: str, now: datetime | None = None) -> Grant | None:
    """The unused, unexpired code of ``client_id``; ``None`` otherwise."""
    now = now or utcnow()
    row = session.scalars(select(OAuthCode).where(OAuthCode.code_hash == digest(raw))).first()
    if row is None or row.client_id != client_id or row.used_at is not None or row.expires_at <= now:
        return None
    return Grant(
        client_id=row.client_id,
        org_id=row.org_id,
        user_id=row.user_id,
        scopes=list(row.scopes),
        code_challenge=row.code_challenge,
        redirect_uri=row.redirect_uri,
        redirect_uri_explicit=row.redirect_uri_explicit,
        resource=row.resource,
        expires_at=row.expires_at,
    )


@dataclass(frozen=True)
class IssuedTokens:
    access_token: str
    refresh_token: str
    expires_in: int
    scopes: list[str]


def _issue(
    session: Session, client_id: str, org_id: int, user_id: int, scopes: list[str], now: datetime
) -> IssuedTokens:
    access = new_secret(ACCESS_PREFIX)
    refresh = new_secret(REFRESH_PREFIX)
    session.add(
        AgentToken(
            org_id=org_id,
            user_id=user_id,
            name=client_name(session, client_id)[:100],
            kind="oauth",
            client_id=client_id,
            scopes=scopes,
            token_hash=digest(access),
            refresh_hash=digest(refresh),
            prefix=access[: len(ACCESS_PREFIX) + 4],
            created_at=now,
            expires_at=now + ACCESS_LIFETIME,
        )
    )
    session.flush()
    return IssuedTokens(access, refresh, int(ACCESS_LIFETIME.total_seconds()), scopes)


def exchange_code(session: Session, client_id: str, raw: str, now: datetime | None = None) -> IssuedTokens:
    """Spend the code (once) for an access and a refresh token; :class:`LookupError` when it is not live."""
    now = now or utcnow()
    row = session.scalars(select(OAuthCode).where(OAuthCode.code_hash == digest(raw))).first()
    if row is None or row.client_id != client_id or row.used_at is not None or row.expires_at <= now:
        raise LookupError("the authorization code is unknown, used or expired")
    row.used_at = now
    return _issue(session, client_id, row.org_id, row.user_id, list(row.scopes), now)


def refresh_scopes(
    session: Session, client_id: str, raw: str, now: datetime | None = None
) -> list[str] | None:
    """The scopes of a live refresh token of ``client_id``; ``None`` when it is not one."""
    now = now or utcnow()
    token = _refresh_row(session, client_id, raw, now)
    return list(token.scopes) if token else None


def _refresh_row(session: Session, client_id: str, raw: str, now: datetime) -> AgentToken | None:
    token = session.scalars(select(AgentToken).where(AgentToken.refresh_hash == digest(raw))).first()
    if token is None or token.client_id != client_id or token.revoked_at is not None:
        return None
    if token.created_at + REFRESH_LIFETIME <= now:
        return None
    return token


def exchange_refresh(
    session: Session, client_id: str, raw: str, scopes: list[str], now: datetime | None = None
) -> IssuedTokens:
    """Rotate: the old pair is revoked, a new pair (with ``scopes``, at most the old ones) issued."""
    now = now or utcnow()
    token = _refresh_row(session, client_id, raw, now)
    if token is None:
        raise LookupError("the refresh token is unknown, revoked or expired")
    token.revoked_at = now
    kept = [s for s in token.scopes if s in scopes] or list(token.scopes)
    return _issue(session, client_id, token.org_id, token.user_id, kept, now)


def revoke_by_secret(session: Session, raw: str) -> None:
    """Revoke the OAuth token whose access or refresh token is ``raw`` (RFC 7009: unknown ones ignored)."""
    hashed = digest(raw)
    token = session.scalars(
        select(AgentToken).where((AgentToken.token_hash == hashed) | (AgentToken.refresh_hash == hashed))
    ).first()
    if token is not None and token.revoked_at is None:
        token.revoked_at = utcnow()
