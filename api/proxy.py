"""Trusted reverse proxies: take the client address and scheme from ``X-Forwarded-For`` /
``X-Forwarded-Proto`` only when the direct peer is listed in ``STACKLENS_TRUSTED_PROXIES``.

After this middleware, ``scope["client"]`` and ``scope["scheme"]`` are the real client's, so the session
cookie gets ``Secure`` and answers get HSTS exactly when the browser used HTTPS, and sign-in throttling and
key-usage logs see the client's address rather than the proxy's.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from stacklens.netaddr import Network, forwarded_client


class TrustedProxyMiddleware:
    def __init__(self, app: ASGIApp, networks: tuple[Network, ...]) -> None:
        self.app = app
        self.networks = networks

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and self.networks:
            peer, port = scope.get("client") or ("", 0)
            headers = dict(scope.get("headers") or [])
            forwarded_for = headers.get(b"x-forwarded-for")
            forwarded_proto = headers.get(b"x-forwarded-proto")
            client, scheme = forwarded_client(
                peer,
                forwarded_for.decode("latin-1") if forwarded_for else None,
                forwarded_proto.decode("latin-1") if forwarded_proto else None,
                self.networks,
            )
            if client != peer or scheme:
                scope = dict(scope)
                scope["client"] = (client, port)
                if scheme:
                    scope["scheme"] = (
                        scheme if scope["type"] == "http" else ("wss" if scheme == "https" else "ws")
                    )
        await self.app(scope, receive, send)
