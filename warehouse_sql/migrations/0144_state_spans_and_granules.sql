-- The resources, endpoints and recommendations views read their window's whole days from `resource_request_days`
-- and `endpoint_call_days`, whole hours from the hour tables. Two costs of those reads did not depend on the
-- window: a 30-day window merged 30 day rows per key and filter dimensions, each repeating much the same few
-- hundred histogram buckets, and a read took whole 8,192-row granules — the whole day table, and several
-- granules of hours for the few hours at a window's edges.
--   span   the day tables also hold blocks of 2, 4, 8 and 16 days (`day` is the block's first day, a multiple of
--          `span` days since 1970-01-01; span 1 is a day as before), merged from the days by the asset that
--          writes them (queries/pipelines/*_spans.sql). A window's whole days are read as the fewest aligned
--          blocks that tile them (at most 8 for 30 days instead of 30 rows per key); a view that shows days
--          reads span 1 only. A block lives as long as its last day.
--   index_granularity 256 on the day and hour tables, so a read takes the window's rows and few others.
-- The tables are recreated and fill again on the assets' next runs, which start over from the raw layer.
DROP TABLE IF EXISTS resource_request_days;

CREATE TABLE IF NOT EXISTS resource_request_days
(
    org_id           UInt64,
    project_id       UInt64,
    day              DateTime('UTC'),
    span             UInt8,
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
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, org_id, span, day, environment, release, browser, resource_type, resource, host, page_host)
TTL day + toIntervalDay(span - 1) + INTERVAL ${retention_days} DAY
SETTINGS index_granularity = 256;

DROP TABLE IF EXISTS resource_request_hours;

CREATE TABLE IF NOT EXISTS resource_request_hours
(
    org_id           UInt64,
    project_id       UInt64,
    hour             DateTime('UTC'),
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
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, org_id, hour, environment, release, browser, resource_type, resource, host, page_host)
TTL hour + INTERVAL ${retention_days} DAY
SETTINGS index_granularity = 256;

DROP TABLE IF EXISTS endpoint_call_days;

CREATE TABLE IF NOT EXISTS endpoint_call_days
(
    org_id           UInt64,
    project_id       UInt64,
    day              DateTime('UTC'),
    span             UInt8,
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
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, org_id, span, day, environment, release, browser, source, method, path)
TTL day + toIntervalDay(span - 1) + INTERVAL ${retention_days} DAY
SETTINGS index_granularity = 256;

DROP TABLE IF EXISTS endpoint_call_hours;

CREATE TABLE IF NOT EXISTS endpoint_call_hours
(
    org_id           UInt64,
    project_id       UInt64,
    hour             DateTime('UTC'),
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
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, org_id, hour, environment, release, browser, source, method, path)
TTL hour + INTERVAL ${retention_days} DAY
SETTINGS index_granularity = 256;

INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('resource_breakdown', toDateTime64(0, 3, 'UTC'), now64(6)),
       ('api_endpoint_metrics', toDateTime64(0, 3, 'UTC'), now64(6))
