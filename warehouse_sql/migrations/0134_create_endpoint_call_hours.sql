-- Per hour states of `endpoint_facts` for the API endpoints view (and the recommendations): one row per hour,
-- filter dimensions (environment, release, browser) and endpoint (source, method, parameterised path), written by
-- the api_endpoint_metrics asset from the facts of the hours that received data. A view merges the window's whole
-- days (`endpoint_call_days`) and hours here and reads only its partial edge hours from the facts.
--   loads         page loads whose first call of the endpoint (looking back an hour) is in the hour (client calls)
--   max_per_load  the most calls one page load made to the endpoint (its calls from an hour before on)
--   dur_hist      duration as (bucket, count), 1 % log buckets as in resource_request_hours: p95 within 0.5 %
-- Re-running an hour replaces its rows (ReplacingMergeTree on materialized_at; the views read FINAL).
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
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, org_id, hour, environment, release, browser, source, method, path)
TTL hour + INTERVAL ${retention_days} DAY;

-- The states fill with the facts on the asset's next run: it starts over from the raw layer.
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('api_endpoint_metrics', toDateTime64(0, 3, 'UTC'), now64(6))
