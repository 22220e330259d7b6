"""The shop's slow interactions as stacklens_sdk's INP attribution (stacklens_sdk/browser/inp_attribution.js)
sends them: standalone INP spans with their parts and the scripts of the long animation frames they
overlapped.

The shop's pages run its own bundle (`{origin}/static/shop.js`): the cart's "Add to cart" handler does the
cart's arithmetic and re-renders the whole list on the main thread (200-380 ms of processing), the product
page's gallery and the search box lighter ones. The chat widget is a third party's script served from the
demo's second host name (`{widget_origin}/widget.js`): its timer polls on the main thread for ~100-140 ms
every few hundred ms, so a click that lands while it runs waits for it (input delay), about two clicks in
five. Only Chromium measures these (Event Timing, Long Animation Frames): Firefox and Safari page loads
send no interaction, which the INP page names. Each figure is a draw of an rng seeded by the page load, so
the rest of the seeded traffic is unchanged."""

from __future__ import annotations

import random
import uuid
from typing import Any

from demo.browser import USER_AGENTS

# page route -> (the element, its handler's function, processing ms range)
HANDLERS = {
    "/cart": ("button#add-to-cart", "addToCart", (200.0, 380.0)),
    "/products/{id}": ("div.gallery > img.thumb", "showImage", (40.0, 110.0)),
    "/search": ("input#q", "suggest", (30.0, 90.0)),
}
WIDGET_BUSY_MS = (100.0, 140.0)
WIDGET_SHARE = 0.4  # clicks that land while the widget's timer runs


def widget_origin(origin: str) -> str:
    """The third party's origin: the shop's other host name (127.0.0.1 <-> localhost), the same port — where
    the shop's page loads the widget from (demo_shop/app.py)."""
    scheme, _, rest = origin.partition("://")
    host, _, port = rest.partition(":")
    other = "127.0.0.1" if host == "localhost" else "localhost"
    return f"{scheme}://{other}" + (f":{port}" if port else "")


def interactions(load: dict[str, Any], origin: str) -> list[dict[str, Any]]:
    """The slow interactions of one page load (none outside Chromium, none on pages without a handler)."""
    rng = random.Random(load["event_id"])
    agent = str(load.get("request", {}).get("headers", {}).get("User-Agent", ""))
    path = str(load.get("transaction", ""))
    route = "/products/{id}" if path.startswith("/products/") else path
    if agent != USER_AGENTS["Chrome"] or route not in HANDLERS:
        return []
    target, function, (low, high) = HANDLERS[route]
    url = load.get("request", {}).get("url") or f"{origin}{route}"
    trace = load["contexts"]["trace"]["trace_id"]
    out = []
    at = float(load["timestamp"]) + rng.uniform(1.0, 6.0)
    for _ in range(rng.randint(1, 3)):
        processing = rng.uniform(low, high)
        scripts = [
            _script(
                f"{origin}/static/shop.js",
                function,
                f"{target.split(' > ')[-1].upper()}.onclick",
                processing,
                "processing",
            )
        ]
        delay = rng.uniform(2.0, 12.0)
        if rng.random() < WIDGET_SHARE:
            busy = rng.uniform(*WIDGET_BUSY_MS)
            delay += busy * rng.uniform(0.3, 0.9)
            scripts.insert(
                0,
                _script(
                    f"{widget_origin(origin)}/widget.js",
                    "poll",
                    "TimerHandler:setInterval",
                    busy,
                    "input_delay",
                ),
            )
        presentation = rng.uniform(8.0, 40.0)
        inp = delay + processing + presentation
        out.append(
            {
                "type": "span",
                "event_id": uuid.UUID(int=rng.getrandbits(128)).hex,  # the demo envelope's header names it
                "op": "ui.interaction.click",
                "description": target,
                "span_id": uuid.UUID(int=rng.getrandbits(128)).hex[:16],
                "trace_id": trace,
                "start_timestamp": at,
                "timestamp": at + inp / 1000,
                "measurements": {"inp": {"value": inp, "unit": "millisecond"}},
                "data": {
                    "url.full": url,
                    "user_agent.original": agent,
                    "sentry.release": load.get("release", ""),
                    "sentry.environment": load.get("environment", ""),
                    "inp.input_delay": round(delay, 1),
                    "inp.processing": round(processing, 1),
                    "inp.presentation": round(presentation, 1),
                    "inp.loaf": True,
                    "inp.scripts": scripts,
                },
            }
        )
        at += rng.uniform(2.0, 20.0)
    return out


def _script(url: str, function: str, invoker: str, duration: float, part: str) -> dict[str, Any]:
    return {
        "url": url,
        "function": function,
        "invoker": invoker,
        "duration": round(duration, 1),
        "part": part,
    }
