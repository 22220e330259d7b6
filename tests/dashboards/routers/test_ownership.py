"""The ownership rules page: owners save rules (a refused line named, the text kept), convert CODEOWNERS
into the rules being edited; members read them; another organization's people get 404."""

from __future__ import annotations

from stacklens.settings import Settings
from tests.dashboards.conftest import PASSWORD, add_member, csrf_of, sign_in
from tests.dashboards.routers.test_issue_detail import section, text_of


def test_ownership_page(client, stores: Settings, org_factory) -> None:
    org, other = org_factory("Owners"), org_factory("Others")
    member = add_member(stores, org)
    page = f"/orgs/{org['org_slug']}/projects/{org['project']}/settings/ownership"
    sign_in(client, org["email"])
    token = csrf_of(client.get(f"/orgs/{org['org_slug']}/settings/teams").text)
    assert (
        client.post(
            f"/orgs/{org['org_slug']}/settings/teams",
            data={"slug": "payments", "csrf_token": token},
            follow_redirects=False,
        ).status_code
        == 303
    )
    html = client.get(page).text
    assert 'id="rules-text"' in html and "#payments" in text_of(section(html, "ownership-rules"))
    assert "Ownership rules" in client.get(f"/orgs/{org['org_slug']}/projects/{org['project']}/settings").text

    bad = client.post(page, data={"rules": "path:src/* #payments\npath:lib/* #ghosts", "csrf_token": token})
    assert bad.status_code == 400
    assert "Rules not saved: rules line 2: #ghosts is not a team or member" in text_of(bad.text)
    assert "path:lib/* #ghosts" in bad.text  # what was typed is kept
    saved = client.post(
        page, data={"rules": "path:src/checkout/* #payments", "csrf_token": token}, follow_redirects=False
    )
    assert saved.status_code == 303 and saved.headers["location"].endswith("?saved=1")
    assert "Rules saved." in client.get(saved.headers["location"]).text

    converted = client.post(
        f"{page}/codeowners",
        data={
            "codeowners": "/src/search/ @acme/payments @nobody\n",
            "rules": "path:src/checkout/* #payments",
            "csrf_token": token,
        },
    )
    assert converted.status_code == 200
    text = section(converted.text, "rules-form")
    assert "path:src/checkout/* #payments\npath:src/search/ #payments" in text
    assert "line 1: @nobody is no member here, left out" in text_of(converted.text)

    client.cookies.clear()
    sign_in(client, member, PASSWORD)
    html = client.get(page).text
    assert 'id="rules-form"' not in html and "path:src/checkout/* #payments" in text_of(
        section(html, "ownership-rules")
    )
    token = csrf_of(html)
    assert client.post(page, data={"rules": "", "csrf_token": token}).status_code == 403

    client.cookies.clear()
    sign_in(client, other["email"])
    assert client.get(page).status_code == 404
