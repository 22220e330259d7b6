"""Release health against an independent computation in polars over the raw rows the seeds inserted: the
session states by grain (minutes at the window's edges, hours, days and blocks) give exactly what Relay's
counting gives over the raw session updates and aggregates; the performance figures are the Release impact
view's; another organization's rows (same project id) never count; and the verdicts name the seeded
regression."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import polars as pl
import pytest
from clickhouse_connect.driver.client import Client

from stacklens.performance import page_load_reads
from stacklens.releases.detail import release_detail
from stacklens.releases.health import Window, release_health
from stacklens.releases.sessions import environments, series
from stacklens.view_filters import ViewFilters
from stacklens.warehouse.client import warehouse_client
from tests.conftest import make_settings
from tests.stacklens.performance.perf_seed import NOW, migrated, seed
from tests.stacklens.releases.session_seed import NIL, fill_session_states, seed_sessions

ORG, OTHER, PROJECT = 5, 6, 50
OLD, NEW = "shop@1.0.0", "shop@1.1.0"
BAD = ("errored", "crashed", "abnormal", "unhandled")


@pytest.fixture(scope="module")
def world(
    tmp_path_factory: pytest.TempPathFactory, warehouse_url: str
) -> Iterator[tuple[Client, pl.DataFrame, pl.DataFrame]]:
    """Page loads and sessions of two organizations in one project id, with the raw session rows they came
    from. Seeded once for the module (its own warehouse database, dropped after it): every test only reads
    it, and seeding ~4,000 sessions and 700 page loads was most of each of the eleven cases' time."""
    settings = make_settings(tmp_path_factory.mktemp("release-health"), warehouse_url)
    client = migrated(settings)
    seed(
        client, ORG, PROJECT, loads=600, seed=11, facts=False
    )  # page loads: shop@1.1.0 is slower and heavier
    seed(client, OTHER, PROJECT, loads=100, seed=12)
    spans = {
        OLD: (NOW - timedelta(days=14), NOW - timedelta(days=7), 0.01),
        NEW: (NOW - timedelta(days=7), NOW - timedelta(minutes=3), 0.06),
    }
    ours = seed_sessions(client, ORG, PROJECT, releases=spans, browser_sessions=3000, seed=3)
    theirs = seed_sessions(client, OTHER, PROJECT, releases=spans, browser_sessions=400, seed=4)
    fill_session_states(client, NOW - timedelta(days=15), NOW + timedelta(hours=1))
    frames = [
        pl.DataFrame([{**r, "session_id": str(r["session_id"])} for r in s.rows]) for s in (ours, theirs)
    ]
    yield client, frames[0], frames[1]
    warehouse_client(settings.resolved_warehouse_url, "default").command(
        "DROP DATABASE IF EXISTS {db:Identifier}", parameters={"db": settings.warehouse_database}
    )


def _distinct(frame: pl.DataFrame, condition: pl.Expr) -> int:
    return frame.filter(condition)["session_id"].n_unique()


def _summed(frame: pl.DataFrame, condition: pl.Expr) -> int:
    return int(frame.filter(condition)["quantity"].sum())


def expected(raw: pl.DataFrame, since, until, environment: str = "") -> dict[str, dict[str, int]]:
    """Relay's counting over the raw rows of sessions started in [since, until), per release."""
    frame = raw.filter((pl.col("started") >= since) & (pl.col("started") < until))
    if environment:
        frame = frame.filter(pl.col("environment") == environment)
    frame = frame.with_columns(
        aggregate=pl.col("session_id") == str(NIL),
        bad=(pl.col("errors") > 0) | pl.col("status").is_in(BAD),
    )
    out: dict[str, dict[str, int]] = {}
    for (release,), part in frame.group_by("release"):
        single, buckets = part.filter(~pl.col("aggregate")), part.filter(pl.col("aggregate"))

        users = part.filter(pl.col("distinct_id") != "")
        out[str(release)] = {
            "sessions": _distinct(single, pl.col("init") == 1) + _summed(buckets, pl.col("init") == 1),
            "errored": _distinct(single, pl.col("bad")) + _summed(buckets, pl.col("bad")),
            "crashed": _distinct(single, pl.col("status") == "crashed")
            + _summed(buckets, pl.col("status") == "crashed"),
            "abnormal": _distinct(single, pl.col("status") == "abnormal")
            + _summed(buckets, pl.col("status") == "abnormal"),
            "users": users["distinct_id"].n_unique(),
            "crashed_users": users.filter(pl.col("status") == "crashed")["distinct_id"].n_unique(),
            "errored_users": users.filter(pl.col("bad"))["distinct_id"].n_unique(),
        }
    return out


