-- Example page loads for the page detail's median samples: per hour (grain 'h', `start` the hour) and per UTC day
-- (grain 'd', `start` the day's midnight), filter dimensions, page and 1 % load-time bucket (the buckets of
-- `load_hist`: round(ln(load_ms) * 100)) the page load nearest the bucket's centre, then the smallest event id.
-- The view takes the window's median from the merged histogram and reads only the examples of the few buckets
-- around it, its whole days' and other whole hours' in one read (the sort key starts with page and bucket), so its
-- cost follows the window's days, not its page loads: a day holds a few hundred buckets per page however many
-- page loads it counts.
-- Re-running an hour or day replaces its rows (ReplacingMergeTree on materialized_at; the views read FINAL).
CREATE TABLE IF NOT EXISTS pageload_examples
(
    org_id           UInt64,
    project_id       UInt64,
    grain            LowCardinality(String),
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

-- The examples fill on the asset's next run: it starts over from the raw layer.
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('page_metrics', toDateTime64(0, 3, 'UTC'), now64(6))
