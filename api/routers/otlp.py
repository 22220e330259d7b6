"""`POST /api/{project_id}/otlp/v1/traces` and `…/v1/logs`: OpenTelemetry's OTLP/HTTP exporters pointed at StackLens (DESIGN §8.2).

Authentication is the project's app key, in ``X-Stacklens-App-Key`` (what ``OTEL_EXPORTER_OTLP_HEADERS``
sets) or any form the envelope endpoint reads (``X-Sentry-Auth``, ``Authorization: Sentry …``/``DSN …``,
``?sentry_key=``); it is checked before the body is inflated. Bodies are protobuf or JSON, optionally gzip (or
deflate, br, zstd), inflated as a bounded stream; JSON passes the depth guard. The spans become log lines
(:mod:`stacklens.ingest.otlp_traces`) that land through the same ingest service as `/api/ingest`, under the
organization's event quota, exactly once. The answer is an ``ExportTraceServiceResponse`` in the request's
encoding, with ``partial_success`` naming the spans refused and why.

Log records (``ExportLogsServiceRequest``) take the same road: each becomes a ``log`` line
(:mod:`stacklens.ingest.otlp_logs`) landing in the ``logs`` table; the answer is an
``ExportLogsServiceResponse`` whose ``partial_success`` counts ``rejected_log_records``.
"""

from __future__ import annotations

from dataclasses import dataclass

from clickhouse_connect.driver.exceptions import OperationalError
from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from pydantic import BaseModel, Field

from api.deps import AppSettings, Limiter, client_ip
from api.errors import APPLICATION_NOT_FOUND, SERVICE_UNAVAILABLE, ApiError, domain_error_answer
from api.routers.auth import ErrorBody
from api.routers.ingest import read_body
from stacklens.control.activity import record_key_use
from stacklens.control.auth import AppKeyIdentity, find_app_key
from stacklens.control.db import session_scope
from stacklens.control.models import Organization
from stacklens.errors import NotFound, StackLensError
from stacklens.ingest.envelope import MAX_DECODED_BYTES, MAX_ENVELOPE_BYTES, auth_key
from stacklens.ingest.inflate import DecodedBody
from stacklens.ingest.otlp_decode import PROTOBUF, media_type, read_logs, read_traces
from stacklens.ingest.otlp_logs import LogLines, log_lines
from stacklens.ingest.otlp_traces import TraceLines, trace_lines
from stacklens.ingest.service import BatchResult, ingest_batch
from stacklens.ingest.workers import AppKeyResolver
from stacklens.settings import Settings

router = APIRouter(prefix="/api", tags=["opentelemetry"])

APP_KEY_HEADER = "x-stacklens-app-key"
MAX_REASONS = 20  # reasons spelled out in partial_success.error_message (the count stays exact)
PROJECT_ID_RULE = "the project id in the OTLP endpoint is a number (of at most 18 digits)"
ERRORS: dict[int | str, dict] = {
    400: {
        "model": ErrorBody,
        "description": "Unreadable body (not OTLP protobuf or JSON, bad gzip, too deep)",
    },
    401: {"model": ErrorBody, "description": "No app key (X-Stacklens-App-Key, X-Sentry-Auth or sentry_key)"},
    403: {"model": ErrorBody, "description": "The key is not a current app key of this project"},
    413: {"model": ErrorBody, "description": "Body over 20 MiB, or inflated body over 64 MiB"},
    415: {"model": ErrorBody, "description": "Content-Type other than protobuf or JSON; unknown encoding"},
    429: {
        "model": ErrorBody,
        "description": "`Rate Limited`: the organization's event quota, with Retry-After",
    },
    503: {"model": ErrorBody, "description": "`Service Unavailable`: the warehouse is down; retry"},
}


class PartialSuccess(BaseModel):
    rejectedSpans: str = Field(description="How many spans were refused (an int64, as text in OTLP JSON).")
    errorMessage: str = Field(description="Which spans were refused and why.")


class LogsPartialSuccess(BaseModel):
    rejectedLogRecords: str = Field(
        description="How many log records were refused (an int64, as text in OTLP JSON)."
    )
    errorMessage: str = Field(description="Which log records were refused and why.")


class LogsExportAnswer(BaseModel):
    partialSuccess: LogsPartialSuccess | None = Field(
        default=None, description="Present only when some log records were refused."
    )


