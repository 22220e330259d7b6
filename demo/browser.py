"""Browser page loads as `@sentry/browser` sends them: envelopes with pageload transactions and errors.

The demo has no real browsers, so this module builds what `@sentry/browser` with `browserTracingIntegration`
posts to a `tunnel`: an envelope whose header carries the DSN (the app key as its public key) and whose items
are `transaction` payloads (page loads with web vitals, `browser.*` phase spans, `resource.*` spans with
sizes and render-blocking status, `http.client` spans with status codes) and `event` payloads (JavaScript
errors with stack frames). Figures are drawn from distributions per page and release so trends, release
impact and budgets have something real to show.

Here: what every payload shares (the SDK, user agents, pages and releases) and the envelope; the page loads
are built in :mod:`demo.browser_pageloads`, the errors and sessions in :mod:`demo.browser_errors`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

SDK = {"name": "sentry.javascript.browser", "version": "10.27.0"}
USER_AGENTS = {
    "Chrome": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36",
    "Firefox": "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:145.0) Gecko/20100101 Firefox/145.0",
    "Safari": "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
}


# What the browser SDK's contexts say for each user agent above: the same browser and OS, never a Safari on
# Windows. Relay fills these from the User-Agent; the demo sends them as a browser SDK event would arrive.
BROWSER_CONTEXTS = {
    "Chrome": ({"name": "Chrome", "version": "140.0.0"}, {"name": "Linux"}),
    "Firefox": ({"name": "Firefox", "version": "145.0"}, {"name": "Windows", "version": "10"}),
    "Safari": ({"name": "Safari", "version": "18.1"}, {"name": "Mac OS X", "version": "14.6"}),
}


def browser_contexts(browser: str) -> dict[str, dict[str, str]]:
    browser_ctx, os_ctx = BROWSER_CONTEXTS[browser]
    return {"browser": dict(browser_ctx), "os": dict(os_ctx)}


@dataclass(frozen=True)
class PageShape:
    route: str  # what the URL looks like, with {id} filled per load
    ttfb_ms: float
    api_calls: tuple[tuple[str, str], ...]  # (method, path) the page fetches


PAGES = (
    PageShape("/", 120, (("GET", "/api/products"),)),
    PageShape("/products/{id}", 160, (("GET", "/api/products/{id}"), ("GET", "/api/recommendations/{user}"))),
    # The search page fetches each result on its own: the N+1 pattern the recommendations name.
    PageShape("/search", 140, (("GET", "/api/search?q=lens"),) + (("GET", "/api/products/{n}"),) * 6),
    PageShape("/cart", 110, (("POST", "/api/cart"),)),
    PageShape("/checkout", 180, (("POST", "/api/checkout"),)),
)


@dataclass(frozen=True)
class ReleaseShape:
    """How a release behaves in the browser: its bundle size, how slow it renders, and which share of its
    JavaScript errors are unhandled and crash the page's session (the rest are caught and reported)."""

    name: str
    js_bytes: int
    css_blocking: bool
    slowdown: float
    crashed_share: float = 0.15


def envelope(dsn: str, items: list[dict], sessions: list[dict] | None = None) -> bytes:
    """Serialise items into one envelope body, as the browser SDK posts it to the tunnel; ``sessions`` are
    session updates that travel with them as `session` items."""
    header = {"sent_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"), "sdk": SDK, "dsn": dsn}
    if len(items) == 1:
        header["event_id"] = items[0]["event_id"]
    parts = [json.dumps(header)]
    typed = [(item.get("type") or "event", item) for item in items]
    for kind, item in [*typed, *(("session", s) for s in sessions or [])]:
        body = json.dumps(item)
        parts.append(json.dumps({"type": kind, "length": len(body.encode())}))
        parts.append(body)
    return ("\n".join(parts) + "\n").encode()
