"""The performance pages through the real app, chdb and SQLite: every page renders the seeded data, shows the
same numbers as the JSON API for the same filters, greys thin figures, refuses bad filters with a 400 naming
the field, shows the SDK snippet on an empty project, and never shows another organization's data."""

from __future__ import annotations

import html
import json
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from stacklens.cli.app import build_app
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.dashboards.conftest import sign_in
from tests.module_stores import OrgFactory, store_fixtures
from tests.stacklens.performance import perf_seed
from tests.stacklens.performance.perf_seed import NOW, Seeded, seed

WINDOW = {"since": "2026-11-06T12:00:00Z", "until": NOW.isoformat().replace("+00:00", "Z")}
PAGES = ["", "/pages", "/resources", "/api", "/trends", "/releases", "/recommendations"]


# One app over stores of the module's own (tests/module_stores.py), and one seeded organization that the
# reading tests share; a test that writes (late rows, an annotation, an error event) seeds an organization of
# its own, so no test reads another's writes. Every test starts signed out, as with a client of its own.
stores, org_factory = store_fixtures("performance-pages")


@pytest.fixture(scope="module")
def app(stores: Settings) -> Iterator[TestClient]:
    with TestClient(build_app(stores)) as test_client:
        yield test_client


@pytest.fixture
def client(app: TestClient) -> TestClient:
    app.cookies.clear()
    return app


def _seeded(org_factory: OrgFactory, stores: Settings) -> tuple[dict[str, Any], Seeded]:
    org = org_factory()
    data = seed(get_warehouse(stores), org["org_id"], org["project_id"], loads=240)
    return org, data


@pytest.fixture(scope="module")
def shared(org_factory: OrgFactory, stores: Settings) -> tuple[dict[str, Any], Seeded]:
    return _seeded(org_factory, stores)


@pytest.fixture
def seeded(client: TestClient, shared: tuple[dict[str, Any], Seeded]) -> tuple[dict[str, Any], Seeded]:
    """The module's seeded organization, its owner signed in (read it, never write to it)."""
    sign_in(client, shared[0]["email"])
    return shared


@pytest.fixture
def own_seeded(
    client: TestClient, org_factory: OrgFactory, stores: Settings
) -> tuple[dict[str, Any], Seeded]:
    """An organization seeded for this test alone, its owner signed in: for a test that writes to it."""
    org, data = _seeded(org_factory, stores)
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


def test_browser_error_links_to_its_page_load_waterfall(client, own_seeded) -> None:
    from tests.dashboards.landing import land, sdk_event

    org, data = own_seeded
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


