"""The daily partitions are the days the raw layer can hold (the retention, 90 days, to today), not every day
since a fixed date: the Dagster UI shows at most 92 partitions, and every day the demo's 35-day history and
today's live data land in is one of them."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from pipelines.backfill_range import PARTITION_START, RETENTION_DAYS
from pipelines.definitions import defs
from pipelines.partitions import daily_partitions
from stacklens.ingest.clock import time_window
from stacklens.settings import Settings


def test_partitions_span_the_retention_and_no_more() -> None:
    today = datetime.now(UTC).date()
    keys = daily_partitions.get_partition_keys()
    assert RETENTION_DAYS == Settings().retention_days == 90
    # One key per day from the start to today (a test running across midnight may see one more).
    assert RETENTION_DAYS + 1 <= len(keys) <= RETENTION_DAYS + 2
    assert keys[0] == PARTITION_START and date.fromisoformat(keys[-1]) >= today
    demo_history = [(today - timedelta(days=n)).isoformat() for n in range(36)]
    assert set(demo_history) <= set(keys)


def test_no_day_before_the_start_can_receive_data() -> None:
    # Ingest keeps an event's time only inside the retention window; older times become the receive time.
    oldest_kept, _ = time_window(datetime.now(UTC).timestamp(), Settings().retention_days)
    assert datetime.fromtimestamp(oldest_kept, UTC).date() >= date.fromisoformat(PARTITION_START)


def test_every_partitioned_asset_uses_the_bounded_partitions() -> None:
    partitioned = [spec for spec in defs.resolve_all_asset_specs() if spec.partitions_def is not None]
    assert partitioned, "the daily marts are partitioned"
    for spec in partitioned:
        assert spec.partitions_def == daily_partitions, spec.key
        assert len(spec.partitions_def.get_partition_keys()) <= RETENTION_DAYS + 2
