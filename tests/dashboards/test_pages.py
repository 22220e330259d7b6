"""Sign-in, org isolation, the issue list and the issue detail through the real app, chdb and SQLite."""

from __future__ import annotations

from tests.dashboards.conftest import csrf_of, sign_in
from tests.dashboards.landing import land, sdk_event

# Built at run time so the frames' source context (which shows this file) never holds the values themselves.
SECRET_TOKEN, SESSION_ID, PASSWORD_VALUE = "sec" + "ret-token", "a" + "bc123", "hun" + "ter2"


def _boom(order_id: int = 42, card: str = "4111 1111 1111 1111") -> None:
    basket = ["a", "b"]  # noqa: F841 - a local the event carries
    raise ValueError(f"order {order_id} failed")


def _land_one(org: dict, **kwargs) -> dict:
    payload = sdk_event(lambda: _boom(), **kwargs)
    payload["request"] = {
        "url": "https://shop.example/cart?step=2",
        "method": "POST",
        "headers": {
            "Authorization": "Bearer " + SECRET_TOKEN,
            "Cookie": "sid=" + SESSION_ID,
            "X-Trace": "t1",
        },
        "query_string": "step=2",
        "data": {"password": PASSWORD_VALUE, "qty": 3},
    }
    return land(org["org_id"], org["project_id"], [payload])[0]


def test_sign_in_required_and_bad_password(client, org_factory) -> None:
    org = org_factory()
    assert client.get("/", follow_redirects=False).headers["location"].startswith("/login")
    token = csrf_of(client.get("/login").text)
    bad = client.post("/login", data={"email": org["email"], "password": "wrong", "csrf_token": token})
    assert bad.status_code == 401 and "Email or password is incorrect." in bad.text
    no_csrf = client.post("/login", data={"email": org["email"], "password": "password-123"})
    assert no_csrf.status_code == 400
    csp = client.get("/login").headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]


def test_session_cookie_flags(client, org_factory) -> None:
    org = org_factory()
    token = csrf_of(client.get("/login").text)
    response = client.post(
        "/login",
        data={"email": org["email"], "password": "password-123", "csrf_token": token},
        follow_redirects=False,
    )
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie


def test_list_and_detail_show_the_event(client, org_factory) -> None:
    org = org_factory()
    row = _land_one(
        org,
        user={"id": "u-7", "email": "ann@example.test"},
        tags={"tenant": "blue"},
        extra={"cart": {"items": 2}},
        crumbs=[
            {"category": "navigation", "message": "to /cart"},
            {"category": "http", "message": "GET /api"},
        ],
    )
    sign_in(client, org["email"])
    base = f"/orgs/{org['org_slug']}/projects/{org['project']}/issues"
    listing = client.get(base)
    assert listing.status_code == 200 and "order 42 failed" in listing.text
    assert "order 42 failed" in client.get(base, params={"query": "tenant:blue"}).text
    assert "order 42 failed" not in client.get(base, params={"query": "tenant:green"}).text
    assert "order 42 failed" not in client.get(base, params={"status": "resolved"}).text
    detail = client.get(f"{base}/{row['issue_id']}")
    assert detail.status_code == 200
    text = detail.text
    for expected in (
        "_boom",
        "in-app",
        "order_id",
        "ann@example.test",
        "to /cart",
        "tenant",
        "X-Trace",
        "[FILTERED]",
    ):
        assert expected in text, expected
    assert PASSWORD_VALUE not in text and SECRET_TOKEN not in text and SESSION_ID not in text


def test_other_org_gets_404(client, org_factory) -> None:
    mine, theirs = org_factory("Mine"), org_factory("Theirs")
    row = _land_one(theirs)
    sign_in(client, mine["email"])
    assert client.get(f"/orgs/{theirs['org_slug']}").status_code == 404
    assert client.get(f"/orgs/{theirs['org_slug']}/projects/{theirs['project']}/issues").status_code == 404
    # Their issue id under my project is not found either.
    assert (
        client.get(
            f"/orgs/{mine['org_slug']}/projects/{mine['project']}/issues/{row['issue_id']}"
        ).status_code
        == 404
    )


def test_resolve_and_reopen_recorded(client, org_factory) -> None:
    org = org_factory()
    row = _land_one(org)
    sign_in(client, org["email"])
    path = f"/orgs/{org['org_slug']}/projects/{org['project']}/issues/{row['issue_id']}"
    token = csrf_of(client.get(path).text)
    assert (
        client.post(
            f"{path}/status", data={"action": "resolve", "csrf_token": token}, follow_redirects=False
        ).status_code
        == 303
    )
    base = f"/orgs/{org['org_slug']}/projects/{org['project']}/issues"
    assert "order 42 failed" in client.get(base, params={"status": "resolved"}).text
    assert (
        client.post(
            f"{path}/status", data={"action": "reopen", "csrf_token": token}, follow_redirects=False
        ).status_code
        == 303
    )
    page = client.get(path).text
    assert page.count('class="to-status"') == 2
