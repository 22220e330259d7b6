"""`POST /api/{project_id}/envelope/` and `/store/`: any Sentry SDK pointed at a StackLens DSN
(docs/architecture.md §11.4).

Authentication is the DSN's public key (an app key) in any form Relay accepts; the organization is the
key's. The body becomes log lines that land through the same ingest service as `/api/ingest`, under the
organization's event quota. Answers follow Relay where SDKs depend on them: 200 `{"id": …}` for an accepted
envelope, 401 without a key, 403 for a key that is not a current app key of the project, 429 with
`Retry-After` and `X-Sentry-Rate-Limits`, and CORS for browser SDKs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from clickhouse_connect.driver.exceptions import OperationalError
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

from api.admission import admitted
from api.deps import Limiter, app_settings, client_ip
from api.errors import APPLICATION_NOT_FOUND, SERVICE_UNAVAILABLE, ApiError, domain_error_answer
from api.item_quotas import item_taker, rate_limits_header, take_check_ins
from api.landing import landed
from api.routers.auth import ErrorBody
from api.routers.ingest import read_body
from api.token_buckets import get_rate_limiter
from stacklens.control.auth import AppKeyIdentity
from stacklens.control.keys.dsn_callers import dsn_caller
from stacklens.control.keys.use_tally import count_key_use
from stacklens.control.project_quotas import ProjectQuota
from stacklens.disk_floor import require_disk_room
from stacklens.errors import InvalidInput, NotFound, RateLimited, StackLensError
from stacklens.feedback.intake import Extras, keep_extras, plan_extras
from stacklens.ingest.decode import DecodeError
from stacklens.ingest.envelope import (
    MAX_DECODED_BYTES,
    MAX_ENVELOPE_BYTES,
    auth_key,
    dsn_key,
    envelope_of,
    item_kinds,
    read_header,
)
from stacklens.ingest.envelope_lines import EnvelopeLines, envelope_lines, store_lines
from stacklens.ingest.inflate import DecodedBody
from stacklens.ingest.prepared_rows import Attribution
from stacklens.ingest.service import Admitted, BatchResult, admit_batch
from stacklens.ingest.workers import AppKeyResolver
from stacklens.monitors.checkins import record_all
from stacklens.outcomes.counting import (
    ENVELOPE_TOO_LARGE,
    MALFORMED_ENVELOPE,
    Outcomes,
    category_of,
)
from stacklens.outcomes.tally import count_outcomes
from stacklens.settings import Settings

router = APIRouter(prefix="/api", tags=["sentry protocol"])

CORS_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "POST, OPTIONS",
    "Access-Control-Allow-Headers": (
        "content-type, content-encoding, x-sentry-auth, authorization, sentry-trace, baggage"
    ),
    "Access-Control-Expose-Headers": "x-sentry-rate-limits, x-sentry-error, retry-after",
    "Access-Control-Max-Age": "3600",
}
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {
        "model": ErrorBody,
        "description": "Malformed envelope, event or encoding; JSON nested deeper than 64 levels",
    },
    401: {"model": ErrorBody, "description": "No DSN key (X-Sentry-Auth, sentry_key, or the envelope's dsn)"},
    403: {"model": ErrorBody, "description": "The key is not a current app key of this project"},
    413: {
        "model": ErrorBody,
        "description": (
            "Body over 20 MiB, inflated body over 64 MiB, or more items of a kind than one envelope may carry "
            "(one event-like item, 100 sessions, 100 attachments, …)"
        ),
    },
    415: {"model": ErrorBody, "description": "Unsupported Content-Encoding"},
    429: {"model": ErrorBody, "description": "`Rate Limited`, with Retry-After and X-Sentry-Rate-Limits"},
    503: {
        "model": ErrorBody,
        "description": "`Service Unavailable`: the disk is below its floor, the queue is full, the warehouse is "
        "down, the control store is locked or a store refuses writes, or the server is busy decompressing; retry after `Retry-After` seconds",
    },
}


PROJECT_ID_RULE = "the project id of a DSN is a number (of at most 18 digits)"


def _is_project_id(value: str) -> bool:
    return value.isdigit() and len(value) <= 18


class EnvelopeAnswer(BaseModel):
    id: str = Field(description="The event id of the envelope (generated when it carries none).")


def _refused(status: int, error: str, detail: str, headers: dict[str, str] | None = None) -> ApiError:
    # Relay repeats the reason in X-Sentry-Error, which SDKs log; a header must be plain ASCII.
    reason = detail.replace("…", "...").encode("ascii", "replace").decode()[:300]
    return ApiError(status, error, detail, {**CORS_HEADERS, "X-Sentry-Error": reason, **(headers or {})})


@dataclass(frozen=True)
class Caller:
    """The DSN key of a request, its organization's quota, and what its lines are attributed to."""

    identity: AppKeyIdentity
    quota: int
    attribution: Attribution
    project_quotas: dict[int, ProjectQuota]


