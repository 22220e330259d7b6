from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from pipelines import warehouse_ops as ops
from stacklens.performance.metric_window import (
    MetricWindowError,
    WindowRequest,
    compute,
    compute_many,
    like_pattern,
    series,
)

NOW = datetime.now(UTC).replace(minute=30, second=0, microsecond=0)
COLS = [
    "org_id",
    "project_id",
    "event_id",
    "timestamp",
    "end_timestamp",
    "received_at",
    "release",
    "environment",
    "op",
    "duration_ms",
    "page",
    "measurements",
    "transaction",
]


def exact(values: list[float], q: float) -> float:
    values = sorted(values)
    pos = q * (len(values) - 1)
    low = int(pos)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (pos - low)


def _seed(warehouse, rows: list[tuple[int, str, str, float, float, datetime]]) -> None:  # noqa: ANN001
    data = []
    for project, page, env, load, lcp, at in rows:
        data.append(
            [
                1,
                project,
                uuid.uuid4(),
                at,
                at + timedelta(milliseconds=load),
                NOW,
                "1.0",
                env,
                "pageload",
                load,
                page,
                {"lcp": lcp, "ttfb": load / 4},
                page,
            ]
        )
    warehouse.insert("transactions", data, column_names=COLS)
    ops.run_insert(
        warehouse,
        "page_hour_states",
        {
            "start": NOW - timedelta(days=3),
            "end": NOW + timedelta(hours=1),
            "materialized_at": datetime.now(UTC),
        },
    )


@pytest.fixture
def seeded(client):  # noqa: ANN001, ANN201
    rng = random.Random(7)
    rows = []
    for i in range(300):
        page = rng.choice(["/products/{id}", "/products/list", "/checkout"])
        env = "production" if i % 3 else "staging"
        at = NOW - timedelta(minutes=rng.randint(1, 60 * 47))
        rows.append((5, page, env, rng.uniform(200, 4000), rng.uniform(500, 5000), at))
    rows.append((6, "/other", "production", 9999.0, 9999.0, NOW - timedelta(minutes=5)))  # another project
    _seed(client, rows)
    return rows


def _values(rows, window: timedelta, pattern: str = "*", env: str = "", index: int = 3) -> list[float]:  # noqa: ANN001
    hourly = not env
    start = NOW - window
    if hourly:
        start = start.replace(minute=0)
    prefix = pattern.rstrip("*")
    return [
        r[index]
        for r in rows
        if r[0] == 5
        and r[5] >= start
        and (not env or r[2] == env)
        and (pattern == "*" or (r[1].startswith(prefix) if pattern.endswith("*") else r[1] == pattern))
    ]


def test_values_match_an_exact_computation_over_the_same_rows(client, seeded) -> None:  # noqa: ANN001
    day, hour = timedelta(hours=24), timedelta(hours=1)
    requests = [
        WindowRequest(5, "load_time_ms", "p75", "*", day),
        WindowRequest(5, "load_time_ms", "p95", "/products/*", day),
        WindowRequest(5, "load_time_ms", "avg", "/checkout", hour * 6),
        WindowRequest(5, "lcp_ms", "p75", "*", day, "production"),
        WindowRequest(5, "load_time_ms", "p50", "/nothing", day),
    ]
    got = compute_many(client, requests, NOW)
    expected = [
        _values(seeded, day),
        _values(seeded, day, "/products/*"),
        _values(seeded, hour * 6, "/checkout"),
        _values(seeded, day, env="production", index=4),
    ]
    assert got[0].samples == len(expected[0]) and got[0].value == pytest.approx(exact(expected[0], 0.75))
    assert got[1].samples == len(expected[1]) and got[1].value == pytest.approx(exact(expected[1], 0.95))
    assert got[2].value == pytest.approx(sum(expected[2]) / len(expected[2]))
    assert got[3].samples == len(expected[3]) and got[3].value == pytest.approx(exact(expected[3], 0.75))
    assert got[4].value is None and got[4].samples == 0
    assert got[0].since == (NOW - day).replace(minute=0) and got[3].since == NOW - day


def test_unknown_metric_and_statistic_are_named() -> None:
    with pytest.raises(MetricWindowError, match="unknown metric 'fcp'"):
        compute(None, WindowRequest(5, "fcp", "p75"))
    with pytest.raises(MetricWindowError, match="lcp_ms keeps the statistics p75"):
        compute(None, WindowRequest(5, "lcp_ms", "p95"))
    assert like_pattern("/a_b/*") == "/a\\_b/%" and like_pattern("*") == "%"


def test_series_evaluates_the_window_at_each_point(client, seeded) -> None:  # noqa: ANN001
    request = WindowRequest(5, "load_time_ms", "p75", "*", timedelta(hours=6))
    points = series(client, request, NOW - timedelta(hours=48), NOW, timedelta(hours=6))
    at, value, samples = points[-1]
    window = [
        r[3]
        for r in seeded
        if r[0] == 5 and at - timedelta(hours=6) <= r[5].replace(minute=0, second=0, microsecond=0) < at
    ]
    assert samples == len(window) and value == pytest.approx(exact(window, 0.75))
    assert len(points) == 9 and all(p[2] == 0 and p[1] is None for p in points[:1])
