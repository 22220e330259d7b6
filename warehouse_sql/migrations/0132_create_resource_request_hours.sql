-- Per hour states of `resource_facts` for the resources view and the recommendations: one row per hour, filter
-- dimensions (environment, release, browser) and resource (resource '' and host '' for fetch/XHR calls, which
-- only the per-type figures count), written by the resource_breakdown asset from the facts of the hours that
-- received data. A view merges the window's whole hours here and reads only its partial edge hours from the
-- facts (~270 rows per hour instead of one per request).
--   loads / type_loads  page loads whose first request of this resource / of this type (looking back an hour)
--                       is in the hour, so they add up across hours exactly
--   dur_hist            load time as (bucket, count): bucket = round(ln(ms) * 100), a 1 % wide log bucket whose
--                       value exp(bucket / 100) is within 0.5 % of its members; -100000 holds 0 ms. Merged with
--                       sumMap, it gives the p95 within 0.5 % of the exact one (docs/decisions.md).
-- Re-running an hour replaces its rows (ReplacingMergeTree on materialized_at; the views read FINAL).
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
TTL hour + INTERVAL ${retention_days} DAY;

-- The states fill with the facts on the asset's next run: it starts over from the raw layer.
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('resource_breakdown', toDateTime64(0, 3, 'UTC'), now64(6))
