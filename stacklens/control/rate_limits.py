"""What the organization's rate limits are, what is used of them, and the recent `Rate Limited` answers.

The spec: numeric rate limits are "viewed in the dashboard". A refused request is recorded as one activity
entry per organization, limit and minute, counting the refusals of that minute (a shipper in a 429 storm
retries many times a minute; one row a minute keeps the log readable and the cost to one indexed read and one
write per refusal).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from stacklens.control.keys.use_tally import write_pending
from stacklens.control.models import ActivityEntry, KeyUsage, Organization, utcnow

RATE_LIMITED = "quota.rate_limited"
EVENTS = "events_per_minute"
REQUESTS = "requests_per_second"


@dataclass(frozen=True)
class LimitsView:
    """The organization's limits and this hour's recorded use (all of its keys)."""

    events_per_minute: int
    requests_per_second: int
    hour: datetime
    requests_this_hour: int
    events_this_hour: int


def record_refusal(
    session: Session, org_id: int, limit: str, value: int, retry_after: float, key_id: int | None = None
) -> None:
    """Count one `Rate Limited` answer: in this minute's entry for ``limit`` when there is one, else a new
    one."""
    now = utcnow()
    entry = session.scalar(
        select(ActivityEntry)
        .where(
            ActivityEntry.org_id == org_id,
            ActivityEntry.action == RATE_LIMITED,
            ActivityEntry.target_kind == limit,
            ActivityEntry.created_at >= now - timedelta(minutes=1),
        )
        .order_by(ActivityEntry.created_at.desc())
        .limit(1)
    )
    if entry is not None:
        detail = dict(entry.detail or {})
        detail["refusals"] = int(detail.get("refusals", 1)) + 1
        detail["last_retry_after_s"] = round(retry_after, 1)
        entry.detail = detail  # a new dict: JSON columns are not change-tracked in place
        return
    session.add(
        ActivityEntry(
            org_id=org_id,
            action=RATE_LIMITED,
            target_kind=limit,
            target_id=key_id,
            created_at=now,
            detail={"limit": value, "refusals": 1, "last_retry_after_s": round(retry_after, 1)},
        )
    )


def recent_refusals(session: Session, org_id: int, limit: int = 20) -> list[ActivityEntry]:
    """The newest `Rate Limited` entries of the organization (one per limit and minute)."""
    return list(
        session.scalars(
            select(ActivityEntry)
            .where(ActivityEntry.org_id == org_id, ActivityEntry.action == RATE_LIMITED)
            .order_by(ActivityEntry.created_at.desc(), ActivityEntry.id.desc())
            .limit(limit)
        )
    )


def limits_view(session: Session, org_id: int, now: datetime | None = None) -> LimitsView:
    """The organization's limits and the requests and events its keys made this hour.

    Every landed event is counted on its app key's row (shipper batches also count it on the API key's), so
    events are summed over app keys only; requests over every key.
    """
    org = session.get(Organization, org_id)
    if org is None:
        raise LookupError(org_id)
    write_pending(session)  # uses counted in memory, written first
    hour = (now or datetime.now(UTC)).replace(minute=0, second=0, microsecond=0)
    app_events = func.sum(case((KeyUsage.key_kind == "app", KeyUsage.events), else_=0))
    requests, events = session.execute(
        select(func.coalesce(func.sum(KeyUsage.requests), 0), func.coalesce(app_events, 0)).where(
            KeyUsage.org_id == org_id, KeyUsage.hour == hour
        )
    ).one()
    return LimitsView(org.events_per_minute, org.requests_per_second, hour, int(requests), int(events))
