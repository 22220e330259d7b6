"""Company sign-in through the dashboards, against a real OpenID Connect provider on loopback: "Sign in with
SSO" by e-mail domain leads to the provider and back into the organization (a session that ends at the
organization's maximum age); a callback carried to another browser, a replayed one and a forged ID token show
the person a plain message while the reason goes to the audit log; enforced SSO refuses a correct password
except for a break-glass account named on the command line, whose sign-ins owners see on the audit page; the
settings page names a wrong field and "Test sign-in" tries unsaved settings without changing anything."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from stacklens.cli.main import main
from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.control.models import Membership, SsoSession, User, UserSession, utcnow
from stacklens.settings import Settings, override_settings
from stacklens.sso.config import read_settings, save
from stacklens.sso.signin import PLAIN_MESSAGE
from tests.dashboards.conftest import csrf_of
from tests.stacklens.sso.provider import CALLBACK, PUBLIC, OidcProvider, new_org, oidc_provider, sso_settings

__all__ = ["oidc_provider"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, warehouse_url: str) -> Settings:
    return sso_settings(tmp_path_factory.mktemp("sso-pages"), warehouse_url)


@pytest.fixture(scope="module")
def app(store: Settings) -> Any:
    from stacklens.cli.app import build_app

    return build_app(store)


@pytest.fixture
def browser(app: Any) -> Iterator[TestClient]:
    with TestClient(app, base_url=PUBLIC) as client:
        yield client


@pytest.fixture
def acme(store: Settings, oidc_provider: OidcProvider) -> dict[str, Any]:
    org = new_org(store, "Acme")
    domain = f"{org['org_slug']}.test"  # each test's organization has its own domain in the shared store
    client_id, secret = oidc_provider.register(CALLBACK)
    oidc_provider.set_users(
        {
            "ada": {"email": f"ada@{domain}", "email_verified": True, "name": "Ada", "groups": ["sre"]},
            "bob": {"email": f"bob@{domain}", "email_verified": True, "groups": ["dev"]},
        }
    )
    oidc_provider.reset()
    body = {
        "issuer": oidc_provider.issuer,
        "client_id": client_id,
        "client_secret": secret,
        "scopes": "openid email profile groups",
        "role_map": {"sre": "owner", "dev": "member"},
        "allowed_domains": [domain],
        "session_max_age_minutes": 5,
    }
    with session_scope(store) as session:
        save(session, store, org["org_id"], body)
    return {**org, "client_id": client_id, "secret": secret, "domain": domain}


def _callback_path(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


def _to_provider(browser: TestClient, acme: dict[str, Any]) -> str:
    """ "Sign in with SSO" with a work e-mail, up to the provider's address."""
    login = browser.get("/login")
    assert "Sign in with SSO" in login.text
    found = browser.get("/auth/sso", params={"who": f"someone@{acme['domain'].upper()}"})
    assert found.status_code == 200
    start = re.search(r'href="(/auth/sso/[^"]+/start[^"]*)"', found.text)
    assert start and f"/auth/sso/{acme['org_slug']}/start" in start.group(1)
    path = start.group(1).replace("&amp;", "&")
    # Started on another name of this server, the sign-in moves to the callback's host first (its cookie is
    # the one the provider's redirect brings back).
    moved = browser.get("http://127.0.0.1:8000" + path, follow_redirects=False)
    assert moved.status_code == 303 and moved.headers["location"].startswith(PUBLIC + path.split("?")[0])
    started = browser.get(path, follow_redirects=False)
    assert started.status_code == 303
    location = started.headers["location"]
    assert "code_challenge_method=S256" in location and f"client_id={acme['client_id']}" in location
    return location


def _audit(browser: TestClient, acme: dict[str, Any], action: str = "signin") -> list[dict[str, Any]]:
    auth = {"Authorization": f"Bearer {acme['api_key']}"}
    return browser.get("/api/audit", params={"action": action}, headers=auth).json()["items"]


