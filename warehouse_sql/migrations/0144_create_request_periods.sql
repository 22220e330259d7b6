-- One table of states per request kind instead of an hour table and a day table, and blocks of days in it: the
-- resources, endpoints and recommendations views read their window's whole hours and whole days with one
-- table read instead of two (each read in a query is another branch for the engine to analyse and plan, the
-- larger part of a view's time), and a 30-day window as a few blocks instead of 30 days.
--   start, hours   the period a row covers: an hour (hours = 1), a UTC day (24), or an aligned block of 2, 4, 8
--                  or 16 days (48 … 384; `start` a multiple of that many days since 1970-01-01). Hours come from
--                  the facts, days from their hours, blocks from their days — each written by the same tick
--                  (queries/pipelines/*_hours.sql, *_days.sql, *_spans.sql), sums and merged histograms, so a
--                  block gives exactly what its days give. A view reads a window's whole hours and days as the
--                  fewest periods that tile them (PerfFilters.periods); a view that shows days reads no blocks.
--   index_granularity 256, so a read takes the window's rows and few others.
-- Replaces `resource_request_hours` / `_days` and `endpoint_call_hours` / `_days` (migrations 0132–0135, 0142);
-- the states fill again on the assets' next runs, which start over from the raw layer.
DROP TABLE IF EXISTS resource_request_hours;

DROP TABLE IF EXISTS resource_request_days;

DROP TABLE IF EXISTS endpoint_call_hours;

DROP TABLE IF EXISTS endpoint_call_days;

CREATE TABLE IF NOT EXISTS resource_request_periods
(
    org_id           UInt64,
    project_id       UInt64,
    start            DateTime('UTC'),
    hours            UInt16,
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
ORDER BY (project_id, org_id, hours, start, environment, release, browser, resource_type, resource, host, page_host)
TTL start + toIntervalHour(hours) + INTERVAL ${retention_days} DAY
SETTINGS index_granularity = 256;

CREATE TABLE IF NOT EXISTS endpoint_call_periods
(
    org_id           UInt64,
    project_id       UInt64,
    start            DateTime('UTC'),
    hours            UInt16,
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
ORDER BY (project_id, org_id, hours, start, environment, release, browser, source, method, path)
TTL start + toIntervalHour(hours) + INTERVAL ${retention_days} DAY
SETTINGS index_granularity = 256;

INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('resource_breakdown', toDateTime64(0, 3, 'UTC'), now64(6)),
       ('api_endpoint_metrics', toDateTime64(0, 3, 'UTC'), now64(6))
