"""`POST /api/sql` over the real app, the real control store and the embedded warehouse: an organization's
statement answers columns, rows, the time it took and what it read, over its own rows only however it names,
nests or joins a table; writes, file and network functions, undocumented tables and budgets are refused with
a 400 in the engine's words (a syntax error with its position), never a 500; the service keeps answering."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest
from fastapi.testclient import TestClient

from stacklens.explore import sql_panel
from stacklens.explore.sql import Limits
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.dashboards.conftest import add_member, sign_in
from tests.module_stores import app_client_fixture, store_fixtures
from tests.stacklens.performance.perf_seed import seed

# The tests read two seeded organizations and add people to one: the stores, the API's client and the seed
# are the module's (tests/module_stores.py), not made again for each case; the signed-in test has an app of
# its own.
stores, org_factory = store_fixtures("api-sql")

client = app_client_fixture()


@pytest.fixture(scope="module")
def orgs(stores: Settings, org_factory) -> tuple[dict[str, Any], dict[str, Any]]:
    acme, other = org_factory("Acme", "Web Acme"), org_factory("Other", "Web Other")
    warehouse = get_warehouse(stores)
    seed(warehouse, acme["org_id"], acme["project_id"], loads=60, facts=False)
    seed(warehouse, other["org_id"], other["project_id"], loads=20, seed=3)
    return acme, other


def _sql(client: TestClient, org: dict[str, Any], sql: str, params: dict[str, Any] | None = None):
    body: dict[str, Any] = {"sql": sql}
    if params is not None:
        body["params"] = params
    return client.post("/api/sql", json=body, headers={"Authorization": f"Bearer {org['api_key']}"})


def _count(client: TestClient, org: dict[str, Any], sql: str) -> int:
    response = _sql(client, org, sql)
    assert response.status_code == 200, response.text
    return int(response.json()["rows"][0][0])


def test_a_statement_answers_columns_rows_time_and_reads(client, orgs) -> None:
    acme, other = orgs
    response = _sql(
        client, acme, "SELECT release, count() AS loads FROM pageload_facts GROUP BY release ORDER BY release"
    )
    assert response.status_code == 200, response.text
    data = response.json()
    assert set(data) == {"columns", "rows", "elapsed_ms", "rows_read", "bytes_read", "truncated"}
    assert data["columns"] == ["release", "loads"]
    assert sum(row[1] for row in data["rows"]) == 60
    assert data["rows_read"] >= 60 and data["bytes_read"] > 0 and data["elapsed_ms"] > 0
    assert data["truncated"] is False
    assert _count(client, other, "SELECT count() FROM pageload_facts") == 20
    bound = _sql(client, acme, "SELECT count() FROM pageload_facts WHERE release = {r:String}", {"r": "nope"})
    assert bound.status_code == 200 and bound.json()["rows"] == [[0]]


def test_another_organizations_rows_are_never_read(client, orgs) -> None:
    """The server filters every documented table to the caller's organization, whatever the text says."""
    acme, other = orgs
    ids = {"theirs": other["org_id"], "ours": acme["org_id"]}
    for sql in (
        "SELECT count() FROM pageload_facts WHERE org_id = {theirs:UInt64}",
        "SELECT count() FROM pageload_facts WHERE org_id != {ours:UInt64}",
        "WITH x AS (SELECT * FROM pageload_facts) SELECT count() FROM x WHERE org_id = {theirs:UInt64}",
        "SELECT count() FROM (SELECT org_id FROM pageload_facts UNION ALL SELECT org_id FROM transactions)"
        " WHERE org_id = {theirs:UInt64}",
        "SELECT count() FROM pageload_facts AS a JOIN pageload_facts AS b ON a.org_id = b.org_id"
        " WHERE b.org_id = {theirs:UInt64}",
        "SELECT count() FROM transactions WHERE org_id IN (SELECT org_id FROM pageload_facts)"
        " AND org_id = {theirs:UInt64}",
    ):
        response = _sql(client, acme, sql, ids)
        assert response.status_code == 200, response.text
        assert response.json()["rows"] == [[0]], sql
    assert _count(client, acme, "SELECT uniqExact(org_id) FROM pageload_facts") == 1


