"""One metric, scope, filter set and window give one value everywhere: the pages view's JSON (the API), a
budget's status, an alert rule's evaluation and the last evaluation of its 30-day preview — page loads landed
through `POST /api/ingest` and folded by the pipeline's own tick into the states every consumer reads. Windows
are cut at seconds, minutes, whole hours and midnight and reach across midnight; every value is within 1 % of
the exact percentile of the stored raw rows (polars), and counts are exact. The error rate (`error_pct`: API
calls answered 4xx or 5xx over all calls) of server-side calls is the endpoints view's, the budget's, the
rule's and its preview's, to the bit, and the exact share of the stored raw rows. The pages view's CSV
download holds the JSON's numbers, and Explore's aggregate over the same window and filters is the view's
figure.

What a person reads prints the view's number as the metric catalog writes it (`format_value`: to its last
printed digit, counts with thousands separators): the pages page (each page's row and the total) and the
PDF report (its pages table and web vitals) for the same window and filters; the budgets page, `stacklens
budgets list` and the PDF's budgets table (each judging the budgets now) for a budget's current value,
samples and status. `stacklens query` prints Explore's figure as its table writes numbers (raw, in the
column's unit, two decimals)."""

from __future__ import annotations

import csv
import html
import io
import random
import re
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import polars as pl
import pytest
from fastapi.testclient import TestClient
from pypdf import PdfReader
from sqlalchemy import select

from pipelines.definitions import definitions_for
from pipelines.embedded import dagster_instance, materialize_now
from stacklens.alerts import rules as alert_rules
from stacklens.alerts.evaluation import evaluate as evaluate_rules
from stacklens.alerts.preview import preview
from stacklens.cli.app import build_app
from stacklens.cli.main import main
from stacklens.control import accounts
from stacklens.control import budgets as control_budgets
from stacklens.control.budgets import BudgetRow
from stacklens.control.db import migrate_control_store, session_scope
from stacklens.control.models.alerts import AlertEvaluation, AlertRule
from stacklens.control.projects import create_project, project_by_slug
from stacklens.metrics import catalog
from stacklens.metrics.formatting import format_value
from stacklens.metrics.units import MISSING
from stacklens.performance.budget_eval import BudgetSpec, judge
from stacklens.performance.budget_eval import evaluate as evaluate_budgets
from stacklens.performance.exports.tables import csv_column
from stacklens.settings import override_settings
from stacklens.view_filters import ViewFilters
from stacklens.warehouse.client import get_warehouse, reset_clients
from stacklens.warehouse.migrations import apply_migrations
from tests.api.live import serve
from tests.conftest import make_settings
from tests.dashboards.conftest import sign_in
from tests.dashboards.html_tables import read_page

UA = {
    "Chrome": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    "Firefox": "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
    "Safari": "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_2) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15",
}
OTHER_PAGES = ["/", "/products/12", "/products/list", "/checkout"]
# The consumers' windows: minutes, hours across midnight, a day, a week, 30 days (budgets: whole days only).
WINDOWS = {
    "90m": timedelta(minutes=90),
    "36h": timedelta(hours=36),
    "1d": timedelta(days=1),
    "7d": timedelta(days=7),
}
BUDGET_WINDOWS = {"1d": 1, "7d": 7, "30d": 30}
# (metric, statistic, scope, environment, release): what each consumer is asked, the view's column it matches.
CASES = [
    ("lcp_ms", "p75", "/search", "", "", "lcp_p75"),
    ("load_time_ms", "p75", "*", "production", "", "load_p75"),
    ("ttfb_ms", "avg", "/search", "", "", "ttfb_avg"),
    ("fcp_ms", "p75", "*", "", "web@2.1", "fcp_p75"),
    ("cls", "p75", "/products/{id}", "staging", "", "cls_p75"),
]
COLUMN = {"lcp_ms": "lcp", "load_time_ms": "load", "ttfb_ms": "ttfb", "fcp_ms": "fcp", "cls": "cls"}
# Server-side API calls: their routes, and the statuses they answer with (None: the call reports no status).
API_ROUTE = "/api/search"
API_ROUTES = [API_ROUTE, "/api/cart"]
API_STATUSES = [200, 200, 200, 201, 304, 404, 422, 500, 503, None]
# (scope, environment) of the error-rate cases: the route as budgets and rules scope it, and with a filter.
ERROR_CASES = [(API_ROUTE, ""), (API_ROUTE, "production")]