def _identify(settings: Settings, project_id: str, key: str | None) -> Caller:
    """The app key, its organization's events-per-minute quota and its project's settings, in one session;
    401/403 as Relay answers."""
    if not key:
        raise _refused(
            401,
            APPLICATION_NOT_FOUND,
            "no DSN key: send X-Sentry-Auth (sentry_key=…), ?sentry_key=, or the dsn in the envelope header",
        )
    found = dsn_caller(settings, key)
    if found is not None and str(found.identity.project_id) == project_id:
        identity = found.identity
        # The lines of this request carry this key: attributed here, not once more per line.
        attribution = Attribution(
            identity.project_id,
            identity.service,
            identity.app_key_id,
            found.replay_enabled,
            found.in_app,
            found.issue_overrides,
            found.scrubbing,
        )
        quotas = {identity.project_id: found.quota} if found.quota is not None else {}
        return Caller(identity, found.events_per_minute, attribution, quotas)
    # An unknown key and a key of another project answer alike: nothing about other projects leaks.
    raise _refused(
        403, APPLICATION_NOT_FOUND, f"the DSN's key is not a current app key of project {project_id}"
    )


@dataclass
class Received:
    """An envelope read, its caller known and its lines admitted: what the event loop awaits and answers."""

    caller: Caller
    key: str
    lines: EnvelopeLines
    admitted: BatchResult | Admitted | None  # None: no lines (check-ins, feedback, attachments only)


def _admit(
    settings: Settings,
    project_id: str,
    key: str | None,
    decoded: DecodedBody,
    received: datetime,
    limiter: Limiter,
    store: bool,
) -> Received:
    """Everything an envelope costs before the front door, in one thread hop: the key, the envelope, its
    lines prepared and within their quotas."""
    if store:
        caller = _identify(settings, project_id, key)
        lines = _counted_when_refused(
            settings, caller, decoded, lambda rest: store_lines(rest, key or "", received), single=True
        )
    else:
        known = _identify(settings, project_id, key) if key else None
        headers = read_header(decoded)
        if known is None:
            key = dsn_key(headers)
            known = _identify(settings, project_id, key)
        caller = known
        lines = _counted_when_refused(
            settings,
            caller,
            decoded,
            lambda rest: envelope_lines(
                envelope_of(rest, headers), key or "", received, settings.attachment_max_bytes
            ),
        )
        if lines.check_ins:  # before any line is admitted: a bad check-in refuses the envelope whole (400)
            give_back = take_check_ins(
                item_taker(settings, limiter, caller.identity.org_id, caller.quota, caller.project_quotas),
                caller.identity.project_id,
                lines,
            )
            try:
                if lines.check_ins:  # none left: dropped past the quota
                    record_all(
                        settings,
                        caller.identity.org_id,
                        caller.identity.project_id,
                        lines.check_ins,
                        received,
                    )
            except InvalidInput:
                if give_back is not None:
                    give_back()
                _count_refused(settings, caller, lines, "invalid", MALFORMED_ENVELOPE)
                raise
    identity = caller.identity
    extras = plan_extras(
        settings,
        identity.org_id,
        identity.project_id,
        lines.event_id,
        lines.feedback,
        lines.attachments,
        lines.sent_at,
    )
    if extras.over_quota:
        count_outcomes(settings, identity.org_id, extras.refused())
    admitted = _admit_lines(settings, caller, key or "", lines, limiter, extras)
    keep_extras(settings, extras, received)  # once the lines are admitted (a refusal keeps none of them)
    return Received(caller, key or "", lines, admitted)


