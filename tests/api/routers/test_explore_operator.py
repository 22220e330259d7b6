"""`stacklens sql`'s route through a real uvicorn server, the real control store and the embedded warehouse:
every refused and every accepted operator statement leaves the service whole — ingest (`/api/ingest` and a
Sentry envelope), the performance pages, Explore and a pipeline materialization all still answer.

Before the statement guard, one refused `DROP TABLE events` left `readonly = 1` on the engine session the
whole process shares, and every later insert answered 500 until a restart."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import dagster as dg
import httpx
import pytest

from pipelines.embedded import materialize_now
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.api.live import serve
from tests.api.routers.test_ingest import line
from tests.api.sentry_live import envelope, event_item, fresh_event
from tests.stacklens.explore.test_operator_sql import ACCEPTED, REFUSED

TOKEN = "operator-secret"
OPERATOR = {"X-StackLens-Pipelines-Token": TOKEN}
# The ones that broke the service before the guard, first; then every other refusal and acceptance.
BREAKERS = ["DROP TABLE events", "INSERT INTO events SELECT * FROM events LIMIT 0", "SYSTEM SHUTDOWN",
            "SET readonly = 0"]  # fmt: skip


@pytest.fixture
def live(stores: Settings, org_factory) -> Iterator[tuple[str, dict[str, Any]]]:
    org = org_factory("Guarded", "Web Guarded")
    get_warehouse(stores).command(
        "CREATE TABLE IF NOT EXISTS guard_probe (a UInt8) ENGINE = MergeTree ORDER BY a"
    )
    with serve(stores, operator_token=TOKEN) as base:
        yield base, org


def _sql(base: str, sql: str) -> httpx.Response:
    return httpx.post(f"{base}/api/explore/sql", json={"sql": sql}, headers=OPERATOR, timeout=60)


def _service_answers(base: str, org: dict[str, Any], stores: Settings) -> None:
    """Ingest through both entrances, the performance pages and Explore: every one answers 200."""
    key = {"Authorization": f"Bearer {org['api_key']}"}
    event = {"event_id": uuid.uuid4().hex, "level": "error", "message": "after the operator's statement"}
    ingest = httpx.post(f"{base}/api/ingest", content=line(event, org["app_key"]), headers=key, timeout=60)
    assert ingest.status_code == 200, ingest.text
    sent = httpx.post(
        f"{base}/api/{org['project_id']}/envelope/",
        params={"sentry_key": org["app_key"]},
        content=envelope([event_item(fresh_event())]),
        timeout=60,
    )
    assert sent.status_code == 200, sent.text
    for view in ("overview", "pages", "resources", "endpoints"):
        page = httpx.get(f"{base}/api/projects/{org['project']}/performance/{view}", headers=key, timeout=60)
        assert page.status_code == 200, (view, page.text)
    explore = httpx.post(
        f"{base}/api/explore/query",
        json={
            "dataset": "errors",
            "project": org["project"],
            "aggregates": [{"fn": "count"}],
            "range": "24h",
        },
        headers=key,
        timeout=60,
    )
    assert explore.status_code == 200, explore.text
    shared = get_warehouse(stores)
    assert shared.query("SELECT getSetting('readonly')").result_rows == [(0,)]
    shared.command("INSERT INTO guard_probe VALUES (1)")


def test_a_refused_write_leaves_ingest_answering(live, stores: Settings) -> None:
    base, org = live
    for sql in BREAKERS:
        refused = _sql(base, sql)
        assert refused.status_code == 400, (sql, refused.text)
        assert refused.json()["detail"].startswith("sql: "), refused.text
        _service_answers(base, org, stores)
    assert get_warehouse(stores).query("EXISTS TABLE events").result_rows == [(1,)]


def test_every_operator_statement_leaves_the_service_whole(
    live,
    stores: Settings,
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
) -> None:
    base, org = live
    for sql, says in REFUSED:
        refused = _sql(base, sql)
        assert refused.status_code == 400, (sql, refused.text)
        assert says in refused.json()["detail"], (sql, refused.text)
    for sql in ACCEPTED:
        accepted = _sql(base, sql)
        assert accepted.status_code == 200, (sql, accepted.text)
        assert set(accepted.json()) == {"columns", "rows", "meta"}
    _service_answers(base, org, stores)
    outcomes = materialize_now(defs, instance, ["issues"])
    assert outcomes and all(o.success for o in outcomes), [o.error for o in outcomes]
    listed = httpx.get(
        f"{base}/api/projects/{org['project']}/issues",
        headers={"Authorization": f"Bearer {org['api_key']}"},
        timeout=60,
    )
    assert listed.status_code == 200, listed.text
    assert json.loads(listed.text)
