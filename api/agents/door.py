"""`/mcp` behind bearer authentication, the OAuth 2.1 routes and metadata, installed on the app.

A request to `/mcp` carries `Authorization: Bearer` with a personal token, an OAuth access token or the
organization's API key. Without one, or with one unknown, expired or revoked, it answers 401 with
`WWW-Authenticate: Bearer … resource_metadata="<base>/.well-known/oauth-protected-resource/mcp"`: an MCP
client that speaks OAuth starts its flow from there (docs/agents.md).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from anyio import to_thread
from fastapi import FastAPI
from mcp.server.auth.handlers.authorize import AuthorizationHandler
from mcp.server.auth.handlers.metadata import MetadataHandler, ProtectedResourceMetadataHandler
from mcp.server.auth.handlers.register import RegistrationHandler
from mcp.server.auth.handlers.revoke import RevocationHandler
from mcp.server.auth.handlers.token import TokenHandler
from mcp.server.auth.middleware.client_auth import ClientAuthenticator
from mcp.server.auth.routes import build_metadata, cors_middleware
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.auth import ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.datastructures import Headers
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from api.agents.oauth import StoreProvider
from api.agents.server import build_server
from stacklens.agents.tokens import AgentIdentity, TokenRefused, resolve
from stacklens.control.api_key_identities import current_api_key
from stacklens.control.db import session_scope
from stacklens.public_url import public_base_url
from stacklens.settings import Settings
from stacklens_contract.keys import API_KEY_PREFIX, is_app_key

SCOPES = ["read", "write"]
RESOURCE_PATH = "/.well-known/oauth-protected-resource"


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


def _oauth_routes(settings: Settings, base: str) -> list[BaseRoute]:
    provider: Any = StoreProvider(settings)
    issuer = AnyHttpUrl(base + "/")
    registration = ClientRegistrationOptions(enabled=True, valid_scopes=SCOPES, default_scopes=["read"])
    revocation = RevocationOptions(enabled=True)
    metadata = build_metadata(issuer, None, registration, revocation)
    metadata.authorization_endpoint = AnyHttpUrl(base + "/oauth/authorize")
    metadata.token_endpoint = AnyHttpUrl(base + "/oauth/token")
    metadata.registration_endpoint = AnyHttpUrl(base + "/oauth/register")
    metadata.revocation_endpoint = AnyHttpUrl(base + "/oauth/revoke")
    authenticator = ClientAuthenticator(provider)
    resource = ProtectedResourceMetadata(
        resource=AnyHttpUrl(base + "/mcp"),
        authorization_servers=[issuer],
        scopes_supported=SCOPES,
        resource_name="StackLens MCP server",
    )
    resource_handler = cors_middleware(ProtectedResourceMetadataHandler(resource).handle, ["GET", "OPTIONS"])
    metadata_handler = cors_middleware(MetadataHandler(metadata).handle, ["GET", "OPTIONS"])
    return [
        Route(RESOURCE_PATH, endpoint=resource_handler, methods=["GET", "OPTIONS"]),
        Route(RESOURCE_PATH + "/mcp", endpoint=resource_handler, methods=["GET", "OPTIONS"]),
        Route(
            "/.well-known/oauth-authorization-server", endpoint=metadata_handler, methods=["GET", "OPTIONS"]
        ),
        Route(
            "/oauth/authorize",
            endpoint=AuthorizationHandler(provider).handle,
            methods=["GET", "POST"],
        ),
        Route(
            "/oauth/token",
            endpoint=cors_middleware(TokenHandler(provider, authenticator).handle, ["POST", "OPTIONS"]),
            methods=["POST", "OPTIONS"],
        ),
        Route(
            "/oauth/register",
            endpoint=cors_middleware(RegistrationHandler(provider, registration).handle, ["POST", "OPTIONS"]),
            methods=["POST", "OPTIONS"],
        ),
        Route(
            "/oauth/revoke",
            endpoint=cors_middleware(RevocationHandler(provider, authenticator).handle, ["POST", "OPTIONS"]),
            methods=["POST", "OPTIONS"],
        ),
    ]


class SessionManagers:
    """The MCP session manager of the app's current lifespan. The SDK's manager runs once; an app whose
    lifespan is entered again (a test's second client of the same app, a server restarted in-process) gets
    a fresh one each time."""

    def __init__(self, server: MCPServer[Any]) -> None:
        self.server = server
        self.current: StreamableHTTPSessionManager | None = None

    def fresh(self) -> StreamableHTTPSessionManager:
        self.server.streamable_http_app(
            stateless_http=True,
            json_response=True,
            # The door authenticates every request by its bearer token (no cookie is ever honoured), so a
            # rebinding page gains nothing; the Host a proxy forwards is the operator's to choose.
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self.current = self.server.session_manager
        return self.current

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.current is None:
            raise RuntimeError("the MCP session manager runs in the app's lifespan, which has not started")
        await self.current.handle_request(scope, receive, send)


def install_agents(app: FastAPI) -> None:
    """Mount `/mcp` and the OAuth routes on ``app``; the MCP session manager runs in the app's lifespan."""
    settings: Settings = app.state.settings
    base = public_base_url(settings)
    managers = SessionManagers(build_server(settings))
    door = AgentDoor(settings, managers)
    routes: list[BaseRoute] = [
        Route("/mcp", endpoint=door, methods=["GET", "POST", "DELETE"]),
        *_oauth_routes(settings, base),
    ]
    app.router.routes[0:0] = routes
    previous = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(inner: Any) -> AsyncIterator[Any]:
        async with managers.fresh().run(), previous(inner) as state:
            yield state

    app.router.lifespan_context = lifespan
