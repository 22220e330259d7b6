"""`POST /api/ingest`: shipper batches of log lines (docs/architecture.md §11.2), landed exactly once."""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from clickhouse_connect.driver.exceptions import OperationalError
from fastapi import APIRouter, Request
from pydantic import BaseModel, Field
from starlette.requests import ClientDisconnect

from api.admission import admitted
from api.deps import ApiAuth, app_settings, client_ip, note_refusal
from api.errors import APPLICATION_NOT_FOUND, RATE_LIMITED, SERVICE_UNAVAILABLE, ApiError, domain_error_answer
from api.item_quotas import item_taker
from api.json_depth import JsonBodyRefused
from api.landing import landed
from api.routers.auth import AUTH_ERRORS, ErrorBody
from api.token_buckets import RateLimiter, get_rate_limiter
from stacklens.control.auth import ApiKeyIdentity
from stacklens.control.keys.use_tally import count_key_use
from stacklens.control.rate_limits import EVENTS
from stacklens.disk_floor import require_disk_room
from stacklens.errors import RateLimited, StackLensError, Unavailable
from stacklens.ingest.decode import MAX_BODY_BYTES, DecompressionBusy
from stacklens.ingest.service import Admitted, BatchResult, TakeItems, admit_body
from stacklens.outcomes.counting import ORG_QUOTA
from stacklens.outcomes.managed import GiveBack
from stacklens.settings import Settings

router = APIRouter(prefix="/api", tags=["ingest"])
logger = logging.getLogger(__name__)


class Rejected(BaseModel):
    line: int = Field(description="1-based line number in the (decompressed) body.")
    error: str


class IngestAnswer(BaseModel):
    batch_id: str = Field(description="The Idempotency-Key, or a generated id when none was sent.")
    accepted: int = Field(description="Lines landed by this request.")
    duplicates: int = Field(description="Lines whose event id was already stored (landed once, not again).")
    skipped: int = Field(description="Lines of item types the service does not store (e.g. `client_report`).")
    rejected: list[Rejected]


INGEST_ERRORS: dict[int | str, dict[str, Any]] = {
    **AUTH_ERRORS,
    400: {
        "model": ErrorBody,
        "description": "Malformed body: empty, not gzip/zstd as declared, no readable line",
    },
    404: {
        "model": ErrorBody,
        "description": f"`{APPLICATION_NOT_FOUND}`: no line belongs to a project of the key's organization",
    },
    409: {
        "model": ErrorBody,
        "description": "`Conflict`: the Idempotency-Key was already used for a different (decompressed) body",
    },
    413: {"model": ErrorBody, "description": "Body, decompressed body or line count over the limit"},
    415: {"model": ErrorBody, "description": "Unsupported Content-Encoding"},
    503: {
        "model": ErrorBody,
        "description": f"`{SERVICE_UNAVAILABLE}`: the disk is below its floor, the queue is full, the warehouse "
        "is down, the control store is locked or a store refuses writes, or the server is busy decompressing; retry after `Retry-After` seconds",
    },
}


async def read_body(request: Request, limit: int = MAX_BODY_BYTES) -> bytes:
    """The raw body, refused with 413 as soon as it passes ``limit`` (never buffered whole first)."""
    too_large = ApiError(413, "Payload Too Large", f"the body exceeds {limit // (1024 * 1024)} MiB")
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise too_large
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise too_large
            chunks.append(chunk)
    except ClientDisconnect:
        # The sender went away mid-body (a killed shipper): nothing of a partial body may land, and
        # nobody is left to answer. 400 closes the exchange quietly; the resend carries the whole batch.
        raise ApiError(400, "Bad Request", "the client disconnected before the body was complete") from None
    except JsonBodyRefused as refused:  # a body sent as JSON, too deep (api/json_depth): the route's answer
        raise ApiError(refused.status_code, refused.error, str(refused.detail)) from None
    return b"".join(chunks)