def test_sign_in_with_sso_joins_the_member_and_ends_at_the_maximum_age(
    app: Any, browser: TestClient, store: Settings, acme: dict[str, Any], oidc_provider: OidcProvider
) -> None:
    back = oidc_provider.sign_in(_to_provider(browser, acme), "ada", CALLBACK)
    landed = browser.get(_callback_path(back), follow_redirects=False)
    assert landed.status_code == 303 and landed.headers["location"] == f"/orgs/{acme['org_slug']}"
    assert browser.get(f"/orgs/{acme['org_slug']}/settings/sso").status_code == 200  # an owner by her group
    with session_scope(store) as session:
        user = session.scalar(select(User).where(User.email == f"ada@{acme['domain']}"))
        assert user is not None
        row = session.scalar(select(UserSession).where(UserSession.user_id == user.id))
        assert row is not None and row.expires_at - row.created_at == timedelta(minutes=5)
        role = session.scalar(select(Membership.role).where(Membership.user_id == user.id))
        assert role == "owner"

    # The same callback again, in another browser: refused plainly, audited as a replay.
    with TestClient(app, base_url=PUBLIC) as other:
        again = other.get(_callback_path(back))
        assert again.status_code == 403 and PLAIN_MESSAGE in again.text and "replay" not in again.text
    assert _audit(browser, acme, "signin.refused")[0]["reason"] == "replayed"


def test_a_forged_token_and_a_stolen_callback_show_a_plain_message(
    app: Any, browser: TestClient, acme: dict[str, Any], oidc_provider: OidcProvider
) -> None:
    back = oidc_provider.sign_in(_to_provider(browser, acme), "bob", CALLBACK)
    with TestClient(app, base_url=PUBLIC) as thief:  # the callback URL carried to another browser
        stolen = thief.get(_callback_path(back))
        assert stolen.status_code == 403 and PLAIN_MESSAGE in stolen.text
    assert _audit(browser, acme, "signin.refused")[0]["reason"] == "browser_mismatch"

    back = oidc_provider.sign_in(_to_provider(browser, acme), "bob", CALLBACK)
    oidc_provider.forge_next(claims={"aud": "someone-else"})
    refused = browser.get(_callback_path(back))
    assert refused.status_code == 403 and PLAIN_MESSAGE in refused.text
    assert "Traceback" not in refused.text and "audience" not in refused.text
    entry = _audit(browser, acme, "signin.refused")[0]
    assert entry["reason"] == "wrong_audience" and "aud" in entry["detail"]["message"]
    assert (
        browser.get(f"/orgs/{acme['org_slug']}", follow_redirects=False).status_code != 200
    )  # not signed in