def _payload(rng: random.Random, at: datetime, path: str) -> dict[str, Any]:
    load = rng.lognormvariate(7.3, 0.45)
    browser = rng.choice(list(UA))
    measurements: dict[str, Any] = {
        "ttfb": {"value": rng.uniform(40, 900), "unit": "millisecond"},
        "fcp": {"value": rng.uniform(0.3, 3.2), "unit": "second"},
    }
    if browser != "Safari":  # Safari reports no LCP nor CLS
        measurements["lcp"] = {"value": rng.lognormvariate(7.5, 0.4), "unit": "millisecond"}
        measurements["cls"] = {"value": rng.uniform(0, 0.35), "unit": ""}
    start = at.timestamp()
    return {
        "type": "transaction",
        "event_id": uuid.UUID(int=rng.getrandbits(128)).hex,
        "platform": "javascript",
        "transaction": path,
        "transaction_info": {"source": "url"},
        "start_timestamp": start,
        "timestamp": start + load / 1000,
        "release": rng.choice(["web@2.0", "web@2.1"]),
        "environment": rng.choice(["production", "production", "staging"]),
        "contexts": {
            "trace": {"op": "pageload", "trace_id": uuid.uuid4().hex, "span_id": "b" * 16, "status": "ok"}
        },
        "request": {"url": "https://shop.test" + path, "headers": {"User-Agent": UA[browser]}},
        "measurements": measurements,
    }


def _api_call(rng: random.Random, at: datetime, route: str) -> dict[str, Any]:
    """A server transaction (op http.server) on ``route``: its status in the response context, or none."""
    status = rng.choice(API_STATUSES)
    start = at.timestamp()
    payload: dict[str, Any] = {
        "type": "transaction",
        "event_id": uuid.UUID(int=rng.getrandbits(128)).hex,
        "platform": "python",
        "transaction": route,
        "transaction_info": {"source": "route"},
        "start_timestamp": start,
        "timestamp": start + rng.uniform(0.005, 0.8),
        "release": rng.choice(["web@2.0", "web@2.1"]),
        "environment": rng.choice(["production", "production", "staging"]),
        "contexts": {
            "trace": {
                "op": "http.server",
                "trace_id": uuid.uuid4().hex,
                "span_id": "c" * 16,
                "status": "ok" if status is None or status < 400 else "internal_error",
            }
        },
        "request": {"method": "GET", "url": "https://api.shop.test" + route},
    }
    if status is not None:
        payload["contexts"]["response"] = {"status_code": status}
    return payload


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, warehouse_url: str) -> Iterator[dict[str, Any]]:
    """400 page loads of /search and one of another page in every hour of the last 34 days, and server API
    calls (one of /api/search in every hour, 400 more of either route anywhere), landed through the ingest
    API and folded by one pipeline tick; an organization with an API key to read the views."""
    data_dir = tmp_path_factory.mktemp("one-value")
    settings = make_settings(data_dir, warehouse_url)
    migrate_control_store(settings)
    apply_migrations(settings)
    with session_scope(settings) as session:
        org, api_key = accounts.create_organization(session, "Acme", "owner@acme.test", "password-123")
        project, app_key = create_project(session, org.id, "Shop")
        ids = {"org_id": org.id, "org_slug": org.slug, "project_id": project.id, "slug": project.slug}
    rng = random.Random(33)
    now = datetime.now(UTC)
    first = (now - timedelta(days=34)).replace(minute=0, second=0, microsecond=0)
    hours = int((now - first) / timedelta(hours=1)) - 1
    # A page load of another page in every hour (the tick then refreshes one run of hours, not one per load)
    # and 400 of /search anywhere in them.
    loads = [
        (first + timedelta(hours=h, seconds=rng.uniform(0, 3599)), rng.choice(OTHER_PAGES))
        for h in range(hours)
    ]
    loads += [(first + timedelta(seconds=rng.uniform(0, hours * 3600)), "/search") for _ in range(400)]
    calls = [(first + timedelta(hours=h, seconds=rng.uniform(0, 3599)), API_ROUTE) for h in range(hours)]
    calls += [
        (first + timedelta(seconds=rng.uniform(0, hours * 3600)), rng.choice(API_ROUTES)) for _ in range(400)
    ]
    lines = [
        orjson.dumps(
            {"v": 1, "type": "transaction", "ts": at.isoformat(), "payload": _payload(rng, at, path)}
        )
        for at, path in loads
    ]
    lines += [
        orjson.dumps(
            {"v": 1, "type": "transaction", "ts": at.isoformat(), "payload": _api_call(rng, at, route)}
        )
        for at, route in calls
    ]
    app = build_app(settings)  # the API and the dashboards, as `stacklens serve` runs them
    client = TestClient(app)
    with client:
        landed = client.post(
            "/api/ingest",
            content=b"\n".join(lines),
            headers={
                "Authorization": f"Bearer {api_key}",
                "X-Stacklens-App-Key": app_key,
                "Content-Type": "application/x-ndjson",
            },
        )
        assert landed.status_code == 200 and landed.json()["accepted"] == len(lines), landed.text
        instance = dagster_instance(settings)
        outcomes = materialize_now(
            definitions_for(settings), instance, ["pageload_periods", "endpoint_call_periods"]
        )
        assert outcomes and all(o.success for o in outcomes), [o.error for o in outcomes]
        instance.dispose()
        warehouse = get_warehouse(settings)
        stored = warehouse.query(
            "SELECT timestamp, page, environment, toString(release), browser_name, duration_ms, measurements"
            " FROM transactions WHERE project_id = {p:UInt64} AND op = 'pageload'",
            parameters={"p": ids["project_id"]},
        ).result_rows
        raw = pl.DataFrame(
            [
                {
                    "ts": ts.replace(tzinfo=UTC),
                    "page": page,
                    "environment": env,
                    "release": release,
                    "browser": browser,
                    "load": load,
                    **{k: m.get(k) for k in ("lcp", "ttfb", "fcp", "cls")},
                }
                for ts, page, env, release, browser, load, m in stored
            ],
            infer_schema_length=None,
        )
        assert raw.height == len(loads) and raw.filter(pl.col("page") == "/search").height == 400
        stored_calls = warehouse.query(
            "SELECT timestamp, page, environment, http_status FROM transactions"
            " WHERE project_id = {p:UInt64} AND op = 'http.server'",
            parameters={"p": ids["project_id"]},
        ).result_rows
        api = pl.DataFrame(
            [
                {"ts": ts.replace(tzinfo=UTC), "page": page, "environment": env, "status": status}
                for ts, page, env, status in stored_calls
            ],
            schema={
                "ts": pl.Datetime("us", "UTC"),
                "page": pl.String,
                "environment": pl.String,
                "status": pl.Int64,
            },
        )
        assert (
            api.height == len(calls) and api.filter(pl.col("status") == 0).height > 0
        )  # some sent no status
        day = now.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=2)
        yield {
            **ids,
            "settings": settings,
            "app": app,
            "client": client,
            "api_key": api_key,
            "warehouse": warehouse,
            "raw": raw,
            "api": api,
            "views": {},
            "endpoints": {},
            # Evaluation times: cut at seconds, at minutes, at a whole hour, at midnight, 19 s before
            # midnight.
            "times": [
                day + timedelta(hours=13, minutes=47, seconds=31),
                day + timedelta(hours=9, minutes=26),
                day + timedelta(hours=5),
                day,
                day - timedelta(seconds=19),
            ],
        }
    reset_clients()


