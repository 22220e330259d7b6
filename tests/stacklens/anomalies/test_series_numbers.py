"""One number per metric: the hourly series an anomaly rule (and its backtest) reads holds, for each hour, the
values the pages show for that hour — a performance metric as the performance overview shows it over a
one-hour window, error events as Explore counts them per hour."""

from __future__ import annotations

import uuid
from datetime import timedelta

import numpy as np
import pytest

from stacklens.anomalies.rule_fields import anomaly_fields
from stacklens.anomalies.series import hourly
from stacklens.explore.query_parser import parse_query
from stacklens.explore.run import run_explore
from stacklens.performance import page_load_reads
from stacklens.settings import Settings
from stacklens.view_filters import ViewFilters
from tests.stacklens.performance.perf_seed import NOW, migrated, seed

ORG, PROJECT = 1, 11
SINCE, UNTIL = NOW - timedelta(hours=48), NOW
EV = ["org_id", "project_id", "event_id", "issue_id", "fingerprint", "timestamp", "received_at", "user_key"]


def _iso(value) -> str:
    return value.isoformat().replace("+00:00", "Z")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory, warehouse_url: str):
    from tests.conftest import make_settings

    settings: Settings = make_settings(tmp_path_factory.mktemp("series"), warehouse_url)
    warehouse = migrated(settings)
    seed(warehouse, ORG, PROJECT, loads=600, days=2)
    events = [
        [ORG, PROJECT, uuid.uuid4(), 5, "fp", NOW - timedelta(hours=h, minutes=m), NOW, f"u{m % 3}"]
        for h in (2, 3, 3, 7, 30)
        for m in (4, 17, 41)
    ]
    warehouse.insert("events", events, column_names=EV)
    return warehouse


def test_a_performance_metric_hour_by_hour_is_the_overviews_figure(client) -> None:
    series = hourly(client, ORG, PROJECT, anomaly_fields({"metric": "lcp_ms"}), "", SINCE, UNTIL)
    compared = 0
    for i in range(0, 48, 5):
        start = SINCE + timedelta(hours=i)
        filters = ViewFilters.parse(since=_iso(start), until=_iso(start + timedelta(hours=1)), now=NOW)
        total, _, _ = page_load_reads.overview(client, ORG, PROJECT, filters)
        if total is None or not total["lcp_n"]:
            assert np.isnan(series.values[i]), i  # no page load with an LCP: a gap, as the page shows none
            continue
        assert series.values[i] == pytest.approx(total["lcp_p75"]), i
        assert series.counts[i] == total["lcp_n"], i
        compared += 1
    assert compared >= 5


def test_error_events_per_hour_are_explores_count(client) -> None:
    series = hourly(client, ORG, PROJECT, anomaly_fields({"metric": "events"}), "", SINCE, UNTIL)
    question = {
        "dataset": "errors",
        "aggregates": [{"fn": "count"}],
        "interval": "1h",
        "since": _iso(SINCE),
        "until": _iso(UNTIL),
    }
    answer = run_explore(client, parse_query(question), ORG, [PROJECT])
    (line,) = answer.series
    explored = dict(zip((t.removesuffix("Z") for t in line["t"]), line["values"]["count"], strict=True))
    for i, value in enumerate(series.values):
        hour = _iso(SINCE + timedelta(hours=i)).removesuffix("Z")
        if np.isnan(value):
            assert hour not in explored  # before the first event
        else:
            assert value == explored.get(hour, 0), hour  # an hour without events is Explore's empty bucket
    assert sum(v for v in series.values if not np.isnan(v)) == 15