def _counted_when_refused(
    settings: Settings,
    caller: Caller,
    decoded: DecodedBody,
    read: Callable[[bytes], EnvelopeLines],
    single: bool = False,
) -> EnvelopeLines:
    """``read(rest of the body)``; an envelope refused whole (400, 413) once its key is known is counted
    first: each item whose header can be read under its category (``single``: the one event of /store/),
    else one error (a body that cannot be inflated or split), as invalid or too large."""
    kinds: Counter[str] = Counter({"event": 1}) if single else Counter()
    try:
        rest = decoded.rest()
        if not single:
            try:
                return read(rest)
            except DecodeError:
                kinds = item_kinds(rest)
                raise
        return read(rest)
    except DecodeError as refused:
        too_large = refused.status == 413
        outcome, reason = ("too_large", ENVELOPE_TOO_LARGE) if too_large else ("invalid", MALFORMED_ENVELOPE)
        reason = getattr(refused, "reason", reason)  # an item refused for a reason of its own (ItemRefused)
        project_id = caller.identity.project_id
        counts: Outcomes = Counter()
        for kind, n in kinds.items():
            category = category_of(kind)
            if category is not None:
                counts[(project_id, category, outcome, reason)] += n
        if not kinds:
            counts[(project_id, "error", outcome, reason)] += 1
        count_outcomes(settings, caller.identity.org_id, counts)
        raise


def _count_refused(
    settings: Settings, caller: Caller, lines: EnvelopeLines, outcome: str, reason: str
) -> None:
    """Count every item of an envelope read whole and then refused before its lines were admitted."""
    counts: Outcomes = Counter()
    for kind, n in (lines.written + lines.counted).items():
        category = category_of(kind)
        if category is not None:
            counts[(caller.identity.project_id, category, outcome, reason)] += n
    count_outcomes(settings, caller.identity.org_id, counts)


def _admit_lines(
    settings: Settings, caller: Caller, key: str, lines: EnvelopeLines, limiter: Limiter, extras: Extras
) -> BatchResult | Admitted | None:
    if not lines.lines:
        if extras:  # feedback and attachments alone (a feedback widget's envelope): kept, counted now
            count_outcomes(settings, caller.identity.org_id, extras.accepted())
        return None  # only counted items (client reports and sessions are lines; check-ins are not)
    identity = caller.identity
    by_key = AppKeyResolver(settings, identity.org_id)
    # Feedback and attachments follow the envelope's outcome: accepted with its lines, or refused with them.
    also: Outcomes | None = extras.accepted() or None
    return admit_batch(
        settings,
        identity.org_id,
        lines.lines,
        header_app_key=None,
        idempotency_key=lines.idempotency_key,
        resolve=lambda raw: caller.attribution if raw == key else by_key(raw),
        take_events=item_taker(settings, limiter, identity.org_id, caller.quota, caller.project_quotas),
        figures_answered=False,
        also=also,
    )


async def _landed(settings: Settings, received: Received, ip: str) -> BatchResult | None:
    """The envelope's result once the front door has its rows (its outcomes counted by the landing's end)."""
    if received.admitted is None:
        return None
    result = await landed(received.admitted)
    caller = received.caller
    if not result.replayed and result.accepted:
        identity = caller.identity
        count_key_use(settings, identity.org_id, "app", identity.app_key_id, events=result.accepted, ip=ip)
    return result


