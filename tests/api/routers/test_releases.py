"""The releases API through the real app: the list answers every release with the fields docs/reference.md
names and
the numbers stacklens.releases computes, one release by its version (404 naming it when unknown), CSV gives
the same rows with formula-looking text neutralised, bad filters answer 400 naming the field, and another
organization's key sees none of it."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.routers.release_answers import ReleaseDetailOut, ReleaseOut, ReleasesOut
from stacklens.releases.health import Window, release_health
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.module_stores import store_fixtures
from tests.stacklens.performance.perf_seed import NOW, seed
from tests.stacklens.releases.session_seed import fill_session_states, seed_sessions

WINDOW = {"since": "2026-11-06T12:00:00Z", "until": "2026-11-20T12:00:00Z"}
FIELDS = {
    "version",
    "first_seen",
    "sessions",
    "users",
    "crash_free_sessions",
    "crash_free_users",
    "adoption",
    "errors_per_1k_page_loads",
    "new_issues",
    "verdict",
}
FORMULA = '=HYPERLINK("https://evil.example")'


# The tests read the seeded organization and never write: the stores, the app and the seed are the module's
# (tests/module_stores.py), not made again for each case.
stores, org_factory = store_fixtures("api-releases")


@pytest.fixture(scope="module")
def client(stores: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(stores)) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def org(org_factory, stores):
    created = org_factory()
    warehouse = get_warehouse(stores)
    seed(warehouse, created["org_id"], created["project_id"], loads=300)
    spans = {
        "shop@1.0.0": (NOW - timedelta(days=14), NOW - timedelta(days=7), 0.01),
        "shop@1.1.0": (NOW - timedelta(days=7), NOW - timedelta(hours=1), 0.06),
        FORMULA: (NOW - timedelta(hours=20), NOW - timedelta(hours=2), 0.0),
    }
    seed_sessions(warehouse, created["org_id"], created["project_id"], releases=spans, browser_sessions=1200)
    fill_session_states(warehouse, NOW - timedelta(days=15), NOW + timedelta(hours=1))
    return created


def _get(client, org, path: str = "", **params):
    return client.get(
        f"/api/projects/{org['project']}/releases{path}",
        params={**WINDOW, **params},
        headers={"Authorization": f"Bearer {org['api_key']}"},
    )


def test_the_list_has_every_release_with_its_figures_and_verdict(client, org, stores) -> None:
    answer = _get(client, org)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    rows = body["rows"]
    assert [r["version"] for r in rows] == [FORMULA, "shop@1.1.0", "shop@1.0.0"]  # newest first
    assert body["filters"]["since"] == WINDOW["since"] and body["filters"]["environment"] == ""
    ReleasesOut.model_validate(body)  # the answer is the shape the OpenAPI document declares
    for row in rows:
        assert set(row) >= FIELDS
        assert set(row) == set(ReleaseOut.model_fields)
        assert set(row["verdict"]) == {"regression", "reasons", "previous_release", "comparisons"}
    want = release_health(
        get_warehouse(stores), org["org_id"], org["project_id"], Window(NOW - timedelta(days=14), NOW)
    )
    by_version = {r["version"]: r for r in rows}
    for health in want:
        row = by_version[health.version]
        assert (row["sessions"], row["users"], row["new_issues"]) == (
            health.sessions,
            health.users,
            health.new_issues,
        )
        assert row["crash_free_sessions"] == pytest.approx(health.crash_free_sessions)
        assert row["verdict"]["regression"] == health.verdict.regression
    new = by_version["shop@1.1.0"]
    assert new["verdict"]["regression"] is True and new["verdict"]["previous_release"] == "shop@1.0.0"
    assert any(r.startswith("crash-free sessions") for r in new["verdict"]["reasons"])
    assert by_version["shop@1.0.0"]["verdict"]["regression"] is False
    assert new["first_seen"].endswith("Z") and new["page_loads"] > 0
    # Sorted and narrowed as asked.
    by_sessions = _get(client, org, sort="sessions", order="asc").json()["rows"]
    assert [r["sessions"] for r in by_sessions] == sorted(r["sessions"] for r in rows)
    only = _get(client, org, release="shop@1.1.0", environment="production").json()["rows"]
    assert [r["version"] for r in only] == ["shop@1.1.0"] and only[0]["previous_release"] == "shop@1.0.0"


def test_one_release_and_unknown_ones(client, org) -> None:
    answer = _get(client, org, "/shop@1.1.0")
    assert answer.status_code == 200, answer.text
    one = answer.json()
    assert one["version"] == "shop@1.1.0" and set(one) >= FIELDS and one["verdict"]["regression"] is True
    ReleaseDetailOut.model_validate(one)
    missing = _get(client, org, "/shop@9.9.9")
    assert missing.status_code == 404
    assert (
        missing.json()["detail"]
        == "no release 'shop@9.9.9' in project 'web-app' (none of its sessions, page loads or errors)"
    )
    elsewhere = _get(client, org, "/shop@1.0.0", range="24h", since="", until="")
    assert (
        elsewhere.status_code == 404
        and "has no sessions, page loads or errors in this window" in elsewhere.json()["detail"]
    )


def test_csv_gives_the_same_rows_neutralised(client, org) -> None:
    answer = _get(client, org, format="csv")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/csv")
    table = list(csv.DictReader(io.StringIO(answer.text)))
    rows = _get(client, org).json()["rows"]
    assert [r["version"] for r in table] == ["'" + FORMULA, "shop@1.1.0", "shop@1.0.0"]
    for line, row in zip(table, rows, strict=True):
        assert int(line["sessions"]) == row["sessions"] and line["regression"] == str(
            row["verdict"]["regression"]
        )
        assert line["verdict_reasons"] == " | ".join(row["verdict"]["reasons"])
    one = _get(client, org, "/shop@1.1.0", format="csv")
    assert one.status_code == 200 and len(list(csv.DictReader(io.StringIO(one.text)))) == 1


def test_bad_filters_name_the_field(client, org) -> None:
    for params, message in (
        ({"range": "2y", "since": "", "until": ""}, "range: '2y' is not one of 24h, 7d, 14d, 30d, 90d"),
        ({"browser": "Chrome"}, "browser: release health is per release and environment"),
        ({"sort": "speed"}, "sort: 'speed' is not one of first_seen"),
        ({"format": "xml"}, "format: must be json or csv"),
        ({"until": "yesterday"}, "until: 'yesterday' is not an ISO 8601 time"),
    ):
        answer = _get(client, org, **params)
        assert answer.status_code == 400 and answer.json()["detail"].startswith(message), (
            params,
            answer.text,
        )


def test_another_organizations_key_sees_nothing(client, org, org_factory) -> None:
    other = org_factory("Other")
    theirs = _get(client, other)
    assert theirs.status_code == 200 and theirs.json()["rows"] == []
    assert (
        _get(client, other, "/shop@1.1.0").json()["detail"].startswith("no release 'shop@1.1.0' in project")
    )
    # Our project with their key: the same 404 as a project that does not exist.
    for path in ("", "/shop@1.1.0"):
        foreign = _get(client, {**other, "project": org["project"]}, path)
        assert foreign.status_code == 404
        assert foreign.json()["detail"] == f"no project {org['project']!r} in this organization"
    assert client.get(f"/api/projects/{org['project']}/releases").status_code == 401
