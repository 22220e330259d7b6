"""Control-store tables of agent access (docs/agents.md): personal API tokens and the OAuth 2.1 tokens MCP
clients obtain (one table, ``kind`` tells them apart), the clients that registered themselves, and the
authorization codes between a member's approval and the client's token request.

Tokens and codes are stored only as SHA-256 digests (they are long random strings, so a digest is enough and a
database leak hands out nothing); a registered client's metadata, which may hold its secret, is stored
encrypted under the server secret.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from stacklens.control.models.base import Base, UtcDateTime, utcnow


class AgentToken(Base):
    """A bearer token for the agent door (`/mcp`): a member's personal token or an OAuth access token."""

    __tablename__ = "agent_tokens"
    __table_args__ = (Index("ix_agent_tokens_org_user", "org_id", "user_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(100))
    kind: Mapped[str] = mapped_column(String(16))  # "personal" | "oauth"
    client_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    scopes: Mapped[list[str]] = mapped_column(JSON, default=list)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    refresh_hash: Mapped[str | None] = mapped_column(String(64), unique=True, nullable=True)
    prefix: Mapped[str] = mapped_column(String(24))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    expires_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    last_used_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)


class OAuthClient(Base):
    """An MCP client that registered itself (`POST /oauth/register`, RFC 7591)."""

    __tablename__ = "oauth_clients"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    client_id: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    info_encrypted: Mapped[str] = mapped_column(Text)  # Fernet under the server secret
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class OAuthCode(Base):
    """An authorization code a member's approval issued; exchanged once, within minutes, with its PKCE
    verifier."""

    __tablename__ = "oauth_codes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    client_id: Mapped[str] = mapped_column(String(64))
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    scopes: Mapped[list[str]] = mapped_column(JSON, default=list)
    code_challenge: Mapped[str] = mapped_column(String(128))
    redirect_uri: Mapped[str] = mapped_column(String(2000))
    redirect_uri_explicit: Mapped[bool] = mapped_column(Boolean)
    resource: Mapped[str | None] = mapped_column(String(2000), nullable=True)
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime())
    used_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