def test_enforced_sso_refuses_passwords_except_break_glass_accounts(
    browser: TestClient, store: Settings, acme: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    with session_scope(store) as session:
        save(session, store, acme["org_id"], {"enforce": True})

    def password_sign_in() -> Any:
        token = csrf_of(browser.get("/login").text)
        form = {"email": acme["email"], "password": "password-123", "csrf_token": token}
        return browser.post("/login", data=form, follow_redirects=False)

    refused = password_sign_in()
    assert refused.status_code == 403 and "signs in through single sign-on" in refused.text
    assert _audit(browser, acme, "signin.refused")[0]["reason"] == "sso_enforced"

    override_settings(store)
    try:
        assert (
            main(["admin", "break-glass", "--org", acme["org_slug"], "--email", acme["email"], "--json"]) == 0
        )
        assert acme["email"] in capsys.readouterr().out
        assert main(["admin", "break-glass", "--org", acme["org_slug"], "--email", "nobody@x.test"]) == 2
        assert "not a member" in capsys.readouterr().err
    finally:
        override_settings(None)

    assert password_sign_in().status_code == 303
    used = _audit(browser, acme, "signin.break_glass")
    assert len(used) == 1 and used[0]["email"] == acme["email"]
    page = browser.get(f"/orgs/{acme['org_slug']}/settings/audit")
    assert page.status_code == 200 and "break-glass account" in page.text and "sso_enforced" in page.text
    assert acme["email"] in browser.get(f"/orgs/{acme['org_slug']}/settings/sso").text


def test_settings_page_names_a_wrong_field_and_test_sign_in_changes_nothing(
    browser: TestClient, store: Settings, acme: dict[str, Any], oidc_provider: OidcProvider
) -> None:
    # The owner signs in with her password (not enforced here).
    token = csrf_of(browser.get("/login").text)
    form = {"email": acme["email"], "password": "password-123", "csrf_token": token}
    assert browser.post("/login", data=form, follow_redirects=False).status_code == 303
    base = f"/orgs/{acme['org_slug']}/settings/sso"
    page = browser.get(base)
    assert page.status_code == 200 and CALLBACK in page.text and acme["secret"] not in page.text
    fields = {
        "csrf_token": csrf_of(page.text),
        "issuer": oidc_provider.issuer,
        "client_id": acme["client_id"],
        "scopes": "openid email groups",
        "groups_claim": "groups",
        "role_map": "sre = superuser",
        "default_role": "member",
        "session_max_age_minutes": "30",
        "allowed_domains": acme["domain"],
    }
    wrong = browser.post(base, data=fields)
    assert wrong.status_code == 400 and 'data-field="role_map"' in wrong.text and "superuser" in wrong.text

    tried = browser.post(base + "/test", data={**fields, "role_map": "dev = admin"})
    assert tried.status_code == 200
    provider_url = re.search(r'href="([^"]+)" id="sso-continue-link"', tried.text)
    assert provider_url
    back = oidc_provider.sign_in(provider_url.group(1).replace("&amp;", "&"), "bob", CALLBACK)
    result = browser.get(_callback_path(back))
    assert f"Test sign-in worked: bob@{acme['domain']} would sign in as admin." in result.text
    with session_scope(store) as session:
        assert session.scalar(select(User).where(User.email == f"bob@{acme['domain']}")) is None
        assert read_settings(session, store, acme["org_id"]).session_max_age_minutes == 5  # unsaved


def test_a_leaver_loses_the_session_at_the_next_refresh_and_at_the_maximum_age(
    app: Any, browser: TestClient, store: Settings, acme: dict[str, Any], oidc_provider: OidcProvider
) -> None:
    page = f"/orgs/{acme['org_slug']}"

    def due(**change: Any) -> None:
        """Move the stored session's clock: its refresh due now (or its sign-in earlier)."""
        with session_scope(store) as session:
            row = session.scalar(select(SsoSession).where(SsoSession.org_id == acme["org_id"]))
            assert row is not None and row.refresh_token_encrypted and row.next_refresh_at is not None
            for name, value in change.items():
                setattr(row, name, value)

    back = oidc_provider.sign_in(_to_provider(browser, acme), "bob", CALLBACK)
    assert browser.get(_callback_path(back), follow_redirects=False).status_code == 303
    assert browser.get(page).status_code == 200
    due(next_refresh_at=utcnow() - timedelta(seconds=1))
    assert browser.get(page).status_code == 200  # the provider still vouches for Bob: refreshed
    with session_scope(store) as session:
        row = session.scalar(select(SsoSession).where(SsoSession.org_id == acme["org_id"]))
        assert row is not None and row.next_refresh_at is not None
        assert row.next_refresh_at > utcnow() + timedelta(minutes=9)

    oidc_provider.set_users({"bob": None})  # Bob leaves the company
    assert browser.get(page).status_code == 200  # until the next refresh is due
    due(next_refresh_at=utcnow() - timedelta(seconds=1))
    ended = browser.get(page, follow_redirects=False)
    assert ended.status_code in (302, 303, 307) and "/login" in ended.headers["location"]
    entry = _audit(browser, acme, "signin.ended")[0]
    assert (entry["reason"], entry["email"]) == ("refresh_refused", f"bob@{acme['domain']}")
    assert browser.get(page, follow_redirects=False).status_code != 200

    # The maximum age as set now: Ada signed in 5 minutes ago, the session is over.
    with TestClient(app, base_url=PUBLIC) as ada:
        back = oidc_provider.sign_in(_to_provider(ada, acme), "ada", CALLBACK)
        assert ada.get(_callback_path(back), follow_redirects=False).status_code == 303
        assert ada.get(page).status_code == 200
        with session_scope(store) as session:
            for row in session.scalars(select(SsoSession).where(SsoSession.org_id == acme["org_id"])):
                row.created_at = utcnow() - timedelta(minutes=5)
        assert ada.get(page, follow_redirects=False).status_code != 200
    assert _audit(browser, acme, "signin.ended")[0]["reason"] == "max_age"


def test_a_session_opened_by_one_organizations_sso_opens_no_other(
    browser: TestClient, store: Settings, acme: dict[str, Any], oidc_provider: OidcProvider
) -> None:
    # Ada already has an account (a password) and belongs to another organization too.
    other = new_org(store, "Other")
    with session_scope(store) as session:
        accounts.add_member(session, other["org_id"], f"ada@{acme['domain']}", "password-123", "owner")
    back = oidc_provider.sign_in(_to_provider(browser, acme), "ada", CALLBACK)
    assert browser.get(_callback_path(back), follow_redirects=False).status_code == 303
    assert browser.get(f"/orgs/{acme['org_slug']}").status_code == 200
    # Acme's provider vouches for Ada in Acme only: the other organization is not opened by it.
    refused = browser.get(f"/orgs/{other['org_slug']}/settings/api-keys")
    assert refused.status_code == 403 and "single sign-on. Sign out, then sign in" in refused.text