def _exact(raw: pl.DataFrame, case: tuple, window: ViewFilters) -> tuple[float | None, int]:
    """The case's figure over the raw rows of the window (its bounds in whole minutes, as every
    consumer's)."""
    metric, statistic, scope, env, release, _ = case
    rows = raw.filter((pl.col("ts") >= window.since) & (pl.col("ts") < window.until))
    if scope != "*":
        rows = rows.filter(pl.col("page") == scope)
    if env:
        rows = rows.filter(pl.col("environment") == env)
    if release:
        rows = rows.filter(pl.col("release") == release)
    values = rows[COLUMN[metric]].drop_nulls()
    if not len(values):
        return None, 0
    value = values.mean() if statistic == "avg" else values.quantile(0.75, "linear")
    return float(value), len(values)


def _pages_view(world: dict[str, Any], window: ViewFilters, env: str, release: str) -> dict[str, Any]:
    """The pages view's JSON (the API) for the window and filters: one request each, the cases read its
    rows."""
    key = (window.since, window.until, env, release)
    if key not in world["views"]:
        response = world["client"].get(
            f"/api/projects/{world['slug']}/performance/pages",
            params={
                "since": window.since.isoformat().replace("+00:00", "Z"),
                "until": window.until.isoformat().replace("+00:00", "Z"),
                "environment": env,
                "release": release,
            },
            headers={"Authorization": f"Bearer {world['api_key']}"},
        )
        assert response.status_code == 200, response.text
        world["views"][key] = response.json()
    body: dict[str, Any] = world["views"][key]
    return body


def _view(world: dict[str, Any], case: tuple, window: ViewFilters) -> tuple[float | None, int]:
    """The pages view's figure (the JSON API): the total row for `*`, the page's row for a route."""
    metric, _, scope, env, release, column = case
    body = _pages_view(world, window, env, release)
    row = body["total"] if scope == "*" else next((r for r in body["rows"] if r["page"] == scope), None)
    if row is None:
        return None, 0
    samples = row["views"] if metric == "load_time_ms" else row[f"{COLUMN[metric]}_n"]
    return row[column], samples


def _same(a: float | None, b: float | None) -> bool:
    """Equal to the last digit any page prints: percentiles are the same float; an average may differ in
    the last bits of a float (its sums are added in another order), never in a printed digit."""
    if a is None or b is None:
        return a is b
    return a == b or abs(a - b) <= 1e-9 * abs(b)


def _near(value: float | None, exact: float | None) -> bool:
    if value is None or exact is None:
        return value is exact
    return abs(value - exact) <= 0.01 * abs(exact)


