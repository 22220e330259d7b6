"""The waterfall of one transaction (usually a page load): navigation phases, every span as a bar relative to
the transaction's start, resources typed and render-blocking ones marked, API calls, and the FCP / LCP
markers."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Any

from clickhouse_connect.driver.client import Client
from typing_extensions import TypedDict

from stacklens.warehouse.queries import run_query

# @sentry/browser names the navigation-timing spans by version: op `browser` + description (v7),
# op `browser.<name>` (v8-v10), snake_case names (v11). Each maps to one phase.
PHASES = {
    "domainlookup": "DNS",
    "domain_lookup": "DNS",
    "connect": "Connect",
    "tls": "TLS",
    "request": "Request",
    "response": "Response",
    "domcontentloadedevent": "DOM ready",
    "dom_content_loaded_event": "DOM ready",
    "loadevent": "Load",
    "load_event": "Load",
    "cache": "Cache",
    "unloadevent": "Unload",
    "unload_event": "Unload",
}
PHASE_ORDER = ["Unload", "Cache", "DNS", "Connect", "TLS", "Request", "TTFB", "Response", "DOM ready", "Load"]
_JS = re.compile(r"\.m?js(\?|#|$)")
_CSS = re.compile(r"\.css(\?|#|$)")
_IMG = re.compile(r"\.(png|jpe?g|gif|webp|avif|svg|ico|bmp|tiff?)(\?|#|$)")
_FONT = re.compile(r"\.(woff2?|ttf|otf|eot)(\?|#|$)")


def span_type(op: str, description: str) -> str:
    """JavaScript / CSS / Images / Fonts / API / Other / Phase / <op> — the same rule as the resource
    queries."""
    if op.startswith("browser"):
        return "Phase"
    if op == "resource.script" or (op.startswith("resource.") and _JS.search(description)):
        return "JavaScript"
    if op == "resource.css" or (op.startswith("resource.") and _CSS.search(description)):
        return "CSS"
    if op == "resource.img" or (op.startswith("resource.") and _IMG.search(description)):
        return "Images"
    if op == "resource.font" or (op.startswith("resource.") and _FONT.search(description)):
        return "Fonts"
    if op in ("http.client", "resource.fetch", "resource.xmlhttprequest"):
        return "API"
    return "Other" if op.startswith("resource.") else op or "Other"


# Why a span has no HTTP status: @sentry/browser reports one for fetch / XHR calls (http.client spans), never
# for the resources a page loads (its resource timing entries carry sizes and timings, no response status).
NO_STATUS_CACHED = "served from the browser cache: no request was made (transfer size 0)"
NO_STATUS_RESOURCE = "not reported: the browser SDK sends no HTTP status for the resources a page loads"
NO_STATUS_CALL = "not reported by the SDK for this call"


def status_of(raw: dict[str, Any]) -> dict[str, str]:
    """``{"status", "status_note"}`` of a waterfall row: its HTTP status when stored, else the span's own
    status (``internal_error``, …) for a call, else why there is none — ``cached`` for a resource the browser
    took from its cache (a transfer size of 0), ``not reported`` otherwise, with the reason in full."""
    code = int(raw.get("status_code") or 0)
    if code:
        return {"status": str(code), "status_note": ""}
    op = str(raw.get("op") or "")
    if op.startswith("resource."):
        if raw.get("transfer_size") == 0:
            return {"status": "cached", "status_note": NO_STATUS_CACHED}
        return {"status": "not reported", "status_note": NO_STATUS_RESOURCE}
    own = str(raw.get("span_status") or "")
    if own and own not in ("ok", "unknown"):
        return {
            "status": own.replace("_", " "),
            "status_note": f"the span's status ({own}): no HTTP status sent",
        }
    return {"status": "not reported", "status_note": NO_STATUS_CALL}


def _phase_name(op: str, description: str) -> str:
    key = op[len("browser.") :] if op.startswith("browser.") else description
    return PHASES.get(key.lower(), "")


def _ms(value: datetime, origin: datetime) -> float:
    return (value.replace(tzinfo=UTC) - origin.replace(tzinfo=UTC)).total_seconds() * 1000.0


class WaterfallSpan(TypedDict):
    """One span as a bar: its offset from the transaction's start and its type (:func:`span_type`)."""

    span_id: str
    op: str
    type: str
    description: str
    start_ms: float
    duration_ms: float
    status_code: int
    status: str  # the HTTP status as the table shows it, or why there is none (:func:`status_of`)
    status_note: str  # the reason in full, for a tooltip ('' beside an HTTP status)
    render_blocking: str  # blocking | non-blocking | unknown (a resource the browser did not say of) | ''
    bytes: int | None
    decoded_bytes: int | None


