"""The demo shop's front-end build: minified ``static/app.js`` and ``static/cart.js`` with their source maps,
uploaded for every demo release, so the demo's browser errors (:data:`demo.browser_errors.JS_ERRORS`) show
their original files, functions and lines on the issue page. ``static/vendor.js`` is left without a map, as
third-party bundles often are, so its frame shows why it stays minified.

The maps are written here (not by a bundler): each maps the exact positions the demo's frames carry to a line
of readable original source, with ``sourcesContent`` for the context lines.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass

import httpx

from demo.traffic import RELEASES
from stacklens.errors import StackLensError
from stacklens.sourcemaps.bundle import Bundle, BundleFile

B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
PRICE_JS = """import { formatMoney } from "../money.js";

// Renders the price cell of one cart line.
export function renderPrice(line, currency) {
  const cell = document.createElement("td");
  cell.className = "price";
  // The catalog answers without a price for items that were removed meanwhile.
  const amount = line.product.price * line.quantity;
  cell.textContent = formatMoney(amount, currency);
  return cell;
}
"""
ANALYTICS_JS = """// Sends shop events to the analytics script loaded from the tag manager.
export function trackAddToCart(product, quantity) {
  const payload = { id: product.id, name: product.name, quantity };
  // The tag manager is blocked by some content blockers: analytics is then undefined.
  analytics.track("add_to_cart", payload);
  return payload;
}
"""
CART_JS = """// Validates what the quantity input holds before the cart is updated.
export function validateQuantity(input) {
  const quantity = Number.parseInt(input.value, 10);
  if (!Number.isInteger(quantity) || quantity <= 0) {
    throw new Error("Quantity must be a positive number");
  }
  return quantity;
}
"""
HANDLERS_JS = """import { renderPrice } from "./components/Price.js";
import { trackAddToCart } from "./analytics.js";
import { validateQuantity } from "./cart.js";

// The "Add to cart" button: check the quantity, track the click, then redraw the cart's prices.
export function onClick(event) {
  const product = event.currentTarget.dataset;
  const quantity = validateQuantity(event.currentTarget.form.quantity);
  trackAddToCart(product, quantity);
  return renderPrice(cart.lineFor(product.id), "EUR");
}
"""


@dataclass(frozen=True)
class Point:
    line: int  # 1-based generated line, as frames carry it
    column: int  # 1-based
    source: int
    original_line: int  # 1-based
    original_column: int
    name: str


def _vlq(*values: int) -> str:
    out = []
    for value in values:
        rest = (-value << 1) | 1 if value < 0 else value << 1
        while True:
            digit, rest = rest & 31, rest >> 5
            out.append(B64[digit | (32 if rest else 0)])
            if not rest:
                break
    return "".join(out)


def _map(file: str, sources: list[tuple[str, str]], points: list[Point]) -> bytes:
    names = sorted({p.name for p in points})
    lines: dict[int, list[Point]] = {}
    for point in points:
        lines.setdefault(point.line, []).append(point)
    state = [0, 0, 0, 0]  # source, original line, original column, name: deltas run across lines
    out = []
    for line in range(1, max(lines) + 1):
        column, segments = 0, []
        for point in sorted(lines.get(line, []), key=lambda p: p.column):
            values = [
                point.source,
                point.original_line - 1,
                point.original_column - 1,
                names.index(point.name),
            ]
            segments.append(
                _vlq(point.column - 1 - column, *(v - s for v, s in zip(values, state, strict=True)))
            )
            column, state = point.column - 1, values
        out.append(",".join(segments))
    body = {
        "version": 3,
        "file": file,
        "sources": [name for name, _ in sources],
        "sourcesContent": [text for _, text in sources],
        "names": names,
        "mappings": ";".join(out),
    }
    return json.dumps(body).encode()


def _minified(lines: int, file: str) -> bytes:
    """Stand-in minified text with the line count the frames need, pointing at its map."""
    body = "\n".join(f"a.b{n}(c,d);e=f+{n};" for n in range(lines))
    return f"{body}\n//# sourceMappingURL={file}.map\n".encode()


def demo_bundle(release: str) -> Bundle:
    """The shop's front-end files and maps for ``release`` (the same build in every demo release)."""
    app_sources = [
        ("webpack://shop/src/components/Price.js", PRICE_JS),
        ("webpack://shop/src/analytics.js", ANALYTICS_JS),
        ("webpack://shop/src/handlers.js", HANDLERS_JS),
    ]
    app_points = [Point(1432, 21, 0, 8, 18, "renderPrice"), Point(2210, 21, 1, 5, 3, "trackAddToCart")]
    # onClick's frame sits on the line of its call into the function that threw (browser.onclick_line).
    app_points += [
        Point(980, 17, 2, 10, 10, "renderPrice"),
        Point(981, 17, 2, 9, 3, "trackAddToCart"),
        Point(982, 17, 2, 8, 20, "validateQuantity"),
    ]
    cart_points = [Point(88, 21, 0, 5, 5, "validateQuantity")]
    return Bundle(
        release=release,
        dist="",
        files=[
            BundleFile("~/static/app.js", "minified_source", _minified(2210, "app.js"), "", "app.js.map"),
            BundleFile("~/static/app.js.map", "source_map", _map("app.js", app_sources, app_points)),
            BundleFile("~/static/cart.js", "minified_source", _minified(88, "cart.js"), "", "cart.js.map"),
            BundleFile(
                "~/static/cart.js.map",
                "source_map",
                _map("cart.js", [("webpack://shop/src/cart.js", CART_JS)], cart_points),
            ),
        ],
    )


def upload_demo_maps(url: str, api_key: str, project: str, releases: list[str]) -> int:
    """Upload the build for each release through the server's sentry-cli endpoints; the number uploaded."""
    from stacklens.sourcemaps.client import send_bundle

    for release in releases:
        send_bundle(url, api_key, project, demo_bundle(release))
    return len(releases)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m demo.sourcemaps --project SLUG``: upload the maps of every demo release to the server at
    ``STACKLENS_URL`` with the organization key in ``STACKLENS_API_KEY`` (`stacklens up` runs it once the
    server answers). A failed upload is said, not raised: the demo runs on without maps, the issue page
    says why."""
    parser = argparse.ArgumentParser(
        prog="python -m demo.sourcemaps", description="upload the demo's source maps"
    )
    parser.add_argument("--project", required=True, help="the demo project's slug")
    args = parser.parse_args(argv)
    try:
        count = upload_demo_maps(
            os.environ["STACKLENS_URL"],
            os.environ["STACKLENS_API_KEY"],
            args.project,
            [r.name for r in RELEASES],
        )
        print(f"  Source maps uploaded for {count} releases", flush=True)
    except (StackLensError, OSError, httpx.HTTPError) as exc:
        print(f"  Source maps not uploaded: {exc}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
