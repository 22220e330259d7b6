"""The performance JSON API through the real app: every view answers rows and the resolved filters, CSV gives
the same rows, bad filters answer 400 naming the field, and another organization's key sees nothing."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from stacklens.performance.view_data import VIEWS
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.module_stores import store_fixtures
from tests.stacklens.performance.perf_seed import seed

WINDOW = {"since": "2026-11-06T12:00:00Z", "until": "2026-11-20T12:00:00Z"}


# The tests read the seeded organization and never write: the stores, the app and the seed are the module's
# (tests/module_stores.py), not made again for each case.
stores, org_factory = store_fixtures("api-performance")


@pytest.fixture(scope="module")
def client(stores: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(stores)) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def org(org_factory, stores):
    created = org_factory()
    seed(get_warehouse(stores), created["org_id"], created["project_id"], loads=120)
    return created


def _get(client, org, path: str, **params):
    return client.get(
        f"/api/projects/{org['project']}/performance/{path}",
        params={**WINDOW, **params},
        headers={"Authorization": f"Bearer {org['api_key']}"},
    )


def test_every_view_answers_rows_and_filters(client, org) -> None:
    for view in VIEWS:
        response = _get(client, org, view, environment="production")
        assert response.status_code == 200, (view, response.text)
        body = response.json()
        assert body["rows"], view
        assert body["filters"] == {
            **WINDOW,
            "range": "",
            "environment": "production",
            "release": "",
            "browser": "",
        }
    pages = _get(client, org, "pages").json()["rows"]
    assert sum(r["views"] for r in pages) == _get(client, org, "pages").json()["total"]["views"] == 120


def test_csv_gives_the_same_rows(client, org) -> None:
    rows = _get(client, org, "endpoints").json()["rows"]
    response = _get(client, org, "endpoints", format="csv")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    parsed = list(csv.DictReader(io.StringIO(response.text)))
    assert [(r["source"], r["method"], r["path"], int(r["calls"])) for r in parsed] == [
        (r["source"], r["method"], r["path"], r["calls"]) for r in rows
    ]
    recs = list(csv.DictReader(io.StringIO(_get(client, org, "recommendations", format="csv").text)))
    assert recs and recs[0]["evidence"].startswith("{")


def test_waterfall(client, org) -> None:
    page = _get(client, org, "pages").json()["rows"][0]["page"]
    assert page
    detail = client.get(
        f"/api/projects/{org['project']}/performance/waterfall/00000000-0000-0000-0000-000000000000",
        headers={"Authorization": f"Bearer {org['api_key']}"},
    )
    assert detail.status_code == 404 and detail.json()["error"] == "Not Found"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"range": "2y", "since": "", "until": ""}, "range"),
        ({"since": "soon"}, "since"),
        ({"format": "xml"}, "format"),
        ({"sort": "x"}, "sort"),
    ],
)
def test_bad_values_answer_400(client, org, params, field) -> None:
    response = _get(client, org, "endpoints", **params)
    assert response.status_code == 400
    assert response.json()["error"] == "Bad Request" and response.json()["detail"].startswith(f"{field}")


def test_organization_isolation(client, org, org_factory) -> None:
    other = org_factory("Other")
    response = client.get(
        f"/api/projects/{org['project']}/performance/pages",
        headers={"Authorization": f"Bearer {other['api_key']}"},
    )
    # The other organization's project of the same slug is its own (and empty); never the first one's rows.
    if other["project"] == org["project"]:
        assert response.status_code == 200 and response.json()["rows"] == []
    else:
        assert response.status_code == 404
    assert client.get(f"/api/projects/{org['project']}/performance/pages").status_code == 401
