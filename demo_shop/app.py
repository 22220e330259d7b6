"""The shop's HTTP API (FastAPI), instrumented with stacklens_sdk.

Its bugs are deliberate and spread over modules so the demo shows distinct issues reached through varied
call paths: a checkout and an express checkout reach the same payment bug, recommendations recurse to
varying depths before failing, and request bodies carry passwords and card numbers that must arrive
filtered.
"""

from __future__ import annotations

import html
import json
import random
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import sentry_sdk
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel
from sentry_sdk import logger as log

import stacklens_sdk
from demo.clock import CLOCK_HEADER, REQUEST_CLOCK, decode_clock, move_request_session
from demo.clock import CONTEXT as CLOCK_CONTEXT
from demo_shop import attachments, catalog, payments, pricing, search, shipping

# The shop's browser scripts (its bundle and the third-party widget it loads), served by the routes below.
_STATIC = Path(__file__).with_name("static")


class CartLine(BaseModel):
    product_id: int
    quantity: int = 1


class CheckoutRequest(BaseModel):
    items: list[CartLine]
    coupon: str | None = None
    country: str = "DE"
    postcode: str = "10115"
    card_number: str = "4242424242424242"
    email: str = "guest@example.com"
    password: str | None = None  # set when the customer creates an account at checkout


def _user_from_headers(request: Request) -> None:
    user_id = request.headers.get("x-user-id")
    if user_id:
        stacklens_sdk.set_user(
            {"id": user_id, "email": request.headers.get("x-user-email", ""), "username": f"user{user_id}"}
        )
    tier = request.headers.get("x-customer-tier")
    if tier:
        stacklens_sdk.set_tag("customer.tier", tier)
    stacklens_sdk.set_tag("shop.region", request.headers.get("x-region", "eu-central"))


def _latency(rng: random.Random, low: float, high: float) -> None:
    time.sleep(rng.uniform(low, high))


