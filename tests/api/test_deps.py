"""The API's per-request control-store session commits before the answer leaves the server: what a client
was told is saved is saved when it reads the answer, however slow the commit. The project of a route's
``{slug}`` answers an unknown slug and another organization's project alike, in each router's own words."""

from __future__ import annotations

import time

import httpx
import pytest

from stacklens.settings import Settings
from tests.api.live import serve
from tests.slow_commits import slow_server_commits


def test_a_write_is_committed_before_it_is_answered(stores: Settings, org_factory) -> None:
    org = org_factory()
    headers = {"Authorization": f"Bearer {org['api_key']}"}
    query = {"dataset": "errors", "range": "7d", "aggregates": [{"fn": "count"}]}
    with serve(stores) as base, httpx.Client(base_url=base, headers=headers, timeout=30) as http:
        with slow_server_commits(0.5) as commits:
            created = http.post("/api/explore/queries", json={"name": "Errors a week", "query": query})
            answered = time.monotonic()
            assert created.status_code == 201, created.text
            time.sleep(1.0)  # a commit left for after the answer would finish now
        assert commits and max(commits) <= answered, (commits, answered)
        listed = http.get("/api/explore/queries")
        assert [q["id"] for q in listed.json()["rows"]] == [created.json()["id"]]


# (path under /api/projects/<slug>, the 404's detail for the slug `{slug}`)
MISSING_PROJECT = [
    ("budgets", "no project with slug {slug!r} in this organization"),
    ("app-keys/reveal", "no project with slug {slug!r} in this organization"),
    ("quota", "no project with slug {slug!r} in this organization"),
    ("retention", "no project with slug {slug!r} in this organization"),
    ("sourcemaps", "no project with slug {slug!r} in this organization"),
    ("performance/overview", "no project {slug!r} in this organization"),
    ("releases", "no project {slug!r} in this organization"),
    ("logs", "no project {slug!r} in this organization"),
    ("ownership", "no such project in this organization"),
    ("issues", "no such resource in this organization"),
]


@pytest.mark.parametrize(("path", "detail"), MISSING_PROJECT, ids=[p for p, _ in MISSING_PROJECT])
def test_a_missing_or_foreign_project_answers_404_in_the_routers_words(
    client,
    org_factory,
    path: str,
    detail: str,
) -> None:
    mine, theirs = org_factory("Mine"), org_factory("Theirs")
    auth = {"Authorization": f"Bearer {mine['api_key']}"}
    method = client.post if path == "app-keys/reveal" else client.get
    assert method(f"/api/projects/{mine['project']}/{path}", headers=auth).status_code == 200
    for slug in ("no-such-project", theirs["project"]):
        answer = method(f"/api/projects/{slug}/{path}", headers=auth)
        assert answer.status_code == 404, answer.text
        assert answer.json() == {"error": "Not Found", "detail": detail.format(slug=slug)}
