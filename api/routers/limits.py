"""`GET /api/limits`: the organization's rate limits and what is used of them now."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter
from pydantic import BaseModel, Field
from sqlalchemy import func, select

from api.deps import ApiAuth, DbSession, Limiter
from api.routers.auth import AUTH_ERRORS
from stacklens.control.keys.use_tally import write_pending
from stacklens.control.models import KeyUsage, Organization

router = APIRouter(prefix="/api", tags=["limits"])


class Bucket(BaseModel):
    limit: int
    available: float = Field(description="Tokens left in the bucket now; it refills continuously to `limit`.")


class HourUsage(BaseModel):
    hour: str
    requests: int
    events: int


class LimitsResponse(BaseModel):
    events_per_minute: Bucket = Field(description="Per organization: events accepted by /api/ingest.")
    requests_per_second: Bucket = Field(description="Per API key: authenticated requests.")
    backend: str = Field(description="`memory` (this process) or `redis` (shared by every worker).")
    this_hour: HourUsage = Field(description="The organization's recorded use in the current hour.")


@router.get("/limits", response_model=LimitsResponse, responses=AUTH_ERRORS)
def limits(identity: ApiAuth, session: DbSession, limiter: Limiter) -> LimitsResponse:
    """Current limits (raise them with `stacklens admin set-quota`) and usage."""
    org = session.get(Organization, identity.org_id)
    per_minute = org.events_per_minute if org else identity.events_per_minute
    per_second = org.requests_per_second if org else identity.requests_per_second
    hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    write_pending(session)  # uses counted in memory (this request's too), written first
    requests, events = session.execute(
        select(
            func.coalesce(func.sum(KeyUsage.requests), 0), func.coalesce(func.sum(KeyUsage.events), 0)
        ).where(KeyUsage.org_id == identity.org_id, KeyUsage.hour == hour)
    ).one()
    usage = limiter.usage(identity.org_id, per_minute)
    return LimitsResponse(
        events_per_minute=Bucket(limit=per_minute, available=round(usage["events_available"], 2)),
        requests_per_second=Bucket(
            limit=per_second, available=round(limiter.request_usage(identity.api_key_id, per_second), 2)
        ),
        backend=limiter.backend,
        this_hour=HourUsage(
            hour=hour.isoformat().replace("+00:00", "Z"), requests=int(requests), events=int(events)
        ),
    )
