"""`/mcp` behind bearer authentication, the OAuth 2.1 routes and metadata, installed on the app.

A request to `/mcp` carries `Authorization: Bearer` with a personal token, an OAuth access token or the
organization's API key. Without one, or with one unknown, expired or revoked, it answers 401 with
`WWW-Authenticate: Bearer … resource_metadata="<base>/.well-known/oauth-protected-resource/mcp"`: an MCP
client that speaks OAuth starts its flow from there (docs/agents.md).
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
from anyio import to_thread
from anyio.abc import TaskGroup
from fastapi import FastAPI
from starlette.datastructures import Headers
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from stacklens.agents.tokens import AgentIdentity, TokenRefused, resolve
from stacklens.control.db import session_scope
from stacklens.control.keys.api_identities import current_api_key
from stacklens.public_url import public_base_url
from stacklens.settings import Settings
from stacklens_contract.keys import API_KEY_PREFIX, is_app_key

if TYPE_CHECKING:
    from api.agents.routes import BuiltAgents

SCOPES = ["read", "write"]
RESOURCE_PATH = "/.well-known/oauth-protected-resource"
# The OAuth routes api/agents/routes.py builds, with their methods.
OAUTH_PATHS: dict[str, list[str]] = {
    RESOURCE_PATH: ["GET", "OPTIONS"],
    RESOURCE_PATH + "/mcp": ["GET", "OPTIONS"],
    "/.well-known/oauth-authorization-server": ["GET", "OPTIONS"],
    "/oauth/authorize": ["GET", "POST"],
    "/oauth/token": ["POST", "OPTIONS"],
    "/oauth/register": ["POST", "OPTIONS"],
    "/oauth/revoke": ["POST", "OPTIONS"],
}


def _identify(settings: Settings, raw: str) -> AgentIdentity:
    if raw.startswith(API_KEY_PREFIX):
        key = current_api_key(settings, raw)
        if key is None:
            raise TokenRefused("the API key is unknown or has been regenerated")
        return AgentIdentity(
            org_id=key.org_id,
            user_id=None,
            email="",
            role="owner",
            scopes=frozenset(SCOPES),
            kind="api_key",
            token_id=key.api_key_id,
            client="API key",
        )
    with session_scope(settings) as session:
        return resolve(session, raw)


class AgentDoor:
    """ASGI: authenticate, then hand the request to the MCP session manager with the caller in its state."""

    def __init__(self, settings: Settings, inner: ASGIApp) -> None:
        self.settings = settings
        self.inner = inner
        self.metadata_url = public_base_url(settings) + RESOURCE_PATH + "/mcp"

    async def _refuse(self, send: Send, reason: str, error: str = "invalid_token") -> None:
        challenge = (
            f'Bearer error="{error}", error_description="{reason}", resource_metadata="{self.metadata_url}"'
        )
        if error == "unauthorized":  # no credentials at all: RFC 6750 sends no error code
            challenge = f'Bearer resource_metadata="{self.metadata_url}"'
        body = json.dumps({"error": error, "error_description": reason}).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"www-authenticate", challenge.encode("latin-1", "replace")),
            (b"content-length", str(len(body)).encode()),
        ]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        header = Headers(scope=scope).get("authorization", "")
        scheme, _, raw = header.partition(" ")
        raw = raw.strip()
        if scheme.lower() != "bearer" or not raw:
            await self._refuse(send, "send Authorization: Bearer <token>", "unauthorized")
            return
        if is_app_key(raw):
            await self._refuse(send, "an app key identifies a project; use a personal token or the API key")
            return
        try:
            identity = await to_thread.run_sync(_identify, self.settings, raw)
        except TokenRefused as refused:
            await self._refuse(send, refused.reason)
            return
        scope.setdefault("state", {})["agent"] = identity
        await self.inner(scope, receive, send)


class LazyAgents:
    """The MCP SDK's side of the routes, built on the first request that needs it (docs/decisions.md,
    "Footprint of the server"): the SDK is imported and the MCP server built on a worker thread, then its
    session manager runs in a task of the app's lifespan until the lifespan ends. A request without a bearer
    token is refused by :class:`AgentDoor` before anything is loaded."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._built: BuiltAgents | None = None
        self._build_lock = threading.Lock()
        self._group: TaskGroup | None = None
        self._ready: anyio.Event | None = None
        self._stop: anyio.Event | None = None
        self._failure: BaseException | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The app's lifespan: a request may start the session manager inside it; it stops at the end."""
        async with anyio.create_task_group() as group:
            self._group, self._ready, self._stop, self._failure = group, None, anyio.Event(), None
            try:
                yield
            finally:
                self._stop.set()
                self._group = None

    def _build(self) -> BuiltAgents:
        with self._build_lock:
            if self._built is None:
                from api.agents.routes import build_agents

                self._built = build_agents(self.settings)
            return self._built

    async def _serve(self, ready: anyio.Event, stop: anyio.Event) -> None:
        try:
            built = await to_thread.run_sync(self._build)
            async with built.managers.fresh().run():
                ready.set()
                await stop.wait()
        except Exception as exc:  # the requests waiting answer 500 with it, as they would have at start
            self._failure = exc
            raise
        finally:
            ready.set()

    async def built(self) -> BuiltAgents:
        """The SDK's routes and session manager, started in this lifespan once."""
        if self._group is None or self._stop is None:
            raise RuntimeError("the MCP routes run in the app's lifespan, which has not started")
        if self._ready is None:
            self._ready = anyio.Event()
            self._group.start_soon(self._serve, self._ready, self._stop)
        await self._ready.wait()
        if self._failure is not None or self._built is None:
            raise RuntimeError("the MCP server could not start") from self._failure
        return self._built

    async def mcp(self, scope: Scope, receive: Receive, send: Send) -> None:
        await (await self.built()).managers(scope, receive, send)

    async def oauth(self, scope: Scope, receive: Receive, send: Send) -> None:
        await (await self.built()).router(scope, receive, send)


class AsgiCall:
    """An ASGI app calling ``call``: a route given a bound method would treat it as a request handler."""

    def __init__(self, call: ASGIApp) -> None:
        self.call = call

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.call(scope, receive, send)


def install_agents(app: FastAPI) -> None:
    """Mount `/mcp` and the OAuth routes on ``app``; the MCP SDK behind them loads with the first request
    that needs it (:class:`LazyAgents`), and its session manager runs in the app's lifespan."""
    settings: Settings = app.state.settings
    agents = LazyAgents(settings)
    routes: list[BaseRoute] = [
        Route("/mcp", endpoint=AgentDoor(settings, agents.mcp), methods=["GET", "POST", "DELETE"]),
        *(Route(path, endpoint=AsgiCall(agents.oauth), methods=m) for path, m in OAUTH_PATHS.items()),
    ]
    app.router.routes[0:0] = routes
    previous = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(inner: Any) -> AsyncIterator[Any]:
        async with agents.running(), previous(inner) as state:
            yield state

    app.router.lifespan_context = lifespan
