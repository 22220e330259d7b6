"""Leavers: a dashboard session opened by single sign-on ends when the provider no longer vouches for the
person.

Two limits, checked whenever the session is used (:func:`check_session`, from the dashboards' session check):

- the organization's ``session_max_age_minutes`` as it is set **now** (an owner who lowers it ends the longer
  sessions already open), counted from the sign-in;
- a refresh at the provider every :data:`REFRESH_EVERY` when the provider gave a refresh token (most do for
  the ``offline_access`` scope): a refusal (``invalid_grant`` — the person was disabled or removed, or the
  grant revoked) ends the session at once. A provider that cannot be reached refuses nothing: the refresh is
  tried again at the next use, and the maximum age still holds.

Each end is audited (``signin.ended`` with the reason ``max_age`` or ``refresh_refused``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.keys.values import decrypt_value, encrypt_value
from stacklens.control.models import SsoConfig, SsoSession, User, UserSession, utcnow
from stacklens.settings import Settings
from stacklens.sso import audit
from stacklens.sso.config import outbound_client, provider_settings
from stacklens.sso.oidc import ProviderError, TokenRefused, discover, refresh

# A refresh costs the provider one token request per signed-in person and interval: every 10 minutes keeps a
# leaver's access to 10 minutes past their removal without asking the provider on every page.
REFRESH_EVERY = timedelta(minutes=10)


def _token_hash(token: str) -> str:
    # The session cookie's token is stored as its SHA-256 (stacklens.control.signin_sessions).
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def attach(session: Session, settings: Settings, token: str, org_id: int, refresh_token: str | None) -> None:
    """Mark the dashboard session of ``token`` as opened by ``org_id``'s single sign-on."""
    row = session.scalar(select(UserSession).where(UserSession.token_hash == _token_hash(token)))
    if row is None:
        return
    now = utcnow()
    session.add(
        SsoSession(
            user_session_id=row.id,
            org_id=org_id,
            refresh_token_encrypted=encrypt_value(refresh_token, settings) if refresh_token else "",
            created_at=now,
            next_refresh_at=now + REFRESH_EVERY if refresh_token else None,
        )
    )
    session.flush()


@dataclass(frozen=True)
class SessionCheck:
    """``valid``: the session may go on (else it was revoked: sign the browser out). ``org_id``: the
    organization whose single sign-on opened it — the only one it opens (its provider vouches for that
    organization alone; a provider of one organization must not open a person's others). ``None``: a
    password session."""

    valid: bool
    org_id: int | None = None


def check_session(
    session: Session, settings: Settings, token: str, now: datetime | None = None
) -> SessionCheck:
    """Check the dashboard session of ``token`` against its single sign-on (see the module's docstring)."""
    found = session.execute(
        select(SsoSession, UserSession, SsoConfig)
        .join(UserSession, UserSession.id == SsoSession.user_session_id)
        .outerjoin(SsoConfig, SsoConfig.org_id == SsoSession.org_id)
        .where(UserSession.token_hash == _token_hash(token))
    ).first()
    if found is None:
        return SessionCheck(True)
    sso, user_session, config = found
    return SessionCheck(
        _still_valid(session, settings, sso, user_session, config, now or utcnow()), sso.org_id
    )


def _still_valid(
    session: Session,
    settings: Settings,
    sso: SsoSession,
    user_session: UserSession,
    config: SsoConfig | None,
    now: datetime,
) -> bool:
    if config is None:
        return True  # single sign-on was turned off: the session lives out its ordinary lifetime
    detail = {"user_id": user_session.user_id}
    if now - sso.created_at >= timedelta(minutes=config.session_max_age_minutes):
        return _end(session, sso, user_session, now, {**detail, "reason": "max_age"})
    if sso.next_refresh_at is None or now < sso.next_refresh_at or not sso.refresh_token_encrypted:
        return True
    chosen = provider_settings(session, settings, sso.org_id)
    if chosen is None:
        return True
    client = outbound_client(settings)
    try:
        provider = discover(client, chosen.issuer)
        renewed = refresh(
            client,
            provider,
            client_id=chosen.client_id,
            client_secret=chosen.client_secret,
            refresh_token=decrypt_value(sso.refresh_token_encrypted, settings),
        )
    except (ProviderError, TokenRefused):
        sso.next_refresh_at = now + timedelta(minutes=1)  # asked again soon; the maximum age still holds
        return True
    if renewed is None:
        return _end(session, sso, user_session, now, {**detail, "reason": "refresh_refused"})
    if renewed.refresh_token:
        sso.refresh_token_encrypted = encrypt_value(renewed.refresh_token, settings)
    sso.next_refresh_at = now + REFRESH_EVERY
    return True


def _end(
    session: Session, sso: SsoSession, user_session: UserSession, now: datetime, detail: dict[str, object]
) -> bool:
    user_session.revoked_at = now
    user = session.get(User, user_session.user_id)
    audit.record(
        session,
        sso.org_id,
        "signin.ended",
        target_id=user_session.user_id,
        detail={**detail, "email": user.email if user else ""},
    )
    return False
