"""Explore over the real app: a query answers columns, rows, series and meta; CSV and Parquet downloads
hold the same rows; another organization's project answers 404; injection strings in every field answer 400
naming the field, never 500; saved queries can be created, listed, read, replaced and deleted within the
organization."""

from __future__ import annotations

import csv
import io
import uuid
from datetime import UTC, datetime
from functools import partial
from typing import Any

import polars as pl
import pytest
from fastapi.testclient import TestClient

from stacklens.explore import run as explore_run
from stacklens.explore.sql import Limits
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.module_stores import app_client_fixture, store_fixtures
from tests.stacklens.performance.perf_seed import seed

WINDOW = {"since": "2026-11-06T12:00:00Z", "until": "2026-11-20T13:00:00Z"}
INJECTION = "x' OR 1=1; DROP TABLE events --"


# The tests read two seeded organizations (one writes an error event only its own query reads, one a saved
# query of its own): the stores, the app and the seed are the module's (tests/module_stores.py), not made
# again for each of its 24 cases.
stores, org_factory = store_fixtures("api-explore")

client = app_client_fixture()


@pytest.fixture(scope="module")
def orgs(stores: Settings, org_factory) -> tuple[dict[str, Any], dict[str, Any]]:
    acme, other = org_factory("Acme", "Web Acme"), org_factory("Other", "Web Other")
    warehouse = get_warehouse(stores)
    seed(warehouse, acme["org_id"], acme["project_id"], loads=60, facts=False)
    seed(warehouse, other["org_id"], other["project_id"], loads=20, seed=3)
    return acme, other


def _post(client: TestClient, org: dict[str, Any], body: dict[str, Any], **params: str):
    return client.post(
        "/api/explore/query",
        json=body,
        params=params,
        headers={"Authorization": f"Bearer {org['api_key']}"},
    )


BODY = {
    **WINDOW,
    "dataset": "pageloads",
    "group_by": ["release", "browser"],
    "aggregates": [{"fn": "count"}, {"fn": "p75", "metric": "load_time_ms"}],
    "interval": "1d",
    "order_by": "-count",
}


def test_query_answers_rows_series_and_meta(client, orgs) -> None:
    acme, _ = orgs
    response = _post(client, acme, {**BODY, "project": acme["project"]})
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["columns"] == ["release", "browser", "count", "load_p75_ms", "samples"]
    assert sum(r["count"] for r in data["rows"]) == 60
    assert data["series"] and all(len(s["t"]) == len(s["values"]["count"]) for s in data["series"])
    assert set(data["meta"]) == {"rows_read", "elapsed_ms", "truncated"} and not data["meta"]["truncated"]
    counts = [r["count"] for r in data["rows"]]
    assert counts == sorted(counts, reverse=True)
    limited = _post(client, acme, {**BODY, "limit": 2}).json()
    assert len(limited["rows"]) == 2 and limited["meta"]["truncated"] is True


def test_a_query_over_its_time_limit_answers_a_plain_message(client, orgs, monkeypatch) -> None:
    """The engine stops a query at its per-query time limit (every query's 20 s, made 1 ms here): the
    answer is a 400 whose detail says which limit and what to do — not a 500, no engine exception, no
    traceback; a query within the limit runs as before."""
    monkeypatch.setattr(explore_run, "Limits", partial(Limits, max_execution_seconds=0.001))
    acme, _ = orgs
    costly = {**BODY, "group_by": ["url", "page", "transaction"], "interval": "5m"}
    response = _post(client, acme, costly)
    assert response.status_code == 400, response.text
    detail = response.json()["detail"]
    assert detail.startswith("the query ran longer than its 0.001 s limit; narrow the window"), detail
    for engine_text in ("Traceback", "DB::Exception", "TIMEOUT_EXCEEDED", "Code: 159"):
        assert engine_text not in response.text
    monkeypatch.undo()
    assert _post(client, acme, costly).status_code == 200


