"""Dashboard widgets answered against the real embedded engine: the filter bar's window, project,
environment and release replace the widget's own; each widget's figures are Explore's for the same question
(a number's value and its previous value are each the answer of its own window, its change computed from
the two); a saved query and a view are answered like an inline query; another organization's rows never
count; a deleted saved query is a message on its widget, not an error page."""

from __future__ import annotations

from datetime import timedelta

import pytest

from stacklens.control.db import session_scope
from stacklens.explore.compare import change_pct
from stacklens.explore.dashboards import create_dashboard
from stacklens.explore.query_parser import parse_query
from stacklens.explore.run import run_explore
from stacklens.explore.saved import create_saved, delete_saved
from stacklens.explore.widgets import answer_widgets, under_filters
from stacklens.settings import Settings
from stacklens.view_filters import ViewFilters
from tests.stacklens.performance.perf_seed import NOW, migrated, page_loads_in, seed

AT = NOW + timedelta(minutes=30)
LCP = {"dataset": "pageloads", "aggregates": [{"fn": "p75", "metric": "lcp_ms"}, {"fn": "count"}]}


def _window(days: int) -> tuple[str, str]:
    since = AT.replace(second=0, microsecond=0) - timedelta(days=days)
    return since.isoformat().replace("+00:00", "Z"), AT.replace(second=0).isoformat().replace("+00:00", "Z")


def test_the_filter_bar_replaces_the_widgets_own_window_and_filters() -> None:
    body = {
        **LCP,
        "range": "90d",
        "project": "other",
        "filters": [
            {"field": "environment", "op": "=", "value": "staging"},
            {"field": "browser", "op": "=", "value": "Chrome"},
        ],
        "interval": "5m",
    }
    out = under_filters(
        body, "line", {"range": "7d", "environment": "production", "project": "web", "release": ""}, AT
    )
    since, until = _window(7)
    assert (out["since"], out["until"], out["project"]) == (since, until, "web") and "range" not in out
    assert out["filters"] == [
        {"field": "browser", "op": "=", "value": "Chrome"},
        {"field": "environment", "op": "=", "value": "production"},
    ]
    assert out["interval"] == "5m"  # 7 days of 5 minutes is 2,016 buckets: the widget's own is kept
    assert under_filters(body, "line", {"range": "90d"}, AT)["interval"] == "1w"  # 25,920 would be too many
    number = under_filters({**LCP, "group_by": ["release"]}, "number", {"range": "14d"}, AT)
    assert (number["group_by"], number["aggregates"], number["interval"], number["limit"]) == (
        [],
        LCP["aggregates"][:1],
        "",
        1,
    )
    bars = under_filters({**LCP, "group_by": ["release"]}, "bar", {"range": "14d"}, AT)
    assert bars["interval"] == "" and bars["limit"] == 20  # bars per group, not over time
    assert under_filters(LCP, "bar", {"range": "14d"}, AT)["interval"] == "1d"


@pytest.fixture
def seeded(settings: Settings, make_org):
    acme, other = make_org("Acme"), make_org("Globex")
    client = migrated(settings)
    data = seed(client, int(acme["org_id"]), int(acme["project_id"]), loads=120, facts=False)
    seed(client, int(other["org_id"]), int(other["project_id"]), loads=40, seed=3)
    return client, acme, data