def _take_events(settings: Settings, identity: ApiKeyIdentity, limiter: RateLimiter) -> TakeItems:
    take = item_taker(settings, limiter, identity.org_id, identity.events_per_minute, spike_protection=False)

    def spend(counts: Counter[tuple[int, str]]) -> GiveBack | None:
        try:
            return take(counts)
        except RateLimited as refused:
            if refused.reason == ORG_QUOTA:  # the activity log's entry names the organization's quota
                note_refusal(
                    settings,
                    identity.org_id,
                    EVENTS,
                    identity.events_per_minute,
                    ApiError(429, RATE_LIMITED, str(refused), {"Retry-After": str(refused.retry_after)}),
                    identity.api_key_id,
                )
            raise

    return spend


def _admit(
    settings: Settings, identity: ApiKeyIdentity, limiter: RateLimiter, body: bytes, request: Request
) -> BatchResult | Admitted:
    return admit_body(
        settings,
        identity.org_id,
        body,
        request.headers.get("content-encoding"),
        header_app_key=request.headers.get("x-stacklens-app-key"),
        idempotency_key=request.headers.get("idempotency-key"),
        take_events=_take_events(settings, identity, limiter),
    )


def _count_use(settings: Settings, identity: ApiKeyIdentity, result: BatchResult, request: Request) -> None:
    if not result.replayed and result.accepted:
        count_key_use(
            settings,
            identity.org_id,
            "api",
            identity.api_key_id,
            requests=0,
            events=result.accepted,
            ip=client_ip(request),
            user_agent=request.headers.get("user-agent", "")[:300],
        )
        for app_key_id, events in result.events_by_app_key.items():
            count_key_use(settings, identity.org_id, "app", app_key_id, events=events, ip=client_ip(request))


@router.post("/ingest", response_model=IngestAnswer, responses=INGEST_ERRORS)
async def ingest(request: Request, identity: ApiAuth) -> IngestAnswer:
    """Receive one shipper batch: NDJSON log lines, optionally gzip or zstd (`Content-Encoding`).

    Each line is `{"v": 1, "type": "event" | "transaction" | …, "app_key": "stacklens_app_…", "ts": …,
    "payload": {Sentry payload}}`; lines without `app_key` use the `X-Stacklens-App-Key` header. A batch
    resent with the same `Idempotency-Key` answers with its first figures and lands nothing again (the same
    key with another body answers 409); an event id already stored counts under `duplicates`. Problems with
    single lines are listed under `rejected` and never fail the batch. Times older than the retention (or
    within a day of it) or over a minute ahead are stored under the receive time, the original kept in the
    payload.
    """
    # The settings and limiter from the app, not as dependencies: one dependency (the key) is all FastAPI
    # solves on this hot path (docs/decisions.md, "The front door").
    settings = app_settings(request)
    limiter = get_rate_limiter(settings)
    try:
        require_disk_room(settings)  # before anything is read or written (stacklens/disk_floor.py)
        body = await read_body(request)
        result = await landed(await admitted(len(body), _admit, settings, identity, limiter, body, request))
        _count_use(settings, identity, result, request)
    except (StackLensError, ApiError, OperationalError) as exc:
        _log_refusal(request, identity, exc)  # the answer itself comes from api/errors' one map
        raise
    return IngestAnswer(**result.answer())


def _log_refusal(request: Request, identity: ApiKeyIdentity, exc: Exception) -> None:
    """Log a batch refused as a whole (a line-level rejection is in the answer, not the log).

    A client error is a warning (the operator sees which organization sends what and why it is refused); a
    warehouse that does not answer, or no decompression slot within its wait, is an error (the shipper keeps
    the batch and retries).
    """
    if isinstance(exc, DecompressionBusy):
        logger.error("ingest: answered 503 to organization %d: %s", identity.org_id, exc)
        return
    if isinstance(exc, Unavailable | OperationalError):
        logger.error(
            "ingest: answered 503 to organization %d, the warehouse is unavailable: %s", identity.org_id, exc
        )
        return
    if isinstance(exc, ApiError):
        status, word, detail = exc.status, exc.error, exc.detail
    else:
        status, word, _ = domain_error_answer(exc)  # type: ignore[arg-type]
        detail = str(exc)
    logger.warning(
        "ingest: refused a batch of organization %d (Idempotency-Key %s) with %d %s: %s",
        identity.org_id,
        request.headers.get("idempotency-key") or "-",
        status,
        word,
        detail,
    )
