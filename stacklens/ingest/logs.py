"""``log`` lines → rows of ``logs``: one log record each, from a Sentry SDK or an OpenTelemetry exporter.

A ``log`` line's payload is one record in Sentry's log shape (what sentry-python's ``enable_logs`` sends in a
``log`` envelope item, one record of its ``items``; :mod:`stacklens.ingest.otlp.logs` writes OTLP records in
the same shape)::

    {"timestamp": 1764041700.123, "level": "warn", "severity_number": 13, "body": "…",
     "trace_id": "<32 hex>", "span_id": "<16 hex>",
     "attributes": {"sentry.release": {"value": "1.2.0", "type": "string"}, "user.id": 42, …}}

``observed_timestamp``, ``severity_text``, ``service``, ``release``, ``environment`` and ``source`` may be
given as well. Attribute values are either Sentry's ``{"value", "type"}`` or plain JSON values; all are stored
as text. Release, environment and service come from the fields, else from the attributes Sentry
(``sentry.release``, ``sentry.environment``) and OpenTelemetry (``service.version``,
``deployment.environment.name``, ``service.name``) use; a per-service app key's service wins, as for events.

Secrets are scrubbed as in event strings (:func:`stacklens.ingest.scrub.scrub_payload`): sensitive attribute
names are filtered, card numbers and secret shapes in the body and values are replaced. Times follow the
events' clock (:mod:`stacklens.ingest.clock`): a time the log retention would expire at once, or more than a
minute ahead, is replaced by the receive time and the record keeps what was sent in the attribute
``stacklens.sent_timestamp``. A value too long is cut and named in ``stacklens.trimmed``.

Every row carries a ``dedup_key``, a digest of the project and the record as sent: the same record sent
again (a resent envelope, a retried export) lands once.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from stacklens.ingest import timeparse
from stacklens.ingest.fields import Origin
from stacklens.ingest.scrub import scrub_payload

LOG_TYPE = "log"
MAX_BODY_CHARS = 16 * 1024
MAX_VALUE_CHARS = 8192  # one attribute value (as the OTLP reader cuts them)
MAX_KEY_CHARS = 256
MAX_ATTRIBUTES = 512
MAX_RELEASE = 200
MAX_ENVIRONMENT = 64
MAX_SERVICE = 128
MAX_FUTURE_SECONDS = 60.0
SENT_TIME_ATTRIBUTE = "stacklens.sent_timestamp"
TRIMMED_ATTRIBUTE = "stacklens.trimmed"
# Severity words by OTLP's number ranges (1–4 trace, 5–8 debug, 9–12 info, 13–16 warn, 17–20 error, 21–24
# fatal).
LEVELS = ("trace", "debug", "info", "warn", "error", "fatal")
# Level text → the first number of its range; Python's and syslog's words too.
_LEVEL_NUMBER = {
    "trace": 1,
    "debug": 5,
    "info": 9,
    "information": 9,
    "notice": 10,
    "warn": 13,
    "warning": 13,
    "error": 17,
    "err": 17,
    "critical": 21,
    "fatal": 21,
    "emergency": 21,
    "alert": 21,
}
_HEX = re.compile(r"^[0-9a-f]*$")

# The columns of `logs` (migration 0012), in the order a row lists them.
COLUMNS = (
    "org_id",
    "project_id",
    "timestamp",
    "observed",
    "severity",
    "severity_number",
    "severity_text",
    "body",
    "attributes",
    "trace_id",
    "span_id",
    "service",
    "release",
    "environment",
    "source",
    "received",
    "batch_id",
    "dedup_key",
)


class BadLog(ValueError):
    """Why a log record is rejected; the message names the field and goes to the sender as is."""


@dataclass(frozen=True)
class LogWindow:
    """The times the ``logs`` table keeps, from its own retention: ``(earliest, latest)`` epoch seconds."""

    earliest: float
    latest: float


def log_window(received: float, retention_days: int) -> LogWindow:
    # A day of margin, as the events' clock keeps: a record about to expire is not worth storing under its
    # time.
    return LogWindow(received - retention_days * 86_400.0 + 86_400.0, received + MAX_FUTURE_SECONDS)


def severity_of(number: int) -> str:
    """The level word of an OTLP severity number (``''`` for 0, unspecified)."""
    return LEVELS[(number - 1) // 4] if 1 <= number <= 24 else ""


def level_range(level: str) -> tuple[int, int]:
    """The severity numbers a level word covers (``warn`` → 13–16)."""
    index = LEVELS.index(level)
    return index * 4 + 1, index * 4 + 4


def log_row(
    payload: dict[str, Any],
    raw: bytes,
    shape: bytes,
    origin: Origin,
    window: LogWindow,
    line_key: str | None = None,
) -> dict[str, Any]:
    """The row of one ``log`` payload; raises :class:`BadLog` naming the field."""
    digest = hashlib.sha256(f"{origin.project_id}\n".encode())
    digest.update(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS))
    trimmed: list[str] = []
    attributes = _attributes(payload.get("attributes"), trimmed)
    body = _body(payload.get("body"), trimmed)
    # Scrubbed as an event's strings are: a sensitive attribute name filters its value, cards and secret
    # shapes in the body and values are replaced (``extra`` is scrubbed as a whole, names and strings).
    scrubbed = scrub_payload({"extra": {"body": body, "attributes": attributes}}, raw, shape, line_key)[
        "extra"
    ]
    body, attributes = scrubbed["body"], {k: _flat(v) for k, v in scrubbed["attributes"].items()}
    sent = payload.get("timestamp")
    observed = _time(payload.get("observed_timestamp"))
    if observed is not None and not window.earliest <= observed <= window.latest:
        observed = None
    if _absent(sent):
        # No time of its own (OTLP allows it): when it was observed, else the line's time, else now.
        sent = None
        timestamp = observed or (timeparse.to_epoch(origin.line_ts) if origin.line_ts else None)
        timestamp = origin.received_at if timestamp is None else timestamp
    else:
        given = _time(sent)
        timestamp = origin.received_at if given is None else given
    if not window.earliest <= timestamp <= window.latest or (sent is not None and _time(sent) is None):
        # Unreadable, before what the retention keeps or over a minute ahead: stored under the receive time,
        # the time as sent kept with the record (the events' rule, stacklens.ingest.clock).
        attributes[SENT_TIME_ATTRIBUTE] = _flat(sent)[:64]
        timestamp = origin.received_at
    observed = timestamp if observed is None else observed
    number, text = _severity(payload, attributes)
    if trimmed:
        attributes[TRIMMED_ATTRIBUTE] = ",".join(trimmed)[:MAX_VALUE_CHARS]
    return {
        "org_id": origin.org_id,
        "project_id": origin.project_id,
        "timestamp": _format_us(timestamp),
        "observed": _format_us(observed),
        "severity": severity_of(number),
        "severity_number": number,
        "severity_text": text,
        "body": body,
        "attributes": attributes,
        "trace_id": _hex_id(payload.get("trace_id"), "trace_id", 32),
        "span_id": _hex_id(payload.get("span_id"), "span_id", 16),
        "service": (origin.service or _word(payload, attributes, MAX_SERVICE, "service", "service.name"))[
            :MAX_SERVICE
        ],
        "release": _word(payload, attributes, MAX_RELEASE, "release", "sentry.release", "service.version"),
        "environment": _word(
            payload,
            attributes,
            MAX_ENVIRONMENT,
            "environment",
            "sentry.environment",
            "deployment.environment.name",
            "deployment.environment",
        ),
        "source": "otlp" if payload.get("source") == "otlp" else "sentry",
        "received": timeparse.format_ms(origin.received_at),
        "batch_id": origin.batch_id,
        "dedup_key": digest.hexdigest()[:32],
    }


def _attributes(value: Any, trimmed: list[str]) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadLog("`attributes` must be an object of name → value (or {value, type})")
    out: dict[str, Any] = {}
    for index, (key, item) in enumerate(value.items()):
        if index >= MAX_ATTRIBUTES:
            trimmed.append(f"attributes ({len(value)} > {MAX_ATTRIBUTES})")
            break
        name = str(key)[:MAX_KEY_CHARS]
        if not name:
            continue
        # Sentry's typed form {"value": …, "type": "string" | "integer" | "double" | "boolean"}.
        plain = item.get("value") if isinstance(item, dict) and "value" in item and "type" in item else item
        text = _flat(plain)
        if len(text) > MAX_VALUE_CHARS:
            trimmed.append(f"attributes.{name[:64]}")
            text = text[:MAX_VALUE_CHARS]
        out[name] = text
    return out


def _flat(value: Any) -> str:
    """An attribute value as the text stored: as written for text, numbers and booleans, JSON for the rest."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, int | float):
        return str(value)
    return orjson.dumps(value, default=str).decode()


