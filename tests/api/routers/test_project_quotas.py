from __future__ import annotations

import httpx

from stacklens.control.db import migrate_control_store
from stacklens.settings import Settings
from tests.api.live import serve


def test_the_quota_route_checks_its_body_and_the_organization(settings: Settings, make_org) -> None:
    migrate_control_store(settings)
    org, other = make_org(), make_org("Other")
    with serve(settings) as base:
        auth = {"Authorization": f"Bearer {org['api_key']}"}
        url = f"{base}/api/projects/{org['project']}/quota"
        installation = settings.attachment_quota_bytes
        attachments = {"attachment_bytes_applied": installation, "attachment_bytes_stored": 0}
        assert httpx.get(url, headers=auth).json() == {
            "project": org["project"],
            "events_per_minute": None,
            "categories": {},
            "attachment_bytes": None,
            **attachments,
        }
        ok = httpx.put(url, json={"events_per_minute": 120, "categories": {"log": 50}}, headers=auth)
        assert ok.json() == {
            "project": org["project"],
            "events_per_minute": 120,
            "categories": {"log": 50},
            "attachment_bytes": None,
            **attachments,
        }
        # The project's own attachment quota: set, kept when omitted, back to the installation's with null.
        own = httpx.put(url, json={"events_per_minute": 120, "attachment_bytes": 5_000_000}, headers=auth)
        assert own.json()["attachment_bytes"] == own.json()["attachment_bytes_applied"] == 5_000_000
        kept = httpx.put(url, json={"events_per_minute": 100, "categories": {"log": 50}}, headers=auth).json()
        assert (kept["attachment_bytes"], kept["categories"]) == (5_000_000, {"log": 50})
        assert httpx.get(url, headers=auth).json()["attachment_bytes_applied"] == 5_000_000
        bad = httpx.put(url, json={"events_per_minute": 100, "attachment_bytes": -1}, headers=auth)
        assert bad.status_code == 400 and "attachment_bytes" in bad.json()["detail"]
        back = httpx.put(url, json={"events_per_minute": 100, "attachment_bytes": None}, headers=auth).json()
        assert (back["attachment_bytes"], back["attachment_bytes_applied"]) == (None, installation)
        assert (
            httpx.put(
                url, json={"events_per_minute": 10, "categories": {"profile": 5}}, headers=auth
            ).status_code
            == 400
        )
        assert httpx.put(url, json={"events_per_minute": -1}, headers=auth).status_code == 400
        assert httpx.put(url, json={}, headers=auth).status_code == 400  # the API answers validation with 400
        foreign = {"Authorization": f"Bearer {other['api_key']}"}
        assert httpx.get(url, headers=foreign).status_code == 404
        assert httpx.get(url).status_code == 401
