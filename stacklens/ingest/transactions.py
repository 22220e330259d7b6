"""Sentry ``transaction`` payloads → one ``transactions`` row and its ``spans`` rows.

``page`` is the normalised route the performance views key by: for ``pageload`` / ``navigation`` the page
URL (``request.url``, else the ``url`` tag, else the transaction name); for ``http.server`` the route (the
transaction name when it is a path template such as ``/users/{id}``, else the request URL).
"""

from __future__ import annotations

import math
from typing import Any

from orjson import Fragment

from stacklens.ingest import timeparse
from stacklens.ingest.clock import time_shift
from stacklens.ingest.fields import (
    UNIT_TO_MS,
    Origin,
    client_of,
    common_columns,
    dict_of,
    string_map,
    text,
    timestamp_of,
)
from stacklens.ingest.route_templates import normalise_route

_MAX_SPANS = 2000
_BROWSER_OPS = frozenset({"pageload", "navigation"})
# Resource sizes by column, under the names each @sentry/browser generation uses: up to v10
# `http.response_content_length` etc.; v11 follows OpenTelemetry's semantic conventions
# (`http.response.body.size` etc.). The first name present wins, so a span carrying both agrees with v11.
SIZE_KEYS: dict[str, tuple[str, ...]] = {
    "response_content_length": ("http.response.body.size", "http.response_content_length"),
    "decoded_content_length": ("http.response.body.decoded_size", "http.decoded_response_content_length"),
    "transfer_size": ("http.response.size", "http.response_transfer_size"),
}
# HTTP method: OpenTelemetry's name (sentry-sdk 2.x, @sentry/browser v8+) first, then the older one.
METHOD_KEYS = ("http.request.method", "http.method")


_INT64_MAX = 2**63 - 1  # the size columns are Int64; a larger figure is nonsense, stored as unknown


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    number: int | None = None
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
    return number if number is not None and -_INT64_MAX <= number <= _INT64_MAX else None


def _first_int(data: dict[str, Any], keys: tuple[str, ...]) -> int | None:
    for key in keys:
        value = _int(data.get(key))
        if value is not None:
            return value
    return None


def _status_code(*sources: dict[str, Any]) -> int:
    for source in sources:
        for key in ("http.response.status_code", "status_code", "http.status_code"):
            code = _int(source.get(key))
            if code is not None and 100 <= code <= 599:
                return code
    return 0


def measurements(payload: dict[str, Any]) -> dict[str, float]:
    """``{name: value}`` in ms (cls and other unitless ratios as sent)."""
    out: dict[str, float] = {}
    for name, item in dict_of(payload.get("measurements")).items():
        value = item.get("value") if isinstance(item, dict) else item
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            continue
        unit = item.get("unit", "") if isinstance(item, dict) else ""
        out[str(name)[:64]] = float(value) * UNIT_TO_MS.get(unit, 1.0)
    return out


def page_of(payload: dict[str, Any], op: str, tags: dict[str, str]) -> tuple[str, str]:
    """``(page route, url)`` of a transaction."""
    request = dict_of(payload.get("request"))
    url = text(request.get("url"), 2048) or tags.get("url", "")
    name = text(payload.get("transaction"), 1024)
    if op in _BROWSER_OPS:
        return normalise_route(url or name), url
    source = text(dict_of(payload.get("transaction_info")).get("source"), 32)
    if name.startswith("/") and source != "url":
        return normalise_route(name), url
    return normalise_route(url or name), url


def transaction_row(
    payload: dict[str, Any], origin: Origin, raw_line: bytes, payload_json: str | Fragment
) -> dict[str, Any]:
    """One ``transactions`` row; ``payload_json`` is the scrubbed payload's JSON text (or an orjson
    Fragment)."""
    trace = dict_of(dict_of(payload.get("contexts")).get("trace"))
    trace_data = dict_of(trace.get("data"))
    tags = string_map(payload.get("tags"))
    request = dict_of(payload.get("request"))
    response = dict_of(dict_of(payload.get("contexts")).get("response"))
    op = text(trace.get("op"), 64)
    start = timestamp_of(payload.get("start_timestamp"), origin)
    # A replaced start moves the end with it, so the duration stays as measured.
    sent_end = timeparse.to_epoch(payload.get("timestamp"))
    end = sent_end + time_shift(payload, "transaction", origin) if sent_end is not None else start
    page, url = page_of(payload, op, tags)
    browser, _, os_name, _ = client_of(payload)
    method = request.get("method") or next((trace_data[k] for k in METHOD_KEYS if trace_data.get(k)), "")
    row = common_columns(payload, origin, raw_line, tags, payload_json)
    row.update(
        {
            "trace_id": text(trace.get("trace_id"), 64),
            "timestamp": timeparse.format_ms(start),
            "end_timestamp": timeparse.format_ms(max(end, start)),
            "op": op,
            "status": text(trace.get("status"), 64),
            "duration_ms": max(0.0, (end - start) * 1000.0),
            "page": page,
            "url": url,
            "http_method": text(method, 16).upper(),
            "http_status": _status_code(trace_data, response, tags),
            "measurements": measurements(payload),
            "browser_name": browser,
            "os_name": os_name,
        }
    )
    return row


def spans_rows(payload: dict[str, Any], transaction: dict[str, Any], origin: Origin) -> list[dict[str, Any]]:
    """The spans of a transaction, each carrying the transaction's page, release and service."""
    spans = payload.get("spans")
    if not isinstance(spans, list):
        return []
    rows = []
    # Spans move with a transaction whose time was replaced; a span still outside the kept window (its own
    # clock was off) starts with the transaction. Either way it keeps its duration.
    shift = time_shift(payload, "transaction", origin)
    transaction_start = timestamp_of(payload.get("start_timestamp"), origin)
    for span in spans[:_MAX_SPANS]:
        if not isinstance(span, dict):
            continue
        data = dict_of(span.get("data"))
        span_tags = string_map(span.get("tags"))
        start = timeparse.to_epoch(span.get("start_timestamp"))
        if start is None:
            continue
        end = timeparse.to_epoch(span.get("timestamp")) or start
        start, end = start + shift, end + shift
        if not origin.earliest <= start <= origin.latest:
            start, end = transaction_start, transaction_start + (end - start)
        op = text(span.get("op"), 64)
        description = text(span.get("description"), 2048)
        method = next((data[k] for k in METHOD_KEYS if data.get(k)), "")
        if not method and op.startswith("http") and " " in description:
            method = description.split(" ", 1)[0]
        row = {
            "org_id": origin.org_id,
            "project_id": origin.project_id,
            "transaction_event_id": transaction["event_id"],
            "trace_id": text(span.get("trace_id") or transaction["trace_id"], 64),
            "span_id": text(span.get("span_id"), 32),
            "parent_span_id": text(span.get("parent_span_id"), 32),
            "timestamp": timeparse.format_ms(start),
            "duration_ms": max(0.0, (end - start) * 1000.0),
            "received_at": transaction["received_at"],
            "op": op,
            "description": description,
            "status": text(span.get("status"), 64),
            "status_code": _status_code(data, span_tags),
            "http_method": text(method, 16).upper() if text(method, 16).isalpha() else "",
            "transaction": transaction["transaction"],
            "transaction_op": transaction["op"],
            "page": transaction["page"],
            "release": transaction["release"],
            "environment": transaction["environment"],
            "service": transaction["service"],
            "render_blocking_status": text(data.get("resource.render_blocking_status"), 32),
            "data": string_map(data),
        }
        for column, keys in SIZE_KEYS.items():
            row[column] = _first_int(data, keys)
        rows.append(row)
    return rows
