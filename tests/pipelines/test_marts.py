"""Every mart against an exact computation (polars) over the same seeded raw rows, through real Dagster runs."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from pipelines.embedded import materialize_now
from stacklens.control.db import migrate_control_store
from tests.pipelines.pipeline_seed import ORG, PROJECT, seed_errors, seed_performance

DAY0 = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=2)
DAYS = [DAY0, DAY0 + timedelta(days=1)]


def close(a: float | None, b: float, tol: float = 0.01) -> bool:
    return a is not None and abs(a - b) <= tol * max(abs(b), 1e-9)


def rows(client, sql: str) -> pl.DataFrame:
    result = client.query(sql)
    return pl.DataFrame(
        [dict(zip(result.column_names, r, strict=True)) for r in result.result_rows], infer_schema_length=None
    )


@pytest.fixture
def materialized(client, instance, settings, defs):
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
    return perf, errors


def test_page_metrics_match_exact_percentiles(client, materialized) -> None:
    perf, _ = materialized
    tx = pl.DataFrame(perf.transactions).filter(pl.col("op") == "pageload")
    tx = tx.with_columns(
        pl.col("timestamp").dt.date().alias("day"),
        pl.col("measurements").map_elements(lambda m: m.get("ttfb"), return_dtype=pl.Float64).alias("ttfb"),
        pl.col("measurements").map_elements(lambda m: m.get("inp"), return_dtype=pl.Float64).alias("inp"),
    )
    expected = tx.group_by("page", "day").agg(
        pl.len().alias("views"),
        pl.col("duration_ms").quantile(0.75, interpolation="linear").alias("load_p75"),
        pl.col("duration_ms").quantile(0.95, interpolation="linear").alias("load_p95"),
        pl.col("duration_ms").mean().alias("load_avg"),
        pl.col("ttfb").quantile(0.5, interpolation="linear").alias("ttfb_p50"),
        pl.col("inp").drop_nulls().quantile(0.75, interpolation="linear").alias("inp_p75"),
    )
    got = rows(client, "SELECT * FROM page_metrics FINAL")
    assert got.height == expected.height == len({(r["page"], r["day"]) for r in expected.to_dicts()})
    for want in expected.to_dicts():
        have = got.filter((pl.col("page") == want["page"]) & (pl.col("day") == want["day"])).to_dicts()[0]
        assert have["views"] == want["views"]
        assert close(have["load_p75_ms"], want["load_p75"]) and close(have["load_p95_ms"], want["load_p95"])
        assert close(have["load_avg_ms"], want["load_avg"]) and close(have["ttfb_p50_ms"], want["ttfb_p50"])
        assert close(have["inp_p75_ms"], want["inp_p75"])
        assert have["dom_ready_p50_ms"] is not None and have["api_calls"] >= 0


def test_page_metrics_writes_pageload_hour_day_and_block_states(client, materialized) -> None:
    """The asset's per-hour and per-day page-load states hold every page load once, with p75s within 1 %."""
    perf, _ = materialized
    tx = pl.DataFrame(perf.transactions).filter(pl.col("op") == "pageload")
    tx = tx.with_columns(pl.col("timestamp").dt.date().alias("day"))
    expected = tx.group_by("page", "day").agg(
        pl.len().alias("views"), pl.col("duration_ms").quantile(0.75, interpolation="linear").alias("p75")
    )
    got = rows(
        client,
        "SELECT page, toDate(start) AS day, sum(views) AS views,"
        " quantileExactWeightedInterpolatedArray(0.75)(load_hist.1, load_hist.2) AS p75"
        " FROM pageload_periods FINAL WHERE hours = 24 GROUP BY page, day",
    )
    assert got.height == expected.height
    for want in expected.to_dicts():
        have = got.filter((pl.col("page") == want["page"]) & (pl.col("day") == want["day"])).to_dicts()[0]
        assert have["views"] == want["views"] and close(have["p75"], want["p75"])
    hours = rows(
        client, "SELECT sum(views) AS views, count() AS n FROM pageload_periods FINAL WHERE hours = 1"
    ).to_dicts()[0]
    assert hours["views"] == tx.height and hours["n"] > expected.height
    # each day's 3 fastest page loads and, per 1 % load-time bucket, an example page load of that bucket
    ids = {str(e): float(d) for e, d in zip(tx["event_id"], tx["duration_ms"], strict=True)}
    fastest = rows(
        client,
        "SELECT page, toDate(start) AS day, groupArraySortedArray(3)(arrayMap(x -> x.1, fastest)) AS f"
        " FROM pageload_periods FINAL WHERE hours = 24 GROUP BY page, day",
    )
    for day in tx.group_by("page", "day").agg(pl.col("duration_ms").sort().head(3).alias("f")).to_dicts():
        kept = fastest.filter((pl.col("page") == day["page"]) & (pl.col("day") == day["day"]))
        assert sorted(kept["f"].explode().to_list()) == sorted(float(x) for x in day["f"])
    examples = rows(client, "SELECT grain, bucket, load_ms, event_id FROM pageload_examples FINAL").to_dicts()
    assert {e["grain"] for e in examples} == {"h", "d"}
    for e in examples:
        assert ids[e["event_id"]] == e["load_ms"] and round(math.log(e["load_ms"]) * 100) == e["bucket"]