def test_csv_and_parquet_downloads_hold_the_rows(client, orgs) -> None:
    acme, _ = orgs
    rows = _post(client, acme, BODY).json()["rows"]
    response = _post(client, acme, BODY, format="csv")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    parsed = list(csv.DictReader(io.StringIO(response.text)))
    assert [(r["release"], int(r["count"])) for r in parsed] == [(r["release"], r["count"]) for r in rows]
    parquet = _post(client, acme, BODY, format="parquet")
    assert parquet.status_code == 200
    frame = pl.read_parquet(io.BytesIO(parquet.content))
    assert frame.columns == ["release", "browser", "count", "load_p75_ms", "samples"]
    assert frame["count"].to_list() == [r["count"] for r in rows]
    assert _post(client, acme, BODY, format="xml").status_code == 400
    # A value that a spreadsheet would run is written as text.
    get_warehouse(client.app.state.settings).insert(
        "events",
        [
            [
                acme["org_id"],
                acme["project_id"],
                uuid.uuid4(),
                datetime(2026, 11, 19, tzinfo=UTC),
                "=cmd|' /c calc'!A1",
            ]
        ],
        column_names=["org_id", "project_id", "event_id", "timestamp", "release"],
    )
    errors = _post(client, acme, {**WINDOW, "dataset": "errors", "group_by": ["release"]}, format="csv").text
    assert errors.splitlines() == ["release,count,samples", "'=cmd|' /c calc'!A1,1,1"]
    as_json = _post(client, acme, {**WINDOW, "dataset": "errors", "group_by": ["release"]}, format="json")
    assert as_json.json()["rows"] == [{"release": "=cmd|' /c calc'!A1", "count": 1, "samples": 1}]


def test_downloads_stream_and_answer_errors_before_the_first_byte(client, orgs) -> None:
    acme, other = orgs
    with client.stream(
        "POST",
        "/api/explore/query",
        params={"format": "parquet"},
        json={**BODY, "limit": 2},
        headers={"Authorization": f"Bearer {acme['api_key']}"},
    ) as response:
        assert response.status_code == 200
        assert response.headers["x-explore-truncated"] == "1"  # known before the body
        # Named after the question and its window, not explore.parquet (issue 70 point 7).
        named = "count-and-load-time-p75-by-release-and-browser-2026-11-06-to-2026-11-20.parquet"
        assert response.headers["content-disposition"] == f'attachment; filename="{named}"'
        body = b"".join(response.iter_bytes())
    assert pl.read_parquet(io.BytesIO(body)).height == 2
    # A given name (a widget's title) is slugged: no quote, slash or dot reaches the header.
    last_30d = {**{k: v for k, v in BODY.items() if k not in WINDOW}, "range": "30d"}
    titled = _post(client, acme, last_30d, format="csv", name='LCP p75 / "release" ../é')
    assert titled.headers["content-disposition"] == 'attachment; filename="lcp-p75-release-e-30d.csv"'
    bad = _post(client, acme, {**BODY, "group_by": ["nope"]}, format="csv")
    assert bad.status_code == 400 and bad.json()["detail"].startswith("group_by[0]:")
    hidden = _post(client, acme, {**BODY, "project": other["project"]}, format="json")
    assert hidden.status_code == 404
    whole = _post(client, acme, BODY, format="json").json()
    assert whole["meta"]["truncated"] is False and whole["series"] == []
    assert sum(r["count"] for r in whole["rows"]) == 60


def test_another_organizations_project_is_not_found(client, orgs) -> None:
    acme, other = orgs
    response = _post(client, acme, {**BODY, "project": other["project"]})
    assert response.status_code == 404 and "project" in response.json()["detail"]
    # Without a project, only the key's organization's projects count.
    assert sum(r["count"] for r in _post(client, other, BODY).json()["rows"]) == 20


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"dataset": INJECTION}, "dataset"),
        ({"project": INJECTION}, "project"),
        ({"filters": [{"field": INJECTION, "op": "=", "value": "a"}]}, "filters[0].field"),
        ({"filters": [{"field": "release", "op": INJECTION, "value": "a"}]}, "filters[0].op"),
        ({"filters": [{"field": "http_status", "op": "=", "value": INJECTION}]}, "filters[0].value"),
        ({"group_by": [INJECTION]}, "group_by[0]"),
        ({"aggregates": [{"fn": INJECTION, "metric": "lcp"}]}, "aggregates[0].fn"),
        ({"aggregates": [{"fn": "p75", "metric": INJECTION}]}, "aggregates[0].metric"),
        ({"interval": INJECTION}, "interval"),
        ({"range": INJECTION, "since": "", "until": ""}, "range"),
        ({"since": INJECTION}, "since"),
        ({"until": INJECTION}, "until"),
        ({"order_by": INJECTION}, "order_by"),
        ({"limit": INJECTION}, "limit"),
        ({INJECTION: 1}, INJECTION[:64]),
    ],
)
def test_injection_in_every_field_answers_400_naming_it(client, orgs, change, named) -> None:
    acme, _ = orgs
    response = _post(client, acme, {**BODY, **change})
    if named == "project":
        assert response.status_code == 404 and response.json()["detail"].startswith("project:")
        return
    assert response.status_code == 400, response.text
    assert response.json()["detail"].startswith(f"{named}:"), response.json()


def test_a_value_with_sql_is_only_a_value(client, orgs) -> None:
    acme, _ = orgs
    body = {**BODY, "filters": [{"field": "release", "op": "in", "value": [INJECTION]}]}
    response = _post(client, acme, body)
    assert response.status_code == 200 and response.json()["rows"] == []


