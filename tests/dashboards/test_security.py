"""Dashboard sessions end server-side; sign-in is throttled (429 + Retry-After, in the activity log, shared
through Redis); the cookie is Secure and HSTS is sent behind a trusted HTTPS proxy only."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from stacklens.control.db import session_scope
from stacklens.control.models import ActivityEntry
from stacklens.settings import Settings
from tests.dashboards.conftest import PASSWORD, csrf_of, sign_in


def _attempt(client: TestClient, email: str, password: str, headers: dict[str, str] | None = None):
    token = csrf_of(client.get("/login", headers=headers).text)
    return client.post(
        "/login",
        data={"email": email, "password": password, "csrf_token": token},
        headers=headers,
        follow_redirects=False,
    )


def test_a_saved_cookie_stops_working_after_sign_out(client, org_factory) -> None:
    org = org_factory()
    sign_in(client, org["email"])
    saved = client.cookies.get("stacklens_session")
    assert client.get(f"/orgs/{org['org_slug']}").status_code == 200
    token = csrf_of(client.get(f"/orgs/{org['org_slug']}").text)
    assert client.post("/logout", data={"csrf_token": token}, follow_redirects=False).status_code == 303
    with TestClient(client.app) as replay:
        replay.cookies.set("stacklens_session", saved)
        answer = replay.get(f"/orgs/{org['org_slug']}", follow_redirects=False)
        assert answer.status_code == 303 and answer.headers["location"].startswith("/login")


def test_password_change_ends_the_other_sessions(client, org_factory) -> None:
    org = org_factory()
    with TestClient(client.app) as laptop:
        sign_in(laptop, org["email"])
        sign_in(client, org["email"])
        page = client.get("/account")
        changed = client.post(
            "/account/password",
            data={"current": PASSWORD, "new": "a brand new phrase", "csrf_token": csrf_of(page.text)},
        )
        assert changed.status_code == 200 and "Password changed" in changed.text
        assert client.get(f"/orgs/{org['org_slug']}").status_code == 200  # this browser stays signed in
        assert laptop.get(f"/orgs/{org['org_slug']}", follow_redirects=False).status_code == 303
        weak = client.post(
            "/account/password",
            data={"current": "a brand new phrase", "new": org["email"], "csrf_token": csrf_of(changed.text)},
        )
        assert weak.status_code == 400 and "e-mail" in weak.text
    sign_in(client, org["email"], "a brand new phrase")


def _throttled_client(stores: Settings, **overrides: object) -> TestClient:
    from stacklens.cli.app import build_app

    settings = stores.model_copy(
        update={"login_throttle_after": 3, "login_throttle_base_seconds": 30.0, **overrides}
    )
    return TestClient(build_app(settings))


@pytest.mark.parametrize("backend", ["memory", "redis"])
def test_sign_in_is_throttled_and_logged(backend, stores, org_factory, request) -> None:
    org = org_factory()
    extra = {"redis_url": request.getfixturevalue("redis_url")} if backend == "redis" else {}
    # Each worker of an installation: with Redis the second worker sees the first one's lock.
    with _throttled_client(stores, **extra) as one, _throttled_client(stores, **extra) as two:
        answers = [_attempt(one, org["email"], f"wrong-{i}-guess").status_code for i in range(3)]
        assert answers == [401, 401, 429]
        worker = two if backend == "redis" else one
        locked = _attempt(worker, org["email"], PASSWORD)  # the right password, during the lock
        assert locked.status_code == 429 and 25 <= int(locked.headers["retry-after"]) <= 30
        assert "Too many failed sign-ins" in locked.text
    with session_scope(stores) as session:
        logged = session.scalars(
            select(ActivityEntry).where(
                ActivityEntry.org_id == org["org_id"], ActivityEntry.action == "sign_in.throttled"
            )
        ).all()
    assert len(logged) == 1 and logged[0].detail["scope"] == "account"
    assert logged[0].detail["retry_after"] == 30


def test_forwarded_headers_are_believed_only_from_trusted_proxies(stores, org_factory) -> None:
    org = org_factory()
    https = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"}
    # Untrusted peer: no Secure cookie, no HSTS.
    with _throttled_client(stores) as plain:
        response = _attempt(plain, org["email"], PASSWORD, https)
        assert response.status_code == 303
        assert "Secure" not in response.headers["set-cookie"]
        assert "strict-transport-security" not in response.headers
    # TestClient's peer is "testclient"; the trusted-proxy list takes IPs, so reach it through a real address.
    with _throttled_client(stores, trusted_proxies="127.0.0.1, 10.0.0.0/8") as proxied:
        # The browser speaks HTTPS to the proxy, so it sends the Secure cookie back.
        proxied_base = TestClient(proxied.app, base_url="https://testserver", client=("10.1.2.3", 5000))
        with proxied_base:
            response = _attempt(proxied_base, org["email"], PASSWORD, https)
            assert response.status_code == 303
            assert "; Secure" in response.headers["set-cookie"]
            assert response.headers["strict-transport-security"].startswith("max-age=31536000")
            # The client address the proxy reported is what the session (and the throttle) see.
            with session_scope(stores) as session:
                from stacklens.control.models import UserSession

                ips = session.scalars(select(UserSession.ip)).all()
            assert "203.0.113.9" in ips and "testclient" in ips
