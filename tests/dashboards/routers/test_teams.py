"""The teams page: owners create teams (a bad or taken slug named) and choose members from the organization;
members read it; another organization's people get 404."""

from __future__ import annotations

from stacklens.settings import Settings
from tests.dashboards.conftest import PASSWORD, add_member, csrf_of, sign_in
from tests.dashboards.routers.test_issue_detail import section, text_of


def test_teams_page(client, stores: Settings, org_factory) -> None:
    org, other = org_factory("Teams"), org_factory("Strangers")
    member = add_member(stores, org)
    page = f"/orgs/{org['org_slug']}/settings/teams"
    sign_in(client, org["email"])
    html = client.get(page).text
    assert "No teams yet." in text_of(html) and ">Teams</a>" in html
    token = csrf_of(html)
    bad = client.post(page, data={"slug": "Not OK", "csrf_token": token})
    assert (
        bad.status_code == 400
        and "Team not created: slug:" in text_of(bad.text)
        and 'value="Not OK"' in bad.text
    )
    made = client.post(
        page, data={"slug": "web", "name": "<b>Web</b>", "csrf_token": token}, follow_redirects=False
    )
    assert made.status_code == 303
    taken = client.post(page, data={"slug": "web", "csrf_token": token})
    assert taken.status_code == 400 and "a team #web already exists" in text_of(taken.text)
    saved = client.post(
        f"{page}/web/members",
        data={"members": [member, other["email"]], "csrf_token": token},
        follow_redirects=False,
    )
    assert saved.status_code == 404  # someone of another organization is nobody here: nothing changes
    saved = client.post(
        f"{page}/web/members", data={"members": [member], "csrf_token": token}, follow_redirects=False
    )
    assert saved.status_code == 303
    html = client.get(page).text
    assert text_of(section(html, "team-web")).startswith("#web <b>Web</b> 1 member: " + member)
    assert "&lt;b&gt;Web&lt;/b&gt;" in html  # the name is text

    client.cookies.clear()
    sign_in(client, member, PASSWORD)
    html = client.get(page).text
    assert 'id="new-team"' not in html and "team-members-form" not in html and member in html
    assert client.post(page, data={"slug": "mine", "csrf_token": csrf_of(html)}).status_code == 403

    client.cookies.clear()
    sign_in(client, other["email"])
    assert client.get(page).status_code == 404
