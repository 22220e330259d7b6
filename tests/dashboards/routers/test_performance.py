"""The performance pages through the real app, chdb and SQLite: every page renders the seeded data, shows the
same numbers as the JSON API for the same filters, greys thin figures, refuses bad filters with a 400 naming
the field, shows the SDK snippet on an empty project, and never shows another organization's data."""

from __future__ import annotations

import re

import pytest

from stacklens.warehouse.client import get_warehouse
from tests.dashboards.conftest import sign_in
from tests.stacklens.performance.perf_seed import NOW, seed

WINDOW = {"since": "2026-11-06T12:00:00Z", "until": NOW.isoformat().replace("+00:00", "Z")}
PAGES = ["", "/pages", "/resources", "/api", "/trends", "/releases", "/recommendations"]


@pytest.fixture
def seeded(client, org_factory, stores):
    org = org_factory()
    data = seed(get_warehouse(stores), org["org_id"], org["project_id"], loads=240)
    sign_in(client, org["email"])
    return org, data


def _base(org: dict) -> str:
    return f"/orgs/{org['org_slug']}/projects/{org['project']}/performance"


def test_every_page_renders_with_data(client, seeded) -> None:
    org, _ = seeded
    for suffix in PAGES:
        response = client.get(_base(org) + suffix, params=WINDOW)
        assert response.status_code == 200, (suffix, response.text[:500])
        assert 'data-figure="fig-' in response.text or suffix == "/recommendations", suffix
        assert "perf-empty" not in response.text, suffix
    detail = client.get(_base(org) + "/pages/detail", params={**WINDOW, "page": "/checkout"})
    assert detail.status_code == 200 and "fig-dist-load" in detail.text and "waterfall-link" in detail.text
    event_id = re.search(r"/waterfall/([0-9a-f-]{36})", detail.text).group(1)
    waterfall = client.get(_base(org) + f"/waterfall/{event_id}", params=WINDOW)
    assert waterfall.status_code == 200 and "fig-waterfall" in waterfall.text and "blocking" in waterfall.text
    endpoint = client.get(
        _base(org) + "/api/detail",
        params={**WINDOW, "source": "client", "method": "GET", "path": "/api/items/{id}"},
    )
    assert (
        endpoint.status_code == 200 and "fig-latency" in endpoint.text and "waterfall-link" in endpoint.text
    )
    issues = client.get(f"/orgs/{org['org_slug']}/projects/{org['project']}/issues")
    assert f'href="{_base(org)}">Performance</a>' in issues.text


def test_pages_show_the_api_numbers(client, seeded) -> None:
    org, _ = seeded
    headers = {"Authorization": f"Bearer {org['api_key']}"}
    for view, suffix, key in (
        ("pages", "/pages", "load_p75"),
        ("endpoints", "/api", "p95_ms"),
        ("resources", "/resources", "avg_bytes"),
    ):
        api = client.get(
            f"/api/projects/{org['project']}/performance/{view}",
            params={**WINDOW, "environment": "production"},
            headers=headers,
        )
        assert api.status_code == 200
        page = client.get(_base(org) + suffix, params={**WINDOW, "environment": "production"}).text
        shown = {float(v) for v in re.findall(r'data-value="([-0-9.e+]+)"', page)}
        for row in api.json()["rows"]:
            assert row[key] in shown, (view, row)
    overview = client.get(
        f"/api/projects/{org['project']}/performance/overview", params=WINDOW, headers=headers
    ).json()
    page = client.get(_base(org), params=WINDOW).text
    for row in overview["rows"]:
        assert f'data-samples="{row["samples"]}"' in page
        assert f'data-value="{row["value"]}"' in page


def test_thin_figures_are_greyed_not_hidden(client, seeded) -> None:
    org, _ = seeded
    page = client.get(
        _base(org) + "/pages", params={**WINDOW, "browser": "Firefox", "environment": "staging"}
    ).text
    assert 'class="few"' in page and "page-row" in page


def test_bad_filters_answer_400_naming_the_field(client, seeded) -> None:
    org, _ = seeded
    for params, field in (
        ({"range": "2y"}, "range"),
        ({"since": "yesterday"}, "since"),
        ({"since": WINDOW["until"], "until": WINDOW["since"]}, "until"),
    ):
        response = client.get(_base(org) + "/pages", params=params)
        assert response.status_code == 400 and f"{field}:" in response.text, params
    assert client.get(_base(org) + "/api", params={"sort": "nope"}).status_code == 400
    assert client.get(_base(org) + "/waterfall/not-a-uuid").status_code == 400


def test_empty_project_shows_the_snippet(client, org_factory) -> None:
    org = org_factory()
    sign_in(client, org["email"])
    page = client.get(_base(org))
    assert page.status_code == 200 and "perf-empty" in page.text and "browserTracingIntegration" in page.text


def test_another_organization_sees_nothing(client, seeded, org_factory) -> None:
    org, _ = seeded
    other = org_factory("Other")
    client.cookies.clear()
    sign_in(client, other["email"])
    assert client.get(_base(org)).status_code == 404
    own = client.get(f"/orgs/{other['org_slug']}/projects/{other['project']}/performance", params=WINDOW)
    assert "perf-empty" in own.text


def test_browser_error_links_to_its_page_load_waterfall(client, seeded) -> None:
    from tests.dashboards.landing import land, sdk_event

    org, data = seeded
    load = next(t for t in data.transactions if t["op"] == "pageload")

    def fail() -> None:
        raise TypeError("Cannot read properties of undefined (reading 'price')")

    payload = sdk_event(fail)
    payload["contexts"] = {
        **payload.get("contexts", {}),
        "trace": {"trace_id": load["trace_id"], "span_id": "ab" * 8},
    }
    payload["timestamp"] = load["timestamp"].timestamp() + 0.5
    row = land(org["org_id"], org["project_id"], [payload])[0]
    page = client.get(f"/orgs/{org['org_slug']}/projects/{org['project']}/issues/{row['issue_id']}")
    assert page.status_code == 200
    assert f'href="{_base(org)}/waterfall/{load["event_id"]}"' in page.text
