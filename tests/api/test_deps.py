"""The API's per-request control-store session commits before the answer leaves the server: what a client
was told is saved is saved when it reads the answer, however slow the commit."""

from __future__ import annotations

import time

import httpx

from stacklens.settings import Settings
from tests.api.live import serve
from tests.dashboards.conftest import org_factory, stores  # noqa: F401 - shared fixtures
from tests.slow_commits import slow_server_commits


def test_a_write_is_committed_before_it_is_answered(stores: Settings, org_factory) -> None:  # noqa: F811
    org = org_factory()
    headers = {"Authorization": f"Bearer {org['api_key']}"}
    query = {"dataset": "errors", "range": "7d", "aggregates": [{"fn": "count"}]}
    with serve(stores) as base, httpx.Client(base_url=base, headers=headers) as client:
        with slow_server_commits(0.5) as commits:
            created = client.post("/api/explore/queries", json={"name": "Errors a week", "query": query})
            answered = time.monotonic()
            assert created.status_code == 201, created.text
            time.sleep(1.0)  # a commit left for after the answer would finish now
        assert commits and max(commits) <= answered, (commits, answered)
        listed = client.get("/api/explore/queries")
        assert [q["id"] for q in listed.json()["rows"]] == [created.json()["id"]]