@pytest.fixture(scope="module")
def rules(world: dict[str, Any]) -> dict[tuple[int, str], AlertRule]:
    """One performance rule per case and window."""
    made = {}
    with session_scope(world["settings"]) as session:
        for c, (metric, statistic, scope, env, release, _) in enumerate(CASES):
            for name in WINDOWS:
                rule = alert_rules.create_rule(
                    session,
                    world["org_id"],
                    {
                        "name": f"case {c} over {name}",
                        "type": "performance_budget",
                        "project": world["slug"],
                        "metric": metric,
                        "statistic": statistic,
                        "scope": scope,
                        "environment": env,
                        "release": release,
                        "threshold": 1500,
                        "window": name,
                        "min_samples": 5,
                    },
                )
                made[(c, name)] = rule
    return made


def test_views_rules_and_previews_give_one_value(world, rules) -> None:
    compared = 0
    for at in world["times"]:
        evaluate_rules(world["settings"], world["warehouse"], "http://sl.test", at)
        with session_scope(world["settings"]) as session:
            seen = {
                e.rule_id: (e.value, e.samples, e.scope_key, e.window_start, e.window_end)
                for e in session.scalars(select(AlertEvaluation).where(AlertEvaluation.evaluated_at == at))
            }
        for (c, name), rule in rules.items():
            case, window = CASES[c], ViewFilters(since=at - WINDOWS[name], until=at)
            value, samples, scope, since, until = seen[rule.id]
            assert scope == case[2]  # the rule's scope, not "*"
            assert (since.replace(tzinfo=UTC), until.replace(tzinfo=UTC)) == (window.since, window.until)
            view_value, view_samples = _view(world, case, window)
            exact, exact_samples = _exact(world["raw"], case, window)
            assert samples == view_samples == exact_samples, (case, name, at)
            assert _same(value, view_value), (case, name, at, value, view_value)
            assert _near(value, exact), (case, name, at, value, exact)
            compared += value is not None
        # The preview's last evaluation is the evaluation: one rule per time (each replays 30 days).
        rule = rules[(world["times"].index(at) % len(CASES), "36h")]
        last = preview(world["warehouse"], rule, at).steps[-1]
        assert last.at == at and last.samples == seen[rule.id][1], (rule.id, at)
        assert _same(last.value, seen[rule.id][0]), (rule.id, at, last.value, seen[rule.id][0])
    assert compared >= 0.6 * len(world["times"]) * len(rules)  # most windows hold page loads of their scope


def test_budgets_give_the_views_value(world) -> None:
    cases = [c for c in CASES if not c[3] and not c[4]]  # budgets have no environment or release
    specs = [
        BudgetSpec(n, world["project_id"], c[0], c[1], c[2], 1500.0, days, 5)
        for n, (c, days) in enumerate(((c, d) for c in cases for d in BUDGET_WINDOWS.values()), 1)
    ]
    for at in world["times"]:
        for spec, got in zip(specs, evaluate_budgets(world["warehouse"], specs, at), strict=True):
            case = next(c for c in cases if c[:3] == (spec.metric, spec.statistic, spec.scope))
            window = ViewFilters(since=at - timedelta(days=spec.window_days), until=at)
            view_value, view_samples = _view(world, case, window)
            exact, exact_samples = _exact(world["raw"], case, window)
            assert got.samples == view_samples == exact_samples
            assert _same(got.value, view_value) and _near(got.value, exact), (
                spec,
                at,
                got,
                view_value,
                exact,
            )


def _exact_error_rate(
    api: pl.DataFrame, scope: str, env: str, window: ViewFilters
) -> tuple[float | None, int]:
    """The error rate over the raw server calls of the window: calls answered 4xx or 5xx over all calls (a
    call without a status counts in the denominator only)."""
    rows = api.filter(
        (pl.col("ts") >= window.since) & (pl.col("ts") < window.until) & (pl.col("page") == scope)
    )
    if env:
        rows = rows.filter(pl.col("environment") == env)
    if not rows.height:
        return None, 0
    failed = rows.filter(pl.col("status").is_between(400, 599)).height
    return 100.0 * failed / rows.height, rows.height


def _endpoint_view(
    world: dict[str, Any], scope: str, env: str, window: ViewFilters
) -> tuple[float | None, int]:
    """The endpoints view's error % of the route's server row (the JSON API)."""
    key = (window.since, window.until, env)
    if key not in world["endpoints"]:
        response = world["client"].get(
            f"/api/projects/{world['slug']}/performance/endpoints",
            params={
                "since": window.since.isoformat().replace("+00:00", "Z"),
                "until": window.until.isoformat().replace("+00:00", "Z"),
                "environment": env,
            },
            headers={"Authorization": f"Bearer {world['api_key']}"},
        )
        assert response.status_code == 200, response.text
        world["endpoints"][key] = response.json()["rows"]
    row = next((r for r in world["endpoints"][key] if r["source"] == "server" and r["path"] == scope), None)
    return (row["error_pct"], row["calls"]) if row else (None, 0)


