"""JSON request bodies pass the depth guard before any route reads them (API and dashboards alike).

FastAPI parses a pydantic route's body with the standard library, which recurses once per level: 10,000
levels fail as a bare "There was an error parsing the body", and 900 levels reach the route. This middleware
measures every body sent as JSON (``application/json`` or ``…+json``, not compressed) with the one depth
guard (:mod:`stacklens.ingest.jsondepth`) first. A body too deep, or too large to measure, is refused when the
route first reads it: the refusal is an HTTP exception raised from ``receive``, so each route answers it its
own way (the API's error shape, the dashboards' page, the Sentry endpoints' CORS headers) and a route that
never reads its body is not disturbed. The body is read whole once, which FastAPI does for JSON anyway.

FastAPI parses a body field only from a body labelled JSON (strict content type), so bodies labelled otherwise
pass through unmeasured; a route that parses a body as JSON whatever its label (Explore's) parses it with
:func:`stacklens.ingest.jsondepth.loads`, the same guard.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import error_response
from stacklens.ingest.jsondepth import MAX_JSON_DEPTH, nests_within, too_deep_message

# 20 MiB: Relay's limit for API request bodies, and the Sentry endpoints' (whose /store/ takes JSON). No JSON
# route of the service needs more; beyond it a body is refused before it is read, so nothing is buffered.
MAX_JSON_BODY_BYTES = 20 * 1024 * 1024

_WORDS = {400: "Bad Request", 413: "Payload Too Large"}


class JsonBodyRefused(StarletteHTTPException):
    """A JSON body the depth guard refused (400) or too large to measure (413)."""

    @property
    def error(self) -> str:
        return _WORDS[self.status_code]


def _is_json(headers: Headers) -> bool:
    media = headers.get("content-type", "").partition(";")[0].strip().lower()
    encoding = headers.get("content-encoding", "identity").strip().lower()
    # A compressed body is measured by the route that decodes it (the Sentry endpoints do).
    return (media == "application/json" or media.endswith("+json")) and encoding in ("", "identity")


class JsonDepthMiddleware:
    """Reads a JSON body whole before the route, measures it, and replays it (or the refusal) to the route."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _is_json(Headers(scope=scope)):
            await self.app(scope, receive, send)
            return
        messages, refusal = await _read(scope, receive)

        async def replay() -> Message:
            if refusal is not None:
                raise refusal
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


async def _read(scope: Scope, receive: Receive) -> tuple[list[Message], JsonBodyRefused | None]:
    """The body's messages as received, and the refusal the route will meet, if any."""
    too_large = JsonBodyRefused(413, f"a JSON body may be at most {MAX_JSON_BODY_BYTES // (1024 * 1024)} MiB")
    declared = Headers(scope=scope).get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_JSON_BODY_BYTES:
        return [], too_large
    messages: list[Message] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages, None  # the client went away: the route meets the disconnect as before
        size += len(message.get("body", b""))
        if size > MAX_JSON_BODY_BYTES:
            return [], too_large
        if not message.get("more_body", False):
            break
    body = b"".join(m.get("body", b"") for m in messages)
    if not nests_within(body, MAX_JSON_DEPTH):
        return messages, JsonBodyRefused(400, too_deep_message(MAX_JSON_DEPTH, "the JSON body"))
    return messages, None


def install_json_depth(app: FastAPI) -> None:
    """The middleware, and the answer to its refusal: the API's error shape under ``/api``, else the app's
    own HTTP error answer (the dashboards' page)."""
    app.add_middleware(JsonDepthMiddleware)

    @app.exception_handler(JsonBodyRefused)
    async def _refused(request: Request, exc: JsonBodyRefused) -> Response:
        if request.url.path.startswith("/api"):
            return error_response(exc.status_code, exc.error, str(exc.detail))
        handler = request.app.exception_handlers.get(StarletteHTTPException)
        if handler is None:
            return error_response(exc.status_code, exc.error, str(exc.detail))
        answer: Response = await handler(request, StarletteHTTPException(exc.status_code, str(exc.detail)))
        return answer
