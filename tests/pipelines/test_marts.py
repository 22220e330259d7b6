"""Every table the assets write against an exact computation (polars) over the same seeded raw rows,
through real Dagster runs: the performance facts and their states by grain, and the issue marts."""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from pipelines.assets.common import evaluate_checks
from pipelines.assets.performance import TABLES
from pipelines.definitions import definitions_for
from pipelines.embedded import dagster_instance, materialize_now
from stacklens.control.db import migrate_control_store
from stacklens.performance import page_load_reads
from stacklens.performance.recommendations import recommendations
from stacklens.settings import override_settings
from stacklens.view_filters import ViewFilters
from stacklens.warehouse.client import get_warehouse, warehouse_client
from stacklens.warehouse.migrations import apply_migrations
from tests.conftest import make_settings
from tests.pipelines.pipeline_seed import ORG, PROJECT, seed_errors, seed_performance

DAY0 = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=2)
DAYS = [DAY0, DAY0 + timedelta(days=1)]
# Both seeded days, whole.
WINDOW = ViewFilters(since=DAY0, until=DAY0 + timedelta(days=2))
# The percentiles of the 1 % log histograms (within 0.5 % of the exact ones; 1 % leaves room for
# interpolation).
P_TOL = 0.01


def close(a: float | None, b: float, tol: float = 0.01) -> bool:
    return a is not None and abs(a - b) <= tol * max(abs(b), 1e-9)


def rows(client, sql: str) -> pl.DataFrame:
    result = client.query(sql)
    return pl.DataFrame(
        [dict(zip(result.column_names, r, strict=True)) for r in result.result_rows], infer_schema_length=None
    )


def _materialize(client, instance, settings, defs):
    migrate_control_store(settings)
    # Received minutes ago, so a later tick's 30 s re-read overlap does not reach back to them.
    earlier = datetime.now(UTC) - timedelta(minutes=5)
    perf = seed_performance(client, days=DAYS, views_per_day=150, seed=11, received=earlier)
    # Errors arrive later than the page views, so the watermark ends minutes past the last page view.
    errors = seed_errors(
        client, issues=6, per_issue=40, days=DAYS, seed=12, received=earlier + timedelta(minutes=3)
    )
    outcomes = materialize_now(defs, instance)
    assert outcomes and all(o.success for o in outcomes), [o.error for o in outcomes if not o.success]
    # Every asset check of the run passed, the performance tables' among them.
    checks = {name: ok for o in outcomes for name, ok in o.checks.items()}
    assert {
        "pageload_facts:pageload_facts_valid",
        "pageload_periods:pageload_periods_add_up",
        "pageload_examples:pageload_examples_in_their_period",
        "resource_facts:resource_facts_first_flags",
        "resource_request_periods:resource_request_periods_add_up",
        "endpoint_facts:endpoint_facts_per_load",
        "endpoint_call_periods:endpoint_call_periods_add_up",
    } <= {name for name, ok in checks.items() if ok}
    return perf, errors


@pytest.fixture
def materialized(client, instance, settings, defs):
    """The seeded days materialized in this test's own warehouse (for the tests that write to it)."""
    return _materialize(client, instance, settings, defs)


@pytest.fixture(scope="module")
def _module_world(tmp_path_factory, warehouse_url) -> Iterator[tuple]:
    # Seeding and the first materialization are ~3.5 s on a quiet machine (over 15 s on a loaded one): done
    # once for the tests that only read the result, in a warehouse database and data dir of the module's own.
    settings = make_settings(tmp_path_factory.mktemp("marts"), warehouse_url)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    override_settings(settings)
    instance = dagster_instance(settings)
    try:
        apply_migrations(settings)
        client = get_warehouse(settings)
        perf, errors = _materialize(client, instance, settings, definitions_for(settings))
    finally:
        override_settings(None)
    yield client, perf, errors
    instance.dispose()
    warehouse_client(settings.resolved_warehouse_url, "default").command(
        "DROP DATABASE IF EXISTS {db:Identifier}", parameters={"db": settings.warehouse_database}
    )


@pytest.fixture
def world(settings, _module_world):
    """``(client, performance rows, error rows)``: the module's materialized warehouse, read and never written
    by the tests that take it."""
    return _module_world


def _page_loads(perf) -> pl.DataFrame:
    tx = pl.DataFrame(perf.transactions).filter(pl.col("op") == "pageload")
    return tx.with_columns(
        pl.col("timestamp").dt.date().alias("day"),
        pl.col("measurements").map_elements(lambda m: m.get("ttfb"), return_dtype=pl.Float64).alias("ttfb"),
        pl.col("measurements").map_elements(lambda m: m.get("inp"), return_dtype=pl.Float64).alias("inp"),
    )