def test_the_error_rate_is_one_value_everywhere(world) -> None:
    """error_pct of a route: the endpoints view, a budget, an alert rule's evaluation and its preview's last
    evaluation give the same number to the bit, the exact share of the raw calls."""
    made: dict[tuple[int, str], AlertRule] = {}
    with session_scope(world["settings"]) as session:
        for c, (scope, env) in enumerate(ERROR_CASES):
            for name in WINDOWS:
                made[(c, name)] = alert_rules.create_rule(
                    session,
                    world["org_id"],
                    {
                        "name": f"error rate {c} over {name}",
                        "type": "performance_budget",
                        "project": world["slug"],
                        "metric": "error_pct",
                        "scope": scope,
                        "environment": env,
                        "threshold": 50,
                        "window": name,
                        "min_samples": 1,
                    },
                )
    budgets = [
        BudgetSpec(n, world["project_id"], "error_pct", "avg", API_ROUTE, 10.0, days, 1)
        for n, days in enumerate(BUDGET_WINDOWS.values(), 1)
    ]
    compared = 0
    for i, at in enumerate(world["times"]):
        evaluate_rules(world["settings"], world["warehouse"], "http://sl.test", at)
        with session_scope(world["settings"]) as session:
            seen = {
                e.rule_id: (e.value, e.samples, e.scope_key)
                for e in session.scalars(select(AlertEvaluation).where(AlertEvaluation.evaluated_at == at))
            }
        for (c, name), rule in made.items():
            scope, env = ERROR_CASES[c]
            window = ViewFilters(since=at - WINDOWS[name], until=at)
            value, samples, scope_key = seen[rule.id]
            assert scope_key == scope
            view = _endpoint_view(world, scope, env, window)
            exact = _exact_error_rate(world["api"], scope, env, window)
            assert (value, samples) == view == exact, (scope, env, name, at)
            compared += value is not None
        # The preview's last evaluation is the evaluation (one rule per time: each replays 30 days).
        rule = made[(i % len(ERROR_CASES), list(WINDOWS)[i % len(WINDOWS)])]
        last = preview(world["warehouse"], rule, at).steps[-1]
        assert last.at == at and (last.value, last.samples) == seen[rule.id][:2]  # counts: to the bit
        for spec, got in zip(budgets, evaluate_budgets(world["warehouse"], budgets, at), strict=True):
            window = ViewFilters(since=at - timedelta(days=spec.window_days), until=at)
            view = _endpoint_view(world, API_ROUTE, "", window)
            assert (got.value, got.samples) == view == _exact_error_rate(world["api"], API_ROUTE, "", window)
            assert got.value is not None and got.samples > 0
    assert compared >= 0.8 * len(world["times"]) * len(made)  # the route has calls in every hour


def _get(world: dict[str, Any], path: str, **params: str) -> Any:
    response = world["client"].get(
        f"/api/projects/{world['slug']}/performance/{path}",
        params=params,
        headers={"Authorization": f"Bearer {world['api_key']}"},
    )
    assert response.status_code == 200, response.text
    return response


def _explore(world: dict[str, Any], metric: str, statistic: str, scope: str, env: str, release: str, window):
    """Explore's figure (`POST /api/explore/query`) for a case: the metric's statistic over the scope's
    loads."""
    filters = [{"field": "environment", "op": "=", "value": env}] if env else []
    filters += [{"field": "release", "op": "=", "value": release}] if release else []
    filters += [{"field": "page", "op": "=", "value": scope}] if scope != "*" else []
    response = world["client"].post(
        "/api/explore/query",
        json={
            "dataset": "pageloads",
            "project": world["slug"],
            "filters": filters,
            "aggregates": [{"fn": statistic, "metric": metric}],
            "since": window.since.isoformat().replace("+00:00", "Z"),
            "until": window.until.isoformat().replace("+00:00", "Z"),
        },
        headers={"Authorization": f"Bearer {world['api_key']}"},
    )
    assert response.status_code == 200, response.text
    body = response.json()
    (row,) = body["rows"]
    return row[body["columns"][0]]


