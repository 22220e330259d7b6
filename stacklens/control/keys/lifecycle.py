"""The key lifecycle: API keys (one current per organization, one next during a rotation) and app keys (a
project's primary key and one per service): issue, regenerate, revoke, reveal and list them.

Regeneration revokes the old row and inserts the new one in one transaction; verification
(:mod:`stacklens.control.auth`) looks up only rows with ``revoked_at IS NULL``, so the old value is refused by
every worker as soon as this commits. Every change and every view writes an activity entry in the same
transaction. Callers own the transaction. The values themselves (generation, hashing, encryption) are
:mod:`stacklens.control.keys.values`'.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.activity import record_activity
from stacklens.control.db import session_settings
from stacklens.control.errors import AccountError, AccountNotFound
from stacklens.control.keys.values import (
    decrypt_value,
    encrypt_value,
    generate_api_key,
    generate_app_key,
    hash_key,
    validate_service,
)
from stacklens.control.models import ApiKey, AppKey, Organization, Project, utcnow
from stacklens.errors import Conflict
from stacklens_contract.keys import APP_KEY_PREFIX


@dataclass(frozen=True)
class AppKeyInfo:
    """An app key as lists show it: never the full value."""

    id: int
    project_id: int
    service: str | None
    masked: str
    created_at: datetime


def _current_api_key(session: Session, org_id: int, *, next_key: bool = False) -> ApiKey | None:
    return session.scalar(
        select(ApiKey)
        .where(ApiKey.org_id == org_id, ApiKey.revoked_at.is_(None), ApiKey.is_next.is_(next_key))
        .order_by(ApiKey.id.desc())
    )


def new_api_key(
    session: Session, org_id: int, actor_user_id: int | None, *, next_key: bool = False
) -> tuple[ApiKey, str]:
    value = generate_api_key()
    row = ApiKey(
        org_id=org_id,
        key_hash=hash_key(value),
        key_encrypted=encrypt_value(value, session_settings(session)),
        last4=value[-4:],
        created_by_user_id=actor_user_id,
        is_next=next_key,
    )
    session.add(row)
    session.flush()
    return row, value


class NextKeyExists(AccountError, Conflict):
    """A rotation is already under way: one next key at most (409)."""


def create_next_api_key(
    session: Session, org_id: int, actor_user_id: int | None = None
) -> tuple[ApiKey, str]:
    """Issue the next API key of a zero-downtime rotation (the spec's order: put the new key in every shipper
    configuration, restart the shippers, verify events flow, then regenerate). It authenticates beside the
    current key until :func:`regenerate_api_key` promotes it."""
    if session.get(Organization, org_id) is None:
        raise AccountNotFound(f"no organization with id {org_id}")
    pending = _current_api_key(session, org_id, next_key=True)
    if pending is not None:
        raise NextKeyExists(
            f"a next key (…{pending.last4}) exists already; reveal it, or regenerate to promote it"
        )
    row, value = new_api_key(session, org_id, actor_user_id, next_key=True)
    record_activity(
        session, org_id, "api_key.next_created", "api_key", row.id, actor_user_id, {"last4": row.last4}
    )
    return row, value


def regenerate_api_key(session: Session, org_id: int, actor_user_id: int | None = None) -> str:
    """Replace the organization's API key; the old value stops working when this transaction commits.

    With a next key issued, that key is promoted (the shippers already use it); otherwise a new one is made.
    Either way one current key remains and no next key."""
    if session.get(Organization, org_id) is None:
        raise AccountNotFound(f"no organization with id {org_id}")
    old = _current_api_key(session, org_id)
    if old is not None:
        old.revoked_at = utcnow()
    promoted = _current_api_key(session, org_id, next_key=True)
    if promoted is not None:
        promoted.is_next = False
        row, value = promoted, decrypt_value(promoted.key_encrypted, session_settings(session))
    else:
        row, value = new_api_key(session, org_id, actor_user_id)
    record_activity(
        session,
        org_id,
        "api_key.regenerated",
        "api_key",
        row.id,
        actor_user_id,
        {"last4": row.last4, "previous_id": old.id if old else None, "promoted_next": promoted is not None},
    )
    return value


def reveal_api_key(
    session: Session, org_id: int, actor_user_id: int | None, *, next_key: bool = False
) -> str:
    """The current (or the next) API key's full value; the view is logged."""
    row = _current_api_key(session, org_id, next_key=next_key)
    if row is None:
        what = "next" if next_key else "current"
        raise AccountNotFound(f"the organization has no {what} API key")
    value = decrypt_value(row.key_encrypted, session_settings(session))
    detail = {"last4": row.last4, "next": next_key}
    record_activity(session, org_id, "api_key.viewed", "api_key", row.id, actor_user_id, detail)
    return value


