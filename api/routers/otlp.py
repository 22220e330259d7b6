"""`POST /api/{project_id}/otlp/v1/traces` and `…/v1/logs`: OpenTelemetry's OTLP/HTTP exporters pointed at
StackLens (docs/reference.md).

Authentication is the project's app key, in ``X-Stacklens-App-Key`` (what ``OTEL_EXPORTER_OTLP_HEADERS``
sets) or any form the envelope endpoint reads (``X-Sentry-Auth``, ``Authorization: Sentry …``/``DSN …``,
``?sentry_key=``); it is checked before the body is inflated. Bodies are protobuf or JSON, optionally gzip (or
deflate, br, zstd), inflated as a bounded stream; JSON passes the depth guard. The spans become log lines
(:mod:`stacklens.ingest.otlp.traces`) that land through the same ingest service as `/api/ingest`, under the
organization's event quota, exactly once. The answer is an ``ExportTraceServiceResponse`` in the request's
encoding, with ``partial_success`` naming the spans refused and why; every refusal (400, 401, 403, 404, 413,
415, 429, 503, 500) answers a ``google.rpc.Status`` in the request's encoding, as OTLP/HTTP asks
(:mod:`stacklens.ingest.otlp.answers`), with the same status and headers the rest of the API would give.

Log records (``ExportLogsServiceRequest``) take the same road: each becomes a ``log`` line
(:mod:`stacklens.ingest.otlp.logs`) landing in the ``logs`` table; the answer is an
``ExportLogsServiceResponse`` whose ``partial_success`` counts ``rejected_log_records``.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from clickhouse_connect.driver.exceptions import OperationalError
from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel, Field

from api.admission import SMALL_BODY_BYTES, admitted
from api.deps import Limiter, app_settings, client_ip
from api.errors import APPLICATION_NOT_FOUND, SERVICE_UNAVAILABLE, ApiError, domain_error_answer
from api.item_quotas import item_taker
from api.landing import landed
from api.routers.ingest import read_body
from api.token_buckets import SpikeRule, get_rate_limiter
from stacklens.control.auth import AppKeyIdentity
from stacklens.control.keys.dsn_callers import dsn_caller
from stacklens.control.keys.use_tally import count_key_use
from stacklens.control.project_quotas import remembered_project_quota
from stacklens.disk_floor import require_disk_room
from stacklens.errors import NotFound, RateLimited, StackLensError
from stacklens.ingest.envelope import MAX_DECODED_BYTES, MAX_ENVELOPE_BYTES, auth_key
from stacklens.ingest.inflate import DecodedBody
from stacklens.ingest.otlp.answers import Signal, answer_media, export_answer, failure_status
from stacklens.ingest.otlp.decode import large_decode_slot, media_type, read_logs, read_traces
from stacklens.ingest.otlp.logs import LogLines, log_lines, records_at_least
from stacklens.ingest.otlp.traces import TraceLines, trace_lines, transactions_at_least
from stacklens.ingest.service import Admitted, BatchResult, admit_body
from stacklens.outcomes.counting import Outcomes
from stacklens.outcomes.tally import count_outcomes
from stacklens.settings import Settings

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api", tags=["opentelemetry"])

APP_KEY_HEADER = "x-stacklens-app-key"
PROJECT_ID_RULE = "the project id in the OTLP endpoint is a number (of at most 18 digits)"


class OtlpStatus(BaseModel):
    """``google.rpc.Status`` (protobuf for a protobuf request; this JSON form for a JSON request)."""

    code: int = Field(
        description="The gRPC code nearest the HTTP status (3 invalid argument, 8 exhausted, …)."
    )
    message: str = Field(description="What went wrong, in plain words.")
    details: list[dict[str, Any]] = Field(
        default_factory=list,
        description="`google.rpc.BadRequest` on a 400, `google.rpc.RetryInfo` on a 429 or 503.",
    )


def _error(description: str) -> dict[str, Any]:
    return {"model": OtlpStatus, "description": description}


ERRORS: dict[int | str, dict[str, Any]] = {
    400: _error("Unreadable body (not OTLP protobuf or JSON, bad gzip, too deep)"),
    401: _error("No app key (X-Stacklens-App-Key, X-Sentry-Auth or sentry_key)"),
    403: _error("The key is not a current app key of this project"),
    404: _error("The project id in the path is not a number"),
    413: _error("Body over 20 MiB, inflated body over 64 MiB, or more than 10,000 spans (log records)"),
    415: _error("Content-Type other than protobuf or JSON; unknown encoding"),
    429: _error(
        "`Rate Limited`: the organization's or the project's quota, or spike protection; Retry-After"
    ),
    503: _error(
        "`Service Unavailable`: the disk is below its floor, the queue is full, the warehouse is down, the "
        "control store is locked or a store refuses writes; "
        "retry (Retry-After)"
    ),
}


class PartialSuccess(BaseModel):
    rejectedSpans: str = Field(  # noqa: N815 - OTLP's JSON field name
        description="How many spans were refused (an int64, as text in OTLP JSON)."
    )
    errorMessage: str = Field(description="Which spans were refused and why.")  # noqa: N815 - OTLP's JSON field name


class LogsPartialSuccess(BaseModel):
    rejectedLogRecords: str = Field(  # noqa: N815 - OTLP's JSON field name
        description="How many log records were refused (an int64, as text in OTLP JSON)."
    )
    errorMessage: str = Field(description="Which log records were refused and why.")  # noqa: N815 - OTLP's JSON field name


class LogsExportAnswer(BaseModel):
    partialSuccess: LogsPartialSuccess | None = Field(  # noqa: N815 - OTLP's JSON field name
        default=None, description="Present only when some log records were refused."
    )


class ExportAnswer(BaseModel):
    partialSuccess: PartialSuccess | None = Field(  # noqa: N815 - OTLP's JSON field name
        default=None, description="Present only when some spans were refused."
    )


@dataclass(frozen=True)
class _Caller:
    identity: AppKeyIdentity
    quota: int  # the organization's events per minute


def _is_project_id(value: str) -> bool:
    return value.isdigit() and len(value) <= 18


def _identify(settings: Settings, project_id: str, key: str | None) -> _Caller:
    if not key:
        raise ApiError(
            401,
            APPLICATION_NOT_FOUND,
            "no app key: send X-Stacklens-App-Key (OTEL_EXPORTER_OTLP_HEADERS=x-stacklens-app-key=…), "
            "X-Sentry-Auth or ?sentry_key=",
        )
    found = dsn_caller(settings, key)
    if found is None or str(found.identity.project_id) != project_id:
        # An unknown key and a key of another project answer alike: nothing about other projects leaks.
        raise ApiError(
            403, APPLICATION_NOT_FOUND, f"the key is not a current app key of project {project_id}"
        )
    return _Caller(found.identity, found.events_per_minute)


# Refuses an export whose items the quotas cannot take now: (category, how many at least).
QuotaCheck = Callable[[str, int], None]


def _quota_check(settings: Settings, caller: _Caller, limiter: Limiter) -> QuotaCheck:
    """The export's quotas (spike protection, the project's, the organization's) asked, spending nothing,
    before its spans or records are converted: converting 10,000 spans took ~3 s of CPU only for the quotas
    to refuse them after (issue #62). The items are taken when the lines are admitted, as every
    entrance's."""

    def check(category: str, at_least: int) -> None:
        if at_least <= 0:
            return
        project_id = caller.identity.project_id
        quota = remembered_project_quota(settings, project_id)
        try:
            limiter.check_items(
                caller.identity.org_id,
                caller.quota,
                Counter({(project_id, category): at_least}),
                {project_id: quota} if quota is not None else {},
                SpikeRule.of(settings),
            )
        except RateLimited as refused:
            # Counted as the take's refusal would count them: the items it would at least have made (error
            # events from span events come on top and are not known before the conversion).
            refusal: Outcomes = Counter({(project_id, category, "rate_limited", refused.reason): at_least})
            count_outcomes(settings, caller.identity.org_id, refusal)
            raise

    return check


def _admit(
    settings: Settings, caller: _Caller, made: TraceLines | LogLines, limiter: Limiter
) -> BatchResult | Admitted | None:
    if not made.lines:
        return None
    org_id = caller.identity.org_id
    # /api/ingest's own road for a body of lines: a large export is prepared by the ingest worker processes.
    return admit_body(
        settings,
        org_id,
        made.body,
        None,
        header_app_key=None,
        idempotency_key=made.idempotency_key,
        take_events=item_taker(settings, limiter, org_id, caller.quota),
    )


async def _counted(
    settings: Settings, caller: _Caller, admission: BatchResult | Admitted, ip: str
) -> BatchResult:
    """Landed through the front door, awaited on the event loop; the key's use counted."""
    result = await landed(admission)
    if not result.replayed and result.accepted:
        count_key_use(
            settings, caller.identity.org_id, "app", caller.identity.app_key_id, events=result.accepted, ip=ip
        )
    return result


def _partial_success(made: TraceLines, result: BatchResult | None) -> tuple[int, list[str]]:
    """Spans refused and why: those the conversion refused, and those of lines the ingest service rejected."""
    count, reasons = made.rejected_spans, list(made.reasons)
    for rejected in result.rejected if result is not None else []:
        index = int(rejected["line"]) - 1
        if 0 <= index < len(made.labels):
            count += made.spans_per_line[index]
            reasons.append(f"{made.labels[index]}: {rejected['error']}")
    return count, reasons


def _log_partial_success(made: LogLines, result: BatchResult | None) -> tuple[int, list[str]]:
    """Records refused and why: those the conversion refused, and those the ingest service rejected."""
    count, reasons = made.rejected_records, list(made.reasons)
    for rejected in result.rejected if result is not None else []:
        index = int(rejected["line"]) - 1
        if 0 <= index < len(made.labels):
            count += 1
            reasons.append(f"{made.labels[index]}: {rejected['error']}")
    return count, reasons


M = TypeVar("M", TraceLines, LogLines)


@dataclass
class _Export(Generic[M]):
    """How far one export got off the event loop: its caller, inflated body, lines and admission."""

    caller: _Caller
    raw: bytes
    made: M | None = None
    admission: BatchResult | Admitted | None = None
    admitted: bool = False


async def _accepted(
    request: Request,
    project_id: str,
    settings: Settings,
    limiter: Limiter,
    convert: Callable[[bytes, str, str, QuotaCheck], M],
) -> tuple[str, M, BatchResult | None]:
    """The export's media type, its lines and how they landed. The key is checked before the body is
    inflated. A small export is identified, inflated, converted and admitted in one hop to the admission
    threads; a step whose input outgrows :data:`~api.admission.SMALL_BODY_BYTES` goes on in hops of its own,
    judged by that input's size (api/admission.py), so a large export never holds the threads one-event
    requests wait for."""
    require_disk_room(settings)  # before anything is read or written (stacklens/disk_floor.py)
    if not _is_project_id(project_id):
        raise NotFound(PROJECT_ID_RULE)
    body = await read_body(request, MAX_ENVELOPE_BYTES)
    media = media_type(request.headers.get("content-type"))
    decoded = DecodedBody(body, request.headers.get("content-encoding"), MAX_DECODED_BYTES, "OTLP body")
    key = request.headers.get(APP_KEY_HEADER) or auth_key(request.headers, request.query_params)

    # What a run of the road stopped by a step that may block had already done (api/admission.py runs it
    # again on a thread): its conversion is kept, not made twice — the conversion has no effect to undo,
    # but it is the export's costliest step, and a control-store read that is no longer cached stops the
    # admission after it.
    progress: list[_Export[M]] = []

    def road() -> _Export[M]:
        if not progress:
            progress.append(_Export(_identify(settings, project_id, key), decoded.rest()))
        export = progress[0]
        if export.made is None and len(export.raw) <= SMALL_BODY_BYTES:
            export.made = convert(
                export.raw, media, key or "", _quota_check(settings, export.caller, limiter)
            )
        if export.made is not None and len(export.made.body) <= SMALL_BODY_BYTES:
            export.admission = _admit(settings, export.caller, export.made, limiter)
            export.admitted = True
        return export

    export = await admitted(len(body), road)
    made = export.made
    if made is None:
        check = _quota_check(settings, export.caller, limiter)
        made = await admitted(len(export.raw), convert, export.raw, media, key or "", check)
    admission = export.admission
    if not export.admitted:
        admission = await admitted(len(made.body), _admit, settings, export.caller, made, limiter)
    if admission is None:
        return media, made, None
    return media, made, await _counted(settings, export.caller, admission, client_ip(request))


async def _accept_traces(request: Request, project_id: str, settings: Settings, limiter: Limiter) -> bytes:
    """Authenticate before inflating; decompressing, parsing and landing run off the event loop."""
    media, made, result = await _accepted(request, project_id, settings, limiter, _trace_lines)
    rejected, reasons = _partial_success(made, result)
    return export_answer("traces", media, rejected, reasons)


async def _accept_logs(request: Request, project_id: str, settings: Settings, limiter: Limiter) -> bytes:
    media, made, result = await _accepted(request, project_id, settings, limiter, _log_lines)
    rejected, reasons = _log_partial_success(made, result)
    return export_answer("logs", media, rejected, reasons)


def _trace_lines(raw: bytes, media: str, key: str, check: QuotaCheck) -> TraceLines:
    """Decode and convert, holding a large-decode slot for a large body (its spans are counted, and an
    export over the bounds or the quotas refused, before any is converted)."""
    with large_decode_slot(len(raw)):
        export = read_traces(raw, media)
        check("transaction", transactions_at_least(export))
        return trace_lines(export, key)


def _log_lines(raw: bytes, media: str, key: str, check: QuotaCheck) -> LogLines:
    with large_decode_slot(len(raw)):
        export = read_logs(raw, media)
        check("log", records_at_least(export))
        return log_lines(export, key)


Accept = Callable[[Request, str, Settings, Limiter], Awaitable[bytes]]


async def _answer(
    signal: Signal, accept: Accept, request: Request, project_id: str, settings: Settings, limiter: Limiter
) -> Response:
    """The export's answer, or its refusal as a ``google.rpc.Status`` with the API's status and headers."""
    media = answer_media(request.headers.get("content-type"))
    try:
        return Response(await accept(request, project_id, settings, limiter), media_type=media)
    except ApiError as exc:
        status, word, detail, headers = exc.status, exc.error, exc.detail, exc.headers
    except StackLensError as exc:
        status, word, headers = domain_error_answer(exc)
        detail = str(exc)
    except OperationalError as exc:
        log.error("answered 503 on %s, the warehouse is unavailable: %s", request.url.path, exc)
        status, word, detail, headers = 503, SERVICE_UNAVAILABLE, str(exc), {"Retry-After": "30"}
    except Exception:
        log.exception("unhandled error on %s", request.url.path)
        status, word, detail, headers = (
            500,
            "Internal Server Error",
            "the export failed; it has been logged",
            {},
        )
    message = f"{word}: {detail}" if detail else word
    body = failure_status(signal, media, status, message, headers.get("Retry-After"))
    return Response(body, status_code=status, media_type=media, headers=headers)


@router.post("/{project_id}/otlp/v1/traces", response_model=ExportAnswer, responses=ERRORS)
async def traces(request: Request, project_id: str) -> Response:
    """An OTLP/HTTP trace export (`ExportTraceServiceRequest`), protobuf or JSON, optionally gzip.

    Server spans (and other local roots) land as transactions and their descendants as their spans; span
    events named `exception` land as error events linked to the trace. Spans that cannot be stored are
    counted and named in `partialSuccess`; the rest land. The same export sent again lands nothing twice.
    Refusals answer a `google.rpc.Status` in the request's encoding.
    """
    settings = app_settings(request)  # no declared dependencies, as the other SDK routes (docs/decisions.md)
    return await _answer("traces", _accept_traces, request, project_id, settings, get_rate_limiter(settings))


@router.post("/{project_id}/otlp/v1/logs", response_model=LogsExportAnswer, responses=ERRORS)
async def logs(request: Request, project_id: str) -> Response:
    """An OTLP/HTTP logs export (`ExportLogsServiceRequest`), protobuf or JSON, optionally gzip.

    Each log record lands in the project's logs (time, severity, body, attributes, trace and span id, and
    the resource's service, release and environment), secrets scrubbed. Records that cannot be stored are
    counted and named in `partialSuccess`; the rest land. The same export sent again lands nothing twice.
    Refusals answer a `google.rpc.Status` in the request's encoding.
    """
    settings = app_settings(request)
    return await _answer("logs", _accept_logs, request, project_id, settings, get_rate_limiter(settings))