def test_api_endpoints_fold_ids_and_count_outcomes(client, materialized) -> None:
    perf, _ = materialized
    spans = pl.DataFrame(perf.spans).filter(pl.col("op") == "http.client")
    got = rows(client, "SELECT * FROM api_endpoint_metrics FINAL WHERE source = 'client'")
    assert set(got["path"].to_list()) <= {"/api/items/{id}", "/api/cart", "/api/users/{uuid}/orders"}
    assert got["calls"].sum() == spans.height
    assert got["server_errors"].sum() == spans.filter(pl.col("status_code") >= 500).height
    assert got["client_errors"].sum() == spans.filter(pl.col("status_code").is_between(400, 499)).height
    cart = spans.filter(pl.col("description").str.ends_with("/api/cart")).with_columns(
        pl.col("timestamp").dt.date().alias("day")
    )
    for want in (
        cart.group_by("day")
        .agg(pl.col("duration_ms").quantile(0.95, interpolation="linear").alias("p95"))
        .to_dicts()
    ):
        have = got.filter((pl.col("path") == "/api/cart") & (pl.col("day") == want["day"])).to_dicts()[0]
        assert close(have["p95_ms"], want["p95"])
    server = rows(
        client, "SELECT sum(calls) AS calls FROM api_endpoint_metrics FINAL WHERE source = 'server'"
    )
    assert server["calls"][0] == sum(1 for t in perf.transactions if t["op"] == "http.server")


def test_resources_and_recommendations(client, materialized) -> None:
    perf, _ = materialized
    spans = pl.DataFrame(perf.spans).filter(pl.col("op") == "resource.script")
    got = rows(
        client,
        "SELECT sum(requests) AS n, sum(total_bytes) AS b FROM resource_breakdown FINAL WHERE resource_type = 'JavaScript'",
    )
    assert got["n"][0] == spans.height and got["b"][0] == spans["response_content_length"].sum()
    css = rows(client, "SELECT * FROM resource_details FINAL WHERE resource_type = 'CSS'")
    assert css["resource"].to_list()[0] == "https://cdn.shop.test/site.css" and all(
        css["render_blocking"] == 1
    )
    assert set(css["impact"].to_list()) <= {"High", "Medium", "Low"}
    recs = rows(client, "SELECT rule, page, subject, evidence FROM recommendations FINAL")
    rules = set(recs["rule"].to_list())
    # One recommendation per resource and rule, however many pages load it (the seed's hero image: 3 pages).
    subjects = [(r, s) for r, s in zip(recs["rule"].to_list(), recs["subject"].to_list(), strict=True) if s]
    assert len(subjects) == len(set(subjects))
    hero = recs.filter(
        (pl.col("rule") == "uncompressed_image") & (pl.col("subject") == "https://cdn.shop.test/hero.png")
    )
    assert hero.height == 1 and hero["evidence"][0]["pages"] == 3
    # The seed has 90–400 KB PNG heroes, blocking CSS up to 700 ms and API calls failing 1 in 3.
    assert {"failing_api", "uncompressed_image", "render_blocking_css"} <= rules


