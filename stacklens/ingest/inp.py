"""Standalone INP spans (``span`` lines) → ``transactions`` rows the performance views read INP from.

@sentry/browser reports Interaction to Next Paint when the page is hidden, as a standalone span of op
``ui.interaction.<type>`` rather than as a measurement of the page load. Two shapes arrive:

* @sentry/browser 11: a span container ``{"version": 2, "items": [span, …]}``, each span with typed
  ``attributes`` (``{"sentry.op": {"value": "ui.interaction.click", "type": "string"}, …}``) and the value
  under ``browser.web_vital.inp.value``;
* @sentry/browser 8–10: one span ``{"op": …, "data": {…}, "measurements": {"inp": {"value": …}}, …}``.

Each INP span becomes one row with ``op`` = the span's op, ``page`` = the normalised route of the page it
names, ``measurements`` = ``{"inp": ms}`` and ``duration_ms`` = the span's duration. ``event_id`` is derived
from the trace and span ids, so the same span sent twice lands once. Other spans are not stored.
"""

from __future__ import annotations

import math
import uuid
from typing import Any

import orjson

from stacklens.ingest import timeparse
from stacklens.ingest.fields import UNIT_TO_MS, Origin, dict_of, service_of, text, timestamp_of
from stacklens.ingest.route_templates import normalise_route
from stacklens.ingest.scrub import scrub_value
from stacklens.ingest.useragent import parse_user_agent

INP_OP_PREFIX = "ui.interaction"
INP_ATTRIBUTE = "browser.web_vital.inp.value"
_MAX_ITEMS = 1000  # a container holds the spans of one flush; more than this is not a browser's doing
# A fixed namespace: the same (trace id, span id) always gives the same event_id, on every server.
_SPAN_NAMESPACE = uuid.UUID("5f0c8f3e-6d1b-5c52-9a61-3b1f2e7d4a90")


def _flat(span: dict[str, Any]) -> dict[str, Any]:
    """Attributes (v2, typed) or data (v1) as ``{name: value}``."""
    out: dict[str, Any] = {}
    for name, item in dict_of(span.get("attributes")).items():
        out[str(name)] = item.get("value") if isinstance(item, dict) else item
    for name, value in dict_of(span.get("data")).items():
        out.setdefault(str(name), value)
    return out


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _inp_ms(span: dict[str, Any], attributes: dict[str, Any]) -> float | None:
    value = _number(attributes.get(INP_ATTRIBUTE))
    if value is not None:
        return value  # v2 attributes are in milliseconds
    item = dict_of(span.get("measurements")).get("inp")
    if isinstance(item, dict):
        value = _number(item.get("value"))
        return None if value is None else value * UNIT_TO_MS.get(item.get("unit") or "", 1.0)
    return _number(item)


def _op(span: dict[str, Any], attributes: dict[str, Any]) -> str:
    return text(span.get("op") or attributes.get("sentry.op"), 64)


def spans_of(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """The spans a ``span`` line carries: the container's items, or the payload itself (one v1 span)."""
    items = payload.get("items")
    if isinstance(items, list):
        return [item for item in items[:_MAX_ITEMS] if isinstance(item, dict)]
    return [payload] if payload else []


def is_inp(span: dict[str, Any]) -> bool:
    attributes = _flat(span)
    return _op(span, attributes).startswith(INP_OP_PREFIX) and _inp_ms(span, attributes) is not None


def holds_inp(payload: dict[str, Any]) -> bool:
    """Whether a ``span`` line carries at least one INP span (else the line is skipped, not stored)."""
    return any(is_inp(span) for span in spans_of(payload))


def inp_event_id(trace_id: str, span_id: str) -> str:
    return str(uuid.uuid5(_SPAN_NAMESPACE, f"{trace_id}:{span_id}"))


def inp_rows(payload: dict[str, Any], origin: Origin) -> list[dict[str, Any]]:
    """One ``transactions`` row per INP span of a ``span`` payload (other spans are left out)."""
    rows = []
    for span in spans_of(payload):
        # The event scrubber knows events and transactions; a span's attributes and data are scrubbed here
        # (sensitive names such as `password` or `http.request.header.authorization`, card numbers).
        span = {
            **span,
            **{key: scrub_value(span[key]) for key in ("attributes", "data", "tags") if key in span},
        }
        attributes = _flat(span)
        op, inp = _op(span, attributes), _inp_ms(span, attributes)
        if not op.startswith(INP_OP_PREFIX) or inp is None:
            continue
        span_id, trace_id = text(span.get("span_id"), 32), text(span.get("trace_id"), 64)
        if not span_id:
            raise ValueError("an INP span has no span_id")
        start = timestamp_of(span.get("start_timestamp"), origin)
        end = timeparse.to_epoch(span.get("end_timestamp") or span.get("timestamp")) or start
        # The page the interaction happened on: its URL when the span names one, else the route name
        # the SDK recorded for it (the page load's transaction name).
        url = text(attributes.get("url.full") or attributes.get("url"), 2048)
        name = text(attributes.get("sentry.transaction") or attributes.get("transaction"), 1024)
        browser, _, os_name, _ = parse_user_agent(text(attributes.get("user_agent.original"), 1024))
        user = next(
            (
                attributes[k]
                for k in ("user.id", "user.email", "user.name", "user.ip_address")
                if attributes.get(k)
            ),
            "",
        )
        sdk = text(attributes.get("sentry.sdk.name"), 64)
        rows.append(
            {
                "org_id": origin.org_id,
                "project_id": origin.project_id,
                "event_id": inp_event_id(trace_id, span_id),
                "trace_id": trace_id,
                "timestamp": timeparse.format_ms(start),
                "end_timestamp": timeparse.format_ms(max(end, start)),
                "received_at": timeparse.format_ms(origin.received_at),
                "batch_id": origin.batch_id,
                "platform": "javascript" if sdk.startswith("sentry.javascript") or not sdk else sdk,
                "release": text(attributes.get("sentry.release") or span.get("release"), 256),
                "environment": text(attributes.get("sentry.environment") or span.get("environment"), 128),
                "service": service_of(origin, {"service": text(attributes.get("service"), 64)}),
                "server_name": "",
                "transaction": name,
                "op": op,
                "status": text(span.get("status"), 64),
                "duration_ms": max(0.0, (end - start) * 1000.0),
                "page": normalise_route(url or name),
                "url": url,
                "http_method": "",
                "http_status": 0,
                "measurements": {"inp": inp},
                "browser_name": browser,
                "os_name": os_name,
                "user_key": text(user, 320),
                "tags": {},
                "payload": orjson.Fragment(orjson.dumps(span)),
            }
        )
    return rows