def _body(value: Any, trimmed: list[str]) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else _flat(value)
    if len(text) > MAX_BODY_CHARS:
        trimmed.append("body")
        return text[:MAX_BODY_CHARS]
    return text


def _absent(value: Any) -> bool:
    return value is None or value == "" or (value == 0 and not isinstance(value, bool))


def _time(value: Any) -> float | None:
    """Epoch seconds of a plausible time (2000–2100), else ``None``."""
    return None if _absent(value) else timeparse.to_epoch(value)


def _severity(payload: dict[str, Any], attributes: dict[str, str]) -> tuple[int, str]:
    text = payload.get("severity_text", payload.get("level"))
    if text is not None and not isinstance(text, str):
        raise BadLog(f"`level` must be text such as info or error, not {_shown(text)}")
    text = (text or "")[:32]
    number = payload.get("severity_number")
    sentry_number = attributes.get("sentry.severity_number", "")
    if number is None and sentry_number.isdigit():
        number = int(sentry_number)  # sentry-python sends the number as an attribute
    if number is not None and (
        isinstance(number, bool) or not isinstance(number, int) or not 0 <= number <= 24
    ):
        raise BadLog(f"`severity_number` must be a whole number from 0 to 24, not {_shown(number)}")
    if not number:
        number = _LEVEL_NUMBER.get(text.strip().lower(), 0)
    return int(number), text


def _hex_id(value: Any, field: str, digits: int) -> str:
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        raise BadLog(f"`{field}` must be {digits} hex digits, not {_shown(value)}")
    hex_id = value.strip().lower().replace("-", "")
    if len(hex_id) != digits or not _HEX.match(hex_id):
        raise BadLog(f"`{field}` must be {digits} hex digits, not {_shown(value)}")
    return "" if not hex_id.strip("0") else hex_id


def _word(payload: dict[str, Any], attributes: dict[str, str], limit: int, field: str, *names: str) -> str:
    value = payload.get(field)
    if isinstance(value, str) and value:
        return value[:limit]
    for name in names:
        if attributes.get(name):
            return attributes[name][:limit]
    return ""


def _format_us(seconds: float) -> str:
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")


def _shown(value: Any) -> str:
    shown = orjson.dumps(value, default=str).decode() if not isinstance(value, int) else str(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."
