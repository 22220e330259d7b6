"""`GET /api/metrics`: the metric catalog for API clients — authenticated like every API route, one object
per metric with the docs/reference.md fields, and described in the OpenAPI document."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from stacklens.metrics.catalog import CATALOG, budget_metrics
from stacklens.settings import Settings


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def test_the_catalog_is_listed_with_units_statistics_thresholds_and_states(
    client: TestClient, make_org
) -> None:
    assert client.get("/api/metrics").status_code == 401
    assert client.get("/api/metrics", headers={"Authorization": "Bearer nope"}).status_code == 401
    org = make_org()
    answer = client.get("/api/metrics", headers={"Authorization": f"Bearer {org['api_key']}"})
    assert answer.status_code == 200, answer.text
    metrics = answer.json()
    assert [m["key"] for m in metrics] == list(CATALOG)
    by_key = {m["key"]: m for m in metrics}
    for m in metrics:
        assert {"key", "label", "unit", "statistics", "thresholds"} <= set(m)
        assert m["default_statistic"] in m["statistics"] and m["states"]
    lcp = by_key["lcp_ms"]
    assert (
        lcp["label"] == "Largest contentful paint (LCP)" and lcp["unit"] == "ms" and lcp["unit_label"] == "ms"
    )
    assert lcp["statistics"] == ["p75"] and lcp["error"] == 0.01
    assert lcp["thresholds"] == {
        "good": 2500.0,
        "poor": 4000.0,
        "higher_is_better": False,
        "source": "Google web vitals",
    }
    assert lcp["axis_title"] == "LCP p75 (ms)" and lcp["example"] == "2,004.9 ms"
    assert lcp["statistic_details"] == [{"key": "p75", "label": "75th percentile", "column": "lcp_p75_ms"}]
    assert "pageload_periods" in {s["table"] for s in lcp["states"]}
    js = by_key["js_bytes"]
    assert js["unit"] == "bytes" and "binary" in js["unit_description"] and js["example"] == "250.0 KiB"
    assert js["thresholds"] is None and js["budget"] is True
    assert by_key["api_p95_ms"]["same_as"] == ["api_ms", "p95"]
    assert by_key["score"]["thresholds"]["higher_is_better"] is True
    assert {m["key"] for m in metrics if m["budget"]} == set(budget_metrics())


def test_the_route_is_in_the_openapi_document(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    operation = document["paths"]["/api/metrics"]["get"]
    assert "metrics" in operation["tags"] and {"200", "401"} <= set(operation["responses"])
    schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert schema["type"] == "array" and schema["items"]["$ref"].endswith("/MetricOut")
