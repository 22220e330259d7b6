"""Verifying keys against the control store.

There is no cache: every request looks the key up by its SHA-256 hash among current (unrevoked) rows, one
indexed query. So a regenerated key is refused by the very next request in every worker, with nothing to
invalidate. The hash comparison uses :func:`hmac.compare_digest` so timing says nothing about the value.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.keys import hash_key
from stacklens.control.models import ApiKey, AppKey, Organization
from stacklens_contract.keys import is_api_key, is_app_key, service_of


@dataclass(frozen=True)
class ApiKeyIdentity:
    """Who a valid API key speaks for, with the organization's current limits."""

    api_key_id: int
    org_id: int
    org_name: str
    created_at: datetime
    events_per_minute: int = 60_000
    requests_per_second: int = 50


@dataclass(frozen=True)
class AppKeyIdentity:
    """The project (and service, for a per-service key) an app key stands for."""

    app_key_id: int
    project_id: int
    org_id: int
    service: str | None


def has_whitespace(value: str) -> bool:
    return any(char.isspace() for char in value)


def verify_api_key(session: Session, raw: str) -> ApiKeyIdentity | None:
    """The identity of a current API key, else ``None`` (unknown, regenerated, whitespace, an app key)."""
    if not isinstance(raw, str) or has_whitespace(raw) or not is_api_key(raw):
        return None
    digest = hash_key(raw)
    row = session.execute(
        select(ApiKey, Organization)
        .join(Organization, Organization.id == ApiKey.org_id)
        .where(ApiKey.key_hash == digest, ApiKey.revoked_at.is_(None))
    ).first()
    if row is None:
        return None
    key, org = row
    if not hmac.compare_digest(key.key_hash, digest):
        return None
    return ApiKeyIdentity(
        api_key_id=key.id,
        org_id=org.id,
        org_name=org.name,
        created_at=key.created_at,
        events_per_minute=org.events_per_minute,
        requests_per_second=org.requests_per_second,
    )


def resolve_app_key(session: Session, org_id: int, raw: str) -> AppKeyIdentity | None:
    """The project of a current app key of ``org_id``; ``None`` for anything else (no existence leaks)."""
    if not isinstance(raw, str) or has_whitespace(raw) or not is_app_key(raw):
        return None
    digest = hash_key(raw)
    key = session.scalar(
        select(AppKey).where(AppKey.key_hash == digest, AppKey.revoked_at.is_(None), AppKey.org_id == org_id)
    )
    if key is None or not hmac.compare_digest(key.key_hash, digest):
        return None
    service = key.service if key.service is not None else service_of(raw)
    return AppKeyIdentity(app_key_id=key.id, project_id=key.project_id, org_id=key.org_id, service=service)


def find_app_key(session: Session, raw: str) -> AppKeyIdentity | None:
    """A current app key of any organization: the DSN road, where no API key names the organization.

    The caller must still check the key against the project id the request names.
    """
    if not isinstance(raw, str) or has_whitespace(raw) or not is_app_key(raw):
        return None
    digest = hash_key(raw)
    key = session.scalar(select(AppKey).where(AppKey.key_hash == digest, AppKey.revoked_at.is_(None)))
    if key is None or not hmac.compare_digest(key.key_hash, digest):
        return None
    service = key.service if key.service is not None else service_of(raw)
    return AppKeyIdentity(app_key_id=key.id, project_id=key.project_id, org_id=key.org_id, service=service)