def test_release_views_open_on_the_releases_they_compare(
    client, org_factory, stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #47: at a week's default, Release impact and Trends showed the newest release alone; they open on
    30 days (stated on the page, as Release health opens), with the release before it; the API the same."""
    monkeypatch.setattr(perf_seed, "NOW", datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5))
    org = org_factory()
    perf_seed.seed(get_warehouse(stores), org["org_id"], org["project_id"], loads=120, days=14)
    sign_in(client, org["email"])
    for suffix in ("/releases", "/trends"):
        page = client.get(_base(org) + suffix).text
        assert 'id="default-range"' in page and "opens on the last 30 days" in page, suffix
        assert re.search(r'<option value="30d"\s+selected>', page), suffix
    for suffix in ("", "/pages"):
        assert 'id="default-range"' not in client.get(_base(org) + suffix).text
    releases = client.get(_base(org) + "/releases").text
    assert "Regression in shop@1.1.0 against shop@1.0.0" in releases

    headers = {"Authorization": f"Bearer {org['api_key']}"}
    api = f"/api/projects/{org['project']}/performance"
    answer = client.get(f"{api}/releases", headers=headers).json()
    assert answer["filters"]["range"] == "30d"
    assert {r["release"] for r in answer["rows"]} == {"shop@1.0.0", "shop@1.1.0"}
    week = client.get(f"{api}/releases", params={"range": "7d"}, headers=headers).json()
    assert {r["release"] for r in week["rows"]} == {"shop@1.1.0"}  # what the page showed before
    assert client.get(f"{api}/trends", headers=headers).json()["filters"]["range"] == "30d"
    assert client.get(f"{api}/pages", headers=headers).json()["filters"]["range"] == "7d"


def test_pages_say_the_marts_are_building_while_history_waits(client, own_seeded, stores) -> None:
    """Issue #47: history received after the marts' last run (a first start's backfill) is announced on every
    performance page ("building the last 3 days: …") instead of a chart with a gap; gone once a run took
    it."""
    from tests.pipelines.assets.test_budgets import load
    from tests.pipelines.pipeline_seed import TX_COLS

    org, _ = own_seeded
    for suffix in ("", "/releases"):
        assert 'id="marts-building"' not in client.get(_base(org) + suffix, params=WINDOW).text
    time.sleep(0.01)  # received after the seed's run
    late = datetime.now(UTC) - timedelta(days=3)
    get_warehouse(stores).insert(
        "transactions",
        [load(org["project_id"], org["org_id"], "/", 900, late + timedelta(hours=i)) for i in range(3)],
        column_names=TX_COLS,
    )
    for suffix in PAGES:
        page = client.get(_base(org) + suffix, params=WINDOW).text
        notice = re.search(r'id="marts-building"[^>]*>([^<]*)<', page)
        assert notice and "Building the last 3 days: " in notice.group(1), suffix
    perf_seed.mark_built(get_warehouse(stores), "pageload_facts")
    assert 'id="marts-building"' not in client.get(_base(org), params=WINDOW).text


def test_time_charts_mark_releases_and_annotations(client, own_seeded, stores) -> None:
    """The overview's daily charts mark shop@1.1.0 where it was first seen (within the window; shop@1.0.0
    began before it) and the project's annotation, each linking or listing what it marks."""
    import json

    from stacklens.annotations import create_annotation
    from stacklens.control.db import session_scope

    org, data = own_seeded
    with session_scope(stores) as session:
        create_annotation(
            session, org["org_id"], {"text": "deploy cdn", "tags": ["deploy"], "time": "2026-11-18T09:00:00Z"}
        )
    html = client.get(_base(org), params={"since": "2026-11-10T00:00:00Z", "until": WINDOW["until"]}).text
    block = re.search(r'<script type="application/json" id="fig-trend-[^"]+">(.*?)</script>', html, re.S)
    assert block is not None
    layout = json.loads(block.group(1))["layout"]
    labels = [a["text"] for a in layout.get("annotations", [])]
    first = min(t["timestamp"] for t in data.transactions if t["release"] == "shop@1.1.0")
    release = f'<a href="/orgs/{org["org_slug"]}/projects/{org["project"]}/releases/shop%401.1.0">1.1.0</a>'
    assert labels == [release, "deploy"], labels
    assert layout["shapes"][0]["x0"].startswith(first.strftime("%Y-%m-%dT%H:%M:%S"))


def _figure_traces(page: str, name: str) -> list[dict]:
    body = re.search(rf'id="fig-{re.escape(name)}">(.*?)</script>', page, re.S)
    assert body is not None, name
    return json.loads(html.unescape(body.group(1)))["data"]


def test_daily_charts_draw_the_previous_period_as_that_period_answers_alone(client, seeded) -> None:
    """Compare with the previous period: the dotted line of each daily chart is, day by day, the line the page
    draws for that period on its own (the metrics layer read twice, never a figure computed apart)."""
    org, _ = seeded
    week = {"since": "2026-11-13T12:00:00Z", "until": WINDOW["until"]}
    before = {"since": WINDOW["since"], "until": "2026-11-13T12:00:00Z"}
    targets = (
        ("", {}, ["trend-score", "trend-lcp", "trend-inp", "trend-load"]),
        ("/pages/detail", {"page": "/checkout"}, ["day-load_p75", "day-lcp_p75"]),
        (
            "/api/detail",
            {"source": "client", "method": "GET", "path": "/api/items/{id}"},
            ["latency", "errors"],
        ),
    )
    for suffix, extra, names in targets:
        compared = client.get(_base(org) + suffix, params={**week, **extra, "compare": "previous"})
        alone = client.get(_base(org) + suffix, params={**week, **extra}).text
        earlier = client.get(_base(org) + suffix, params={**before, **extra}).text
        assert compared.status_code == 200, compared.text[:300]
        assert 'id="compare-previous"' in compared.text and "checked" in compared.text
        for name in names:
            this, previous = _figure_traces(compared.text, name)
            assert (this["name"], previous["name"]) == ("this period", "previous period")
            assert this["y"] == _figure_traces(alone, name)[0]["y"], (suffix, name)
            own = _figure_traces(earlier, name)[0]
            assert previous["customdata"] == own["x"] and previous["y"] == own["y"], (suffix, name)
            assert previous["x"] == this["x"]  # drawn beneath the window's own days
            assert any(v is not None for v in previous["y"]), (suffix, name)
    # Only the comparable views offer it; elsewhere the parameter is kept in the links and draws nothing new.
    assert 'id="compare-previous"' not in client.get(_base(org) + "/pages", params=week).text
    bad = client.get(_base(org), params={**week, "compare": "last-year"})
    assert bad.status_code == 400 and "compare:" in bad.text
