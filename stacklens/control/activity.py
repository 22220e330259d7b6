"""The activity log: discrete entries (created, regenerated, viewed, revoked …) and key use per key per hour.

Use is aggregated (one upserted row per key per hour: requests, events, last IP, last user agent) so that
logging costs one statement per request, not one row. :func:`list_activity` merges both, newest first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, SQLColumnExpression, and_, false, or_, select, true
from sqlalchemy.orm import Session

from stacklens import pagination
from stacklens.control.keys.use_tally import write_pending
from stacklens.control.models import ActivityEntry, KeyUsage, utcnow

MAX_PAGE = 200
# Merge order on equal timestamps: entries before usage rows, then by id; part of the cursor.
_RANK_ENTRY, _RANK_USAGE = 1, 0


@dataclass(frozen=True)
class ActivityRow:
    """One line of the activity log as pages and the API show it."""

    id: str  # "e<id>" for an entry, "u<id>" for an hourly usage row
    created_at: datetime
    action: str
    target_kind: str
    target_id: int | None
    actor_user_id: int | None
    detail: dict[str, Any] = field(default_factory=dict)


def record_activity(
    session: Session,
    org_id: int,
    action: str,
    target_kind: str = "",
    target_id: int | None = None,
    actor_user_id: int | None = None,
    detail: dict[str, Any] | None = None,
) -> ActivityEntry:
    entry = ActivityEntry(
        org_id=org_id,
        action=action,
        target_kind=target_kind,
        target_id=target_id,
        actor_user_id=actor_user_id,
        detail=detail or {},
        created_at=utcnow(),
    )
    session.add(entry)
    session.flush()
    return entry


def _encode_cursor(row_time: datetime, rank: int, row_id: int) -> str:
    return pagination.encode_cursor(row_time.isoformat(), rank, row_id)


def decode_cursor(cursor: str) -> tuple[datetime, int, int]:
    """:class:`~stacklens.pagination.InvalidCursor` (a ``ValueError``) when the cursor was not made by
    :func:`list_activity`."""
    stamp, rank, row_id = pagination.decode_cursor(cursor, str, int, int)
    try:
        return datetime.fromisoformat(stamp), rank, row_id
    except ValueError:
        raise pagination.InvalidCursor() from None


def _before(
    column: SQLColumnExpression[datetime],
    id_column: SQLColumnExpression[int],
    rank: int,
    cursor: tuple[datetime, int, int] | None,
) -> ColumnElement[bool]:
    """Rows that sort after the cursor in (time desc, rank desc, id desc) order."""
    if cursor is None:
        return true()
    stamp, cursor_rank, cursor_id = cursor
    tie: ColumnElement[bool]
    if rank < cursor_rank:
        tie = column == stamp
    elif rank == cursor_rank:
        tie = and_(column == stamp, id_column < cursor_id)
    else:
        tie = false()
    return or_(column < stamp, tie)


def list_activity(
    session: Session,
    org_id: int,
    *,
    api_key_only: bool = False,
    cursor: str | None = None,
    limit: int = 50,
) -> tuple[list[ActivityRow], str | None]:
    """One page of the organization's activity, newest first, and the cursor of the next page (or
    ``None``)."""
    limit = max(1, min(int(limit), MAX_PAGE))
    position = decode_cursor(cursor) if cursor else None
    write_pending(session)  # uses counted in memory are written first

    entries = select(ActivityEntry).where(
        ActivityEntry.org_id == org_id,
        _before(ActivityEntry.created_at, ActivityEntry.id, _RANK_ENTRY, position),
    )
    usage = select(KeyUsage).where(
        KeyUsage.org_id == org_id, _before(KeyUsage.last_used_at, KeyUsage.id, _RANK_USAGE, position)
    )
    if api_key_only:
        entries = entries.where(ActivityEntry.target_kind == "api_key")
        usage = usage.where(KeyUsage.key_kind == "api")
    entries = entries.order_by(ActivityEntry.created_at.desc(), ActivityEntry.id.desc()).limit(limit + 1)
    usage = usage.order_by(KeyUsage.last_used_at.desc(), KeyUsage.id.desc()).limit(limit + 1)

    merged: list[tuple[datetime, int, int, ActivityRow]] = []
    for entry in session.scalars(entries):
        row = ActivityRow(
            f"e{entry.id}",
            entry.created_at,
            entry.action,
            entry.target_kind,
            entry.target_id,
            entry.actor_user_id,
            dict(entry.detail or {}),
        )
        merged.append((entry.created_at, _RANK_ENTRY, entry.id, row))
    for use in session.scalars(usage):
        detail = {
            "hour": use.hour.isoformat().replace("+00:00", "Z"),
            "requests": use.requests,
            "events": use.events,
            "last_ip": use.last_ip,
            "last_user_agent": use.last_user_agent,
        }
        kind = f"{use.key_kind}_key"
        row = ActivityRow(f"u{use.id}", use.last_used_at, f"{kind}.used", kind, use.key_id, None, detail)
        merged.append((use.last_used_at, _RANK_USAGE, use.id, row))
    merged.sort(key=lambda item: (item[0], item[1], item[2]), reverse=True)
    page = merged[:limit]
    next_cursor = _encode_cursor(*page[-1][:3]) if len(merged) > limit else None
    return [item[3] for item in page], next_cursor


def actor_labels(session: Session, rows: list[ActivityRow]) -> dict[str, str]:
    """Who did each row, in words: the member's e-mail, the key that was used, or the command line.

    Entries without a signed-in actor were made by `stacklens admin …` / `stacklens demo-org` on the server.
    """
    from stacklens.control.models import User

    ids = {row.actor_user_id for row in rows if row.actor_user_id is not None}
    found = session.execute(select(User.id, User.email).where(User.id.in_(ids))).all() if ids else []
    emails = {user_id: email for user_id, email in found}
    labels: dict[str, str] = {}
    for row in rows:
        if row.actor_user_id is not None:
            labels[row.id] = emails.get(row.actor_user_id, f"former user #{row.actor_user_id}")
        elif row.action.endswith(".used"):
            kind = "API key" if row.target_kind == "api_key" else "app key"
            ip = row.detail.get("last_ip")
            labels[row.id] = f"{kind} from {ip}" if ip else kind
        else:
            labels[row.id] = "command line"
    return labels