def test_each_widget_answers_what_explore_answers_for_its_window(settings: Settings, seeded) -> None:
    client, acme, data = seeded
    org = int(acme["org_id"])
    ids = [int(acme["project_id"])]
    with session_scope(settings) as session:
        kept = create_saved(session, org, {"name": "by release", "query": {**LCP, "group_by": ["release"]}})
        gone = create_saved(session, org, {"name": "gone", "query": LCP})
        board = create_dashboard(
            session,
            org,
            {
                "name": "Vitals",
                "filters": {"range": "7d", "environment": "production"},
                "widgets": [
                    {"kind": "number", "query": LCP},
                    {"kind": "line", "query": {**LCP, "interval": "1d", "group_by": ["release"]}},
                    {"kind": "table", "saved_query_id": kept.id},
                    {"kind": "line", "view": "performance.page_loads"},
                    {"kind": "table", "saved_query_id": gone.id},
                ],
            },
        )
        delete_saved(session, org, gone.id)
        answers = answer_widgets(client, session, org, board.widgets, board.filters, AT)
    since, until = _window(7)
    window = ViewFilters.parse(since=since, until=until, environment="production")
    earlier = ViewFilters.parse(
        since=(window.since - timedelta(days=7)).isoformat(),
        until=window.since.isoformat(),
        environment="production",
    )
    number, line, table, view, missing = answers
    # The number: Explore's p75 over the window, and over the 7 days before, each its own window's answer.
    production = [{"field": "environment", "op": "=", "value": "production"}]
    alone = run_explore(
        client, parse_query({**LCP, "since": since, "until": until, "filters": production}), org, ids
    )
    before = run_explore(
        client,
        parse_query(
            {
                **LCP,
                "since": earlier.since.isoformat(),
                "until": earlier.until.isoformat(),
                "filters": production,
            }
        ),
        org,
        ids,
    )
    assert number.error == "" and number.number == alone.rows[0]["lcp_p75_ms"] is not None
    assert number.previous_number == before.rows[0]["lcp_p75_ms"] is not None
    assert number.change_pct == change_pct(alone.rows[0]["lcp_p75_ms"], before.rows[0]["lcp_p75_ms"])
    assert number.change_pct == pytest.approx(
        (number.number - number.previous_number) / number.previous_number * 100, abs=0.01
    )
    # The line: one series per release, its counts the production page loads of the window (not another
    # org's).
    assert line.error == "" and line.query is not None and line.query.interval == "1d"
    assert sum(sum(s["values"]["count"]) for s in line.result.series) == len(page_loads_in(data, window))
    # The saved query and the view are answered under the same filter bar.
    assert sum(r["count"] for r in table.result.rows) == len(page_loads_in(data, window))
    assert {r["release"] for r in table.result.rows} == {t["release"] for t in page_loads_in(data, window)}
    assert sum(sum(s["values"]["count"]) for s in view.result.series) == len(page_loads_in(data, window))
    assert missing.result is None and missing.error == f"no saved query {gone.id} in this organization"


def test_a_widget_compares_the_filter_bars_release_with_the_one_before_it(settings: Settings, seeded) -> None:
    client, acme, _ = seeded
    org = int(acme["org_id"])
    ids = [int(acme["project_id"])]
    compared = {
        **LCP,
        "filters": [{"field": "release", "op": "=", "value": "shop@1.0.0"}],
        "compare": {"previous_release": True},
    }
    with session_scope(settings) as session:
        board = create_dashboard(
            session,
            org,
            {
                "name": "Release against release",
                "filters": {"range": "14d", "release": "shop@1.1.0"},
                "widgets": [
                    {"kind": "number", "query": compared},
                    {"kind": "table", "query": {**compared, "group_by": ["browser"]}},
                ],
            },
        )
        number, table = answer_widgets(client, session, org, board.widgets, board.filters, AT)
    since, until = _window(14)

    def own(version: str, group_by: list[str]) -> list[dict]:
        body = {
            **LCP,
            "since": since,
            "until": until,
            "group_by": group_by,
            "filters": [{"field": "release", "op": "=", "value": version}],
        }
        return run_explore(client, parse_query(body), org, ids).rows

    # The bar's release (1.1.0) against its predecessor by first seen (1.0.0), each its own answer.
    assert number.error == "" and number.result.compared_with == "shop@1.0.0"
    (now,), (before,) = own("shop@1.1.0", []), own("shop@1.0.0", [])
    assert number.number == now["lcp_p75_ms"] is not None
    assert number.previous_number == before["lcp_p75_ms"] is not None
    assert number.change_pct == change_pct(now["lcp_p75_ms"], before["lcp_p75_ms"])
    earlier = {r["browser"]: r for r in own("shop@1.0.0", ["browser"])}
    assert table.error == "" and table.result.rows
    for row in table.result.rows:
        assert row["count_previous"] == earlier.get(row["browser"], {}).get("count")
        assert row["count_change_pct"] == change_pct(row["count"], row["count_previous"])
