"""INP is one number: for the same window, project and page, Explore's INP p75 and count — read from the
page-load states (migration 0320: the page load's own INP, summed per period) as from the raw rows — are the
dashboard widgets' (the demo's "INP p75" number and its "Pages" table), the pages view's and the page's vitals
(its days), and within the catalog's stated error of the exact p75 of the stored measurements (polars).

Explore's INP is the page load's own measurement. The facts' INP (what the views, budgets and alert rules
read) also takes a page view's INP from its standalone interaction span when the page load carries none
(@sentry/browser 8+): a page load with such a span counts in the views, not in Explore — whichever path
Explore reads, states or raw rows."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import polars as pl
import pytest

from stacklens.control.db import session_scope
from stacklens.explore import pageload_states
from stacklens.explore.query import Query
from stacklens.explore.query_parser import parse_query
from stacklens.explore.run import run_explore
from stacklens.explore.sql import Limits, table_statement
from stacklens.explore.widgets import answer_widgets
from stacklens.json_values import plain
from stacklens.metrics.statistics import QUANTILE_RELATIVE_ERROR
from stacklens.performance import page_load_reads, view_data
from stacklens.settings import Settings
from stacklens.view_filters import ViewFilters
from tests.stacklens.explore.inp_spans import interaction_spans
from tests.stacklens.performance.perf_seed import NOW, PAGES, build_facts, migrated, seed

AT = NOW + timedelta(minutes=30)
# The demo dashboard's INP widgets (demo/dashboards.py): a number and the pages table.
WIDGETS = [
    {"title": "INP p75", "kind": "number", "view": "performance.inp"},
    {"title": "Pages", "kind": "table", "view": "performance.pages"},
]


def _iso(value: Any) -> str:
    return value.isoformat().replace("+00:00", "Z")


def _close(value: float | None, exact: float | None) -> bool:
    if value is None or exact is None:
        return value is exact
    return abs(value - exact) <= QUANTILE_RELATIVE_ERROR * abs(exact)


@pytest.fixture
def seeded(settings: Settings, make_org):
    """Page loads of one project over 14 days, a quarter with their own INP (Chrome, every other one), folded
    into the states by the pipelines' queries (the watermark at now, so Explore reads the states)."""
    acme = make_org("Acme")
    client = migrated(settings)
    data = seed(client, int(acme["org_id"]), int(acme["project_id"]), loads=400)
    return client, acme, data


def _own_inp(data: Any, since: Any, until: Any, page: str = "") -> pl.Series:
    """The stored page loads' own INP measurements in [since, until) (of ``page``, else all)."""
    values = [
        r["measurements"]["inp"]
        for r in data.transactions
        if r["op"] == "pageload"
        and "inp" in r["measurements"]
        and since <= r["timestamp"] < until
        and (not page or r["page"] == page)
    ]
    return pl.Series(values, dtype=pl.Float64)


def _from_states_and_raw(client: Any, query: Query, org: int, ids: list[int]) -> list[dict[str, Any]]:
    """The question's rows read from the states (as run_explore reads them: to the watermark, raw rows after)
    and from the raw rows alone, asserted equal; the first."""
    states_until = pageload_states.read_states_until(client)
    assert states_until is not None and states_until > query.window.since
    answers = []
    for cut in (states_until, None):
        statement = table_statement(query, org, ids, Limits(), 1000, states_until=cut)
        assert ("pageload_periods" in statement.sql) is (cut is not None)
        result = client.query(statement.sql, parameters=statement.parameters)
        answers.append([plain(dict(zip(result.column_names, r, strict=True))) for r in result.result_rows])
    assert answers[0] == answers[1] and answers[0]
    return answers[0]


