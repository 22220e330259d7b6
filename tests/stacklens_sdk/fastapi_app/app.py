"""Test API for the Python end-to-end test: FastAPI with sentry-sdk's FastAPI integration through the SDK.

Run by the test as ``uvicorn --app-dir tests/stacklens_sdk/fastapi_app app:app`` with
``STACKLENS_TEST_APP_KEY`` and ``STACKLENS_TEST_STORAGE`` set.
"""

from __future__ import annotations

import logging
import os

import httpx
from fastapi import FastAPI, Request
from sentry_sdk.integrations.fastapi import FastApiIntegration
from sentry_sdk.integrations.starlette import StarletteIntegration

import stacklens_sdk

stacklens_sdk.init(
    app_key=os.environ["STACKLENS_TEST_APP_KEY"],
    storage_path=os.environ["STACKLENS_TEST_STORAGE"],
    environment="staging",
    release="shop-api@2.0.1",
    traces_sample_rate=1.0,
    in_app_include=["app"],
    integrations=[StarletteIntegration(), FastApiIntegration()],
)

log = logging.getLogger("shop.checkout")
log.setLevel(logging.INFO)
app = FastAPI()


class PaymentDeclined(Exception):
    pass


async def _price(request: Request, sku: str) -> dict[str, object]:
    # An outgoing call through httpx: an http.client span and an http breadcrumb.
    async with httpx.AsyncClient(base_url=str(request.base_url)) as client:
        response = await client.get("/api/price", params={"sku": sku})
        return response.json()


@app.get("/api/price")
async def price(sku: str) -> dict[str, object]:
    return {"sku": sku, "cents": 1250}


@app.get("/api/stock")
async def stock(request: Request) -> dict[str, object]:
    quote = await _price(request, "mug")
    missing = await _lookup_missing(request)
    return {"quote": quote, "missing_status": missing}


async def _lookup_missing(request: Request) -> int:
    async with httpx.AsyncClient(base_url=str(request.base_url)) as client:
        return (await client.get("/api/nowhere")).status_code


@app.post("/checkout")
async def checkout(request: Request) -> dict[str, object]:
    order = await request.json()
    stacklens_sdk.set_user({"id": "42", "email": "ada@example.com", "username": "ada"})
    stacklens_sdk.set_tag("plan", "pro")
    stacklens_sdk.set_extra("cart_size", len(order.get("items", [])))
    stacklens_sdk.add_breadcrumb(category="ui", message="checkout button pressed", level="info")
    log.info("checkout started for %d items", len(order.get("items", [])))
    quote = await _price(request, order["items"][0])
    order_total = quote["cents"] * len(order["items"])
    charge(order_total, order["card_number"])
    return {"ok": True}


def charge(amount_cents: int, card_number: str) -> None:
    attempts = 1
    raise PaymentDeclined(f"card declined for {amount_cents} cents after {attempts} attempt")