def create_shop_app(seed: int | None = None, *, honour_demo_clock: bool = False) -> FastAPI:
    """The shop's app. ``stacklens_sdk.init`` must have run in this process first (see ``run``).

    ``honour_demo_clock`` is for the history backfill only: requests may then say which past moment and
    release they stand for (:mod:`demo.clock`).
    """
    rng = random.Random(seed)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        # uvicorn ends the process with the signal that stopped it, so no atexit hook runs: the request
        # sessions the SDK holds (it writes its release-health aggregates once a minute) are written here.
        stacklens_sdk.flush(timeout=5)

    app = FastAPI(title="Lens Shop", lifespan=lifespan)

    @app.middleware("http")
    async def identify(request: Request, call_next: Any) -> Any:
        clock = request.headers.get(CLOCK_HEADER)
        if honour_demo_clock and clock:
            stacklens_sdk.set_context(CLOCK_CONTEXT, {"value": clock})
            REQUEST_CLOCK.set(clock)
            move_request_session(clock)
        _user_from_headers(request)
        stacklens_sdk.add_breadcrumb(category="navigation", message=f"{request.method} {request.url.path}")
        return await call_next(request)

    @app.get("/api/products")
    def products(category: str | None = None) -> list[dict[str, Any]]:
        _latency(rng, 0.01, 0.05)
        return [p.__dict__ for p in catalog.list_products(category)]

    @app.get("/api/products/{product_id}")
    def product(product_id: int) -> dict[str, Any]:
        _latency(rng, 0.01, 0.04)
        try:
            return catalog.get_product(product_id).__dict__
        except catalog.ProductNotFound as exc:
            raise HTTPException(404, str(exc)) from None

    @app.post("/api/cart")
    def add_to_cart(line: CartLine) -> dict[str, Any]:
        _latency(rng, 0.02, 0.08)
        stacklens_sdk.add_breadcrumb(
            category="ui", message=f"add to cart: product {line.product_id} x{line.quantity}"
        )
        try:
            product = catalog.reserve(line.product_id, line.quantity)
        except catalog.OutOfStock as exc:
            log.warning("cart: {error}", error=str(exc), attributes={"product.id": line.product_id})
            stacklens_sdk.capture_exception(exc)
            raise HTTPException(409, str(exc)) from None
        except catalog.ProductNotFound as exc:
            raise HTTPException(404, str(exc)) from None
        log.info(
            "cart: reserved {quantity} x {sku}",
            quantity=line.quantity,
            sku=product.sku,
            attributes={"product.id": line.product_id},
        )
        return {"sku": product.sku, "quantity": line.quantity}

    def _checkout(order: CheckoutRequest, charge: Any) -> dict[str, Any]:
        stacklens_sdk.set_context(
            "order", {"items": len(order.items), "coupon": order.coupon, "country": order.country}
        )
        lines = [(catalog.get_product(i.product_id).price_cents, i.quantity) for i in order.items]
        total = pricing.total_cents(lines, order.coupon, order.country)
        try:
            shipping_cents = shipping.quote_cents(order.country, order.postcode, 400 * len(lines))
        except ValueError as exc:
            log.warning(
                "checkout: no shipping quote for {country}: {error}", country=order.country, error=str(exc)
            )
            stacklens_sdk.capture_exception(exc)
            raise HTTPException(422, str(exc)) from None
        stacklens_sdk.add_breadcrumb(category="http", message="POST https://payments.example/v1/charges")
        try:
            charge_id = charge(total + shipping_cents, order.card_number, rng)
        except payments.PaymentDeclined as exc:
            log.error(
                "checkout: payment of {total_cents} cents declined",
                total_cents=total + shipping_cents,
                attributes={"order.country": order.country},
            )
            event_id = stacklens_sdk.capture_exception(exc)
            # The order, without its card, on the error (history errors too: listed with their event).
            summary: dict[str, Any] = {"items": [i.model_dump() for i in order.items]}
            summary |= {"coupon": order.coupon}
            summary |= {"country": order.country, "total_cents": total + shipping_cents}
            clock = REQUEST_CLOCK.get()  # a history request's attachment is sent at the moment it stands for
            sent_at = decode_clock(clock)[0] if clock else None
            attachments.attach(
                event_id, "order.json", "application/json", json.dumps(summary).encode(), sent_at
            )
            raise HTTPException(402, "payment declined") from None
        order_id = f"ord_{rng.getrandbits(32):08x}"
        log.info(
            "checkout: order {order_id} placed, {total_cents} cents",
            order_id=order_id,
            total_cents=total + shipping_cents,
            attributes={"order.country": order.country, "order.items": len(order.items)},
        )
        # The order mail is the worker's job: like a queue message it carries the request's trace, from a
        # queue.publish span, so the worker's job continues this trace (docs/traces.md).
        with sentry_sdk.start_span(op="queue.publish", name="order-mail"):
            job = {
                "sentry-trace": sentry_sdk.get_traceparent() or "",
                "baggage": sentry_sdk.get_baggage() or "",
            }
        return {
            "order_id": order_id,
            "total_cents": total + shipping_cents,
            "charge": charge_id,
            "mail_job": {"trace": job},
        }

    @app.post("/api/checkout")
    def checkout(order: CheckoutRequest) -> dict[str, Any]:
        _latency(rng, 0.05, 0.15)
        return _checkout(order, payments.charge_with_retry)

    @app.post("/api/express-checkout")
    def express_checkout(order: CheckoutRequest) -> dict[str, Any]:
        _latency(rng, 0.02, 0.06)
        return _checkout(order, payments.charge)

    @app.get("/api/search")
    def do_search(q: str = "") -> list[dict[str, Any]]:
        stacklens_sdk.add_breadcrumb(category="ui", message=f"search: {q}")
        return [p.__dict__ for p in search.search(q, rng)]

    @app.get("/api/recommendations/{user_id}")
    def recommendations(user_id: int) -> list[dict[str, Any]]:
        _latency(rng, 0.03, 0.12)
        history = [((user_id * 7 + i) % 9) + 1 for i in range(user_id % 6)]
        return [p.__dict__ for p in search.recommend(history)]

    @app.get("/api/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/static/shop.js", include_in_schema=False)
    def shop_js() -> Response:
        # The shop's bundle: the slow "Add to cart" handler (first party); docs/performance.md, "INP causes".
        return Response(_STATIC.joinpath("shop.js").read_bytes(), media_type="text/javascript")

    @app.get("/widget.js", include_in_schema=False)
    def widget_js() -> Response:
        # The chat widget, loaded from the demo's second host name (localhost): a third party by host.
        return Response(
            _STATIC.joinpath("widget.js").read_bytes(),
            media_type="text/javascript",
            headers={"Access-Control-Allow-Origin": "*"},
        )

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def home(request: Request) -> str:
        # The URL `stacklens up` prints: a person opening it sees what the shop is, not a JSON 404.
        # The chat widget comes from the shop's other host name (127.0.0.1 <-> localhost): a third party.
        other = "127.0.0.1" if request.url.hostname == "localhost" else "localhost"
        widget = f"//{other}:{request.url.port or 80}"
        rows = "".join(
            f'<li><a href="/api/products/{p.id}">{html.escape(p.name)}</a> ({p.price_cents / 100:.2f} EUR)</li>'
            for p in catalog.PRODUCTS.values()
        )
        return (
            '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lens Shop</title></head><body>'
            "<h1>Lens Shop</h1><p>The StackLens demo application: a small shop API instrumented with "
            "<code>stacklens_sdk</code>. The demo's traffic driver uses it; its errors and performance data "
            "go to the log files the shipper delivers to StackLens. Open the StackLens dashboard to see them.</p>"
            f"<h2>Products</h2><ul>{rows}</ul>"
            '<p>API: <a href="/api/products">/api/products</a> · <a href="/api/health">/api/health</a> · '
            '<a href="/docs">/docs</a></p>'
            '<h2>Cart</h2><button id="add-to-cart" type="button">Add to cart</button><ul id="cart-lines"></ul>'
            '<script src="/static/shop.js"></script>'
            f'<script src="{widget}/widget.js" crossorigin="anonymous"></script></body></html>'
        )

    return app
