"""Control-store tables of company sign-in (OpenID Connect): an organization's provider, the people it signed
in (the provider's ``sub`` → a user), the sign-ins under way (state, nonce, PKCE verifier) and the break-glass
accounts that keep password sign-in while SSO is enforced.

The client secret is stored encrypted under the server secret
(:func:`stacklens.control.keys.values.encrypt_value`) and never answered back. A sign-in under way holds its
state only hashed: the state travels in the browser's address bar, and a database leak must not let anyone
finish someone else's sign-in.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy import false as sa_false
from sqlalchemy.orm import Mapped, mapped_column

from stacklens.control.models.base import Base, UtcDateTime, utcnow


class SsoConfig(Base):
    """One organization's OpenID Connect provider (at most one per organization)."""

    __tablename__ = "sso_configs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), unique=True)
    issuer: Mapped[str] = mapped_column(String(500))
    client_id: Mapped[str] = mapped_column(String(300))
    client_secret_encrypted: Mapped[str] = mapped_column(Text, default="")  # Fernet under the server secret
    scopes: Mapped[list[str]] = mapped_column(JSON, default=list)
    groups_claim: Mapped[str] = mapped_column(String(100), default="groups")
    role_map: Mapped[dict[str, str]] = mapped_column(JSON, default=dict)
    default_role: Mapped[str] = mapped_column(String(16), default="member")
    enforce: Mapped[bool] = mapped_column(Boolean, default=False, server_default=sa_false())
    session_max_age_minutes: Mapped[int] = mapped_column(Integer, default=720)
    allowed_domains: Mapped[list[str]] = mapped_column(JSON, default=list)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class SsoIdentity(Base):
    """A person as the organization's provider knows them: ``sub`` is stable where an e-mail may change."""

    __tablename__ = "sso_identities"
    __table_args__ = (UniqueConstraint("org_id", "issuer", "subject"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    issuer: Mapped[str] = mapped_column(String(500))
    subject: Mapped[str] = mapped_column(String(255))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    last_sign_in_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class SsoLogin(Base):
    """A sign-in under way, from ``/auth/sso/{org}/start`` to the callback; used once."""

    __tablename__ = "sso_logins"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    state_hash: Mapped[str] = mapped_column(String(64), unique=True)
    nonce: Mapped[str] = mapped_column(String(100))
    code_verifier: Mapped[str] = mapped_column(String(128))
    next_path: Mapped[str] = mapped_column(String(500), default="/")
    # A "Test sign-in" of settings not saved yet: the settings tried travel with it (secret encrypted).
    trial: Mapped[dict[str, object] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    used_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)


class BreakGlassAccount(Base):
    """A member who may still sign in with a password while the organization enforces SSO; named by an
    operator on the command line (`stacklens admin break-glass`), never from the web."""

    __tablename__ = "sso_break_glass"
    __table_args__ = (UniqueConstraint("org_id", "user_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class SsoSession(Base):
    """A dashboard session that single sign-on opened: it ends at the organization's maximum age (as set now,
    not when it began) and when a refresh at the provider is refused. The refresh token is encrypted."""

    __tablename__ = "sso_sessions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_session_id: Mapped[int] = mapped_column(
        ForeignKey("user_sessions.id", ondelete="CASCADE"), unique=True
    )
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    refresh_token_encrypted: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    next_refresh_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
