"""Key use, one upserted row per key per hour (requests, events, last IP, last user agent): logging a use
costs one statement, not one row. :mod:`stacklens.control.keys.use_tally` counts uses in memory and writes
them here; :func:`stacklens.control.activity.list_activity` shows them beside the activity entries.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from stacklens.control.models import KeyUsage, utcnow
from stacklens.errors import InvalidInput

KEY_KINDS = ("api", "app")


def record_key_use(
    session: Session,
    org_id: int,
    key_kind: str,
    key_id: int,
    *,
    requests: int = 1,
    events: int = 0,
    ip: str = "",
    user_agent: str = "",
    at: datetime | None = None,
) -> None:
    """Add uses to the key's row of the hour of ``at`` (default now): insert or increment, atomically."""
    if key_kind not in KEY_KINDS:
        raise InvalidInput(f"key_kind must be one of {KEY_KINDS}")
    now = at or utcnow()
    hour = now.replace(minute=0, second=0, microsecond=0)
    values = {
        "org_id": org_id,
        "key_kind": key_kind,
        "key_id": key_id,
        "hour": hour,
        "requests": requests,
        "events": events,
        "last_ip": ip[:64],
        "last_user_agent": user_agent[:300],
        "last_used_at": now,
    }
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = insert(KeyUsage).values(**values)
    statement = statement.on_conflict_do_update(
        index_elements=["key_kind", "key_id", "hour"],
        set_={
            "requests": KeyUsage.requests + requests,
            "events": KeyUsage.events + events,
            "last_ip": statement.excluded.last_ip,
            "last_user_agent": statement.excluded.last_user_agent,
            "last_used_at": statement.excluded.last_used_at,
        },
    )
    session.execute(statement)
