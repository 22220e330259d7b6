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
        assert httpx.get(url, headers=auth).json() == {
            "project": org["project"],
            "events_per_minute": None,
            "categories": {},
        }
        ok = httpx.put(url, json={"events_per_minute": 120, "categories": {"log": 50}}, headers=auth)
        assert ok.json() == {"project": org["project"], "events_per_minute": 120, "categories": {"log": 50}}
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
