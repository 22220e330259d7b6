"""Partitions, declared once: the time-partitioned marts are split by UTC day."""

from __future__ import annotations

import dagster as dg

# end_offset=1 includes today's (still open) partition, which is where live data lands. Events older than
# the start date are outside every partition (and past any sensible retention).
daily_partitions = dg.DailyPartitionsDefinition(start_date="2024-01-01", end_offset=1, timezone="UTC")
PARTITION_START = "2024-01-01"
