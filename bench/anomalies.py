"""Anomaly rules benchmark (docs/alerts.md, "Anomaly rules"): one tick over 5,000 series, and a 28-day
backtest over 10 M events.

    .venv/bin/python bench/anomalies.py                       # 5,000 series, 10 M events (the goals)
    .venv/bin/python bench/anomalies.py --series 500 --events 1000000   # a small run
    .venv/bin/python bench/anomalies.py --keep /tmp/anomaly-bench     # fill once, time again later

1. **Tick**: 5,000 hourly series of 29 days (the rule's 28-day window and the day the tick replays;
   Poisson counts with a weekly shape, a tenth with a 3x spike in
   the last hour) judged as the tick judges them — the band of their last 24 hours under ``auto``
   seasonality (:func:`stacklens.anomalies.model.bands`) and the firing replay
   (:func:`stacklens.anomalies.decide.replay`), all series in one numpy pass. Goal: <= 5 s. The reading
   of the series is measured in part 2.
2. **Backtest**: a fresh embedded warehouse with N error events of one project over 56 days, generated inside
   ClickHouse (``INSERT … SELECT … FROM numbers()``); then :func:`stacklens.anomalies.backtest.backtest` of an
   ``events`` rule over 28 days (its 28 days of history before them included: 56 days of hourly counts in one
   query, the model, the releases near each firing). Goal: <= 2 s at 10 M events. Printed: the median of 5
   runs, and the query alone."""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])

import numpy as np  # noqa: E402 - after the path change above

from stacklens.settings import Settings, override_settings  # noqa: E402

HOURS = 56 * 24  # the backtest's read: 28 days and their 28 days of history
TICK_HOURS = 28 * 24 + 24  # the tick's read: the rule's 28-day window and the 24 hours it replays
FILL = """
INSERT INTO events (org_id, project_id, event_id, issue_id, fingerprint, grouping_version, timestamp, received_at,
    platform, level, release, environment, title, user_key)
SELECT 1, 1, generateUUIDv4(number), 1000 + number % 50, concat('fp', toString(number % 50)), 'v1',
    toStartOfHour(now64(3)) - toIntervalSecond(1 + (cityHash64(number) % ({days:UInt32} * 86400))), now64(3),
    'python', 'error', '1.0', 'production', 'ValueError: failure', concat('u', toString(number % 5000))
FROM numbers({start:UInt64}, {count:UInt64})
"""


def shape(level: np.ndarray, hours: int) -> np.ndarray:
    hour = np.arange(hours)
    daily = 0.8 + 0.5 * np.sin((hour % 24 - 6) / 24 * 2 * np.pi)
    weekly = np.where((hour // 24) % 7 >= 5, 0.4, 1.0)
    return level[:, None] * (daily * weekly)[None, :]


def tick(series: int) -> None:
    from stacklens.anomalies.decide import replay
    from stacklens.anomalies.model import bands
    from stacklens.anomalies.rule_fields import SENSITIVITIES

    rng = np.random.default_rng(1)
    expected = shape(rng.uniform(5, 300, series), TICK_HOURS)
    x = rng.poisson(expected).astype(float)
    spiked = rng.random(series) < 0.1
    x[spiked, -1] = 3 * expected[spiked, -1] + 20
    k = SENSITIVITIES["medium"]
    runs = []
    for _ in range(3):
        began = time.perf_counter()
        got = bands(x, "auto", k, True, start=TICK_HOURS - 24)
        steps = replay(got.score, x[:, TICK_HOURS - 24 :], k, "up", 10)
        runs.append(time.perf_counter() - began)
    firing = int(steps.firing[:, -1].sum())
    print(
        f"tick: {series:,} series x {TICK_HOURS} hours, auto seasonality: median {statistics.median(runs):.2f} s "
        f"(max {max(runs):.2f} s); firing at the last hour: {firing:,} (spiked: {int(spiked.sum()):,})"
    )


def backtest_bench(events: int, keep: Path | None) -> None:
    from stacklens.anomalies.backtest import backtest
    from stacklens.anomalies.rule_fields import anomaly_fields
    from stacklens.anomalies.series import hourly
    from stacklens.warehouse.client import get_warehouse
    from stacklens.warehouse.migrations import apply_migrations

    place = contextlib.nullcontext(str(keep)) if keep else tempfile.TemporaryDirectory()
    with place as tmp:
        settings = Settings(
            data_dir=Path(tmp),
            warehouse_url=f"chdb://{tmp}/warehouse",
            warehouse_database="bench",
            secret_key="bench-secret-0123456789",
        )
        override_settings(settings)
        apply_migrations(settings)
        client = get_warehouse(settings)
        stored = client.query("SELECT count() FROM events").result_rows[0][0]
        began = time.perf_counter()
        step = 1_000_000
        for start in range(stored, events, step):
            client.command(FILL, parameters={"days": 56, "start": start, "count": min(step, events - start)})
        print(f"{events:,} events over 56 days ({stored:,} kept) in {time.perf_counter() - began:.1f} s")
        fields = anomaly_fields({"metric": "events", "seasonality": "auto"})
        now = datetime.now(UTC)
        runs, reads = [], []
        answer = None
        for _ in range(5):
            began = time.perf_counter()
            answer = backtest(client, 1, 1, fields, "", 28, 28 * 86400, now)
            runs.append(time.perf_counter() - began)
            began = time.perf_counter()
            hourly(client, 1, 1, fields, "", now - timedelta(days=56), now)
            reads.append(time.perf_counter() - began)
        assert answer is not None
        print(
            f"backtest: 28 days over {events:,} events: median {statistics.median(runs):.2f} s "
            f"(max {max(runs):.2f} s), of which the hourly query {statistics.median(reads):.2f} s; "
            f"{len(answer['points'])} points, {len(answer['fires'])} fires"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--series", type=int, default=5_000)
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--keep", type=Path, help="warehouse directory to fill once and reuse on later runs")
    args = parser.parse_args()
    tick(args.series)
    backtest_bench(args.events, args.keep)


if __name__ == "__main__":
    main()
