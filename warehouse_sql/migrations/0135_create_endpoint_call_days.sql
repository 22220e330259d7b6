-- Per UTC day the states of `endpoint_call_hours` merged (same columns; `day` is the day's midnight), written by
-- the api_endpoint_metrics asset for the days whose hours it refreshed (see resource_request_days for why).
-- Re-running a day replaces its rows (ReplacingMergeTree on materialized_at; the views read FINAL).
CREATE TABLE IF NOT EXISTS endpoint_call_days
(
    org_id           UInt64,
    project_id       UInt64,
    day              DateTime('UTC'),
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
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, org_id, day, environment, release, browser, source, method, path)
TTL day + INTERVAL ${retention_days} DAY
