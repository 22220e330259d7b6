"""Browser tunnel: ``@sentry/browser`` posts envelopes here (its ``tunnel`` option) and they become log lines.

FastAPI/Starlette::

    app.router.routes.append(stacklens_sdk.tunnel.starlette_route("/stacklens/tunnel"))

Any WSGI framework::

    app.wsgi_app = stacklens_sdk.tunnel.TunnelMiddleware(app.wsgi_app, "/stacklens/tunnel")   # Flask
"""

from __future__ import annotations

from urllib.parse import quote

from stacklens_sdk.keys import check_app_key
from stacklens_sdk.tunnel.asgi import TunnelASGIApp, asgi_app, starlette_route
from stacklens_sdk.tunnel.core import DEFAULT_MAX_BODY_BYTES, DEFAULT_PATH, Tunnel, TunnelResponse
from stacklens_sdk.tunnel.wsgi import TunnelMiddleware, TunnelWSGIApp, wsgi_app

# ``.invalid`` never resolves (RFC 2606): with ``tunnel`` set the browser never contacts the DSN host.
BROWSER_DSN_HOST = "stacklens.invalid"


def browser_dsn(app_key: str) -> str:
    """The DSN to give ``Sentry.init`` in the page: it carries the application key for the tunnel to check.

    @sentry/browser accepts only letters, digits and ``_`` in a DSN key, so a per-service key whose service
    contains ``-`` cannot be used in the browser.
    """
    key = check_app_key(app_key)
    if "-" in key:
        raise ValueError("a per-service key with '-' in its service name cannot be used in a browser DSN")
    return f"https://{quote(key)}@{BROWSER_DSN_HOST}/1"


__all__ = [
    "BROWSER_DSN_HOST",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_PATH",
    "Tunnel",
    "TunnelASGIApp",
    "TunnelMiddleware",
    "TunnelResponse",
    "TunnelWSGIApp",
    "asgi_app",
    "browser_dsn",
    "starlette_route",
    "wsgi_app",
]
