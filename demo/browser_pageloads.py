"""A page load as `@sentry/browser` with `browserTracingIntegration` sends it: a `pageload` transaction
with web vitals, `browser.*` phase spans, `resource.*` spans with sizes and render-blocking status and
`http.client` spans with status codes, its figures drawn per page and release (:mod:`demo.browser`)."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from datetime import datetime

from demo.browser import PAGES, SDK, USER_AGENTS, PageShape, ReleaseShape


def _span_id(rng: random.Random) -> str:
    return f"{rng.getrandbits(64):016x}"


@dataclass(frozen=True)
class _Trace:
    """The page load's trace: every span is a child of its root span."""

    trace_id: str
    root_span_id: str

    def child(
        self,
        rng: random.Random,
        op: str,
        description: str,
        start: float,
        end: float,
        origin: str,
        data: dict[str, object],
        status: str | None = None,
    ) -> dict:
        """A child span; its id is the next draw of ``rng`` (after whatever the caller drew for its
        figures)."""
        span: dict[str, object] = {
            "span_id": _span_id(rng),
            "trace_id": self.trace_id,
            "parent_span_id": self.root_span_id,
            "op": op,
            "description": description,
            "start_timestamp": start,
            "timestamp": end,
        }
        if status is not None:
            span["status"] = status
        return {**span, "origin": origin, "data": data}


@dataclass(frozen=True)
class _Timeline:
    """A page load's moments, as epoch seconds: navigation start, first byte, the last resource's end,
    DOMContentLoaded and load."""

    start: float
    first_byte: float
    resources_end: float
    dom_content_loaded: float
    load: float


def _resource(
    rng: random.Random,
    trace: _Trace,
    start: float,
    op: str,
    url: str,
    size: int,
    blocking: bool | None,
) -> dict:
    duration = max(0.005, size / rng.uniform(800_000, 4_000_000) + rng.uniform(0.005, 0.06))
    data: dict[str, object] = {
        "http.response_content_length": size,
        "http.decoded_response_content_length": int(
            size * (3.2 if op in ("resource.script", "resource.css") else 1.0)
        ),
        "http.response_transfer_size": size + 300,
        "sentry.op": op,
        "sentry.origin": "auto.resource.browser.metrics",
        "url.same_origin": True,
        "network.protocol.name": "http",
        "network.protocol.version": "1.1",
    }
    if blocking is not None:
        data["resource.render_blocking_status"] = "blocking" if blocking else "non-blocking"
    return trace.child(rng, op, url, start, start + duration, "auto.resource.browser.metrics", data)


def _resource_spans(
    rng: random.Random,
    trace: _Trace,
    origin: str,
    release: ReleaseShape,
    product: int,
    first_byte: float,
    reports_blocking: bool,
) -> list[dict]:
    """What the page fetches once its HTML arrives: the release's bundles, its stylesheet, an analytics tag,
    the product's images and a font. Only Chromium reports render-blocking status (``reports_blocking``)."""
    t = first_byte
    spans: list[dict] = []
    js = release.js_bytes
    bundles = [("app", int(js * 0.55)), ("vendor", int(js * 0.4)), ("runtime", int(js * 0.05))]
    for name, size in bundles:
        url = f"{origin}/static/{name}.{release.name[-5:]}.js"
        blocking = name == "vendor" if reports_blocking else None
        spans.append(_resource(rng, trace, t + rng.uniform(0, 0.02), "resource.script", url, size, blocking))
    css_blocking = release.css_blocking if reports_blocking else None
    spans.append(_resource(rng, trace, t, "resource.css", f"{origin}/static/shop.css", 48_000, css_blocking))
    # A third-party analytics tag, loaded async.
    tag_blocking = False if reports_blocking else None
    tag = "https://cdn.analytics.example/tag.js"
    spans.append(_resource(rng, trace, t + 0.01, "resource.script", tag, 210_000, tag_blocking))
    for i in range(rng.randint(2, 6)):
        big = i == 0  # each product's hero shot is a full-size PNG: one oversized image per product
        url = f"{origin}/img/p{product}-{i}.{'png' if big else 'webp'}"
        size = rng.randint(900_000, 2_400_000) if big else rng.randint(20_000, 160_000)
        spans.append(_resource(rng, trace, t + 0.05 * i, "resource.img", url, size, None))
    spans.append(_resource(rng, trace, t, "resource.link", f"{origin}/fonts/inter.woff2", 96_000, None))
    return spans


def _navigation_spans(rng: random.Random, trace: _Trace, url: str, moments: _Timeline) -> list[dict]:
    """Navigation-timing phases and the page's two load events, as @sentry/browser 8-10 sends them (op
    ``browser.<phase>``, from navigation start)."""
    start = moments.start
    dns = rng.uniform(0.002, 0.03)
    connect = dns + rng.uniform(0.005, 0.04)
    spans = [
        trace.child(rng, op, url, s0, max(s1, s0), "auto.ui.browser.metrics", {"sentry.op": op})
        for op, s0, s1 in (
            ("browser.domainLookup", start, start + dns),
            ("browser.connect", start + dns, start + connect),
            ("browser.request", start + connect, moments.first_byte),
            ("browser.response", moments.first_byte, moments.first_byte + 0.01),
        )
    ]
    for op, at in (
        ("browser.domContentLoadedEvent", moments.dom_content_loaded),
        ("browser.loadEvent", moments.load),
    ):
        spans.append(trace.child(rng, op, url, at - 0.003, at, "auto.ui.browser.metrics", {"sentry.op": op}))
    return spans


