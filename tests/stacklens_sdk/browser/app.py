"""Test web app for the browser end-to-end test: a shop page using @sentry/browser through the tunnel.

Run by the test as ``uvicorn --app-dir tests/stacklens_sdk/browser app:app`` with ``STACKLENS_TEST_APP_KEY``,
``STACKLENS_TEST_STORAGE`` and ``STACKLENS_TEST_BUNDLE`` (the esbuild bundle of @sentry/browser) set.
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse

import stacklens_sdk
from stacklens_sdk.tunnel import browser_dsn, starlette_route

STATIC = Path(__file__).parent / "static"
APP_KEY = os.environ["STACKLENS_TEST_APP_KEY"]

stacklens_sdk.init(app_key=APP_KEY, storage_path=os.environ["STACKLENS_TEST_STORAGE"], environment="test")

app = FastAPI()
app.router.routes.append(starlette_route("/stacklens/tunnel"))

PAGE = """<!doctype html>
<html>
<head>
<meta charset="utf-8">
<title>Shop</title>
<link rel="stylesheet" href="/static/style.css">
<script src="/static/sentry.bundle.js"></script>
<script>window.STACKLENS_CONFIG = {config};</script>
</head>
<body>
<h1>Shop</h1>
<img class="hero" src="/static/hero.png" alt="hero">
<ul id="products"></ul>
<button id="checkout">Checkout</button>
<button id="recommend">Recommend</button>
<script src="/static/page.js"></script>
</body>
</html>
"""


@app.get("/", response_class=HTMLResponse)
def page() -> str:
    config = {"dsn": browser_dsn(APP_KEY), "tunnel": "/stacklens/tunnel"}
    # The JSON goes inside a <script>: escape '<' so no value can close the element.
    return PAGE.replace("{config}", json.dumps(config).replace("<", "\\u003c"))


@app.get("/next", response_class=HTMLResponse)
def next_page() -> str:
    return f"<!doctype html><title>{html.escape('Next')}</title><p>next page</p>"


@app.get("/static/sentry.bundle.js")
def bundle() -> FileResponse:
    return FileResponse(os.environ["STACKLENS_TEST_BUNDLE"], media_type="text/javascript")


@app.get("/static/{name}")
def static(name: str) -> FileResponse:
    path = (STATIC / name).resolve()
    if path.parent != STATIC.resolve() or not path.is_file():
        return JSONResponse({"error": "not found"}, status_code=404)
    return FileResponse(path)


@app.get("/api/products")
def products() -> dict[str, object]:
    return {"products": [{"name": "Mug", "price": "9.00"}, {"name": "Shirt", "price": "19.00"}]}


@app.get("/api/missing")
def missing() -> JSONResponse:
    return JSONResponse({"error": "no such thing"}, status_code=404)
