"""The tunnel as a plain ASGI application, mountable as a Starlette/FastAPI route (no hard dependency)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from stacklens_sdk.tunnel.core import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_PATH,
    Tunnel,
    TunnelResponse,
    error_response,
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class TunnelASGIApp:
    """ASGI app accepting ``POST`` envelopes from ``@sentry/browser``'s ``tunnel`` option."""

    def __init__(self, tunnel: Tunnel | None = None) -> None:
        self.tunnel = tunnel or Tunnel()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if scope.get("method") != "POST":
            await _respond(send, error_response(405, "use POST"), extra=[(b"allow", b"POST")])
            return
        headers = {k.lower(): v for k, v in scope.get("headers") or []}
        limit = self.tunnel.max_body_bytes
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _respond(send, error_response(413, f"envelope larger than {limit} bytes"))
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await _respond(send, error_response(413, f"envelope larger than {limit} bytes"))
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        encoding = headers.get(b"content-encoding")
        # A few syscalls of local appends: cheap enough to run on the event loop.
        response = self.tunnel.handle(b"".join(chunks), encoding.decode("latin-1") if encoding else None)
        await _respond(send, response)


async def _respond(
    send: Send, response: TunnelResponse, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = response.encoded()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": response.status, "headers": headers + (extra or [])})
    await send({"type": "http.response.body", "body": body})


def asgi_app(
    app_keys: Iterable[str] | None = None,
    storage_path: str | None = None,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> TunnelASGIApp:
    """An ASGI tunnel; keys and directory default to those given to ``stacklens_sdk.init``."""
    return TunnelASGIApp(Tunnel(app_keys, storage_path, max_body_bytes=max_body_bytes))


def starlette_route(
    path: str = DEFAULT_PATH,
    app_keys: Iterable[str] | None = None,
    storage_path: str | None = None,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> Any:
    """A ``starlette.routing.Route`` for the tunnel: ``app.router.routes.append(starlette_route())``.

    Works for FastAPI too (a FastAPI app is a Starlette app). Starlette is imported only here.
    """
    from starlette.routing import Route

    return Route(
        path, endpoint=asgi_app(app_keys, storage_path, max_body_bytes=max_body_bytes), methods=["POST"]
    )
