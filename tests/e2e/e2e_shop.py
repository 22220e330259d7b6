"""The code of the end-to-end test's application: its error sites and its WSGI shop (in-app frames)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from typing import Any

import stacklens_sdk


class PaymentDeclined(Exception):
    pass


class CheckoutError(Exception):
    pass


# ---- error sites ----------------------------------------------------------------------------------------
def charge_card(order: int, cents: int) -> None:
    raise PaymentDeclined(f"card declined for order {order} ({cents} cents)")


def parse_quantity(text: str) -> int:
    return int(text)


def lookup_sku(sku: str) -> dict[str, Any]:
    catalogue: dict[str, dict[str, Any]] = {"LENS-1": {"price": 1200}}
    return catalogue[sku]


def checkout_from_web(order: int) -> None:
    charge_card(order, 1999 + order)


def checkout_from_batch(order: int) -> None:
    try:
        charge_card(order, 500 * order)
    finally:
        stacklens_sdk.add_breadcrumb(category="console", message=f"batch order {order} finished")


# ---- the WSGI application -------------------------------------------------------------------------------
def shop(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    path = environ.get("PATH_INFO", "")
    if path == "/checkout":
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = json.loads(environ["wsgi.input"].read(length) or b"{}")
        checkout_view(body)
    if path.startswith("/orders/"):
        time.sleep(0.01)
        payload = json.dumps({"order": path.rsplit("/", 1)[-1], "status": "shipped"}).encode()
        start_response(
            "200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))]
        )
        return [payload]
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b"not found"]


def checkout_view(body: dict[str, Any]) -> None:
    # A secret in extra data: the SDK must write it as [FILTERED].
    stacklens_sdk.set_extra("payment", {"card_holder": "Ada", "password": body.get("password")})
    raise CheckoutError(f"cart {body.get('cart')} has no shipping address")
