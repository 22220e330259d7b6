"""`GET /api/projects/{slug}/logs`: one project's records newest first, filtered, as JSON or CSV."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse


def test_records_newest_first_filtered_as_json_or_csv(app_client, org_factory, stores: Settings) -> None:
    org, other = org_factory("Acme"), org_factory("Globex")
    now = datetime.now(UTC).replace(microsecond=0)
    rows = [
        [org["org_id"], org["project_id"], now - timedelta(minutes=9), "info", "cart opened", "shop", "a"],
        [
            org["org_id"],
            org["project_id"],
            now - timedelta(minutes=3),
            "error",
            "=payment failed",
            "shop",
            "b",
        ],
        [other["org_id"], other["project_id"], now - timedelta(minutes=1), "error", "not yours", "x", "c"],
    ]
    columns = ["org_id", "project_id", "timestamp", "severity", "body", "service", "dedup_key"]
    get_warehouse(stores).insert("logs", rows, column_names=columns)
    auth = {"Authorization": f"Bearer {org['api_key']}"}
    url = f"/api/projects/{org['project']}/logs"

    answer = app_client.get(url, headers=auth).json()
    assert [r["body"] for r in answer["rows"]] == ["=payment failed", "cart opened"]
    assert [
        r["body"] for r in app_client.get(url, params={"severity": "error"}, headers=auth).json()["rows"]
    ] == ["=payment failed"]
    exported = app_client.get(url, params={"format": "csv"}, headers=auth)
    table = list(csv.DictReader(io.StringIO(exported.text)))
    assert exported.headers["content-type"].startswith("text/csv")
    assert [r["body"] for r in table] == ["'=payment failed", "cart opened"]  # neutralised against formulas

    assert app_client.get(url, params={"format": "xml"}, headers=auth).status_code == 400
    assert app_client.get(url, params={"severity": "loud"}, headers=auth).status_code == 400
    assert app_client.get(f"/api/projects/{other['project']}/logs", headers=auth).status_code == 404
    assert app_client.get(url).status_code == 401