def _api_spans(
    rng: random.Random,
    trace: _Trace,
    origin: str,
    page: PageShape,
    product: int,
    user_id: str | None,
    fail_api: bool,
    after: float,
) -> list[dict]:
    """The page's API calls once it has loaded (``after``); with ``fail_api`` half of them answer 500."""
    spans = []
    for method, api in page.api_calls:
        api_path = (
            api.replace("{id}", str(product))
            .replace("{user}", user_id or "0")
            .replace("{n}", str(rng.randint(1, 40)))
        )
        status = 500 if fail_api and rng.random() < 0.5 else (404 if rng.random() < 0.03 else 200)
        s0 = after + rng.uniform(0.0, 0.05)
        dur = rng.lognormvariate(-2.6, 0.5) * (3 if "search" in api else 1)
        data: dict[str, object] = {
            "http.method": method,
            "url": f"{origin}{api_path}",
            "http.response.status_code": status,
            "type": "fetch",
            "sentry.op": "http.client",
        }
        span_status = "ok" if status < 400 else ("not_found" if status == 404 else "internal_error")
        description = f"{method} {origin}{api_path}"
        spans.append(
            trace.child(rng, "http.client", description, s0, s0 + dur, "auto.http.browser", data, span_status)
        )
    return spans


def _measurements(
    rng: random.Random, browser: str, release: ReleaseShape, ttfb: float, moments: _Timeline
) -> dict[str, dict[str, object]]:
    """Web vitals as each browser reports them: Safari neither LCP, CLS nor INP; Firefox no INP."""
    painted_ms = (moments.resources_end - moments.start) * 1000
    lcp = (moments.dom_content_loaded - moments.start) * 1000 * rng.uniform(1.0, 1.4)
    measurements: dict[str, dict[str, object]] = {
        "ttfb": {"value": ttfb, "unit": "millisecond"},
        "fp": {"value": painted_ms * 0.7, "unit": "millisecond"},
        "fcp": {"value": painted_ms * 0.75, "unit": "millisecond"},
    }
    if browser != "Safari":
        measurements["lcp"] = {"value": lcp, "unit": "millisecond"}
        measurements["cls"] = {"value": round(abs(rng.gauss(0.04, 0.05)) * release.slowdown, 4), "unit": ""}
    if browser == "Chrome":
        measurements["inp"] = {
            "value": rng.lognormvariate(4.4, 0.5) * release.slowdown,
            "unit": "millisecond",
        }
    return measurements


def pageload(
    rng: random.Random,
    origin: str,
    release: ReleaseShape,
    environment: str,
    when: datetime,
    user_id: str | None,
    fail_api: bool,
) -> dict:
    """One pageload transaction payload.

    Every figure is a draw of ``rng`` in a fixed order (the helpers below draw in the order they are called),
    so the same seed gives the same page loads; only the event and trace ids are random."""
    page = rng.choice(PAGES)
    product = rng.randint(1, 8)
    # Chosen first: only Chromium reports render-blocking status, INP and (with Firefox) LCP/CLS; Safari none.
    browser = rng.choice(list(USER_AGENTS))
    path = page.route.replace("{id}", str(product))
    trace = _Trace(uuid.uuid4().hex, _span_id(rng))
    start = when.timestamp()
    ttfb = page.ttfb_ms * rng.lognormvariate(0, 0.35) * release.slowdown
    first_byte = start + ttfb / 1000
    spans = _resource_spans(rng, trace, origin, release, product, first_byte, browser == "Chrome")
    resources_end = max(s["timestamp"] for s in spans)
    dcl = resources_end + rng.uniform(0.02, 0.1)
    load = dcl + rng.uniform(0.05, 0.3) * release.slowdown
    moments = _Timeline(start, first_byte, resources_end, dcl, load)
    spans += _navigation_spans(rng, trace, f"{origin}{path}", moments)
    spans += _api_spans(rng, trace, origin, page, product, user_id, fail_api, load)
    end = max(s["timestamp"] for s in spans) + 0.05
    event_id = uuid.uuid4().hex
    payload = {
        "event_id": event_id,
        "type": "transaction",
        "platform": "javascript",
        "transaction": path,
        "transaction_info": {"source": "url"},
        "start_timestamp": start,
        "timestamp": end,
        "release": release.name,
        "environment": environment,
        "contexts": {
            "trace": {
                "trace_id": trace.trace_id,
                "span_id": trace.root_span_id,
                "op": "pageload",
                "status": "ok",
                "origin": "auto.pageload.browser",
                "data": {"sentry.op": "pageload", "sentry.source": "url"},
            },
            "browser": {"name": browser},
        },
        "measurements": _measurements(rng, browser, release, ttfb, moments),
        "spans": spans,
        "request": {"url": f"{origin}{path}", "headers": {"User-Agent": USER_AGENTS[browser]}},
        "tags": {"browser.name": browser},
        "sdk": SDK,
    }
    if user_id:
        payload["user"] = {"id": user_id}
    return payload
