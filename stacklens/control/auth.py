"""Verifying keys against the control store.

There is no cache here: each call looks the key up by its SHA-256 hash among current (unrevoked) rows, one
indexed query. API keys are verified so for every request, so a regenerated key is refused by the very next
request in every worker, with nothing to invalidate; the one-event ingest roads remember an app key's answer
for a second at most (stacklens.control.keys.dsn_callers, stacklens.control.keys.app_attributions). The hash
comparison uses :func:`hmac.compare_digest` so timing says nothing about the value.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from stacklens.control.issue_merges import overrides_of
from stacklens.control.keys.values import hash_key
from stacklens.control.models import ApiKey, AppKey, Organization, Project
from stacklens.control.project_quotas import ProjectQuota, quota_of
from stacklens.control.projects_settings import rules_of
from stacklens.ingest.in_app import InAppRules
from stacklens.scrubbing.apply import NO_RULES as NO_SCRUBBING
from stacklens.scrubbing.apply import ScrubRules
from stacklens.scrubbing.store import compiled
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


# Columns rather than entities: every API request runs this, and building two ORM objects cost more than the
# indexed look-up itself. Built once: the statement and its cache key are reused by every request.
_CURRENT_API_KEY = (
    select(
        ApiKey.id,
        ApiKey.key_hash,
        ApiKey.created_at,
        Organization.id,
        Organization.name,
        Organization.events_per_minute,
        Organization.requests_per_second,
    )
    .join(Organization, Organization.id == ApiKey.org_id)
    .where(ApiKey.key_hash == bindparam("digest"), ApiKey.revoked_at.is_(None))
)


def verify_api_key(session: Session, raw: str) -> ApiKeyIdentity | None:
    """The identity of a current API key, else ``None`` (unknown, regenerated, whitespace, an app key)."""
    if not isinstance(raw, str) or has_whitespace(raw) or not is_api_key(raw):
        return None
    digest = hash_key(raw)
    row = session.execute(_CURRENT_API_KEY, {"digest": digest}).first()
    if row is None:
        return None
    key_id, key_hash, created_at, org_id, org_name, events_per_minute, requests_per_second = row
    if not hmac.compare_digest(key_hash, digest):
        return None
    return ApiKeyIdentity(
        api_key_id=key_id,
        org_id=org_id,
        org_name=org_name,
        created_at=created_at,
        events_per_minute=events_per_minute,
        requests_per_second=requests_per_second,
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


@dataclass(frozen=True)
class DsnCaller:
    """What a Sentry or OTLP request's DSN key stands for: the key, its organization's events-per-minute
    quota, and the settings of its project that preparing its lines reads."""

    identity: AppKeyIdentity
    events_per_minute: int
    replay_enabled: bool
    in_app: InAppRules
    quota: ProjectQuota | None = None  # the project's own quotas (stacklens.control.project_quotas)
    # The project's merged fingerprints → their issue (stacklens.issues.merges); re-read after any write.
    issue_overrides: Mapping[str, int] = field(default_factory=dict, hash=False, compare=False)
    # The project's data scrubbing rules (stacklens.scrubbing), compiled once per distinct set.
    scrubbing: ScrubRules = field(default=NO_SCRUBBING, hash=False, compare=False)


def find_dsn_caller(session: Session, raw: str) -> DsnCaller | None:
    """A current app key of any organization with its quota and project settings, in one statement: the
    one-event-per-request road pays for every look-up once per event."""
    if not isinstance(raw, str) or has_whitespace(raw) or not is_app_key(raw):
        return None
    digest = hash_key(raw)
    row = session.execute(
        select(
            AppKey.id,
            AppKey.project_id,
            AppKey.org_id,
            AppKey.service,
            AppKey.key_hash,
            Organization.events_per_minute,
            Project.replay_enabled,
            Project.in_app_include,
            Project.in_app_exclude,
            Project.events_per_minute.label("project_events_per_minute"),
            Project.category_quotas,
            Project.scrubbing,
        )
        .join(Project, Project.id == AppKey.project_id)
        .join(Organization, Organization.id == AppKey.org_id)
        .where(AppKey.key_hash == digest, AppKey.revoked_at.is_(None))
    ).first()
    if row is None or not hmac.compare_digest(row.key_hash, digest):
        return None
    service = row.service if row.service is not None else service_of(raw)
    identity = AppKeyIdentity(
        app_key_id=row.id, project_id=row.project_id, org_id=row.org_id, service=service
    )
    return DsnCaller(
        identity,
        row.events_per_minute,
        bool(row.replay_enabled),
        rules_of(row.in_app_include, row.in_app_exclude),
        quota_of(row.project_id, row.project_events_per_minute, row.category_quotas),
        overrides_of(session, row.project_id),
        compiled(row.scrubbing),
    )
