-- Per UTC day the examples of `pageload_example_hours` merged (same columns; `day` is the day's midnight): per
-- filter dimensions, page and 1 % load-time bucket the day's page load nearest the bucket's centre. A day holds a
-- few hundred buckets per page however many page loads it counts.
-- Re-running a day replaces its rows (ReplacingMergeTree on materialized_at; the views read FINAL).
CREATE TABLE IF NOT EXISTS pageload_example_days
(
    org_id           UInt64,
    project_id       UInt64,
    day              DateTime('UTC'),
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
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, org_id, page, bucket, day, environment, release, browser)
TTL day + INTERVAL ${retention_days} DAY
SETTINGS index_granularity = 256;

-- The examples fill on the asset's next run: it starts over from the raw layer.
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('page_metrics', toDateTime64(0, 3, 'UTC'), now64(6))
