"""Annotations on the dashboards page: listed with their project and tags, added and deleted with CSRF-checked
forms, a bad field named on the page, another organization's never shown nor deletable."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.dashboards.conftest import csrf_of, sign_in


def test_add_list_and_delete(client: TestClient, org_factory) -> None:
    acme, other = org_factory(), org_factory("Other")
    sign_in(client, acme["email"])
    base = f"/orgs/{acme['org_slug']}"
    page = client.get(base + "/dashboards").text
    assert 'id="annotations-empty"' in page
    form = {
        "csrf_token": csrf_of(page),
        "text": "deploy <api>",
        "tags": "deploy,api",
        "project": acme["project"],
        "release": "shop@1.4.0",
        "time": "2026-11-20T12:00:00Z",
    }
    added = client.post(base + "/annotations", data=form, follow_redirects=False)
    assert added.status_code == 303 and added.headers["location"].endswith("/dashboards#annotations")
    page = client.get(base + "/dashboards").text
    assert "deploy &lt;api&gt;" in page and "deploy, api" in page and "shop@1.4.0" in page
    bad = client.post(base + "/annotations", data={**form, "time": "soon"})
    assert bad.status_code == 400 and "time: &#39;soon&#39; is not an ISO 8601 time" in bad.text
    assert client.post(base + "/annotations", data={**form, "csrf_token": "x"}).status_code in (400, 403)
    note_id = page.split("/annotations/")[1].split("/delete")[0]
    client.cookies.clear()
    sign_in(client, other["email"])
    theirs = client.get(f"/orgs/{other['org_slug']}/dashboards").text
    assert "deploy &lt;api&gt;" not in theirs
    refused = client.post(
        f"/orgs/{other['org_slug']}/annotations/{note_id}/delete", data={"csrf_token": csrf_of(theirs)}
    )
    assert refused.status_code == 404
    client.cookies.clear()
    sign_in(client, acme["email"])
    page = client.get(base + "/dashboards").text
    deleted = client.post(
        f"{base}/annotations/{note_id}/delete", data={"csrf_token": csrf_of(page)}, follow_redirects=False
    )
    assert deleted.status_code == 303 and 'id="annotations-empty"' in client.get(base + "/dashboards").text
