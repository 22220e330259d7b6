"""The SDK's provider over the control store: a registered client read back, an authorization sent on to
the consent page with the request signed, a member's code loaded once and exchanged, the access token
verified, refreshed and revoked."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import anyio
from mcp.server.auth.provider import AuthorizationParams
from mcp.shared.auth import OAuthClientInformationFull
from pydantic import AnyUrl
from sqlalchemy import select

from api.agents.oauth import StoreProvider
from stacklens.agents import consent
from stacklens.control.db import session_scope
from stacklens.control.models import User
from stacklens.settings import Settings


def test_register_authorize_exchange_refresh_revoke(settings: Settings, make_org) -> None:
    acme = make_org("Acme")
    provider = StoreProvider(settings)
    client = OAuthClientInformationFull(
        client_id="c-1", client_name="Cursor", redirect_uris=[AnyUrl("http://127.0.0.1:9/cb")]
    )

    async def flow() -> None:
        await provider.register_client(client)
        found = await provider.get_client("c-1")
        assert found is not None and found.client_name == "Cursor"
        assert await provider.get_client("c-2") is None
        params = AuthorizationParams(
            state="s",
            scopes=["read", "write"],
            code_challenge="c" * 43,
            redirect_uri=AnyUrl("http://127.0.0.1:9/cb"),
            redirect_uri_provided_explicitly=True,
        )
        location = await provider.authorize(client, params)
        assert location.startswith(settings_url(settings) + "/oauth/consent?request=")
        asked = consent.read(settings, parse_qs(urlsplit(location).query)["request"][0])
        assert asked.scopes == ["read", "write"] and asked.client_id == "c-1"
        with session_scope(settings) as session:
            user_id = session.scalars(select(User.id).where(User.email == acme["email"])).one()
            back = consent.approve(session, asked, acme["org_id"], user_id, ["read"])
        code = parse_qs(urlsplit(back).query)["code"][0]
        loaded = await provider.load_authorization_code(client, code)
        assert loaded is not None and loaded.scopes == ["read"] and loaded.code_challenge == "c" * 43
        tokens = await provider.exchange_authorization_code(client, loaded)
        assert await provider.load_authorization_code(client, code) is None  # spent
        access = await provider.load_access_token(tokens.access_token)
        assert access is not None and access.scopes == ["read"]
        assert tokens.refresh_token is not None
        refresh = await provider.load_refresh_token(client, tokens.refresh_token)
        assert refresh is not None
        rotated = await provider.exchange_refresh_token(client, refresh, ["read"])
        assert await provider.load_access_token(tokens.access_token) is None
        fresh = await provider.load_access_token(rotated.access_token)
        assert fresh is not None
        await provider.revoke_token(fresh)
        assert await provider.load_access_token(rotated.access_token) is None

    anyio.run(flow)


def settings_url(settings: Settings) -> str:
    from stacklens.public_url import public_base_url

    return public_base_url(settings)