class WaterfallPhase(TypedDict):
    """A navigation phase (DNS, Connect, …, Load) from the transaction's start."""

    phase: str
    start_ms: float
    end_ms: float


class WaterfallMarker(TypedDict):
    name: str  # FCP | LCP
    at_ms: float


class Waterfall(TypedDict):
    """One transaction's waterfall, as the waterfall page, its API answer and its exports show it."""

    event_id: str
    trace_id: str
    timestamp: datetime
    op: str
    transaction: str
    page: str
    url: str
    release: str
    environment: str
    browser: str
    os: str
    duration_ms: float
    http_status: int
    measurements: dict[str, float]
    phases: list[WaterfallPhase]
    markers: list[WaterfallMarker]
    spans: list[WaterfallSpan]


def waterfall(client: Client, org_id: int, project_id: int, event_id: str) -> Waterfall | None:
    """The transaction and its spans, or ``None`` when the project has no such transaction (or the id is
    bad)."""
    try:
        uid = str(uuid.UUID(event_id))
    except ValueError:
        return None
    base = {"org_id": org_id, "project_id": project_id, "event_id": uid}
    found = run_query(client, "performance/waterfall_load", base)
    if not found:
        return None
    tx = found[0]
    start: datetime = tx["timestamp"]
    measurements = {k: float(v) for k, v in (tx["measurements"] or {}).items()}
    phases: dict[str, dict[str, float]] = {}
    spans: list[WaterfallSpan] = []
    for raw in run_query(client, "performance/waterfall_spans", {**base, "start": start}):
        offset = _ms(raw["timestamp"], start)
        kind = span_type(raw["op"], raw["description"])
        status = status_of(raw)
        if kind == "Phase":
            name = _phase_name(raw["op"], raw["description"])
            if name:
                current = phases.get(name)
                end = offset + float(raw["duration_ms"])
                phases[name] = {
                    "start_ms": min(offset, current["start_ms"]) if current else offset,
                    "end_ms": max(end, current["end_ms"]) if current else end,
                }
            continue
        spans.append(
            {
                "span_id": raw["span_id"],
                "op": raw["op"],
                "type": kind,
                "description": raw["description"],
                "start_ms": offset,
                "duration_ms": float(raw["duration_ms"]),
                "status_code": int(raw["status_code"]),
                "status": status["status"],
                "status_note": status["status_note"],
                "render_blocking": raw["render_blocking_status"]
                or ("unknown" if raw["op"].startswith("resource.") else ""),
                "bytes": raw["bytes"],
                "decoded_bytes": raw["decoded_bytes"],
            }
        )
    if "ttfb" in measurements and "TTFB" not in phases:
        phases["TTFB"] = {"start_ms": 0.0, "end_ms": measurements["ttfb"]}
    if "DOM ready" not in phases and "dom_ready" in measurements:
        phases["DOM ready"] = {"start_ms": 0.0, "end_ms": measurements["dom_ready"]}
    # The DOMContentLoaded and load spans only mark their events' handlers; shown as the time the document
    # took from the end of the response (else navigation start) to each event.
    parsed_from = phases["Response"]["end_ms"] if "Response" in phases else 0.0
    for name in ("DOM ready", "Load"):
        if name in phases:
            phases[name]["start_ms"] = min(parsed_from, phases[name]["end_ms"])
    ordered = [
        WaterfallPhase(phase=name, start_ms=phases[name]["start_ms"], end_ms=phases[name]["end_ms"])
        for name in PHASE_ORDER
        if name in phases
    ]
    markers = [
        WaterfallMarker(name=name.upper(), at_ms=measurements[name])
        for name in ("fcp", "lcp")
        if name in measurements
    ]
    return {
        "event_id": tx["id"],
        "trace_id": tx["trace_id"],
        "timestamp": start,
        "op": tx["op"],
        "transaction": tx["transaction"],
        "page": tx["page"],
        "url": tx["url"],
        "release": tx["release"],
        "environment": tx["environment"],
        "browser": tx["browser"],
        "os": tx["os"],
        "duration_ms": float(tx["duration_ms"]),
        "http_status": int(tx["http_status"]),
        "measurements": measurements,
        "phases": ordered,
        "markers": markers,
        "spans": spans,
    }


def pageload_of_trace(
    client: Client, org_id: int, project_id: int, trace_id: str, around: datetime
) -> str | None:
    """The event id of the page load (or navigation) of ``trace_id`` near ``around``, if one was sent."""
    if not trace_id:
        return None
    rows = run_query(
        client,
        "performance/trace_pageload",
        {"org_id": org_id, "project_id": project_id, "trace_id": trace_id, "around": around},
    )
    return rows[0]["event_id"] if rows else None
