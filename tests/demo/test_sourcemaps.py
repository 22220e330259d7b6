"""The demo's source maps: uploaded through a real server's sentry-cli endpoints, they map every demo browser
error to its original file, function and line; the vendor frame says why it stays minified."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from demo import browser, browser_errors
from demo.sourcemaps import upload_demo_maps
from stacklens.issues.payload_exceptions import exceptions
from stacklens.settings import get_settings
from stacklens.sourcemaps.sourcemap import MapCache
from stacklens.sourcemaps.symbolicate import Resolver, symbolicate
from stacklens.warehouse.client import get_warehouse

RELEASE = browser.ReleaseShape("shop@1.4.0", 520_000, False, 1.05)
EXPECTED = {
    "renderPrice": ("src/components/Price.js", 8, "const amount = line.product.price * line.quantity;"),
    "trackAddToCart": ("src/analytics.js", 5, 'analytics.track("add_to_cart", payload);'),
    "validateQuantity": ("src/cart.js", 5, 'throw new Error("Quantity must be a positive number");'),
}


def test_demo_maps_show_every_browser_error_at_its_original_line(dsn_server: str, make_org) -> None:
    org = make_org()
    assert (
        upload_demo_maps(dsn_server, str(org["api_key"]), str(org["project"]), [RELEASE.name, "shop@1.3.0"])
        == 2
    )
    resolver = Resolver(get_warehouse(get_settings()), int(org["org_id"]), int(org["project_id"]), MapCache())
    rng = random.Random(4)
    seen = set()
    for _ in range(30):
        payload = browser_errors.js_error(
            rng, "https://shop.example", RELEASE, "production", datetime.now(UTC), None
        )
        chain = exceptions(payload)
        symbolicate(resolver, payload, chain)
        top, handler, vendor = chain[0]["frames"]
        path, line, code = EXPECTED[top["function"]]
        assert (top["filename"], top["lineno"]) == (path, line) and code in top["context_line"]
        assert handler["filename"] == "src/handlers.js" and handler["function"] == "onClick"
        assert (
            vendor["sourcemap_note"]
            == "no map for https://shop.example/static/vendor.js in release shop@1.4.0"
        )
        seen.add(top["function"])
    assert seen == set(EXPECTED)