def test_inp_is_one_number_in_explore_its_widgets_the_pages_view_and_the_page_vitals(
    settings: Settings, seeded
) -> None:
    client, acme, data = seeded
    org, project = int(acme["org_id"]), int(acme["project_id"])
    with session_scope(settings) as session:
        number, pages = answer_widgets(client, session, org, WIDGETS, {"range": "7d"}, now=AT)
    assert not number.error and not pages.error
    window = number.query.window
    assert (window.since, window.until) == (AT - timedelta(days=7), AT)
    filters = ViewFilters(since=window.since, until=window.until)
    view = plain(view_data.build("pages", client, org, project, filters))
    total, rows = view["total"], {r["page"]: r for r in view["rows"]}

    # The number: Explore's answer (states and raw rows alike), the pages view's total, polars.
    inp = [{"fn": "p75", "metric": "inp_ms"}, {"fn": "count", "metric": "inp_ms"}]
    body = {
        "dataset": "pageloads",
        "since": _iso(window.since),
        "until": _iso(window.until),
        "aggregates": inp,
    }
    whole = parse_query(body)
    assert pageload_states.qualifies(whole)
    [row] = _from_states_and_raw(client, whole, org, [project])
    exact = _own_inp(data, window.since, window.until)
    assert row["a1"] == total["inp_n"] == exact.len() > 20
    assert number.number == row["a0"] == total["inp_p75"]
    assert _close(number.number, exact.quantile(0.75, "linear"))
    assert run_explore(client, whole, org, [project]).rows[0]["inp_p75_ms"] == number.number

    # The pages table: per page the widget's INP p75, Explore's by page, the pages view's row, polars.
    by_page = parse_query({**body, "group_by": ["page"]})
    explored = {r["g0"]: (r["a0"], r["a1"]) for r in _from_states_and_raw(client, by_page, org, [project])}
    column = next(a.column for a in pages.query.aggregates if a.metric == "inp_ms")
    shown = {r["page"]: r[column] for r in pages.result.rows}
    assert set(shown) == set(explored) == set(rows) == set(PAGES)
    for page, (p75, n) in explored.items():
        own = _own_inp(data, window.since, window.until, page)
        assert shown[page] == p75 == rows[page]["inp_p75"], page
        assert n == rows[page]["inp_n"] == own.len(), page
        assert _close(p75, own.quantile(0.75, "linear") if own.len() else None), page

    # The page's vitals: each day's INP p75 and count, as Explore's daily series of the page answers them.
    page = PAGES[1]
    days, _, _, _ = page_load_reads.page_detail(client, org, project, filters, page)
    daily = parse_query({**body, "filters": [{"field": "page", "op": "=", "value": page}], "interval": "1d"})
    [line] = run_explore(client, daily, org, [project]).series
    series = {
        t[:10]: (v, n)
        for t, v, n in zip(line["t"], line["values"]["inp_p75_ms"], line["counts"]["inp_p75_ms"], strict=True)
    }
    vitals = {d["day"].isoformat(): (d["inp_p75"], d["inp_n"]) for d in days}
    assert series == vitals and sum(n > 0 for _, n in vitals.values()) >= 5


def test_explore_reads_the_page_loads_own_inp_not_its_interaction_spans(settings: Settings, seeded) -> None:
    """Page loads without INP of their own get it from their interaction spans in the facts (the views count
    them); Explore's INP stays the page loads' own measurement, from the states as from the raw rows."""
    client, acme, data = seeded
    org, project = int(acme["org_id"]), int(acme["project_id"])
    added = interaction_spans(client, data.transactions, random.Random(9))
    build_facts(client, NOW - timedelta(days=15), NOW + timedelta(hours=1))
    filters = ViewFilters(since=NOW - timedelta(days=14), until=NOW)
    total = plain(view_data.build("pages", client, org, project, filters))["total"]
    query = parse_query(
        {
            "dataset": "pageloads",
            "since": _iso(filters.since),
            "until": _iso(filters.until),
            "aggregates": [{"fn": "p75", "metric": "inp_ms"}, {"fn": "count", "metric": "inp_ms"}],
        }
    )
    [row] = _from_states_and_raw(client, query, org, [project])
    own = _own_inp(data, filters.since, filters.until)
    assert row["a1"] == own.len() and row["a0"] is not None
    assert _close(row["a0"], own.quantile(0.75, "linear"))
    assert total["inp_n"] == own.len() + added and added > 50  # the views count the spans' INP too
