"""`/account/notifications`: each organization's projects with a mode per kind; saving changes only the
person's own organizations; a bad value changes nothing; the issue page's Watch button."""

from __future__ import annotations

import re

from tests.dashboards.conftest import csrf_of, sign_in
from tests.dashboards.landing import land, sdk_event
from tests.dashboards.routers.test_issue_detail import section, text_of


def _fail() -> None:
    raise KeyError("watched")


def test_settings_page_and_watch(client, org_factory) -> None:
    org, other = org_factory("Mine", "Shop"), org_factory("Other", "Elsewhere")
    sign_in(client, org["email"])
    page = "/account/notifications"
    html = client.get(page).text
    name = f"{org['org_slug']}/{org['project']}/comments"
    assert re.search(
        rf'name="{re.escape(name)}"[^>]*>\s*<option value="none"\s*>none</option><option value="immediate" selected',
        html,
    )
    assert other["org_slug"] not in html
    # Issue 71: each project by its name (the slug beside it), not by its slug alone.
    assert re.search(r'<td class="project-name">Shop <span class="muted small">shop</span></td>', html), html
    token = csrf_of(html)
    saved = client.post(
        page,
        data={name: "daily", f"{other['org_slug']}/{other['project']}/comments": "none", "csrf_token": token},
        follow_redirects=False,
    )
    assert saved.status_code == 303
    html = client.get(saved.headers["location"]).text
    assert "Saved." in text_of(html)
    assert re.search(rf'name="{re.escape(name)}"[^>]*>.*?<option value="daily" selected', html, re.S)
    bad = client.post(page, data={name: "hourly", "csrf_token": token})
    assert bad.status_code == 400 and "Nothing saved" in text_of(bad.text)
    assert "Notifications" in client.get("/account").text

    (row,) = land(org["org_id"], org["project_id"], [sdk_event(_fail)])
    issue = f"/orgs/{org['org_slug']}/projects/{org['project']}/issues/{row['issue_id']}"
    assert text_of(section(client.get(issue).text, "watch-form")) == "Watch"
    token = csrf_of(client.get(issue).text)
    assert (
        client.post(
            f"{issue}/watch", data={"watch": "1", "csrf_token": token}, follow_redirects=False
        ).status_code
        == 303
    )
    assert text_of(section(client.get(issue).text, "watch-form")) == "Unwatch"
    client.post(f"{issue}/watch", data={"watch": "0", "csrf_token": token}, follow_redirects=False)
    assert text_of(section(client.get(issue).text, "watch-form")) == "Watch"
