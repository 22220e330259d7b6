"""What a tick should run: the shared logic of the schedules and the sensors.

A partitioned job gets one run whose tags list exactly the days that received data since the job's assets'
oldest watermark (late events in a closed day included), plus the partition range those days span so
Dagster records the materialized partitions. An unpartitioned incremental job runs when anything new has
arrived. No new data: a skip, which costs two small queries.
"""

from __future__ import annotations

from datetime import date, timedelta

import dagster as dg
from clickhouse_connect.driver.client import Client

from pipelines import warehouse_ops as ops
from pipelines.backfill_range import PARTITION_START

RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"


def plan_partitioned_run(
    client: Client, name: str, assets: list[str], tables: list[str], today: date
) -> dg.RunRequest | dg.SkipReason:
    """One run over the days with new rows in ``tables``, or a skip."""
    oldest = min(ops.get_watermarks(client, assets).values())
    upper = ops.max_received(client)
    if upper is None or upper <= oldest:
        return dg.SkipReason("no new data since the last run")
    first, last = date.fromisoformat(PARTITION_START), today + timedelta(days=1)
    since = ops.EPOCH if oldest <= ops.EPOCH else oldest - ops.OVERLAP
    days = [d for d in ops.dirty_days(client, tables, since) if first <= d <= last]
    if not days:
        return dg.SkipReason("new rows lie outside the partitions (before the start date or in the future)")
    keys = [d.isoformat() for d in days]
    return dg.RunRequest(
        run_key=f"{name}:{upper.isoformat()}",
        tags={
            RANGE_START_TAG: keys[0],
            RANGE_END_TAG: keys[-1],
            ops.DAYS_TAG: ",".join(keys),
            ops.WATERMARK_TAG: upper.isoformat(),
        },
    )


def plan_incremental_run(client: Client, name: str, assets: list[str]) -> dg.RunRequest | dg.SkipReason:
    """A run when rows arrived after the oldest of the assets' watermarks, or a skip."""
    oldest = min(ops.get_watermarks(client, assets).values())
    upper = ops.max_received(client)
    if upper is None or upper <= oldest:
        return dg.SkipReason("no new data since the last run")
    return dg.RunRequest(run_key=f"{name}:{upper.isoformat()}")
