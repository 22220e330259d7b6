"""OAuth 2.1 for MCP clients on the official SDK's handlers: dynamic client registration
(`POST /oauth/register`), `/oauth/authorize` (sent on to the member's consent page), `/oauth/token` (PKCE
checked by the SDK), `/oauth/revoke`, and the authorization server's metadata. This provider keeps the state
in the control store (:mod:`stacklens.agents.oauth_store`)."""

from __future__ import annotations

from typing import Any

from anyio import to_thread
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    TokenError,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from stacklens.agents import consent, oauth_store
from stacklens.agents.tokens import TokenRefused, resolve
from stacklens.control.db import session_scope
from stacklens.public_url import public_base_url
from stacklens.settings import Settings


class StoreProvider:
    """The SDK's ``OAuthAuthorizationServerProvider`` over the control store."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    async def _run(self, fn: Any, *args: Any) -> Any:
        def work() -> Any:
            with session_scope(self.settings) as session:
                return fn(session, *args)

        return await to_thread.run_sync(work)

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        info = await self._run(lambda s: oauth_store.load_client(s, self.settings, client_id))
        return OAuthClientInformationFull.model_validate(info) if info else None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        info = client_info.model_dump(mode="json", exclude_none=True)
        await self._run(lambda s: oauth_store.save_client(s, self.settings, str(client_info.client_id), info))

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        request = consent.ConsentRequest(
            client_id=str(client.client_id),
            redirect_uri=str(params.redirect_uri),
            redirect_uri_explicit=params.redirect_uri_provided_explicitly,
            code_challenge=params.code_challenge,
            state=params.state,
            scopes=consent.requested_scopes(params.scopes),
            resource=params.resource,
        )
        blob = consent.sign(self.settings, request)
        return f"{public_base_url(self.settings)}/oauth/consent?request={blob}"

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        grant = await self._run(lambda s: oauth_store.find_code(s, str(client.client_id), authorization_code))
        if grant is None:
            return None
        return AuthorizationCode(
            code=authorization_code,
            scopes=grant.scopes,
            expires_at=grant.expires_at.timestamp(),
            client_id=grant.client_id,
            code_challenge=grant.code_challenge,
            redirect_uri=grant.redirect_uri,
            redirect_uri_provided_explicitly=grant.redirect_uri_explicit,
            resource=grant.resource,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        try:
            issued = await self._run(
                lambda s: oauth_store.exchange_code(s, str(client.client_id), authorization_code.code)
            )
        except LookupError as exc:
            raise TokenError("invalid_grant", str(exc)) from exc
        return _token(issued)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        scopes = await self._run(
            lambda s: oauth_store.refresh_scopes(s, str(client.client_id), refresh_token)
        )
        if scopes is None:
            return None
        return RefreshToken(token=refresh_token, client_id=str(client.client_id), scopes=scopes)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        try:
            issued = await self._run(
                lambda s: oauth_store.exchange_refresh(s, str(client.client_id), refresh_token.token, scopes)
            )
        except LookupError as exc:
            raise TokenError("invalid_grant", str(exc)) from exc
        return _token(issued)

    async def load_access_token(self, token: str) -> AccessToken | None:
        def load(session: Any) -> AccessToken | None:
            try:
                who = resolve(session, token)
            except TokenRefused:
                return None
            return AccessToken(token=token, client_id=who.client, scopes=sorted(who.scopes))

        result: AccessToken | None = await self._run(load)
        return result

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        await self._run(lambda s: oauth_store.revoke_by_secret(s, token.token))


def _token(issued: oauth_store.IssuedTokens) -> OAuthToken:
    return OAuthToken(
        access_token=issued.access_token,
        expires_in=issued.expires_in,
        scope=" ".join(issued.scopes),
        refresh_token=issued.refresh_token,
    )
