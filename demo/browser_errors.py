"""JavaScript errors and browser sessions as `@sentry/browser` sends them: error events with stack frames in a
page load's trace, and the session of a page view, crashed when an error ended it (:mod:`demo.browser`)."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime

from demo.browser import SDK, USER_AGENTS, ReleaseShape, browser_contexts

JS_ERRORS = (
    (
        "TypeError",
        "Cannot read properties of undefined (reading 'price')",
        "renderPrice",
        "static/app.js",
        1432,
    ),
    ("ReferenceError", "analytics is not defined", "trackAddToCart", "static/app.js", 2210),
    ("Error", "Quantity must be a positive number", "validateQuantity", "static/cart.js", 88),
)


def js_error(
    rng: random.Random,
    origin: str,
    release: ReleaseShape,
    environment: str,
    when: datetime,
    user_id: str | None,
) -> dict:
    """A JavaScript error event as `@sentry/browser` captures an uncaught exception."""
    choice = rng.choice(JS_ERRORS)
    etype, value, function, file, line = choice
    browser = rng.choice(list(USER_AGENTS))
    rng.randint(0, 3)  # drawn as before this line number was fixed, so the demo's random stream is unchanged
    frames = [
        {
            "filename": f"{origin}/static/vendor.js",
            "function": "HTMLButtonElement.dispatch",
            "lineno": 2,
            "colno": 40123,
            "in_app": False,
        },
        {
            "filename": f"{origin}/static/app.js",
            "function": "onClick",
            # The line of onClick's call into the function that threw (the demo's source maps map these).
            "lineno": 980 + JS_ERRORS.index(choice),
            "colno": 17,
            "in_app": True,
        },
        {"filename": f"{origin}/{file}", "function": function, "lineno": line, "colno": 21, "in_app": True},
    ]
    payload = {
        "event_id": uuid.uuid4().hex,
        "platform": "javascript",
        "level": "error",
        "timestamp": when.timestamp(),
        "release": release.name,
        "environment": environment,
        "exception": {
            "values": [
                {
                    "type": etype,
                    "value": value,
                    "stacktrace": {"frames": frames},
                    "mechanism": {"type": "onerror", "handled": False},
                }
            ]
        },
        "breadcrumbs": [
            {
                "timestamp": when.timestamp() - 4,
                "category": "navigation",
                "data": {"from": "/", "to": "/cart"},
            },
            {"timestamp": when.timestamp() - 2, "category": "ui.click", "message": "button.add-to-cart"},
            {
                "timestamp": when.timestamp() - 1,
                "category": "console",
                "level": "warning",
                "message": "price missing for item",
            },
        ],
        "request": {"url": f"{origin}/cart", "headers": {"User-Agent": USER_AGENTS[browser]}},
        "contexts": browser_contexts(browser),
        "tags": {"browser.name": browser},
        "sdk": SDK,
    }
    if user_id:
        payload["user"] = {"id": user_id}
    return payload


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def page_session(
    load: dict, release: ReleaseShape, environment: str, when: datetime, user_id: str | None
) -> dict:
    """The session `@sentry/browser` (its default browserSessionIntegration) starts with a page load: the
    first update, ``init`` and ``ok``, with the user as ``did`` and the browser's user agent."""
    started = _iso(when.timestamp())
    session = {
        "sid": uuid.uuid4().hex,
        "init": True,
        "started": started,
        "timestamp": started,
        "status": "ok",
        "errors": 0,
        "attrs": {
            "release": release.name,
            "environment": environment,
            "user_agent": load["request"]["headers"]["User-Agent"],
        },
    }
    if user_id:
        session["did"] = user_id
    return session


def session_after_error(session: dict, error: dict, release: ReleaseShape) -> dict:
    """The update `@sentry/browser` sends after the page's first error: ``errors`` 1, ``crashed`` when the
    error was unhandled (as the demo's SDK version, 10.x, says it; 11 says ``unhandled``). Which errors are
    unhandled is drawn per release (:attr:`ReleaseShape.crashed_share`) from the error's release and
    moment, so the traffic's seeded random stream is unchanged and the same seed gives the same crashes:
    every run of the demo shows the same crash-free rates and verdicts (drawn from the error's random id,
    each run had crashes of its own, and whether a release as good as the one before it stayed within
    chance differed from run to run). The error's mechanism says the same (an unhandled ``onerror``, or one
    the page's code caught and captured)."""
    crashed = random.Random(f"{release.name}|{error['timestamp']!r}").random() < release.crashed_share
    error["exception"]["values"][-1]["mechanism"] = (
        {"type": "onerror", "handled": False} if crashed else {"type": "generic", "handled": True}
    )
    later = datetime.fromisoformat(session["started"].replace("Z", "+00:00")).timestamp() + 1.5
    return {
        **session,
        "init": False,
        "timestamp": _iso(later),
        "status": "crashed" if crashed else "ok",
        "errors": 1,
    }
