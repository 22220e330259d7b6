"""The ASGI tunnel: POST only, the body's size checked as it streams in, mountable as a Starlette route."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
from starlette.applications import Starlette

from stacklens_sdk.tunnel import browser_dsn
from stacklens_sdk.tunnel.asgi import asgi_app, starlette_route
from tests.stacklens_sdk.helpers import make_app_key, read_lines


def _envelope(key: str) -> bytes:
    event = json.dumps({"event_id": "c" * 32, "platform": "javascript", "message": "from asgi"}).encode()
    header = json.dumps({"event_id": "c" * 32, "dsn": browser_dsn(key)}).encode()
    return b"\n".join([header, json.dumps({"type": "event", "length": len(event)}).encode(), event]) + b"\n"


async def _post(app, path: str, body: bytes, method: str = "POST", chunked: bool = False) -> httpx.Response:
    async def pieces():
        for start in range(0, len(body), 1000):
            yield body[start : start + 1000]

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://shop.test") as client:
        content = pieces() if chunked else body
        return await client.request(method, path, content=content if method == "POST" else None)


def test_the_app_writes_envelopes_and_refuses_the_rest(tmp_path: Path) -> None:
    key = make_app_key()
    app = asgi_app([key], str(tmp_path), max_body_bytes=4096)
    assert asyncio.run(_post(app, "/", _envelope(key))).status_code == 200
    assert [line["payload"]["message"] for line in read_lines(tmp_path)] == ["from asgi"]
    refused = asyncio.run(_post(app, "/", b"", method="GET"))
    assert refused.status_code == 405 and refused.headers["allow"] == "POST"
    # A streamed body without a length is cut off as soon as it passes the limit.
    assert asyncio.run(_post(app, "/", b"x" * 10_000, chunked=True)).status_code == 413
    assert asyncio.run(_post(app, "/", b"x" * 10_000)).status_code == 413


def test_a_starlette_route_serves_the_tunnel(tmp_path: Path) -> None:
    key = make_app_key()
    app = Starlette(routes=[starlette_route("/stacklens/tunnel", [key], str(tmp_path))])
    assert asyncio.run(_post(app, "/stacklens/tunnel", _envelope(key))).status_code == 200
    assert asyncio.run(_post(app, "/elsewhere", _envelope(key))).status_code == 404
    assert len(read_lines(tmp_path)) == 1