@pytest.mark.parametrize(
    ("sql", "words"),
    [
        ("DROP TABLE events", "only read-only statements run here"),
        ("INSERT INTO events SELECT * FROM events", "only read-only statements run here"),
        ("ALTER TABLE events DELETE WHERE 1", "only read-only statements run here"),
        ("SELECT 1; DROP TABLE events", "one statement at a time"),
        ("SELECT * FROM file('/etc/passwd', 'LineAsString')", "file()"),
        ("SELECT * FROM url('http://127.0.0.1:9/x', 'CSV')", "url()"),
        ("SELECT 1 SETTINGS max_threads = 64", "SETTINGS clauses do not run here"),
        ("SHOW TABLES", "only SELECT statements run here"),
        ("SELECT * FROM system.tables", "is not a table this SQL reads"),
        ("SELECT count() FROM issue_state", "is not a table this SQL reads"),
        ("SELECT count() FROM merge(currentDatabase(), '^pageload_facts$')", "merge()"),
        ("SELECT count() FROM view(SELECT * FROM pageload_facts)", "view()"),
        ("SELECT dictGet('d', 'x', toUInt64(1))", "dictGet"),
        ("SELECT nope FROM pageload_facts", "nope"),
    ],
)
def test_refused_statements_answer_400_with_the_reason(client, orgs, sql: str, words: str) -> None:
    acme, _ = orgs
    response = _sql(client, acme, sql)
    assert response.status_code == 400, response.text
    data = response.json()
    assert data["error"] == "Bad Request" and data["field"] == "sql"
    assert words in data["detail"], data
    assert "Traceback" not in response.text and 'File "' not in response.text
    assert _count(client, acme, "SELECT count() FROM pageload_facts") == 60  # the service still answers


def test_a_syntax_error_says_where_the_parser_stopped(client, orgs) -> None:
    acme, _ = orgs
    response = _sql(client, acme, "SELECT count(\nFROM pageload_facts WHERE")
    assert response.status_code == 400, response.text
    data = response.json()
    assert "Syntax error" in data["detail"]
    assert data["position"] is not None and data["position"] > 0
    assert data["line"] == 2 and data["col"] is not None


def test_bad_fields_answer_400_naming_them(client, orgs) -> None:
    acme, _ = orgs
    assert _sql(client, acme, "").json()["detail"].startswith("sql: give one read-only statement")
    bad = _sql(client, acme, "SELECT 1", {"1x": 2})
    assert bad.status_code == 400 and "params" in bad.json()["detail"]
    nested = _sql(client, acme, "SELECT 1", {"x": {"y": 1}})
    assert nested.status_code == 400 and "params.x" in nested.json()["detail"]


def test_a_statement_over_its_budget_is_stopped_naming_the_budget(client, orgs, monkeypatch) -> None:
    acme, _ = orgs
    monkeypatch.setattr(sql_panel, "Limits", partial(Limits, max_rows_to_read=10))
    response = _sql(client, acme, "SELECT count() FROM pageload_facts")
    assert response.status_code == 400, response.text
    assert "10 rows limit" in response.json()["detail"]
    monkeypatch.setattr(sql_panel, "Limits", partial(Limits, max_execution_seconds=0.001))
    slow = _sql(client, acme, "SELECT sum(cityHash64(number)) FROM numbers(2000000000)")
    assert slow.status_code == 400, slow.text
    assert "0.001 s limit" in slow.json()["detail"] or "rows limit" in slow.json()["detail"]


def test_the_key_is_required_and_the_answer_is_documented(client, orgs) -> None:
    response = client.post("/api/sql", json={"sql": "SELECT 1"})
    assert response.status_code == 401
    document = client.get("/openapi.json").json()
    operation = document["paths"]["/api/sql"]["post"]
    assert "400" in operation["responses"] and "403" in operation["responses"]
    answer = document["components"]["schemas"]["SqlAnswer"]["properties"]
    assert {"columns", "rows", "elapsed_ms", "rows_read", "bytes_read"} <= set(answer)


def test_a_signed_in_member_runs_sql_and_a_viewer_is_refused(app_client, orgs, stores) -> None:
    """The dashboards' session cookie: a member's JSON statement is answered with their organization's
    rows; a viewer gets 403 saying who runs SQL. The cookie is SameSite=Lax and the statement must come as
    JSON (a form's or a text body is refused with 400), so another site cannot run it: the app asks no CSRF
    token of a JSON API call."""
    acme, _ = orgs
    member = add_member(stores, acme, "member")
    sign_in(app_client, member)
    sql = {"sql": "SELECT count() AS loads FROM pageload_facts"}
    answered = app_client.post("/api/sql", json=sql)
    assert answered.status_code == 200, answered.text
    assert answered.json()["columns"] == ["loads"] and answered.json()["rows"] == [[60]]
    # What another site's form or no-cors fetch could send with the cookie: refused before anything runs.
    as_form = app_client.post("/api/sql", data=sql)
    assert as_form.status_code == 400 and as_form.json()["detail"].startswith("body: "), as_form.text
    plain = {"Content-Type": "text/plain"}
    as_text = app_client.post("/api/sql", content=json.dumps(sql).encode(), headers=plain)
    assert as_text.status_code == 400 and as_text.json()["detail"].startswith("body: "), as_text.text
    elsewhere = app_client.post("/api/sql?organization=nope", json=sql)
    assert elsewhere.status_code == 404 and "not a member of 'nope'" in elsewhere.json()["detail"]
    app_client.cookies.clear()
    sign_in(app_client, add_member(stores, acme, "viewer"))
    refused = app_client.post("/api/sql", json=sql)
    assert refused.status_code == 403, refused.text
    assert refused.json()["detail"] == "viewers read dashboards; only owners, admins and members run SQL"
    assert "rows" not in refused.json()
