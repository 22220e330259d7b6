"""OTLP log records → the ``log`` lines every other ingest road lands (one code path, docs/architecture.md
§11.4).

Each record becomes one ``log`` line whose payload is the record in Sentry's log shape
(:mod:`stacklens.ingest.logs`): times in epoch seconds, severity number and text, the body as text (a
structured body as JSON), ids as hex, and the attributes of the resource and the record (the record's win),
values trimmed as :mod:`stacklens.ingest.otlp.values` trims them. The resource gives the service
(``service.name``), release (``service.version``) and environment (``deployment.environment.name``).

Lines carry no ``ts``, so the same export always makes the same lines and a resent export lands nothing
twice (each record's key is a digest of what it says). A record with ids of the wrong length is rejected
alone, with its reason, for ``partial_success``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from stacklens.ingest.otlp.decode import LogExport
from stacklens.ingest.otlp.values import Notes, attributes, value_of

TRIMMED_ATTRIBUTE = "stacklens.trimmed"  # as stacklens.ingest.logs names it


@dataclass
class LogLines:
    """The lines an export becomes (one per record), how the answer names each, and the records refused."""

    lines: list[bytes] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    rejected_records: int = 0
    reasons: list[str] = field(default_factory=list)

    @property
    def body(self) -> bytes:
        return b"\n".join(self.lines)

    @property
    def idempotency_key(self) -> str:
        return "otlp-logs-" + hashlib.sha256(self.body).hexdigest()[:40]

    def reject(self, reason: str) -> None:
        self.rejected_records += 1
        self.reasons.append(reason)


def log_lines(export: LogExport, app_key: str) -> LogLines:
    """The lines of ``export``; records read but refused are counted with their reason."""
    out = LogLines()
    for reason in export.rejected:
        out.reject(reason)
    for batch in export.batches:
        resource_notes = Notes()
        resource = attributes(batch.resource.attributes, resource_notes, "resource")
        for index, record in enumerate(batch.records):
            label = f"log record {index} of scope {batch.scope_name[:60]!r}"
            problem = _id_problem(record)
            if problem is not None:
                out.reject(f"{label}: {problem}")
                continue
            payload = _payload(record, resource, resource_notes, batch.scope_name)
            out.lines.append(
                json.dumps(
                    {"v": 1, "type": "log", "app_key": app_key, "payload": payload},
                    separators=(",", ":"),
                    ensure_ascii=False,
                ).encode("utf-8", "replace")
            )
            out.labels.append(label)
    return out


def records_at_least(export: LogExport) -> int:
    """How many log lines ``export`` becomes (its records with readable ids), counted without converting
    one: the quotas refuse an export on this count before its conversion (issue #62)."""
    return sum(1 for batch in export.batches for record in batch.records if _id_problem(record) is None)


def _id_problem(record: LogRecord) -> str | None:
    # Ids are optional on a log record; when present they must be the spec's lengths.
    if record.trace_id and len(record.trace_id) != 16:
        return f"trace_id is {len(record.trace_id)} bytes; OTLP trace ids are 16 (or empty)"
    if record.span_id and len(record.span_id) != 8:
        return f"span_id is {len(record.span_id)} bytes; OTLP span ids are 8 (or empty)"
    return None


def _payload(
    record: LogRecord, resource: dict[str, Any], resource_notes: Notes, scope: str
) -> dict[str, Any]:
    notes = Notes()
    attrs: dict[str, Any] = {**resource, **attributes(record.attributes, notes, "attributes")}
    if scope:
        attrs.setdefault("otel.scope.name", scope)
    body: Any = value_of(record.body, notes, "body", 0) if record.HasField("body") else ""
    trimmed = [entry["name"] for entry in [*resource_notes.entries, *notes.entries]]
    if trimmed:
        attrs[TRIMMED_ATTRIBUTE] = ",".join(trimmed)
    payload: dict[str, Any] = {
        "source": "otlp",
        "timestamp": record.time_unix_nano / 1e9 if record.time_unix_nano else None,
        "observed_timestamp": record.observed_time_unix_nano / 1e9
        if record.observed_time_unix_nano
        else None,
        "severity_number": int(record.severity_number),
        "severity_text": record.severity_text,
        "body": body if isinstance(body, str) else json.dumps(body, separators=(",", ":"), default=str),
        "trace_id": record.trace_id.hex(),
        "span_id": record.span_id.hex(),
        "attributes": attrs,
    }
    for name, key in (
        ("service", "service.name"),
        ("release", "service.version"),
        ("environment", "deployment.environment.name"),
    ):
        value = resource.get(key) or (
            resource.get("deployment.environment") if name == "environment" else None
        )
        if isinstance(value, str) and value:
            payload[name] = value
    return payload
