"""Share links: one event, a relative or absolute time range, the whole issue; signed out they show only what
they name, never user information or filtered request values; listed per issue, revocable (CSRF), and a
revoked or expired link answers 410."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient
from sqlalchemy import update

from stacklens.control.db import session_scope
from stacklens.control.models import ShareLink
from tests.dashboards.conftest import csrf_of, sign_in
from tests.dashboards.landing import land, sdk_event

SECRET_TOKEN, SESSION_ID, PASSWORD_VALUE = "sec" + "ret-token", "a" + "bc123", "hun" + "ter2"
EMAIL = "ann" + "@example.test"


def _fail() -> None:
    raise RuntimeError("payment declined")


def _land_three(org: dict) -> tuple[list[dict], datetime]:
    """Three events of one issue: ten days ago, two hours ago, one hour ago."""
    now = datetime.now(UTC)
    payloads = []
    for hours in (240, 2, 1):
        # The e-mail also lands in frame variables (sdk_event's own locals), so the page must filter it there.
        payload = sdk_event(_fail, user={"id": "u-1", "email": EMAIL})
        payload["timestamp"] = (now - timedelta(hours=hours)).isoformat()
        payload["request"] = {
            "url": "https://shop.example/pay",
            "method": "POST",
            "headers": {"Authorization": "Bearer " + SECRET_TOKEN, "Cookie": "sid=" + SESSION_ID},
            "data": {"password": PASSWORD_VALUE, "amount": 5},
        }
        payloads.append(payload)
    rows = land(org["org_id"], org["project_id"], payloads)
    assert len({row["issue_id"] for row in rows}) == 1
    return rows, now


def _share(client: TestClient, path: str, **form: str) -> str:
    token = csrf_of(client.get(path).text)
    response = client.post(f"{path}/share", data={"expires": "7", "csrf_token": token, **form})
    assert response.status_code == 200, response.text
    match = re.search(r'id="share-url" value="[^"]*(/share/[^"]+)"', response.text)
    assert match
    return match.group(1)


def _event_id(row: dict) -> str:
    return str(row["event_id"])


def _assert_private_parts_hidden(html: str) -> None:
    for secret in (EMAIL, SECRET_TOKEN, SESSION_ID, PASSWORD_VALUE):
        assert secret not in html, secret
    assert "[FILTERED]" in html and 'id="user"' not in html
    # Read-only: no forms that change anything, no history, no downloads.
    assert "/status" not in html and 'id="history"' not in html and "Download" not in html


def test_event_link_shows_one_event_and_is_revocable(stores, client, org_factory) -> None:
    org = org_factory()
    rows, _ = _land_three(org)
    sign_in(client, org["email"])
    path = f"/orgs/{org['org_slug']}/projects/{org['project']}/issues/{rows[0]['issue_id']}"
    url = _share(client, path, scope="event", event_id=_event_id(rows[0]))

    with TestClient(client.app) as stranger:
        page = stranger.get(url)
        assert page.status_code == 200
        assert _event_id(rows[0]) in page.text and _event_id(rows[2]) not in page.text
        assert 'id="newer"' not in page.text and 'id="chart"' not in page.text
        assert "3 events" not in page.text  # no issue-wide totals
        _assert_private_parts_hidden(page.text)
        assert stranger.get(url, params={"event": _event_id(rows[1])}).status_code == 404
        assert stranger.get(url[:-3] + "abc").status_code == 404  # a token this server never signed

    # The issue page lists the link; revoking needs the form's token and the link's own issue.
    issue_page = client.get(path).text
    assert issue_page.count('class="share-link" data-state="active"') == 1
    link_id = re.search(r"/share/(\d+)/revoke", issue_page).group(1)
    assert client.post(f"{path}/share/{link_id}/revoke").status_code == 400
    token = csrf_of(issue_page)
    wrong_issue = path.rsplit("/", 1)[0] + "/12345"
    assert client.post(f"{wrong_issue}/share/{link_id}/revoke", data={"csrf_token": token}).status_code == 404
    done = client.post(f"{path}/share/{link_id}/revoke", data={"csrf_token": token})
    assert done.status_code == 200 and "Share link revoked" in done.text
    assert 'data-state="revoked"' in done.text and f"/share/{link_id}/revoke" not in done.text
    with TestClient(client.app) as stranger:
        gone = stranger.get(url)
        assert gone.status_code == 410 and "expired or was revoked" in gone.text


def test_range_links_relative_and_absolute_and_expiry(stores, client, org_factory) -> None:
    org = org_factory()
    rows, now = _land_three(org)
    old, middle, latest = (_event_id(row) for row in rows)
    sign_in(client, org["email"])
    path = f"/orgs/{org['org_slug']}/projects/{org['project']}/issues/{rows[0]['issue_id']}"

    relative = _share(client, path, scope="range", range="24h")
    fmt = "%Y-%m-%dT%H:%M"
    absolute = _share(
        client,
        path,
        scope="range",
        range="custom",
        range_from=(now - timedelta(days=11)).strftime(fmt),
        range_to=(now - timedelta(days=9)).strftime(fmt),
    )
    whole = _share(client, path, scope="issue")
    token = csrf_of(client.get(path).text)
    for form, reason in (
        ({"range_from": "", "range_to": ""}, "pick both"),
        ({"range_from": now.strftime(fmt), "range_to": (now - timedelta(days=1)).strftime(fmt)}, "before"),
        ({"range_from": "yesterday", "range_to": now.strftime(fmt)}, "not a date"),
    ):
        refused = client.post(
            f"{path}/share", data={"scope": "range", "range": "custom", "csrf_token": token, **form}
        )
        assert refused.status_code == 400 and reason in refused.text

    with TestClient(client.app) as stranger:
        page = stranger.get(relative).text
        assert latest in page and 'id="older"' in page and old not in page
        assert "3 events" not in page and 'id="shared-window"' in page
        _assert_private_parts_hidden(page)
        assert middle in stranger.get(relative, params={"event": middle}).text
        assert stranger.get(relative, params={"event": old}).status_code == 404

        page = stranger.get(absolute).text
        assert old in page and latest not in page and 'id="newer"' not in page
        _assert_private_parts_hidden(page)
        assert stranger.get(absolute, params={"event": latest}).status_code == 404

        page = stranger.get(whole).text
        assert latest in page and "3 events" in page
        _assert_private_parts_hidden(page)
        assert old in stranger.get(whole, params={"event": old}).text

    with session_scope(stores) as session:
        session.execute(update(ShareLink).values(expires_at=datetime.now(UTC) - timedelta(seconds=1)))
    with TestClient(client.app) as stranger:
        for url in (relative, absolute, whole):
            assert stranger.get(url).status_code == 410
    assert client.get(path).text.count('data-state="expired"') == 3


def test_project_list_shows_every_issue_link_and_revokes(stores, client, org_factory) -> None:
    org, other = org_factory("Mine"), org_factory("Other")
    rows, _ = _land_three(org)
    second = land(org["org_id"], org["project_id"], [sdk_event(_boom_elsewhere)])[0]
    sign_in(client, org["email"])
    base = f"/orgs/{org['org_slug']}/projects/{org['project']}"
    first_url = _share(client, f"{base}/issues/{rows[0]['issue_id']}", scope="issue")
    _share(client, f"{base}/issues/{second['issue_id']}", scope="range", range="7d")

    listing = client.get(f"{base}/share-links")
    assert listing.status_code == 200
    assert listing.text.count('data-state="active"') == 2
    for row in (rows[0], second):
        # Each link names its issue by title, not by a number.
        assert f'href="{base}/issues/{row["issue_id"]}">{row["title"]}</a>' in html.unescape(listing.text)
    assert 'href="' + base + '/share-links"' in client.get(f"{base}/issues").text

    revoke = re.search(rf'action="({base}/issues/{rows[0]["issue_id"]}/share/\d+/revoke)"', listing.text)
    assert revoke
    done = client.post(
        revoke.group(1), data={"csrf_token": csrf_of(listing.text), "back": "project"}, follow_redirects=False
    )
    assert done.status_code == 303 and done.headers["location"] == f"{base}/share-links?done=share_revoked"
    after = client.get(done.headers["location"]).text
    assert "Share link revoked" in after
    assert after.count('data-state="active"') == 1 and after.count('data-state="revoked"') == 1
    with TestClient(client.app) as stranger:
        assert stranger.get(first_url).status_code == 410

    # Another organization's owner sees none of it.
    with TestClient(client.app) as outsider:
        sign_in(outsider, other["email"])
        assert outsider.get(f"{base}/share-links").status_code == 404
        mine = outsider.get(f"/orgs/{other['org_slug']}/projects/{other['project']}/share-links").text
        assert "No share links yet." in mine


def _boom_elsewhere() -> None:
    raise LookupError("inventory missing")


def test_without_user_filters_the_user_everywhere() -> None:
    import json

    from dashboards.routers.sharing import without_user

    payload = {
        "user": {"id": "7", "email": "zoe@example.test", "ip_address": "198.51.100.4", "geo": {"city": "X"}},
        "extra": {"who": "zoe@example.test", "note": "logged in as zoe@example.test from 198.51.100.4"},
        "tags": {"user_id": "7", "build": "17", "n": "7"},
        "breadcrumbs": {"values": [{"message": "mail to zoe@example.test"}]},
    }
    row = {"payload": json.dumps(payload), "event_id": "e"}  # the only columns it reads
    shown = json.loads(without_user(row)["payload"])
    assert "user" not in shown
    assert shown["extra"] == {"who": "[FILTERED]", "note": "logged in as [FILTERED] from [FILTERED]"}
    # A short id is filtered only as a whole value, so "17" keeps its 7.
    assert shown["tags"] == {"user_id": "[FILTERED]", "build": "17", "n": "[FILTERED]"}
    assert shown["breadcrumbs"]["values"][0]["message"] == "mail to [FILTERED]"
