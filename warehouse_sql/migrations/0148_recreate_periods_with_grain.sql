-- The state tables name their grain: a `grain` column (Enum16 of the period's length in minutes: 'minute', 'hour',
-- 'day', and the aligned blocks of days 'days_2', 'days_4', 'days_8', 'days_16', each starting on a multiple of its
-- length since 1970-01-01) instead of an `hours` number that meant five things (0 a minute, 1 an hour, 24 a day, 48
-- to 384 a block). The tables stay one per kind of data, sorted by (project, org, grain, start, …): a view reads
-- the minutes of its window's partial edge hours, its other whole hours and its whole days as blocks — the periods
-- that tile it (PerfFilters.periods) — in one read of one table, with `(grain, start) IN` the periods, as it read
-- `(hours, start)`; one table per grain would make that read a union of up to four tables, each another branch for
-- the engine to analyse and plan (the larger part of a view's time, docs/decisions.md). The grain's value is the
-- period's length, so the TTL still counts from a period's end.
-- `pageload_examples` names its grains alike ('hour', 'day' for the former 'h', 'd').
-- Written per grain by the pipeline queries named after the table and grain (queries/pipelines/
-- pageload_periods_minute.sql, _hour, _day, _blocks; pageload_examples_hour.sql, _day; resource_request_periods_* and
-- endpoint_call_periods_* alike). The tables fill again on the performance assets' next runs, which start over from
-- the raw layer (their watermarks are new: `pageload_facts`, `resource_facts`, `endpoint_facts`).
DROP TABLE IF EXISTS pageload_periods;

DROP TABLE IF EXISTS resource_request_periods;

DROP TABLE IF EXISTS endpoint_call_periods;

DROP TABLE IF EXISTS pageload_examples;

CREATE TABLE IF NOT EXISTS pageload_periods
(
    org_id           UInt64,
    project_id       UInt64,
    grain            Enum16('minute' = 1, 'hour' = 60, 'day' = 1440, 'days_2' = 2880, 'days_4' = 5760, 'days_8' = 11520, 'days_16' = 23040),
    start            DateTime('UTC'),
    environment      LowCardinality(String),
    release          LowCardinality(String),
    browser          LowCardinality(String),
    page             LowCardinality(String),
    views            UInt64,
    first_ts         DateTime64(3, 'UTC'),
    load_sum         Float64,
    load_hist        Tuple(Array(Float32), Array(UInt32)),
    ttfb_sum         Float64,
    ttfb_n           UInt64,
    ttfb_hist        Tuple(Array(Float32), Array(UInt32)),
    dom_sum          Float64,
    dom_n            UInt64,
    dom_hist         Tuple(Array(Float32), Array(UInt32)),
    resource_sum     Float64,
    resource_n       UInt64,
    lcp_n            UInt64,
    lcp_hist         Tuple(Array(Float32), Array(UInt32)),
    inp_n            UInt64,
    inp_hist         Tuple(Array(Float32), Array(UInt32)),
    cls_n            UInt64,
    cls_hist         Tuple(Array(Float32), Array(UInt32)),
    fcp_n            UInt64,
    fcp_hist         Tuple(Array(Float32), Array(UInt32)),
    score_sum        Float64,
    score_n          UInt64,
    api_calls        UInt64,
    api_errors       UInt64,
    api_hist         Tuple(Array(Float32), Array(UInt32)),
    js_bytes         Int64,
    total_bytes      Int64,
    dist             Tuple(Array(Int64), Array(UInt32)),
    fastest          Array(Tuple(Float64, String, DateTime64(3, 'UTC'), Nullable(Float64))),
    slowest          Array(Tuple(Float64, String, DateTime64(3, 'UTC'), Nullable(Float64))),
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(start)
ORDER BY (project_id, org_id, grain, start, page, environment, release, browser)
TTL start + toIntervalMinute(CAST(grain, 'UInt16')) + INTERVAL ${retention_days} DAY
SETTINGS index_granularity = 256;

CREATE TABLE IF NOT EXISTS resource_request_periods
(
    org_id           UInt64,
    project_id       UInt64,
    grain            Enum16('minute' = 1, 'hour' = 60, 'day' = 1440, 'days_2' = 2880, 'days_4' = 5760, 'days_8' = 11520, 'days_16' = 23040),
    start            DateTime('UTC'),
    environment      LowCardinality(String),
    release          LowCardinality(String),
    browser          LowCardinality(String),
    resource_type    LowCardinality(String),
    resource         LowCardinality(String),
    host             LowCardinality(String),
    page_host        LowCardinality(String),
    requests         UInt64,
    loads            UInt64,
    type_loads       UInt64,
    total_bytes      Int64,
    max_bytes        Int64,
    decoded_bytes    Int64,
    transfer_bytes   Int64,
    transfer_n       UInt64,
    duration_sum     Float64,
    dur_hist         Tuple(Array(Int32), Array(UInt64)),
    blocking         UInt64,
    non_blocking     UInt64,
    unknown          UInt64,
    cache_hits       UInt64,
    fcp_share_sum    Float64,
    fcp_share_n      UInt64,
    compressed_dec   Int64,
    compressed_enc   Int64,
    pages            Array(String),
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(start)
ORDER BY (project_id, org_id, grain, start, environment, release, browser, resource_type, resource, host, page_host)
TTL start + toIntervalMinute(CAST(grain, 'UInt16')) + INTERVAL ${retention_days} DAY
SETTINGS index_granularity = 256;

CREATE TABLE IF NOT EXISTS endpoint_call_periods
(
    org_id           UInt64,
    project_id       UInt64,
    grain            Enum16('minute' = 1, 'hour' = 60, 'day' = 1440, 'days_2' = 2880, 'days_4' = 5760, 'days_8' = 11520, 'days_16' = 23040),
    start            DateTime('UTC'),
    environment      LowCardinality(String),
    release          LowCardinality(String),
    browser          LowCardinality(String),
    source           LowCardinality(String),
    method           LowCardinality(String),
    path             LowCardinality(String),
    calls            UInt64,
    loads            UInt64,
    duration_sum     Float64,
    dur_hist         Tuple(Array(Int32), Array(UInt64)),
    s2xx             UInt64,
    s3xx             UInt64,
    s4xx             UInt64,
    s5xx             UInt64,
    no_status        UInt64,
    bytes_sum        Int64,
    bytes_n          UInt64,
    max_per_load     UInt64,
    pages            Array(String),
    slow_ms          Array(Float64),
    slow_event       Array(String),
    slow_ts          Array(DateTime64(3, 'UTC')),
    slow_status      Array(UInt16),
    slow_description Array(String),
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(start)
ORDER BY (project_id, org_id, grain, start, environment, release, browser, source, method, path)
TTL start + toIntervalMinute(CAST(grain, 'UInt16')) + INTERVAL ${retention_days} DAY
SETTINGS index_granularity = 256;

CREATE TABLE IF NOT EXISTS pageload_examples
(
    org_id           UInt64,
    project_id       UInt64,
    grain            Enum16('hour' = 60, 'day' = 1440),
    start            DateTime('UTC'),
    environment      LowCardinality(String),
    release          LowCardinality(String),
    browser          LowCardinality(String),
    page             LowCardinality(String),
    bucket           Int32,
    load_ms          Float64,
    event_id         String,
    ts               DateTime64(3, 'UTC'),
    score            Nullable(Float64),
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(start)
ORDER BY (project_id, org_id, page, bucket, grain, start, environment, release, browser)
TTL start + INTERVAL ${retention_days} DAY
SETTINGS index_granularity = 256;

INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('pageload_facts', toDateTime64(0, 3, 'UTC'), now64(6)),
       ('resource_facts', toDateTime64(0, 3, 'UTC'), now64(6)),
       ('endpoint_facts', toDateTime64(0, 3, 'UTC'), now64(6))