def test_issue_marts_and_trends(client, materialized) -> None:
    _, errors = materialized
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
    daily = rows(client, "SELECT issue_id, day, events FROM issue_daily_counts FINAL")
    assert daily["events"].sum() == ev.height
    related = rows(client, "SELECT * FROM related_issues FINAL")
    assert set(related["reason"].to_list()) >= {"same_user", "similar_stack", "same_release"}
    assert all(0 < s <= 1 for s in related["strength"].to_list())
    trends = rows(client, "SELECT * FROM weekly_trends FINAL")
    assert trends["views"].sum() == sum(1 for t in materialized[0].transactions if t["op"] == "pageload")
    impact = rows(client, "SELECT * FROM release_impact FINAL ORDER BY first_seen")
    assert set(impact["release"].to_list()) == {"1.0.0", "1.1.0"}
    assert impact["error_events"].sum() == ev.filter(pl.col("release") != "").height
    assert impact["previous_release"].to_list()[1] == impact["release"].to_list()[0]


def test_tick_after_new_data_rebuilds_only_its_days(client, instance, materialized, defs) -> None:
    # Nothing new: every incremental plan skips; only the budgets (control-store driven) run again.
    # Budgets (and the alert rules that read them) are evaluated on every catch-up, and linked tickets read.
    assert [o.job for o in materialize_now(defs, instance)] == [
        "budgets_job",
        "alerts_job",
        "integrations_job",
    ]
    late_day = DAY0 - timedelta(days=5)
    seed_performance(client, days=[late_day], views_per_day=5, seed=99)
    outcomes = materialize_now(defs, instance, select=["page_metrics"])
    assert [o.job for o in outcomes] == ["performance_job"] and outcomes[0].success
    run = instance.get_run_by_id(outcomes[0].run_id)
    assert run.tags["stacklens/days"] == late_day.date().isoformat()
    views = client.query(
        "SELECT sum(views) FROM page_metrics FINAL WHERE day = {d:Date} AND project_id = {p:UInt64} AND org_id = {o:UInt64}",
        parameters={"d": late_day.date(), "p": PROJECT, "o": ORG},
    ).result_rows[0][0]
    assert views == 5


def _release_load(transactions: list[dict]) -> dict[str, tuple[int, float]]:
    """Per release: page loads and the exact p75 of their load time (linear interpolation)."""
    tx = pl.DataFrame(transactions).filter(pl.col("op") == "pageload")
    per = tx.group_by("release").agg(
        pl.len().alias("views"), pl.col("duration_ms").quantile(0.75, interpolation="linear").alias("p75")
    )
    return {r["release"]: (r["views"], r["p75"]) for r in per.to_dicts()}


def test_release_impact_merges_again_only_the_releases_with_new_data(
    client, instance, materialized, defs
) -> None:
    perf, _ = materialized
    sql = "SELECT * FROM release_impact FINAL ORDER BY first_seen"
    before = {r["release"]: r for r in rows(client, sql).to_dicts()}
    exact = _release_load(perf.transactions)
    for release, (views, p75) in exact.items():
        assert before[release]["views"] == views and close(before[release]["load_p75_ms"], p75)

    # New page loads of 1.1.0 only, one of them in a closed day: 1.1.0 is merged again from its states, 1.0.0
    # keeps its row's figures, and the change against the previous release follows the new 1.1.0 figures.
    late = seed_performance(
        client, days=[DAY0 - timedelta(days=3)], views_per_day=60, seed=41, releases=("1.1.0",)
    )
    outcomes = materialize_now(defs, instance)
    assert all(o.success for o in outcomes) and "trends_job" in {o.job for o in outcomes}
    after = {r["release"]: r for r in rows(client, sql).to_dicts()}
    exact = _release_load(perf.transactions + late.transactions)
    assert after["1.1.0"]["views"] == exact["1.1.0"][0] == before["1.1.0"]["views"] + 60
    assert close(after["1.1.0"]["load_p75_ms"], exact["1.1.0"][1])
    kept = ("views", "load_p75_ms", "js_bytes_per_view", "api_p95_ms")
    assert {k: after["1.0.0"][k] for k in kept} == {k: before["1.0.0"][k] for k in kept}
    first, second = rows(client, sql)["release"].to_list()
    assert after[second]["previous_release"] == first
    load_change = (
        100 * (after[second]["load_p75_ms"] - after[first]["load_p75_ms"]) / after[first]["load_p75_ms"]
    )
    assert close(after[second]["load_change_pct"], load_change)
