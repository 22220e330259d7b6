"""Dashboard sessions, CSRF tokens and security headers.

The cookie is signed (itsdangerous, keyed by the server secret) and holds the CSRF token and, once signed
in, the random token of a server-side session row (``stacklens.control.signin_sessions``): signing out, a
password change or removal from an organization revoke the row, so a copied cookie stops working at once.
It is HttpOnly and SameSite=Lax always, and Secure whenever the request arrived over https (directly, or
through a proxy listed in ``STACKLENS_TRUSTED_PROXIES``); HTTPS answers carry HSTS too. Every page gets a
Content-Security-Policy with no ``unsafe-inline`` script: all JavaScript lives in ``/static`` files and
page data travels in ``<script type="application/json">`` blocks, which browsers never execute."""

from __future__ import annotations

import hmac
import json
import secrets
from typing import Any

from itsdangerous import BadSignature, URLSafeTimedSerializer
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SESSION_COOKIE = "stacklens_session"
SESSION_MAX_AGE = 14 * 24 * 3600  # the cookie's own limit; the server-side row decides sooner
CSRF_FIELD = "csrf_token"

# 'unsafe-inline' for styles only: Plotly sets element style attributes while drawing. Scripts: self only.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'"
)


HSTS = "max-age=31536000; includeSubDomains"


class CsrfError(Exception):
    """A form arrived without the session's CSRF token."""


def _serializer(secret: bytes) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(secret, salt="stacklens.dashboard.session")


class SessionMiddleware:
    """Load ``scope["session"]`` from the signed cookie; write it back when a handler changed it."""

    def __init__(self, app: ASGIApp, secret: bytes, max_age: int = SESSION_MAX_AGE) -> None:
        self.app = app
        self.serializer = _serializer(secret)
        self.max_age = max_age

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # Most requests carry no cookie at all (SDKs, shippers, API clients: every ingest request): they are
        # told apart by one pass over the raw headers, and an empty session that stays empty costs no JSON.
        raw = None
        if any(name == b"cookie" for name, _ in scope["headers"]):
            raw = Request(scope).cookies.get(SESSION_COOKIE)
        data: dict[str, Any] = {}
        if raw:
            try:
                loaded = self.serializer.loads(raw, max_age=self.max_age)
                data = loaded if isinstance(loaded, dict) else {}
            except BadSignature:
                data = {}
        scope["session"] = data
        before = json.dumps(data, sort_keys=True) if data else None
        secure = scope.get("scheme") == "https"

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                session = scope["session"]
                if bool(session) if before is None else json.dumps(session, sort_keys=True) != before:
                    headers = MutableHeaders(scope=message)
                    attrs = "Path=/; HttpOnly; SameSite=Lax" + ("; Secure" if secure else "")
                    if session:
                        value = self.serializer.dumps(session)
                        headers.append(
                            "Set-Cookie", f"{SESSION_COOKIE}={value}; Max-Age={self.max_age}; {attrs}"
                        )
                    else:
                        headers.append("Set-Cookie", f"{SESSION_COOKIE}=; Max-Age=0; {attrs}")
            await send(message)

        await self.app(scope, receive, send_wrapper)


class SecurityHeadersMiddleware:
    """Add the CSP and friends to every HTML answer (JSON and static answers get the cheap ones too)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("X-Content-Type-Options", "nosniff")
                headers.setdefault("Referrer-Policy", "same-origin")
                headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
                headers.setdefault("X-Frame-Options", "DENY")
                if scope.get("scheme") == "https":
                    # Only over HTTPS (RFC 6797 §7.2); a year, the value browsers' preload lists expect.
                    headers.setdefault("Strict-Transport-Security", HSTS)
                if headers.get("content-type", "").startswith("text/html"):
                    # Pages show keys, invitation links and event data: never kept by a shared cache or the
                    # browser's disk cache.
                    headers.setdefault("Cache-Control", "no-store")
            await send(message)

        await self.app(scope, receive, send_wrapper)


def csrf_token(request: Request) -> str:
    """The session's CSRF token, created on first use (the login page creates it before sign-in)."""
    session = request.scope.setdefault("session", {})
    token = str(session.get("csrf") or "")
    if not token:
        token = secrets.token_urlsafe(32)
        session["csrf"] = token
    return token


def check_csrf(request: Request, submitted: str | None) -> None:
    """Refuse a form whose token does not match the session's (constant-time compare)."""
    expected = request.scope.get("session", {}).get("csrf")
    if not expected or not submitted or not hmac.compare_digest(str(expected), str(submitted)):
        raise CsrfError("the form is out of date or was not sent by this site; reload the page and try again")


def sign_in(request: Request, session_token: str) -> None:
    """Bind the cookie to a new server-side session (a new CSRF token too, so a planted one cannot survive
    sign-in)."""
    session = request.scope["session"]
    session.clear()
    session["sid"] = session_token
    session["csrf"] = secrets.token_urlsafe(32)


def session_token(request: Request) -> str | None:
    token = request.scope.get("session", {}).get("sid")
    return token if isinstance(token, str) else None


def sign_out(request: Request) -> None:
    request.scope["session"].clear()