def test_pageload_day_states_match_exact_percentiles(world) -> None:
    """Per page and day, the day states give the page loads exactly and load time, TTFB and INP percentiles
    within the histograms' error; the facts hold every page load once."""
    client, perf, _ = world
    tx = _page_loads(perf)
    expected = tx.group_by("page", "day").agg(
        pl.len().alias("views"),
        pl.col("duration_ms").quantile(0.75, interpolation="linear").alias("load_p75"),
        pl.col("duration_ms").quantile(0.95, interpolation="linear").alias("load_p95"),
        pl.col("duration_ms").mean().alias("load_avg"),
        pl.col("ttfb").quantile(0.5, interpolation="linear").alias("ttfb_p50"),
        pl.col("inp").drop_nulls().quantile(0.75, interpolation="linear").alias("inp_p75"),
    )
    got = rows(
        client,
        "SELECT page, toDate(start) AS day, sum(views) AS views, sum(load_sum) / views AS load_avg,"
        " quantilesExactWeightedInterpolatedArray(0.75, 0.95)(load_hist.1, load_hist.2) AS load_q,"
        " quantileExactWeightedInterpolatedArray(0.5)(ttfb_hist.1, ttfb_hist.2) AS ttfb_p50,"
        " quantileExactWeightedInterpolatedArray(0.75)(inp_hist.1, inp_hist.2) AS inp_p75"
        " FROM pageload_periods FINAL WHERE grain = 'day' GROUP BY page, day",
    )
    assert got.height == expected.height == len({(r["page"], r["day"]) for r in expected.to_dicts()})
    for want in expected.to_dicts():
        have = got.filter((pl.col("page") == want["page"]) & (pl.col("day") == want["day"])).to_dicts()[0]
        assert have["views"] == want["views"]
        assert close(have["load_q"][0], want["load_p75"], P_TOL) and close(
            have["load_q"][1], want["load_p95"], P_TOL
        )
        assert close(have["load_avg"], want["load_avg"], 1e-9) and close(
            have["ttfb_p50"], want["ttfb_p50"], P_TOL
        )
        assert close(have["inp_p75"], want["inp_p75"], P_TOL)
    facts = rows(
        client, "SELECT count() AS n, uniqExact(event_id) AS ids FROM pageload_facts FINAL"
    ).to_dicts()[0]
    assert facts == {"n": tx.height, "ids": tx.height}


def test_pageload_states_by_grain(world) -> None:
    """Hours, days and blocks of days hold every page load once at each grain (a block what its days hold);
    each day keeps its 3 fastest page loads and, per 1 % load-time bucket, an example page load of that
    bucket."""
    client, perf, _ = world
    tx = _page_loads(perf)
    per_grain = dict(
        client.query(
            "SELECT toString(grain), sum(views) FROM pageload_periods FINAL GROUP BY grain"
        ).result_rows
    )
    # The minutes, hours and days each hold every page load once; a block of days holds exactly its days'.
    assert per_grain["minute"] == per_grain["hour"] == per_grain["day"] == tx.height
    days = dict(
        client.query(
            "SELECT start, sum(views) FROM pageload_periods FINAL WHERE grain = 'day' GROUP BY start"
        ).result_rows
    )
    blocks = client.query(
        "SELECT toString(grain), start, sum(views) FROM pageload_periods FINAL"
        " WHERE grain IN ('days_2', 'days_4', 'days_8', 'days_16') GROUP BY grain, start"
    ).result_rows
    assert {grain for grain, _, _ in blocks} == {"days_2", "days_4", "days_8", "days_16"}
    for grain, start, views in blocks:
        span = int(grain.removeprefix("days_"))
        assert (start - datetime(1970, 1, 1, tzinfo=start.tzinfo)).days % span == 0, (grain, start)
        assert views == sum(n for day, n in days.items() if start <= day < start + timedelta(days=span))
    ids = {str(e): float(d) for e, d in zip(tx["event_id"], tx["duration_ms"], strict=True)}
    fastest = rows(
        client,
        "SELECT page, toDate(start) AS day, groupArraySortedArray(3)(arrayMap(x -> x.1, fastest)) AS f"
        " FROM pageload_periods FINAL WHERE grain = 'day' GROUP BY page, day",
    )
    for day in tx.group_by("page", "day").agg(pl.col("duration_ms").sort().head(3).alias("f")).to_dicts():
        kept = fastest.filter((pl.col("page") == day["page"]) & (pl.col("day") == day["day"]))
        assert sorted(kept["f"].explode().to_list()) == sorted(float(x) for x in day["f"])
    examples = rows(
        client, "SELECT toString(grain) AS grain, bucket, load_ms, event_id FROM pageload_examples FINAL"
    ).to_dicts()
    assert {e["grain"] for e in examples} == {"hour", "day"}
    for e in examples:
        assert ids[e["event_id"]] == e["load_ms"] and round(math.log(e["load_ms"]) * 100) == e["bucket"]


