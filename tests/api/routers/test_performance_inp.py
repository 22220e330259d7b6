"""The INP view's JSON API through the real app: parts, scripts, parties and browsers with the filters, the
CSV of the parts, the project's own hosts set and read (changing the party of the next hours written), bad
input answered 400 naming the field, and another organization's key answered 404."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest

from stacklens.metrics import QUANTILE_RELATIVE_ERROR
from stacklens.warehouse.client import get_warehouse
from tests.stacklens.performance.inp import inp_seed as s

AT = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=2)
WIDGET = "http://widgets.example/w.js"


@pytest.fixture
def org(org_factory, stores):
    created = org_factory()
    client = get_warehouse(stores)
    spans = [
        s.span(
            AT + timedelta(seconds=i),
            "http://shop.test/cart",
            "button#buy",
            (50.0, 250.0, 20.0),
            [
                s.script("http://shop.test/a.js", 250.0, "processing", "buy"),
                s.script(WIDGET, 50.0, "input_delay"),
            ],
        )
        for i in range(5)
    ]
    s.store(client, created["org_id"], created["project_id"], spans)
    s.refresh(client, *s.hour_range(AT))
    return created


def _get(client, org, path: str = "performance/inp", **params):
    return client.get(
        f"/api/projects/{org['project']}/{path}",
        params={"range": "24h", **params},
        headers={"Authorization": f"Bearer {org['api_key']}"},
    )


def test_the_view_answers_parts_scripts_parties_and_browsers(client, org) -> None:
    response = _get(client, org, page="/cart")
    assert response.status_code == 200, response.text
    body = response.json()
    page = next(r for r in body["rows"] if r["target"] == "")
    assert (page["interactions"], page["main_part"]) == (5, "processing")
    assert page["processing_p75"] == pytest.approx(250.0, rel=QUANTILE_RELATIVE_ERROR)  # 1 % log histograms
    assert [(x["function"], x["third_party"]) for x in body["scripts"]][:2] == [("buy", False), ("", True)]
    assert body["parties"][0]["third_party_pct"] == pytest.approx(100 * 50 / 300)
    assert body["browsers"][0]["browser"] == "Chrome" and body["filters"]["range"] == "24h"
    rows = list(csv.DictReader(io.StringIO(_get(client, org, page="/cart", format="csv").text)))
    assert float(rows[0]["inp_processing_p75_ms"]) == page["processing_p75"] and rows[0]["target"] == ""


def test_own_hosts_are_set_and_classify_what_is_written_next(client, org, stores) -> None:
    headers = {"Authorization": f"Bearer {org['api_key']}"}
    path = f"/api/projects/{org['project']}/performance/first-party-hosts"
    assert client.get(path, headers=headers).json() == {"project": org["project"], "hosts": []}
    answer = client.put(path, json={"hosts": ["Widgets.Example"]}, headers=headers)
    assert answer.json()["hosts"] == ["widgets.example"]
    s.refresh(get_warehouse(stores), *s.hour_range(AT), {org["project_id"]: ["widgets.example"]})
    assert all(not x["third_party"] for x in _get(client, org).json()["scripts"])
    bad = client.put(path, json={"hosts": ["https://x.test/"]}, headers=headers)
    assert bad.status_code == 400 and "hosts" in bad.text


def test_bad_filters_and_other_organizations(client, org, org_factory) -> None:
    assert _get(client, org, format="xml").status_code == 400
    bad = _get(client, org, range="3y")
    assert bad.status_code == 400 and "range" in bad.text
    other = org_factory("Other Org")
    for path in ("performance/inp", "performance/first-party-hosts"):
        response = client.get(
            f"/api/projects/{org['project']}/{path}", headers={"Authorization": f"Bearer {other['api_key']}"}
        )
        assert response.status_code == 404, path
