"""An MCP client's OAuth flow where the member signs in through their organization's single sign-on: the
official `mcp` client registers itself and starts the flow (PKCE), the member's browser goes from the consent
page's sign-in to a real OpenID Connect provider (oidc-provider on loopback, tests/stacklens/sso/provider.py),
back to the consent page, and approves; the client then calls a tool with the token it was given. A session
opened by one organization's single sign-on approves for that organization only, even for a member of
another one (the consent page offers it alone, and a forged choice is refused)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx
import httpx2
import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
from pydantic import AnyUrl

from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.settings import Settings
from stacklens.sso.config import save
from stacklens.warehouse.migrations import apply_migrations
from tests.api.agents.test_door import MemoryStorage, _csrf, _session_calls, audit, new_org, text_of
from tests.api.live import serve
from tests.stacklens.sso.provider import OidcProvider, oidc_provider, sso_settings

__all__ = ["oidc_provider"]
REDIRECT_URI = "http://127.0.0.1:18731/callback"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, warehouse_url: str) -> Iterator[tuple[str, Settings]]:
    # The served address is the public one (no STACKLENS_PUBLIC_URL): the provider calls back there.
    store = sso_settings(tmp_path_factory.mktemp("mcp-sso"), warehouse_url)
    store = store.model_copy(update={"public_url": None})
    apply_migrations(store)
    with serve(store) as url:
        yield url, store


def _company(url: str, store: Settings, provider: OidcProvider) -> dict[str, Any]:
    """An organization with a project, an issue and single sign-on for its domain; Ada signs in there as a
    member, and owns another organization of her own by password."""
    org = new_org(url, store, "Company")
    domain = f"{org['org_slug']}.test"
    client_id, secret = provider.register(f"{url}/auth/sso/callback")
    email = f"ada@{domain}"
    provider.set_users({"ada": {"email": email, "email_verified": True, "name": "Ada", "groups": ["dev"]}})
    with session_scope(store) as session:
        save(
            session,
            store,
            org["org_id"],
            {
                "issuer": provider.issuer,
                "client_id": client_id,
                "client_secret": secret,
                "scopes": ["openid", "email", "profile", "groups"],
                "role_map": {"dev": "member"},
                "default_role": "viewer",
                "allowed_domains": [domain],
                "session_max_age_minutes": 480,
            },
        )
        own, _ = accounts.create_organization(session, f"Ada's side project {domain}", email, "password-123")
        org["own_slug"] = own.slug
    return {**org, "ada": email}


def test_an_oauth_client_whose_member_signs_in_through_sso_calls_tools(
    server: tuple[str, Settings], oidc_provider: OidcProvider
) -> None:
    url, store = server
    org = _company(url, store, oidc_provider)
    landed: dict[str, str] = {}
    seen: dict[str, Any] = {}

    async def sign_in_through_sso_and_approve(authorize_url: str) -> None:
        # The member's browser: the authorization URL lands on the sign-in page (the consent page asks for a
        # member); "Sign in with SSO" with the work e-mail; the provider's sign-in; back on the consent page.
        async with httpx.AsyncClient(timeout=60) as browser:
            login = await browser.get(authorize_url, follow_redirects=True)
            assert "/login" in str(login.url) and 'id="sso-sign-in"' in login.text
            next_path = login.url.params["next"]
            assert next_path.startswith("/oauth/consent?request=")
            found = await browser.get(f"{url}/auth/sso", params={"who": org["ada"], "next": next_path})
            assert found.status_code == 200, found.text[:500]
            link = re.search(r'href="([^"]+)" id="sso-continue-link"', found.text)
            assert link, found.text[:500]
            start = await browser.get(urljoin(url, link.group(1).replace("&amp;", "&")))
            assert start.status_code == 303 and start.headers["location"].startswith(oidc_provider.issuer)
            callback = await anyio.to_thread.run_sync(
                oidc_provider.sign_in, start.headers["location"], "ada", f"{url}/auth/sso/callback"
            )
            back = await browser.get(callback)
            assert back.status_code == 303 and back.headers["location"] == next_path, back.text[:500]
            page = await browser.get(urljoin(url, next_path))
            assert page.status_code == 200 and 'id="approve"' in page.text, page.text[:500]
            assert org["ada"] in page.text and "Agent under test" in page.text
            seen["offered"] = re.findall(r'<option value="([^"]+)"', page.text)
            blob = re.search(r'name="request" value="([^"]+)"', page.text)
            assert blob
            decided = {"request": blob.group(1), "decision": "approve", "csrf_token": _csrf(page.text)}
            # Her own organization is not the single sign-on's: refused, however the form is changed.
            forged = await browser.post(f"{url}/oauth/consent", data={**decided, "org": org["own_slug"]})
            seen["forged"] = forged.status_code
            approved = await browser.post(f"{url}/oauth/consent", data={**decided, "org": org["org_slug"]})
            assert approved.status_code == 302, approved.text[:500]
            location = approved.headers["location"]
            assert location.startswith(REDIRECT_URI)
            query = parse_qs(urlsplit(location).query)
            landed.update({"code": query["code"][0], "state": query["state"][0]})

    async def callback() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=landed["code"], state=landed["state"])

    storage = MemoryStorage()
    provider = OAuthClientProvider(
        server_url=f"{url}/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="Agent under test", redirect_uris=[AnyUrl(REDIRECT_URI)], scope="read"
        ),
        storage=storage,
        redirect_handler=sign_in_through_sso_and_approve,
        callback_handler=callback,
    )

    async def go() -> list[Any]:
        async with httpx2.AsyncClient(auth=provider, timeout=60) as http:
            return await _session_calls(
                url, http, [("list_issues", {"project": org["project"], "status": "all"})]
            )

    _, listed = anyio.run(go)
    assert seen["offered"] == [org["org_slug"]] and seen["forged"] == 404
    assert not listed.is_error, text_of(listed)
    assert json.loads(text_of(listed))["covers"]["count"] == 1
    assert storage.tokens is not None and storage.tokens.access_token.startswith("stacklens_oat_")
    entries = [e for e in audit(url, org) if e["detail"].get("client") == "Agent under test"]
    assert entries and entries[0]["detail"]["email"] == org["ada"]
    assert entries[0]["detail"]["token_kind"] == "oauth"