def test_the_csv_download_and_explore_give_the_views_value(world) -> None:
    """The pages view's CSV (`?format=csv`, the page's download: one table, one writer) holds the JSON's
    numbers in the catalog's columns, and Explore's aggregate over the same window and filters is the
    view's figure."""
    compared = 0
    for at in world["times"][:3]:
        for name in ("90m", "7d"):
            window = ViewFilters(since=at - WINDOWS[name], until=at)
            for metric, statistic, scope, env, release, column in CASES:
                if scope == "/products/{id}":  # a route template: Explore filters the stored page itself
                    continue
                view_value, _ = _view(world, (metric, statistic, scope, env, release, column), window)
                explored = _explore(world, metric, statistic, scope, env, release, window)
                assert _same(explored, view_value), (metric, statistic, scope, name, at, explored, view_value)
                compared += view_value is not None
            params = {
                "since": window.since.isoformat().replace("+00:00", "Z"),
                "until": window.until.isoformat().replace("+00:00", "Z"),
            }
            rows = _get(world, "pages", **params).json()["rows"]
            table = list(csv.DictReader(io.StringIO(_get(world, "pages", format="csv", **params).text)))
            assert [r["page"] for r in table] == [r["page"] for r in rows]
            for row, written in zip(rows, table, strict=True):
                for key in ("views", "load_p75", "lcp_p75", "cls_p75", "ttfb_avg"):
                    cell, value = written[csv_column(key)], row[key]
                    if value is None:
                        assert cell == ""
                    else:
                        assert _same(float(cell), float(value)), (key, cell, value)
    assert compared >= 12


# Budgets kept in the control store — what the budgets page, `stacklens budgets list` and the PDF report's
# budgets table show: (metric, statistic, scope, window days, budget). Load time over 30 days: over 1,000
# samples.
STORED_BUDGETS = [
    ("lcp_ms", "p75", "/search", 7, 2500.0),
    ("ttfb_ms", "avg", "/search", 1, 500.0),
    ("cls", "p75", "*", 7, 0.1),
    ("load_time_ms", "p75", "*", 30, 2000.0),
    ("error_pct", "avg", API_ROUTE, 1, 10.0),
]
# The pages view's columns the page and the PDF show, with the metric and statistic the catalog writes each
# as.
PAGE_COLUMNS = {
    "load_avg": ("load_time_ms", "avg"),
    "load_p75": ("load_time_ms", "p75"),
    "ttfb_avg": ("ttfb_ms", "avg"),
    "lcp_p75": ("lcp_ms", "p75"),
    "inp_p75": ("inp_ms", "p75"),
    "cls_p75": ("cls", "p75"),
    "score": ("score", None),
}
# The pages page's table: the cell of each column.
PAGE_CELLS = {
    "views": 1,
    "load_avg": 2,
    "load_p75": 3,
    "ttfb_avg": 4,
    "lcp_p75": 8,
    "cls_p75": 10,
    "score": 11,
}
# The page and the PDF for these windows and filters (evaluation time, span, environment, release): 30 days
# cut at seconds (over 1,000 page loads), 36 hours ending at midnight, a week ending 19 s before midnight, a
# day cut at minutes; each filter set of the cases.
SHOWN = [
    (0, timedelta(days=30), "", ""),
    (3, timedelta(hours=36), "production", ""),
    (4, timedelta(days=7), "", "web@2.1"),
    (1, timedelta(days=1), "staging", ""),
]


def _written(metric: str, value: float | int | None, statistic: str | None = None) -> str:
    """The metric catalog's writing of a value: what every page, the PDF and the CLI print for it."""
    return format_value(metric, value, statistic)


def _count(value: int) -> str:
    return _written("page_loads", value)


def _pdf(text: str) -> str:
    """A cell as the PDF prints it (its core fonts have no en dash: a missing value is ``-``)."""
    return "-" if text == MISSING else text


def _leads(text: str, expected: str) -> bool:
    """``text`` (a cell) starts with ``expected`` as a whole: a number, then nothing or a space and a
    rating."""
    text = " ".join(text.split())
    return text == expected or text.startswith(expected + " ")


def _pdf_lines(pdf: bytes) -> list[str]:
    assert pdf.startswith(b"%PDF-")
    return [line for page in PdfReader(io.BytesIO(pdf)).pages for line in page.extract_text().splitlines()]


def _dashboards(world: dict[str, Any]) -> str:
    return f"/orgs/{world['org_slug']}/projects/{world['slug']}/performance"


@pytest.fixture(scope="module")
def signed_in(world: dict[str, Any]) -> TestClient:
    """A browser on the dashboards of the world's app: the organization's owner signed in."""
    browser = TestClient(world["app"])
    sign_in(browser, "owner@acme.test")
    return browser


@pytest.fixture(scope="module")
def stored_budgets(world: dict[str, Any]) -> list[BudgetRow]:
    with session_scope(world["settings"]) as session:
        project = project_by_slug(session, world["slug"])
        return [
            control_budgets.create_budget(session, project, metric, scope, value, statistic, days, 5)
            for metric, statistic, scope, days, value in STORED_BUDGETS
        ]