def users_close(got: int, want: int) -> bool:
    """Users are uniqCombined64(12) states (migration 0170): exact up to about 128 distinct users, then a
    HyperLogLog of 4,096 cells (about 2 % low at 1,000 to 5,000): within 5 %."""
    return got == want if want <= 100 else abs(got - want) <= 0.05 * want


WINDOWS = [
    # Minutes at both edges, hours, days and blocks of days.
    (NOW - timedelta(days=13, hours=5, minutes=17), NOW - timedelta(minutes=1)),
    (NOW - timedelta(days=3), NOW),
    (NOW - timedelta(hours=2, minutes=31), NOW - timedelta(minutes=44)),
]


@pytest.mark.parametrize("environment", ["", "staging"])
@pytest.mark.parametrize("bounds", WINDOWS)
def test_session_figures_match_relays_counting_over_the_raw_rows(world, bounds, environment) -> None:
    client, raw, _ = world
    since, until = bounds
    rows = {r.version: r for r in release_health(client, ORG, PROJECT, Window(since, until), environment)}
    want = expected(raw, since, until, environment)
    assert {v for v, r in rows.items() if r.sessions} == set(want)
    for version, counts in want.items():
        row = rows[version]
        got = {
            "sessions": row.sessions,
            "errored": row.errored_sessions,
            "crashed": row.crashed_sessions,
            "abnormal": row.abnormal_sessions,
            "users": row.users,
            "crashed_users": row.crashed_users,
            "errored_users": row.errored_users,
        }
        exact = ("sessions", "errored", "crashed", "abnormal")
        assert {k: got[k] for k in exact} == {k: counts[k] for k in exact}, version
        for key in ("users", "crashed_users", "errored_users"):
            assert users_close(got[key], counts[key]), (version, key, got[key], counts[key])
        assert row.crash_free_sessions == pytest.approx(100 * (1 - counts["crashed"] / counts["sessions"]))
        assert row.crash_free_users == pytest.approx(100 * (1 - row.crashed_users / row.users))
        assert row.errored_sessions_pct == pytest.approx(100 * counts["errored"] / counts["sessions"])
    # Adoption: shares of the sessions and users of the 24 hours before the window's end.
    recent = expected(raw, until - timedelta(hours=24), until, environment)
    total = sum(c["sessions"] for c in recent.values())
    for version, row in rows.items():
        share = recent.get(version, {}).get("sessions", 0)
        assert row.sessions_24h == share
        assert row.adoption == (pytest.approx(100 * share / total) if total else None)


def test_performance_figures_are_the_release_impact_views(world) -> None:
    client, _, _ = world
    filters = ViewFilters(since=NOW - timedelta(days=14), until=NOW, environment="production")
    health = {r.version: r for r in release_health(client, ORG, PROJECT, Window.of(filters), "production")}
    view = {r["release"]: r for r in page_load_reads.releases(client, ORG, PROJECT, filters)}
    assert set(view) == {OLD, NEW}
    for version, row in view.items():
        mine = health[version]
        assert (mine.page_loads, mine.error_events) == (row["views"], row["error_events"])
        assert (mine.load_p75, mine.js_bytes_per_view, mine.api_p95) == (
            row["load_p75"],
            row["js_bytes_per_view"],
            row["api_p95"],
        )
        assert mine.load_p75_low is not None and mine.load_p75_low <= mine.load_p75 <= mine.load_p75_high
        assert mine.errors_per_1k_page_loads == (
            1000 * row["error_events"] / row["views"] if row["views"] else None
        )
    # The view's verdict on the performance figures is the release page's on the same figures.
    outcomes = {c["metric"]: c["outcome"] for c in view[NEW]["verdict"]["comparisons"]}
    for metric, outcome in outcomes.items():
        assert health[NEW].verdict.outcome(metric) == outcome, metric


def test_the_seeded_regression_is_named_and_the_first_release_is_not_judged(world) -> None:
    client, _, _ = world
    rows = release_health(client, ORG, PROJECT, Window(NOW - timedelta(days=14), NOW))
    assert [r.version for r in rows] == [OLD, NEW]  # by first seen
    old, new = rows
    assert not old.verdict.regression and old.previous_release == ""
    assert new.previous_release == OLD and new.verdict.regression
    assert {c.metric for c in new.verdict.comparisons if c.outcome == "regression"} >= {
        "crash_free_sessions",
        "load_p75",
        "js_bytes_per_view",
    }
    crash = next(r for r in new.verdict.reasons if r.startswith("crash-free sessions"))
    assert f"{new.sessions:,} sessions" in crash and f"{old.sessions:,} sessions" in crash and OLD in crash
    assert new.crash_free_sessions_change == pytest.approx(new.crash_free_sessions - old.crash_free_sessions)


