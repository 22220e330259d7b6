"""The project's own script hosts on the project settings page (dashboards/routers/performance_inp.py): the
owner saves them (one per line, commas and spaces too) and sees them, as `GET /api/.../first-party-hosts`
answers them; a bad host is refused 400 with the host named beside the box, which keeps what was typed, and
nothing changes; a member cannot save; the form needs its CSRF token. Looked at in Chromium at 1024 and
1440 px (tests/_artifacts/inp, or STACKLENS_SHOTS_DIR)."""

from __future__ import annotations

import html

import pytest

from stacklens.control.db import session_scope
from stacklens.performance.inp.hosts import first_party_hosts
from stacklens.settings import Settings
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD, add_member, csrf_of, sign_in
from tests.dashboards.test_performance_browser import CSP_PROBE

SHOTS = shots_dir("inp")


def _stored(stores: Settings, org: dict) -> list[str] | None:
    with session_scope(stores) as session:
        return first_party_hosts(session, org["org_id"], org["project_id"])


def _box(page: str) -> str:
    start = page.index('id="first-party-hosts-box"')
    return html.unescape(page[start:].split(">", 1)[1].split("</textarea>", 1)[0])


def test_the_owner_saves_the_hosts_and_sees_them(client, org_factory, stores: Settings) -> None:
    org = org_factory()
    sign_in(client, org["email"])
    settings_page = f"/orgs/{org['org_slug']}/projects/{org['project']}/settings"
    before = client.get(settings_page).text
    assert "First-party script hosts" in before and _box(before) == ""
    token = csrf_of(before)
    saved = client.post(
        settings_page + "/first-party-hosts",
        data={"hosts": "CDN.Shop.test\nstatic.shop.test, localhost:8001 cdn.shop.test", "csrf_token": token},
        follow_redirects=False,
    )
    assert saved.status_code == 303
    assert saved.headers["location"] == settings_page + "?saved=hosts#first-party-hosts"
    shown = client.get(saved.headers["location"]).text
    assert "First-party hosts saved." in shown
    assert _box(shown) == "cdn.shop.test\nstatic.shop.test\nlocalhost:8001"  # lower case, once each
    assert _stored(stores, org) == ["cdn.shop.test", "static.shop.test", "localhost:8001"]
    cleared = client.post(
        settings_page + "/first-party-hosts", data={"hosts": "", "csrf_token": token}, follow_redirects=False
    )
    assert cleared.status_code == 303 and _stored(stores, org) == []


def test_a_bad_host_is_named_and_changes_nothing(client, org_factory, stores: Settings) -> None:
    org = org_factory()
    sign_in(client, org["email"])
    settings_page = f"/orgs/{org['org_slug']}/projects/{org['project']}/settings"
    token = csrf_of(client.get(settings_page).text)
    client.post(
        settings_page + "/first-party-hosts",
        data={"hosts": "cdn.shop.test", "csrf_token": token},
        follow_redirects=False,
    )
    refused = client.post(
        settings_page + "/first-party-hosts",
        data={"hosts": "cdn.shop.test\nhttps://bad host/", "csrf_token": token},
        follow_redirects=False,
    )
    assert refused.status_code == 400
    page = html.unescape(refused.text)
    assert "The first-party hosts were not saved" in page
    assert "'https://bad' is not a host name (like cdn.example.com or localhost:8001)" in page
    assert 'aria-describedby="first-party-hosts-error"' in page
    assert _box(page) == "cdn.shop.test\nhttps://bad host/"  # as typed
    assert _stored(stores, org) == ["cdn.shop.test"]
    # The API refuses the same host with 400 naming the field.
    answer = client.put(
        f"/api/projects/{org['project']}/performance/first-party-hosts",
        json={"hosts": ["https://bad"]},
        headers={"Authorization": f"Bearer {org['api_key']}"},
    )
    assert answer.status_code == 400 and "hosts" in answer.text
    assert _stored(stores, org) == ["cdn.shop.test"]


def test_a_member_cannot_save_and_the_token_is_needed(client, org_factory, stores: Settings) -> None:
    org = org_factory()
    member = add_member(stores, org)
    sign_in(client, member)
    settings_page = f"/orgs/{org['org_slug']}/projects/{org['project']}/settings"
    token = csrf_of(client.get(f"/orgs/{org['org_slug']}").text)
    denied = client.post(
        settings_page + "/first-party-hosts",
        data={"hosts": "cdn.shop.test", "csrf_token": token},
        follow_redirects=False,
    )
    assert denied.status_code == 403
    assert _stored(stores, org) == []
    sign_in(client, org["email"])
    forged = client.post(
        settings_page + "/first-party-hosts", data={"hosts": "cdn.shop.test"}, follow_redirects=False
    )
    assert forged.status_code in (400, 403) and _stored(stores, org) == []


@pytest.mark.browser
def test_the_form_in_chromium(chromium, server, org_factory, stores: Settings) -> None:
    org = org_factory()
    SHOTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    page = chromium.new_page(viewport={"width": 1024, "height": 900})
    page.add_init_script(CSP_PROBE)
    watch_errors(page, errors, with_url=True)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")
    page.goto(f"{server}/orgs/{org['org_slug']}/projects/{org['project']}/settings#first-party-hosts")
    page.fill("#first-party-hosts-box", "cdn.shop.test\nnot a host!")
    page.click("#first-party-hosts-save")
    page.wait_for_selector("#first-party-hosts-error")
    assert "'host!' is not a host name" in page.locator("#first-party-hosts-error").inner_text()
    assert page.locator("#first-party-hosts-box").get_attribute("aria-invalid") == "true"
    page.locator("#first-party-hosts").screenshot(path=str(SHOTS / "hosts-error-1024.png"))
    page.fill("#first-party-hosts-box", "cdn.shop.test\nwidgets.shop.test:8001")
    page.click("#first-party-hosts-save")
    page.wait_for_selector("#hosts-saved")
    assert page.locator("#first-party-hosts-box").input_value() == "cdn.shop.test\nwidgets.shop.test:8001"
    assert _stored(stores, org) == ["cdn.shop.test", "widgets.shop.test:8001"]
    for width in (1024, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        page.locator("#first-party-hosts").screenshot(path=str(SHOTS / f"hosts-{width}.png"))
        box = page.locator("#first-party-hosts").bounding_box()
        assert box is not None and box["x"] + box["width"] <= width  # nothing overflows
    assert page.evaluate("window.__csp") == []
    # The refused save's own answer (400) is the only thing the console reports.
    assert [e for e in errors if "status of 400 (Bad Request)" not in e] == [] and len(errors) == 1
