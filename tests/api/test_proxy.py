"""Trusted reverse proxies: the forwarded client and scheme are taken only from a listed peer."""

from __future__ import annotations

import asyncio
from typing import Any

from api.proxy import TrustedProxyMiddleware
from stacklens.netaddr import parse_networks


def _seen(peer: str, headers: dict[bytes, bytes], kind: str = "http", trusted: str = "10.0.0.0/8") -> dict:
    """The scope the app behind the middleware gets for a request from ``peer``."""
    seen: dict[str, Any] = {}

    async def app(scope, receive, send) -> None:
        seen.update(scope)

    middleware = TrustedProxyMiddleware(app, parse_networks(trusted))
    scope = {"type": kind, "client": (peer, 51000), "scheme": "http", "headers": list(headers.items())}
    asyncio.run(middleware(scope, None, None))
    return seen


def test_a_trusted_proxy_names_the_client_and_the_scheme() -> None:
    scope = _seen("10.0.0.5", {b"x-forwarded-for": b"203.0.113.9, 10.0.0.7", b"x-forwarded-proto": b"https"})
    assert scope["client"] == ("203.0.113.9", 51000) and scope["scheme"] == "https"
    websocket = _seen("10.0.0.5", {b"x-forwarded-proto": b"https"}, kind="websocket")
    assert websocket["scheme"] == "wss"


def test_anyone_else_cannot_forge_the_headers() -> None:
    scope = _seen("198.51.100.1", {b"x-forwarded-for": b"203.0.113.9", b"x-forwarded-proto": b"https"})
    assert scope["client"] == ("198.51.100.1", 51000) and scope["scheme"] == "http"
    # Without any trusted proxy configured nothing is read at all.
    unset = _seen("10.0.0.5", {b"x-forwarded-for": b"203.0.113.9"}, trusted="")
    assert unset["client"] == ("10.0.0.5", 51000)