def test_the_page_and_the_pdf_show_the_views_value(world, signed_in) -> None:
    """The pages page and the PDF report (the dashboards' download) for a window and filters print every
    number of the pages view's JSON as the metric catalog writes it: each page's views, load time, TTFB,
    LCP, INP, CLS and score (the page's cells also carry the number itself), the total's on the page, and
    the total's web vitals in the PDF's summary; each case's figure is within 1 % of the raw rows'."""
    shown = 0
    for index, span, env, release in SHOWN:
        at = world["times"][index]
        window = ViewFilters(since=at - span, until=at)
        for case in CASES:  # the view's figures against the raw rows
            if case[3:5] == (env, release):
                value, samples = _view(world, case, window)
                exact, exact_samples = _exact(world["raw"], case, window)
                assert samples == exact_samples and _near(value, exact), (case, span, at, value, exact)
        body = _pages_view(world, window, env, release)
        rows, total = body["rows"], body["total"]
        assert rows and total, (span, at, env, release)
        params = {
            "since": window.since.isoformat().replace("+00:00", "Z"),
            "until": window.until.isoformat().replace("+00:00", "Z"),
            "environment": env,
            "release": release,
        }
        # The page: its table's rows in the view's order, each cell the catalog's writing of the view's
        # number.
        page = signed_in.get(_dashboards(world) + "/pages", params=params)
        assert page.status_code == 200, page.text
        table = read_page(page.text)[0]["pages-table"]
        assert [cells[0].text.strip() for cells in table] == [r["page"] for r in rows]
        for cells, row in zip(table, rows, strict=True):
            assert cells[PAGE_CELLS["views"]].text == _count(row["views"]), (row["page"], span, at)
            assert cells[PAGE_CELLS["views"]].numbers == [row["views"]]
            for key, cell_index in PAGE_CELLS.items():
                if key == "views":
                    continue
                cell, value = cells[cell_index], row[key]
                metric, statistic = PAGE_COLUMNS[key]
                assert _leads(cell.text, _written(metric, value, statistic)), (
                    key,
                    row["page"],
                    cell.text,
                    value,
                )
                assert value is None or _same(cell.numbers[0], value), (key, cell.numbers, value)
                shown += value is not None
        foot = re.search(r"<tfoot><tr><th>All pages</th>(.*?)</tr></tfoot>", page.text, re.S)
        assert foot is not None
        cells_text = [
            html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td>(.*?)</td>", foot.group(1))
        ]
        assert cells_text[:3] == [
            _count(total["views"]),
            _written("load_time_ms", total["load_avg"], "avg"),
            _written("load_time_ms", total["load_p75"], "p75"),
        ], (span, at, env, release)
        # The PDF: the pages table's rows and the summary's web vitals (the total's p75 and samples).
        lines = _pdf_lines(signed_in.get(_dashboards(world) + "/report.pdf", params=params).content)
        for row in rows:
            parts = [row["page"], _count(row["views"])]
            for key, (metric, statistic) in PAGE_COLUMNS.items():
                parts.append(_pdf(_written(metric, row[key], statistic)))
                if key in ("lcp_p75", "inp_p75", "cls_p75"):  # a vital's cell: its rating after the value
                    parts.append(row[key.replace("_p75", "_rating")] or "")
            expected = " ".join(p for p in parts if p)
            assert any(_leads(line, expected) for line in lines), (expected, span, at, env, release)
        for vital in ("lcp", "inp", "cls", "fcp", "ttfb"):
            value, samples = total[f"{vital}_p75"], total[f"{vital}_n"]
            label = catalog.get(vital).short_label
            parts = [
                label,
                _pdf(_written(vital, value, "p75")),
                total[f"{vital}_rating"] or "",
                _count(samples),
            ]
            expected = " ".join(p for p in parts if p)
            assert any(_leads(line, expected) for line in lines), (expected, span, at, env, release)
    assert shown >= 40


def _within_a_minute(read: Callable[[], Any]) -> tuple[Any, datetime]:
    """``read()`` — a consumer judging the budgets now — and a time in the UTC minute it judged them in: a
    window ending now is cut at whole minutes, so the view's window ending at that time is the one the
    consumer read."""
    for _ in range(3):
        before = datetime.now(UTC)
        got = read()
        after = datetime.now(UTC)
        if before.replace(second=0, microsecond=0) == after.replace(second=0, microsecond=0):
            return got, before.replace(second=30, microsecond=0)
    raise AssertionError("three reads in a row each ran over the turn of a minute")


def _budget_figure(world: dict[str, Any], budget: BudgetRow, at: datetime) -> tuple[float | None, int]:
    """The view's figure for the budget's metric, statistic and scope over its window ending ``at`` (the
    pages view, the endpoints view for the error rate), checked against the raw rows."""
    window = ViewFilters(since=at - timedelta(days=budget.window_days), until=at)
    if budget.metric == "error_pct":
        view = _endpoint_view(world, budget.scope, "", window)
        assert view == _exact_error_rate(world["api"], budget.scope, "", window)
        return view
    case = (
        budget.metric,
        budget.statistic,
        budget.scope,
        "",
        "",
        f"{COLUMN[budget.metric]}_{budget.statistic}",
    )
    value, samples = _view(world, case, window)
    exact, exact_samples = _exact(world["raw"], case, window)
    assert samples == exact_samples and _near(value, exact), (budget, at, value, exact)
    return value, samples