def test_saved_queries_crud(client, orgs) -> None:
    acme, other = orgs
    headers = {"Authorization": f"Bearer {acme['api_key']}"}
    created = client.post(
        "/api/explore/queries",
        json={
            "name": "LCP by release",
            "description": "weekly",
            "query": {**BODY, "range": "30d", "since": "", "until": ""},
        },
        headers=headers,
    )
    assert created.status_code == 201, created.text
    saved = created.json()
    assert (
        saved["id"]
        and saved["query"]["range"] == "30d"
        and saved["query"]["group_by"] == ["release", "browser"]
    )
    listed = client.get("/api/explore/queries", headers=headers).json()["rows"]
    assert [q["id"] for q in listed] == [saved["id"]]
    path = f"/api/explore/queries/{saved['id']}"
    replaced = client.put(path, json={"name": "Renamed", "query": {"dataset": "errors"}}, headers=headers)
    assert replaced.status_code == 200 and replaced.json()["name"] == "Renamed"
    assert client.get(path, headers=headers).json()["query"]["dataset"] == "errors"
    other_headers = {"Authorization": f"Bearer {other['api_key']}"}
    assert client.get(path, headers=other_headers).status_code == 404
    assert client.delete(path, headers=other_headers).status_code == 404
    bad = client.post(
        "/api/explore/queries", json={"name": "x", "query": {"dataset": "nope"}}, headers=headers
    )
    assert bad.status_code == 400 and bad.json()["detail"].startswith("query.dataset:")
    assert client.delete(path, headers=headers).status_code == 204
    assert client.get(path, headers=headers).status_code == 404
    assert client.get("/api/explore/queries/abc", headers=headers).status_code == 400


def test_operator_sql_is_read_only_and_needs_the_operator_token(client, orgs, stores) -> None:
    acme, _ = orgs
    client.app.state.pipelines_token = "operator-secret"
    headers = {"X-StackLens-Pipelines-Token": "operator-secret"}
    answer = client.post(
        "/api/explore/sql",
        json={"sql": "SELECT release, count() AS n FROM transactions GROUP BY release"},
        headers=headers,
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["columns"] == ["release", "n"] and answer.json()["rows"]
    uuid_row = client.post(
        "/api/explore/sql", json={"sql": "SELECT event_id FROM transactions LIMIT 1"}, headers=headers
    )
    assert uuid_row.status_code == 200 and len(uuid_row.json()["rows"][0]["event_id"]) == 36
    write = client.post("/api/explore/sql", json={"sql": "DROP TABLE events"}, headers=headers)
    assert write.status_code == 400 and "read-only" in write.json()["detail"]
    broken = client.post("/api/explore/sql", json={"sql": "SELEC 1"}, headers=headers)
    assert broken.status_code == 400 and broken.json()["detail"].startswith("sql:")
    as_org = client.post(
        "/api/explore/sql", json={"sql": "SELECT 1"}, headers={"Authorization": f"Bearer {acme['api_key']}"}
    )
    assert as_org.status_code == 401
    wrong = client.post(
        "/api/explore/sql", json={"sql": "SELECT 1"}, headers={"X-StackLens-Pipelines-Token": "x"}
    )
    assert wrong.status_code == 401
    client.app.state.pipelines_token = None
    assert client.post("/api/explore/sql", json={"sql": "SELECT 1"}, headers=headers).status_code == 404


def test_compare_answers_previous_values_and_changes(client, orgs) -> None:
    acme, _ = orgs
    week = {"since": "2026-11-13T12:00:00Z", "until": "2026-11-20T12:00:00Z"}  # the seed spans 14 days
    body = {
        **BODY,
        **week,
        "project": acme["project"],
        "group_by": ["browser"],
        "compare": {"previous_period": True},
    }
    data = _post(client, acme, body).json()
    assert data["columns"][:4] == ["browser", "count", "count_previous", "count_change_pct"]
    before = {"since": "2026-11-06T12:00:00Z", "until": "2026-11-13T12:00:00Z"}
    alone = {
        r["browser"]: r
        for r in _post(client, acme, {**BODY, **before, "group_by": ["browser"]}).json()["rows"]
    }
    assert any(row["count_previous"] for row in data["rows"])
    for row in data["rows"]:
        assert row["count_previous"] == alone.get(row["browser"], {}).get("count")
    bad = _post(client, acme, {**body, "compare": {"previous_period": "yes"}})
    assert bad.status_code == 400 and bad.json()["detail"].startswith("compare.previous_period: must be true")
    assert _post(client, acme, body, format="csv").json()["detail"].startswith("compare: a download holds")
