"""The tunnel for WSGI frameworks (Flask, Django, Pyramid, …): a WSGI view and a path-routing middleware."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from stacklens_sdk.tunnel.core import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_PATH,
    Tunnel,
    TunnelResponse,
    error_response,
)

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

_REASONS = {
    200: "OK",
    400: "Bad Request",
    403: "Forbidden",
    405: "Method Not Allowed",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    503: "Service Unavailable",
}


class TunnelWSGIApp:
    """WSGI application accepting ``POST`` envelopes from ``@sentry/browser``'s ``tunnel`` option."""

    def __init__(self, tunnel: Tunnel | None = None) -> None:
        self.tunnel = tunnel or Tunnel()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        response = self._handle(environ)
        body = response.encoded()
        headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
        if response.status == 405:
            headers.append(("Allow", "POST"))
        start_response(f"{response.status} {_REASONS.get(response.status, '')}".strip(), headers)
        return [body]

    def _handle(self, environ: dict[str, Any]) -> TunnelResponse:
        if environ.get("REQUEST_METHOD") != "POST":
            return error_response(405, "use POST")
        limit = self.tunnel.max_body_bytes
        declared = str(environ.get("CONTENT_LENGTH") or "").strip()
        stream = environ["wsgi.input"]
        if declared:
            if not declared.isdigit():
                return error_response(400, "invalid Content-Length")
            if int(declared) > limit:
                return error_response(413, f"envelope larger than {limit} bytes")
            body = stream.read(int(declared))
        else:
            # Chunked request without a length: read at most one byte past the limit.
            body = stream.read(limit + 1)
        return self.tunnel.handle(body, environ.get("HTTP_CONTENT_ENCODING"))


class TunnelMiddleware:
    """Serves the tunnel at ``path`` and passes every other request to the wrapped WSGI application.

    Flask: ``app.wsgi_app = TunnelMiddleware(app.wsgi_app)``; Django (``wsgi.py``):
    ``application = TunnelMiddleware(get_wsgi_application())``.
    """

    def __init__(
        self,
        app: WSGIApp,
        path: str = DEFAULT_PATH,
        app_keys: Iterable[str] | None = None,
        storage_path: str | None = None,
        *,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    ) -> None:
        self.app = app
        self.path = path.rstrip("/") or "/"
        self.tunnel_app = TunnelWSGIApp(Tunnel(app_keys, storage_path, max_body_bytes=max_body_bytes))

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = (environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")).rstrip("/") or "/"
        if path == self.path:
            return self.tunnel_app(environ, start_response)
        return self.app(environ, start_response)


def wsgi_app(
    app_keys: Iterable[str] | None = None,
    storage_path: str | None = None,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> TunnelWSGIApp:
    """A WSGI tunnel; keys and directory default to those given to ``stacklens_sdk.init``."""
    return TunnelWSGIApp(Tunnel(app_keys, storage_path, max_body_bytes=max_body_bytes))
