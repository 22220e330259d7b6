from __future__ import annotations

from fastapi.testclient import TestClient

from api.app import create_app
from stacklens.control.db import session_scope
from stacklens.control.keys.lifecycle import create_app_key
from stacklens.settings import Settings


def test_activity_pages_filter_and_isolation(control_settings: Settings, make_org) -> None:
    mine, theirs = make_org("Mine"), make_org("Theirs")
    with session_scope(control_settings) as session:
        for n in range(4):
            create_app_key(session, mine["project_id"], f"svc_{n}")
    headers = {"Authorization": f"Bearer {mine['api_key']}"}
    with TestClient(create_app(control_settings)) as client:
        ids, cursor = [], None
        while True:
            params = {"limit": 3, **({"cursor": cursor} if cursor else {})}
            page = client.get("/api/activity", headers=headers, params=params)
            assert page.status_code == 200
            ids += [i["id"] for i in page.json()["items"]]
            cursor = page.json()["next_cursor"]
            if cursor is None:
                break
        assert len(ids) == len(set(ids)) >= 9
        api_only = client.get("/api/activity", headers=headers, params={"api_key_only": "true"}).json()[
            "items"
        ]
        assert {i["target_kind"] for i in api_only} == {"api_key"}
        # Each item also reads as a sentence, the activity page's; the structured detail stays as stored.
        created = next(i for i in api_only if i["action"] == "api_key.created")
        assert created["summary"] == f"Created the API key …{mine['api_key'][-4:]}."
        assert created["detail"] == {"last4": mine["api_key"][-4:]}
        theirs_items = client.get(
            "/api/activity", headers={"Authorization": f"Bearer {theirs['api_key']}"}
        ).json()
        assert not set(ids) & {i["id"] for i in theirs_items["items"]}
        assert all("svc_" not in str(i["detail"]) for i in theirs_items["items"])
        bad = client.get("/api/activity", headers=headers, params={"cursor": "!!"})
        assert bad.status_code == 400 and bad.json()["detail"].startswith(
            "query.cursor:"
        )  # the schema's pattern
        bad = client.get("/api/activity", headers=headers, params={"cursor": "abc"})
        assert bad.status_code == 400 and "invalid cursor" in bad.json()["detail"]