def test_the_budget_consumers_show_the_views_value(world, stored_budgets, signed_in, capsys) -> None:
    """The budgets page, `stacklens budgets list` (the real CLI, in-process with the world's settings) and
    the PDF report's budgets table each judge the budgets now, and show each budget's current value and
    samples as the catalog writes the view's figure over the budget's window ending now, with the status
    that figure gives."""
    base = _dashboards(world)

    def page() -> dict[int, tuple[str, str, str]]:
        response = signed_in.get(base + "/budgets")
        assert response.status_code == 200, response.text
        found = re.findall(
            r'<tr class="budget-row" data-budget="(\d+)" data-status="(\w+)">(.*?)</tr>', response.text, re.S
        )
        shown = {}
        for budget_id, status, row in found:
            current = re.search(r'<td class="num current">(.*?)</td>', row, re.S)
            samples = re.search(r'<td class="num samples">([^<]*)<', row)
            assert current and samples, row
            text = html.unescape(re.sub(r"<[^>]+>", "", current.group(1))).strip()
            shown[int(budget_id)] = (text, samples.group(1).strip(), status)
        return shown

    def cli() -> dict[int, tuple[str, str, str]]:
        capsys.readouterr()
        override_settings(world["settings"])  # what the environment gives the command
        try:
            assert main(["budgets", "list", "--project", world["slug"]]) == 0
        finally:
            override_settings(None)
        shown = {}
        for line in capsys.readouterr().out.splitlines():
            found = re.match(r"(\d+) .*? <= .+?  now (.+?)  ([A-Z_]+) +([\d,]+) samples ", line)
            assert found, line
            shown[int(found.group(1))] = (found.group(2), found.group(4), found.group(3).lower())
        return shown

    def pdf() -> list[str]:  # any window: the report judges the budgets now
        return _pdf_lines(signed_in.get(base + "/report.pdf", params={"range": "7d"}).content)

    for name, read in (("page", page), ("cli", cli)):
        shown, at = _within_a_minute(read)
        assert set(shown) == {b.id for b in stored_budgets}, name
        for budget in stored_budgets:
            value, samples = _budget_figure(world, budget, at)
            status = judge(value, samples, budget.value, budget.min_samples)
            expected = (_written(budget.metric, value, budget.statistic), _count(samples), status)
            assert shown[budget.id] == expected, (name, budget, at, value, samples)
    lines, at = _within_a_minute(pdf)
    for budget in stored_budgets:
        value, samples = _budget_figure(world, budget, at)
        verdict = judge(value, samples, budget.value, budget.min_samples).replace("_", " ")
        row = (
            f"{budget.description} {budget.statistic} {budget.scope}"
            # The limit with its direction (a lower-is-better metric passes at or under it: "<=").
            f" <= {_written(budget.metric, budget.value)} {_pdf(_written(budget.metric, value, budget.statistic))}"
            f" {_count(samples)} of {_count(budget.min_samples)} {verdict} {at:%Y-%m-%d %H:%M} UTC"
        )
        assert row in lines, (row, [line for line in lines if budget.description in line])


def test_the_cli_query_prints_the_views_value(world, capsys) -> None:
    """`stacklens query` (the real CLI against the world's app served over HTTP) prints the pages view's
    figures of a page for the window: its table writes each aggregate as a raw number in the unit its
    column names, with two decimals (counts whole)."""
    compared = 0
    with serve(world["settings"]) as url:
        for at in world["times"][:2]:
            for name in ("36h", "7d"):  # the page has loads in each (some 90 minutes have none)
                window = ViewFilters(since=at - WINDOWS[name], until=at)
                row = next(r for r in _pages_view(world, window, "", "")["rows"] if r["page"] == "/search")
                capsys.readouterr()
                argv = ["query", "pageloads", "--project", world["slug"], "--url", url]
                argv += ["--api-key", world["api_key"], "--filter", "page|=|/search", "--agg", "count"]
                argv += ["--agg", "p75:lcp_ms", "--agg", "avg:ttfb_ms", "--agg", "p75:load_time_ms"]
                argv += ["--since", window.since.isoformat(), "--until", window.until.isoformat()]
                assert main(argv) == 0
                header, printed = capsys.readouterr().out.splitlines()[:2]
                cells = dict(zip(header.split(), printed.split(), strict=True))
                assert cells["count"] == str(row["views"])
                for column, key in (
                    ("lcp_p75_ms", "lcp_p75"),
                    ("ttfb_avg_ms", "ttfb_avg"),
                    ("load_p75_ms", "load_p75"),
                ):
                    assert cells[column] == ("—" if row[key] is None else f"{row[key]:,.2f}"), (
                        column,
                        cells,
                        row,
                    )
                    compared += row[key] is not None
    assert compared >= 6