async def _receive(request: Request, project_id: str, store: bool) -> Response:
    """Accept the body, or answer as api/errors' one map says, with the headers Sentry SDKs read (CORS,
    X-Sentry-Error, and for 429 X-Sentry-Rate-Limits: retry after N seconds, every category, organization).

    The settings and the rate limiter are read from the app here rather than declared as dependencies:
    the SDKs' one-event requests are the most frequent by far, and solving the dependencies was an eighth
    of each one's time under the interpreter lock."""
    settings = app_settings(request)
    limiter = get_rate_limiter(settings)
    try:
        return await _accept(request, project_id, settings, limiter, store)
    except StackLensError as exc:
        status, word, headers = domain_error_answer(exc)
        if isinstance(exc, RateLimited):  # SDKs back off the categories named, for the seconds named
            headers["X-Sentry-Rate-Limits"] = rate_limits_header(exc)
        raise _refused(status, word, str(exc), headers) from None
    except OperationalError as exc:
        raise _refused(503, SERVICE_UNAVAILABLE, str(exc), {"Retry-After": "30"}) from exc
    except ApiError as exc:
        extra = dict(exc.headers)
        if exc.status == 429:
            extra["X-Sentry-Rate-Limits"] = f"{extra.get('Retry-After', '60')}::organization"
        raise _refused(exc.status, exc.error, exc.detail, extra) from None


async def _accept(
    request: Request, project_id: str, settings: Settings, limiter: Limiter, store: bool
) -> Response:
    """Authenticate before inflating: a key in the URL or a header is checked before any decompression, and
    one in the envelope header once that first line alone is inflated, so an unknown key costs no bomb.
    Decompressing and parsing run off the event loop (a 64 MiB body takes a fraction of a second)."""
    require_disk_room(settings)  # before anything is read or written (stacklens/disk_floor.py)
    if not _is_project_id(project_id):
        raise NotFound(PROJECT_ID_RULE)
    body = await read_body(request, MAX_ENVELOPE_BYTES)
    what = "event" if store else "envelope"
    decoded = DecodedBody(body, request.headers.get("content-encoding"), MAX_DECODED_BYTES, what)
    key = auth_key(request.headers, request.query_params)
    received = await admitted(
        len(body), _admit, settings, project_id, key, decoded, datetime.now(UTC), limiter, store
    )
    result = await _landed(settings, received, client_ip(request))
    lines = received.lines
    if (
        result is not None
        and result.rejected
        and not (result.accepted or result.duplicates or result.skipped)
    ):
        # Nothing of the envelope was kept: say why, as Relay does for an invalid event, instead of an id that
        # leads nowhere. (A partly kept envelope answers 200; its rejected items are in the batch log.)
        raise InvalidInput(f"item {result.rejected[0]['line']}: {result.rejected[0]['error']}")
    return JSONResponse({"id": lines.event_id}, headers=CORS_HEADERS)


@router.post("/{project_id}/envelope/", response_model=EnvelopeAnswer, responses=ERRORS)
async def envelope(request: Request, project_id: str) -> Response:
    """A Sentry envelope: events, transactions, replays, sessions, client reports, check-ins, attachments.

    Events, transactions, replay items, sessions (release health) and client reports land; check-ins
    create or update their monitor and are recorded (a bad `monitor_config` answers 400 naming the field);
    feedback (`feedback`, `user_report`) and attachments are kept (docs/feedback.md): a feedback without a
    message is refused (400), one over 4,096 characters or an attachment over the per-item limit too (413);
    unknown item types are counted and skipped. gzip, deflate, br and zstd bodies are
    accepted. As Relay, an envelope carries at most one event-like item (event, transaction, security
    report, replay event), 100 sessions, 100 attachments, 10 client reports, and one of most other kinds;
    more is refused with 413."""
    return await _receive(request, project_id, store=False)


@router.post("/{project_id}/store/", response_model=EnvelopeAnswer, responses=ERRORS)
async def store(request: Request, project_id: str) -> Response:
    """One event as JSON (the protocol older SDKs speak); the key in X-Sentry-Auth or `?sentry_key=`."""
    return await _receive(request, project_id, store=True)


@router.options("/{project_id}/envelope/", include_in_schema=False)
@router.options("/{project_id}/store/", include_in_schema=False)
async def preflight(project_id: str) -> Response:
    """CORS preflight of browser SDKs that send X-Sentry-Auth or Content-Encoding."""
    if not _is_project_id(project_id):
        raise _refused(404, "Not Found", PROJECT_ID_RULE)
    return Response(status_code=200, headers=CORS_HEADERS)
