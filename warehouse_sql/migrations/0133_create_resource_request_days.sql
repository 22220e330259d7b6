-- Per UTC day the states of `resource_request_hours` merged (same columns; `day` is the day's midnight), written
-- by the resource_breakdown asset for the days whose hours it refreshed. A view reads its window's whole days
-- here, the whole hours of its partial first and last day from `resource_request_hours` and only the partial
-- edge hours from `resource_facts`: a day's histogram holds at most a few hundred buckets however many requests
-- it counts, so a 30-day window merges ~30 rows per key at any volume.
-- Re-running a day replaces its rows (ReplacingMergeTree on materialized_at; the views read FINAL).
CREATE TABLE IF NOT EXISTS resource_request_days
(
    org_id           UInt64,
    project_id       UInt64,
    day              DateTime('UTC'),
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
ORDER BY (project_id, org_id, day, environment, release, browser, resource_type, resource, host, page_host)
TTL day + INTERVAL ${retention_days} DAY
