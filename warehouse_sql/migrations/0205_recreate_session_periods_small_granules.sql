-- Release health states `session_periods` (migration 0170) again: the same columns, key and engine, in smaller
-- granules (at most 64 rows and 32 KiB) and with a set index of the release.
-- Why: a read takes whole granules, and deserialises every row's three user states (uniqCombined64 of precision
-- 12, up to ~3 KiB each) before it can drop the rows outside its window. A release list wants a few hundred rows
-- (a 30-day window of 100 releases: ~90 day and block rows, ~130 hour rows, ~120 minute rows), but the 256-row
-- granules of 0170 held the day and block rows of every release and start around the few it wanted: the sessions
-- read of bench/releases.py (10 M sessions, 100 releases) took 36 ms at 256 rows a granule and 26 ms at 64 rows
-- and 32 KiB on the same rows (a day or block row with large user states is 5-9 KiB, so 4-6 of them fill a
-- granule; a minute row is ~200 bytes); 5,122 marks for 265 k rows instead of 1,042.
-- The set index of the release (per granule) lets a read of one release — its chart — skip the granules of the
-- others: its 90 days of day rows are 1-2 granules, not every granule of those days (16 ms to 10 ms).
-- The table fills again on the session_periods asset's next run, which starts over from the raw sessions (its
-- watermark is reset below; the raw rows keep the retention).
DROP TABLE IF EXISTS session_periods;

CREATE TABLE IF NOT EXISTS session_periods
(
    org_id           UInt64,
    project_id       UInt64,
    grain            Enum16('minute' = 1, 'hour' = 60, 'day' = 1440, 'days_2' = 2880, 'days_4' = 5760, 'days_8' = 11520, 'days_16' = 23040),
    start            DateTime('UTC'),
    release          LowCardinality(String),
    environment      LowCardinality(String),
    sessions         UInt64,
    errored          UInt64,
    crashed          UInt64,
    abnormal         UInt64,
    first_started    DateTime64(3, 'UTC'),
    users            AggregateFunction(uniqCombined64(12), String),
    errored_users    AggregateFunction(uniqCombined64(12), String),
    crashed_users    AggregateFunction(uniqCombined64(12), String),
    materialized_at  DateTime64(6, 'UTC'),
    INDEX idx_release release TYPE set(0) GRANULARITY 1
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(start)
ORDER BY (project_id, org_id, grain, start, release, environment)
TTL start + toIntervalMinute(CAST(grain, 'UInt16')) + INTERVAL ${retention_days} DAY
SETTINGS index_granularity = 64, index_granularity_bytes = 32768;

-- Filled from the raw `sessions` on the asset's next run.
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('session_periods', toDateTime64(0, 3, 'UTC'), now64(6))