def current_api_key(session: Session, org_id: int) -> ApiKey | None:
    """The current API key row (masked display, creation time)."""
    return _current_api_key(session, org_id)


def next_api_key(session: Session, org_id: int) -> ApiKey | None:
    """The next API key row of a rotation under way, if any."""
    return _current_api_key(session, org_id, next_key=True)


def insert_app_key(
    session: Session, project: Project, service: str | None, actor_user_id: int | None, action: str
) -> str:
    """A new app key for ``project`` (the primary one when ``service`` is None), logged as ``action``; the
    value is returned, the row keeps its hash and encrypted copy."""
    value = generate_app_key(service)
    row = AppKey(
        org_id=project.org_id,
        project_id=project.id,
        service=service,
        key_hash=hash_key(value),
        key_encrypted=encrypt_value(value, session_settings(session)),
        last4=value[-4:],
    )
    session.add(row)
    session.flush()
    record_activity(
        session,
        project.org_id,
        action,
        "app_key",
        row.id,
        actor_user_id,
        {"project": project.slug, "service": service, "last4": row.last4},
    )
    return value


def _current_app_key(session: Session, project_id: int, service: str | None) -> AppKey | None:
    query = select(AppKey).where(AppKey.project_id == project_id, AppKey.revoked_at.is_(None))
    query = query.where(AppKey.service.is_(None) if service is None else AppKey.service == service)
    return session.scalar(query.order_by(AppKey.id.desc()))


def current_app_key(session: Session, project_id: int, service: str | None = None) -> AppKey | None:
    """The project's current primary (or the service's) app key row."""
    return _current_app_key(session, project_id, service)


def _project(session: Session, project_id: int) -> Project:
    project = session.get(Project, project_id)
    if project is None:
        raise AccountNotFound(f"no project with id {project_id}")
    return project


def create_app_key(session: Session, project_id: int, service: str, actor_user_id: int | None = None) -> str:
    """A per-service app key for the project; one current key per service."""
    try:
        service = validate_service(service)
    except ValueError as exc:
        raise AccountError(str(exc)) from exc
    project = _project(session, project_id)
    if _current_app_key(session, project_id, service) is not None:
        raise AccountError(
            f"project {project.slug!r} already has an app key for service {service!r}; regenerate it instead"
        )
    return insert_app_key(session, project, service, actor_user_id, "app_key.created")


def regenerate_app_key(
    session: Session, project_id: int, service: str | None = None, actor_user_id: int | None = None
) -> str:
    """Replace the primary (or the service's) app key; the old value stops working at commit."""
    if service is not None:
        try:
            validate_service(service)
        except ValueError as exc:
            raise AccountError(str(exc)) from exc
    project = _project(session, project_id)
    old = _current_app_key(session, project_id, service)
    if old is None and service is not None:
        raise AccountError(f"project {project.slug!r} has no app key for service {service!r}")
    if old is not None:
        old.revoked_at = utcnow()
    return insert_app_key(session, project, service, actor_user_id, "app_key.regenerated")


def revoke_app_key(session: Session, app_key_id: int, actor_user_id: int | None = None) -> None:
    """Revoke one app key (a per-service key usually; the primary one too, for a leaked key)."""
    row = session.get(AppKey, app_key_id)
    if row is None or row.revoked_at is not None:
        raise AccountNotFound(f"no current app key with id {app_key_id}")
    row.revoked_at = utcnow()
    record_activity(
        session,
        row.org_id,
        "app_key.revoked",
        "app_key",
        row.id,
        actor_user_id,
        {"service": row.service, "last4": row.last4},
    )


def reveal_app_key(
    session: Session, project_id: int, service: str | None = None, actor_user_id: int | None = None
) -> str:
    """The full value of the project's primary (or the service's) app key; the view is logged."""
    row = _current_app_key(session, project_id, service)
    if row is None:
        raise AccountNotFound("no current app key for that project and service")
    value = decrypt_value(row.key_encrypted, session_settings(session))
    record_activity(
        session,
        row.org_id,
        "app_key.viewed",
        "app_key",
        row.id,
        actor_user_id,
        {"service": row.service, "last4": row.last4},
    )
    return value


def list_app_keys(session: Session, project_id: int) -> list[AppKeyInfo]:
    """The project's current app keys, primary first, masked."""
    rows = session.scalars(
        select(AppKey)
        .where(AppKey.project_id == project_id, AppKey.revoked_at.is_(None))
        .order_by(AppKey.service.is_not(None), AppKey.service, AppKey.id)
    )
    return [_info(row) for row in rows]


def _info(row: AppKey) -> AppKeyInfo:
    prefix = f"{APP_KEY_PREFIX}{row.service}_" if row.service else APP_KEY_PREFIX
    return AppKeyInfo(row.id, row.project_id, row.service, f"{prefix}…{row.last4}", row.created_at)
