"""Attachments kept (docs/feedback.md): a row per file in the control store, its bytes a file of the data
directory at ``<data_dir>/attachments/<org id>/<project id>/<attachment id>`` (mode 0600), written whole
before its row exists. Minidumps, log files, screenshots and view hierarchies are kept alike, as sent.

Each project keeps at most its own attachment quota of them (``attachment_bytes`` of
``PUT /api/projects/{slug}/quota``), else the installation's ``STACKLENS_ATTACHMENT_QUOTA_BYTES``
(:func:`fitting`): what would pass it is refused and counted in outcomes (``rate_limited``,
``attachment_quota``), the event kept.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from stacklens.control.models import EventAttachment, utcnow
from stacklens.settings import Settings


@dataclass(frozen=True)
class AttachmentIn:
    """One attachment item as the SDK sent it (its item headers and bytes)."""

    filename: str
    content_type: str
    attachment_type: str
    data: bytes


@dataclass(frozen=True)
class AttachmentRow:
    """One stored attachment as the event page and the API list it."""

    id: str
    project_id: int
    event_id: str
    filename: str
    content_type: str
    attachment_type: str
    size: int
    received_at: datetime


def _root(settings: Settings) -> Path:
    return settings.data_dir / "attachments"


def file_of(settings: Settings, org_id: int, project_id: int, attachment_id: str) -> Path:
    """Where an attachment's bytes are (its id is 32 hex digits made here, never a name from input)."""
    return _root(settings) / str(int(org_id)) / str(int(project_id)) / uuid.UUID(attachment_id).hex


def stored_bytes(session: Session, project_id: int) -> int:
    """The bytes of attachments the project keeps now."""
    total = session.scalar(
        select(func.coalesce(func.sum(EventAttachment.size), 0)).where(
            EventAttachment.project_id == project_id
        )
    )
    return int(total or 0)


def fitting(
    session: Session, project_id: int, items: Sequence[AttachmentIn], quota_bytes: int
) -> tuple[list[AttachmentIn], int]:
    """The items that fit in the project's quota, in order, and how many do not."""
    room = quota_bytes - stored_bytes(session, project_id)
    kept: list[AttachmentIn] = []
    for item in items:
        if len(item.data) <= room:
            kept.append(item)
            room -= len(item.data)
    return kept, len(items) - len(kept)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    partial = path.with_name(path.name + ".part")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    os.replace(partial, path)


def store_attachments(
    settings: Settings,
    session: Session,
    org_id: int,
    project_id: int,
    event_id: str,
    items: Sequence[AttachmentIn],
    received: datetime | None = None,
) -> list[AttachmentRow]:
    """Write each attachment's file, then its row (the same file sent again with the same event is kept
    once); the rows new here."""
    new: list[AttachmentRow] = []
    for item in items:
        digest = hashlib.sha256(item.data).hexdigest()
        filename = _clean_name(item.filename)
        exists = session.scalar(
            select(EventAttachment.id).where(
                EventAttachment.project_id == project_id,
                EventAttachment.event_id == event_id,
                EventAttachment.sha256 == digest,
                EventAttachment.filename == filename,
            )
        )
        if exists is not None:
            continue
        attachment_id = uuid.uuid4().hex
        _write(file_of(settings, org_id, project_id, attachment_id), item.data)
        row = EventAttachment(
            id=attachment_id,
            org_id=org_id,
            project_id=project_id,
            event_id=event_id,
            filename=filename,
            content_type=item.content_type[:200],
            attachment_type=item.attachment_type[:64],
            size=len(item.data),
            sha256=digest,
            received_at=received or utcnow(),
        )
        session.add(row)
        session.flush()
        new.append(_row(row))
    return new


def _clean_name(name: str) -> str:
    """A file name as shown and downloaded: its last path part, printable, at most 255 characters."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    base = "".join(c for c in base if c.isprintable() and c not in '"')
    return base[:255] or "attachment"


def _row(row: EventAttachment) -> AttachmentRow:
    return AttachmentRow(
        row.id,
        row.project_id,
        row.event_id,
        row.filename,
        row.content_type,
        row.attachment_type,
        row.size,
        row.received_at,
    )


def attachments_of_event(
    session: Session, org_id: int, project_id: int, event_id: str
) -> list[AttachmentRow]:
    """The attachments of one event of the organization's project."""
    rows = session.scalars(
        select(EventAttachment)
        .where(
            EventAttachment.org_id == org_id,
            EventAttachment.project_id == project_id,
            EventAttachment.event_id == event_id,
        )
        .order_by(EventAttachment.received_at, EventAttachment.filename)
    )
    return [_row(r) for r in rows]


def attachment(
    session: Session, org_id: int, project_ids: Sequence[int], event_id: str, attachment_id: str
) -> AttachmentRow | None:
    """One attachment of an event of the organization (``None`` for another organization's)."""
    try:
        key = uuid.UUID(attachment_id).hex
    except ValueError:
        return None
    row = session.get(EventAttachment, key)
    if row is None or row.org_id != org_id or row.project_id not in project_ids or row.event_id != event_id:
        return None
    return _row(row)


def read_attachment(settings: Settings, org_id: int, row: AttachmentRow) -> bytes | None:
    """An attachment's bytes (``None`` when its file is gone)."""
    try:
        return file_of(settings, org_id, row.project_id, row.id).read_bytes()
    except FileNotFoundError:
        return None


def delete_attachments_before(settings: Settings, session: Session, project_id: int, before: datetime) -> int:
    """Retention: the project's attachments received before ``before`` deleted, files and rows; how many."""
    rows = session.scalars(
        select(EventAttachment).where(
            EventAttachment.project_id == project_id, EventAttachment.received_at < before
        )
    ).all()
    for row in rows:
        file_of(settings, row.org_id, row.project_id, row.id).unlink(missing_ok=True)
        session.delete(row)
    session.flush()
    return len(rows)
