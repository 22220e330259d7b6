"""What `/mcp` and the OAuth routes are made of: the MCP SDK's handlers and session manager.

Imported by :mod:`api.agents.door` on the first request to one of these routes, not when the app is built:
the SDK and what it brings (~30 MiB resident, 500 modules) stay out of a server no agent talks to
(docs/decisions.md, "Footprint of the server").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
from starlette.routing import BaseRoute, Route, Router
from starlette.types import Receive, Scope, Send

from api.agents.door import RESOURCE_PATH, SCOPES
from api.agents.oauth import StoreProvider
from api.agents.server import build_server
from stacklens.public_url import public_base_url
from stacklens.settings import Settings


def oauth_routes(settings: Settings, base: str) -> list[BaseRoute]:
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


@dataclass(frozen=True)
class BuiltAgents:
    """The MCP side of one app: a router of the OAuth routes, and the session managers `/mcp` hands its
    authenticated requests to."""

    router: Router
    managers: SessionManagers


def build_agents(settings: Settings) -> BuiltAgents:
    """The MCP server with its session managers, and the OAuth routes :func:`api.agents.door.install_agents`
    mounts (their paths are :data:`api.agents.door.OAUTH_PATHS`)."""
    routes = oauth_routes(settings, public_base_url(settings))
    return BuiltAgents(Router(routes=routes), SessionManagers(build_server(settings)))
