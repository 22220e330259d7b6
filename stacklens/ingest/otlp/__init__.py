"""OpenTelemetry's OTLP/HTTP exports (`POST /api/{project_id}/otlp/v1/traces` and `…/v1/logs`) turned into the
log lines every other ingest road lands (docs/architecture.md §11.1, §11.4): one code path, so the same
quotas, scrubbing, grouping and front door.

The walk of an export, in order: :mod:`.decode` (the body into OpenTelemetry's protobuf messages, bounded) →
:mod:`.traces` (spans into ``transaction`` and ``event`` lines; one span read by :mod:`.spans`, its values by
:mod:`.values`, an exception's stack by :mod:`.stacks`, the payloads typed in :mod:`.trace_payloads`) or
:mod:`.logs` (records into ``log`` lines) → the ingest service and the front door
(:mod:`stacklens.ingest.front_door`) → :mod:`.answers` (the response in the request's encoding).
"""

from __future__ import annotations

from stacklens.ingest.otlp.answers import Signal, answer_media, export_answer, failure_status
from stacklens.ingest.otlp.decode import large_decode_slot, media_type, read_logs, read_traces
from stacklens.ingest.otlp.logs import LogLines, log_lines, records_at_least
from stacklens.ingest.otlp.traces import TraceLines, trace_lines, transactions_at_least

__all__ = [
    "LogLines",
    "Signal",
    "TraceLines",
    "answer_media",
    "export_answer",
    "failure_status",
    "large_decode_slot",
    "log_lines",
    "media_type",
    "read_logs",
    "read_traces",
    "records_at_least",
    "trace_lines",
    "transactions_at_least",
]
