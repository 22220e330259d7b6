-- One example page load per hour, filter dimensions, page and 1 % load-time bucket (the buckets of `load_hist`:
-- round(ln(load_ms) * 100)), for the page detail's median samples: the view takes the window's median from the
-- merged histogram and reads only the examples of the buckets around it (the sort key starts with page and
-- bucket), so its cost follows the window's days and buckets, not its page loads. The example is the bucket's
-- page load nearest the bucket's centre (then the smallest event id).
-- Re-running an hour replaces its rows (ReplacingMergeTree on materialized_at; the views read FINAL).
CREATE TABLE IF NOT EXISTS pageload_example_hours
(
    org_id           UInt64,
    project_id       UInt64,
    hour             DateTime('UTC'),
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
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, org_id, page, bucket, hour, environment, release, browser)
TTL hour + INTERVAL ${retention_days} DAY
SETTINGS index_granularity = 256