def test_api_endpoints_fold_ids_and_count_outcomes(world) -> None:
    client, perf, _ = world
    spans = pl.DataFrame(perf.spans).filter(pl.col("op") == "http.client")
    got = rows(
        client,
        "SELECT path, toDate(start) AS day, sum(calls) AS calls, sum(s4xx) AS s4xx, sum(s5xx) AS s5xx,"
        " quantileExactWeightedInterpolatedArray(0.95)(arrayMap(k -> if(k = -100000, 0., exp(k / 100)),"
        " dur_hist.1), dur_hist.2) AS p95"
        " FROM endpoint_call_periods FINAL WHERE grain = 'day' AND source = 'client' GROUP BY path, day",
    )
    assert set(got["path"].to_list()) <= {"/api/items/{id}", "/api/cart", "/api/users/{uuid}/orders"}
    assert got["calls"].sum() == spans.height
    assert got["s5xx"].sum() == spans.filter(pl.col("status_code") >= 500).height
    assert got["s4xx"].sum() == spans.filter(pl.col("status_code").is_between(400, 499)).height
    cart = spans.filter(pl.col("description").str.ends_with("/api/cart")).with_columns(
        pl.col("timestamp").dt.date().alias("day")
    )
    for want in (
        cart.group_by("day")
        .agg(pl.col("duration_ms").quantile(0.95, interpolation="linear").alias("p95"))
        .to_dicts()
    ):
        have = got.filter((pl.col("path") == "/api/cart") & (pl.col("day") == want["day"])).to_dicts()[0]
        assert close(have["p95"], want["p95"], P_TOL)
    server = rows(
        client,
        "SELECT sum(calls) AS calls FROM endpoint_call_periods FINAL WHERE grain = 'day' AND source = 'server'",
    )
    assert server["calls"][0] == sum(1 for t in perf.transactions if t["op"] == "http.server")


def test_resources_and_recommendations(world) -> None:
    client, perf, _ = world
    spans = pl.DataFrame(perf.spans).filter(pl.col("op") == "resource.script")
    got = rows(
        client,
        "SELECT sum(requests) AS n, sum(total_bytes) AS b FROM resource_request_periods FINAL"
        " WHERE grain = 'day' AND resource_type = 'JavaScript'",
    )
    assert got["n"][0] == spans.height and got["b"][0] == spans["response_content_length"].sum()
    css = rows(
        client,
        "SELECT resource, sum(blocking) AS blocking, sum(requests) AS requests FROM resource_request_periods FINAL"
        " WHERE grain = 'day' AND resource_type = 'CSS' GROUP BY resource",
    )
    assert css["resource"].to_list() == ["https://cdn.shop.test/site.css"]
    assert css["blocking"].to_list() == css["requests"].to_list()
    # The recommendations view reads these states: one recommendation per subject, however many pages load it
    # (the seed's hero image: 3 pages) and however many rules apply to it.
    recs = recommendations(client, ORG, PROJECT, WINDOW, include_old=True)
    subjects = [r["subject"] for r in recs]
    assert len(subjects) == len(set(subjects))
    (hero,) = [r for r in recs if r["subject"] == "https://cdn.shop.test/hero.png"]
    assert len(hero["pages"]) == 3 and "oversized_image" in hero["rules"]
    # The seed has 90–400 KB PNG heroes, blocking CSS up to 700 ms and API calls failing 1 in 3.
    rules = {rule for r in recs for rule in r["rules"]}
    assert {"failing_endpoint", "oversized_image", "render_blocking_css"} <= rules, rules


def test_issue_marts_and_the_views_over_weeks_and_releases(world) -> None:
    client, perf, errors = world
    ev = pl.DataFrame(errors.events)
    got = rows(client, "SELECT * FROM issues FINAL ORDER BY issue_id")
    want = (
        ev.group_by("issue_id")
        .agg(
            pl.len().alias("events"),
            pl.col("user_key").filter(pl.col("user_key") != "").n_unique().alias("users"),
        )
        .sort("issue_id")
    )
    assert got["issue_id"].to_list() == want["issue_id"].to_list()
    assert got["events"].to_list() == want["events"].to_list()
    assert got["users_affected"].to_list() == want["users"].to_list()
    assert set(got["culprit"].to_list()) == {f"app.views:handler_{k}" for k in range(6)}
    # The issue list's daily totals, kept at insert: every event counted once.
    daily = rows(
        client, "SELECT issue_id, day, sum(events) AS events FROM issue_totals_daily GROUP BY issue_id, day"
    )
    assert daily["events"].sum() == ev.height
    related = rows(client, "SELECT * FROM related_issues FINAL")
    assert set(related["reason"].to_list()) >= {"same_user", "similar_stack", "same_release"}
    assert all(0 < s <= 1 for s in related["strength"].to_list())
    # The trends and releases views read the page-load states (no mart of their own): every page load counted.
    views = sum(1 for t in perf.transactions if t["op"] == "pageload")
    weeks, _ = page_load_reads.trends(client, ORG, PROJECT, WINDOW)
    assert sum(w["views"] for w in weeks) == views
    releases = page_load_reads.releases(client, ORG, PROJECT, WINDOW)
    assert {r["release"] for r in releases} == {"1.0.0", "1.1.0"}
    assert sum(r["views"] for r in releases) == views
    assert sum(r["error_events"] for r in releases) == ev.filter(pl.col("release") != "").height
    assert releases[1]["previous_release"] == releases[0]["release"]


