"""Partitions, declared once: the time-partitioned marts are split by UTC day.

The partitions are the days the raw layer can hold: from the default retention (90 days) before the day the
definitions are loaded, to today (``end_offset=1`` includes today's still open partition, where live data
lands). No older day can ever be materialized: ingest stores an event whose time the retention would expire
under its receive time, and the raw tables' TTL has deleted whatever was there. A fixed start date listed
every day since then in the Dagster UI as "missing" (1,023 of them after three years) beside the few days that
hold data.

Loading stays import-pure (no database, no environment): the start moves with the clock, and a process that
runs for weeks keeps the start it loaded with, which only adds days that may still hold data. With a longer
``STACKLENS_RETENTION_DAYS`` the raw tables keep older events, but the daily marts rebuild the last 90 days
only (every page reads at most 90 days).
"""

from __future__ import annotations

import dagster as dg

# The start day is computed beside the backfill's check of its days, which runs without Dagster.
from pipelines.backfill_range import PARTITION_START

daily_partitions = dg.DailyPartitionsDefinition(start_date=PARTITION_START, end_offset=1, timezone="UTC")

# Said on every daily-partitioned asset, where the Dagster UI lists its partitions: a day before the
# installation's first data has nothing to build, is never materialized, and so reads "Missing" there.
MISSING_DAYS_NOTE = (
    " Partitions are the UTC days of the retention (90 days); a day before the first data has nothing to build"
    " and stays Missing in the partitions view (not an error)."
)