class ExportAnswer(BaseModel):
    partialSuccess: PartialSuccess | None = Field(
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
    with session_scope(settings) as session:
        identity = find_app_key(session, key)
        org = session.get(Organization, identity.org_id) if identity else None
        quota = org.events_per_minute if org else 0
    if identity is None or str(identity.project_id) != project_id:
        # An unknown key and a key of another project answer alike: nothing about other projects leaks.
        raise ApiError(
            403, APPLICATION_NOT_FOUND, f"the key is not a current app key of project {project_id}"
        )
    return _Caller(identity, quota)


def _land(
    settings: Settings, caller: _Caller, made: TraceLines | LogLines, limiter: Limiter, ip: str
) -> BatchResult | None:
    if not made.lines:
        return None
    org_id = caller.identity.org_id
    result = ingest_batch(
        settings,
        org_id,
        made.body,
        header_app_key=None,
        idempotency_key=made.idempotency_key,
        resolve=AppKeyResolver(settings, org_id),
        take_events=lambda n: limiter.take_events(org_id, n, caller.quota),
    )
    if not result.replayed and result.accepted:
        with session_scope(settings) as session:
            record_key_use(session, org_id, "app", caller.identity.app_key_id, events=result.accepted, ip=ip)
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


def _shown_reasons(reasons: list[str]) -> str:
    shown = "; ".join(reasons[:MAX_REASONS])
    if len(reasons) > MAX_REASONS:
        shown += f"; and {len(reasons) - MAX_REASONS} more"
    return shown


def _log_partial_success(made: LogLines, result: BatchResult | None) -> tuple[int, list[str]]:
    """Records refused and why: those the conversion refused, and those the ingest service rejected."""
    count, reasons = made.rejected_records, list(made.reasons)
    for rejected in result.rejected if result is not None else []:
        index = int(rejected["line"]) - 1
        if 0 <= index < len(made.labels):
            count += 1
            reasons.append(f"{made.labels[index]}: {rejected['error']}")
    return count, reasons


def _logs_answer(media: str, rejected: int, reasons: list[str]) -> Response:
    answer = ExportLogsServiceResponse()
    if rejected or reasons:
        answer.partial_success.rejected_log_records = rejected
        answer.partial_success.error_message = _shown_reasons(reasons)
    if media == PROTOBUF:
        return Response(answer.SerializeToString(), media_type=PROTOBUF)
    return Response(json_format.MessageToJson(answer, indent=None), media_type="application/json")


def _answer(media: str, rejected: int, reasons: list[str]) -> Response:
    answer = ExportTraceServiceResponse()
    if rejected or reasons:
        answer.partial_success.rejected_spans = rejected
        answer.partial_success.error_message = _shown_reasons(reasons)
    if media == PROTOBUF:
        return Response(answer.SerializeToString(), media_type=PROTOBUF)
    return Response(json_format.MessageToJson(answer, indent=None), media_type="application/json")


async def _authenticated(
    request: Request, project_id: str, settings: Settings
) -> tuple[str, str | None, _Caller, bytes]:
    """The media type, key, caller and inflated body: the key is checked before the body is inflated."""
    if not _is_project_id(project_id):
        raise NotFound(PROJECT_ID_RULE)
    body = await read_body(request, MAX_ENVELOPE_BYTES)
    media = media_type(request.headers.get("content-type"))
    decoded = DecodedBody(body, request.headers.get("content-encoding"), MAX_DECODED_BYTES, "OTLP body")
    key = request.headers.get(APP_KEY_HEADER) or auth_key(request.headers, request.query_params)
    caller = await run_in_threadpool(_identify, settings, project_id, key)
    raw = await run_in_threadpool(decoded.rest)
    return media, key, caller, raw


async def _accept(request: Request, project_id: str, settings: Settings, limiter: Limiter) -> Response:
    """Authenticate before inflating; decompressing, parsing and landing run off the event loop."""
    media, key, caller, raw = await _authenticated(request, project_id, settings)
    export = await run_in_threadpool(read_traces, raw, media)
    made = await run_in_threadpool(trace_lines, export, key or "")
    result = await run_in_threadpool(_land, settings, caller, made, limiter, client_ip(request))
    rejected, reasons = _partial_success(made, result)
    return _answer(media, rejected, reasons)


@router.post("/{project_id}/otlp/v1/traces", response_model=ExportAnswer, responses=ERRORS)
async def traces(request: Request, project_id: str, settings: AppSettings, limiter: Limiter) -> Response:
    """An OTLP/HTTP trace export (`ExportTraceServiceRequest`), protobuf or JSON, optionally gzip.

    Server spans (and other local roots) land as transactions and their descendants as their spans; span
    events named `exception` land as error events linked to the trace. Spans that cannot be stored are
    counted and named in `partialSuccess`; the rest land. The same export sent again lands nothing twice.
    """
    try:
        return await _accept(request, project_id, settings, limiter)
    except StackLensError as exc:
        status, word, headers = domain_error_answer(exc)
        raise ApiError(status, word, str(exc), headers) from None
    except OperationalError as exc:
        raise ApiError(503, SERVICE_UNAVAILABLE, str(exc), {"Retry-After": "30"}) from exc


async def _accept_logs(request: Request, project_id: str, settings: Settings, limiter: Limiter) -> Response:
    media, key, caller, raw = await _authenticated(request, project_id, settings)
    export = await run_in_threadpool(read_logs, raw, media)
    made = await run_in_threadpool(log_lines, export, key or "")
    result = await run_in_threadpool(_land, settings, caller, made, limiter, client_ip(request))
    rejected, reasons = _log_partial_success(made, result)
    return _logs_answer(media, rejected, reasons)


@router.post("/{project_id}/otlp/v1/logs", response_model=LogsExportAnswer, responses=ERRORS)
async def logs(request: Request, project_id: str, settings: AppSettings, limiter: Limiter) -> Response:
    """An OTLP/HTTP logs export (`ExportLogsServiceRequest`), protobuf or JSON, optionally gzip.

    Each log record lands in the project's logs (time, severity, body, attributes, trace and span id, and
    the resource's service, release and environment), secrets scrubbed. Records that cannot be stored are
    counted and named in `partialSuccess`; the rest land. The same export sent again lands nothing twice.
    """
    try:
        return await _accept_logs(request, project_id, settings, limiter)
    except StackLensError as exc:
        status, word, headers = domain_error_answer(exc)
        raise ApiError(status, word, str(exc), headers) from None
    except OperationalError as exc:
        raise ApiError(503, SERVICE_UNAVAILABLE, str(exc), {"Retry-After": "30"}) from exc
