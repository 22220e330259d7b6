"""The "building" notice (issue #47, point 4): history the raw layer holds and the marts have not taken yet
(its hours received after the asset's watermark) is reported as "building the last N days: P %"; live data
waiting for its run, and marts that hold everything, report nothing."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from stacklens.metrics.mart_progress import Building, building
from stacklens.warehouse.queries import load_query
from tests.pipelines.assets.test_budgets import load
from tests.pipelines.pipeline_seed import TX_COLS

NOW = datetime.now(UTC).replace(microsecond=0)


def _mark(client, at: datetime) -> None:
    client.command(
        load_query("pipelines/pipeline_watermarks"),
        parameters={"asset": "pageload_facts", "watermark": at, "updated_at": datetime.now(UTC)},
    )


def _loads(client, project_id: int, times: list[datetime]) -> None:
    client.insert("transactions", [load(project_id, 1, "/", 800, t) for t in times], column_names=TX_COLS)


def test_history_waiting_for_the_marts_is_building_with_its_share(client) -> None:
    assert building(client, 501, "performance", NOW) is None  # no data: nothing to build
    # Ten days of history, one page load every 6 hours, all received now: the pipelines have not run.
    history = [NOW - timedelta(days=10) + timedelta(hours=6 * i) for i in range(40)]
    _loads(client, 501, history)
    first = building(client, 501, "performance", NOW + timedelta(minutes=1))
    assert first == Building(10, 0) and first.label() == "building the last 10 days: 0 %"
    # A run took everything received so far: built.
    _mark(client, datetime.now(UTC))
    time.sleep(0.01)  # what arrives next is received after the watermark
    assert building(client, 501, "performance", NOW + timedelta(minutes=1)) is None
    # More history arrives for the last 4 days (8 of its 16 hours with data new): half of those hours wait.
    _loads(client, 501, [NOW - timedelta(days=4) + timedelta(hours=12 * i) for i in range(8)])
    later = building(client, 501, "performance", NOW + timedelta(minutes=2))
    assert later is not None and later.days == 4 and later.percent == 50, later
    # Another project's data is not this project's build.
    assert building(client, 502, "performance", NOW) is None


def test_live_data_waiting_for_its_run_is_not_building(client) -> None:
    _mark(client, datetime.now(UTC))
    time.sleep(0.01)
    _loads(client, 503, [NOW - timedelta(minutes=20), NOW - timedelta(minutes=3)])
    assert building(client, 503, "performance", NOW) is None


def test_release_health_history_waiting_is_building(client) -> None:
    """The release pages read the session states: sessions of the last week received after their asset's last
    run (none yet) are history the marts are building."""
    from tests.stacklens.performance.perf_seed import mark_built
    from tests.stacklens.releases.session_seed import seed_sessions

    seed_sessions(
        client,
        1,
        504,
        releases={"shop@1.0.0": (NOW - timedelta(days=6), NOW - timedelta(hours=3), 0.01)},
        browser_sessions=60,
        received=NOW,
    )
    found = building(client, 504, "releases", NOW + timedelta(minutes=1))
    assert found is not None and found.days in (5, 6) and found.percent == 0, found
    mark_built(client, "session_periods")
    assert building(client, 504, "releases", NOW + timedelta(minutes=1)) is None