def test_the_windows_start_does_not_move_a_verdict(world) -> None:
    """A window whose start cuts shop@1.0.0 lists what it left of it, but judges shop@1.1.0 against all of
    1.0.0's sessions and all of its page loads and errors up to the window's end: the same comparisons
    wherever the start falls, saying so."""
    client, raw, _ = world
    whole = expected(raw, NOW - timedelta(days=15), NOW)[OLD]
    every = ViewFilters(since=NOW - timedelta(days=15), until=NOW)
    loads = {r["release"]: r for r in page_load_reads.releases(client, ORG, PROJECT, every)}[OLD]
    performance = ("errors_per_1k_page_loads", "load_p75", "api_p95", "js_bytes_per_view")
    compared = []
    for cut in (timedelta(days=8, hours=20), timedelta(days=7, hours=9), timedelta(days=7, minutes=30)):
        window = Window(NOW - cut, NOW)
        old, new = release_health(client, ORG, PROJECT, window)
        assert old.version == OLD and old.sessions == expected(raw, window.since, NOW)[OLD]["sessions"]
        crash = next(c for c in new.verdict.comparisons if c.metric == "crash_free_sessions")
        assert crash.previous_samples == whole["sessions"] > old.sessions
        assert (
            f"{whole['sessions']:,} sessions since {old.first_seen:%Y-%m-%d}, before this window"
            in crash.reason
        )
        assert new.crash_free_sessions_change == pytest.approx(crash.change)
        # The performance figures too: 1.0.0's page loads before the window count; the row shows the window's.
        load = next(c for c in new.verdict.comparisons if c.metric == "load_p75")
        assert load.previous_samples == loads["views"] > old.page_loads
        assert f"{loads['views']:,} page loads since {loads['first_seen']:%Y-%m-%d}, before this window" in (
            load.reason
        )
        assert load.previous == pytest.approx(loads["load_p75"]) and old.load_p75 != load.previous
        js = next(c for c in new.verdict.comparisons if c.metric == "js_bytes_per_view")
        assert new.js_bytes_per_view_change_pct == pytest.approx(js.change)
        assert new.load_p75_change_pct == pytest.approx(load.change)
        detail = release_detail(client, ORG, PROJECT, NEW, window)
        assert detail.health is not None and detail.health.verdict == new.verdict
        outcomes = tuple(
            (c.previous, c.p_value, c.outcome) for c in new.verdict.comparisons if c.metric in performance
        )
        compared.append((crash.previous, crash.p_value, outcomes, new.verdict.regression))
    assert len(set(compared)) == 1 and compared[0][3]
    # A window holding all of 1.0.0 compares the same sessions and page loads, and says nothing of before.
    old, new = release_health(client, ORG, PROJECT, Window(NOW - timedelta(days=15), NOW))
    crash = next(c for c in new.verdict.comparisons if c.metric == "crash_free_sessions")
    assert (crash.previous, crash.p_value) == compared[0][:2]
    assert not any("before this window" in c.reason for c in new.verdict.comparisons)
    outcomes = tuple(
        (c.previous, c.p_value, c.outcome) for c in new.verdict.comparisons if c.metric in performance
    )
    assert outcomes == compared[0][2]


def test_another_organizations_project_shows_nothing_of_ours(world) -> None:
    client, ours, theirs = world
    window = Window(NOW - timedelta(days=14), NOW)
    for org, raw in ((ORG, ours), (OTHER, theirs)):
        rows = {r.version: r.sessions for r in release_health(client, org, PROJECT, window)}
        want = expected(raw, window.since, window.until)
        assert rows == {v: c["sessions"] for v, c in want.items()}, org
    assert release_health(client, 999, PROJECT, window) == []
    assert environments(client, ORG, PROJECT) == ["production", "staging"]


def test_one_release_over_time_with_gaps_where_it_had_nothing(world) -> None:
    client, raw, _ = world
    since, until = NOW - timedelta(days=2), NOW
    size, buckets = series(client, ORG, PROJECT, NEW, since, until)
    assert size == timedelta(hours=1)
    assert len(buckets) <= 48 and all(since <= b.start < until for b in buckets)
    for bucket in buckets[:6] + buckets[-6:]:
        want = expected(raw, bucket.start, bucket.start + size).get(NEW, {"sessions": 0, "crashed": 0})
        assert (bucket.sessions, bucket.crashed) == (want["sessions"], want["crashed"])
    size, days = series(client, ORG, PROJECT, OLD, NOW - timedelta(days=14), NOW)
    assert size == timedelta(days=1)
    # shop@1.0.0 ran until 7 days ago: no later day has a row (a gap on the chart, not 0).
    assert days and max(d.start for d in days) < NOW - timedelta(days=6)
    detail = release_detail(client, ORG, PROJECT, NEW, Window(NOW - timedelta(days=14), NOW))
    assert detail.health is not None and detail.previous is not None and detail.previous.version == OLD
    assert detail.since >= NOW - timedelta(days=7, minutes=1)