def test_tick_after_new_data_rebuilds_only_its_days(client, instance, materialized, defs) -> None:
    # Nothing new: every incremental plan skips; only the budgets (control-store driven) run again.
    # Budgets (and the alert rules that read them) are evaluated on every catch-up, linked tickets read, and
    # the monitors' deadlines and uptime checks looked at.
    assert [o.job for o in materialize_now(defs, instance)] == [
        "budgets_job",
        "alerts_job",
        "integrations_job",
        "monitors_job",
    ]
    late_day = DAY0 - timedelta(days=5)
    seed_performance(client, days=[late_day], views_per_day=5, seed=99)
    outcomes = materialize_now(defs, instance, select=["pageload_periods"])
    assert [o.job for o in outcomes] == ["performance_job"] and outcomes[0].success
    run = instance.get_run_by_id(outcomes[0].run_id)
    assert run.tags["stacklens/days"] == late_day.date().isoformat()
    # The late day's page loads, and only rows of the late day's hours and the blocks holding them, were
    # written.
    assert 0 < outcomes[0].assets["pageload_facts"] == 5
    views = client.query(
        "SELECT sum(views) FROM pageload_periods FINAL WHERE grain = 'day' AND start = {d:DateTime('UTC')}"
        " AND project_id = {p:UInt64} AND org_id = {o:UInt64}",
        parameters={"d": late_day, "p": PROJECT, "o": ORG},
    ).result_rows[0][0]
    assert views == 5


def test_the_state_checks_find_broken_rows(world) -> None:
    """The checks of the page-load and API-call states judge the rows of their run: a histogram that misses a
    page load, a period off its grain, more failed calls than calls.

    Beside the module's materialized rows (its own materialization cost ~10 s on a loaded host): the broken
    rows, a version of their own, are deleted again before the test ends, and checked gone."""
    client = world[0]
    version = datetime.now(UTC)
    try:
        _judge_broken_rows(client, version)
    finally:
        for table in ("pageload_periods", "endpoint_call_periods"):
            client.command(
                "ALTER TABLE {t:Identifier} DELETE WHERE materialized_at = {v:DateTime64(6, 'UTC')}",
                parameters={"t": table, "v": version},
                settings={"mutations_sync": 2},
            )
            left = client.query(
                "SELECT count() FROM {t:Identifier} WHERE materialized_at = {v:DateTime64(6, 'UTC')}",
                parameters={"t": table, "v": version},
            ).result_rows[0][0]
            assert left == 0, (table, left)


def _judge_broken_rows(client, version: datetime) -> None:
    hour = DAY0 + timedelta(hours=5)
    base = {"org_id": ORG, "project_id": PROJECT, "materialized_at": version}
    pageloads = [
        {**base, "grain": "hour", "start": hour, "page": "/broken", "views": 2, "load_hist": ([100.0], [1])},
        {
            **base,
            "grain": "hour",
            "start": hour + timedelta(minutes=30),
            "page": "/broken",
            "views": 0,
            "load_hist": ([], []),
        },
    ]
    calls = [
        {
            **base,
            "grain": "day",
            "start": DAY0,
            "path": "/broken",
            "calls": 1,
            "s5xx": 2,
            "dur_hist": ([1], [1]),
        }
    ]
    for table, rows_ in (("pageload_periods", pageloads), ("endpoint_call_periods", calls)):
        columns = list(rows_[0])
        client.insert(table, [[r.get(c) for c in columns] for r in rows_], column_names=columns)
    span = {"start": hour, "end": hour + timedelta(hours=1)}
    (periods,) = evaluate_checks(client, TABLES["pageload_periods"].checks, version, span, "pageload_periods")
    assert not periods.passed and periods.metadata["bad_rows"].value == 2
    (endpoints,) = evaluate_checks(
        client, TABLES["endpoint_call_periods"].checks, version, span, "endpoint_call_periods"
    )
    assert not endpoints.passed and endpoints.metadata["bad_rows"].value == 1
    # The run's own rows (another version) are not judged again.
    (again,) = evaluate_checks(client, TABLES["pageload_periods"].checks, datetime.now(UTC), span)
    assert again.passed
